// Reading the Parquet data and delete files that Spark, Java, Trino and
// PyIceberg wrote (../shared/fixtures/iceberg): columns by field id, values in
// our Value representation, row-group statistics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures, needsFixtures } from '../helpers.ts';
import { LocalFileIO } from '../../src/lake/io/fileio.ts';
import { ParquetDataFile } from '../../src/lake/parquet/read.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import type { NestedField, PrimitiveType, Value } from '../../src/lake/spec/types.ts';

const root = icebergFixtures ?? '/nonexistent';
const io = new LocalFileIO();

type Obj = { [k: string]: Json };

function primitive(s: string): PrimitiveType {
  const dec = /^decimal\((\d+),\s*(\d+)\)$/.exec(s);
  if (dec) return { type: 'decimal', precision: Number(dec[1]), scale: Number(dec[2]) };
  const fx = /^fixed\[(\d+)\]$/.exec(s);
  if (fx) return { type: 'fixed', length: Number(fx[1]) };
  return { type: s } as PrimitiveType;
}

/** NestedFields of a schema of a metadata file (primitive columns only: all the fixtures have). */
function schemaFields(metadataFile: string, schemaId?: number): NestedField[] {
  const m = parseJson(readFileSync(path.join(root, metadataFile), 'utf8')) as Obj;
  const id = schemaId ?? (m['current-schema-id'] as number);
  const s = (m.schemas as Obj[]).find((x) => x['schema-id'] === id)!;
  return (s.fields as Obj[]).map((f) => ({
    id: f.id as number,
    name: f.name as string,
    required: f.required as boolean,
    type: primitive(f.type as string),
  }));
}

const POS_DELETE_FIELDS: NestedField[] = [
  { id: 2147483546, name: 'file_path', required: true, type: { type: 'string' } },
  { id: 2147483545, name: 'pos', required: true, type: { type: 'long' } },
];

/** Every row of a file as objects keyed by field name. */
async function readRows(file: string, fields: NestedField[]): Promise<{ [name: string]: Value }[]> {
  const f = await ParquetDataFile.open(io, path.join(root, file));
  try {
    const rows: { [name: string]: Value }[] = [];
    for (let g = 0; g < f.rowGroupCount; g++) {
      const b = await f.readRowGroup(g, fields);
      assert.equal(b.columns.length, fields.length);
      for (let i = 0; i < b.numRows; i++) {
        const row: { [name: string]: Value } = {};
        fields.forEach((fd, j) => (row[fd.name] = b.columns[j]![i]!));
        rows.push(row);
      }
    }
    assert.equal(rows.length, f.numRows);
    return rows;
  } finally {
    await f.close();
  }
}

const SPARK = 'icebird_spark_bunnies/bunnies';
const JAVA = 'icebird_java_bunnies/bunnies';
const RENAME = 'icebird_spark_rename_column/rename_column';

test('parquet fixtures: spark rename_column reads 4 rows by field id (id REQUIRED in file, column 3 still named "date")', { skip: needsFixtures }, async () => {
  const fields = schemaFields(`${RENAME}/metadata/v3.metadata.json`);
  assert.equal(fields[2]!.name, 'event_date');
  const files = [
    'data/id_bucket=0/date=2022-01-01/00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00001.parquet',
    'data/id_bucket=3/date=null/00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00002.parquet',
    'data/id_bucket=2/date=2022-01-02/00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00003.parquet',
  ];
  const rows = [];
  for (const f of files) rows.push(...(await readRows(`${RENAME}/${f}`, fields)));
  rows.sort((a, b) => (a.id as number) - (b.id as number));
  assert.deepEqual(rows, [
    { id: 1, name: 'Flopsy 🐇', event_date: 18993, price: '9.99', active: true },
    { id: 2, name: 'Mopsy–Naïve', event_date: 18993, price: '-5.00', active: false },
    { id: 3, name: 'Cottontail', event_date: null, price: '0.00', active: true },
    { id: 4, name: 'Thumper', event_date: 18994, price: '99999999.99', active: false },
  ]);
});

test('parquet fixtures: rename_column row-group stats convert to table types (decimal strings, dates)', { skip: needsFixtures }, async () => {
  const fields = schemaFields(`${RENAME}/metadata/v3.metadata.json`);
  const f = await ParquetDataFile.open(io, path.join(root, RENAME, 'data/id_bucket=0/date=2022-01-01/00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00001.parquet'));
  const st = f.rowGroupStats(0, fields);
  await f.close();
  assert.equal(st.numRows, 2);
  assert.deepEqual(st.columns.get(1), { nullCount: 0n, min: 1, max: 2 });
  assert.deepEqual(st.columns.get(2), { nullCount: 0n, min: 'Flopsy 🐇', max: 'Mopsy–Naïve' });
  assert.deepEqual(st.columns.get(3), { nullCount: 0n, min: 18993, max: 18993 });
  assert.deepEqual(st.columns.get(4), { nullCount: 0n, min: '-5.00', max: '9.99' });
  assert.deepEqual(st.columns.get(5), { nullCount: 0n, min: false, max: true });
});

