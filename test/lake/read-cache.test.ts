// The opt-in read cache (src/lake/io/read-cache.ts): with it, a reader parses
// each metadata file, manifest list, manifest and Parquet footer once, and
// answers stay exactly those of a reader without it; it holds no more than
// its bound, never keeps a failed read, and a FileIO without it caches nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import { enableReadCache, readCacheOf, ReadCache } from '../../src/lake/io/read-cache.ts';
import type { Schema } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-read-cache-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'name', required: false, type: { type: 'string' } },
  ],
};

async function lakeWithRows(name: string): Promise<string> {
  const dir = path.join(work.dir, name);
  const lake = Lake.open(dir);
  const t = await lake.createTable({ namespace: ['c'], name: 't' }, schema);
  for (let k = 0; k < 3; k++) {
    const ids = Array.from({ length: 100 }, (_x, i) => BigInt(k * 100 + i));
    await t.append([{ fields: schema.fields, numRows: 100, columns: [ids, ids.map((i) => `n${i}`)] }]);
  }
  lake.close();
  return dir;
}

test('read cache: scans through a cached FileIO parse each file once and give the uncached rows', async () => {
  const dir = await lakeWithRows('same');
  const plain = Lake.open(dir);
  const cached = Lake.open(dir);
  try {
    assert.equal(readCacheOf(plain.io), undefined, 'nothing is cached unless a reader asks');
    const cache = enableReadCache(cached.io);
    assert.equal(enableReadCache(cached.io), cache, 'one cache per FileIO');
    const id = { namespace: ['c'], name: 't' };
    const want = await (await plain.loadTable(id)).scan({ filter: eq('name', 'n150') }).toArray();
    assert.equal(want.length, 1);
    for (let round = 0; round < 3; round++) {
      const got = await (await cached.loadTable(id)).scan({ filter: eq('name', 'n150') }).toArray();
      assert.deepEqual(got, want);
      const all = await (await cached.loadTable(id)).scan().toArray();
      assert.equal(all.length, 300);
    }
    // first round: misses for metadata, list, manifests, footers; later rounds: hits only
    const misses = cache.misses;
    await (await cached.loadTable(id)).scan().toArray();
    assert.equal(cache.misses, misses, 'a table read again is read from the cache');
    assert.ok(cache.hits > misses, `hits ${cache.hits} > misses ${misses}`);
  } finally {
    plain.close();
    cached.close();
  }
});

test('read cache: stays within its bound (least recently used out) and keeps no failed read', async () => {
  const c = new ReadCache(10_000);
  let loads = 0;
  const load = (bytes: number) => async () => {
    loads++;
    return { value: bytes, fileBytes: bytes };
  };
  for (let i = 0; i < 20; i++) assert.equal(await c.get(`f${i}`, load(1000)), 1000);
  assert.ok(c.usedBytes <= c.maxBytes, `${c.usedBytes} <= ${c.maxBytes}`);
  assert.equal(loads, 20);
  await c.get('f19', load(1000));
  assert.equal(loads, 20, 'the newest entry is still there');
  await c.get('f0', load(1000));
  assert.equal(loads, 21, 'the oldest went first');

  const missing = path.join(work.dir, 'late.bin');
  const { readFile } = await import('node:fs/promises');
  const read = async () => {
    const b = await readFile(missing);
    return { value: b.toString(), fileBytes: b.length };
  };
  await assert.rejects(c.get('late', read));
  await assert.rejects(c.get('late', read), 'a failed read is tried again, not remembered');
  writeFileSync(missing, 'here');
  assert.equal(await c.get('late', read), 'here');
});

test('read cache: reads that start together on one file (a cached footer leaves no read first) share one handle, closed by close()', async () => {
  const { readdirSync } = await import('node:fs');
  const { LocalFileIO } = await import('../../src/lake/io/fileio.ts');
  const file = path.join(work.dir, 'together.bin');
  writeFileSync(file, Buffer.alloc(64 * 1024, 7));
  const fds = (): number => readdirSync('/proc/self/fd').length;
  const before = fds();
  const input = await new LocalFileIO().open(file);
  const parts = await Promise.all(Array.from({ length: 8 }, (_x, i) => input.read(i * 1024, (i + 1) * 1024)));
  assert.ok(parts.every((p) => p.length === 1024 && p[0] === 7));
  assert.equal(fds(), before + 1, 'eight reads started together opened the file once');
  await input.close();
  assert.equal(fds(), before, 'close() closed it');
});
