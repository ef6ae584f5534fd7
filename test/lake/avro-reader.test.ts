// The Avro reader of our own (src/lake/avro/decode.ts, used by readContainer)
// against avsc, the reader it replaced on the read path: every manifest list
// and manifest of every fixture table (Spark, Java, Trino, PyIceberg, DuckDB
// tests' tables) and of lakes we write decodes to the same records, 64-bit
// values exact; and damaged files are refused with the file and byte offset
// named, never read as other rows.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import type avroTypes from 'avsc';
import { avroCompatibleName, readContainer, snappyDecompress, writeContainer } from '../../src/lake/avro/container.ts';
import { encodeManifest, type ManifestEntryToWrite } from '../../src/lake/avro/manifest.ts';
import { zstdDecompress } from '../../src/lake/codec/zstd.ts';
import type { Json } from '../../src/lake/spec/json.ts';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, DataFile, PartitionSpec, Schema, Value } from '../../src/lake/spec/types.ts';
import { icebergFixtures, needsFixtures, repoRoot, runTsx, scratch } from '../helpers.ts';
import { sampleLake } from '../query/sample.ts';

const avro = createRequire(import.meta.url)('avsc') as typeof avroTypes;
const work = scratch('mimir-avro-reader-');
after(work.cleanup);

// ---- avsc as the reference decoder (independent block framing: its own BlockDecoder) ----

function zigzagLong(buf: Uint8Array): bigint {
  let z = 0n;
  for (let i = 0; i < buf.length; i++) z |= BigInt(buf[i]! & 0x7f) << BigInt(7 * i);
  z = BigInt.asUintN(64, z);
  return BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n));
}

const bigLong = avro.types.LongType.__with(
  {
    fromBuffer: (buf: Buffer): bigint => zigzagLong(buf),
    toBuffer: (): Buffer => {
      throw new Error('read only');
    },
    fromJSON: (v: unknown): bigint => BigInt(v as string),
    toJSON: (v: bigint): string => v.toString(),
    isValid: (v: unknown): boolean => typeof v === 'bigint',
    compare: (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0),
  },
  true,
);

/** The schema with field names made Avro-valid (as readContainer keys its records). */
function validNames(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(validNames);
  if (s === null || typeof s !== 'object') return s;
  const o = { ...(s as Record<string, unknown>) };
  if (Array.isArray(o['fields'])) o['fields'] = (o['fields'] as Record<string, unknown>[]).map((f) => ({ ...f, name: avroCompatibleName(String(f['name'])), type: validNames(f['type']) }));
  for (const k of ['items', 'values']) if (k in o) o[k] = validNames(o[k]);
  if (typeof o['type'] === 'object') o['type'] = validNames(o['type']);
  return o;
}

function avscRecords(bytes: Uint8Array): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const out: unknown[] = [];
    const dec = new avro.streams.BlockDecoder({
      parseHook: (schema: avroTypes.Schema) =>
        avro.Type.forSchema(validNames(schema) as avroTypes.Schema, {
          registry: { long: bigLong },
          typeHook: (s) => (s === 'long' || (typeof s === 'object' && s !== null && (s as { type?: unknown }).type === 'long') ? bigLong : undefined),
        }),
      codecs: {
        null: (b: Buffer, cb: (e: Error | null, out?: Buffer) => void) => cb(null, b),
        deflate: (b: Buffer, cb: (e: Error | null, out?: Buffer) => void) => cb(null, createRequire(import.meta.url)('node:zlib').inflateRawSync(b)),
        snappy: (b: Buffer, cb: (e: Error | null, out?: Buffer) => void) => cb(null, Buffer.from(snappyDecompress(b.subarray(0, b.length - 4), 'snappy'))),
        zstandard: (b: Buffer, cb: (e: Error | null, out?: Buffer) => void) => cb(null, Buffer.from(zstdDecompress(b, undefined, 'zstd'))),
      },
    });
    dec.on('data', (r: unknown) => out.push(r));
    dec.on('error', reject);
    dec.on('end', () => resolve(out));
    dec.end(Buffer.from(bytes));
  });
}

/** Plain data for deep equality: records (avsc class instances) as plain objects, bytes as Buffers. */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

