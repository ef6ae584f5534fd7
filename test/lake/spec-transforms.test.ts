// Partition transforms: spec hash vectors, truncate and temporal results, names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyTransform,
  bucketHashBytes,
  murmur3_32,
  parseTransform,
  transformResultType,
  transformToString,
} from '../../src/lake/spec/transforms.ts';
import { coerceValue } from '../../src/lake/spec/values.ts';
import type { PrimitiveType, TransformName, Value } from '../../src/lake/spec/types.ts';

const hash = (t: PrimitiveType, v: Value): number => murmur3_32(bucketHashBytes(t, v));
const ts = (s: string, t: PrimitiveType = { type: 'timestamp' }): Value => coerceValue(t, s, s);

test('transforms: bucket hashes reproduce the spec App. B vectors', () => {
  assert.equal(hash({ type: 'int' }, 34), 2017239379);
  assert.equal(hash({ type: 'long' }, 34n), 2017239379);
  assert.equal(hash({ type: 'decimal', precision: 4, scale: 2 }, '14.20'), -500754589);
  assert.equal(hash({ type: 'date' }, coerceValue({ type: 'date' }, '2017-11-16', 'd')), -653330422);
  assert.equal(hash({ type: 'time' }, coerceValue({ type: 'time' }, '22:31:08', 't')), -662762989);
  assert.equal(hash({ type: 'timestamp' }, ts('2017-11-16T22:31:08')), -2047944441);
  assert.equal(hash({ type: 'timestamptz' }, ts('2017-11-16T14:31:08-08:00', { type: 'timestamptz' })), -2047944441);
  assert.equal(hash({ type: 'timestamp_ns' }, ts('2017-11-16T22:31:08.000000001', { type: 'timestamp_ns' })), -2047944441);
  assert.equal(hash({ type: 'string' }, 'iceberg'), 1210000089);
  assert.equal(hash({ type: 'uuid' }, 'f79c3e09-677c-4bbd-a479-3f349cb785e7'), 1488055340);
  assert.equal(hash({ type: 'fixed', length: 4 }, Uint8Array.of(0, 1, 2, 3)), -188683207);
  assert.equal(hash({ type: 'binary' }, Uint8Array.of(0, 1, 2, 3)), -188683207);
});

test('transforms: murmur3 handles every tail length and a seed', () => {
  // reference values of MurmurHash3_x86_32 (seed 0 unless given)
  assert.equal(murmur3_32(new Uint8Array(0)), 0);
  assert.equal(murmur3_32(new Uint8Array(0), 1), 0x514e28b7);
  assert.equal(murmur3_32(new TextEncoder().encode('a')) >>> 0, 0x3c2569b2);
  assert.equal(murmur3_32(new TextEncoder().encode('ab')) >>> 0, 0x9bbfd75f);
  assert.equal(murmur3_32(new TextEncoder().encode('abc')) >>> 0, 0xb3dd93fa);
  assert.equal(murmur3_32(new TextEncoder().encode('abcd')) >>> 0, 0x43ed676a);
});

test('transforms: bucket[N] is the non-negative hash modulo N (rename_column fixture ids)', () => {
  const b4: TransformName = { kind: 'bucket', n: 4 };
  assert.deepEqual([1, 2, 3, 4].map((i) => applyTransform(b4, { type: 'int' }, i)), [0, 0, 3, 2]);
  assert.equal(applyTransform({ kind: 'bucket', n: 100 }, { type: 'string' }, 'iceberg'), 1210000089 % 100);
  assert.equal(applyTransform({ kind: 'bucket', n: 100 }, { type: 'decimal', precision: 4, scale: 2 }, '14.20'), (-500754589 & 0x7fffffff) % 100);
  assert.equal(applyTransform(b4, { type: 'int' }, null), null);
});