test('parquet fixtures: spark bunnies, sanitized column names (Breed_x20Name) found by field id', { skip: needsFixtures }, async () => {
  const fields = schemaFields(`${SPARK}/metadata/v5.metadata.json`);
  const first = await readRows(`${SPARK}/data/00000-1-9acc37f2-90ae-42f5-915c-a21c3cb99690-00001.parquet`, fields);
  assert.equal(first.length, 21);
  assert.equal(first[0]!['Breed Name'], 'Holland Lop');
  // written with schema 0: field 9 is absent and reads as null
  assert.ok(first.every((r) => r.breed_name_length === null));
  const second = await readRows(`${SPARK}/data/00000-1-6cd7611f-0ceb-4cf3-8b8e-8c856356df3e-00001.parquet`, fields);
  assert.deepEqual(
    second.map((r) => r['Breed Name']),
    ['Netherland Dwarf', 'Flemish Giant', 'English Lop', 'Rex', 'Mini Lop', 'Lionhead', 'American Fuzzy Lop', 'Dutch', 'Polish', 'Californian',
      'French Angora', 'Mini Rex', 'Satin Angora', 'Silver Fox', 'Thrianta', 'Himalayan', 'English Angora', 'Belgian Hare', 'Harlequin', 'New Zealand'],
  );
  for (const r of second) {
    assert.equal(r.breed_name_length, (r['Breed Name'] as string).length);
    assert.equal(typeof r.Lifespan, 'bigint');
    assert.equal(typeof r['Average Weight'], 'number');
  }
});

test('parquet fixtures: the missing-field callback fills absent columns for every row', { skip: needsFixtures }, async () => {
  const fields = schemaFields(`${SPARK}/metadata/v5.metadata.json`);
  const f = await ParquetDataFile.open(io, path.join(root, SPARK, 'data/00000-1-9acc37f2-90ae-42f5-915c-a21c3cb99690-00001.parquet'));
  assert.equal(f.hasField(9), false);
  assert.equal(f.hasField(1), true);
  const b = await f.readRowGroup(0, [fields[8]!, fields[0]!], (fd) => (fd.id === 9 ? 42 : null));
  await f.close();
  assert.deepEqual(b.columns[0], new Array(21).fill(42));
  assert.equal(b.columns[1]![0], 'Holland Lop');
});

test('parquet fixtures: spark position delete file (file_path, pos by reserved ids)', { skip: needsFixtures }, async () => {
  const rows = await readRows(`${SPARK}/data/00000-3-6fdcdaeb-591f-4ae0-a39a-75c7fba53907-00001-deletes.parquet`, POS_DELETE_FIELDS);
  assert.deepEqual(rows, [{ file_path: 's3a://hyperparam-iceberg/spark/bunnies/data/00000-1-9acc37f2-90ae-42f5-915c-a21c3cb99690-00001.parquet', pos: 0n }]);
});

test('parquet fixtures: java bunnies data, position delete and equality delete files', { skip: needsFixtures }, async () => {
  const fields = schemaFields(`${JAVA}/metadata/v5.metadata.json`);
  const initial = await readRows(`${JAVA}/data/bunnies-initial.parquet`, fields);
  assert.equal(initial.length, 21);
  assert.equal(initial[0]!['Breed Name'], 'Holland Lop');
  assert.ok(initial.every((r) => r.__happy__ === null));

  const pos = await readRows(`${JAVA}/data/bunnies-pos-deletes.parquet`, POS_DELETE_FIELDS);
  assert.deepEqual(
    pos.map((r) => r.pos),
    [2n, 3n, 4n, 5n, 6n, 11n],
  );
  assert.ok(pos.every((r) => r.file_path === 's3a://hyperparam-iceberg/java/bunnies/data/bunnies-initial.parquet'));
  // the README's expected scan order, applied by hand: positions removed, the old New Zealand row removed
  const deleted = new Set(pos.map((r) => Number(r.pos)));
  const kept = initial.filter((r, i) => !deleted.has(i) && r['Breed Name'] !== 'New Zealand').map((r) => r['Breed Name']);
  assert.deepEqual(kept, ['Holland Lop', 'Netherland Dwarf', 'American Fuzzy Lop', 'Dutch', 'Polish', 'Californian', 'Mini Rex', 'Satin Angora',
    'Silver Fox', 'Thrianta', 'Himalayan', 'English Angora', 'Belgian Hare', 'Harlequin']);

  const eq = await readRows(`${JAVA}/data/bunnies-eq-delete-new-zealand.parquet`, fields);
  assert.deepEqual(eq, [
    {
      'Breed Name': 'New Zealand', 'Average Weight': null, 'Fur Length': null, Lifespan: null, 'Origin Country': null,
      'Ear Type': null, Temperament: null, 'Popularity Rank': null, __happy__: null,
    },
  ]);
  const nzInitial = initial.filter((r) => r['Breed Name'] === 'New Zealand');
  assert.equal(nzInitial.length, 1);

  const updated = await readRows(`${JAVA}/data/bunnies-updated-new-zealand.parquet`, fields);
  assert.deepEqual(updated, [
    {
      'Breed Name': 'New Zealand', 'Average Weight': 4, 'Fur Length': 2.7, Lifespan: 8n, 'Origin Country': 'New Zealand',
      'Ear Type': 'Erect', Temperament: 'Affectionate', 'Popularity Rank': 0n, __happy__: true,
    },
  ]);
});

