// flat.ts (the column writer of every Mimir table) against hyparquet-writer's
// generic column writer: for flat schemas both must make the same file, byte
// for byte, with the same metrics — flat.ts is only a faster way to the same
// Parquet. Columns cover each flat kind, nulls, short and long strings
// (the char loop and the native encoder), non-ASCII and code units >= U+D800
// (UTF-8 order of page bounds), dictionaries kept and refused, several pages,
// row groups and batches, and no compression. The row cap per page
// (pageRows, which hyparquet-writer lacks) is checked on its own: pages at
// most that long, the same rows, and no byte changed when no page reaches it.
// A file written after a larger one (row groups copied into the same reused
// arrays) is the file written first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { encodeDataFile, type DataFileWriteOptions } from '../../src/lake/parquet/write.ts';
import { parseOffsetIndex } from '../../src/lake/parquet/offset-index.ts';
import type { Batch, NestedField, PrimitiveType, Schema, Value } from '../../src/lake/spec/types.ts';

const field = (id: number, name: string, type: PrimitiveType, required = false): NestedField => ({ id, name, required, type });

const fields: NestedField[] = [
  field(1, 'id', { type: 'string' }, true),
  field(2, 'name', { type: 'string' }),
  field(3, 'text', { type: 'string' }),
  field(4, 'kind', { type: 'string' }),
  field(5, 'line', { type: 'int' }),
  field(6, 'size', { type: 'long' }, true),
  field(7, 'ok', { type: 'boolean' }),
  field(8, 'day', { type: 'date' }),
  field(9, 'at', { type: 'timestamptz' }),
  field(10, 'const', { type: 'string' }),
];
const schema: Schema = { schemaId: 0, fields };

/** A deterministic pseudo-random generator (the same rows every run). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const PIECES = ['fn', 'impl', 'é', '€', 'ü', '\u{1F600}', '\uE000', '\uFFFD', 'x', 'Self', '::', ' ', '_', 'a'.repeat(40)];

function rows(n: number, seed: number, sorted: boolean): Value[][] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const cols: Value[][] = fields.map(() => []);
  for (let i = 0; i < n; i++) {
    const textLen = Math.floor(r() * 6);
    let text = '';
    for (let k = 0; k < textLen; k++) text += pick(PIECES);
    cols[0]!.push(sorted ? `id${String(i).padStart(6, '0')}` : `id${Math.floor(r() * 1e9).toString(16)}`);
    cols[1]!.push(r() < 0.1 ? null : `crate::m${Math.floor(r() * 50)}::item_${Math.floor(r() * 400)}`);
    cols[2]!.push(r() < 0.05 ? null : text);
    cols[3]!.push(r() < 0.02 ? null : pick(['fn', 'struct', 'impl', 'trait', 'mod', 'é-kind']));
    cols[4]!.push(r() < 0.1 ? null : Math.floor(r() * 20000) - 100);
    cols[5]!.push(BigInt(Math.floor(r() * 1e12)) * (r() < 0.5 ? 1n : -1n));
    cols[6]!.push(r() < 0.1 ? null : r() < 0.7);
    cols[7]!.push(r() < 0.3 ? null : 19000 + Math.floor(r() * 30));
    cols[8]!.push(r() < 0.2 ? null : 1_700_000_000_000_000n + BigInt(Math.floor(r() * 1e9)));
    cols[9]!.push('same');
  }
  return cols;
}

/** The rows as batches of `sizes` rows each. */
function batches(cols: Value[][], sizes: number[]): Batch[] {
  const out: Batch[] = [];
  let at = 0;
  for (const n of sizes) {
    out.push({ fields, numRows: n, columns: cols.map((c) => c.slice(at, at + n)) });
    at += n;
  }
  return out;
}

const cases: [string, Value[][], number[], DataFileWriteOptions][] = [
  ['defaults, one batch', rows(3000, 1, true), [3000], {}],
  ['small pages and row groups, batches across groups', rows(2500, 2, false), [700, 1100, 700], { pageBytes: 600, rowGroupRows: 1000 }],
  ['dictionaries refused by size, uncompressed', rows(1200, 3, false), [1200], { pageBytes: 2048, dictionaryBytes: 64, codec: 'uncompressed' }],
  ['page index on some columns only', rows(900, 4, true), [450, 450], { pageBytes: 300, pageIndexColumns: ['name', 'size', 'ok'] }],
  ['one row', rows(1, 5, false), [1], {}],
];

