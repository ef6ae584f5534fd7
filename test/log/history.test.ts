// History bounded by count (src/log/history.ts): after many small ingests
// every table holds at most K + slack snapshots, the lake's file count levels
// off, no metadata file of an expired generation stays and nothing is left
// unreferenced; a generation pinned by another process keeps its files and
// reads through the runs' expiry, and goes once the pin ends; two processes
// ingesting at once, both expiring, lose nothing; gc honours the
// count bound beside its age bound; a process killed inside the expiry leaves
// a lake that reads the same and converges.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ingest } from '../../src/ingest/index.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { gc } from '../../src/log/gc.ts';
import { PROP_HISTORY_KEEP_SNAPSHOTS, PROP_HISTORY_SLACK } from '../../src/log/history.ts';
import { maintain } from '../../src/log/maintain.ts';
import { NAMESPACE, UNIVERSE_REPO, ident } from '../../src/log/schema.ts';
import { ExpiredGenerationError } from '../../src/lake/lake.ts';
import { identToString } from '../../src/lake/catalog/sql-catalog.ts';
import { readMetadata } from '../../src/lake/table/commit.ts';
import { removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { find } from '../../src/query/index.ts';
import { formatVerifyReport, verifyState } from '../../src/log/state/verify.ts';
import { repoRoot, runTsx, scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';
import { syntheticWorkspace } from '../ingest/helpers.ts';
import { canonRow, nodeRow } from './rows.ts';

const work = scratch('mimir-history-');
after(work.cleanup);
let n = 0;
const CHILD = path.join(repoRoot, 'test/log/history-child.ts');
const K = 3;
const SLACK = 2;

/** A new lake whose mimir.toml keeps K snapshots per table; every table's slack set to SLACK. */
async function boundedLake(): Promise<{ log: EventLog; root: string; ws: string }> {
  const dir = path.join(work.dir, `case-${n++}`);
  const root = path.join(dir, 'lake');
  mkdirSync(root, { recursive: true });
  writeFileSync(path.join(root, 'mimir.toml'), `[history]\nkeep-snapshots = ${K}\n`);
  const log = await EventLog.open(root);
  for (const id of log.lake.catalog.listTables([NAMESPACE])) await (await log.lake.loadTable(id)).setProperties({ [PROP_HISTORY_SLACK]: String(SLACK) });
  return { log, root, ws: path.join(dir, 'ws') };
}

/** A metadata location (`file:///…`) names a file on disk. */
const onDisk = (loc: string): boolean => existsSync(loc.startsWith('file:') ? fileURLToPath(loc) : loc);

function filesUnder(dir: string): number {
  let c = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) c += e.isDirectory() ? filesUnder(path.join(dir, e.name)) : 1;
  return c;
}

/** Per table: snapshots now, and the metadata files on disk whose current snapshot the table no longer has (must be none). */
async function history(log: EventLog): Promise<{ table: string; snapshots: number; stale: string[] }[]> {
  const out = [];
  for (const id of log.lake.catalog.listTables([NAMESPACE])) {
    const t = await log.lake.loadTable(id);
    const have = new Set(t.metadata.snapshots.map((s) => s.snapshotId));
    const dir = path.join(log.lake.root, NAMESPACE, id.name, 'metadata');
    const stale: string[] = [];
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.metadata.json')).sort()) {
      const m = await readMetadata(log.lake.io, path.join(dir, f));
      if (m.currentSnapshotId !== undefined && !have.has(m.currentSnapshotId)) stale.push(f);
    }
    out.push({ table: identToString(id), snapshots: t.metadata.snapshots.length, stale });
  }
  return out;
}

