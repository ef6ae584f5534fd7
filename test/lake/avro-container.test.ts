import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Json } from '../../src/lake/spec/json.ts';
import { avroCompatibleName, crc32, readContainer, snappyDecompress, writeContainer } from '../../src/lake/avro/container.ts';

const SCHEMA: Json = {
  type: 'record',
  name: 'thing',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'maybe', type: ['null', 'long'], default: null, 'field-id': 2 },
    { name: 'blob', type: 'bytes', 'field-id': 3 },
    { name: 'tags', type: { type: 'array', items: 'int', 'element-id': 5 }, 'field-id': 4 },
    { name: 'props', type: { type: 'map', values: 'string', 'key-id': 7, 'value-id': 8 }, 'field-id': 6 },
  ],
};

const records = [
  { id: 2n ** 63n - 1n, maybe: null, blob: Uint8Array.of(1, 2, 3), tags: [1, 2], props: { a: 'x' } },
  { id: -(2n ** 63n), maybe: 9007199254740993n, blob: new Uint8Array(0), tags: [], props: {} },
  { id: 0n, maybe: -1n, blob: Uint8Array.of(255), tags: [7], props: { 'k k': 'ü' } },
];

test('container: every Avro long is a bigint and round-trips exactly at the 64-bit limits, for each codec', () => {
  for (const codec of ['null', 'deflate', 'snappy', 'zstandard'] as const) {
    const bytes = writeContainer(SCHEMA, records, { 'snapshot-id': '7505300640432048841' }, codec);
    const back = readContainer(bytes, `mem.${codec}.avro`);
    assert.equal(back.codec, codec);
    assert.equal(back.records.length, 3);
    const r = back.records as Record<string, unknown>[];
    assert.equal(r[0]!['id'], 2n ** 63n - 1n);
    assert.equal(r[1]!['id'], -(2n ** 63n));
    assert.equal(r[1]!['maybe'], 9007199254740993n);
    assert.equal(r[0]!['maybe'], null);
    assert.equal(r[2]!['maybe'], -1n);
    assert.deepEqual([...(r[0]!['blob'] as Uint8Array)], [1, 2, 3]);
    assert.deepEqual(r[2]!['props'], { 'k k': 'ü' });
    assert.equal(back.meta.get('snapshot-id'), '7505300640432048841');
    assert.equal(back.meta.has('avro.schema'), false);
  }
});

test('container: the header schema keeps field-id, element-id, key-id and value-id', () => {
  const bytes = writeContainer(SCHEMA, records, {});
  const { schemaJson } = readContainer(bytes, 'mem.avro');
  assert.deepEqual(schemaJson, SCHEMA);
  const text = Buffer.from(bytes).toString('latin1');
  for (const attr of ['"field-id":1', '"element-id":5', '"key-id":7', '"value-id":8']) assert.ok(text.includes(attr), attr);
});

test('container: many records split into several blocks and all come back in order', () => {
  const many = Array.from({ length: 30000 }, (_, i) => ({ id: BigInt(i) * 1000003n, maybe: null, blob: new Uint8Array(40).fill(i & 0xff), tags: [i], props: {} }));
  const back = readContainer(writeContainer(SCHEMA, many, {}), 'big.avro');
  assert.equal(back.records.length, many.length);
  assert.equal((back.records[29999] as { id: bigint }).id, 29999n * 1000003n);
});

test('container: snappy blocks with back-references decode, and a bad CRC is refused', () => {
  // "abcabcabcabc": literal "abc" then a 1-byte-offset copy of 9 bytes at distance 3 (overlapping)
  const out = snappyDecompress(Uint8Array.of(12, 8, 97, 98, 99, 0x15, 3), 'vec');
  assert.equal(Buffer.from(out).toString(), 'abcabcabcabc');
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  const bytes = writeContainer(SCHEMA, records, {}, 'snappy');
  // flip the last CRC byte of the (only) block: 16 sync bytes end the file, the CRC precedes them
  const bad = Uint8Array.from(bytes);
  bad[bad.length - 17] = bad[bad.length - 17]! ^ 0xff;
  assert.throws(() => readContainer(bad, 'crc.avro'), /crc\.avro: block 0: snappy CRC mismatch/);
});

test('container: bad magic, truncation, unknown codec and a wrong sync marker name the file', () => {
  const good = writeContainer(SCHEMA, records, {});
  assert.throws(() => readContainer(Buffer.from('PAR1 not avro at all'), 'x.parquet'), /x\.parquet: .*bad magic/);
  assert.throws(() => readContainer(good.subarray(0, good.length - 20), 'cut.avro'), /cut\.avro: .*truncated/);
  assert.throws(() => readContainer(good.subarray(0, 30), 'head.avro'), /head\.avro/);
  const weird = writeContainer(SCHEMA, records, {}, 'null');
  const text = Buffer.from(weird);
  const at = text.indexOf('avro.codec') + 'avro.codec'.length + 1;
  assert.equal(text.subarray(at, at + 4).toString(), 'null');
  text.write('lzma', at, 'latin1');
  assert.throws(() => readContainer(text, 'lzma.avro'), /lzma\.avro: unknown Avro codec "lzma"/);
  const badSync = Uint8Array.from(good);
  badSync[badSync.length - 1] = badSync[badSync.length - 1]! ^ 1;
  assert.throws(() => readContainer(badSync, 'sync.avro'), /sync\.avro: .*sync marker/);
  const garbage = Uint8Array.from(good);
  const headerEnd = Buffer.from(good).indexOf(Buffer.from(good.subarray(good.length - 16))) + 16;
  for (let i = headerEnd + 4; i < garbage.length - 16; i++) garbage[i] = 0x5a;
  assert.throws(() => readContainer(garbage, 'garbage.avro'), /garbage\.avro/);
});

test('container: names Avro refuses are made valid the way Java does', () => {
  assert.equal(avroCompatibleName('Breed Name'), 'Breed_x20Name');
  assert.equal(avroCompatibleName('1a'), '_1a');
  assert.equal(avroCompatibleName('ok_name9'), 'ok_name9');
});

test('container: longs in object form with a logical type are bigints too', () => {
  const s: Json = {
    type: 'record',
    name: 'r',
    fields: [{ name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }], default: null, 'field-id': 1 }],
  };
  const back = readContainer(writeContainer(s, [{ ts: 2n ** 60n + 1n }, { ts: null }], {}), 'ts.avro');
  assert.deepEqual(back.records.map((r) => ({ ...(r as object) })), [{ ts: 2n ** 60n + 1n }, { ts: null }]);
});