for (const [name, cols, sizes, opts] of cases) {
  test(`parquet flat writer: the same bytes and metrics as hyparquet-writer's generic writer (${name})`, async () => {
    const flat = await encodeDataFile(schema, batches(cols, sizes), opts);
    const generic = await encodeDataFile(schema, batches(cols, sizes), { ...opts, genericWriter: true });
    assert.ok(flat.bytes.length > 0);
    assert.deepEqual(flat.metrics, generic.metrics);
    assert.equal(flat.bytes.length, generic.bytes.length, 'file sizes');
    const first = flat.bytes.findIndex((b, i) => b !== generic.bytes[i]);
    assert.equal(first, -1, `first differing byte at ${first} of ${flat.bytes.length}`);
  });
}

test('parquet flat writer: a file written after a larger one (its row groups copied into the same, longer column arrays) has the generic writer\'s bytes; a dictionary is judged on the group\'s rows only', async () => {
  await encodeDataFile(schema, batches(rows(5000, 8, false), [2500, 2500]), { pageBytes: 2048, rowGroupRows: 4000 });
  // names three times each: a dictionary pays when every row of a group is sampled, not when every 4th one is
  const cols = rows(1500, 7, false);
  cols[1] = cols[1]!.map((_v, i) => `crate::triple_${Math.floor(i / 3)}`);
  const opts: DataFileWriteOptions = { pageBytes: 2048, rowGroupRows: 1200 };
  const flat = await encodeDataFile(schema, batches(cols, [500, 1000]), opts);
  const generic = await encodeDataFile(schema, batches(cols, [500, 1000]), { ...opts, genericWriter: true });
  assert.deepEqual(flat.metrics, generic.metrics);
  assert.deepEqual(flat.bytes, generic.bytes);
});

test('parquet flat writer: pageRows caps the rows of every data page, dictionary-coded and plain; the rows read back the same; a cap never reached changes no byte', async () => {
  const cols = rows(3000, 6, true);
  const opts: DataFileWriteOptions = { pageBytes: 8192, rowGroupRows: 2000, codec: 'uncompressed' };
  const plain = await encodeDataFile(schema, batches(cols, [3000]), opts);
  const capped = await encodeDataFile(schema, batches(cols, [3000]), { ...opts, pageRows: 100 });
  const loose = await encodeDataFile(schema, batches(cols, [3000]), { ...opts, pageRows: 1_000_000 });
  assert.deepEqual(loose.bytes, plain.bytes, 'a cap no page reaches: the same file');
  const buf = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  const pageRowsOf = (b: Uint8Array): Map<string, number[]> => {
    const ab = buf(b);
    const meta = parquetMetadata(ab);
    const out = new Map<string, number[]>();
    for (const rg of meta.row_groups) {
      for (const c of rg.columns) {
        const name = c.meta_data!.path_in_schema[0]!;
        const n = Number(rg.num_rows);
        let sizes = [n];
        if (c.offset_index_offset) {
          const at = Number(c.offset_index_offset);
          const locs = parseOffsetIndex(new Uint8Array(ab, at, c.offset_index_length!));
          sizes = locs.map((l, i) => (i + 1 < locs.length ? Number(locs[i + 1]!.first_row_index) : n) - Number(l.first_row_index));
        }
        out.set(name, [...(out.get(name) ?? []), ...sizes]);
      }
    }
    return out;
  };
  const before = pageRowsOf(plain.bytes);
  const after = pageRowsOf(capped.bytes);
  // the columns whose pages were longer than the cap: a dictionary-coded one (kind) and plain ones among them
  assert.ok(Math.max(...before.get('kind')!) > 100 && Math.max(...before.get('line')!) > 100, 'without the cap, pages of kind and line hold more than 100 rows');
  for (const [name, sizes] of after) {
    assert.ok(Math.max(...sizes) <= 100, `${name}: every page at most 100 rows (${Math.max(...sizes)})`);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 3000, `${name}: the pages hold every row`);
  }
  assert.deepEqual(await parquetReadObjects({ file: buf(capped.bytes) }), await parquetReadObjects({ file: buf(plain.bytes) }), 'the same rows');
  // the same counts and bounds; only the column sizes (more page headers) and split offsets move
  const counts = (m: typeof plain.metrics): unknown => ({ ...m, columnSizes: undefined, splitOffsets: undefined });
  assert.deepEqual(counts(capped.metrics), counts(plain.metrics));
});
