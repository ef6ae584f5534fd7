// Concurrent writers as a user makes them: two `mimir ingest` processes of the
// same repo started at once, and two `mimir universe add` of the same crates
// at once. Both exit 0; every event is in the log once (the later run
// re-diffed against the earlier one's state), `history` of an item shows one
// add, and the folded state equals that of a single run. Two ingests of
// different repos at once never conflict: each lands in its first attempt.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { eq } from '../../src/lake/expr/expr.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { SOURCE_KINDS } from '../../src/log/schema.ts';
import { scratch } from '../helpers.ts';
import { runCli, type CliResult } from '../cli/run-cli.ts';
import { syntheticCrate, syntheticWorkspace } from './helpers.ts';

const work = scratch('mimir-concurrent-');
after(work.cleanup);
type Obj = { [k: string]: Json };

const ok = (r: CliResult): Obj => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return parseJson(r.stdout) as Obj;
};
const events = (r: Obj): number => {
  const e = r['events'] as Obj;
  return Number(e['add']) + Number(e['change']) + Number(e['remove']);
};

/** Every id of the repo has exactly one event; returns how many ids. */
async function onceEach(lake: string, repo: string): Promise<number> {
  const log = await EventLog.open(lake);
  try {
    let ids = 0;
    for (const k of SOURCE_KINDS) {
      const seen = new Map<string, number>();
      for (const r of await log.rows(k, { filter: eq('repo', repo), columns: ['id'] })) seen.set(String(r['id']), (seen.get(String(r['id'])) ?? 0) + 1);
      for (const [id, n] of seen) assert.equal(n, 1, `${k} ${id} has ${n} events`);
      ids += seen.size;
    }
    return ids;
  } finally {
    log.close();
  }
}

test('two mimir ingest processes of the same repo at once: both exit 0, every event once, history clean', { timeout: 300_000 }, async () => {
  const lake = path.join(work.dir, 'lake-ingest');
  const ws = syntheticWorkspace(path.join(work.dir, 'big'), 'big', 800);
  const [a, b] = (await Promise.all([0, 1].map(() => runCli(['ingest', ws, '--repo', 'big', '--json'], { lake })))).map(ok);
  const total = events(a!) + events(b!);
  assert.equal(total, Math.max(events(a!), events(b!)), `one run wrote everything, the other nothing (${events(a!)} and ${events(b!)}; attempts ${String(a!['attempts'])} and ${String(b!['attempts'])})`);
  assert.equal(await onceEach(lake, 'big'), total);
  const hist = await runCli(['history', 'big::m3::f170'], { lake });
  assert.equal(hist.code, 0, hist.stderr);
  // `g<N> <time> <op> <repo> <krate> <kind> …`: the item's node and its call edge, each added once
  const lines = hist.stdout.split('\n').filter((l) => /^g\d+ /.test(l)).map((l) => l.split(/\s+/).slice(2).join(' '));
  assert.equal(lines.length, 2, `history of big::m3::f170: ${hist.stdout}`);
  assert.ok(lines.every((l) => l.startsWith('add ')), hist.stdout);
  assert.equal(new Set(lines).size, lines.length, `no event twice: ${hist.stdout}`);
});

test('two mimir universe add processes of the same crates at once: both exit 0, every event once', { timeout: 300_000 }, async () => {
  const lake = path.join(work.dir, 'lake-universe');
  const reg = path.join(work.dir, 'registry');
  mkdirSync(reg, { recursive: true });
  syntheticCrate(path.join(reg, 'alpha-1.0.0'), 'alpha', '1.0.0', 400);
  syntheticCrate(path.join(reg, 'beta-0.2.0'), 'beta', '0.2.0', 400);
  const [a, b] = (await Promise.all([0, 1].map(() => runCli(['universe', 'add', reg, '--json'], { lake })))).map(ok);
  const total = events(a!) + events(b!);
  assert.ok(total > 800);
  assert.equal(await onceEach(lake, '@universe'), total);
  const again = ok(await runCli(['universe', 'add', reg, '--json'], { lake }));
  assert.equal(again['presentCrates'], 2);
  assert.equal(events(again), 0);
});

test('two mimir ingest processes of different repos at once: both land in their first attempt, each repo whole', { timeout: 300_000 }, async () => {
  const lake = path.join(work.dir, 'lake-two-repos');
  const left = syntheticWorkspace(path.join(work.dir, 'left'), 'left', 400);
  const right = syntheticWorkspace(path.join(work.dir, 'right'), 'right', 400);
  // the lake exists first, so neither process creates it
  ok(await runCli(['ingest', syntheticWorkspace(path.join(work.dir, 'seed'), 'seed', 5), '--repo', 'seed', '--json'], { lake }));
  const [a, b] = (await Promise.all([[left, 'left'], [right, 'right']].map(([ws, repo]) => runCli(['ingest', ws!, '--repo', repo!, '--json'], { lake })))).map(ok);
  assert.equal(a!['attempts'], 1, 'left: no conflict with another repo');
  assert.equal(b!['attempts'], 1, 'right: no conflict with another repo');
  assert.notEqual(a!['generation'], b!['generation'], 'two generations, one per run');
  assert.equal(await onceEach(lake, 'left'), events(a!));
  assert.equal(await onceEach(lake, 'right'), events(b!));
  for (const repo of ['left', 'right']) {
    const found = await runCli(['find', 'f399', '--repo', repo, '--json'], { lake });
    assert.equal(found.code, 0, found.stderr);
    assert.match(found.stdout, new RegExp(`${repo}::m7::f399`), `${repo}'s item answered from the state tables`);
  }
});