test('transforms: truncate floors numbers and cuts strings by code point', () => {
  const t10: TransformName = { kind: 'truncate', width: 10 };
  assert.equal(applyTransform(t10, { type: 'int' }, 1), 0);
  assert.equal(applyTransform(t10, { type: 'int' }, -1), -10);
  assert.equal(applyTransform(t10, { type: 'int' }, -10), -10);
  assert.equal(applyTransform(t10, { type: 'long' }, 15n), 10n);
  assert.equal(applyTransform(t10, { type: 'long' }, -1n), -10n);
  assert.equal(applyTransform({ kind: 'truncate', width: 50 }, { type: 'decimal', precision: 9, scale: 2 }, '10.65'), '10.50');
  assert.equal(applyTransform({ kind: 'truncate', width: 50 }, { type: 'decimal', precision: 9, scale: 2 }, '-0.05'), '-0.50');
  assert.equal(applyTransform({ kind: 'truncate', width: 3 }, { type: 'string' }, 'iceberg'), 'ice');
  assert.equal(applyTransform({ kind: 'truncate', width: 2 }, { type: 'string' }, '🐇🐇🐇'), '🐇🐇');
  assert.equal(applyTransform({ kind: 'truncate', width: 5 }, { type: 'string' }, 'ab'), 'ab');
  assert.deepEqual(applyTransform({ kind: 'truncate', width: 2 }, { type: 'binary' }, Uint8Array.of(1, 2, 3)), Uint8Array.of(1, 2));
  assert.equal(applyTransform(t10, { type: 'string' }, null), null);
});

test('transforms: year/month/day/hour count from the epoch and floor before it', () => {
  const at = (k: 'year' | 'month' | 'day' | 'hour', s: string, t: PrimitiveType = { type: 'timestamp' }): Value =>
    applyTransform({ kind: k }, t, ts(s, t));
  assert.equal(at('year', '2017-11-16T22:31:08'), 47);
  assert.equal(at('month', '2017-11-16T22:31:08'), 574);
  assert.equal(at('day', '2017-11-16T22:31:08'), 17486);
  assert.equal(at('hour', '2017-11-16T22:31:08'), 419686);
  assert.equal(at('year', '1969-12-31T23:59:00'), -1);
  assert.equal(at('month', '1969-12-31T23:59:00'), -1);
  assert.equal(at('day', '1969-12-31T23:59:00'), -1);
  assert.equal(at('hour', '1969-12-31T23:59:00'), -1);
  assert.equal(at('day', '2017-11-16T23:31:08-02:00', { type: 'timestamptz' }), 17487, 'tz values are in UTC');
  assert.equal(at('hour', '1970-01-01T01:00:00.000000001', { type: 'timestamp_ns' }), 1);
  const date = (k: 'year' | 'month' | 'day', s: string): Value => applyTransform({ kind: k }, { type: 'date' }, coerceValue({ type: 'date' }, s, s));
  assert.equal(date('year', '2022-01-01'), 52);
  assert.equal(date('month', '1969-01-31'), -12);
  assert.equal(date('day', '2022-01-01'), 18993);
  assert.throws(() => applyTransform({ kind: 'hour' }, { type: 'date' }, 1), /hour cannot be applied to type date/);
});

test('transforms: void gives null, unknown transforms parse but cannot be applied', () => {
  assert.equal(applyTransform({ kind: 'void' }, { type: 'int' }, 5), null);
  assert.equal(applyTransform({ kind: 'identity' }, { type: 'string' }, 'x'), 'x');
  const z = parseTransform('zorder');
  assert.deepEqual(z, { kind: 'unknown', text: 'zorder' });
  assert.throws(() => applyTransform(z, { type: 'int' }, 1), /cannot apply unknown transform "zorder"/);
});

test('transforms: names parse and print back; result types follow the spec', () => {
  for (const s of ['identity', 'bucket[16]', 'truncate[4]', 'year', 'month', 'day', 'hour', 'void', 'geo_hash[3]']) {
    assert.equal(transformToString(parseTransform(s)), s);
  }
  assert.deepEqual(parseTransform('bucket[ 8 ]'), { kind: 'bucket', n: 8 });
  assert.deepEqual(parseTransform('bucket[0]'), { kind: 'unknown', text: 'bucket[0]' });
  const src: PrimitiveType = { type: 'timestamptz' };
  assert.deepEqual(transformResultType({ kind: 'identity' }, src), src);
  assert.deepEqual(transformResultType({ kind: 'truncate', width: 3 }, { type: 'string' }), { type: 'string' });
  assert.deepEqual(transformResultType({ kind: 'bucket', n: 3 }, src), { type: 'int' });
  assert.deepEqual(transformResultType({ kind: 'year' }, src), { type: 'int' });
  assert.deepEqual(transformResultType({ kind: 'month' }, src), { type: 'int' });
  assert.deepEqual(transformResultType({ kind: 'hour' }, src), { type: 'int' });
  assert.deepEqual(transformResultType({ kind: 'day' }, src), { type: 'date' });
  assert.deepEqual(transformResultType({ kind: 'void' }, src), src);
});
