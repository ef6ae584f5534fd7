// I/O errors name the operation and the file: a full disk (a 256 KiB tmpfs,
// when this process may mount one) fails an append with the data file that
// could not be written and ENOSPC, leaving no temporary file and no commit;
// a missing file, a folder read as a file and a write or delete outside the
// lake name theirs too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Lake } from '../../src/lake/lake.ts';
import { LocalFileIO, IoError, enableSyncReads } from '../../src/lake/io/fileio.ts';
import { LakeFileIO, OutsideLakeError } from '../../src/lake/io/rooted.ts';
import type { Batch, Schema } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-io-errors-');
const mnt = path.join(work.dir, 'full');
mkdirSync(mnt);
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt]).status === 0;
after(() => {
  if (mounted && spawnSync('umount', [mnt]).status !== 0) spawnSync('umount', ['-l', mnt]);
  work.cleanup();
});

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'k', required: true, type: { type: 'string' } },
    { id: 2, name: 'blob', required: true, type: { type: 'string' } },
  ],
};

function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f));
}

test('io: a full disk fails the append naming the data file and ENOSPC; no temporary file, nothing committed', { skip: mounted ? false : 'cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)' }, async () => {
  const lake = Lake.open(path.join(mnt, 'lake'));
  try {
  const t = await lake.createTable({ namespace: ['io'], name: 't' }, schema, { properties: { 'write.parquet.compression-codec': 'uncompressed' } });
  const gen = lake.catalog.pointerGeneration();
  const n = 200;
  const batch: Batch = {
    fields: schema.fields,
    numRows: n,
    columns: [Array.from({ length: n }, (_, i) => `k${i}`), Array.from({ length: n }, () => randomBytes(1500).toString('base64'))],
  };
  await assert.rejects(t.append([batch]), (e: unknown) => {
    assert.ok(e instanceof IoError, String(e));
    assert.equal((e as IoError).code, 'ENOSPC');
    assert.match((e as Error).message, /^cannot write \S+\/io\/t\/data\/\d{5}-[0-9a-f-]{36}\.parquet \(\d+ bytes, through its temporary file \.\S+\.tmp\): ENOSPC \(no space left on device\)/);
    return true;
  });
  assert.equal(lake.catalog.pointerGeneration(), gen, 'nothing committed');
  assert.deepEqual(filesUnder(path.join(mnt, 'lake', 'io', 't')).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
  } finally {
    lake.close();
  }
});

test('io: reads, writes and deletes name the operation and the path', async () => {
  const io = new LocalFileIO();
  const missing = path.join(work.dir, 'nope', 'x.avro');
  await assert.rejects(io.readAll(missing), (e: unknown) => e instanceof IoError && e.code === 'ENOENT' && e.message === `cannot read ${missing}: ENOENT (no such file or directory)`);
  const folder = path.join(work.dir, 'folder');
  mkdirSync(folder);
  await assert.rejects(io.readAll(folder), (e: unknown) => e instanceof IoError && e.message === `cannot read ${folder}: EISDIR (illegal operation on a directory)`);
  const file = path.join(work.dir, 'plain');
  writeFileSync(file, 'x');
  await assert.rejects(io.writeNew(path.join(file, 'under-a-file'), 'y'), (e: unknown) => e instanceof IoError && new RegExp(`^cannot create the folder ${file}: (EEXIST|ENOTDIR)`).test(e.message));
  await assert.rejects(io.writeNew(file, 'y'), (e: unknown) => e instanceof IoError && e.code === 'EEXIST' && e.message.startsWith(`cannot create ${file}`));

  const lakeIo = new LakeFileIO(path.join(work.dir, 'lake'), [path.join(work.dir, 'elsewhere')]);
  await assert.rejects(lakeIo.writeNew(`file://${path.join(work.dir, 'outside.txt')}`, 'z'), (e: unknown) => e instanceof OutsideLakeError && /refusing to write file:\/\/\S+outside\.txt \(\S+\): it is outside the lake root .* nothing written/.test((e as Error).message));
  await assert.rejects(lakeIo.delete(file), (e: unknown) => e instanceof OutsideLakeError && /refusing to delete .* nothing deleted/.test((e as Error).message));
  // a recorded-root path maps into the lake, and writes there
  await lakeIo.writeNew(`file://${path.join(work.dir, 'elsewhere', 'ns', 't', 'f.txt')}`, 'ok');
  assert.deepEqual(readdirSync(path.join(work.dir, 'lake', 'ns', 't')), ['f.txt']);
});

test('io: synchronous reads (a CLI question\'s) give the same bytes and the same errors, and stay confined', async () => {
  const file = path.join(work.dir, 'sync-bytes');
  const bytes = randomBytes(100_000);
  writeFileSync(file, bytes);
  const missing = path.join(work.dir, 'nope', 'y.avro');
  const folder = path.join(work.dir, 'sync-folder');
  mkdirSync(folder);
  const asyncIo = new LocalFileIO();
  const syncIo = new LocalFileIO();
  enableSyncReads(syncIo);
  assert.equal(syncIo.syncReads, true);
  for (const io of [asyncIo, syncIo]) {
    assert.deepEqual(await io.readAll(file), new Uint8Array(bytes));
    const f = await io.open(file);
    // reads that start together share one open; ranges, the size, a read past the end
    const [size, a, b] = await Promise.all([f.size(), f.read(0, 10), f.read(99_990, 100_000)]);
    assert.equal(size, 100_000);
    assert.deepEqual(a, new Uint8Array(bytes.subarray(0, 10)));
    assert.deepEqual(b, new Uint8Array(bytes.subarray(99_990)));
    await assert.rejects(f.read(99_995, 100_005), /short read at 100000 \(wanted 10 bytes from 99995; the file ends before\)/);
    await f.close();
    await assert.rejects(io.readAll(missing), (e: unknown) => e instanceof IoError && e.code === 'ENOENT' && e.message === `cannot read ${missing}: ENOENT (no such file or directory)`);
    await assert.rejects(io.readAll(folder), (e: unknown) => e instanceof IoError && e.message === `cannot read ${folder}: EISDIR (illegal operation on a directory)`);
    const g = await io.open(missing);
    await assert.rejects(g.read(0, 1), (e: unknown) => e instanceof IoError && e.code === 'ENOENT' && e.message.startsWith(`cannot open for reading ${missing}`));
  }
  // a lake's IO: synchronous reads through it, still refused outside the root when confined
  const lakeIo = new LakeFileIO(path.join(work.dir, 'sync-lake'), [], undefined, { confineReads: true });
  enableSyncReads(lakeIo);
  await assert.rejects(lakeIo.readAll(file), (e: unknown) => e instanceof OutsideLakeError);
  mkdirSync(path.join(work.dir, 'sync-lake'), { recursive: true });
  writeFileSync(path.join(work.dir, 'sync-lake', 'in.bin'), bytes);
  assert.deepEqual(await lakeIo.readAll(path.join(work.dir, 'sync-lake', 'in.bin')), new Uint8Array(bytes));
});
