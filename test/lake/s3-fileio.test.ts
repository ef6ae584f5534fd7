// The FileIO contract on S3 (io/s3.ts) against a real S3-compatible server
// (s3rver in a child process, test/s3.ts): whole and ranged reads, writeNew
// refusing to replace, listing across pages, deletes, a missing object as
// ENOENT naming the s3:// path, multipart writes; through a proxy failing 30%
// of requests (500, 503, held past the timeout, dropped) every operation
// still succeeds; and reading a Parquet file's rows asks for its footer and
// pages, not the whole object (bytes served by the proxy vs its size).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { IoError } from '../../src/lake/io/fileio.ts';
import { Lake } from '../../src/lake/lake.ts';
import { and, ge, lt } from '../../src/lake/expr/expr.ts';
import type { Schema } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';
import { S3FileIO, isS3Path, normS3Path, parseS3Path, wantsPathStyle } from '../../src/lake/io/s3.ts';
import { BUCKET, faultProxy, needS3, type S3Server } from '../s3.ts';

let server: S3Server | undefined;
const saved = { ...process.env };
const work = scratch('mimir-s3-fileio-');
before(async () => {
  server = await needS3();
  if (server) Object.assign(process.env, server.env);
});
after(() => {
  server?.stop();
  process.env = saved;
  work.cleanup();
});

/** A fresh prefix per test: tests share the bucket. */
const prefix = (): string => `s3://${BUCKET}/t-${randomUUID()}`;
const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

test('s3 paths: s3/s3a/s3n name the same object; path style for IP and localhost endpoints and MIMIR_S3_PATH_STYLE=1', () => {
  assert.ok(isS3Path('s3a://b/k') && isS3Path('S3://b/k') && !isS3Path('/tmp/s3://x') && !isS3Path('file:/x'));
  assert.deepEqual(parseS3Path('s3://bucket/a/b.parquet'), { bucket: 'bucket', key: 'a/b.parquet' });
  assert.equal(normS3Path('s3a://bucket/a/'), 's3://bucket/a');
  assert.throws(() => parseS3Path('/local/file'), /expected an s3:\/\/bucket\/key path, found '\/local\/file'/);
  assert.equal(wantsPathStyle('http://127.0.0.1:9000', undefined), true);
  assert.equal(wantsPathStyle('http://localhost:9000', undefined), true);
  assert.equal(wantsPathStyle('https://s3.eu-west-1.amazonaws.com', undefined), false);
  assert.equal(wantsPathStyle('https://minio.example.com', '1'), true);
  assert.equal(wantsPathStyle(undefined, undefined), false);
});

test('S3FileIO: write, read whole and by range, size, exists, list (paged), delete; writeNew refuses to replace', { timeout: 300_000 }, async (t) => {
  if (!server) return t.skip('no S3 server (see the message above)');
  const io = new S3FileIO();
  const dir = prefix();
  await io.writeAtomic(`${dir}/a.txt`, 'hello, object storage');
  assert.equal(text(await io.readAll(`${dir}/a.txt`)), 'hello, object storage');
  const f = await io.open(`${dir}/a.txt`);
  assert.equal(await f.size(), 21);
  assert.equal(text(await f.read(7, 13)), 'object');
  assert.equal((await f.read(5, 5)).length, 0);
  await f.close();
  // writeAtomic replaces
  await io.writeAtomic(`${dir}/a.txt`, 'second');
  assert.equal(text(await io.readAll(`${dir}/a.txt`)), 'second');
  // writeNew: creates, then refuses to replace (EEXIST, the object unchanged)
  await io.writeNew(`${dir}/m/00001.metadata.json`, '{"v":1}');
  await assert.rejects(io.writeNew(`${dir}/m/00001.metadata.json`, '{"v":2}'), (e: unknown) => {
    assert.ok(e instanceof IoError);
    assert.equal(e.code, 'EEXIST');
    assert.match(e.message, new RegExp(`cannot create ${dir}/m/00001\\.metadata\\.json .*nothing written`));
    return true;
  });
  assert.equal(text(await io.readAll(`${dir}/m/00001.metadata.json`)), '{"v":1}');
  assert.equal(await io.exists(`${dir}/a.txt`), true);
  assert.equal(await io.exists(`${dir}/nope.txt`), false);
  // list: every object below the folder, in the form given, across pages (s3rver pages at 1000 keys)
  const many = 1010;
  for (let i = 0; i < many; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, many - i) }, (_, j) => io.writeAtomic(`${dir}/data/${String(i + j).padStart(5, '0')}.bin`, 'x')));
  }
  const listed = await io.list(`${dir}/data/`);
  assert.equal(listed.length, many);
  assert.ok(listed.every((l) => l.path.startsWith(`${dir}/data/`) && l.size === 1 && l.mtimeMs > 0));
  const top = await io.list(dir);
  assert.deepEqual(
    top.filter((l) => !l.path.includes('/data/')).map((l) => l.path).sort(),
    [`${dir}/a.txt`, `${dir}/m/00001.metadata.json`],
  );
  assert.deepEqual(await io.list(`${dir}/nothing-here`), []);
  // delete; a missing object is no error
  await io.delete(`${dir}/a.txt`);
  await io.delete(`${dir}/a.txt`);
  assert.equal(await io.exists(`${dir}/a.txt`), false);
});

