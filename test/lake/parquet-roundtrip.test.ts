// Writing Iceberg Parquet data files and reading them back: every primitive
// type with nulls, nested types, metrics (counts, bounds, truncation, NaN),
// codecs, refusals, corrupt footers, and streaming row group by row group.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { LocalFileIO } from '../../src/lake/io/fileio.ts';
import { ParquetDataFile, readStats } from '../../src/lake/parquet/read.ts';
import { encodeDataFile, type DataFileWriteOptions } from '../../src/lake/parquet/write.ts';
import { fromBinary, toBinary } from '../../src/lake/spec/values.ts';
import type { Batch, NestedField, PrimitiveType, Schema, Value } from '../../src/lake/spec/types.ts';

const tmp = scratch('mimir-parquet-');
after(() => tmp.cleanup());
const io = new LocalFileIO();
let n = 0;

async function writeFile(schema: Schema, batches: Batch[], opts?: DataFileWriteOptions) {
  const { bytes, metrics } = await encodeDataFile(schema, batches, opts);
  const file = path.join(tmp.dir, `f${n++}.parquet`);
  writeFileSync(file, bytes);
  return { file, bytes, metrics };
}

async function readAll(file: string, fields: NestedField[]): Promise<Value[][]> {
  const f = await ParquetDataFile.open(io, file);
  const cols: Value[][] = fields.map(() => []);
  for (let g = 0; g < f.rowGroupCount; g++) {
    const b = await f.readRowGroup(g, fields);
    b.columns.forEach((c, j) => cols[j]!.push(...c));
  }
  await f.close();
  return cols;
}

const field = (id: number, name: string, type: PrimitiveType, required = false): NestedField => ({ id, name, required, type });