async function assertSameAsAvsc(file: string, bytes: Uint8Array): Promise<number> {
  const ours = readContainer(bytes, file).records;
  const theirs = await avscRecords(bytes);
  assert.equal(ours.length, theirs.length, `${file}: record count`);
  assert.deepStrictEqual(plain(ours), plain(theirs), file);
  return ours.length;
}

function avroFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.avro') && statSync(p).size > 0) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

// ---- equality with avsc ------------------------------------------------------------------

test('avro reader: every manifest list and manifest of every fixture table decodes as avsc decodes it', { skip: needsFixtures }, async () => {
  const files = avroFiles(icebergFixtures!);
  assert.ok(files.length >= 60, `expected the fixture tables' Avro files, found ${files.length}`);
  let records = 0;
  const codecs = new Set<string>();
  for (const f of files) {
    const bytes = readFileSync(f);
    codecs.add(readContainer(bytes, f).codec);
    records += await assertSameAsAvsc(f, bytes);
  }
  assert.ok(records > 100, `${records} records`);
  assert.deepEqual([...codecs].sort(), ['deflate', 'null']);
});

const rich: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
    { id: 3, name: 'day', required: false, type: { type: 'date' } },
    { id: 4, name: 'at', required: false, type: { type: 'timestamptz' } },
    { id: 5, name: 'price', required: false, type: { type: 'decimal', precision: 20, scale: 3 } },
    { id: 6, name: 'u', required: false, type: { type: 'uuid' } },
    { id: 7, name: 'flag', required: false, type: { type: 'boolean' } },
    { id: 8, name: 'score', required: false, type: { type: 'double' } },
    { id: 9, name: 'raw', required: false, type: { type: 'binary' } },
    { id: 10, name: 'f4', required: false, type: { type: 'fixed', length: 4 } },
    { id: 11, name: 'ratio', required: false, type: { type: 'float' } },
    { id: 12, name: 'Odd Name', required: false, type: { type: 'int' } },
  ],
};

