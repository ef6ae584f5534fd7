// Row deltas (data + equality delete files in one snapshot) and rewrites that
// merge data and delete files, read back by Mimir and by an independent reader
// (Python avro for the manifests, DuckDB for the Parquet files).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';
import type { Table } from '../../src/lake/table/table.ts';
import { scratch } from '../helpers.ts';
import { noIndependentReader, planIndependently, readIndependently } from '../independent-reader.ts';

const work = scratch('mimir-row-delta-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'string' } },
    { id: 2, name: 'name', required: false, type: { type: 'string' } },
    { id: 3, name: 'n', required: false, type: { type: 'int' } },
  ],
};
const ID = schema.fields[0]!;

function rows(list: [string, string, number][]): Batch {
  return { fields: schema.fields, numRows: list.length, columns: [list.map((r) => r[0]), list.map((r) => r[1]), list.map((r) => r[2])] };
}
function ids(list: string[]): Batch {
  return { fields: [ID], numRows: list.length, columns: [list] };
}

async function rowDelta(t: Table, add: [string, string, number][], del: string[]): Promise<void> {
  const files = add.length > 0 ? await t.writeDataFiles([rows(add)]) : [];
  const d = await t.writeEqualityDeletes([ID.id], del.length > 0 ? [ids(del)] : []);
  await t.commit(t.rowDeltaUpdate(files, d ? [d] : []));
}

async function content(t: Table): Promise<string[]> {
  const out = (await t.refresh()).scan().toArray();
  return (await out).map((r) => `${r.id as string}=${r.name as string}:${r.n as number}`).sort();
}

function fresh(name: string): Promise<Table> {
  const lake = Lake.open(path.join(work.dir, name));
  return lake.createTable({ namespace: ['s'], name: 't' }, schema);
}

test('row delta: equality deletes on id hide the older rows, and the rows added with them stay', async () => {
  const t = await fresh('a');
  await t.append([rows([['a', 'alpha', 1], ['b', 'beta', 2], ['c', 'gamma', 3]])]);
  await t.append([rows([['d', 'delta', 4]])]);
  // b changes, c and d go away, e is new: one snapshot
  await rowDelta(t, [['b', 'beta', 20], ['e', 'eps', 5]], ['b', 'c', 'd']);
  assert.deepEqual(await content(t), ['a=alpha:1', 'b=beta:20', 'e=eps:5']);
  // a filtered scan reads the filter column first and still applies the deletes to its matches
  const beta = await t.scan({ filter: { op: 'eq', col: 'name', value: 'beta' }, columns: ['n'] }).toArray();
  assert.deepEqual(beta.map((r) => r.n), [20]);
  const snap = t.currentSnapshot()!;
  assert.equal(snap.summary.operation, 'overwrite');
  assert.equal(snap.summary['added-equality-deletes'], '3');
  assert.equal(snap.summary['total-delete-files'], '1');
  assert.equal(snap.summary['total-equality-deletes'], '3');
  assert.equal(snap.summary['total-records'], '6', 'records count data rows; deletes are counted apart');
  // a later delta deletes b again: the delete reaches the row added together with the first delete
  await rowDelta(t, [], ['b']);
  assert.deepEqual(await content(t), ['a=alpha:1', 'e=eps:5']);
  assert.equal(t.currentSnapshot()!.summary.operation, 'delete');
  const files = await t.liveFiles();
  assert.equal(files.filter((f) => f.file.content === 2).length, 2);
  assert.ok(files.filter((f) => f.file.content === 2).every((f) => f.file.equalityIds?.[0] === ID.id));
});

test('row delta: an id deleted and re-added in a later delta reads once, with the later values', async () => {
  const t = await fresh('b');
  await t.append([rows([['a', 'one', 1]])]);
  await rowDelta(t, [], ['a']);
  await rowDelta(t, [['a', 'two', 2]], []);
  await rowDelta(t, [['a', 'three', 3]], ['a']);
  assert.deepEqual(await content(t), ['a=three:3']);
});

