// A narrowed read (a row range of a row group) decodes only its rows of the
// flat columns src/lake/parquet/narrow.ts takes, and gives exactly what
// hyparquet's whole-page decoding gives: every kind it takes (strings and
// bytes, dictionary and plain; int, long, float, double), with nulls, over
// many pages and row groups, ranges at page edges, single rows and whole
// groups; columns it does not take (booleans, nested, another codec) are
// still read by hyparquet in the same call. A chunk without an offset index
// is read narrowly as one page (writers omit the index exactly then); a
// chunk of several pages without one is declined (the page's row count is
// checked), never misread.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { LocalFileIO } from '../../src/lake/io/fileio.ts';
import { narrowReads, narrowRead, narrowable, onePageLocations } from '../../src/lake/parquet/narrow.ts';
import { parquetMetadata } from 'hyparquet';
import { zstdDecompress } from '../../src/lake/codec/zstd.ts';
import { ParquetDataFile } from '../../src/lake/parquet/read.ts';
import { encodeDataFile, type DataFileWriteOptions } from '../../src/lake/parquet/write.ts';
import type { Batch, NestedField, Schema, Value } from '../../src/lake/spec/types.ts';

const tmp = scratch('mimir-narrow-');
after(() => tmp.cleanup());
const io = new LocalFileIO();
after(() => {
  narrowReads.enabled = true;
});

const fields: NestedField[] = [
  { id: 1, name: 'key', required: true, type: { type: 'string' } }, // distinct: PLAIN
  { id: 2, name: 'kind', required: false, type: { type: 'string' } }, // few values: dictionary, nulls
  { id: 3, name: 'n', required: false, type: { type: 'int' } },
  { id: 4, name: 'big', required: true, type: { type: 'long' } },
  { id: 5, name: 'f', required: false, type: { type: 'float' } },
  { id: 6, name: 'd', required: false, type: { type: 'double' } },
  { id: 7, name: 'raw', required: false, type: { type: 'binary' } },
  { id: 8, name: 'ok', required: false, type: { type: 'boolean' } }, // not taken: hyparquet reads it
  { id: 9, name: 'small', required: false, type: { type: 'int' } }, // dictionary of ints
  { id: 10, name: 'tags', required: false, type: { type: 'list', elementId: 11, element: { type: 'string' }, elementRequired: false } }, // nested: hyparquet
];
const schema: Schema = { schemaId: 0, fields };
const ROWS = 5000;
const col = <T extends Value>(f: (i: number) => T): T[] => Array.from({ length: ROWS }, (_, i) => f(i));
const batch: Batch = {
  fields,
  numRows: ROWS,
  columns: [
    col((i) => `k${String(i).padStart(5, '0')}·${(i * 7919) % 10007}`),
    col((i) => (i % 7 === 0 ? null : ['fn', 'struct', 'mod', 'trait', 'impl'][i % 5]!)),
    col((i) => (i % 11 === 0 ? null : i * 37 - 50_000)),
    col((i) => BigInt(i) * 9_007_199_254_741n - 4n ** 30n),
    col((i) => (i % 13 === 0 ? null : i / 7)),
    col((i) => (i % 3 === 0 ? null : Math.sqrt(i) * -1e10)),
    col((i) => (i % 4 === 0 ? null : new Uint8Array([i & 255, (i >> 8) & 255, 0x80]))),
    col((i) => (i % 6 === 0 ? null : i % 2 === 0)),
    col((i) => (i % 9 === 0 ? null : i % 4)),
    col((i) => (i % 8 === 0 ? null : [`t${i % 3}`, null])),
  ],
};

async function fileOf(name: string, opts: DataFileWriteOptions): Promise<ParquetDataFile> {
  const { bytes } = await encodeDataFile(schema, [batch], opts);
  const file = path.join(tmp.dir, `${name}.parquet`);
  writeFileSync(file, bytes);
  return ParquetDataFile.open(io, file);
}

