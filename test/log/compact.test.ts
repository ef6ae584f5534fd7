// Compaction of the event log: layout, merged rows kept, ring rows dropped only
// after verification, refusals, idempotence, concurrent appends.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { EventLog, rowsToBatch } from '../../src/log/event-log.ts';
import { compact, formatCompactReport, type CompactReport } from '../../src/log/compact.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import type { Value } from '../../src/lake/spec/types.ts';
import { CODE_NODE_EVENTS, PROP_RING, RING_SPLIT, SOURCE_KINDS, UNIVERSE_REPO, ident, kindSchema, ringTableName, tableName, type Kind } from '../../src/log/schema.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { canonRow, nodeRow } from './rows.ts';

const work = scratch('mimir-compact-');
after(work.cleanup);
let n = 0;
const root = (): string => path.join(work.dir, `lake-${n++}`);

const row = nodeRow;

const canon = canonRow;
const sorted = (rows: Record<string, Value>[]): string[] => rows.map(canon).sort();

async function snapshotOf(log: EventLog): Promise<Record<string, { rows: string[]; state: string[] }>> {
  const out: Record<string, { rows: string[]; state: string[] }> = {};
  for (const k of SOURCE_KINDS) {
    const st = await log.state(k);
    out[k] = { rows: sorted(await log.rows(k)), state: [...st.entries()].map(([id, r]) => `${id}=${canon(r)}`).sort() };
  }
  return out;
}

/** A unified lake with ring and repo rows in the source tables, then split by hand (ring rows copied, property set). */
async function splitLake(r: string, appends = 6): Promise<EventLog> {
  const log = await EventLog.open(r, { init: 'unified' });
  for (let i = 0; i < appends; i++) {
    await log.append('node', [
      row(UNIVERSE_REPO, `dep${i % 3}@1.0.0`, `u${i}`),
      row(UNIVERSE_REPO, `dep${(i + 1) % 3}@1.0.0`, `v${i}`),
      row('app', 'app@0.1.0', `a${i}`),
      row('lib', 'lib@0.2.0', `l${i}`),
    ]);
    await log.append('file', [
      { repo: UNIVERSE_REPO, krate: `dep${i % 3}@1.0.0`, run: 'r', ts: 1n, op: 'add', id: `fu${i}`, path: `src/${i}.rs` },
      { repo: 'app', krate: 'app@0.1.0', run: 'r', ts: 1n, op: 'add', id: `fa${i}`, path: `src/${i}.rs` },
    ]);
  }
  for (const k of SOURCE_KINDS) {
    const src = await log.lake.loadTable(ident(tableName(k)));
    const ring = await log.lake.loadTable(ident(ringTableName(k)));
    const rows = (await src.scan({ filter: eq('repo', UNIVERSE_REPO) }).toArray()) as Record<string, unknown>[];
    if (rows.length > 0) await ring.append([rowsToBatch(kindSchema(k), rows, k)]);
  }
  const node = await log.lake.loadTable(ident(CODE_NODE_EVENTS));
  await node.setProperties({ [PROP_RING]: RING_SPLIT });
  assert.equal(await log.ringSplit(), true);
  return log;
}

const entry = (r: CompactReport, name: string) => r.tables.find((t) => t.table === `mimir.${name}`)!;

async function universeRowsIn(log: EventLog, kind: Kind): Promise<number> {
  const t = await log.lake.loadTable(ident(tableName(kind)));
  return t.scan({ filter: eq('repo', UNIVERSE_REPO) }).count();
}

