// GC of the event log's lake: expiry and orphan removal that spare pins, dry
// runs, and the leftovers of a crashed compaction.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { EventLog } from '../../src/log/event-log.ts';
import { compact } from '../../src/log/compact.ts';
import { gc, formatGcReport } from '../../src/log/gc.ts';
import { UNIVERSE_REPO } from '../../src/log/schema.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { canonRow, nodeRow } from './rows.ts';

const work = scratch('mimir-gc-');
after(work.cleanup);
let n = 0;
const root = (): string => path.join(work.dir, `lake-${n++}`);

const row = nodeRow;
const canon = canonRow;
const sortedRows = async (log: EventLog): Promise<string[]> => (await log.rows('node')).map(canon).sort();

/** Every file under the lake root (path -> mtime), the catalog included. */
function listing(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.startsWith('catalog.db')) out.set(p, statSync(p).mtimeMs);
    }
  };
  walk(dir);
  return out;
}
const dataFilesOnDisk = (dir: string): string[] => [...listing(dir).keys()].filter((p) => p.endsWith('.parquet')).sort();

async function lakeWithAppends(r: string, count: number): Promise<EventLog> {
  const log = await EventLog.open(r);
  for (let i = 0; i < count; i++) {
    await log.append('node', [row(i % 2 ? 'app' : 'lib', i % 2 ? 'app@0.1.0' : 'lib@0.1.0', `n${i}`), row(UNIVERSE_REPO, `dep${i % 3}@1.0.0`, `u${i}`)]);
  }
  return log;
}

test('gc: expires and removes unreferenced files but keeps what a pinned handle reads', async () => {
  const r = root();
  const log = await lakeWithAppends(r, 10);
  const pin = log.pin({ generation: log.lake.catalog.pointerGeneration() });
  const pinnedRows = await sortedRows(pin);
  // the event tables' files (compaction rewrites them; the state tables keep theirs)
  const oldFiles = dataFilesOnDisk(r).filter((f) => /code_\w+_events/.test(f));
  await compact(log, { targetFileRows: 1000 });
  await log.append('node', [row('app', 'app@0.1.0', 'late')]);
  const g1 = await gc(log, { retainMs: 0 });
  // every table of the lake is visited (the event and state tables, the sources), none twice
  const all = log.lake.catalog.listAllTables().map((id) => [...id.namespace, id.name].join('.')).sort();
  assert.ok(all.length >= 15, `expected the lake's tables, found ${all.length}`);
  assert.deepEqual(g1.tables.map((t) => t.table).sort(), all);
  assert.match(formatGcReport(g1), new RegExp(`^gc: expired \\d+ snapshot\\(s\\) in ${all.length} table\\(s\\)`));
  const node = g1.tables.find((t) => t.table === 'mimir.code_node_events')!;
  assert.ok(node.protected.length >= 1, 'the pinned snapshot was not protected');
  // the pinned handle reads exactly what it read, from files that still exist
  assert.deepEqual(await sortedRows(pin), pinnedRows);
  for (const f of oldFiles) assert.ok(existsSync(f), `${f} (read by the pin) was deleted`);
  pin.close();

  const g2 = await gc(log, { retainMs: 0 });
  const deleted = [...g2.tables.flatMap((t) => t.deleted), ...g2.orphans];
  assert.ok(g2.tables.reduce((s, t) => s + t.expired.length, 0) >= 1);
  for (const f of oldFiles) assert.ok(!existsSync(f), `${f} survived gc after the pin closed`);
  assert.ok(deleted.some((d) => d.endsWith('.parquet')));
  // the current state reads the same
  assert.equal((await log.rows('node')).length, 21);
  // nothing unreferenced is left: a further gc deletes nothing
  const g3 = await gc(log, { retainMs: 0 });
  assert.deepEqual(g3.orphans, []);
  assert.deepEqual(g3.tables.flatMap((t) => t.deleted), []);
  log.close();
});

test('gc: dry run changes nothing', async () => {
  const r = root();
  const log = await lakeWithAppends(r, 6);
  await compact(log, { targetFileRows: 1000 });
  const before = listing(r);
  const g = log.lake.catalog.pointerGeneration();
  const dry = await gc(log, { retainMs: 0, dryRun: true });
  assert.equal(dry.dryRun, true);
  assert.match(formatGcReport(dry), /^gc \(dry run\): would expire/);
  const wouldDelete = dry.tables.flatMap((t) => t.deleted);
  assert.ok(wouldDelete.length > 0, 'a dry run listed nothing');
  assert.deepEqual(listing(r), before, 'a dry run changed files');
  assert.equal(log.lake.catalog.pointerGeneration(), g, 'a dry run committed');
  // the real run deletes what the dry run listed
  const real = await gc(log, { retainMs: 0 });
  assert.deepEqual(real.tables.flatMap((t) => t.deleted).sort(), [...wouldDelete].sort());
  assert.deepEqual(
    real.tables.map((t) => t.expired.length),
    dry.tables.map((t) => t.expired.length),
  );
  log.close();
});

test('gc: refused on a pinned handle', async () => {
  const log = await EventLog.open(root());
  const pin = log.pin({ generation: log.lake.catalog.pointerGeneration() });
  await assert.rejects(gc(pin), /pinned read handle cannot run gc/);
  pin.close();
  log.close();
});

function runChild(args: string[], env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

test('gc: a crash mid-compaction leaves files that gc collects', async () => {
  const r = root();
  const log = await lakeWithAppends(r, 12);
  const before = await sortedRows(log);
  const filesBefore = new Set(dataFilesOnDisk(r));
  const child = path.join(repoRoot, 'test/log/compact-crash-child.ts');
  // node source: 2 repos, 3 rows per repo-file with target 3 → several files; die after the 2nd
  const res = await runChild([child, r, '3'], { MIMIR_CRASH_AT: 'compact:file-written#2' });
  assert.equal(res.signal, 'SIGKILL', `the child was not killed: ${res.out}`);
  const left = dataFilesOnDisk(r).filter((f) => !filesBefore.has(f));
  assert.ok(left.length >= 2, `the crash left ${left.length} new files`);
  // the lake opens and reads the same rows
  const again = await EventLog.open(r);
  assert.deepEqual(await sortedRows(again), before);
  const g = await gc(again, { retainMs: 0 });
  for (const f of left) assert.ok(g.orphans.some((o) => o.endsWith(path.basename(f))), `${f} not collected`);
  for (const f of left) assert.ok(!existsSync(f));
  assert.deepEqual(await sortedRows(again), before);
  // rerunning the compaction converges
  const res2 = await runChild([child, r, '3'], {});
  assert.equal(res2.code, 0, res2.out);
  assert.deepEqual(await sortedRows(again), before);
  const g2 = await gc(again, { retainMs: 0 });
  const g3 = await gc(again, { retainMs: 0 });
  assert.deepEqual(g3.orphans, [], `left after ${formatGcReport(g2)}`);
  again.close();
  log.close();
});
