// Ingest writes deltas: unchanged code writes nothing and is not parsed; a
// body edit (even one that moves no line) is one node change plus that
// function's edge events; a rename is
// one remove and one add; a crate gone from the workspace is removed; the
// universe skips a crate version it has; each run leaves an ingest_runs row.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { formatIngestReport, ingest, universeAdd } from '../../src/ingest/index.ts';
import { INGEST_RUNS } from '../../src/log/schema.ts';
import { batchRows } from '../../src/log/event-log.ts';
import { repoRoot } from '../helpers.ts';
import { copyFixture, countRunEvents, freshLake, runRows } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

async function setup() {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = copyFixture('ws', lake.dir);
  return { log: lake.log, ws };
}

/** JSON with bigints as integers. */
function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

function edit(file: string, from: string, to: string) {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} should contain ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

test('re-ingesting unchanged code writes zero events and parses no file', async () => {
  const { log, ws } = await setup();
  const first = await ingest(log, ws, { repo: 'demo' });
  assert.equal(first.crates, 2);
  assert.equal(first.parsed, 3);
  assert.ok(first.events.add > 20, formatIngestReport(first));
  assert.equal(first.events.change + first.events.remove, 0);
  assert.equal(await countRunEvents(log, first.run), first.events.add);

  const again = await ingest(log, ws, { repo: 'demo' });
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
  assert.equal(again.parsed, 0);
  assert.equal(again.skippedUnchanged, 3);
  assert.equal(again.unchangedCrates, 2);
  assert.equal(await countRunEvents(log, again.run), 0);
  assert.match(formatIngestReport(again), /2 crates \(2 unchanged\), 3 files \(0 parsed, 3 unchanged\), events \+0 ~0 -0/);
});

test('changing one function body without moving a line writes one node change (new body_hash, same id and lines), that function\'s edge events and the file\'s new hash', async () => {
  const { log, ws } = await setup();
  await ingest(log, ws, { repo: 'demo' });
  const before = await log.state('node', and(eq('repo', 'demo'), eq('qpath', 'alpha::helper')));
  assert.equal(before.size, 1);
  const [helperId, old] = [...before][0]!;
  assert.match(String(old['body_hash']), /^[0-9a-f]{16}$/);
  const lib = path.join(ws, 'alpha', 'src', 'lib.rs');

  // a literal changes: no line moves, no edge changes, the node changes
  edit(lib, 'pub fn helper() -> u32 {\n    1\n}\n', 'pub fn helper() -> u32 {\n    2\n}\n');
  const lit = await ingest(log, ws, { repo: 'demo' });
  assert.equal(lit.unchangedCrates, 1, 'beta did not change');
  const litNodes = await runRows(log, 'node', lit.run);
  assert.deepEqual(litNodes.map((n) => [n['op'], n['id'], n['qpath'], n['line_start'], n['line_end']]), [['change', helperId, 'alpha::helper', 4, 6]]);
  assert.notEqual(litNodes[0]!['body_hash'], old['body_hash']);
  assert.deepEqual(await runRows(log, 'edge', lit.run), []);
  assert.deepEqual((await runRows(log, 'file', lit.run)).map((f) => [f['op'], f['path']]), [['change', 'src/lib.rs']]);
  assert.deepEqual(lit.events, { add: 0, change: 2, remove: 0 });

  // the literal becomes a call, on the same line: one node change plus the call edge
  edit(lib, 'pub fn helper() -> u32 {\n    2\n}\n', 'pub fn helper() -> u32 {\n    other()\n}\n');
  const r = await ingest(log, ws, { repo: 'demo' });
  const nodes = await runRows(log, 'node', r.run);
  assert.deepEqual(nodes.map((n) => [n['op'], n['id'], n['line_start'], n['line_end']]), [['change', helperId, 4, 6]]);
  assert.notEqual(nodes[0]!['body_hash'], litNodes[0]!['body_hash']);
  const edges = await runRows(log, 'edge', r.run);
  assert.ok(edges.length >= 1);
  for (const e of edges) assert.equal(e['src'], helperId, `edge event not of helper: ${show(e)}`);
  assert.ok(edges.some((e) => e['op'] === 'add' && e['edge_kind'] === 'calls' && e['dst_path'] === 'alpha::other' && e['line'] === 5));
  const files = await runRows(log, 'file', r.run);
  assert.deepEqual(files.map((f) => [f['op'], f['path']]), [['change', 'src/lib.rs']]);
  assert.deepEqual(r.events, { add: edges.filter((e) => e['op'] === 'add').length, change: 1 + edges.filter((e) => e['op'] === 'change').length + 1, remove: edges.filter((e) => e['op'] === 'remove').length });

  const again = await ingest(log, ws, { repo: 'demo' });
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
});

