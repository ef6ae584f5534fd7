// The serving state tables equal a fold of the event log at every generation:
// through generic appends (add, change, remove, pos), through ingest runs
// (line shifts, body edits, renames, crates removed), after ring split,
// unsplit and compaction, after maintenance (minor and major) and a rebuild;
// and an independent reader (Python avro + DuckDB) reads them, delete files
// applied, with the same rows as Mimir.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest, removeRepo } from '../../src/ingest/index.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import { compact } from '../../src/log/compact.ts';
import { gc } from '../../src/log/gc.ts';
import { ident } from '../../src/log/schema.ts';
import { STATE_TABLES, CORE_STATE_TABLES, CODE_NODES, CODE_EDGES_IN, CODE_EDGES_OUT, CODE_PATHS, stateSchema } from '../../src/log/state/schema.ts';
import { verifyState, formatVerifyReport } from '../../src/log/state/verify.ts';
import { rebuildState, hasStateTables } from '../../src/log/state/rebuild.ts';
import { maintainState } from '../../src/log/state/maintain.ts';
import { StateView } from '../../src/log/state/view.ts';
import { StateDelta, addColumns, rowOrder, sortedBatch, sortedParts, toBatch } from '../../src/log/state/delta.ts';
import { ParquetDataFile } from '../../src/lake/parquet/read.ts';
import { edgeRow, keyRows, nodeRow, ownPosition, placed, type Row } from '../../src/log/state/rows.ts';
import { batchRows, rowsToBatch } from '../../src/log/batch.ts';
import { kindSchema } from '../../src/log/schema.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { noIndependentReader, planIndependently, readIndependently } from '../independent-reader.ts';
import { sampleLake } from '../query/sample.ts';

const work = scratch('mimir-state-');
after(work.cleanup);
let n = 0;
const dir = (): string => path.join(work.dir, `lake-${n++}`);

async function equalAt(log: EventLog, g: bigint, what: string): Promise<void> {
  const r = await verifyState(log, { generation: g });
  assert.ok(r.equal, `${what} (generation ${g}):\n${formatVerifyReport(r).join('\n')}`);
}

/** Every generation from `from` to now. */
async function equalEverywhere(log: EventLog, from: bigint, what: string): Promise<void> {
  const now = log.lake.catalog.pointerGeneration();
  for (let g = from; g <= now; g++) await equalAt(log, g, what);
}

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} should contain ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

test('state: a sorted batch has the rows in the order rowOrder gives (nulls first, UTF-8 byte order with surrogates and U+E000..U+FFFF, ties in input order), from rows or from parts of columns', () => {
  // strings that order differently as UTF-16 units and as UTF-8 bytes, shared prefixes, nulls, duplicates
  const names = [null, '', 'a', 'ab', 'a::b', 'a::c', 'b', '\u{1F600}', '\uE000', '\uFFFD', 'z\u{10000}', 'z\uFFFF', 'Z'];
  let seed = 7;
  const pick = <T>(xs: T[]): T => xs[(seed = (seed * 1103515245 + 12345) % 2147483648) % xs.length]!;
  for (const ascii of [true, false]) {
    const pool = ascii ? names.filter((x) => x === null || !/[\ud800-\uffff]/.test(x)) : names;
    const rows: Row[] = [];
    for (let i = 0; i < 400; i++) {
      rows.push({
        dst_name: pick(pool), dst: pick(pool), edge_kind: pick(['call', 'use', null]), src: pick(pool), key: pick(pool), name: pick(pool), qpath: pick(pool),
        id: `e${i % 150}`, repo: 'r', krate: 'k', line: i,
      });
    }
    for (const t of [CODE_EDGES_IN, 'code_edges_out', 'code_keys', CODE_NODES] as const) {
      const expected = toBatch(t, [...rows].sort(rowOrder(t)));
      assert.deepEqual(sortedBatch(t, rows), expected, `${t}, ${ascii ? 'ASCII only' : 'with high code units'}`);
      // the same rows given as parts of columns (as flushes join them), of uneven sizes, one empty
      const parts = [[0, 1], [1, 1], [1, 97], [97, 250], [250, 400]].map(([a, b]) => toBatch(t, rows.slice(a, b)).columns);
      assert.deepEqual(sortedParts(t, parts, rows.length), expected, `${t} in parts, ${ascii ? 'ASCII only' : 'with high code units'}`);
    }
  }
});