test('many small ingests: each table keeps at most K + slack snapshots, the file count levels off, old generations go whole', { timeout: 600_000 }, async () => {
  const { log, root, ws } = await boundedLake();
  const files: number[] = [];
  const RUNS = 24;
  let firstRun = 0n;
  try {
    for (let i = 0; i < RUNS; i++) {
      syntheticWorkspace(ws, 'hist', 12, i % 2);
      const r = await ingest(log, ws, { repo: 'hist' });
      assert.equal(r.maintenanceError, undefined);
      if (i === 0) firstRun = log.lake.catalog.pointerGeneration();
      for (const h of await history(log)) {
        assert.ok(h.snapshots <= K + SLACK, `run ${i}: ${h.table} holds ${h.snapshots} snapshots (at most ${K + SLACK})`);
        assert.deepEqual(h.stale, [], `run ${i}: ${h.table} keeps no metadata file of an expired generation`);
      }
      files.push(filesUnder(root));
    }
    // Expiry (every K + slack commits of a table) and state maintenance (when more than 4 files overlap)
    // run on different cycles, so the count saws up and down (170-340 over 48 runs of this test, no
    // trend); a history that is not bounded grows by ~30 files per run here, which makes the later
    // window's peak ~1.65x the earlier one's. Peaks of two 8-run windows are compared.
    const early = Math.max(...files.slice(6, 14));
    const late = Math.max(...files.slice(RUNS - 8));
    console.log(`# files after each run: ${files.join(' ')}`);
    assert.ok(late <= early * 1.4, `the file count levels off: at most ${late} files in the last 8 runs vs ${early} in runs 7-14 (${files.join(' ')})`);
    // the first generations cannot be read from the tables any more; the current one can; the catalog keeps every record
    await assert.rejects(log.lake.loadTable(ident('code_nodes'), { generation: firstRun }), ExpiredGenerationError);
    assert.ok((await find(log, 'f1')).hits.length >= 1);
    assert.ok(log.lake.catalog.generations({ limit: 100_000 }).some((g) => g.generation === firstRun), 'the catalog keeps the record of an expired generation');
    // nothing left behind that no metadata reaches
    assert.deepEqual((await removeOrphanFiles(log.lake, { olderThanMs: 0, dryRun: true })).deleted, []);
  } finally {
    log.close();
  }
  const gens = JSON.parse((await runCli(['log', 'generations', '--json', '--limit', '0'], { lake: root })).stdout) as { generation: number; kept: boolean }[];
  assert.equal(gens[0]!.kept, true, 'the newest generation is kept');
  assert.equal(gens.find((x) => BigInt(x.generation) === firstRun)?.kept, false, 'the first run\'s generation is marked expired');
  const text = (await runCli(['log', 'generations', '--limit', '0'], { lake: root })).stdout;
  assert.match(text, new RegExp(`^${firstRun} \\(expired\\)\\s`, 'm'));
});

test('a generation pinned by another process keeps its files and reads through the runs\' expiry, and goes once the pin ends', { timeout: 600_000 }, async () => {
  const { log, root, ws } = await boundedLake();
  let child: ReturnType<typeof spawn> | undefined;
  try {
    for (let i = 0; i < 2; i++) {
      syntheticWorkspace(ws, 'pinned', 12, i % 2);
      await ingest(log, ws, { repo: 'pinned' });
    }
    child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'pin', root], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
    const kid = child;
    const exited = new Promise<number | null>((resolve) => kid.on('close', (code) => resolve(code)));
    const lines = createInterface({ input: kid.stdout! });
    const next = (): Promise<string> => new Promise((resolve, reject) => {
      lines.once('line', resolve);
      kid.once('close', () => reject(new Error('history-child exited early')));
    });
    const ready = await next();
    const m = /^ready (\d+) (.*)$/.exec(ready);
    assert.ok(m, ready);
    const pinned = BigInt(m[1]!);
    const loc = log.lake.catalog.pointersAt(pinned).get(`${NAMESPACE}.code_nodes`)!;
    let expiredSome = 0;
    for (let i = 0; i < 6; i++) { // K + slack + 1 commits of code_nodes since the pin: it expires at least once
      syntheticWorkspace(ws, 'pinned', 12, i % 2);
      const r = await ingest(log, ws, { repo: 'pinned' });
      expiredSome += r.maintenance?.tables.filter((t) => t.expired && t.expired.snapshots > 0).length ?? 0;
    }
    assert.ok(expiredSome > 0, 'the runs expired history');
    assert.ok(onDisk(loc), `the pinned generation's code_nodes metadata file ${loc} is still there`);
    kid.stdin!.write('go\n');
    const again = await next();
    assert.equal(again, `again ${m[2]}`, 'the pinned reader reads the same after the runs');
    assert.equal(await exited, 0);
    // the pin ended: the next runs' expiry takes that generation
    for (let i = 0; i < 4; i++) {
      syntheticWorkspace(ws, 'pinned', 12, i % 2);
      await ingest(log, ws, { repo: 'pinned' });
    }
    assert.ok(!onDisk(loc), 'once unpinned, the generation\'s metadata file went with its snapshot');
    await assert.rejects(log.lake.loadTable(ident('code_nodes'), { generation: pinned }), ExpiredGenerationError);
    for (const h of await history(log)) assert.deepEqual(h.stale, [], `${h.table}: no metadata file of an expired generation`);
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); // a failed assertion leaves no reader waiting
    log.close();
  }
});

test('two processes ingesting different repos at once, each expiring history after its runs: every run lands, the state equals the log, nothing is left unreferenced', { timeout: 600_000 }, async () => {
  const { log, root, ws } = await boundedLake();
  log.close();
  const RUNS = 6;
  const kids = await Promise.all(['one', 'two'].map((repo) => runTsx([CHILD, 'ingest', root, `${ws}-${repo}`, repo, String(RUNS)])));
  for (const k of kids) assert.equal(k.code, 0, k.stderr);
  const again = await EventLog.open(root);
  try {
    const runs = await (await again.table('ingest_runs'))!.scan().toArray();
    assert.equal(runs.length, 2 * RUNS, 'every run row landed');
    const v = await verifyState(again);
    assert.ok(v.equal, formatVerifyReport(v).join('\n'));
    for (const h of await history(again)) {
      assert.ok(h.snapshots <= K + SLACK + 2, `${h.table} holds ${h.snapshots} snapshots`);
      assert.deepEqual(h.stale, [], `${h.table} keeps no metadata file of an expired generation`);
    }
    assert.deepEqual((await removeOrphanFiles(again.lake, { olderThanMs: 0, dryRun: true })).deleted, [], 'nothing unreferenced');
  } finally {
    again.close();
  }
});