/** Every primitive type, with a null in each optional column. */
const ALL_TYPES: { field: NestedField; values: Value[] }[] = [
  { field: field(1, 'b', { type: 'boolean' }), values: [true, null, false, true] },
  { field: field(2, 'i', { type: 'int' }), values: [5, -2147483648, null, 2147483647] },
  { field: field(3, 'l', { type: 'long' }, true), values: [9007199254740993n, -(2n ** 63n), 0n, 2n ** 63n - 1n] },
  { field: field(4, 'f', { type: 'float' }), values: [1.5, null, -0.25, 3] },
  { field: field(5, 'd', { type: 'double' }), values: [Math.PI, -1e300, null, 0.1] },
  { field: field(6, 'dec9', { type: 'decimal', precision: 9, scale: 2 }), values: ['9.99', '-5.00', null, '9999999.99'] },
  { field: field(7, 'dec18', { type: 'decimal', precision: 18, scale: 4 }), values: ['12345678901234.5678', null, '-0.0001', '0.0000'] },
  { field: field(8, 'dec38', { type: 'decimal', precision: 38, scale: 10 }), values: ['1234567890123456789012345678.0123456789', '-1.0000000000', null, '0.0000000000'] },
  { field: field(9, 'date', { type: 'date' }), values: [18993, -715447, null, 0] },
  { field: field(10, 'time', { type: 'time' }), values: [43605000000n, null, 0n, 86399999999n] },
  { field: field(11, 'ts', { type: 'timestamp' }), values: [1684161045000000n, -61814577195000000n, null, 0n] },
  { field: field(12, 'tstz', { type: 'timestamptz' }), values: [null, 1684161045123456n, -1n, 0n] },
  { field: field(13, 's', { type: 'string' }), values: ['Flopsy 🐇', '', null, 'Mopsy–Naïve'] },
  { field: field(14, 'u', { type: 'uuid' }), values: ['f79c3e09-677c-4bbd-a479-3f349cb785e7', null, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'] },
  { field: field(15, 'fx', { type: 'fixed', length: 3 }), values: [new Uint8Array([1, 2, 3]), null, new Uint8Array([0, 0, 0]), new Uint8Array([255, 255, 255])] },
  { field: field(16, 'bin', { type: 'binary' }), values: [new Uint8Array([0x80, 0, 0x80]), new Uint8Array(0), null, new Uint8Array([1])] },
];
const ALL_SCHEMA: Schema = { schemaId: 0, fields: ALL_TYPES.map((c) => c.field) };
const ALL_BATCH: Batch = { fields: ALL_SCHEMA.fields, numRows: 4, columns: ALL_TYPES.map((c) => c.values) };

test('parquet round trip: every primitive type with nulls reads back equal (each codec)', async () => {
  for (const codec of ['zstd', 'snappy', 'gzip', 'uncompressed'] as const) {
    const { file } = await writeFile(ALL_SCHEMA, [ALL_BATCH], { codec });
    const cols = await readAll(file, ALL_SCHEMA.fields);
    assert.deepEqual(cols, ALL_BATCH.columns, codec);
  }
});

test('parquet round trip: metrics hold counts and bounds that decode to the true min/max', async () => {
  const { metrics, bytes } = await writeFile(ALL_SCHEMA, [ALL_BATCH]);
  assert.equal(metrics.recordCount, 4n);
  assert.deepEqual(metrics.splitOffsets, [4n]);
  let sizes = 0n;
  for (const c of ALL_TYPES) {
    const id = c.field.id;
    const t = c.field.type as PrimitiveType;
    const nulls = c.values.filter((v) => v === null).length;
    assert.equal(metrics.valueCounts.get(id), 4n, `value count ${c.field.name}`);
    assert.equal(metrics.nullValueCounts.get(id), BigInt(nulls), `null count ${c.field.name}`);
    assert.equal(metrics.nanValueCounts.has(id), t.type === 'float' || t.type === 'double');
    assert.ok((metrics.columnSizes.get(id) ?? 0n) > 0n);
    sizes += metrics.columnSizes.get(id)!;
    const present = c.values.filter((v) => v !== null);
    const cmp = (a: Value, b: Value): number => compare(t, a, b);
    const sorted = [...present].sort(cmp);
    assert.deepEqual(fromBinary(t, metrics.lowerBounds.get(id)!), sorted[0], `lower ${c.field.name}`);
    assert.deepEqual(fromBinary(t, metrics.upperBounds.get(id)!), sorted[sorted.length - 1], `upper ${c.field.name}`);
    assert.deepEqual(metrics.lowerBounds.get(id), toBinary(t, sorted[0]!));
  }
  assert.ok(sizes < BigInt(bytes.length));
});

function compare(t: PrimitiveType, a: Value, b: Value): number {
  if (t.type === 'decimal') return Number(Math.sign(Number(a) - Number(b)));
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a! < b! ? -1 : a! > b! ? 1 : 0;
}

test('parquet metrics: strings truncate to 16 code points (upper bound incremented), binary to 16 bytes', async () => {
  const fields = [field(1, 's', { type: 'string' }), field(2, 'b', { type: 'binary' }), field(3, 'top', { type: 'string' })];
  const long = 'abcdefghijklmnopqrstuvwxyz';
  const emoji = '🐇'.repeat(20);
  const top = '\u{10FFFF}'.repeat(17);
  const batch: Batch = {
    fields,
    numRows: 3,
    columns: [
      [long, 'b', emoji],
      [new Uint8Array(20).fill(7), new Uint8Array([1]), new Uint8Array([7, ...new Array(19).fill(0xff)])],
      [top, top, top],
    ],
  };
  const { metrics } = await writeFile({ schemaId: 0, fields }, [batch]);
  assert.equal(fromBinary({ type: 'string' }, metrics.lowerBounds.get(1)!), 'abcdefghijklmnop');
  assert.equal(fromBinary({ type: 'string' }, metrics.upperBounds.get(1)!), '🐇'.repeat(15) + '🐈');
  assert.deepEqual(metrics.lowerBounds.get(2), new Uint8Array([1]));
  // max = 07 ff*19: the 16-byte prefix 07 ff*15 increments to 08
  assert.deepEqual(metrics.upperBounds.get(2), new Uint8Array([8]));
  // no code point above U+10FFFF: the upper bound is dropped, the lower kept
  assert.equal(fromBinary({ type: 'string' }, metrics.lowerBounds.get(3)!), '\u{10FFFF}'.repeat(16));
  assert.equal(metrics.upperBounds.has(3), false);
});

test('parquet metrics: string bounds in UTF-8 byte order (a surrogate pair sorts above U+E000..U+FFFF); distinct strings, ASCII or not, read back equal', async () => {
  // mostly distinct values (written PLAIN): one column all ASCII, one with non-ASCII text
  const ascii = Array.from({ length: 3000 }, (_, i) => (i % 17 === 0 ? null : `crate::m${i}::f${(i * 7919) % 3001}`));
  const wide = ascii.map((v, i) => (v === null ? null : i % 5 === 0 ? `${v}–naïve🐇` : v));
  // bounds: U+E000 is above every BMP letter but below 🐇 (U+1F407, a surrogate pair in UTF-16)
  const order = ['b', '\uE000', '\u{1F407}', 'a', '\uFFFF', 'c'];
  const fields = [field(1, 'ascii', { type: 'string' }), field(2, 'wide', { type: 'string' }), field(3, 'order', { type: 'string' })];
  const batch: Batch = { fields, numRows: ascii.length, columns: [ascii, wide, ascii.map((_, i) => order[i % order.length]!)] };
  const { file, metrics } = await writeFile({ schemaId: 0, fields }, [batch]);
  assert.equal(fromBinary({ type: 'string' }, metrics.lowerBounds.get(3)!), 'a');
  assert.equal(fromBinary({ type: 'string' }, metrics.upperBounds.get(3)!), '\u{1F407}');
  const [a, w, o] = await readAll(file, fields);
  assert.deepEqual(a, ascii);
  assert.deepEqual(w, wide);
  assert.deepEqual(o, batch.columns[2]);
});

test('parquet metrics: NaN is counted, never a bound; -0 sorts below +0', async () => {
  const fields = [field(1, 'd', { type: 'double' }), field(2, 'f', { type: 'float' }), field(3, 'allnan', { type: 'double' })];
  const batch: Batch = { fields, numRows: 4, columns: [[NaN, 2, -0, null], [0, -0, NaN, 1.1], [NaN, NaN, null, NaN]] };
  const { metrics, file } = await writeFile({ schemaId: 0, fields }, [batch]);
  assert.equal(metrics.nanValueCounts.get(1), 1n);
  assert.equal(metrics.nanValueCounts.get(2), 1n);
  assert.equal(metrics.nanValueCounts.get(3), 3n);
  assert.ok(Object.is(fromBinary({ type: 'double' }, metrics.lowerBounds.get(1)!), -0));
  assert.equal(fromBinary({ type: 'double' }, metrics.upperBounds.get(1)!), 2);
  assert.ok(Object.is(fromBinary({ type: 'float' }, metrics.lowerBounds.get(2)!), -0));
  assert.equal(fromBinary({ type: 'float' }, metrics.upperBounds.get(2)!), Math.fround(1.1));
  assert.equal(metrics.lowerBounds.has(3), false);
  assert.equal(metrics.upperBounds.has(3), false);
  const cols = await readAll(file, fields);
  assert.ok(Number.isNaN(cols[0]![0]));
  assert.ok(Object.is(cols[0]![2], -0));
});

test('parquet write: REQUIRED fields are Parquet REQUIRED; message "table"; iceberg.schema kv; field ids on every column', async () => {
  const { file } = await writeFile(ALL_SCHEMA, [ALL_BATCH]);
  const { parquetMetadata } = await import('hyparquet');
  const { readFileSync } = await import('node:fs');
  const md = parquetMetadata(readFileSync(file));
  assert.equal(md.schema[0]!.name, 'table');
  for (const [i, c] of ALL_TYPES.entries()) {
    const e = md.schema[i + 1]!;
    assert.equal(e.field_id, c.field.id);
    assert.equal(e.repetition_type, c.field.required ? 'REQUIRED' : 'OPTIONAL');
  }
  const kv = md.key_value_metadata?.find((k) => k.key === 'iceberg.schema');
  assert.ok(kv?.value?.includes('"dec38"'));
  assert.equal(md.schema.find((e) => e.name === 'dec38')!.type, 'FIXED_LEN_BYTE_ARRAY');
  assert.equal(md.schema.find((e) => e.name === 'dec38')!.type_length, 16);
  assert.equal(md.schema.find((e) => e.name === 'dec18')!.type, 'INT64');
  assert.equal(md.schema.find((e) => e.name === 'dec9')!.type, 'INT32');
});

test('parquet write: a schema field missing from the batches is all-null if optional, refused if required', async () => {
  const fields = [field(1, 'a', { type: 'int' }, true), field(2, 'b', { type: 'string' })];
  const { file, metrics } = await writeFile({ schemaId: 0, fields }, [{ fields: [fields[0]!], numRows: 2, columns: [[1, 2]] }]);
  assert.deepEqual(await readAll(file, fields), [[1, 2], [null, null]]);
  assert.equal(metrics.nullValueCounts.get(2), 2n);
  await assert.rejects(encodeDataFile({ schemaId: 0, fields }, [{ fields: [fields[1]!], numRows: 1, columns: [['x']] }]), /required field 1 \(a\) is missing/);
  await assert.rejects(encodeDataFile({ schemaId: 0, fields }, [{ fields, numRows: 1, columns: [[null], ['x']] }]), /field 1 \(a\) is required/);
  await assert.rejects(encodeDataFile({ schemaId: 0, fields }, [{ fields, numRows: 1, columns: [[1.5], ['x']] }]), /field 1 \(a\): expected a 32-bit integer/);
  await assert.rejects(
    encodeDataFile({ schemaId: 0, fields: [field(1, 'd', { type: 'decimal', precision: 3, scale: 1 })] }, [{ fields: [field(1, 'd', { type: 'decimal', precision: 3, scale: 1 })], numRows: 1, columns: [['100.0']] }]),
    /at most 3 digits/,
  );
});

test('parquet round trip: structs, lists and maps (nested values by field id)', async () => {
  const fields: NestedField[] = [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'loc', required: false, type: { type: 'struct', fields: [field(3, 'file', { type: 'string' }, true), field(4, 'line', { type: 'int' })] } },
    { id: 5, name: 'tags', required: false, type: { type: 'list', elementId: 6, elementRequired: false, element: { type: 'string' } } },
    {
      id: 7,
      name: 'attrs',
      required: false,
      type: { type: 'map', keyId: 8, key: { type: 'long' }, valueId: 9, valueRequired: false, value: { type: 'decimal', precision: 10, scale: 2 } },
    },
  ];
  const columns: Value[][] = [
    [1n, 2n, 3n],
    [{ file: 'a.rs', line: 3 }, null, { file: 'b.rs', line: null }],
    [['x', null, 'y'], [], null],
    [new Map<Value, Value>([[5n, '1.50'], [-7n, null]]), null, new Map()],
  ];
  const { file, metrics } = await writeFile({ schemaId: 0, fields }, [{ fields, numRows: 3, columns }]);
  assert.deepEqual(await readAll(file, fields), columns);
  assert.equal(metrics.valueCounts.get(3), 3n);
  assert.equal(metrics.nullValueCounts.get(3), 1n); // the null struct
  assert.equal(fromBinary({ type: 'string' }, metrics.upperBounds.get(3)!), 'b.rs');
  assert.ok(metrics.columnSizes.get(6)! > 0n && metrics.columnSizes.get(8)! > 0n);
  // a struct child read alone, and a struct projected with a child the file lacks
  const f = await ParquetDataFile.open(io, file);
  const b = await f.readRowGroup(0, [
    { id: 2, name: 'loc', required: false, type: { type: 'struct', fields: [field(4, 'line', { type: 'int' }), field(99, 'col', { type: 'int' })] } },
  ]);
  await f.close();
  assert.deepEqual(b.columns[0], [{ line: 3, col: null }, null, { line: null, col: null }]);
});

test('parquet read: type promotion int->long, float->double, decimal precision widening', async () => {
  const fields = [field(1, 'i', { type: 'int' }), field(2, 'f', { type: 'float' }), field(3, 'd', { type: 'decimal', precision: 9, scale: 2 })];
  const { file } = await writeFile({ schemaId: 0, fields }, [{ fields, numRows: 2, columns: [[1, null], [0.5, 2], ['1.25', '-3.00']] }]);
  const wide = [field(1, 'i', { type: 'long' }), field(2, 'f', { type: 'double' }), field(3, 'd', { type: 'decimal', precision: 20, scale: 2 })];
  assert.deepEqual(await readAll(file, wide), [[1n, null], [0.5, 2], ['1.25', '-3.00']]);
  const f = await ParquetDataFile.open(io, file);
  const st = f.rowGroupStats(0, wide);
  await f.close();
  assert.deepEqual(st.columns.get(1), { nullCount: 1n, min: 1n, max: 1n });
  assert.deepEqual(st.columns.get(3), { nullCount: 0n, min: '-3.00', max: '1.25' });
  // a scale change is not a legal promotion
  const f2 = await ParquetDataFile.open(io, file);
  await assert.rejects(f2.readRowGroup(0, [field(3, 'd', { type: 'decimal', precision: 9, scale: 3 })]), /cannot read it as decimal\(9, 3\)/);
  await f2.close();
});

test('parquet read: a corrupted or short footer gives an error naming the file', async () => {
  const { bytes } = await writeFile(ALL_SCHEMA, [ALL_BATCH]);
  const cases: [string, Uint8Array][] = [
    ['truncated', bytes.subarray(0, bytes.length - 5)],
    ['garbage-magic', Uint8Array.from([...bytes.subarray(0, bytes.length - 4), 0x47, 0x41, 0x52, 0x42])],
    ['bad-length', (() => { const b = Uint8Array.from(bytes); new DataView(b.buffer).setUint32(b.length - 8, 0x7fffffff, true); return b; })()],
    ['garbled-footer', (() => { const b = Uint8Array.from(bytes); const len = new DataView(b.buffer).getUint32(b.length - 8, true); b.fill(0xff, b.length - 8 - len, b.length - 8); return b; })()],
    ['tiny', new Uint8Array([0x50, 0x41, 0x52, 0x31])],
  ];
  for (const [name, data] of cases) {
    const file = path.join(tmp.dir, `${name}.parquet`);
    writeFileSync(file, data);
    await assert.rejects(ParquetDataFile.open(io, file), (e: Error) => {
      assert.ok(e.message.includes(file), `${name}: ${e.message}`);
      return true;
    });
  }
});

test('parquet read: a 200k-row file streams row group by row group with a two-column projection', async () => {
  const N = 200_000;
  const fields = [field(1, 'id', { type: 'long' }, true), field(2, 'name', { type: 'string' }), field(3, 'n', { type: 'int' }), field(4, 'x', { type: 'double' })];
  const cols: Value[][] = [new Array(N), new Array(N), new Array(N), new Array(N)];
  for (let i = 0; i < N; i++) {
    cols[0]![i] = BigInt(i);
    cols[1]![i] = i % 5 === 0 ? null : `name-${i % 977}`;
    cols[2]![i] = i;
    cols[3]![i] = i / 3;
  }
  // two batches so row groups straddle batch boundaries
  const half = 70_001;
  const batches: Batch[] = [
    { fields, numRows: half, columns: cols.map((c) => c.slice(0, half)) },
    { fields, numRows: N - half, columns: cols.map((c) => c.slice(half)) },
  ];
  const { file, metrics } = await writeFile({ schemaId: 0, fields }, batches, { rowGroupRows: 50_000 });
  assert.equal(metrics.splitOffsets.length, 4);
  assert.deepEqual([...metrics.splitOffsets].sort((a, b) => (a < b ? -1 : 1)), metrics.splitOffsets);
  const before = { ...readStats };
  const f = await ParquetDataFile.open(io, file);
  assert.equal(f.numRows, N);
  assert.equal(f.rowGroupCount, 4);
  let total = 0;
  let expectId = 0n;
  for (let g = 0; g < f.rowGroupCount; g++) {
    const b = await f.readRowGroup(g, [fields[0]!, fields[1]!]);
    assert.equal(b.columns.length, 2);
    assert.equal(b.columns[0]!.length, b.numRows);
    for (const v of b.columns[0]!) assert.equal(v, expectId++);
    total += b.numRows;
  }
  await f.close();
  assert.equal(total, N);
  assert.equal(readStats.filesOpened - before.filesOpened, 1);
  assert.equal(readStats.rowGroupsRead - before.rowGroupsRead, 4);
});

test('parquet write: dictionaryBytes writes a string column whose distinct values exceed it PLAIN, a smaller one with its dictionary', async () => {
  const { parquetMetadata } = await import('hyparquet');
  const N = 5000;
  const fields = [field(1, 'many', { type: 'string' }), field(2, 'few', { type: 'string' })];
  const cols: Value[][] = [Array.from({ length: N }, (_x, i) => `item-${String(i % 500).padStart(5, '0')}`), Array.from({ length: N }, (_x, i) => `k${i % 10}`)];
  const dictionaries = (bytes: Uint8Array): Record<string, boolean> => {
    const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    return Object.fromEntries(md.row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema[0]!, c.meta_data!.dictionary_page_offset !== undefined]));
  };
  const plain = await writeFile({ schemaId: 0, fields }, [{ fields, numRows: N, columns: cols }], { dictionaryBytes: 4096 });
  assert.deepEqual(dictionaries(plain.bytes), { many: false, few: true }, '500 distinct values of ~14 bytes exceed 4 KiB: PLAIN');
  assert.deepEqual(await readAll(plain.file, fields), cols);
  const unlimited = await writeFile({ schemaId: 0, fields }, [{ fields, numRows: N, columns: cols }]);
  assert.deepEqual(dictionaries(unlimited.bytes), { many: true, few: true }, 'without a limit both repeat enough for a dictionary');
  assert.deepEqual(await readAll(unlimited.file, fields), cols);
});