test('state: the columns addColumns builds for add events are the rows events() buffers for them (nodeRow at its own position and keyRows; edgeRow in both edge tables)', () => {
  const common = { repo: 'r', krate: 'k@1.0.0', run: 'run-1', ts: 1_700_000_000_000_000n, op: 'add' };
  const nodes = rowsToBatch(kindSchema('node'), [
    { ...common, id: 'n1', kind: 'fn', name: 'a', qpath: 'k::a', public_paths: 'k::a\nk::x::a\n\nk::x::a', file: 'src/lib.rs', line_start: 3, line_end: 9, col: 5, body_hash: 'h', type_info: '{"ret":"u8"}' },
    { ...common, id: 'n2', kind: 'module', name: 'k', qpath: null, public_paths: null, file: null, line_start: null, line_end: null, col: null },
    { ...common, id: 'n3', kind: 'struct', name: 'S', qpath: 'k::S', public_paths: 'k::T', file: 'src/s.rs', line_start: 1, line_end: 1, col: 1, visibility: 'pub', parent: 'n2' },
  ], 'node');
  const edges = rowsToBatch(kindSchema('edge'), [
    { ...common, id: 'e1', src: 'n1', dst: 'n3', dst_path: 'k::S::new', dst_krate: 'k@1.0.0', edge_kind: 'call', file: 'src/lib.rs', line: 4, col: 9 },
    { ...common, id: 'e2', src: 'n1', dst: null, dst_path: null, edge_kind: 'call', file: null, line: null, col: null, unresolved_reason: 'no-target', dispatch: 'dynamic' },
  ], 'edge');
  const nodeRows = batchRows(nodes).map((e) => nodeRow(e, placed(ownPosition('node', e), false)));
  for (const layout of ['krate', 'id'] as const) {
    const got = addColumns('node', nodes, layout);
    assert.deepEqual(got.get(CODE_NODES), toBatch(CODE_NODES, nodeRows).columns);
    assert.deepEqual(got.get('code_keys'), toBatch('code_keys', nodeRows.flatMap((n) => keyRows(n, layout))).columns, layout);
  }
  // crate-keyed: each id row keyed by (krate, id), carrying the node's display columns; its path rows do not
  const keyed = toBatch('code_keys', nodeRows.flatMap((n) => keyRows(n, 'krate')));
  const col = (name: string): unknown[] => keyed.columns[keyed.fields.findIndex((f) => f.name === name)]!;
  assert.deepEqual(col('key').slice(0, 2), ['k@1.0.0\u0000n1', 'k::a']);
  assert.deepEqual(col('file').slice(0, 2), ['src/lib.rs', null]);
  assert.deepEqual(col('line').slice(0, 2), [3, null]);
  assert.deepEqual(toBatch('code_keys', nodeRows.flatMap((n) => keyRows(n, 'id'))).columns[0]!.slice(0, 2), ['n1', 'k::a']);
  const edgeRows = batchRows(edges).map((e) => edgeRow(e, placed(ownPosition('edge', e), false)));
  for (const t of [CODE_EDGES_IN, 'code_edges_out'] as const) assert.deepEqual(addColumns('edge', edges, 'krate').get(t), toBatch(t, edgeRows).columns, t);
});