/** A lake of `count` node appends (no maintenance: EventLog.append runs none). */
async function appended(count: number): Promise<{ log: EventLog; root: string }> {
  const root = path.join(work.dir, `case-${n++}`, 'lake');
  const log = await EventLog.open(root);
  for (let i = 0; i < count; i++) await log.append('node', [nodeRow('app', 'app@0.1.0', `n${i}`), nodeRow(UNIVERSE_REPO, `dep${i % 3}@1.0.0`, `u${i}`)]);
  return { log, root };
}

const rowsOf = async (log: EventLog): Promise<string[]> => (await log.rows('node')).map(canonRow).sort();

test('gc: the count bound expires beyond the newest N whatever their age, keeps a pinned generation, and deletes expired generations\' metadata files', { timeout: 300_000 }, async () => {
  const { log } = await appended(12);
  try {
    const node = ident('code_node_events');
    const gens = log.lake.catalog.generations({ limit: 100_000 }).filter((g) => g.tables.some((t) => t.ident.name === node.name)).map((g) => g.generation).sort((a, b) => (a < b ? -1 : 1));
    const pinnedAt = gens[3]!;
    const pin = log.pin({ generation: pinnedAt });
    const pinnedRows = await rowsOf(pin);
    const oldLoc = log.lake.catalog.pointersAt(gens[1]!).get(identToString(node))!;
    assert.ok(onDisk(oldLoc));
    // the default age bound (7 days) alone expires nothing young
    const none = await gc(log, { keepSnapshots: 0 });
    assert.equal(none.tables.reduce((s, t) => s + t.expired.length, 0), 0);
    const r = await gc(log, { keepSnapshots: 4 });
    const t = r.tables.find((x) => x.table === identToString(node))!;
    assert.ok(t.expired.length >= 6, `expired ${t.expired.length}`);
    assert.ok(t.metadataFiles >= 1, 'metadata files of expired generations deleted');
    const table = await log.lake.loadTable(node);
    assert.equal(table.metadata.snapshots.length, 5, 'the newest 4 and the pinned one');
    assert.ok(!onDisk(oldLoc), 'an expired generation\'s metadata file is gone');
    assert.deepEqual(await rowsOf(pin), pinnedRows, 'the pinned handle reads what it read');
    pin.close();
    // both bounds: --retain 0 keeps the newest keepLast, fewer than the count bound
    const both = await gc(log, { keepSnapshots: 4, retainMs: 0, keepLast: 2 });
    assert.ok(both.tables.find((x) => x.table === identToString(node))!.expired.length >= 3);
    assert.equal((await log.lake.loadTable(node)).metadata.snapshots.length, 2);
    assert.equal((await rowsOf(log)).length, 24, 'every row still read');
    for (const h of await history(log)) assert.deepEqual(h.stale, [], `${h.table}: no metadata file of an expired generation`);
  } finally {
    log.close();
  }
});

test('a process killed inside the history expiry leaves a lake that reads the same; rerunning converges and leaves nothing unreferenced', { timeout: 600_000 }, async () => {
  for (const point of ['expire:committed', 'expire:metadata-pruned', 'expire:lists-deleted']) {
    const { log, root } = await appended(10);
    for (const id of log.lake.catalog.listTables([NAMESPACE])) await (await log.lake.loadTable(id)).setProperties({ [PROP_HISTORY_KEEP_SNAPSHOTS]: String(K), [PROP_HISTORY_SLACK]: '1' });
    const before = await rowsOf(log);
    log.close();
    const k = await runTsx([CHILD, 'maintain', root], { env: { MIMIR_CRASH_AT: point } });
    assert.equal(k.signal, 'SIGKILL', `killed at ${point} (exit ${k.code}: ${k.stderr})`);
    const again = await EventLog.open(root);
    try {
      assert.deepEqual(await rowsOf(again), before, `${point}: the lake reads the same after the kill`);
      // the interrupted expiry's leftovers: its metadata files go at gc (or at the table's next expiry), the rest as orphans
      await maintain(again);
      await gc(again);
      await removeOrphanFiles(again.lake, { olderThanMs: 0 });
      assert.deepEqual((await removeOrphanFiles(again.lake, { olderThanMs: 0, dryRun: true })).deleted, [], `${point}: nothing unreferenced left`);
      for (const h of await history(again)) {
        assert.ok(h.snapshots <= K + 1, `${point}: ${h.table} holds ${h.snapshots} snapshots`);
        assert.deepEqual(h.stale, [], `${point}: ${h.table} keeps no metadata file of an expired generation`);
      }
      assert.deepEqual(await rowsOf(again), before, `${point}: the lake reads the same after the rerun`);
    } finally {
      again.close();
    }
  }
});
