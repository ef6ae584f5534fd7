// The state tables' layout: code_nodes sorted by (name, id), so a node by id
// reads a page of its name's rows however many share the name; and `state
// maintain --force` giving a lake made by an older version the current layout
// (sort order, properties), re-sorting files of the former order in bounded
// groups (one name), also when an ordinary maintenance meets such files.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { EventLog, type EventRow } from '../../src/log/event-log.ts';
import { and, eq, inList } from '../../src/lake/expr/expr.ts';
import { maintainState, overlapDepth } from '../../src/log/state/maintain.ts';
import { verifyState, formatVerifyReport } from '../../src/log/state/verify.ts';
import { CODE_NODES, LEGACY_SORT_COLUMNS, SORT_COLUMNS, STATE_TABLE_PROPERTIES } from '../../src/log/state/schema.ts';
import { metadataUpdate } from '../../src/lake/table/commit.ts';
import { compareValues } from '../../src/log/state/delta.ts';
import type { Row } from '../../src/log/state/rows.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-state-layout-');
after(work.cleanup);
let n = 0;
const dir = (): string => path.join(work.dir, `lake-${n++}`);

const hex = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 32);

/** `count` methods named `new` (ids a hash of the qpath, so id order is not qpath order), plus a few other names. */
function nodes(count: number, tag: string): EventRow[] {
  const out: EventRow[] = [];
  for (let i = 0; i < count; i++) {
    const qpath = `c${tag}${i}::T${i}::new`;
    out.push({ repo: 'r', krate: `c${tag}${i}@1.0.0`, run: 'run-t', ts: BigInt(i), op: 'add', id: hex(qpath), kind: 'method', name: 'new', qpath, file: 'src/lib.rs', line_start: 1, line_end: 2 });
  }
  for (const name of ['add', 'zed']) out.push({ repo: 'r', krate: 'x@1.0.0', run: 'run-t', ts: 0n, op: 'add', id: hex(name + tag), kind: 'fn', name, qpath: `x::${name}${tag}`, file: 'src/lib.rs', line_start: 1, line_end: 2 });
  return out;
}

const orderBy = (cols: readonly string[]) => (a: Row, b: Row): number => {
  for (const c of cols) {
    const d = compareValues(a[c] ?? null, b[c] ?? null);
    if (d !== 0) return d;
  }
  return 0;
};

async function rowsInFileOrder(log: EventLog): Promise<Row[]> {
  const t = (await log.table(CODE_NODES))!;
  return t.scan({ columns: ['name', 'qpath', 'id'] }).toArray();
}

async function equalToFold(log: EventLog, what: string): Promise<void> {
  const r = await verifyState(log);
  assert.ok(r.equal, `${what}:\n${formatVerifyReport(r).join('\n')}`);
}

test('state layout: a node by (name, id) reads the filter columns of a page or two of its name, not of every node sharing the name', async () => {
  const log = await EventLog.open(dir());
  try {
    const rows = nodes(3000, 'a');
    await log.append('node', rows);
    await maintainState(log, { force: true });
    const t = (await log.table(CODE_NODES))!;
    const want = rows[1234]!.id as string;
    const s = t.scan({ filter: and(inList('name', ['new']), inList('id', [want])), columns: ['id', 'qpath'] });
    const got = await s.toArray();
    assert.deepEqual(got.map((r) => r.qpath), [rows[1234]!.qpath]);
    assert.ok(s.metrics.filterRowsRead < 700, `the filter columns of ${s.metrics.filterRowsRead} of 3002 rows were read`);
  } finally {
    log.close();
  }
});