test('S3FileIO: a missing object is ENOENT naming the operation and the s3:// path with the HTTP status', { timeout: 120_000 }, async (t) => {
  if (!server) return t.skip('no S3 server (see the message above)');
  const io = new S3FileIO();
  const p = `${prefix()}/missing.parquet`;
  for (const op of [() => io.readAll(p), async () => (await io.open(p)).size(), async () => (await io.open(p)).read(0, 4)]) {
    await assert.rejects(op(), (e: unknown) => {
      assert.ok(e instanceof IoError, String(e));
      assert.equal(e.code, 'ENOENT');
      assert.match(e.message, new RegExp(`^cannot (read|stat) ${p.replace(/[.]/g, '\\.')}: ENOENT \\(HTTP 404`));
      return true;
    });
  }
  // a bucket that does not exist: named, not retried into a hang
  const other = `s3://no-such-bucket-${Date.now()}/x`;
  await assert.rejects(io.readAll(other), (e: unknown) => e instanceof IoError && /HTTP 404/.test(e.message) && e.message.includes(other));
});

test('S3FileIO: above the part size a write is a multipart upload, read back byte for byte', { timeout: 300_000 }, async (t) => {
  if (!server) return t.skip('no S3 server (see the message above)');
  const part = 5 * 1024 * 1024; // S3's minimum part
  const io = new S3FileIO({ partBytes: part });
  const big = new Uint8Array(2 * part + 12345);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 13)) & 0xff;
  const p = `${prefix()}/big.bin`;
  const before = io.requests;
  await io.writeNew(p, big);
  // HEAD (absent), create, three parts, complete
  assert.equal(io.requests - before, 6);
  const back = await io.readAll(p);
  assert.equal(back.length, big.length);
  assert.ok(Buffer.from(back).equals(Buffer.from(big)), 'same bytes');
  const f = await io.open(p);
  assert.deepEqual([...(await f.read(part - 2, part + 2))], [...big.subarray(part - 2, part + 2)]);
});

test('S3FileIO through a proxy failing 30% of requests (500, 503, held, dropped): every operation succeeds by retrying', { timeout: 600_000 }, async (t) => {
  if (!server) return t.skip('no S3 server (see the message above)');
  const proxy = await faultProxy(server.port, { rate: 0.3, seed: 25 });
  try {
    // a held request is given up after 3 s (a request to s3rver takes milliseconds, even under load 16)
    const io = new S3FileIO({ endpoint: proxy.endpoint, timeoutMs: 3000, baseDelayMs: 20 });
    const dir = prefix();
    for (let i = 0; i < 12; i++) {
      await io.writeNew(`${dir}/f${i}.avro`, `content ${i}`);
      await io.writeAtomic(`${dir}/g${i}.txt`, `replaced ${i}`);
      assert.equal(text(await io.readAll(`${dir}/f${i}.avro`)), `content ${i}`);
      const f = await io.open(`${dir}/g${i}.txt`);
      assert.equal(text(await f.read(0, 8)), 'replaced');
      assert.equal(await io.exists(`${dir}/f${i}.avro`), true);
    }
    assert.equal((await io.list(dir)).length, 24);
    for (let i = 0; i < 12; i++) await io.delete(`${dir}/g${i}.txt`);
    assert.equal((await io.list(dir)).length, 12);
    const failed = Object.values(proxy.faults).reduce((a, b) => a + b, 0);
    assert.ok(failed >= 10, `the proxy failed ${failed} of ${proxy.requests} requests: ${JSON.stringify(proxy.faults)}`);
    for (const k of ['500', '503', 'hold', 'drop'] as const) assert.ok(proxy.faults[k] > 0, `some requests got '${k}': ${JSON.stringify(proxy.faults)}`);
  } finally {
    await proxy.close();
  }
});

test('S3FileIO: retries are bounded; the error names the operation, path, status, S3 code and attempts', { timeout: 300_000 }, async (t) => {
  if (!server) return t.skip('no S3 server (see the message above)');
  const proxy = await faultProxy(server.port, { rate: 1, seed: 1, maxRun: Number.MAX_SAFE_INTEGER, kinds: ['503'] });
  try {
    const io = new S3FileIO({ endpoint: proxy.endpoint, baseDelayMs: 5 });
    const p = `${prefix()}/x.parquet`;
    await assert.rejects(io.readAll(p), (e: unknown) => {
      assert.ok(e instanceof IoError);
      assert.equal(e.message, `cannot read ${p} (5 attempts): SlowDown (HTTP 503 SlowDown: injected by the test proxy)`);
      return true;
    });
    assert.equal(proxy.requests, 5);
  } finally {
    await proxy.close();
  }
});