async function compare(f: ParquetDataFile, expectTaken: boolean): Promise<void> {
  for (let g = 0; g < f.rowGroupCount; g++) {
    const rows = f.rowGroupRows(g);
    narrowReads.enabled = false;
    const whole = await f.readRowGroup(g, fields);
    const ranges: [number, number][] = [[0, 1], [rows - 1, rows], [1, rows], [0, rows - 1], [99, 100], [100, 101], [250, 1300], [rows >> 1, (rows >> 1) + 2]];
    for (let a = 0; a < rows; a += 97) ranges.push([a, Math.min(rows, a + 1 + (a % 5))]);
    for (const [from, to] of ranges) {
      if (from >= to || to > rows) continue;
      narrowReads.enabled = true;
      const before = narrowReads.taken;
      const ours = await f.readRowGroup(g, fields, undefined, { from, to });
      if (expectTaken) assert.ok(narrowReads.taken - before >= 7, `rows ${from}..${to} of group ${g}: the flat columns were read narrowly (${narrowReads.taken - before})`);
      else assert.equal(narrowReads.taken, before, 'nothing read narrowly');
      narrowReads.enabled = false;
      const theirs = await f.readRowGroup(g, fields, undefined, { from, to });
      assert.deepStrictEqual(ours, theirs, `rows ${from}..${to} of group ${g}`);
      ours.columns.forEach((c, j) => assert.deepStrictEqual(c, whole.columns[j]!.slice(from, to), `rows ${from}..${to} of group ${g}, ${fields[j]!.name}`));
    }
  }
}

test('narrow read: equal to hyparquet on small pages and several row groups (zstd)', async () => {
  const f = await fileOf('zstd', { rowGroupRows: 2100, pageBytes: 700 });
  try {
    await compare(f, true);
  } finally {
    await f.close();
  }
});

test('narrow read: equal on uncompressed pages with dictionaries refused (all plain), and on one-page chunks (no offset index)', async () => {
  for (const [name, opts, taken] of [
    ['plain', { codec: 'uncompressed', pageBytes: 1500, dictionaryBytes: 1 }, true],
    ['one-page', { codec: 'uncompressed', rowGroupRows: 5000 }, true],
    ['one-page-zstd', { rowGroupRows: 5000 }, true],
  ] as [string, DataFileWriteOptions, boolean][]) {
    const f = await fileOf(name, opts);
    try {
      await compare(f, taken);
    } finally {
      await f.close();
    }
  }
});

test('narrow read: a codec it does not take (snappy) is read by hyparquet, the same rows', async () => {
  const f = await fileOf('snappy', { codec: 'snappy', rowGroupRows: 2500, pageBytes: 900 });
  try {
    await compare(f, false);
  } finally {
    await f.close();
  }
});

test('narrow read: a chunk of several pages taken as one page (no offset index) is declined, not misread', async () => {
  narrowReads.enabled = true;
  const { bytes } = await encodeDataFile(schema, [batch], { rowGroupRows: 5000, pageBytes: 700 });
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const meta = parquetMetadata(ab);
  const file = { byteLength: ab.byteLength, slice: (s: number, e?: number) => ab.slice(s, e) };
  let checked = 0;
  for (const chunk of meta.row_groups[0]!.columns) {
    const m = chunk.meta_data!;
    const element = meta.schema.find((e) => e.name === m.path_in_schema[0])!;
    if (!narrowable(element, m) || !chunk.offset_index_offset) continue;
    const pages = onePageLocations(m);
    assert.ok(pages, `${m.path_in_schema[0]}: taken as one page`);
    const got = await narrowRead(file, m, element, pages, Number(meta.row_groups[0]!.num_rows), 10, 20, (b, n) => zstdDecompress(b, n, 'test'));
    assert.equal(got, undefined, `${m.path_in_schema[0]}: several pages, declined`);
    checked++;
  }
  assert.ok(checked >= 7, `the flat columns were checked (${checked})`);
});
