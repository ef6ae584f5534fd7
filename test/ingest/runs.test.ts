// One run, one generation: a repo ingest and a universe add each land all
// their events and their ingest_runs row in one commit, however many data
// files they write; two ingests of the same repo (or universe adds of the same
// crates) begun at once write every event once — the later one re-diffs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { eq } from '../../src/lake/expr/expr.ts';
import { ingest, universeAdd, type IngestReport } from '../../src/ingest/index.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { INGEST_RUNS, SOURCE_KINDS, UNIVERSE_REPO, type Kind } from '../../src/log/schema.ts';
import { copyFixture, freshLake, syntheticCrate, syntheticWorkspace } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

async function setup() {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  return lake;
}

/** Events per id per kind (every id must have exactly `want` events). */
async function eventsPerId(log: EventLog, repo: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const k of SOURCE_KINDS) for (const r of await log.rows(k, { filter: eq('repo', repo), columns: ['id'] })) {
    const key = `${k}:${String(r['id'])}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

const total = (r: IngestReport) => r.events.add + r.events.change + r.events.remove;

test('an ingest writing many data files lands them and its run row in one generation', async () => {
  const { log, dir } = await setup();
  const ws = copyFixture('ws', dir);
  const g0 = log.lake.catalog.pointerGeneration();
  const r = await ingest(log, ws, { repo: 'demo', batchRows: 7 });
  assert.equal(log.lake.catalog.pointerGeneration(), g0 + 1n, 'one commit');
  assert.equal(r.generation, g0 + 1n);
  assert.equal(r.attempts, 1);
  const [entry] = log.lake.catalog.generations({ limit: 1 });
  const touched = entry!.tables.map((t) => t.ident.name);
  // (a first ingest moves nothing: no pos rows)
  for (const k of SOURCE_KINDS.filter((x) => x !== 'pos')) assert.ok(touched.includes(`code_${k}_events`), `${k} events in the run's generation`);
  assert.ok(touched.includes(INGEST_RUNS));
  const nodeFiles = await (await log.table('code_node_events'))!.dataFiles();
  assert.ok(nodeFiles.length > 1, `several node data files (${nodeFiles.length}) in one commit`);
  for (const k of ['node', 'edge', 'file'] as Kind[]) assert.equal((await log.rows(k, { generation: g0 })).length, 0);
});

test('a universe add lands in one generation, and a present crate is skipped in the next', async () => {
  const { log, dir } = await setup();
  const reg = path.join(dir, 'registry');
  syntheticCrate(path.join(reg, 'alpha-1.0.0'), 'alpha', '1.0.0', 40);
  syntheticCrate(path.join(reg, 'beta-0.2.0'), 'beta', '0.2.0', 30);
  const g0 = log.lake.catalog.pointerGeneration();
  const r = await universeAdd(log, [reg], { batchRows: 10 });
  assert.equal(log.lake.catalog.pointerGeneration(), g0 + 1n);
  assert.ok(total(r) > 70);
  assert.deepEqual([...log.lake.catalog.readKeys(['universe:alpha@1.0.0', 'universe:beta@0.2.0']).values.values()], [r.run, r.run]);
  const again = await universeAdd(log, [reg]);
  assert.equal(again.presentCrates, 2);
  assert.equal(total(again), 0);
});

test('two ingests of the same repo begun at once (two handles): the later re-diffs, every event once', async () => {
  const { log, dir } = await setup();
  const ws = syntheticWorkspace(path.join(dir, 'big'), 'big', 600);
  const other = await EventLog.open(log.lake.root);
  let second: Promise<IngestReport> | undefined;
  // the second ingest starts once the first has begun its run (its first progress report)
  const first = ingest(log, ws, { repo: 'big', onProgress: () => { second ??= ingest(other, ws, { repo: 'big' }); } });
  const a = await first;
  const b = await second!;
  other.close();
  assert.equal(a.attempts + b.attempts, 3, `one of them conflicted and re-diffed (attempts ${a.attempts} and ${b.attempts})`);
  const [winner, loser] = a.attempts === 1 ? [a, b] : [b, a];
  assert.ok(total(winner) > 600);
  assert.equal(total(loser), 0, 'the re-diff found nothing new');
  for (const [id, n] of await eventsPerId(log, 'big')) assert.equal(n, 1, `${id}: one event`);
  const runs = await (await log.table(INGEST_RUNS))!.scan({ filter: eq('repo', 'big') }).toArray();
  assert.equal(runs.length, 2, 'both runs recorded');
});

test('two universe adds of the same crates begun at once: every event once', async () => {
  const { log, dir } = await setup();
  const reg = path.join(dir, 'registry');
  mkdirSync(reg);
  syntheticCrate(path.join(reg, 'alpha-1.0.0'), 'alpha', '1.0.0', 300);
  syntheticCrate(path.join(reg, 'beta-0.2.0'), 'beta', '0.2.0', 300);
  const other = await EventLog.open(log.lake.root);
  let second: Promise<IngestReport> | undefined;
  const first = universeAdd(log, [reg], { onProgress: () => { second ??= universeAdd(other, [reg]); } });
  const a = await first;
  const b = await second!;
  other.close();
  assert.equal(a.attempts + b.attempts, 3, `one of them conflicted (attempts ${a.attempts} and ${b.attempts})`);
  assert.equal(total(a) + total(b), Math.max(total(a), total(b)), 'one of them wrote nothing');
  for (const [id, n] of await eventsPerId(log, UNIVERSE_REPO)) assert.equal(n, 1, `${id}: one event`);
});
