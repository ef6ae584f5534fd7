// The process's zstd (src/lake/codec/zstd.ts): decompression into a known
// size (a Parquet page: one kept context and kept buffers) gives the bytes
// back for pages small and large, many in a row (buffers grow and are reused),
// content sizes absent or smaller than the size given, several frames; data
// that does not fit the size given, or is not zstd, takes the general path
// and its errors — as before the kept context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { zstdCompress, zstdDecompress } from '../../src/lake/codec/zstd.ts';

const text = (n: number, seed: number): Uint8Array => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = 97 + ((i * 7 + seed + (i >> 5)) % 23);
  return b;
};

test('zstd: sized decompression returns every page, small and large, many in a row', () => {
  const sizes = [0, 1, 100, 8 * 1024, 70 * 1024, 3, 1 << 20, 5 * (1 << 20), 512];
  for (let round = 0; round < 3; round++) {
    for (const [k, n] of sizes.entries()) {
      const plain = k % 2 === 0 ? text(n, k + round) : new Uint8Array(randomBytes(n));
      const frame = zstdCompress(plain);
      assert.deepEqual(zstdDecompress(frame, n, 'page'), plain, `${n} bytes, round ${round}`);
      // a size larger than the content (an upper bound): the content, not the bound
      assert.deepEqual(zstdDecompress(frame, n + 1000, 'page'), plain, `${n} bytes within a bound of ${n + 1000}`);
    }
  }
});

test('zstd: two frames back to back decompress into their joined bytes', () => {
  const a = text(5000, 1);
  const b = text(7000, 2);
  const joined = new Uint8Array([...zstdCompress(a), ...zstdCompress(b)]);
  assert.deepEqual(zstdDecompress(joined, a.length + b.length, 'two frames'), new Uint8Array([...a, ...b]));
});

test('zstd: content larger than the size given, or no zstd at all: the general path answers as before', () => {
  const plain = text(50_000, 3);
  const frame = zstdCompress(plain);
  // the frame says 50,000 bytes: the general path sizes its output by the frame, as it always did
  assert.deepEqual(zstdDecompress(frame, 10, 'short page'), plain);
  assert.throws(() => zstdDecompress(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 100, 'Parquet zstd page'), /^Error: Parquet zstd page: invalid zstd data/);
  // and the kept context still works after a failure
  assert.deepEqual(zstdDecompress(frame, plain.length, 'page'), plain);
});
