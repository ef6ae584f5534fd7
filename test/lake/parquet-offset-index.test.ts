// The offset index parser the readers use (src/lake/parquet/offset-index.ts)
// gives exactly hyparquet's page locations — on files our writer made with
// many pages, on files other engines wrote (the shared fixtures), and on
// hand-made Thrift in unusual layouts (fields out of order, an extra field,
// the long field-id form, offsets past 2^53) — and refuses truncated bytes.
// A narrowed read (a row range: the page locations are handed to hyparquet)
// returns the same rows as the whole row group sliced.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parquetMetadata, readOffsetIndex } from 'hyparquet';
import { scratch } from '../helpers.ts';
import { LocalFileIO } from '../../src/lake/io/fileio.ts';
import { parseOffsetIndex } from '../../src/lake/parquet/offset-index.ts';
import { ParquetDataFile } from '../../src/lake/parquet/read.ts';
import { encodeDataFile } from '../../src/lake/parquet/write.ts';
import type { Batch, NestedField, Schema } from '../../src/lake/spec/types.ts';

const tmp = scratch('mimir-offset-index-');
after(() => tmp.cleanup());

/** hyparquet's page locations and ours for every chunk of a Parquet file that has an offset index; how many compared. */
function compareFile(bytes: Uint8Array, what: string): number {
  const len = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(bytes.length - 8, true);
  const md = parquetMetadata(bytes.subarray(bytes.length - 8 - len));
  let n = 0;
  for (const [g, rg] of md.row_groups.entries()) {
    for (const [c, chunk] of rg.columns.entries()) {
      if (!chunk.offset_index_offset || !chunk.offset_index_length) continue;
      const at = Number(chunk.offset_index_offset);
      const index = bytes.slice(at, at + chunk.offset_index_length);
      const theirs = readOffsetIndex({ view: new DataView(index.buffer), offset: 0 }).page_locations;
      assert.deepStrictEqual(parseOffsetIndex(index), theirs, `${what}: row group ${g}, chunk ${c}`);
      n++;
    }
  }
  return n;
}

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'k', required: true, type: { type: 'string' } },
    { id: 2, name: 'n', required: false, type: { type: 'long' } },
    { id: 3, name: 'tag', required: false, type: { type: 'string' } },
  ],
};
const fields = schema.fields as NestedField[];
const ROWS = 6000;
const batch: Batch = {
  fields,
  numRows: ROWS,
  columns: [
    Array.from({ length: ROWS }, (_, i) => `key-${String(i).padStart(6, '0')}-${(i * 7919) % 10007}`),
    Array.from({ length: ROWS }, (_, i) => (i % 13 === 0 ? null : BigInt(i) * 1_000_003n - 5_000_000n)),
    Array.from({ length: ROWS }, (_, i) => (i % 5 === 0 ? null : `tag${i % 17}`)),
  ],
};

test('offset index: our page locations equal hyparquet\'s on a file of many pages and row groups', async () => {
  const { bytes } = await encodeDataFile(schema, [batch], { rowGroupRows: 2500, pageBytes: 1024 });
  assert.ok(compareFile(bytes, 'written') >= 9, 'every chunk of the 3 row groups has an offset index');
  const pages = (() => {
    const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 8, true);
    const chunk = parquetMetadata(bytes.subarray(bytes.length - 8 - len)).row_groups[0]!.columns[0]!;
    const at = Number(chunk.offset_index_offset);
    return parseOffsetIndex(bytes.slice(at, at + chunk.offset_index_length!)).length;
  })();
  assert.ok(pages > 10, `small pages: the first chunk has ${pages} pages`);
});

test('offset index: equal on every Parquet file of the shared fixtures (other engines\' writers)', () => {
  const root = '/work/shared/fixtures';
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir)) {
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e.endsWith('.parquet')) files.push(p);
    }
  };
  try {
    walk(root);
  } catch {
    return; // no fixtures on this machine: the other tests still pin the parser
  }
  for (const f of files) compareFile(new Uint8Array(readFileSync(f)), f);
});