test('compact: 200 small appends end with at most a few files per repo, the same merged rows, and a scan filtered to one repo opens only that repo\'s files', async () => {
  const log = await EventLog.open(root());
  const repos = ['app', 'lib', 'tool', 'web'];
  for (let i = 0; i < 200; i++) {
    const repo = repos[i % 4]!;
    await log.append('node', [
      row(repo, `${repo}@0.1.0`, `${repo}-${i}`),
      row(repo, `${repo}@0.1.0`, `${repo}-${i - (i % 8)}`, 'change', `v${i}`),
      ...(i % 10 === 0 ? [row(UNIVERSE_REPO, `dep${i % 7}@1.0.0`, `u${i}`)] : []),
    ]);
  }
  const src0 = await log.lake.loadTable(ident(tableName('node')));
  assert.equal((await src0.dataFiles()).length, 200);
  const before = await snapshotOf(log);
  const report = await compact(log, { targetFileRows: 1000 });
  const line = formatCompactReport(report);
  assert.match(line, /code_node_events: files 200->4, rows 400->400/);
  const e = entry(report, 'code_node_events');
  assert.equal(e.before.files, 200);
  assert.equal(e.after.files, 4);
  assert.ok(e.after.bytes < e.before.bytes, `bytes ${e.before.bytes} -> ${e.after.bytes}`);
  assert.ok(report.ms >= 0);
  assert.deepEqual(await snapshotOf(log), before);

  const src = await log.lake.loadTable(ident(tableName('node')));
  const files = await src.dataFiles();
  const perRepo = new Map<string, number>();
  for (const f of files) perRepo.set(String(f.file.partition[0]), (perRepo.get(String(f.file.partition[0])) ?? 0) + 1);
  for (const repo of repos) assert.ok((perRepo.get(repo) ?? 0) <= 2, `${repo}: ${perRepo.get(repo)} files`);
  const scan = src.scan({ filter: eq('repo', 'lib') });
  const libRows = await scan.toArray();
  assert.equal(libRows.length, 100);
  assert.ok(libRows.every((r) => r.repo === 'lib'));
  assert.equal(scan.metrics.filesOpened, 1);
  assert.equal(scan.metrics.dataFilesSkipped, 3);
  // and the merged read of one repo is unchanged
  assert.equal((await log.rows('node', { filter: eq('repo', 'lib') })).length, 100);
  log.close();
});

test('compact: ring rows are dropped from split sources only after the ring tables are verified', async () => {
  const log = await splitLake(root());
  const before = await snapshotOf(log);
  assert.ok((await universeRowsIn(log, 'node')) > 0);
  const report = await compact(log, { targetFileRows: 1000 });
  assert.equal(entry(report, 'code_node_events').droppedRingRows, 12n);
  assert.equal(entry(report, 'code_file_events').droppedRingRows, 6n);
  assert.equal(entry(report, 'code_node_events').skipped, undefined);
  for (const k of SOURCE_KINDS) assert.equal(await universeRowsIn(log, k), 0, `${k} source still holds ring rows`);
  assert.deepEqual(await snapshotOf(log), before);
  // the ring tables still hold them all
  const ring = await log.lake.loadTable(ident(ringTableName('node')));
  assert.equal(await ring.scan().count(), 12);
  log.close();
});

