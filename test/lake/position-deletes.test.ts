// Position delete files Mimir writes (file_path, pos with the reserved field
// ids, sorted by path then position, content 1 in the manifest): read back by
// Mimir's scan and by an independent reader (Python avro, DuckDB); scans give
// row positions on request; a row delta whose named files a rewrite replaced
// meanwhile, and a rewrite that would drop a later position delete's file,
// are refused with nothing committed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, Schema } from '../../src/lake/spec/types.ts';
import type { Table } from '../../src/lake/table/table.ts';
import { DeletedFilesGone } from '../../src/lake/table/snapshot.ts';
import { scratch } from '../helpers.ts';
import { noIndependentReader, planIndependently, readIndependently } from '../independent-reader.ts';

const work = scratch('mimir-pos-deletes-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'string' } },
    { id: 2, name: 'n', required: false, type: { type: 'int' } },
  ],
};

function rows(list: [string, number][]): Batch {
  return { fields: schema.fields, numRows: list.length, columns: [list.map((r) => r[0]), list.map((r) => r[1])] };
}

function fresh(name: string): Promise<Table> {
  return Lake.open(path.join(work.dir, name)).createTable({ namespace: ['s'], name: 't' }, schema);
}

async function content(t: Table): Promise<string[]> {
  return (await (await t.refresh()).scan().toArray()).map((r) => `${r.id as string}:${r.n as number}`).sort();
}

/** (file, position) of the live rows with these ids, through a scan asked for positions. */
async function positionsOf(t: Table, ids: string[]): Promise<{ id: string; path: string; pos: bigint }[]> {
  const out: { id: string; path: string; pos: bigint }[] = [];
  for await (const b of t.scan({ filter: { op: 'in', col: 'id', values: ids }, columns: ['id'], positions: true }).batches()) {
    for (let i = 0; i < b.numRows; i++) out.push({ id: b.columns[0]![i] as string, path: b.source!.file, pos: BigInt(b.positions![i]!) });
  }
  return out.sort((x, y) => (x.id < y.id ? -1 : 1));
}

test('position deletes: written sorted with the reserved field ids, applied by Mimir and by DuckDB, positions from a scan', { skip: noIndependentReader }, async () => {
  const t = await fresh('a');
  await t.append([rows([['a', 1], ['b', 2], ['c', 3], ['d', 4]])]);
  await t.append([rows([['e', 5], ['f', 6]])]);
  const at = await positionsOf(t, ['b', 'd', 'f']);
  // b and d are rows 1 and 3 of the first file, f row 1 of the second
  assert.deepEqual(at.map((p) => `${p.id}@${p.pos}`), ['b@1', 'd@3', 'f@1']);
  assert.ok(at[0]!.path === at[1]!.path && at[1]!.path !== at[2]!.path);
  // given out of order: the file holds them by path, then position
  const d = await t.writePositionDeletes([...at].reverse().map(({ path, pos }) => ({ path, pos })));
  assert.ok(d);
  await t.commit(t.rowDeltaUpdate(await t.writeDataFiles([rows([['b', 20]])]), [d], undefined, new Set(at.map((p) => p.path))));
  assert.deepEqual(await content(t), ['a:1', 'b:20', 'c:3', 'e:5']);
  // a position already deleted is not given again by a scan
  assert.deepEqual((await positionsOf(t, ['b'])).length, 1);
  const plan = planIndependently(t.metadataLocation);
  assert.deepEqual(plan.map((f) => f.content).sort(), [0, 0, 0, 1]);
  const theirs = (await readIndependently(t.metadataLocation, ['id', 'n'])).map((r) => `${r.id as string}:${r.n as number}`).sort();
  assert.deepEqual(theirs, await content(t));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const del = plan.find((f) => f.content === 1)!.path;
    const r = (await conn.runAndReadAll(`SELECT file_path, pos FROM read_parquet('${del}')`)).getRowObjectsJson() as { file_path: string; pos: string }[];
    const sorted = [...r].sort((x, y) => (x.file_path < y.file_path ? -1 : x.file_path > y.file_path ? 1 : Number(x.pos) - Number(y.pos)));
    assert.deepEqual(r, sorted, 'sorted by file_path, then pos');
    const ids = (await conn.runAndReadAll(`SELECT name, CAST(field_id AS INTEGER) AS field_id FROM parquet_schema('${del}') WHERE field_id IS NOT NULL ORDER BY name`)).getRowObjectsJson();
    assert.deepEqual(ids, [{ name: 'file_path', field_id: 2147483546 }, { name: 'pos', field_id: 2147483545 }]);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
});

test('position deletes: a row delta naming a file a rewrite replaced meanwhile is refused; so is a rewrite of a file a later position delete names', async () => {
  const t = await fresh('b');
  await t.append([rows([['a', 1], ['b', 2]])]);
  const readSeq = t.currentSnapshot()!.sequenceNumber;
  const [file] = await t.dataFiles();
  const at = await positionsOf(t, ['a']);
  const d = (await t.writePositionDeletes(at))!;
  // another writer rewrites the file (maintenance)
  const other = await Lake.open(path.join(work.dir, 'b')).loadTable({ namespace: ['s'], name: 't' });
  await other.commit(other.rewriteUpdate([file!.file.filePath], await other.writeDataFiles([rows([['a', 1], ['b', 2]])]), [], { dataSequenceNumber: readSeq }));
  const gen = (await t.refresh()).metadataLocation;
  await assert.rejects(t.commit(t.rowDeltaUpdate([], [d], undefined, new Set(at.map((p) => p.path)))), (e: unknown) => e instanceof DeletedFilesGone && /no longer live/.test(e.message));
  assert.equal((await t.refresh()).metadataLocation, gen, 'nothing committed');
  assert.deepEqual(await content(t), ['a:1', 'b:2']);

  // the other order: the position delete lands first, then a rewrite planned before it
  const t2 = await fresh('c');
  await t2.append([rows([['a', 1], ['b', 2]])]);
  const seq2 = t2.currentSnapshot()!.sequenceNumber;
  const [f2] = await t2.dataFiles();
  const at2 = await positionsOf(t2, ['b']);
  await t2.commit(t2.rowDeltaUpdate([], [(await t2.writePositionDeletes(at2))!], undefined, new Set(at2.map((p) => p.path))));
  const rewrite = t2.rewriteUpdate([f2!.file.filePath], await t2.writeDataFiles([rows([['a', 1], ['b', 2]])]), [], { dataSequenceNumber: seq2 });
  await assert.rejects(t2.commit(rewrite), (e: unknown) => e instanceof DeletedFilesGone && /may name/.test(e.message));
  assert.deepEqual(await content(t2), ['a:1']);
});
