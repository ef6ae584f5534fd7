// The server holds one generation steady for the length of a request while
// ingests commit: a request paused after pinning its generation (a test
// hook) while a child process ingests a new repo answers as of the
// generation it started at — equal to a read pinned there, without the new
// repo — and the next request sees the new generation without a restart.
// Then requests fired continuously while a child process ingests repo after
// repo each equal a read pinned at the generation they name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot, runTsx, scratch } from '../helpers.ts';
import { parseJson, stringifyJson, type Json } from '../../src/lake/spec/json.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest } from '../../src/ingest/index.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { ask, parseQuestion, type QuestionName } from '../../src/serve/questions.ts';
import { request } from './http.ts';

type Obj = { [k: string]: Json };
const work = scratch('mimir-serve-steady-');
const lake = path.join(work.dir, 'lake');
const ws = path.join(repoRoot, 'test', 'extract', 'fixtures', 'ws');
let server: RunningServer;
let gate: { reached: () => void; release: Promise<void> } | undefined;

before(async () => {
  const log = await EventLog.open(lake);
  try {
    await ingest(log, ws, { repo: 'demo' });
  } finally {
    log.close();
  }
  server = await startServer({
    lake,
    port: 0,
    cacheBytes: 0,
    timeoutMs: 600_000, // a request waits here while a child ingests (slow on a loaded machine)
    testAfterPin: async () => {
      const g = gate;
      if (!g) return;
      gate = undefined;
      g.reached();
      await g.release;
    },
  });
});
after(async () => {
  await server?.close();
  work.cleanup();
});

const childIngest = (repo: string): ReturnType<typeof runTsx> =>
  runTsx([path.join(repoRoot, 'src', 'cli', 'main.ts'), 'ingest', ws, '--repo', repo], { env: { MIMIR_LAKE: lake, MIMIR_SERVER: '' } });

/** The answer to a question read through a handle pinned at `g`, as the server would send it. */
async function pinnedAnswer(name: QuestionName, params: [string, string][], g: bigint): Promise<Json> {
  const log = await EventLog.open(lake, { readOnly: true });
  try {
    return parseJson(stringifyJson(await ask(log, parseQuestion(name, [...params, ['asOf', String(g)]]))));
  } finally {
    log.close();
  }
}

const repos = (b: Obj): string[] => [...new Set((b.hits as Obj[]).map((h) => h.repo as string))].sort();

test('serve: a request pinned before a child ingest commits answers as of its generation; the next one sees the new repo', async () => {
  let reached!: () => void;
  const paused = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  gate = { reached, release: new Promise<void>((r) => (release = r)) };
  const g0 = server.generation();
  const pending = request(server.url, '/api/find?name=main&exact=true');
  await paused;
  const child = await childIngest('demo2');
  assert.equal(child.code, 0, child.stderr);
  const g1 = server.generation();
  assert.ok(g1 > g0, `the ingest committed (generation ${g0} -> ${g1})`);
  release();
  const r = await pending;
  assert.equal(r.status, 200, r.text);
  const b = parseJson(r.text) as Obj;
  assert.equal(BigInt(b.generation as number), g0);
  assert.deepEqual(repos(b), ['demo']);
  assert.deepEqual(b, await pinnedAnswer('find', [['name', 'main'], ['exact', 'true']], g0));
  const next = parseJson((await request(server.url, '/api/find?name=main&exact=true')).text) as Obj;
  assert.equal(BigInt(next.generation as number), g1);
  assert.deepEqual(repos(next), ['demo', 'demo2']);
});

test('serve: requests during continuous child ingests each equal a read pinned at the generation they name', async () => {
  const asks: [QuestionName, [string, string][]][] = [
    ['find', [['name', 'main'], ['exact', 'true']]],
    ['callers', [['path', 'minidep::helper']]],
    ['refs', [['path', 'shapes::Shape']]],
  ];
  let done = false;
  const ingesting = (async () => {
    try {
      for (const repo of ['r1', 'r2', 'r3']) {
        const c = await childIngest(repo);
        assert.equal(c.code, 0, c.stderr);
      }
    } finally {
      done = true;
    }
  })();
  const seen: { name: QuestionName; params: [string, string][]; body: Obj }[] = [];
  const loop = async (): Promise<void> => {
    for (let i = 0; !done; i++) {
      const [name, params] = asks[i % asks.length]!;
      const r = await request(server.url, `/api/${name}?${new URLSearchParams(params)}`);
      assert.equal(r.status, 200, r.text);
      seen.push({ name, params, body: parseJson(r.text) as Obj });
    }
  };
  await Promise.all([ingesting, loop(), loop(), loop()]);
  const gens = new Set(seen.map((x) => BigInt(x.body.generation as number)));
  assert.ok(gens.size >= 2, `requests saw ${gens.size} generation(s): the server picks up new ones`);
  const expected = new Map<string, Json>();
  for (const x of seen) {
    const g = BigInt(x.body.generation as number);
    const key = `${x.name} at generation ${g}`;
    if (!expected.has(key)) expected.set(key, await pinnedAnswer(x.name, x.params, g));
    assert.deepEqual(x.body, expected.get(key), key);
  }
  const last = parseJson((await request(server.url, '/api/find?name=main&exact=true')).text) as Obj;
  assert.deepEqual(repos(last), ['demo', 'demo2', 'r1', 'r2', 'r3']);
});
