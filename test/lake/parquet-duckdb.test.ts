// An independent reader: DuckDB reads a file we wrote with every primitive
// type and gives the same values, and sees our Parquet field ids.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { scratch } from '../helpers.ts';
import { encodeDataFile } from '../../src/lake/parquet/write.ts';
import type { Batch, NestedField, PrimitiveType, Schema } from '../../src/lake/spec/types.ts';

const tmp = scratch('mimir-parquet-duckdb-');
after(() => tmp.cleanup());

const field = (id: number, name: string, type: PrimitiveType, required = false): NestedField => ({ id, name, required, type });
const fields: NestedField[] = [
  field(1, 'b', { type: 'boolean' }),
  field(2, 'i', { type: 'int' }),
  field(3, 'l', { type: 'long' }, true),
  field(4, 'f', { type: 'float' }),
  field(5, 'd', { type: 'double' }),
  field(6, 'dec9', { type: 'decimal', precision: 9, scale: 2 }),
  field(7, 'dec18', { type: 'decimal', precision: 18, scale: 4 }),
  field(8, 'dec38', { type: 'decimal', precision: 38, scale: 10 }),
  field(9, 'date', { type: 'date' }),
  field(10, 'time', { type: 'time' }),
  field(11, 'ts', { type: 'timestamp' }),
  field(12, 'tstz', { type: 'timestamptz' }),
  field(13, 's', { type: 'string' }),
  field(14, 'u', { type: 'uuid' }),
  field(15, 'fx', { type: 'fixed', length: 3 }),
  field(16, 'bin', { type: 'binary' }),
];
const batch: Batch = {
  fields,
  numRows: 2,
  columns: [
    [true, null],
    [-2147483648, null],
    [9007199254740993n, -(2n ** 63n)],
    [1.5, null],
    [Math.PI, null],
    ['-5.00', null],
    ['12345678901234.5678', null],
    ['1234567890123456789012345678.0123456789', null],
    [18993, null],
    [43605123456n, null],
    [1684161045123456n, null],
    [-1n, null],
    ['Flopsy 🐇', null],
    ['f79c3e09-677c-4bbd-a479-3f349cb785e7', null],
    [new Uint8Array([1, 2, 255]), null],
    [new Uint8Array([0x80, 0]), null],
  ],
};

test('parquet duckdb: DuckDB reads every primitive type we wrote with the same values', async () => {
  const schema: Schema = { schemaId: 0, fields };
  const { bytes } = await encodeDataFile(schema, [batch]);
  const file = path.join(tmp.dir, 'all.parquet');
  writeFileSync(file, bytes);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const r = await c.runAndReadAll(
      `select b, i, l, f, d, dec9::varchar dec9, dec18::varchar dec18, dec38::varchar dec38,
        "date"::varchar "date", "time"::varchar "time", ts::varchar ts, epoch_us(tstz) tstz, s, u::varchar u,
        hex(fx) fx, hex(bin) bin from read_parquet('${file}')`,
    );
    const rows = r.getRowObjects();
    assert.deepEqual(rows[0], {
      b: true,
      i: -2147483648,
      l: 9007199254740993n,
      f: 1.5,
      d: Math.PI,
      dec9: '-5.00',
      dec18: '12345678901234.5678',
      dec38: '1234567890123456789012345678.0123456789',
      date: '2022-01-01',
      time: '12:06:45.123456',
      ts: '2023-05-15 14:30:45.123456',
      tstz: -1n,
      s: 'Flopsy 🐇',
      u: 'f79c3e09-677c-4bbd-a479-3f349cb785e7',
      fx: '0102FF',
      bin: '8000',
    });
    assert.deepEqual(Object.values(rows[1]!).filter((v) => v !== null), [-(2n ** 63n)]);

    const s = await c.runAndReadAll(`select name, field_id, repetition_type from parquet_schema('${file}') where name <> 'table'`);
    const got = s.getRowObjects().map((x) => [x.name, Number(x.field_id), x.repetition_type]);
    assert.deepEqual(got, fields.map((f) => [f.name, f.id, f.required ? 'REQUIRED' : 'OPTIONAL']));
  } finally {
    c.closeSync();
  }
});
