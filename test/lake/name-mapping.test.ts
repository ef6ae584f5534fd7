// Name mapping on real Parquet files written by DuckDB without field ids (or
// with some), added to a Mimir table as `add_files` does: columns found by
// name and alias (nested struct fields too), a column's own field id wins
// over the mapping, manifest metrics computed under another mapping never
// hide rows, and a file without ids in a table without a mapping is refused.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import * as path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Lake } from '../../src/lake/lake.ts';
import type { DataFile, Schema } from '../../src/lake/spec/types.ts';
import { NAME_MAPPING_PROPERTY, parseNameMapping } from '../../src/lake/spec/name-mapping.ts';
import { toBinary } from '../../src/lake/spec/values.ts';
import { eq, isNull, notNull } from '../../src/lake/expr/expr.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-name-mapping-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: false, type: { type: 'long' } },
    { id: 2, name: 'name', required: false, type: { type: 'string' } },
    {
      id: 3,
      name: 's',
      required: false,
      type: { type: 'struct', fields: [{ id: 4, name: 'x', required: false, type: { type: 'int' } }, { id: 5, name: 'y', required: false, type: { type: 'string' } }] },
    },
  ],
};

const MAPPING = [
  { 'field-id': 1, names: ['id'] },
  { 'field-id': 2, names: ['name', 'nm'] },
  { 'field-id': 3, names: ['s'], fields: [{ 'field-id': 4, names: ['x'] }, { 'field-id': 5, names: ['y', 'why'] }] },
];

async function duck(sql: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(sql);
  c.closeSync();
}

/** A DataFile as add_files records it: path, size, count, and the given string bounds on field 2. */
function added(file: string, rows: number, nameBounds?: [string, string]): { file: DataFile; specId: number } {
  const df: DataFile = {
    content: 0,
    filePath: file,
    fileFormat: 'PARQUET',
    partition: [],
    recordCount: BigInt(rows),
    fileSizeInBytes: BigInt(statSync(file).size),
  };
  if (nameBounds) {
    df.lowerBounds = new Map([[2, toBinary({ type: 'string' }, nameBounds[0])]]);
    df.upperBounds = new Map([[2, toBinary({ type: 'string' }, nameBounds[1])]]);
    df.nullValueCounts = new Map([[2, 0n]]);
  }
  return { file: df, specId: 0 };
}

test('name mapping: parse keeps aliases and nested fields; malformed mappings name the property', () => {
  const m = parseNameMapping(JSON.stringify(MAPPING), 'p');
  assert.deepEqual(m[1], { names: ['name', 'nm'], fieldId: 2, fields: [] });
  assert.deepEqual(m[2]!.fields[1], { names: ['y', 'why'], fieldId: 5, fields: [] });
  assert.deepEqual(parseNameMapping('[{"names":["dropped"]}]', 'p'), [{ names: ['dropped'], fields: [] }], 'an entry without field-id maps nothing');
  assert.throws(() => parseNameMapping('{"names":[]}', `table property ${NAME_MAPPING_PROPERTY}`), /schema\.name-mapping\.default: expected a list/);
  assert.throws(() => parseNameMapping('[{"names":"a","field-id":1}]', 'p'), /p\[0\]: expected "names" to be a list of strings/);
});

test('name mapping: files without ids (aliases, nested) and with partial ids read by the mapping; own ids win; metrics never hide rows', async () => {
  const a = path.join(work.dir, 'a-no-ids.parquet');
  const b = path.join(work.dir, 'b-partial-ids.parquet');
  // a: no field ids at all; `nm` is an alias of name, `why` of s.y
  await duck(`COPY (SELECT * FROM (VALUES (1::BIGINT, 'alice', {'x': 10, 'why': 'p'}), (2::BIGINT, 'bob', {'x': 20, 'why': 'q'})) t(id, nm, s))
    TO '${a}' (FORMAT PARQUET)`);
  // b: id and legacy carry ids 1 and 2 themselves; name (mapped to 2) has none, so legacy is field 2
  await duck(`COPY (SELECT * FROM (VALUES (3::BIGINT, 'b1', 'ignored'), (4::BIGINT, 'b2', 'ignored')) t(id, legacy, name))
    TO '${b}' (FORMAT PARQUET, FIELD_IDS {id: 1, legacy: 2})`);
  const lake = Lake.open(path.join(work.dir, 'lake'));
  try {
    const t = await lake.createTable({ namespace: ['m'], name: 't' }, schema, { properties: { [NAME_MAPPING_PROPERTY]: JSON.stringify(MAPPING) } });
    // file a's metrics were computed under an older mapping (field 2 was another column): they claim only 'zzz'
    await t.appendFiles([added(a, 2, ['zzz', 'zzz']), added(b, 2, ['b1', 'b2'])]);
    const rows = await t.scan().toArray();
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.equal(rows.length, 4);
    assert.deepEqual(byId.get(1n), { id: 1n, name: 'alice', s: { x: 10, y: 'p' } });
    assert.deepEqual(byId.get(2n), { id: 2n, name: 'bob', s: { x: 20, y: 'q' } });
    assert.deepEqual(byId.get(3n), { id: 3n, name: 'b1', s: null }, 'the own id 2 (legacy) wins over the mapped name');

    const alice = t.scan({ filter: eq('name', 'alice') });
    assert.deepEqual((await alice.toArray()).map((r) => r.id), [1n], 'metrics excluding file a do not hide its row: a carries no ids');
    assert.equal(alice.metrics.filesMetricsSkipped, 1, 'file b carries field 2 itself: its metrics hold, it is skipped after its footer');
    assert.deepEqual((await t.scan({ filter: eq('name', 'b2') }).toArray()).map((r) => r.id), [4n]);
    assert.equal(await t.scan({ filter: isNull('name') }).count(), 0);
    assert.equal(await t.scan({ filter: notNull('id') }).count(), 4);
  } finally {
    lake.close();
  }
});