test('state layout: maintain --force gives a table of the former layout the current sort order and properties, re-sorting its files; an ordinary maintenance re-sorts such files too', async () => {
  const log = await EventLog.open(dir());
  try {
    await log.append('node', nodes(400, 'a'));
    // make code_nodes look as an older version left it: files sorted by the former order, no dictionary cap
    const legacy = LEGACY_SORT_COLUMNS[CODE_NODES]!;
    const t = (await log.table(CODE_NODES))!;
    const all = await t.scan({}).toArray();
    all.sort(orderBy(legacy));
    const fields = t.schema.fields;
    const written = await t.writeDataFiles([{ fields, numRows: all.length, columns: fields.map((f) => all.map((r) => r[f.name] ?? null)) }]);
    const live = await t.liveFiles();
    await t.commit(t.rewriteUpdate(live.map((f) => f.file.filePath), written, [], { dataSequenceNumber: t.currentSnapshot()!.sequenceNumber }));
    await t.commit(
      metadataUpdate((m) => {
        const properties = { ...m.properties };
        delete properties['write.parquet.dict-size-bytes'];
        const orderId = Math.max(...m.sortOrders.map((o) => o.orderId)) + 1;
        const field = (name: string): number => fields.find((f) => f.name === name)!.id;
        const order = { orderId, fields: legacy.map((c) => ({ sourceId: field(c), transform: { kind: 'identity' as const }, direction: 'asc' as const, nullOrder: 'nulls-first' as const })) };
        return { ...m, properties, sortOrders: [...m.sortOrders, order], defaultSortOrderId: orderId };
      }),
    );
    assert.notDeepEqual((await rowsInFileOrder(log)).map((r) => r.id), [...(await rowsInFileOrder(log))].sort(orderBy(SORT_COLUMNS[CODE_NODES])).map((r) => r.id), 'the former order differs');
    await equalToFold(log, 'the legacy layout');

    // a later run's file (current order) beside it; an ordinary maintenance merges both: output sorted by (name, id)
    await log.append('node', nodes(50, 'b'));
    const ordinary = await maintainState(log, { maxDeltaFiles: 0, tables: [CODE_NODES] });
    assert.equal(ordinary.tables[0]!.layout, 'outdated');
    const merged = await rowsInFileOrder(log);
    if ((await (await log.table(CODE_NODES))!.liveFiles()).length === 1) assert.deepEqual(merged, [...merged].sort(orderBy(SORT_COLUMNS[CODE_NODES])));
    await equalToFold(log, 'after an ordinary maintenance');

    const forced = await maintainState(log, { force: true });
    const nodesReport = forced.tables.find((x) => x.table === CODE_NODES)!;
    assert.equal(nodesReport.layout, 'applied');
    const after = (await log.table(CODE_NODES))!;
    const order = after.metadata.sortOrders.find((o) => o.orderId === after.metadata.defaultSortOrderId)!;
    assert.deepEqual(order.fields.map((f) => fields.find((x) => x.id === f.sourceId)!.name), [...SORT_COLUMNS[CODE_NODES]]);
    for (const [k, v] of Object.entries(STATE_TABLE_PROPERTIES)) assert.equal(after.properties[k], v, k);
    const files = await after.liveFiles();
    assert.equal(files.length, 1);
    assert.equal(files[0]!.file.sortOrderId, order.orderId, 'the rewritten file is marked with the current order');
    const sorted = await rowsInFileOrder(log);
    assert.deepEqual(sorted, [...sorted].sort(orderBy(SORT_COLUMNS[CODE_NODES])));
    assert.equal(sorted.length, 400 + 2 + 50 + 2);
    await equalToFold(log, 'after maintain --force');
    // and the lookup by (name, id) finds each node
    const one = sorted[77]!;
    assert.deepEqual((await after.scan({ filter: and(eq('name', one.name), inList('id', [one.id])), columns: ['qpath'] }).toArray()).map((r) => r.qpath), [one.qpath]);
    const again = await maintainState(log);
    assert.ok(again.tables.every((x) => x.layout === 'current' && x.action === 'none'), JSON.stringify(again.tables.map((x) => [x.table, x.layout, x.action])));
  } finally {
    log.close();
  }
});

test('state maintenance: a table whose data files overlap (5 runs, each across the whole name range) is rewritten though its file counts are under the thresholds; a lookup then opens one file', async () => {
  const log = await EventLog.open(dir());
  try {
    for (let k = 0; k < 5; k++) await log.append('node', nodes(30, `r${k}`));
    const t = (await log.table(CODE_NODES))!;
    const nameId = t.schema.fields.find((f) => f.name === 'name')!.id;
    assert.equal(overlapDepth((await t.liveFiles()).map((f) => f.file), nameId), 5);
    const before = t.scan({ filter: eq('name', 'zed') });
    assert.equal((await before.toArray()).length, 5);
    assert.equal(before.metrics.filesOpened, 5);
    const r = await maintainState(log, { tables: [CODE_NODES] });
    const m = r.tables[0]!;
    assert.equal(m.overlap, 5);
    assert.equal(m.action, 'major', 'a small table: major');
    const after = (await log.table(CODE_NODES))!.scan({ filter: eq('name', 'zed') });
    assert.equal((await after.toArray()).length, 5);
    assert.equal(after.metrics.filesOpened, 1);
    await equalToFold(log, 'after the overlap rewrite');
    assert.equal((await maintainState(log, { tables: [CODE_NODES] })).tables[0]!.action, 'none');
  } finally {
    log.close();
  }
});

test('state maintenance: with no delete file, a big table rewrites only the runs\' overlapping files (minor), leaving the sorted files of the last rewrite; two layers remain', async () => {
  const log = await EventLog.open(dir());
  try {
    for (let k = 0; k < 3; k++) await log.append('node', nodes(40, `a${k}`));
    assert.equal((await maintainState(log, { tables: [CODE_NODES], force: true })).tables[0]!.action, 'major');
    const t = (await log.table(CODE_NODES))!;
    // a "big" table: more rows than a file holds
    await t.setProperties({ 'mimir.write.file-rows': '50' });
    const base = new Set((await t.liveFiles()).map((f) => f.file.filePath));
    assert.equal(base.size, 1);
    for (let k = 0; k < 5; k++) await log.append('node', nodes(10, `b${k}`));
    const r = (await maintainState(log, { tables: [CODE_NODES] })).tables[0]!;
    assert.ok(r.overlap > 4, `overlap ${r.overlap}`);
    assert.equal(r.action, 'minor');
    const t2 = (await log.table(CODE_NODES))!;
    const live = (await t2.liveFiles()).map((f) => f.file);
    for (const p of base) assert.ok(live.some((f) => f.filePath === p), 'the last rewrite\'s files stay');
    const nameId = t2.schema.fields.find((f) => f.name === 'name')!.id;
    assert.ok(overlapDepth(live, nameId) <= 4, `overlap after ${overlapDepth(live, nameId)}`);
    await equalToFold(log, 'after a minor rewrite without deletes');
  } finally {
    log.close();
  }
});