test('renaming a function writes one node remove and one node add, plus edge changes', async () => {
  const { log, ws } = await setup();
  await ingest(log, ws, { repo: 'demo' });
  const before = await log.state('node', and(eq('repo', 'demo'), eq('qpath', 'alpha::other')));
  assert.equal(before.size, 1);
  const oldId = [...before.keys()][0];
  edit(path.join(ws, 'alpha', 'src', 'lib.rs'), 'pub fn other() -> u32 {', 'pub fn another() -> u32 {');
  const r = await ingest(log, ws, { repo: 'demo' });
  const nodes = await runRows(log, 'node', r.run);
  assert.deepEqual(nodes.map((n) => [n['op'], n['qpath']]).sort(), [['add', 'alpha::another'], ['remove', 'alpha::other']]);
  assert.equal(nodes.find((n) => n['op'] === 'remove')!['id'], oldId);
  const edges = await runRows(log, 'edge', r.run);
  // the module's contains edge to it is replaced; total()'s call to `other` no longer resolves
  assert.ok(edges.some((e) => e['op'] === 'remove' && e['edge_kind'] === 'contains' && e['dst'] === oldId));
  assert.ok(edges.some((e) => e['op'] === 'add' && e['edge_kind'] === 'contains' && e['dst_path'] === 'alpha::another'));
  assert.ok(edges.some((e) => e['op'] === 'change' && e['edge_kind'] === 'calls' && e['dst'] === null && e['dst_path'] === 'other'));
  const state = await log.state('node', and(eq('repo', 'demo'), eq('krate', 'alpha@0.1.0')));
  assert.ok([...state.values()].some((n) => n['qpath'] === 'alpha::another'));
  assert.ok(![...state.values()].some((n) => n['qpath'] === 'alpha::other'));
});

test('a crate gone from the workspace, or at a new version, has its old krate removed', async () => {
  const { log, ws } = await setup();
  await ingest(log, ws, { repo: 'demo' });
  edit(path.join(ws, 'beta', 'Cargo.toml'), 'version = "0.1.0"', 'version = "0.2.0"');
  const r = await ingest(log, ws, { repo: 'demo' });
  assert.equal(r.removedCrates, 1);
  assert.equal((await log.state('node', and(eq('repo', 'demo'), eq('krate', 'beta@0.1.0')))).size, 0);
  assert.ok((await log.state('node', and(eq('repo', 'demo'), eq('krate', 'beta@0.2.0')))).size > 0);
  assert.equal((await log.state('file', and(eq('repo', 'demo'), eq('krate', 'beta@0.1.0')))).size, 0);
  const again = await ingest(log, ws, { repo: 'demo' });
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
});