test('name mapping: a parent with its own id maps its children by that id; an empty mapping reads nulls alike filtered and unfiltered', async () => {
  const c = path.join(work.dir, 'c-parent-id.parquet');
  await duck(`COPY (SELECT 5::BIGINT AS id, {'x': 50, 'y': 'r'} AS renamed_s) TO '${c}' (FORMAT PARQUET, FIELD_IDS {renamed_s: {__duckdb_field_id: 3}})`);
  const lake = Lake.open(path.join(work.dir, 'lake2'));
  try {
    const t = await lake.createTable({ namespace: ['m'], name: 'c' }, schema, { properties: { [NAME_MAPPING_PROPERTY]: JSON.stringify(MAPPING) } });
    await t.appendFiles([added(c, 1)]);
    assert.deepEqual(await t.scan().toArray(), [{ id: 5n, name: null, s: { x: 50, y: 'r' } }]);
    await t.setProperties({ [NAME_MAPPING_PROPERTY]: '[]' });
    assert.deepEqual(await t.scan().toArray(), [{ id: null, name: null, s: { x: null, y: null } }], 'only s keeps its own id; its children are unmapped');
    assert.equal(await t.scan({ filter: isNull('id') }).count(), 1);
    assert.equal(await t.scan({ filter: notNull('id') }).count(), 0);
  } finally {
    lake.close();
  }
});

test('name mapping: a file without any field id in a table without a mapping is refused, naming the file and the property', async () => {
  const d = path.join(work.dir, 'd-no-ids.parquet');
  await duck(`COPY (SELECT 1::BIGINT AS id, 'x' AS name) TO '${d}' (FORMAT PARQUET)`);
  const lake = Lake.open(path.join(work.dir, 'lake3'));
  try {
    const t = await lake.createTable({ namespace: ['m'], name: 'd' }, schema);
    await t.appendFiles([added(d, 1)]);
    await assert.rejects(t.scan().toArray(), (e: Error) => {
      assert.match(e.message, /d-no-ids\.parquet: its columns carry no Parquet field ids and the table has no schema\.name-mapping\.default/);
      assert.match(e.message, /columns id, name\) — not read/);
      return true;
    });
  } finally {
    lake.close();
  }
});

test('name mapping: a position delete file written without field ids applies by its fixed column names (file_path, pos)', async () => {
  const lake = Lake.open(path.join(work.dir, 'lake4'));
  try {
    const t = await lake.createTable({ namespace: ['m'], name: 'p' }, schema);
    await t.append([{ fields: schema.fields, numRows: 3, columns: [[1n, 2n, 3n], ['a', 'b', 'c'], [null, null, null]] }]);
    const [data] = await t.dataFiles();
    const del = path.join(work.dir, 'pos-deletes-no-ids.parquet');
    await duck(`COPY (SELECT '${data!.file.filePath}' AS file_path, 1::BIGINT AS pos) TO '${del}' (FORMAT PARQUET)`);
    const df: DataFile = { content: 1, filePath: del, fileFormat: 'PARQUET', partition: [], recordCount: 1n, fileSizeInBytes: BigInt(statSync(del).size) };
    await t.commit(t.rowDeltaUpdate([], [{ file: df, specId: 0 }]));
    assert.deepEqual((await t.scan({ columns: ['id'] }).toArray()).map((r) => r.id), [1n, 3n]);
  } finally {
    lake.close();
  }
});