test('parquet fixtures: athena (Trino) file', { skip: needsFixtures }, async () => {
  const fields = schemaFields('icebird_athena_example/example/metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json');
  const rows = await readRows('icebird_athena_example/example/data/sNoYhg/20250401_023623_00108_u4nkm-ee75816e-a3dd-4356-97b3-1c6d0128a41f.parquet', fields);
  assert.deepEqual(rows, [
    { id: 1, name: 'Alice' },
    { id: 2, name: 'Bob' },
  ]);
});

const PY = 'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults';

test('parquet fixtures: PyIceberg file with all 15 types (time adjusted to UTC, uuid as plain FIXED(16))', { skip: needsFixtures }, async () => {
  const fields = schemaFields(`${PY}/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json`);
  assert.equal(fields.length, 15);
  const rows = await readRows(`${PY}/data/00000-0-f1823874-113e-405c-b412-f75145620823.parquet`, fields);
  assert.deepEqual(rows, [
    {
      col1: 'test',
      col_boolean: false,
      col_integer: 453243,
      col_long: 328725092345834n,
      col_float: Math.fround(23.34342),
      col_double: 23.343424523423433,
      col_decimal: '3423434.23',
      col_date: -715447, // 0011-03-05
      col_time: 43605000000n, // 12:06:45
      col_timestamp: -61814577195000000n, // 0011-03-05T12:06:45
      col_timestamptz: 1684161045000000n, // 2023-05-15T14:30:45Z
      col_string: 'World',
      col_uuid: '020d4fc7-acd6-45ac-b216-7873f4038e1f',
      col_fixed: new Uint8Array([0x80, 0, 0x80, 0, 0x80]),
      col_binary: new Uint8Array([0x80, 0, 0x80]),
    },
  ]);
  const first = await readRows(`${PY}/data/00000-0-0bb8c58e-4fbc-483f-af6d-0e2f896179a2.parquet`, fields);
  assert.deepEqual(first.map((r) => r.col1), ['click', 'purchase']);
  assert.ok(first.every((r) => r.col_uuid === null && r.col_decimal === null));

  // binary statistics stay bytes (not a lossy string)
  const f = await ParquetDataFile.open(io, path.join(root, PY, 'data/00000-0-f1823874-113e-405c-b412-f75145620823.parquet'));
  const st = f.rowGroupStats(0, fields);
  await f.close();
  assert.deepEqual(st.columns.get(15), { nullCount: 0n, min: new Uint8Array([0x80, 0, 0x80]), max: new Uint8Array([0x80, 0, 0x80]) });
  assert.deepEqual(st.columns.get(7), { nullCount: 0n, min: '3423434.23', max: '3423434.23' });
  assert.deepEqual(st.columns.get(13)?.min, '020d4fc7-acd6-45ac-b216-7873f4038e1f');
});

test('parquet fixtures: reading a column with an incompatible table type is refused, naming the file', { skip: needsFixtures }, async () => {
  const file = path.join(root, RENAME, 'data/id_bucket=0/date=2022-01-01/00000-20-b65939d1-96e1-4d30-a733-aa5264a479aa-00001.parquet');
  const f = await ParquetDataFile.open(io, file);
  await assert.rejects(f.readRowGroup(0, [{ id: 2, name: 'name', required: false, type: { type: 'long' } }]), (e: Error) => {
    assert.match(e.message, /00001\.parquet/);
    assert.match(e.message, /field id 2/);
    return true;
  });
  await f.close();
});
