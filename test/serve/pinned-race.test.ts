// An answer reads exactly the generation it names, even when an ingest
// commits in the middle of it. The interleaving a loaded machine once
// produced by chance (an answer labelled generation g whose edges came from
// g+1: StateView.open read each state table's *current* pointer after
// deciding that g was current) is produced here on purpose: a hold
// (lake/testing/pause.ts) stops the read between two state-table pointers,
// a read-write handle ingests a new repo (a real commit in the same SQLite
// catalog), then the read goes on. Every state view a question opens is held
// in turn (the nth view, for n = 1 .. the views one question opens), for a
// question asked as the CLI asks it (an unpinned read-only handle, `ask`)
// and as the server answers it (pinned handle, answer cache), and each
// answer must equal a read pinned at the generation it names, made after.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, stringifyJson, type Json } from '../../src/lake/spec/json.ts';
import { countReaches, holdAt, reaches } from '../../src/lake/testing/pause.ts';
import { enableReadCache } from '../../src/lake/io/read-cache.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest } from '../../src/ingest/index.ts';
import { startServer } from '../../src/serve/server.ts';
import { ask, parseQuestion, type QuestionName } from '../../src/serve/questions.ts';
import { request } from './http.ts';

type Obj = { [k: string]: Json };
const work = scratch('mimir-pinned-race-');
const lake = path.join(work.dir, 'lake');
const ws = path.join(repoRoot, 'test', 'extract', 'fixtures', 'ws');
// between the node/key tables (the target list) and code_edges_in (the edges): where the race was seen
const POINT = 'state-view:pointer code_edges_in';

before(async () => {
  await commitRepo('demo');
});
after(() => work.cleanup());

/** A new repo landed in one generation by a read-write handle of this process (its own catalog connection). */
async function commitRepo(repo: string): Promise<void> {
  const log = await EventLog.open(lake);
  try {
    await ingest(log, ws, { repo });
  } finally {
    log.close();
  }
}

const wire = (x: unknown): Json => parseJson(stringifyJson(x));

/** The answer read through a handle pinned at `g` (opened afresh, after the commits). */
async function pinnedAnswer(name: QuestionName, params: [string, string][], g: bigint): Promise<Json> {
  const log = await EventLog.open(lake, { readOnly: true });
  try {
    return wire(await ask(log, parseQuestion(name, [...params, ['asOf', String(g)]])));
  } finally {
    log.close();
  }
}

/** How many state views one run of `fn` opens (each reaches POINT once). */
async function viewsOpened(fn: () => Promise<unknown>): Promise<number> {
  countReaches(true);
  try {
    await fn();
    return reaches(POINT);
  } finally {
    countReaches(false);
  }
}

/**
 * Run `start` with its nth state view held at POINT while a new repo
 * commits; its result. Fails (never hangs) when the read ends without
 * reaching the hold.
 */
async function withCommitDuring<T>(nth: number, repo: string, start: () => Promise<T>): Promise<T> {
  const hold = holdAt(POINT, { nth });
  try {
    const pending = start();
    const ended = pending.then(
      () => 'ended',
      () => 'ended',
    );
    assert.equal(await Promise.race([hold.reached.then(() => 'held'), ended]), 'held', `the read ended before its state view ${nth} reached ${POINT}`);
    await commitRepo(repo);
    hold.release();
    return await pending;
  } finally {
    hold.release();
  }
}

const ASKS: [QuestionName, [string, string][]][] = [
  ['callers', [['path', 'minidep::helper']]],
  ['refs', [['path', 'shapes::Shape']]],
];

test('CLI path: a question during which a repo commits answers exactly as of the generation it names', async () => {
  let n = 0;
  for (const [name, params] of ASKS) {
    const log = await EventLog.open(lake, { readOnly: true });
    enableReadCache(log.lake.io); // as the CLI reads (cli/query/common.ts askLocal)
    try {
      const q = parseQuestion(name, params);
      const views = await viewsOpened(() => ask(log, q));
      assert.ok(views >= 1, `${name} opens ${views} state view(s)`);
      for (let nth = 1; nth <= views; nth++) {
        const g = log.readGeneration();
        const body = wire(await withCommitDuring(nth, `cli${++n}`, () => ask(log, q))) as Obj;
        assert.ok(log.readGeneration() > g, 'the repo committed while the question read');
        assert.equal(BigInt(body.generation as number), g, `${name} names the generation it started at`);
        assert.deepEqual(body, await pinnedAnswer(name, params, g), `${name} with a commit during its state view ${nth} of ${views}, at generation ${g}`);
      }
    } finally {
      log.close();
    }
  }
});

test('server: a request during which a repo commits answers (and caches) exactly as of the generation it names', async () => {
  const server = await startServer({ lake, port: 0, timeoutMs: 600_000 }); // a request waits on a commit (slow on a loaded machine)
  try {
    let n = 0;
    for (const [name, params] of ASKS) {
      const target = `/api/${name}?${new URLSearchParams(params)}`;
      const views = await viewsOpened(() => request(server.url, `${target}&limit=1000`)); // a key of its own: not a cache hit
      assert.ok(views >= 1, `${name} opens ${views} state view(s)`);
      for (let nth = 1; nth <= views; nth++) {
        const g = server.generation();
        const r = await withCommitDuring(nth, `srv${++n}`, () => request(server.url, target));
        assert.equal(r.status, 200, r.text);
        assert.ok(server.generation() > g, 'the repo committed while the request read');
        const body = parseJson(r.text) as Obj;
        assert.equal(BigInt(body.generation as number), g, `${name} names the generation it started at`);
        const want = await pinnedAnswer(name, params, g);
        assert.deepEqual(body, want, `${name} with a commit during its state view ${nth} of ${views}, at generation ${g}`);
        // asked again as of g through the server (a new cache key: the pointer generation moved), the same answer
        const again = await request(server.url, `${target}&asOf=${g}`);
        assert.deepEqual(parseJson(again.text), want, `${name} as of ${g}, again`);
      }
    }
  } finally {
    await server.close();
  }
});
