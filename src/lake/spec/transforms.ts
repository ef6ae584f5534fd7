// Partition transforms (spec "Partition Transforms", App. B): parse and print
// their names, compute their result types, and apply them to values. Pure
// functions, no I/O. Invariant: results match the reference implementation
// bit for bit (bucket hashes the spec's bytes with murmur3_x86_32 seed 0;
// truncate and the temporal transforms floor toward negative infinity), so a
// partition value we compute equals the one Java or PyIceberg wrote.

import type { PrimitiveType, TransformName, Value } from './types.ts';
import { bigintToBytesBE, civilFromDays, decimalToUnscaled, unscaledToDecimal, uuidToBytes } from './values.ts';

// ---- names ------------------------------------------------------------------

/** A transform from its JSON text; anything not recognised is `{kind: 'unknown', text}`. */
export function parseTransform(text: string): TransformName {
  const s = text.trim().toLowerCase();
  switch (s) {
    case 'identity':
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'void':
      return { kind: s };
  }
  const m = /^(bucket|truncate)\[\s*(\d+)\s*\]$/.exec(s);
  if (m) {
    const n = Number(m[2]);
    if (n > 0 && n <= 2147483647) return m[1] === 'bucket' ? { kind: 'bucket', n } : { kind: 'truncate', width: n };
  }
  return { kind: 'unknown', text };
}

export function transformToString(t: TransformName): string {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.n}]`;
    case 'truncate':
      return `truncate[${t.width}]`;
    case 'unknown':
      return t.text;
    default:
      return t.kind;
  }
}

/** Type of a transform's output for a source column of type `source`. An unknown
 * transform yields type `unknown` (its values cannot be interpreted). */
export function transformResultType(t: TransformName, source: PrimitiveType): PrimitiveType {
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
      return source;
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return { type: 'int' };
    case 'day':
      return { type: 'date' };
    case 'unknown':
      return { type: 'unknown' };
  }
}

/** Whether the transform may be applied to a source of this type (Java's canTransform). */
export function canTransform(t: TransformName, source: PrimitiveType): boolean {
  const s = source.type;
  switch (t.kind) {
    case 'identity':
      return s !== 'unknown';
    case 'void':
      return true;
    case 'bucket':
      return !['boolean', 'float', 'double', 'unknown'].includes(s);
    case 'truncate':
      return ['int', 'long', 'decimal', 'string', 'binary'].includes(s);
    case 'year':
    case 'month':
    case 'day':
      return ['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'].includes(s);
    case 'hour':
      return ['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'].includes(s);
    case 'unknown':
      return false;
  }
}

// ---- murmur3 ----------------------------------------------------------------

/** MurmurHash3 x86 32-bit of `bytes`, as a signed 32-bit integer (like Java's Guava). */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed | 0;
  const n = bytes.length;
  const blocks = n & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = n & 3;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[blocks + 2]! << 16;
    if (tail >= 2) k ^= bytes[blocks + 1]! << 8;
    k ^= bytes[blocks]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

const longBytes = (x: bigint): Uint8Array => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, x), true);
  return out;
};

const floorDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
};

const toBig = (v: Value, what: string): bigint => {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new TypeError(`${what}: expected an integer value, found ${String(v)}`);
};

/** The bytes the spec hashes for a value of `source` type (App. B). */
export function bucketHashBytes(source: PrimitiveType, v: Value): Uint8Array {
  switch (source.type) {
    case 'int':
    case 'long':
    case 'date':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return longBytes(toBig(v, 'bucket'));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return longBytes(floorDiv(toBig(v, 'bucket'), 1000n));
    case 'boolean':
      return longBytes(v ? 1n : 0n);
    case 'float':
    case 'double': {
      // hashDouble: the IEEE bits of the value widened to double; -0.0 hashes as 0.0
      const out = new Uint8Array(8);
      const x = v as number;
      new DataView(out.buffer).setFloat64(0, x === 0 ? 0 : Number.isNaN(x) ? NaN : x, true);
      return out;
    }
    case 'string':
      return new TextEncoder().encode(v as string);
    case 'uuid':
      return uuidToBytes(v as string);
    case 'decimal':
      return bigintToBytesBE(decimalToUnscaled(v as string, source.scale));
    case 'fixed':
    case 'binary':
      return v as Uint8Array;
    case 'unknown':
      throw new TypeError('bucket: cannot hash a value of type unknown');
  }
}

// ---- application ------------------------------------------------------------

const MICROS_PER_HOUR = 3_600_000_000n;
const MICROS_PER_DAY = 86_400_000_000n;

/** Days since epoch of a date or timestamp value (floored for pre-epoch instants). */
function epochDays(source: PrimitiveType, v: Value): number {
  if (source.type === 'date') return v as number;
  const perDay = source.type === 'timestamp_ns' || source.type === 'timestamptz_ns' ? MICROS_PER_DAY * 1000n : MICROS_PER_DAY;
  return Number(floorDiv(toBig(v, 'day'), perDay));
}

function truncateString(s: string, w: number): string {
  let cps = 0;
  let i = 0;
  while (i < s.length && cps < w) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
    cps++;
  }
  return s.slice(0, i);
}

/** Apply a transform to one value of `source` type. null in, null out; void gives null. */
export function applyTransform(t: TransformName, source: PrimitiveType, v: Value): Value {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'identity':
      return v;
    case 'void':
      return null;
    case 'bucket':
      return (murmur3_32(bucketHashBytes(source, v)) & 0x7fffffff) % t.n;
    case 'truncate': {
      const w = t.width;
      switch (source.type) {
        case 'int': {
          const x = v as number;
          return x - (((x % w) + w) % w);
        }
        case 'long': {
          const x = toBig(v, 'truncate');
          const W = BigInt(w);
          return x - (((x % W) + W) % W);
        }
        case 'decimal': {
          const u = decimalToUnscaled(v as string, source.scale);
          const W = BigInt(w);
          return unscaledToDecimal(u - (((u % W) + W) % W), source.scale);
        }
        case 'string':
          return truncateString(v as string, w);
        case 'binary':
        case 'fixed': {
          const b = v as Uint8Array;
          return b.length <= w ? b : b.slice(0, w);
        }
        default:
          throw new TypeError(`truncate[${w}] cannot be applied to type ${source.type}`);
      }
    }
    case 'year':
    case 'month':
    case 'day': {
      if (!canTransform(t, source)) throw new TypeError(`${t.kind} cannot be applied to type ${source.type}`);
      const days = epochDays(source, v);
      if (t.kind === 'day') return days;
      const { y, m } = civilFromDays(days);
      return t.kind === 'year' ? y - 1970 : (y - 1970) * 12 + (m - 1);
    }
    case 'hour': {
      if (!canTransform(t, source)) throw new TypeError(`hour cannot be applied to type ${source.type}`);
      const per = source.type === 'timestamp_ns' || source.type === 'timestamptz_ns' ? MICROS_PER_HOUR * 1000n : MICROS_PER_HOUR;
      return Number(floorDiv(toBig(v, 'hour'), per));
    }
    case 'unknown':
      throw new TypeError(`cannot apply unknown transform ${JSON.stringify(t.text)}`);
  }
}