test('with deps: the sample workspace\'s vendored dependency goes to the universe, edges into it resolve, and a present version is skipped', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const { log } = lake;
  const sample = path.join(repoRoot, 'samples', 'workspace');
  const r = await ingest(log, sample, { repo: 'sample', withDeps: true, searchDirs: [path.join(sample, 'vendor')] });
  assert.equal(r.problems.length, 0, JSON.stringify(r.problems));
  assert.ok(r.deps);
  assert.deepEqual(r.deps.notFound, []);
  assert.equal(r.deps.report.crates, 1);
  assert.ok(r.deps.report.events.add > 0);
  const hashStr = await log.state('node', and(eq('repo', '@universe'), eq('qpath', 'fnvish::hash_str')));
  assert.equal(hashStr.size, 1);
  const [id, def] = [...hashStr][0]!;
  assert.equal(def['krate'], 'fnvish@0.2.1');
  assert.equal(def['file'], 'src/lib.rs');
  assert.equal(def['line_start'], 17);
  const calls = await log.rows('edge', { filter: and(eq('dst', id), eq('edge_kind', 'calls')) });
  assert.equal(calls.length, 2, 'Tally::add and Tally::count call hash_str');
  for (const c of calls) assert.equal(c['dst_krate'], 'fnvish@0.2.1');

  // universe add of the same folder: the version is present, nothing is written
  const g = log.lake.catalog.pointerGeneration();
  const u = await universeAdd(log, [path.join(sample, 'vendor')]);
  assert.equal(u.presentCrates, 1);
  assert.equal(u.parsed, 0);
  assert.deepEqual(u.events, { add: 0, change: 0, remove: 0 });
  assert.equal(log.lake.catalog.pointerGeneration(), g + 1n, 'only the ingest_runs row was committed');

  // a dependency version not found locally but already in the lake is not missing
  // (one found nowhere is reported: test/ingest/deps-honest.test.ts)
  const miss = await ingest(log, sample, { repo: 'sample', withDeps: true, searchDirs: [] });
  assert.deepEqual(miss.deps?.notFound, []);
  assert.deepEqual(miss.events, { add: 0, change: 0, remove: 0 });
});

test('each run writes one ingest_runs row with its counts', async () => {
  const { log, ws } = await setup();
  const r1 = await ingest(log, ws, { repo: 'demo', rev: 'abc123' });
  const r2 = await ingest(log, ws, { repo: 'demo', rev: 'abc124' });
  const t = await log.table(INGEST_RUNS);
  const rows = [];
  for await (const b of t!.scan().batches()) rows.push(...batchRows(b));
  assert.equal(rows.length, 2);
  const byRun = new Map(rows.map((row) => [row['run'], row]));
  const row1 = byRun.get(r1.run)!;
  assert.equal(row1['repo'], 'demo');
  assert.equal(row1['rev'], 'abc123');
  assert.equal(row1['status'], 'ok');
  assert.equal(row1['events'], BigInt(r1.events.add));
  assert.ok((row1['finished'] as bigint) >= (row1['started'] as bigint));
  const summary = JSON.parse(row1['summary'] as string) as { parsed: number; crates: number };
  assert.equal(summary.parsed, 3);
  assert.equal(summary.crates, 2);
  assert.equal(byRun.get(r2.run)!['events'], 0n);
});

test('the same runs in one thread (workers: 0) write the same state', async () => {
  const a = await setup();
  const b = await setup();
  await ingest(a.log, a.ws, { repo: 'demo', workers: 2 });
  await ingest(b.log, b.ws, { repo: 'demo', workers: 0 });
  const strip = (m: Map<string, Record<string, unknown>>) => [...m.values()].map((r) => show({ ...r, run: 0, ts: 0 })).sort();
  for (const k of ['node', 'edge', 'file'] as const) {
    assert.deepEqual(strip(await a.log.state(k)), strip(await b.log.state(k)));
  }
});

test('a crate whose extraction runs past the limit is reported and skipped; the run completes', async () => {
  const { log, ws } = await setup();
  const r = await ingest(log, ws, { repo: 'demo', extractTimeoutMs: 1 });
  assert.equal(r.problems.filter((p) => p.kind === 'extract-failed').length, 2, JSON.stringify(r.problems));
  assert.match(r.problems[0]!.message, /took over 1 ms/);
  assert.deepEqual(r.events, { add: 0, change: 0, remove: 0 });
  const ok = await ingest(log, ws, { repo: 'demo' });
  assert.equal(ok.problems.length, 0);
  assert.ok(ok.events.add > 0);
});