test('a table in an S3 warehouse: a narrow lookup asks for the footer and the pages that hold it, never the whole data file', { timeout: 600_000 }, async (t) => {
  if (!server) return t.skip('no S3 server (see the message above)');
  const schema: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: 'id', required: true, type: { type: 'long' } },
      { id: 2, name: 'payload', required: false, type: { type: 'string' } },
    ],
  };
  const n = 120_000; // one row group of many 64 KB pages per column (the reader's first read is a 64 KB tail)
  const ids = Array.from({ length: n }, (_, i) => BigInt(i));
  const payloads = ids.map((_x, i) => `payload-${String(i).padStart(6, '0')}-${'x'.repeat(i % 17)}`);
  const warehouse = `${prefix()}/wh`;
  const writer = Lake.open(path.join(work.dir, 'lake'), { warehouse });
  const table = await writer.createTable({ namespace: ['p'], name: 'pages' }, schema);
  await table.append([{ fields: schema.fields, numRows: n, columns: [ids, payloads] }]);
  writer.close();
  const [file] = (await new S3FileIO().list(warehouse)).filter((o) => o.path.endsWith('.parquet'));
  assert.ok(file && file.size > 256 * 1024, `one data file of some size: ${file?.size}`);

  // the warehouse is recorded: a reader opens it without being told, through the proxy
  const proxy = await faultProxy(server.port, { rate: 0, seed: 1 });
  process.env.AWS_ENDPOINT_URL_S3 = proxy.endpoint;
  try {
    const reader = Lake.open(path.join(work.dir, 'lake'), { create: false });
    assert.equal(reader.warehouse, normS3Path(warehouse));
    const scan = (await reader.loadTable({ namespace: ['p'], name: 'pages' })).scan({ filter: and(ge('id', 30_000), lt('id', 30_100)), columns: ['id', 'payload'] });
    const rows = await scan.toArray();
    assert.deepEqual(rows.map((r) => r.id), ids.slice(30_000, 30_100));
    reader.close();
    const data = proxy.gets.filter((g) => g.path.endsWith('.parquet'));
    assert.ok(data.length >= 2 && data.every((g) => /^bytes=\d+-\d+$/.test(g.range)), `ranged GETs of the data file: ${JSON.stringify(data)}`);
    const asked = data.reduce((a, g) => {
      const [x, y] = g.range.slice('bytes='.length).split('-').map(Number);
      return a + y! - x! + 1;
    }, 0);
    assert.ok(asked < file.size / 2, `asked ${asked} of the data file's ${file.size} bytes`);
    t.diagnostic(`data file: ${file.size} bytes; asked ${asked} in ${data.length} ranged GETs; proxy served ${proxy.bytesServed} bytes in all`);
  } finally {
    process.env.AWS_ENDPOINT_URL_S3 = server.env.AWS_ENDPOINT_URL_S3!;
    await proxy.close();
  }
});

test('a lake writes and deletes in object storage only below its warehouse; a lake without one writes no s3:// path', { timeout: 120_000 }, async () => {
  // refused before any request: no server needed
  const withWarehouse = Lake.open(path.join(work.dir, 'confined'), { warehouse: `s3://${BUCKET}/mine` });
  try {
    assert.equal(withWarehouse.tableLocation({ namespace: ['a', 'b'], name: 't' }), `s3://${BUCKET}/mine/a/b/t`);
    assert.equal(withWarehouse.io.inside(`s3a://${BUCKET}/mine/a/x.parquet`), true);
    assert.equal(withWarehouse.io.inside(`s3://${BUCKET}/minefield/x.parquet`), false);
    await assert.rejects(withWarehouse.io.writeNew(`s3://${BUCKET}/minefield/x.parquet`, 'x'), /refusing to write s3:\/\/mimir-test\/minefield\/x\.parquet: it is outside the lake root s3:\/\/mimir-test\/mine.*nothing written/);
    await assert.rejects(withWarehouse.io.delete(`s3://other/mine/x.parquet`), /refusing to delete s3:\/\/other\/mine\/x\.parquet.*nothing deleted/);
  } finally {
    withWarehouse.close();
  }
  const local = Lake.open(path.join(work.dir, 'plain'));
  try {
    await assert.rejects(local.io.writeAtomic(`s3://${BUCKET}/x.avro`, 'x'), /refusing to write s3:\/\/mimir-test\/x\.avro: it is outside the lake root/);
    assert.throws(() => Lake.open(path.join(work.dir, 'bad'), { warehouse: '/tmp/elsewhere' }), /--warehouse: expected an object-storage prefix s3:\/\/bucket\/prefix, found '\/tmp\/elsewhere'.*nothing opened/);
    assert.equal(existsSync(path.join(work.dir, 'bad')), false, 'nothing made');
  } finally {
    local.close();
  }
});