test('state: a delta writes files of flushRows rows each (the last shorter), sorted, in row groups of the table\'s limit, from arrays it reuses flush after flush: the tables hold every row given', async () => {
  const log = await EventLog.open(dir());
  try {
    // row groups of 4 rows and flushes of 8: every full flush is two whole groups (the reused arrays)
    for (const t of [CODE_EDGES_IN, CODE_EDGES_OUT] as const) await (await log.lake.loadTable(ident(t))).setProperties({ 'write.parquet.row-group-limit': '4' });
    const delta = (await StateDelta.open(log, { flushRows: 8 }))!;
    let seed = 11;
    const next = (m: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % m;
    const common = { repo: 'r', krate: 'k@1.0.0', run: 'run-1', ts: 1_700_000_000_000_000n, op: 'add' };
    const given: Row[] = [];
    // parts of 11, 3, 7 and 9 rows: flushes cut parts, and one part spans two flushes
    for (const size of [11, 3, 7, 9]) {
      const rows = Array.from({ length: size }, () => {
        const i = given.length;
        const e = { ...common, id: `e${i}`, src: `n${next(5)}`, dst: `n${next(7)}`, dst_path: `k::f${next(6)}`, dst_krate: 'k@1.0.0', edge_kind: next(2) ? 'call' : 'ref', file: 'src/lib.rs', line: i + 1, col: next(40) };
        given.push(e);
        return e;
      });
      await delta.adds('edge', rowsToBatch(kindSchema('edge'), rows, 'edges'));
    }
    const targets = await delta.finish();
    await log.lake.commit(targets.map((x) => ({ ident: x.ident, update: x.update(), assertOnly: x.assertOnly })), 'edges');
    const expected = given.map((e) => edgeRow(e, placed(ownPosition('edge', e), false)));
    const key = (r: Record<string, unknown>): string => JSON.stringify(stateSchema(CODE_EDGES_OUT).fields.map((f) => r[f.name] ?? null));
    for (const t of [CODE_EDGES_IN, CODE_EDGES_OUT] as const) {
      const table = await log.lake.loadTable(ident(t));
      const files = (await table.dataFiles()).map((d) => d.file);
      assert.deepEqual(files.map((f) => Number(f.recordCount)).sort((a, b) => b - a), [8, 8, 8, 6], `${t}: files of 8 rows, then the rest`);
      const order = rowOrder(t);
      for (const f of files) {
        const pq = await ParquetDataFile.open(log.lake.io, f.filePath);
        const rows: Row[] = [];
        for (let g = 0; g < pq.rowGroupCount; g++) rows.push(...batchRows(await pq.readRowGroup(g, stateSchema(t).fields)));
        await pq.close();
        assert.deepEqual(rows.map((r) => r.id), [...rows].sort(order).map((r) => r.id), `${t}: ${f.filePath} is sorted`);
        assert.ok(pq.rowGroupCount === Math.ceil(rows.length / 4), `${t}: row groups of 4 rows`);
      }
      const held = (await table.scan().toArray()).map(key).sort();
      assert.deepEqual(held, expected.map(key).sort(), `${t}: every row given, once, as given`);
    }
  } finally {
    log.close();
  }
});

test('state: a new lake has empty state tables; generic appends (add, change, remove) keep them equal to the fold at every generation', async () => {
  const s = await sampleLake(dir());
  try {
    assert.ok(hasStateTables(s.log));
    // from the generation that made the lake (its node table, after the state tables)
    let first = 1n;
    while (!hasStateTables(s.log, first) || !s.log.lake.catalog.pointersAt(first).has('mimir.code_node_events')) first++;
    await equalEverywhere(s.log, first, 'sample lake');
    const view = (await StateView.open(s.log))!;
    const nodes = await view.nodes(undefined);
    assert.equal(nodes.length, 5, 'five live nodes (alpha::helper was removed)');
    assert.equal((await view.edgesIn(undefined)).length, 5);
    // the change moved alpha::helper to line 30 at `changed`
    const then = (await StateView.open(s.log, s.changed))!;
    const helper = (await then.nodes(undefined)).find((r) => r.qpath === 'alpha::helper')!;
    assert.equal(helper.line, 30);
    assert.equal(helper.moved, false);
    // rows of one commit carry its deletes: a change is one delete file plus its rows
    const edgesIn = (await s.log.table(CODE_EDGES_IN))!;
    assert.ok((await edgesIn.deleteFiles()).length >= 2);
  } finally {
    s.log.close();
  }
});

test('state: pos rows appended alone move a node and an edge; a pos remove beside its node remove', async () => {
  const s = await sampleLake(dir());
  try {
    const g0 = s.log.readGeneration();
    const common = { repo: 'alpha', krate: 'alpha@0.1.0', run: 'r', ts: 1_800_000_000_000_000n };
    await s.log.append('pos', [{ ...common, op: 'add', id: 'a-main', entity: 'node', file: 'src/main.rs', line: 9, col: 4, line_end: 12 }]);
    await s.log.append('pos', [{ ...common, op: 'add', id: 'e-a-call', entity: 'edge', file: 'src/main.rs', line: 11, col: 8 }]);
    // a node change keeps the pos row's position (it still wins)
    await s.log.append('node', [{ ...common, op: 'change', id: 'a-main', kind: 'fn', name: 'main', qpath: 'alpha::main', file: 'src/main.rs', line_start: 3, line_end: 6, visibility: 'pub', signature: 'fn main() -> ()' }]);
    const view = (await StateView.open(s.log))!;
    const main = (await view.nodes(undefined)).find((r) => r.id === 'a-main')!;
    assert.deepEqual([main.line, main.col, main.line_end, main.moved, main.signature], [9, 4, 12, true, 'fn main() -> ()']);
    const call = (await view.edgesIn(undefined)).find((r) => r.id === 'e-a-call')!;
    assert.deepEqual([call.line, call.col, call.moved], [11, 8, true]);
    await s.log.append('node', [{ ...common, op: 'remove', id: 'a-main' }]);
    await s.log.append('pos', [{ ...common, op: 'remove', id: 'a-main', entity: 'node' }]);
    await equalEverywhere(s.log, g0, 'pos rows');
  } finally {
    s.log.close();
  }
});

test('state: ingest runs (line shift, body edit, rename, crate removed, repo removed and ingested again) stay equal to the fold at every generation', async () => {
  const d = dir();
  const log = await EventLog.open(path.join(d, 'lake'));
  try {
    const ws = path.join(d, 'ws');
    cpSync(path.join(repoRoot, 'test', 'ingest', 'fixtures', 'ws'), ws, { recursive: true });
    const lib = path.join(ws, 'alpha', 'src', 'lib.rs');
    const g0 = log.readGeneration();
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    edit(lib, 'pub mod shapes;', '// a line above\npub mod shapes;');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    edit(lib, '    1\n', '    11\n');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    edit(lib, 'pub fn other()', 'pub fn other_renamed()');
    edit(lib, 'helper() + other()', 'helper() + other_renamed()');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    // beta leaves the workspace
    edit(path.join(ws, 'Cargo.toml'), '"beta"', '');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    const view = (await StateView.open(log))!;
    assert.ok(!(await view.nodes(undefined)).some((r) => r.krate === 'beta@0.1.0' || r.name === 'other'));
    const total = (await view.nodes(undefined)).find((r) => r.qpath === 'alpha::total')!;
    assert.equal(total.line, 13);
    assert.equal(total.moved, true);
    // the repo goes away in one run (its state rows with it), then comes back
    await removeRepo(log, 'demo');
    const gone = (await StateView.open(log))!;
    for (const t of CORE_STATE_TABLES) assert.equal((await gone.rows(t, undefined)).filter((r) => r.repo === 'demo').length, 0, `${t}: no demo row after repo remove`);
    // code_paths keeps every pair the log holds: the removed items' history is still found by path
    assert.ok((await gone.rows(CODE_PATHS, undefined)).some((r) => r.repo === 'demo' && r.qpath === 'alpha::other'), 'code_paths keeps the renamed item alpha::other after the repo remove');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    await equalEverywhere(log, g0, 'ingest');
    const back = (await StateView.open(log))!;
    const again = (await back.nodes(undefined)).find((r) => r.qpath === 'alpha::total')!;
    assert.equal(again.line, 13, 'the re-added item sits where its file says');
    assert.equal(again.moved, false, 'a re-add starts from its own row (no pos row survives the remove)');
  } finally {
    log.close();
  }
});

test('state: ring split, unsplit and compaction leave the state tables equal to the fold', async () => {
  const s = await sampleLake(dir());
  try {
    const g0 = s.log.readGeneration();
    await unsplitRing(s.log);
    await compact(s.log);
    await splitRing(s.log);
    await compact(s.log);
    await equalEverywhere(s.log, g0, 'split/unsplit/compact');
  } finally {
    s.log.close();
  }
});

test('state: maintenance (minor and major) and rebuild keep every row; major leaves no delete file', async () => {
  const s = await sampleLake(dir());
  try {
    const minor = await maintainState(s.log, { maxDeltaFiles: 0 });
    assert.ok(minor.tables.some((t) => t.action !== 'none'));
    await equalAt(s.log, s.log.readGeneration(), 'after minor');
    const major = await maintainState(s.log, { force: true });
    assert.ok(major.tables.every((t) => t.action === 'major' || t.before.dataFiles + t.before.deleteFiles === 0), JSON.stringify(major.tables.map((t) => [t.table, t.action])));
    for (const t of STATE_TABLES) {
      const table = (await s.log.table(t))!;
      assert.equal((await table.deleteFiles()).length, 0, `${t}: no delete file after a major rewrite`);
      assert.ok((await table.liveFiles()).length <= 1, `${t}: one sorted file`);
    }
    await equalAt(s.log, s.log.readGeneration(), 'after major');
    const again = await maintainState(s.log);
    assert.ok(again.tables.every((t) => t.action === 'none'));
    // rebuild of a lake whose state tables are gone
    for (const t of STATE_TABLES) await s.log.lake.dropTable(ident(t));
    assert.ok(!hasStateTables(s.log));
    assert.equal(await StateView.open(s.log), undefined);
    const r = await rebuildState(s.log);
    assert.ok(r.created);
    assert.equal(r.rows[CODE_NODES], 5);
    await equalAt(s.log, s.log.readGeneration(), 'after rebuild');
    // and rebuilding a consistent lake changes nothing it holds
    await rebuildState(s.log, { groupEvents: 3 });
    await equalAt(s.log, s.log.readGeneration(), 'after a second rebuild in small groups');
  } finally {
    s.log.close();
  }
});

test('state: gc deletes the files maintenance replaced only once no pinned handle reads them; the tables stay equal to the fold', async () => {
  const s = await sampleLake(dir());
  try {
    const dataOf = (t: string): string[] => {
      const d = path.join(s.log.lake.root, 'mimir', t, 'data');
      return existsSync(d) ? readdirSync(d).filter((f) => f.endsWith('.parquet')).map((f) => path.join(d, f)) : [];
    };
    const old = STATE_TABLES.flatMap(dataOf);
    assert.ok(old.length > STATE_TABLES.length, 'the sample leaves delta and delete files');
    const g = s.log.readGeneration();
    const pin = s.log.pin({ generation: g });
    const seen = async (): Promise<string[]> => (await (await StateView.open(pin, g))!.nodes(undefined)).map((r) => `${r.id} ${r.line}`).sort();
    const before = await seen();
    await maintainState(s.log, { force: true });
    await gc(s.log, { retainMs: 0 });
    for (const f of old) assert.ok(existsSync(f), `${f} (read by the pin) was deleted`);
    assert.deepEqual(await seen(), before, 'the pinned handle reads the state tables as they were');
    pin.close();
    await gc(s.log, { retainMs: 0 });
    const left = old.filter((f) => existsSync(f));
    assert.deepEqual(left, [], 'the replaced files are gone once nothing reads them');
    await equalAt(s.log, s.log.readGeneration(), 'after maintenance and gc');
    // a past generation whose state snapshot gc expired is not served from the tables
    assert.equal(await StateView.open(s.log, s.added), undefined);
  } finally {
    s.log.close();
  }
});

test('state: DuckDB (with Python avro for the manifests) reads the state tables, delete files applied, with the same rows as Mimir', { skip: noIndependentReader }, async () => {
  const s = await sampleLake(dir());
  try {
    for (const t of STATE_TABLES) {
      const table = (await s.log.table(t))!;
      const cols = stateSchema(t).fields.map((f) => f.name);
      const canon = (r: Record<string, unknown>): string => cols.map((c) => (r[c] === null || r[c] === undefined ? '∅' : String(r[c]))).join('|');
      const mine = (await table.scan().toArray()).map(canon).sort();
      const theirs = (await readIndependently(table.metadataLocation, cols)).map(canon).sort();
      assert.deepEqual(theirs, mine, t);
      if (t === CODE_NODES) assert.ok(planIndependently(table.metadataLocation).some((f) => f.content === 1), 'code_nodes has position delete files');
      assert.ok(!planIndependently(table.metadataLocation).some((f) => f.content === 2), `${t} has no equality delete file`);
    }
  } finally {
    s.log.close();
  }
});