test('rewrite: data and delete files merged at the read snapshot keep a row delta committed meanwhile', async () => {
  const t = await fresh('c');
  await t.append([rows([['a', 'a', 1], ['b', 'b', 1], ['c', 'c', 1]])]);
  await rowDelta(t, [['b', 'b', 2]], ['b']);
  // maintenance reads the snapshot now …
  const read = t.currentSnapshot()!;
  const live = await t.liveFiles();
  const merged = await t.scan().toArray();
  // … while a delta changes c and a is deleted
  await rowDelta(t, [['c', 'c', 9]], ['c', 'a']);
  // then commits its rewrite (no delete file left: every delete was applied to what it read)
  const out = await t.writeDataFiles([rows(merged.map((r) => [r.id as string, r.name as string, r.n as number]))]);
  await t.commit(t.rewriteUpdate(live.map((f) => f.file.filePath), out, [], { dataSequenceNumber: read.sequenceNumber }));
  assert.deepEqual(await content(t), ['b=b:2', 'c=c:9']);
  const after = await t.liveFiles();
  assert.equal(after.filter((f) => f.file.content === 2).length, 1, 'only the concurrent delta’s delete file stays');
  assert.equal(t.currentSnapshot()!.summary['removed-delete-files'], '1');
  // a rewrite of files no longer live is refused
  await assert.rejects(t.commit(t.rewriteUpdate(live.map((f) => f.file.filePath), out, [], { dataSequenceNumber: read.sequenceNumber })), /no longer live/);
});

test('rewrite: merged delete files keep the read sequence number, so they reach only older rows', async () => {
  const t = await fresh('d');
  await t.append([rows([['a', 'base', 1], ['b', 'base', 1], ['c', 'base', 1]])]);
  const base = await t.liveFiles();
  await rowDelta(t, [['a', 'd1', 2]], ['a']);
  await rowDelta(t, [['b', 'd2', 2]], ['b']);
  const read = t.currentSnapshot()!;
  const live = (await t.liveFiles()).filter((f) => !base.some((b) => b.file.filePath === f.file.filePath));
  // minor maintenance: the two deltas' data files and both delete files become one of each
  const out = await t.writeDataFiles([rows([['a', 'd1', 2], ['b', 'd2', 2]])]);
  const del = await t.writeEqualityDeletes([ID.id], [ids(['a', 'b'])]);
  await t.commit(t.rewriteUpdate(live.map((f) => f.file.filePath), out, [del!], { dataSequenceNumber: read.sequenceNumber }));
  assert.deepEqual(await content(t), ['a=d1:2', 'b=d2:2', 'c=base:1']);
  const files = await t.liveFiles();
  assert.equal(files.length, 3, 'base, merged data, merged deletes');
  // a later delta's delete still reaches the merged rows
  await rowDelta(t, [], ['a']);
  assert.deepEqual(await content(t), ['b=d2:2', 'c=base:1']);
});