test('compact: refuses and says why when a ring table misses rows', async () => {
  const log = await splitLake(root());
  // corrupt: remove the ring table's rows of dep1@1.0.0 (one overwrite)
  const ring = await log.lake.loadTable(ident(ringTableName('node')));
  const files = await ring.dataFiles();
  const keep = (await ring.scan({ filter: eq('repo', UNIVERSE_REPO) }).toArray()).filter((r) => r.krate !== 'dep1@1.0.0') as Record<string, unknown>[];
  const newFiles = await ring.writeDataFiles([rowsToBatch(kindSchema('node'), keep, 'node')]);
  await ring.overwrite(
    files.map((f) => f.file),
    newFiles,
  );
  const src = await log.lake.loadTable(ident(tableName('node')));
  const srcFilesBefore = (await src.dataFiles()).map((f) => f.file.filePath).sort();
  const report = await compact(log, { targetFileRows: 1000 });
  const e = entry(report, 'code_node_events');
  assert.ok(e.skipped, 'the node source table was compacted despite a ring table missing rows');
  assert.match(e.skipped!, /refused: mimir\.code_node_events_ring does not hold every ring row of mimir\.code_node_events/);
  assert.match(e.skipped!, /1 krate\(s\) differ: dep1@1\.0\.0 \(source 4, ring 0\)/);
  assert.match(e.skipped!, /ring rows in the source 12, rows in the ring table 8/);
  assert.match(formatCompactReport(report), /code_node_events: skipped \(refused/);
  assert.equal(e.droppedRingRows, 0n);
  const src2 = await log.lake.loadTable(ident(tableName('node')));
  assert.deepEqual((await src2.dataFiles()).map((f) => f.file.filePath).sort(), srcFilesBefore, 'the refused table changed');
  assert.equal(await universeRowsIn(log, 'node'), 12);
  // the other kinds were fine and compacted
  assert.equal(entry(report, 'code_file_events').skipped, undefined);
  assert.equal(await universeRowsIn(log, 'file'), 0);
  log.close();
});

test('compact: a ring table with extra rows of a krate (ingested after the split) still verifies', async () => {
  const log = await splitLake(root());
  await log.append('node', [row(UNIVERSE_REPO, 'dep1@1.0.0', 'late', 'add')]);
  const before = await snapshotOf(log);
  const report = await compact(log, { targetFileRows: 1000 });
  assert.equal(entry(report, 'code_node_events').skipped, undefined);
  assert.equal(entry(report, 'code_node_events').droppedRingRows, 12n);
  assert.deepEqual(await snapshotOf(log), before);
  log.close();
});

test('compact: ring tables are rewritten sorted by krate', async () => {
  const log = await EventLog.open(root());
  for (let i = 0; i < 40; i++) {
    await log.append('node', [row(UNIVERSE_REPO, `k${String(i % 10).padStart(2, '0')}@1.0.0`, `u${i}`), row(UNIVERSE_REPO, `k${String((i * 7) % 10).padStart(2, '0')}@1.0.0`, `w${i}`)]);
  }
  const before = await snapshotOf(log);
  const report = await compact(log, { targetFileRows: 20 });
  const e = entry(report, 'code_node_events_ring');
  assert.equal(e.before.files, 40);
  assert.equal(e.after.files, 5); // 10 krates of 8 rows: two krates a file
  assert.deepEqual(await snapshotOf(log), before);
  const ring = await log.lake.loadTable(ident(ringTableName('node')));
  assert.equal(ring.spec.fields.length, 0, 'ring tables stay unpartitioned');
  const order = ring.metadata.sortOrders.find((o) => o.orderId === ring.metadata.defaultSortOrderId)!;
  assert.deepEqual(order.fields.map((f) => f.sourceId), [2, 6]);
  const rows = await ring.scan().toArray();
  const keys = rows.map((r) => `${r.krate}\u0000${r.id}`);
  assert.deepEqual(keys, [...keys].sort(), 'rows are not sorted by (krate, id)');
  for (const f of await ring.dataFiles()) assert.equal(f.file.sortOrderId, ring.metadata.defaultSortOrderId);
  // one crate's rows are in one file: a krate filter opens one
  const scan = ring.scan({ filter: eq('krate', 'k03@1.0.0') });
  assert.equal((await scan.toArray()).length, 8);
  assert.equal(scan.metrics.filesOpened, 1);
  log.close();
});

test('compact: a second run is a no-op', async () => {
  const log = await splitLake(root());
  await compact(log, { targetFileRows: 1000 });
  const g = log.lake.catalog.pointerGeneration();
  const before = await snapshotOf(log);
  const r2 = await compact(log, { targetFileRows: 1000 });
  for (const t of r2.tables) {
    assert.ok(t.skipped, `${t.table} rewritten again`);
    assert.deepEqual(t.after, t.before);
    assert.equal(t.droppedRingRows, 0n);
  }
  assert.equal(log.lake.catalog.pointerGeneration(), g, 'the second run committed something');
  assert.deepEqual(await snapshotOf(log), before);
  // and after new appends only the touched repo partition is rewritten
  await log.append('node', [row('app', 'app@0.1.0', 'new1')]);
  const r3 = await compact(log, { targetFileRows: 1000 });
  const e = entry(r3, 'code_node_events');
  assert.equal(e.skipped, undefined);
  assert.equal(e.before.files - e.after.files, 1);
  log.close();
});

function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('exit', (code, sig) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code ?? sig}: ${err}`))));
  });
}

test('compact: a concurrent appender in another process loses no row and none is duplicated; events of one id keep their order (latest wins) across compaction, including rows appended concurrently', async () => {
  const r = root();
  const log = await splitLake(r);
  for (let s = 0; s < 5; s++) await log.append('node', [row(s % 2 ? 'lib' : 'app', s % 2 ? 'lib@0.2.0' : 'app@0.1.0', `s${s}`, 'add', 'initial')]);
  const rounds = 30;
  let childDone = false;
  const child = runChild([path.join(repoRoot, 'test/log/compact-append-child.ts'), r, 'c', String(rounds)]).finally(() => (childDone = true));
  let runs = 0;
  let compactedWhileChildRan = 0;
  while (!childDone || runs === 0) {
    const rep = await compact(log, { targetFileRows: 1000 });
    runs++;
    if (!childDone && !entry(rep, 'code_node_events').skipped) compactedWhileChildRan++;
  }
  assert.match(await child, /done 30/);
  await compact(log, { targetFileRows: 1000 });
  assert.ok(compactedWhileChildRan >= 1, 'no compaction overlapped the appender');

  const rows = await log.rows('node');
  const ids = rows.filter((x) => x.op === 'add').map((x) => x.id as string);
  assert.equal(new Set(ids).size, ids.length, 'an add event is duplicated');
  for (let i = 0; i < rounds; i++) for (const p of ['a', 'l', 'b', 'u']) assert.ok(ids.includes(`c-${p}${i}`), `c-${p}${i} lost`);
  for (let i = 0; i < 6; i++) for (const p of ['u', 'v', 'a', 'l']) assert.ok(ids.includes(`${p}${i}`), `${p}${i} lost`);
  assert.equal(rows.length, 6 * 4 + 5 + rounds * 9);
  const changes = rows.filter((x) => x.op === 'change');
  assert.equal(changes.length, rounds * 5);
  // no ring row in a source table, latest event of every shared id wins
  assert.equal(await universeRowsIn(log, 'node'), 0);
  const state = await log.state('node');
  for (let s = 0; s < 5; s++) assert.equal(state.get(`s${s}`)?.name, `c-r${String(rounds - 1).padStart(4, '0')}`, `s${s} lost its latest event`);
  log.close();
});

test('compact: events of one id keep their order (latest wins) across compaction', async () => {
  const log = await EventLog.open(root());
  for (let i = 0; i < 30; i++) {
    await log.append('node', [row('app', 'app@0.1.0', `x${i % 3}`, i === 0 ? 'add' : 'change', `v${String(i).padStart(2, '0')}`)]);
  }
  await log.append('node', [row('app', 'app@0.1.0', 'x2', 'remove')]);
  const before = await log.state('node');
  assert.equal(before.get('x0')?.name, 'v27');
  assert.equal(before.get('x1')?.name, 'v28');
  assert.equal(before.has('x2'), false);
  await compact(log, { targetFileRows: 4 }); // small files: cut between ids, never inside one
  const afterState = await log.state('node');
  assert.deepEqual(afterState, before);
  // appended after compaction: newer still
  await log.append('node', [row('app', 'app@0.1.0', 'x0', 'change', 'v99')]);
  assert.equal((await log.state('node')).get('x0')?.name, 'v99');
  await compact(log, { targetFileRows: 4 });
  assert.equal((await log.state('node')).get('x0')?.name, 'v99');
  log.close();
});

test('compact: refused on a pinned handle', async () => {
  const log = await EventLog.open(root());
  const pin = log.pin({ generation: log.lake.catalog.pointerGeneration() });
  await assert.rejects(compact(pin), /pinned read handle cannot compact/);
  pin.close();
  log.close();
});