/** Thrift compact helpers for hand-made indexes. */
const varint = (x: bigint): number[] => {
  const out: number[] = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
};
const zz = (x: bigint): number[] => varint(x >= 0n ? x << 1n : ((-x) << 1n) - 1n);

test('offset index: unusual layouts parse as hyparquet parses them', () => {
  const cases: [string, number[]][] = [
    // fields 3, 1, 2 (deltas then the long form back to 1), an offset past 2^53, a negative first row
    ['out of order, long ids, big values', [0x19, 0x2c, 0x36, ...zz(7n), 0x06, ...zz(1n), ...zz(2n ** 60n + 3n), 0x15, ...zz(100n), 0x00, 0x16, ...zz(9n), 0x15, ...zz(5n), 0x16, ...zz(-4n), 0x00, 0x00]],
    // the usual layout followed by field 2 (unencoded_byte_array_data_bytes, list<i64>) and an unknown binary field 9
    ['extra fields', [0x19, 0x1c, 0x16, ...zz(4n), 0x15, ...zz(77n), 0x16, ...zz(0n), 0x00, 0x19, 0x26, ...zz(10n), ...zz(20n), 0x78, 3, 0x61, 0x62, 0x63, 0x00]],
    // a page location carrying an extra struct field 4 (skipped)
    ['nested extra', [0x19, 0x1c, 0x16, ...zz(4n), 0x15, ...zz(77n), 0x16, ...zz(0n), 0x1c, 0x15, ...zz(1n), 0x00, 0x00, 0x00]],
    // more than 14 pages: the long list-size form
    ['long list', [0x19, 0xfc, 20, ...Array.from({ length: 20 }, (_, i) => [0x16, ...zz(BigInt(4 + 100 * i)), 0x15, ...zz(100n), 0x16, ...zz(BigInt(50 * i)), 0x00]).flat(), 0x00]],
  ];
  for (const [what, bytes] of cases) {
    const b = new Uint8Array(bytes);
    assert.deepStrictEqual(parseOffsetIndex(b), readOffsetIndex({ view: new DataView(b.buffer), offset: 0 }).page_locations, what);
  }
});

test('offset index: truncated or malformed bytes are refused with what was expected', () => {
  const whole = [0x19, 0x1c, 0x16, ...zz(4n), 0x15, ...zz(77n), 0x16, ...zz(0n), 0x00, 0x00];
  for (let cut = 0; cut < whole.length; cut++) {
    assert.throws(() => parseOffsetIndex(new Uint8Array(whole.slice(0, cut))), /offset index: /, `cut at ${cut}`);
  }
  assert.throws(() => parseOffsetIndex(new Uint8Array([0x00])), /no page_locations/);
  assert.throws(() => parseOffsetIndex(new Uint8Array([0x19, 0x15, 0x02, 0x00])), /expected a list of page location structs/);
  assert.throws(() => parseOffsetIndex(new Uint8Array([0x19, 0x1c, 0x16, ...zz(4n), 0x00, 0x00])), /lacks compressed_page_size/);
});

test('offset index: a narrowed read (row range) returns the rows of the whole group, sliced', async () => {
  const { bytes } = await encodeDataFile(schema, [batch], { rowGroupRows: 2500, pageBytes: 1024 });
  const file = path.join(tmp.dir, 'narrow.parquet');
  writeFileSync(file, bytes);
  const io = new LocalFileIO();
  const f = await ParquetDataFile.open(io, file);
  try {
    for (let g = 0; g < f.rowGroupCount; g++) {
      const whole = await f.readRowGroup(g, fields);
      const rows = f.rowGroupRows(g);
      for (const [from, to] of [[0, 1], [17, 18], [300, 1400], [rows - 3, rows], [1, rows - 1]] as const) {
        if (to > rows) continue;
        const part = await f.readRowGroup(g, fields, undefined, { from, to });
        assert.equal(part.numRows, to - from);
        part.columns.forEach((c, j) => assert.deepStrictEqual(c, whole.columns[j]!.slice(from, to), `group ${g} rows ${from}..${to} column ${j}`));
      }
    }
  } finally {
    await f.close();
  }
});
