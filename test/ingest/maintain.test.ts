// Bounded growth from ingest: after each run, a table whose small files passed
// its threshold (mimir.maintain.small-files) is compacted, ingest_runs
// included, and the serving state tables past theirs are merged; the folded
// state and the answers are exactly what a lake without maintenance holds;
// `maintain: false` (`--no-maintain`, tried through the real CLI) and
// `mimir.maintain=false` skip it; `compact` rewrites ingest_runs' small files
// into one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { ingest } from '../../src/ingest/index.ts';
import { compact } from '../../src/log/compact.ts';
import { smallFiles } from '../../src/log/maintain.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { INGEST_RUNS, PROP_MAINTAIN, PROP_MAINTAIN_SMALL_FILES, SOURCE_KINDS, ringTableName, tableName } from '../../src/log/schema.ts';
import { STATE_TABLES } from '../../src/log/state/schema.ts';
import { callers, find } from '../../src/query/index.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { runCli } from '../cli/run-cli.ts';
import { freshLake, syntheticWorkspace } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

const TABLES = [...SOURCE_KINDS.map(tableName), ...SOURCE_KINDS.map(ringTableName), INGEST_RUNS, ...STATE_TABLES];

/** Live delete files of a table (the state tables' equality deletes). */
async function deleteFiles(log: EventLog, name: string): Promise<number> {
  return (await (await log.table(name))!.liveFiles()).filter((f) => f.file.content !== 0).length;
}

/** Answers of find and callers, for comparing two lakes. */
async function answers(log: EventLog): Promise<string> {
  const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)), (k, x: unknown) => (k === 'run' || k === 'ts' || k === 'generation' ? null : x));
  return JSON.stringify([strip(await find(log, 'f*')), strip(await callers(log, 'soak::m0::f3'))]);
}

async function setProp(log: EventLog, props: Record<string, string>): Promise<void> {
  for (const name of TABLES) await (await log.table(name))!.setProperties(props);
}

async function dataFiles(log: EventLog, name: string): Promise<number> {
  return (await (await log.table(name))!.dataFiles()).length;
}

/** The folded state of every kind, without the run columns (run ids differ between lakes). */
async function folded(log: EventLog): Promise<string[]> {
  const out: string[] = [];
  for (const k of SOURCE_KINDS) {
    for (const r of (await log.state(k)).values()) out.push(JSON.stringify({ ...r, run: null, ts: null }, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
  }
  return out.sort();
}

/** Enough runs for the state tables (a delete file per edit) to pass their threshold of 8. */
const RUNS = 10;

test('alternating edits: tables past their small-file threshold are compacted after the run; same state as without maintenance', { timeout: 300_000 }, async () => {
  const a = await freshLake();
  const b = await freshLake();
  cleanups.push(a.cleanup, b.cleanup);
  await setProp(a.log, { [PROP_MAINTAIN_SMALL_FILES]: '3' });
  const ws = path.join(a.dir, 'soak');
  let compactions = 0;
  for (let i = 0; i < RUNS; i++) {
    syntheticWorkspace(ws, 'soak', 30, i % 2);
    const ra = await ingest(a.log, ws, { repo: 'soak' });
    await ingest(b.log, ws, { repo: 'soak', maintain: false });
    if (ra.maintenance?.tables.some((t) => t.compacted && !t.compacted.skipped)) compactions++;
    for (const name of [tableName('node'), tableName('edge'), INGEST_RUNS]) {
      const t = (await a.log.table(name))!;
      assert.ok(await smallFiles(t, name) <= 3, `${name} after run ${i}: at most 3 small files`);
    }
  }
  assert.ok(compactions >= 2, `compacted after ${compactions} runs`);
  // the serving state tables: a delete file per run that changed them without maintenance, merged with it
  assert.equal(await deleteFiles(b.log, 'code_nodes'), RUNS - 1, 'code_nodes without maintenance: a delete file per edit');
  for (const name of STATE_TABLES) assert.ok(await deleteFiles(a.log, name) <= 8, `${name} with maintenance: at most 8 delete files (${await deleteFiles(a.log, name)})`);
  assert.equal(await answers(a.log), await answers(b.log), 'maintained and unmaintained lakes answer alike');
  assert.equal(await dataFiles(b.log, tableName('node')), RUNS, 'without maintenance: one node file per run');
  assert.equal(await dataFiles(b.log, INGEST_RUNS), RUNS);
  assert.ok(await dataFiles(a.log, tableName('node')) <= 4);
  assert.ok(await dataFiles(a.log, INGEST_RUNS) <= 4);
  assert.deepEqual(await folded(a.log), await folded(b.log));
  assert.equal((await (await a.log.table(INGEST_RUNS))!.scan().toArray()).length, RUNS, 'every run row kept');
});

test('mimir.maintain=false turns maintenance off for a table; compact rewrites ingest_runs\' small files into one', { timeout: 300_000 }, async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const { log } = lake;
  await setProp(log, { [PROP_MAINTAIN_SMALL_FILES]: '2', [PROP_MAINTAIN]: 'false' });
  const ws = path.join(lake.dir, 'ws');
  for (let i = 0; i < 4; i++) {
    syntheticWorkspace(ws, 'ws', 10, i % 2);
    const r = await ingest(log, ws, { repo: 'ws' });
    assert.ok(r.maintenance!.tables.every((t) => t.skipped === `${PROP_MAINTAIN}=false`));
  }
  assert.equal(await dataFiles(log, INGEST_RUNS), 4);
  const runsBefore = (await (await log.table(INGEST_RUNS))!.scan().toArray()).map((r) => r.run).sort();
  const report = await compact(log);
  const runs = report.tables.find((t) => t.table === `mimir.${INGEST_RUNS}`)!;
  assert.equal(runs.before.files, 4);
  assert.equal(runs.after.files, 1);
  assert.deepEqual((await (await log.table(INGEST_RUNS))!.scan().toArray()).map((r) => r.run).sort(), runsBefore);
  const again = await compact(log);
  assert.equal(again.tables.find((t) => t.table === `mimir.${INGEST_RUNS}`)!.skipped, 'already compacted');
});

test('mimir ingest runs maintenance by default and reports it; --no-maintain skips it', { timeout: 300_000 }, async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  await setProp(lake.log, { [PROP_MAINTAIN_SMALL_FILES]: '1' });
  const ws = path.join(lake.dir, 'ws');
  type Obj = { [k: string]: Json };
  const ingestCli = async (i: number, ...flags: string[]): Promise<Obj> => {
    syntheticWorkspace(ws, 'ws', 10, i % 2);
    const r = await runCli(['ingest', ws, '--repo', 'ws', '--json', ...flags], { lake: path.join(lake.dir, 'lake') });
    assert.equal(r.code, 0, r.stderr);
    return parseJson(r.stdout) as Obj;
  };
  await ingestCli(0, '--no-maintain');
  const skipped = await ingestCli(1, '--no-maintain');
  assert.equal(skipped['maintenance'], undefined, '--no-maintain: no maintenance report');
  const maintained = await ingestCli(2);
  const tables = (maintained['maintenance'] as Obj)['tables'] as Obj[];
  const node = tables.find((t) => t['table'] === `mimir.${tableName('node')}`)!;
  assert.ok(node['compacted'], `the node table (3 small files, threshold 1) was compacted: ${JSON.stringify(node)}`);
});
