// Per-krate row counts and order-independent content digests of event rows.
//
// A row's digest is a 64-bit hash of its canonical encoding: every non-null
// column, ordered by field id, each value tagged by its form (so "1" the string
// and 1 the number differ). A krate's digest is the sum mod 2^64 of its rows'
// digests, so it depends only on the multiset of rows — never on file layout,
// batch boundaries or order — and a duplicated row changes it. Null columns are
// left out of the encoding, so a column added by schema evolution (read as null
// from older files) does not change the digest of older rows.
//
// Read-only: nothing here writes. Memory is bounded by the number of krates,
// never by the number of rows (batches are streamed).
import type { Batch, Value } from '../lake/spec/types.ts';
import { COL_KRATE, COL_REPO } from './schema.ts';

export interface KrateStat {
  rows: bigint;
  /** Sum mod 2^64 of the rows' 64-bit digests. */
  digest: bigint;
}
export type KrateStats = Map<string, KrateStat>;

export interface StatsComparison {
  equal: boolean;
  totalExpected: bigint;
  totalHave: bigint;
  /** Krates whose count or digest differ (sorted), including ones only one side has. */
  differing: string[];
}

const TWO32 = 0x1_0000_0000;
const MASK64 = (1n << 64n) - 1n;

/** 64-bit hash of a string as two unsigned 32-bit halves (cyrb53-style mixing, both lanes kept). */
export function hash64(s: string): [hi: number, lo: number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h2 >>> 0, h1 >>> 0];
}

/** Canonical text form of one value: tagged, length-prefixed where it could be ambiguous. */
export function encodeValue(v: Value): string {
  if (v === null) return 'z';
  switch (typeof v) {
    case 'string':
      return `s${v.length}:${v}`;
    case 'bigint':
      return `i${v}`;
    case 'number':
      if (Number.isInteger(v)) return `i${v}`;
      return Number.isNaN(v) ? 'fNaN' : `f${Object.is(v, -0) ? '-0' : String(v)}`;
    case 'boolean':
      return v ? 't' : 'F';
  }
  if (v instanceof Uint8Array) return `x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')};`;
  if (Array.isArray(v)) return `[${v.map(encodeValue).join(',')}]`;
  if (v instanceof Map) {
    const entries = [...v.entries()].map(([k, x]) => `${encodeValue(k)}=${encodeValue(x)}`).sort();
    return `{${entries.join(',')}}`;
  }
  const keys = Object.keys(v).sort();
  return `(${keys.map((k) => `${k.length}:${k}=${encodeValue(v[k]!)}`).join(',')})`;
}

/** Canonical encoding of row `i` of a batch: its non-null columns by field id. */
export function rowEncoding(b: Batch, i: number, order: number[] = fieldOrder(b)): string {
  let s = '';
  for (const c of order) {
    const v = b.columns[c]![i];
    if (v === null || v === undefined) continue;
    s += `${b.fields[c]!.id}|${encodeValue(v)}\u0001`;
  }
  return s;
}

/** Column indexes of a batch ordered by field id. */
export function fieldOrder(b: Batch): number[] {
  return b.fields.map((_, c) => c).sort((x, y) => b.fields[x]!.id - b.fields[y]!.id);
}

/** The 64-bit digest of row `i` of a batch. */
export function rowDigest(b: Batch, i: number, order?: number[]): bigint {
  const [hi, lo] = hash64(rowEncoding(b, i, order));
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Running per-krate counts and digests (numbers internally, carried into 32-bit halves). */
export class StatsAccumulator {
  private readonly acc = new Map<string, { rows: number; hi: number; lo: number }>();

  /** Add the rows of a batch (only those whose repo equals `repo` when given). */
  add(b: Batch, repo?: string): void {
    if (b.numRows === 0) return;
    const kc = b.fields.findIndex((f) => f.name === COL_KRATE);
    if (kc < 0) throw new Error(`digest: a batch without column ${COL_KRATE} (columns: ${b.fields.map((f) => f.name).join(', ')})`);
    const rc = repo === undefined ? -1 : b.fields.findIndex((f) => f.name === COL_REPO);
    if (repo !== undefined && rc < 0) throw new Error(`digest: a batch without column ${COL_REPO} cannot be filtered by repo`);
    const order = fieldOrder(b);
    const krates = b.columns[kc]!;
    const repos = rc >= 0 ? b.columns[rc]! : undefined;
    for (let i = 0; i < b.numRows; i++) {
      if (repos && repos[i] !== repo) continue;
      const k = String(krates[i] ?? '');
      let a = this.acc.get(k);
      if (!a) this.acc.set(k, (a = { rows: 0, hi: 0, lo: 0 }));
      const [hi, lo] = hash64(rowEncoding(b, i, order));
      a.rows++;
      let l = a.lo + lo;
      let carry = 0;
      if (l >= TWO32) {
        l -= TWO32;
        carry = 1;
      }
      a.lo = l;
      a.hi = (a.hi + hi + carry) % TWO32;
    }
  }

  stats(): KrateStats {
    const out: KrateStats = new Map();
    for (const [k, a] of this.acc) out.set(k, { rows: BigInt(a.rows), digest: ((BigInt(a.hi) << 32n) | BigInt(a.lo)) & MASK64 });
    return out;
  }
}

/** Per-krate counts and digests of a stream of batches (rows of `opts.repo` only, when given). */
export async function krateStats(batches: AsyncIterable<Batch>, opts: { repo?: string } = {}): Promise<KrateStats> {
  const acc = new StatsAccumulator();
  for await (const b of batches) acc.add(b, opts.repo);
  return acc.stats();
}

/** Merge stats (sums counts and digests mod 2^64), e.g. the stats of two disjoint row sets. */
export function mergeStats(a: KrateStats, b: KrateStats): KrateStats {
  const out: KrateStats = new Map();
  for (const m of [a, b]) {
    for (const [k, s] of m) {
      const p = out.get(k);
      out.set(k, p ? { rows: p.rows + s.rows, digest: (p.digest + s.digest) & MASK64 } : { ...s });
    }
  }
  return out;
}

export function totalRows(s: KrateStats): bigint {
  let t = 0n;
  for (const v of s.values()) t += v.rows;
  return t;
}

/** Compare per-krate counts and digests; a krate with zero rows counts as absent. */
export function compareStats(expected: KrateStats, have: KrateStats): StatsComparison {
  const keys = new Set<string>();
  for (const [k, v] of expected) if (v.rows > 0n) keys.add(k);
  for (const [k, v] of have) if (v.rows > 0n) keys.add(k);
  const differing: string[] = [];
  for (const k of keys) {
    const e = expected.get(k);
    const h = have.get(k);
    if (!e || !h || e.rows !== h.rows || e.digest !== h.digest) differing.push(k);
  }
  differing.sort();
  return { equal: differing.length === 0, totalExpected: totalRows(expected), totalHave: totalRows(have), differing };
}

/** Krates with at least one row. */
export function ownerCount(s: KrateStats): number {
  let n = 0;
  for (const v of s.values()) if (v.rows > 0n) n++;
  return n;
}