test('independent reader: Python avro + DuckDB read the deltas and rewrites with the same rows as Mimir', { skip: noIndependentReader }, async () => {
  const t = await fresh('e');
  const n = 3000;
  const base: [string, string, number][] = [];
  for (let i = 0; i < n; i++) base.push([`id${String(i).padStart(5, '0')}`, `name${i % 97}`, i]);
  await t.append([rows(base.slice(0, 2000))]);
  await t.append([rows(base.slice(2000))]);
  await rowDelta(t, base.filter((_r, i) => i % 7 === 0).map((r) => [r[0], `${r[1]}'`, r[2] + 1]), base.filter((_r, i) => i % 7 === 0 || i % 11 === 0).map((r) => r[0]));
  await rowDelta(t, [], base.filter((_r, i) => i % 13 === 0).map((r) => r[0]));
  const check = async (): Promise<void> => {
    const mine = (await t.refresh().then((x) => x.scan().toArray())).map((r) => `${r.id as string}|${r.name as string}|${r.n as number}`).sort();
    const theirs = (await readIndependently(t.metadataLocation, ['id', 'name', 'n'])).map((r) => `${r.id as string}|${r.name as string}|${r.n as number}`).sort();
    assert.equal(theirs.length, mine.length);
    assert.deepEqual(theirs, mine);
  };
  await check();
  const plan = planIndependently(t.metadataLocation);
  assert.equal(plan.filter((f) => f.content === 2).length, 2);
  assert.ok(plan.filter((f) => f.content === 2).every((f) => f.eq.join() === 'id'));
  // a rewrite at the read snapshot, with deletes merged into the data
  const read = t.currentSnapshot()!;
  const live = await t.liveFiles();
  const merged = await t.scan().toArray();
  const out = await t.writeDataFiles([rows(merged.map((r) => [r.id as string, r.name as string, r.n as number] as [string, string, number]))]);
  await t.commit(t.rewriteUpdate(live.map((f) => f.file.filePath), out, [], { dataSequenceNumber: read.sequenceNumber }));
  await rowDelta(t, [['id00001', 'late', 1]], ['id00001', 'id00002']);
  await check();
  assert.deepEqual(
    planIndependently(t.metadataLocation).map((f) => f.content).sort(),
    [0, 0, 2],
  );
  const values: Value[] = (await t.scan({ filter: { op: 'eq', col: 'id', value: 'id00001' } }).toArray()).map((r) => r.name ?? null);
  assert.deepEqual(values, ['late']);
});

test('manifests: past commit.manifest.min-count-to-merge they are merged; a manifest left with no live file is dropped', async () => {
  const t = await fresh('f');
  await t.setProperties({ 'commit.manifest.min-count-to-merge': '4' });
  const expected: string[] = [];
  for (let i = 0; i < 12; i++) {
    const id = `k${String(i).padStart(2, '0')}`;
    // each commit: one new row, and the previous row changed (data + delete manifests)
    const prev = i > 0 ? [`k${String(i - 1).padStart(2, '0')}`] : [];
    await rowDelta(t, [[id, 'v1', i], ...prev.map((p): [string, string, number] => [p, 'v2', i])], prev);
    const list = await (await import('../../src/lake/scan/plan.ts')).readManifestList(t.io, t.currentSnapshot()!);
    assert.ok(list.length <= 4 + 2 + 2, `commit ${i}: ${list.length} manifests`);
  }
  for (let i = 0; i < 12; i++) expected.push(`k${String(i).padStart(2, '0')}=${i === 11 ? 'v1' : 'v2'}:${i === 11 ? 11 : i + 1}`);
  assert.deepEqual(await content(t), expected.sort());
  // a rewrite of everything: the manifests that held the old files keep only deletions and go away next commit
  const live = await t.liveFiles();
  const rows = await t.scan().toArray();
  const out = await t.writeDataFiles([{ fields: schema.fields, numRows: rows.length, columns: schema.fields.map((f) => rows.map((r) => r[f.name] ?? null)) }]);
  await t.commit(t.rewriteUpdate(live.map((f) => f.file.filePath), out, [], { dataSequenceNumber: t.currentSnapshot()!.sequenceNumber }));
  await rowDelta(t, [['zz', 'last', 0]], []);
  const list = await (await import('../../src/lake/scan/plan.ts')).readManifestList(t.io, t.currentSnapshot()!);
  assert.ok(list.every((m) => m.addedFilesCount + m.existingFilesCount > 0), 'no manifest without a live file');
  assert.equal(list.length, 2, 'the rewrite\'s manifest and the last append\'s');
  assert.deepEqual(await content(t), [...expected, 'zz=last:0'].sort());
  if (!noIndependentReader) {
    const theirs = (await readIndependently(t.metadataLocation, ['id', 'name', 'n'])).map((r) => `${r.id as string}=${r.name as string}:${r.n as number}`).sort();
    assert.deepEqual(theirs, await content(t), 'DuckDB + Python avro read the merged manifests alike');
  }
});
