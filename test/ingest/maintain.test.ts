// Bounded growth from ingest: after each run, a table whose small files passed
// its threshold (mimir.maintain.small-files) is compacted, ingest_runs
// included; the folded state is exactly what a lake without maintenance
// holds; `maintain: false` (--no-maintain) and `mimir.maintain=false` skip it;
// `compact` rewrites ingest_runs' small files into one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { ingest } from '../../src/ingest/index.ts';
import { compact } from '../../src/log/compact.ts';
import { smallFiles } from '../../src/log/maintain.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { INGEST_RUNS, PROP_MAINTAIN, PROP_MAINTAIN_SMALL_FILES, SOURCE_KINDS, ringTableName, tableName } from '../../src/log/schema.ts';
import { freshLake, syntheticWorkspace } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

const TABLES = [...SOURCE_KINDS.map(tableName), ...SOURCE_KINDS.map(ringTableName), INGEST_RUNS];

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

test('alternating edits: tables past their small-file threshold are compacted after the run; same state as without maintenance', { timeout: 300_000 }, async () => {
  const a = await freshLake();
  const b = await freshLake();
  cleanups.push(a.cleanup, b.cleanup);
  await setProp(a.log, { [PROP_MAINTAIN_SMALL_FILES]: '3' });
  const ws = path.join(a.dir, 'soak');
  let compactions = 0;
  for (let i = 0; i < 8; i++) {
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
  assert.equal(await dataFiles(b.log, tableName('node')), 8, 'without maintenance: one node file per run');
  assert.equal(await dataFiles(b.log, INGEST_RUNS), 8);
  assert.ok(await dataFiles(a.log, tableName('node')) <= 4);
  assert.ok(await dataFiles(a.log, INGEST_RUNS) <= 4);
  assert.deepEqual(await folded(a.log), await folded(b.log));
  assert.equal((await (await a.log.table(INGEST_RUNS))!.scan().toArray()).length, 8, 'every run row kept');
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