function richBatch(n: number, from: number): Batch {
  const rows: Value[][] = Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return [
      `r${i % 3}`,
      2n ** 62n + BigInt(i),
      18_000 + i,
      1_700_000_000_000_000n + BigInt(i) * 3_600_000_000n,
      `${i}.125`,
      `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      i % 2 === 0,
      i / 7,
      Uint8Array.of(i & 0xff, 1),
      Uint8Array.of(1, 2, 3, i & 0xff),
      i / 4,
      i % 5 === 0 ? null : -i,
    ];
  });
  return { fields: rich.fields, numRows: n, columns: rich.fields.map((_f, c) => rows.map((r) => r[c] ?? null)) };
}

test('avro reader: the manifests and manifest lists of lakes we write decode as avsc decodes them', { timeout: 300_000 }, async () => {
  // a table with partition spec evolution over many transforms and an overwrite (DELETED and EXISTING
  // entries), one with equality deletes
  const lakeDir = path.join(work.dir, 'tables');
  const lake = Lake.open(lakeDir);
  const t = await lake.createTable({ namespace: ['a'], name: 'rich' }, rich, {
    partitionBy: [
      { sourceId: 1, name: 'repo', transform: { kind: 'identity' } },
      { sourceId: 2, name: 'id_bucket', transform: { kind: 'bucket', n: 8 } },
      { sourceId: 3, name: 'day_month', transform: { kind: 'month' } },
    ],
  });
  await t.append([richBatch(20, 0)]);
  await t.updateSpec([
    { sourceId: 4, name: 'at_hour', transform: { kind: 'hour' } },
    { sourceId: 5, name: 'price', transform: { kind: 'identity' } },
    { sourceId: 6, name: 'u', transform: { kind: 'identity' } },
    { sourceId: 7, name: 'flag', transform: { kind: 'identity' } },
    { sourceId: 10, name: 'f4', transform: { kind: 'identity' } },
    { sourceId: 1, name: 'repo_trunc', transform: { kind: 'truncate', width: 1 } },
  ]);
  await t.append([richBatch(10, 100)]);
  const live = await t.dataFiles();
  await t.overwrite([live[0]!.file], await t.writeDataFiles([richBatch(3, 200)]));
  // equality deletes (written for unpartitioned tables only)
  const u = await lake.createTable({ namespace: ['a'], name: 'flat' }, rich);
  await u.append([richBatch(6, 0)]);
  const del = await u.writeEqualityDeletes([1], [{ fields: [rich.fields[0]!], numRows: 1, columns: [['r1']] }]);
  await u.commit(u.rowDeltaUpdate(await u.writeDataFiles([richBatch(2, 50)]), del ? [del] : []));
  lake.close();
  // the lake of the code graph itself: event log and state tables, as questions read them
  const sampleDir = path.join(work.dir, 'sample');
  const s = await sampleLake(sampleDir);
  s.log.close();

  for (const dir of [lakeDir, sampleDir]) {
    const files = avroFiles(dir);
    assert.ok(files.length >= 8, `${dir}: ${files.length} Avro files`);
    for (const f of files) await assertSameAsAvsc(f, readFileSync(f));
  }
});

test('avro reader: a manifest with a partition value of every type, and every codec, decodes as avsc decodes it', async () => {
  const spec: PartitionSpec = {
    specId: 3,
    fields: rich.fields.map((f, i) => ({ sourceId: f.id, fieldId: 1000 + i, name: f.name, transform: { kind: 'identity' } })),
  };
  const values = richBatch(2, 7);
  const file = (i: number, partition: Value[]): DataFile => ({
    content: 0,
    filePath: `file:/x/${i}.parquet`,
    fileFormat: 'PARQUET',
    partition,
    recordCount: 2n ** 40n + BigInt(i),
    fileSizeInBytes: 9_007_199_254_740_993n,
    columnSizes: new Map([[1, -(2n ** 63n)], [2, 2n ** 63n - 1n]]),
    lowerBounds: new Map([[1, Uint8Array.of(0, 255)]]),
    splitOffsets: [4n, 2n ** 53n + 1n],
    sortOrderId: 0,
  });
  const entries: ManifestEntryToWrite[] = [
    { status: 1, snapshotId: null, sequenceNumber: null, fileSequenceNumber: null, dataFile: file(0, values.columns.map((c) => c[0] ?? null)) },
    { status: 0, snapshotId: 2n ** 63n - 1n, sequenceNumber: 5n, fileSequenceNumber: 6n, dataFile: file(1, values.columns.map((c) => c[1] ?? null)) },
    { status: 2, snapshotId: 1n, sequenceNumber: 2n, fileSequenceNumber: 2n, dataFile: file(2, rich.fields.map(() => null)) },
  ];
  for (const codec of ['null', 'deflate', 'snappy', 'zstandard'] as const) {
    const { bytes } = encodeManifest(entries, { schema: rich, spec, content: 0, codec });
    assert.equal(await assertSameAsAvsc(`every-type.${codec}.avro`, bytes), 3);
  }
});

test('avro reader: Avro types manifests do not use (enum, map, float, nested and recursive records, wide unions, namespaces) decode as avsc decodes them', async () => {
  const schema: Json = {
    type: 'record',
    name: 'outer',
    namespace: 'ns.one',
    fields: [
      { name: 'color', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN', 'BLUE'] } },
      { name: 'again', type: 'Color' },
      { name: 'props', type: { type: 'map', values: ['null', 'long'] } },
      { name: 'f', type: 'float' },
      { name: 'd', type: 'double' },
      { name: 'wide', type: ['null', 'int', 'string', { type: 'array', items: 'long' }] },
      { name: 'fx', type: { type: 'fixed', name: 'four', namespace: 'ns.two', size: 4 } },
      { name: 'fx2', type: 'ns.two.four' },
      { name: 'tree', type: { type: 'record', name: 'Node', fields: [{ name: 'v', type: 'int' }, { name: 'kids', type: { type: 'array', items: 'Node' } }] } },
      { name: 'bad name!', type: 'boolean' },
      { name: 'nothing', type: 'null' },
      { name: 'ts', type: { type: 'long', logicalType: 'timestamp-micros' } },
    ],
  };
  const rec = (i: number): unknown => ({
    color: ['RED', 'GREEN', 'BLUE'][i % 3],
    again: 'BLUE',
    props: i === 0 ? {} : { a: null, 'b c': BigInt(i) << 50n, '': -1n },
    f: i + 0.5,
    d: -i / 3,
    wide: [null, i, `s${i}`, [BigInt(i), -(2n ** 63n)]][i % 4],
    fx: Uint8Array.of(i, 2, 3, 4),
    fx2: Uint8Array.of(9, 9, 9, i),
    tree: { v: i, kids: [{ v: -i, kids: [] }, { v: 2147483647, kids: [{ v: -2147483648, kids: [] }] }] },
    bad_x20name_x21: i % 2 === 1,
    nothing: null,
    ts: 2n ** 62n - BigInt(i),
  });
  const records = Array.from({ length: 9 }, (_, i) => rec(i));
  for (const codec of ['null', 'deflate'] as const) {
    const bytes = writeContainer(schema, records, {}, codec);
    assert.equal(await assertSameAsAvsc(`types.${codec}.avro`, bytes), 9);
  }
});

test('avro reader: reading a table (manifest list, manifests, data) loads no avsc; the first write does', { timeout: 600_000 }, async () => {
  const dir = path.join(work.dir, 'no-avsc');
  const lake = Lake.open(dir);
  const t = await lake.createTable({ namespace: ['a'], name: 't' }, rich);
  await t.append([richBatch(4, 0)]);
  lake.close();
  const script = path.join(work.dir, 'no-avsc.mts');
  const src = (rel: string): string => JSON.stringify(path.join(repoRoot, 'src', rel));
  writeFileSync(
    script,
    `import { createRequire } from 'node:module';
const { Lake } = await import(${src('lake/lake.ts')});
const { encodeManifestList } = await import(${src('lake/avro/manifest-list.ts')});
const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('/avsc/')).length;
const lake = Lake.open(${JSON.stringify(dir)});
const t = await lake.loadTable({ namespace: ['a'], name: 't' });
const rows = await t.scan().toArray();
const afterRead = loaded();
encodeManifestList([], { snapshotId: 1n, sequenceNumber: 1n });
console.log(JSON.stringify({ rows: rows.length, afterRead, afterWrite: loaded() }));
lake.close();
`,
  );
  const r = await runTsx([script]);
  assert.equal(r.code, 0, r.stderr);
  const seen = JSON.parse(r.stdout.trim()) as { rows: number; afterRead: number; afterWrite: number };
  assert.equal(seen.rows, 4);
  assert.equal(seen.afterRead, 0, 'modules of avsc loaded by reading');
  assert.ok(seen.afterWrite > 0, 'encoding a manifest list loads avsc');
});

test('avro reader: longs at every bit width (±2^k, ±2^k ∓ 1) and ints at the 32-bit limits come back exact', async () => {
  const schema: Json = { type: 'record', name: 'n', fields: [{ name: 'l', type: 'long' }, { name: 'i', type: 'int' }, { name: 'o', type: ['null', 'long'] }] };
  const longs: bigint[] = [];
  for (let k = 0n; k < 64n; k++) {
    const p = 1n << k;
    for (const v of [p - 1n, p, -p, -p + 1n, -p - 1n]) if (BigInt.asIntN(64, v) === v) longs.push(v);
  }
  const ints = [0, 1, -1, 63, 64, -64, -65, 2 ** 31 - 1, -(2 ** 31), 2 ** 30, -(2 ** 30) - 1];
  const records = longs.map((l, j) => ({ l, i: ints[j % ints.length]!, o: j % 3 === 0 ? null : -l - 1n >= -(2n ** 63n) ? -l - 1n : l }));
  const bytes = writeContainer(schema, records, {}, 'null');
  assert.deepStrictEqual(readContainer(bytes, 'widths.avro').records, records);
  assert.equal(await assertSameAsAvsc('widths.avro', bytes), records.length);
});

// ---- damage --------------------------------------------------------------------------------

const SMALL: Json = {
  type: 'record',
  name: 'r',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'name', type: ['null', 'string'], 'field-id': 2 },
    { name: 'ok', type: 'boolean', 'field-id': 3 },
  ],
};
const smallRows = [
  { id: 1n, name: 'one', ok: true },
  { id: 2n ** 60n, name: null, ok: false },
  { id: -3n, name: 'three', ok: true },
];

/** Byte offset where the first block starts (after the header's 16-byte sync marker). */
function firstBlockAt(bytes: Uint8Array): number {
  const sync = Buffer.from(bytes.subarray(bytes.length - 16));
  return Buffer.from(bytes).indexOf(sync) + 16;
}

test('avro reader: a file cut anywhere inside its block is refused naming the file, never read short', () => {
  const bytes = writeContainer(SMALL, smallRows, {}, 'null');
  const start = firstBlockAt(bytes);
  assert.equal(readContainer(bytes.subarray(0, start), 'empty.avro').records.length, 0, 'a header alone is a file of no records');
  for (let n = start + 1; n < bytes.length; n++) {
    assert.throws(() => readContainer(bytes.subarray(0, n), `cut-${n}.avro`), new RegExp(`^Error: cut-${n}\\.avro: .*(truncated|byte)`), `cut at ${n}`);
  }
});

test('avro reader: damaged record bytes are refused with the file, block and byte offset named', () => {
  const bytes = writeContainer(SMALL, smallRows, {}, 'null');
  const start = firstBlockAt(bytes);
  // block: count (3 -> 0x06), size, then record 0: id 1 (0x02), union branch 1 (0x02), "one" (len 0x06 + 3 bytes), ok 0x01
  const dataAt = start + 2;
  assert.deepEqual([...bytes.subarray(dataAt, dataAt + 7)], [0x02, 0x02, 0x06, 0x6f, 0x6e, 0x65, 0x01]);
  const damaged = (at: number, b: number): Uint8Array => {
    const copy = Uint8Array.from(bytes);
    copy[at] = b;
    return copy;
  };
  assert.throws(() => readContainer(damaged(dataAt + 1, 0x08), 'u.avro'), /^Error: u\.avro: block 0 \(at file byte \d+, \d+ bytes\): record 0 of 3 does not decode: union branch 4 outside its 2 branches at byte 1 of the block; nothing read/);
  assert.throws(() => readContainer(damaged(dataAt + 6, 0x07), 'b.avro'), /b\.avro: block 0 .*record 0 of 3 does not decode: boolean byte 7 \(expected 0 or 1\) at byte 6 of the block/);
  assert.throws(() => readContainer(damaged(dataAt + 2, 0x7e), 's.avro'), /s\.avro: block 0 .*record 0 of 3 does not decode: truncated string \(needs 63 bytes, \d+ left\) at byte 2 of the block/);
  assert.throws(() => readContainer(damaged(dataAt + 2, 0x01), 'neg.avro'), /neg\.avro: .*negative string length -1 at byte 2/);
  assert.throws(() => readContainer(damaged(start, 0x7e), 'count.avro'), /count\.avro: block 0 \(at file byte \d+\): claims 63 records but holds \d+ bytes/);
  assert.throws(() => readContainer(damaged(start, 0x04), 'left.avro'), /left\.avro: block 0 .*bytes left over after 2 records/);
  // a varint that never ends
  const runaway = Uint8Array.from(bytes);
  runaway.fill(0xff, dataAt, dataAt + 11);
  assert.throws(() => readContainer(runaway, 'v.avro'), /v\.avro: block 0 .*record 0 of 3 does not decode: long varint .* at byte 0 of the block/);
});

test('avro reader: any single flipped byte of a block either decodes or fails with a message naming the file', () => {
  const bytes = writeContainer(SMALL, smallRows, {}, 'null');
  const start = firstBlockAt(bytes);
  for (let at = start; at < bytes.length - 16; at++) {
    for (const x of [0x01, 0x80, 0xff]) {
      const copy = Uint8Array.from(bytes);
      copy[at] = copy[at]! ^ x;
      try {
        const { records } = readContainer(copy, `flip-${at}.avro`);
        // what decodes is well formed: every field present with its type
        for (const r of records as Record<string, unknown>[]) {
          assert.equal(typeof r['id'], 'bigint');
          assert.ok(r['name'] === null || typeof r['name'] === 'string');
          assert.equal(typeof r['ok'], 'boolean');
        }
      } catch (e) {
        assert.match(String(e), new RegExp(`^Error: flip-${at}\\.avro: `), `flip at ${at} ^ ${x}`);
      }
    }
  }
});
