// Encodes columnar batches as one Iceberg Parquet data file (spec App. A
// mapping, notes §2) and computes the file's Iceberg metrics (notes §4).
//
// Invariant: every column and group that stands for an Iceberg field carries
// Parquet `field_id` = the Iceberg field id, so readers resolve columns by id;
// Iceberg-required fields are Parquet REQUIRED; the schema JSON is stored in
// key-value metadata `iceberg.schema`. Bounds are computed from the values
// themselves (never from Parquet statistics) in Iceberg's binary form.
// Top-level primitive columns carry a page index (column index: per-page
// min/max/null counts, on every such column or those `pageIndexColumns`
// names; offset index: page locations, on all) so readers can skip pages.
// A schema of top-level strings, integers and booleans only (every Mimir
// table) has its column chunks written by flat.ts, the same bytes
// hyparquet-writer makes at a fraction of its CPU; any other schema goes
// through hyparquet-writer. Footer and page indexes are hyparquet-writer's.
// Every page carries its CRC32 (checksum.ts), which readers check.
//
// Memory: batches are converted and handed to the encoder one row group at a
// time, so besides the output bytes only one row group of converted values is
// alive. Crash story: nothing is written to storage here; the caller stores
// the returned bytes (whole or nothing) through FileIO.
import { gzipSync } from 'node:zlib';
import { zstdCompress } from '../codec/zstd.ts';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Batch, IcebergType, NestedField, PrimitiveType, Schema, Value } from '../spec/types.ts';
import { schemaToJson } from '../spec/schema.ts';
import { compareBytes, compareStrings, decimalToUnscaled, toBinary, unscaledToDecimal, uuidToBytes } from '../spec/values.ts';
import { stringifyJson } from '../spec/json.ts';
import { writeFlatColumn, type FlatKind } from './flat.ts';
import { MIMIR_CREATED_BY, withPageChecksums, type WritePageHeader } from './checksum.ts';
import { writePageHeader } from 'hyparquet-writer/src/datapage.js';

// hyparquet-writer bundles its own hyparquet: take its types from its constructor
type WriterInit = ConstructorParameters<typeof ParquetWriter>[0];
type SchemaElement = WriterInit['schema'][number];
type CompressionCodec = NonNullable<WriterInit['codec']>;

export interface DataFileWriteOptions {
  /** Page compression. Default `zstd`, as Java and PyIceberg write (`write.parquet.compression-codec`). */
  codec?: 'zstd' | 'snappy' | 'gzip' | 'uncompressed';
  /**
   * Rows per row group. Default 65536 (64k): a reader holds one row group of
   * the projected columns in memory (about 13 MB at ~200 bytes a row), and this
   * writer holds one row group of converted values; row-group pruning skips in
   * finer steps, and it is still large enough for good compression (pages are
   * compressed one by one anyway) and a small footer.
   */
  rowGroupRows?: number;
  /** zstd level, default 3 (zstd's own default: fast, close to the best ratio for this data). */
  zstdLevel?: number;
  /**
   * Target uncompressed bytes of a data page (Iceberg's `write.parquet.page-size-bytes`).
   * Default 64 KiB; see DEFAULT_PAGE_BYTES.
   */
  pageBytes?: number;
  /**
   * Most rows a data page holds (Iceberg's `write.parquet.page-row-limit`):
   * a page is cut at `pageBytes` of estimated values or at this many rows,
   * whichever comes first. A lookup decodes the whole page its row falls in;
   * a dictionary-coded column's values count 4 bytes each, so without a cap a
   * page of small codes holds pageBytes / 4 rows (2,048 at 8 KiB) where the
   * same column written PLAIN holds a few hundred. Default: no cap. Taken by
   * the flat writer (every field a top-level primitive: all of Mimir's own
   * tables); other schemas go through hyparquet-writer, which has no such
   * limit, and ignore it.
   */
  pageRows?: number;
  /**
   * Largest dictionary a string column is written with (Iceberg's
   * `write.parquet.dict-size-bytes`): a column whose distinct values in a row
   * group take more is written PLAIN. A reader of one row decodes the whole
   * dictionary of each dictionary-encoded column it reads, so tables read by
   * point lookups keep dictionaries small. Default: no limit.
   */
  dictionaryBytes?: number;
  /**
   * The top-level columns that get a column index (per-page min/max, what a
   * filtered read prunes pages by); default every top-level primitive column.
   * Others keep their offset index (page locations) but no page bounds: worth
   * it for columns no query filters by, or whose pages all span the same
   * range (computing them is a comparison per value).
   */
  pageIndexColumns?: readonly string[];
  /**
   * Write every column through hyparquet-writer's generic column writer,
   * never flat.ts. For the check that flat.ts makes the same bytes
   * (test/lake/parquet-flat.test.ts); slower, nothing else differs.
   */
  genericWriter?: boolean;
}

export interface DataFileMetrics {
  recordCount: bigint;
  columnSizes: Map<number, bigint>;
  valueCounts: Map<number, bigint>;
  nullValueCounts: Map<number, bigint>;
  nanValueCounts: Map<number, bigint>;
  lowerBounds: Map<number, Uint8Array>;
  upperBounds: Map<number, Uint8Array>;
  splitOffsets: bigint[];
}

export const DEFAULT_ROW_GROUP_ROWS = 64 * 1024;
/** Code units at or above U+D800: where JS `<` on strings can disagree with UTF-8 byte order. */
const HIGH_UNITS = /[\ud800-\uffff]/;
/** Java's default metrics mode `truncate(16)`. */
const TRUNCATE = 16;


// ---- Parquet schema ------------------------------------------------------------

function decimalBytes(precision: number): number {
  // smallest n with 2^(8n-1) > 10^precision
  let n = 1;
  while (2n ** BigInt(8 * n - 1) <= 10n ** BigInt(precision)) n++;
  return n;
}

function primitiveElement(name: string, t: PrimitiveType, repetition: 'REQUIRED' | 'OPTIONAL', id: number): SchemaElement {
  const base = { name, repetition_type: repetition, field_id: id } as const;
  switch (t.type) {
    case 'boolean':
      return { ...base, type: 'BOOLEAN' };
    case 'int':
      return { ...base, type: 'INT32' };
    case 'long':
      return { ...base, type: 'INT64' };
    case 'float':
      return { ...base, type: 'FLOAT' };
    case 'double':
      return { ...base, type: 'DOUBLE' };
    case 'decimal': {
      const ann = {
        converted_type: 'DECIMAL',
        scale: t.scale,
        precision: t.precision,
        logical_type: { type: 'DECIMAL', scale: t.scale, precision: t.precision },
      } as const;
      if (t.precision <= 9) return { ...base, type: 'INT32', ...ann };
      if (t.precision <= 18) return { ...base, type: 'INT64', ...ann };
      return { ...base, type: 'FIXED_LEN_BYTE_ARRAY', type_length: decimalBytes(t.precision), ...ann };
    }
    case 'date':
      return { ...base, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } };
    case 'time':
      // TIME_MICROS as a converted type means adjusted-to-UTC, so only the logical type is set
      return { ...base, type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } };
    case 'timestamp':
      return { ...base, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } };
    case 'timestamptz':
      return {
        ...base,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      };
    case 'timestamp_ns':
      return { ...base, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' } };
    case 'timestamptz_ns':
      return { ...base, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } };
    case 'string':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
    case 'uuid':
      return { ...base, type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } };
    case 'fixed':
      return { ...base, type: 'FIXED_LEN_BYTE_ARRAY', type_length: t.length };
    case 'binary':
      return { ...base, type: 'BYTE_ARRAY' };
    case 'unknown':
      throw new TypeError(`field ${id} (${name}): type unknown cannot be written to Parquet (v3 only, always null)`);
  }
}

/** Preorder Parquet schema elements of one field (3-level lists and maps). */
function fieldElements(name: string, t: IcebergType, required: boolean, id: number, out: SchemaElement[]): void {
  const repetition = required ? 'REQUIRED' : 'OPTIONAL';
  if (t.type === 'struct') {
    out.push({ name, repetition_type: repetition, num_children: t.fields.length, field_id: id });
    for (const f of t.fields) fieldElements(f.name, f.type, f.required, f.id, out);
  } else if (t.type === 'list') {
    out.push({ name, repetition_type: repetition, num_children: 1, field_id: id, converted_type: 'LIST', logical_type: { type: 'LIST' } });
    out.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
    fieldElements('element', t.element, t.elementRequired, t.elementId, out);
  } else if (t.type === 'map') {
    out.push({ name, repetition_type: repetition, num_children: 1, field_id: id, converted_type: 'MAP', logical_type: { type: 'MAP' } });
    out.push({ name: 'key_value', repetition_type: 'REPEATED', num_children: 2 });
    fieldElements('key', t.key, true, t.keyId, out);
    fieldElements('value', t.value, t.valueRequired, t.valueId, out);
  } else {
    out.push(primitiveElement(name, t, repetition, id));
  }
}

export function parquetSchemaOf(schema: Schema): SchemaElement[] {
  const out: SchemaElement[] = [{ name: 'table', num_children: schema.fields.length }];
  for (const f of schema.fields) fieldElements(f.name, f.type, f.required, f.id, out);
  return out;
}

// ---- metrics -------------------------------------------------------------------

/** Running metrics of one primitive field (top level or inside structs). */
interface Stats {
  field: NestedField;
  type: PrimitiveType;
  values: number;
  nulls: number;
  nans: number;
  /** Min/max in a comparable form: number, bigint (also unscaled decimals), string, boolean, Uint8Array. */
  min: unknown;
  max: unknown;
}

function newStats(field: NestedField, type: PrimitiveType): Stats {
  return { field, type, values: 0, nulls: 0, nans: 0, min: undefined, max: undefined };
}

/** Prefix of at most 16 code points (lower bound). */
function truncateStringMin(s: string): string {
  const cps = Array.from(s);
  return cps.length <= TRUNCATE ? s : cps.slice(0, TRUNCATE).join('');
}

/** 16-code-point prefix with the last incrementable code point incremented; undefined if none can be. */
function truncateStringMax(s: string): string | undefined {
  const cps = Array.from(s);
  if (cps.length <= TRUNCATE) return s;
  const prefix = cps.slice(0, TRUNCATE);
  for (let i = prefix.length - 1; i >= 0; i--) {
    let cp = prefix[i]!.codePointAt(0)! + 1;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xe000;
    if (cp > 0x10ffff) continue;
    return prefix.slice(0, i).join('') + String.fromCodePoint(cp);
  }
  return undefined;
}

function truncateBinaryMax(b: Uint8Array): Uint8Array | undefined {
  if (b.length <= TRUNCATE) return b;
  const p = b.slice(0, TRUNCATE);
  for (let i = p.length - 1; i >= 0; i--) {
    if (p[i]! < 0xff) {
      p[i]!++;
      return p.slice(0, i + 1);
    }
  }
  return undefined;
}

function boundValue(s: Stats, v: unknown): Value {
  const t = s.type;
  if (t.type === 'decimal') return unscaledToDecimal(v as bigint, t.scale);
  if (t.type === 'float') return Math.fround(v as number);
  if (t.type === 'uuid') return bytesToUuidText(v as Uint8Array);
  return v as Value;
}

function finishStats(s: Stats, m: DataFileMetrics): void {
  const id = s.field.id;
  m.valueCounts.set(id, BigInt(s.values));
  m.nullValueCounts.set(id, BigInt(s.nulls));
  if (s.type.type === 'float' || s.type.type === 'double') m.nanValueCounts.set(id, BigInt(s.nans));
  if (s.min === undefined || s.max === undefined) return;
  let lo: Value = boundValue(s, s.min);
  let hi: Value | undefined = boundValue(s, s.max);
  if (s.type.type === 'string') {
    lo = truncateStringMin(lo as string);
    hi = truncateStringMax(hi as string);
  } else if (s.type.type === 'binary') {
    lo = (lo as Uint8Array).length > TRUNCATE ? (lo as Uint8Array).slice(0, TRUNCATE) : lo;
    hi = truncateBinaryMax(hi as Uint8Array);
  }
  m.lowerBounds.set(id, toBinary(s.type, lo));
  if (hi !== undefined) m.upperBounds.set(id, toBinary(s.type, hi));
}

// ---- value conversion ------------------------------------------------------------

function fail(field: NestedField, what: string, v: unknown): never {
  const shown = typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `bytes[${v.length}]` : JSON.stringify(v) ?? String(v);
  throw new TypeError(`field ${field.id} (${field.name}): expected ${what}, found ${shown}`);
}

function typeLabel(t: IcebergType): string {
  if (t.type === 'decimal') return `decimal(${t.precision}, ${t.scale})`;
  if (t.type === 'fixed') return `fixed[${t.length}]`;
  return t.type;
}

/**
 * Copies values [start, end) of one primitive column into `dst` in the form the
 * Parquet encoder takes, validating each and updating `s`. One tight loop per type.
 */
function appendPrimitive(dst: unknown[], at: number, src: Value[], start: number, end: number, s: Stats): void {
  const f = s.field;
  const shift = at - start;
  const t = s.type;
  let nulls = 0;
  let min = s.min;
  let max = s.max;
  switch (t.type) {
    case 'int':
    case 'date': {
      let lo = min as number | undefined;
      let hi = max as number | undefined;
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'number' || (v | 0) !== v) fail(f, `a 32-bit integer (${t.type})`, v);
        if (lo === undefined || v < lo) lo = v;
        if (hi === undefined || v > hi) hi = v;
        dst[i + shift] = v;
      }
      min = lo;
      max = hi;
      break;
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      let lo = min as bigint | undefined;
      let hi = max as bigint | undefined;
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'bigint') fail(f, `a bigint (${t.type})`, v);
        if (lo === undefined || v < lo) lo = v;
        if (hi === undefined || v > hi) hi = v;
        dst[i + shift] = v;
      }
      min = lo;
      max = hi;
      break;
    }
    case 'float':
    case 'double': {
      let lo = min as number | undefined;
      let hi = max as number | undefined;
      let nans = 0;
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'number') fail(f, `a number (${t.type})`, v);
        dst[i + shift] = v;
        if (v !== v) {
          nans++;
          continue;
        }
        // -0 sorts before +0
        if (lo === undefined || v < lo || (v === 0 && lo === 0 && Object.is(v, -0))) lo = v;
        if (hi === undefined || v > hi || (v === 0 && hi === 0 && Object.is(hi, -0))) hi = v;
      }
      s.nans += nans;
      min = lo;
      max = hi;
      break;
    }
    case 'boolean': {
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'boolean') fail(f, 'a boolean', v);
        if (min === undefined || (min === true && !v)) min = v;
        if (max === undefined || (max === false && v)) max = v;
        dst[i + shift] = v;
      }
      break;
    }
    case 'string': {
      let lo = min as string | undefined;
      let hi = max as string | undefined;
      let loHigh = lo !== undefined && HIGH_UNITS.test(lo);
      let hiHigh = hi !== undefined && HIGH_UNITS.test(hi);
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'string') fail(f, 'a string', v);
        // UTF-16 order differs from code-point (UTF-8 byte) order only where a
        // surrogate meets U+E000..U+FFFF, so a comparison with a bound that has
        // no code unit at or above U+D800 is exact with `<`; a bound that has
        // one is compared exactly
        if (lo === undefined) {
          lo = hi = v;
          loHigh = hiHigh = HIGH_UNITS.test(v);
        } else {
          if (loHigh ? compareStrings(v, lo) < 0 : v < lo) {
            lo = v;
            loHigh = HIGH_UNITS.test(v);
          }
          if (hiHigh ? compareStrings(v, hi!) > 0 : v > hi!) {
            hi = v;
            hiHigh = HIGH_UNITS.test(v);
          }
        }
        dst[i + shift] = v;
      }
      min = lo;
      max = hi;
      break;
    }
    case 'decimal': {
      const limit = 10n ** BigInt(t.precision);
      let lo = min as bigint | undefined;
      let hi = max as bigint | undefined;
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'string') fail(f, `a decimal string (${typeLabel(t)})`, v);
        let u: bigint;
        try {
          u = decimalToUnscaled(v, t.scale);
        } catch (e) {
          fail(f, `a decimal string with at most ${t.scale} fraction digits (${(e as Error).message})`, v);
        }
        if (u >= limit || u <= -limit) fail(f, `a value with at most ${t.precision} digits (${typeLabel(t)})`, v);
        if (lo === undefined || u < lo) lo = u;
        if (hi === undefined || u > hi) hi = u;
        dst[i + shift] = u;
      }
      min = lo;
      max = hi;
      break;
    }
    case 'uuid': {
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (typeof v !== 'string') fail(f, 'a uuid string', v);
        const b = uuidToBytes(v);
        if (min === undefined || compareBytes(b, min as Uint8Array) < 0) min = b;
        if (max === undefined || compareBytes(b, max as Uint8Array) > 0) max = b;
        dst[i + shift] = b;
      }
      break;
    }
    case 'fixed':
    case 'binary': {
      for (let i = start; i < end; i++) {
        const v = src[i];
        if (v === null || v === undefined) {
          nulls++;
          dst[i + shift] = null;
          continue;
        }
        if (!(v instanceof Uint8Array)) fail(f, `a Uint8Array (${typeLabel(t)})`, v);
        if (t.type === 'fixed' && v.length !== t.length) fail(f, `exactly ${t.length} bytes (${typeLabel(t)})`, v);
        if (min === undefined || compareBytes(v, min as Uint8Array) < 0) min = v;
        if (max === undefined || compareBytes(v, max as Uint8Array) > 0) max = v;
        dst[i + shift] = v;
      }
      break;
    }
    case 'unknown':
      throw new TypeError(`field ${f.id} (${f.name}): type unknown cannot be written`);
  }
  s.values += end - start;
  s.nulls += nulls;
  s.min = min;
  s.max = max;
}

/**
 * appendPrimitive for a column flat.ts writes (string, integer, boolean):
 * validates values [start, end) of `src` and counts them into `s` — no
 * bounds (flat.ts takes them from its page bounds, one pass instead of two)
 * — copying them into `dst` from `at` unless `dst` is `src` itself (a batch
 * that is its row group whole is encoded from its own columns).
 */
function appendFlat(dst: unknown[], at: number, src: Value[], start: number, end: number, s: Stats, kind: FlatKind): void {
  const f = s.field;
  const t = s.type;
  const copy = dst !== src;
  const shift = at - start;
  let nulls = 0;
  for (let i = start; i < end; i++) {
    const v = src[i];
    if (v === null || v === undefined) {
      nulls++;
      if (copy) dst[i + shift] = null;
      continue;
    }
    if (kind === 'string') {
      if (typeof v !== 'string') fail(f, 'a string', v);
    } else if (kind === 'int32') {
      if (typeof v !== 'number' || (v | 0) !== v) fail(f, `a 32-bit integer (${t.type})`, v);
    } else if (kind === 'int64') {
      if (typeof v !== 'bigint') fail(f, `a bigint (${t.type})`, v);
    } else if (typeof v !== 'boolean') fail(f, 'a boolean', v);
    if (copy) dst[i + shift] = v;
  }
  s.values += end - start;
  s.nulls += nulls;
}

function bytesToUuidText(b: Uint8Array): string {
  let h = '';
  for (let i = 0; i < 16; i++) h += b[i]!.toString(16).padStart(2, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Converts one nested value (struct/list/map or primitive inside them) for the encoder. */
function convertNested(field: NestedField, t: IcebergType, v: Value, stats: Map<number, Stats> | undefined): unknown {
  if (v === null || v === undefined) {
    if (stats) {
      const s = stats.get(field.id);
      if (s) {
        s.values++;
        s.nulls++;
      } else markNullSubtree(field, stats, 1);
    }
    return null;
  }
  if (t.type === 'struct') {
    if (typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array || v instanceof Map) fail(field, 'a struct object', v);
    const o = v as { [name: string]: Value };
    const out: { [name: string]: unknown } = {};
    for (const c of t.fields) {
      const cv = o[c.name] ?? null;
      if (cv === null && c.required) throw new TypeError(`field ${c.id} (${c.name}) inside ${field.name} is required but null`);
      out[c.name] = convertNested(c, c.type, cv, stats);
    }
    return out;
  }
  if (t.type === 'list') {
    if (!Array.isArray(v)) fail(field, 'an array (list)', v);
    const el: NestedField = { id: t.elementId, name: 'element', required: t.elementRequired, type: t.element };
    return v.map((e) => {
      if ((e === null || e === undefined) && t.elementRequired) throw new TypeError(`field ${field.id} (${field.name}): list element is required but null`);
      return convertNested(el, t.element, e, undefined);
    });
  }
  if (t.type === 'map') {
    if (!(v instanceof Map)) fail(field, 'a Map (map)', v);
    const kf: NestedField = { id: t.keyId, name: 'key', required: true, type: t.key };
    const vf: NestedField = { id: t.valueId, name: 'value', required: t.valueRequired, type: t.value };
    const out: { key: unknown; value: unknown }[] = [];
    for (const [k, val] of v) {
      if (k === null || k === undefined) throw new TypeError(`field ${field.id} (${field.name}): map keys cannot be null`);
      if ((val === null || val === undefined) && t.valueRequired) throw new TypeError(`field ${field.id} (${field.name}): map value is required but null`);
      out.push({ key: convertNested(kf, t.key, k, undefined), value: convertNested(vf, t.value, val, undefined) });
    }
    return out;
  }
  // a primitive inside a struct (metrics kept) or inside a list/map (no metrics)
  const s = stats?.get(field.id) ?? newStats(field, t);
  const dst: unknown[] = [undefined];
  appendPrimitive(dst, 0, [v], 0, 1, s);
  return dst[0];
}


/** hyparquet-writer's default for byte-array min/max in the footer (a prefix; max rounded up). */
const STATS_TRUNCATE_BYTES = 16;
/**
 * Target uncompressed page size. Much smaller than the usual 1 MiB: a filtered
 * read finds candidate pages through the column index and decodes only the
 * pages of its row span (offset index), so page size bounds the rows decoded
 * beyond the matches (about 8k rows of a long column). Measured on bench:lake
 * (1M rows of ~200 B, 64k-row groups): against 256 KiB pages the 1% filtered
 * scan is 2-3x faster, the full scan no slower, and files about 30% larger
 * (zstd sees shorter windows; most of it on periodic synthetic columns).
 */
export const DEFAULT_PAGE_BYTES = 64 * 1024;

/** The physical kind a top-level field is written with by flat.ts, undefined when it takes hyparquet-writer's path. */
function flatKind(t: IcebergType): FlatKind | undefined {
  switch (t.type) {
    case 'string':
      return 'string';
    case 'int':
    case 'date':
      return 'int32';
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return 'int64';
    case 'boolean':
      return 'boolean';
    default:
      return undefined;
  }
}

function isPrimitive(t: IcebergType): t is PrimitiveType {
  return t.type !== 'struct' && t.type !== 'list' && t.type !== 'map';
}

/** Orders two non-null comparable values of a column (the forms kept in `Stats`). */
function compareStat(t: PrimitiveType, a: unknown, b: unknown): number {
  if (t.type === 'string') return compareStrings(a as string, b as string);
  if (a instanceof Uint8Array) return compareBytes(a, b as Uint8Array);
  if (t.type === 'float' || t.type === 'double') {
    if (a === 0 && b === 0) return Object.is(a, -0) === Object.is(b, -0) ? 0 : Object.is(a, -0) ? -1 : 1;
  }
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

/** Folds one row group's metrics into the file's. */
function mergeStats(into: Stats, g: Stats): void {
  into.values += g.values;
  into.nulls += g.nulls;
  into.nans += g.nans;
  if (g.min !== undefined && (into.min === undefined || compareStat(into.type, g.min, into.min) < 0)) into.min = g.min;
  if (g.max !== undefined && (into.max === undefined || compareStat(into.type, g.max, into.max) > 0)) into.max = g.max;
}

/** One row group's metrics as the Parquet chunk statistics hyparquet-writer serializes (physical values). */
function chunkStatistics(g: Stats): { min_value?: unknown; max_value?: unknown; null_count: bigint; nan_count?: bigint } {
  const float = g.type.type === 'float' || g.type.type === 'double';
  let min = g.min;
  let max = g.max;
  // Parquet: a zero min is written as -0, a zero max as +0
  if (float && min === 0) min = -0;
  if (float && max === 0) max = 0;
  const out: { min_value?: unknown; max_value?: unknown; null_count: bigint; nan_count?: bigint } = { null_count: BigInt(g.nulls) };
  if (min !== undefined && max !== undefined) {
    out.min_value = min;
    out.max_value = max;
  }
  if (float) out.nan_count = BigInt(g.nans);
  return out;
}


/**
 * Whether a dictionary is likely to pay for a string column: the distinct
 * share of a spread sample, as hyparquet-writer judges it (it makes the final
 * call for columns this lets through); never when the distinct values take
 * more than `maxBytes` (UTF-16 length + 4 a value, an estimate of the page).
 */
function dictionaryLikely(data: unknown[], maxBytes?: number): boolean {
  if (!sampleLikely(data)) return false;
  if (maxBytes === undefined) return true;
  const seen = new Set<string>();
  let bytes = 0;
  for (const v of data) {
    if (typeof v !== 'string' || seen.has(v)) continue;
    seen.add(v);
    bytes += v.length + 4;
    if (bytes > maxBytes) return false;
  }
  return true;
}

/** Over the first `n` values of `data` (all of them by default). */
function sampleLikely(data: unknown[], n = data.length): boolean {
  const sample = Math.min(n, 1000);
  const seen = new Set<unknown>();
  let distinctLen = 0;
  let totalLen = 0;
  for (let i = 0; i < sample; i++) {
    const v = data[sample === 1 ? 0 : Math.floor((i * (n - 1)) / (sample - 1))];
    if (typeof v !== 'string') continue;
    totalLen += v.length + 4;
    if (!seen.has(v)) {
      seen.add(v);
      distinctLen += v.length + 4;
    }
  }
  return totalLen > 0 && distinctLen / totalLen <= 0.9;
}

const utf8Encoder = new TextEncoder();

/** Strings (or nulls) as UTF-8 views over one shared buffer: one allocation instead of one per value. */
function utf8Views(data: unknown[]): (Uint8Array | null)[] {
  const n = data.length;
  let chars = 0;
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (typeof v === 'string') {
      chars += v.length;
      texts.push(v);
    }
  }
  {
    // all ASCII (the usual case): one encode of the joined text, each value's bytes = its length
    const joined = texts.join('');
    const ascii = new Uint8Array(chars);
    const r = utf8Encoder.encodeInto(joined, ascii);
    if (r.read === joined.length && r.written === chars) {
      const out = new Array<Uint8Array | null>(n);
      let at = 0;
      for (let i = 0; i < n; i++) {
        const v = data[i];
        if (typeof v === 'string') {
          out[i] = ascii.subarray(at, at + v.length);
          at += v.length;
        } else out[i] = null;
      }
      return out;
    }
  }
  let buf = new Uint8Array(chars + 16);
  let at = 0;
  const ends = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (typeof v === 'string' && v.length > 0) {
      for (;;) {
        const r = utf8Encoder.encodeInto(v, buf.subarray(at));
        if (r.read === v.length) {
          at += r.written;
          break;
        }
        // non-ASCII text takes up to 3 bytes per UTF-16 unit: grow and encode the value again
        const bigger = new Uint8Array(Math.max(buf.length * 2, at + v.length * 3 + 16));
        bigger.set(buf.subarray(0, at));
        buf = bigger;
      }
    }
    ends[i + 1] = at;
  }
  const out = new Array<Uint8Array | null>(n);
  for (let i = 0; i < n; i++) out[i] = typeof data[i] === 'string' ? buf.subarray(ends[i]!, ends[i + 1]!) : null;
  return out;
}

// ---- encoding --------------------------------------------------------------------

/**
 * The arrays a flat.ts row group is copied into (column j of the group in
 * columnArrays[j]), kept from one group and one file to the next; flat.ts
 * reads the group's first `rows` values and ignores the rest. A fresh
 * 64k-value array per column and group (a large object: its pages mapped and
 * filled) was 318 ms of the main thread's CPU in a profiled bench:ingest;
 * reused, the event files (groups gathered from many batches) take ~6% less
 * encoding CPU. Shared safely: encodeDataFile never yields (it has no await),
 * so one file's groups are filled and encoded before another file starts.
 * Cleared once their group is written: a written file leaves no value in them.
 */
const columnArrays: unknown[][] = [];

function columnArray(j: number, size: number): unknown[] {
  let a = columnArrays[j];
  if (a === undefined || a.length < size) columnArrays[j] = a = new Array<unknown>(size);
  return a;
}

/**
 * The byte buffer of the last file encoded, reused by the next one
 * (encodeDataFile never yields, so one file is encoded at a time). A buffer
 * made per file started at 1 MiB and doubled up to the file's size (a state
 * file of 131k rows: 1, 2 then 4 MiB allocated, 3 MiB copied), fresh memory
 * to fault in each time. Kept up to WRITER_KEPT_BYTES; the file's bytes are
 * then one copy of their exact size.
 */
let keptWriter: ByteWriter | undefined;
const WRITER_KEPT_BYTES = 32 << 20;

const CODECS: Record<NonNullable<DataFileWriteOptions['codec']>, CompressionCodec> = {
  zstd: 'ZSTD',
  snappy: 'SNAPPY',
  gzip: 'GZIP',
  uncompressed: 'UNCOMPRESSED',
};

/** Primitive fields whose metrics are tracked: top level and inside structs, not in lists or maps. */
function collectStats(fields: NestedField[], out: Map<number, Stats>): void {
  for (const f of fields) {
    if (f.type.type === 'struct') collectStats(f.type.fields, out);
    else if (f.type.type !== 'list' && f.type.type !== 'map') out.set(f.id, newStats(f, f.type));
  }
}

/** Leaf column path (names joined by '.') -> the Iceberg field id whose size it counts toward. */
function leafOwners(elements: SchemaElement[]): Map<string, number> {
  const out = new Map<string, number>();
  let i = 1;
  const walk = (prefix: string[], owner: number | undefined): void => {
    const e = elements[i++]!;
    const path = [...prefix, e.name];
    const id = e.field_id ?? owner;
    if (e.num_children) {
      for (let c = 0; c < e.num_children; c++) walk(path, id);
    } else if (id !== undefined) {
      out.set(path.join('.'), id);
    }
  };
  for (let c = 0; c < (elements[0]!.num_children ?? 0); c++) walk([], undefined);
  return out;
}

/**
 * One Parquet data file from `batches` (columns matched to `schema` by field id).
 * A schema field absent from a batch is written as nulls if optional; refused if required.
 */
export async function encodeDataFile(
  schema: Schema,
  batches: Batch[],
  opts: DataFileWriteOptions = {},
): Promise<{ bytes: Uint8Array; metrics: DataFileMetrics }> {
  const codecName = opts.codec ?? 'zstd';
  const codec = CODECS[codecName];
  if (!codec) throw new TypeError(`unknown Parquet codec ${JSON.stringify(codecName)} (expected zstd, snappy, gzip or uncompressed)`);
  const rowGroupRows = opts.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  if (!Number.isInteger(rowGroupRows) || rowGroupRows < 1) throw new RangeError(`rowGroupRows must be a positive integer, found ${rowGroupRows}`);
  const level = opts.zstdLevel ?? 3;
  const pageBytes = opts.pageBytes ?? DEFAULT_PAGE_BYTES;
  if (!Number.isInteger(pageBytes) || pageBytes < 1) throw new RangeError(`pageBytes must be a positive integer, found ${pageBytes}`);
  const pageRows = opts.pageRows;
  if (pageRows !== undefined && (!Number.isInteger(pageRows) || pageRows < 1)) throw new RangeError(`pageRows must be a positive integer, found ${pageRows}`);
  const dictionaryBytes = opts.dictionaryBytes;
  if (dictionaryBytes !== undefined && (!Number.isInteger(dictionaryBytes) || dictionaryBytes < 1)) throw new RangeError(`dictionaryBytes must be a positive integer, found ${dictionaryBytes}`);

  const fields = schema.fields;
  const elements = parquetSchemaOf(schema);
  const stats = new Map<number, Stats>();
  collectStats(fields, stats);

  // the buffer the last file was encoded into, grown to its size (see keptWriter)
  const writer = keptWriter ?? new ByteWriter(1 << 20);
  keptWriter = undefined;
  writer.offset = 0;
  writer.index = 0;
  const pq = new ParquetWriter({
    writer,
    schema: elements,
    codec,
    compressors: {
      ZSTD: (input: Uint8Array) => zstdCompress(input, level),
      GZIP: (input: Uint8Array) => new Uint8Array(gzipSync(input)),
    },
    statistics: true,
    statisticsTruncateLength: STATS_TRUNCATE_BYTES,
    kvMetadata: [{ key: 'iceberg.schema', value: stringifyJson(schemaToJson(schema)) }],
    createdBy: MIMIR_CREATED_BY,
  });

  // Top-level primitive columns: converted straight into preallocated arrays,
  // with metrics per row group (written as the chunk's Parquet statistics and
  // folded into the file's metrics), so the encoder computes no statistics of its own.
  const flat = fields.map((f) => isPrimitive(f.type));
  const indexed = opts.pageIndexColumns ? new Set(opts.pageIndexColumns) : undefined;
  const pageIndex = fields.map((f, j) => flat[j]! && (!indexed || indexed.has(f.name)));
  let totalInput = 0;
  for (const batch of batches) totalInput += batch.numRows;
  const groupRows = (done: number): number => Math.min(rowGroupRows, Math.max(totalInput - done, 0));
  let pendingSize = groupRows(0);
  // every field a top-level string/integer/boolean (all of Mimir's own tables): written by flat.ts
  const kinds = fields.map((f) => flatKind(f.type));
  const flatOnly = !opts.genericWriter && kinds.every((k) => k !== undefined);
  // a group's columns: allocated when a batch is copied in (a batch that is a row group whole lends its own)
  const none: unknown[] = [];
  let pending: unknown[][] = fields.map((_f, j) => (flatOnly ? none : flat[j] ? new Array<unknown>(pendingSize) : []));
  let groupStats: (Stats | undefined)[] = fields.map((f, j) => (flat[j] ? newStats(f, f.type as PrimitiveType) : undefined));
  let pendingRows = 0;
  let totalRows = 0;
  const writeFlatGroup = (): void => {
    const groupStart = writer.offset;
    const columns: (typeof pq.row_groups)[number]['columns'] = [];
    let totalBytes = 0n;
    for (let j = 0; j < fields.length; j++) {
      const f = fields[j]!;
      const kind = kinds[j]!;
      // the group's first pendingRows values (a reused array holds more: flat.ts reads `rows` of them)
      const data = pending[j]!;
      const { indexes: r, min, max } = writeFlatColumn(writer, {
        name: f.name, element: elements[j + 1]!, kind, data, rows: pendingRows, codec, compress: pq.compressors[codec],
        pageBytes, pageRows, tryDictionary: kind !== 'string' || sampleLikely(data, pendingRows), dictionaryCap: dictionaryBytes, columnIndex: pageIndex[j]!,
        truncate: STATS_TRUNCATE_BYTES,
      });
      // a reused array keeps nothing of the file once its group is written
      if (data === columnArrays[j]) data.fill(undefined, 0, pendingRows);
      // the group's bounds, from flat.ts's page bounds (appendFlat computed none)
      const g = groupStats[j]!;
      g.min = min;
      g.max = max;
      columns.push(r.chunk);
      pq.pendingIndexes.push(r);
      totalBytes += r.chunk.meta_data!.total_uncompressed_size;
    }
    pq.num_rows += BigInt(pendingRows);
    pq.row_groups.push({ columns, total_byte_size: totalBytes, num_rows: BigInt(pendingRows), total_compressed_size: BigInt(writer.offset - groupStart) });
  };
  const flush = (): void => {
    if (pendingRows === 0) return;
    if (flatOnly) writeFlatGroup();
    else writeGroup();
    const chunks = pq.row_groups[pq.row_groups.length - 1]!.columns;
    for (let j = 0; j < fields.length; j++) {
      const g = groupStats[j];
      if (!g) continue;
      const md = chunks.find((c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === fields[j]!.name)?.meta_data;
      if (md) md.statistics = chunkStatistics(g) as typeof md.statistics;
      mergeStats(stats.get(g.field.id)!, g);
    }
    pendingSize = groupRows(totalRows);
    pending = fields.map((_f, j) => (flatOnly ? none : flat[j] ? new Array<unknown>(pendingSize) : []));
    groupStats = fields.map((f, j) => (flat[j] ? newStats(f, f.type as PrimitiveType) : undefined));
    pendingRows = 0;
  };
  const writeGroup = (): void => {
    const columnData = fields.map((f, j) => {
      const data = pending[j]!;
      if (data.length !== pendingRows) data.length = pendingRows;
      // top-level primitive columns carry a column index (per-page min/max) beside
      // the offset index, so a filtered read can skip pages of the filter column
      const columnIndex = pageIndex[j]!;
      if (f.type.type === 'string' && !dictionaryLikely(data, dictionaryBytes)) {
        // mostly distinct strings: encode them once into one buffer, written as PLAIN
        return { name: f.name, data: utf8Views(data), statistics: false, encoding: 'PLAIN' as const, columnIndex };
      }
      return { name: f.name, data, statistics: !flat[j], columnIndex };
    });
    const groupStart = writer.offset;
    const before = pq.pendingIndexes.length;
    const r = pq.write({ columnData, rowGroupSize: pendingRows, pageSize: pageBytes });
    if (r) throw new Error('internal: hyparquet-writer went asynchronous with an in-memory writer');
    // hyparquet-writer writes no page CRC: every page gets one (checksum.ts)
    withPageChecksums(writer, groupStart, pq.pendingIndexes.slice(before), writePageHeader as unknown as WritePageHeader);
    const group = pq.row_groups[pq.row_groups.length - 1]!;
    group.total_compressed_size = BigInt(writer.offset - groupStart);
    group.total_byte_size = group.columns.reduce((t, c) => t + (c.meta_data?.total_uncompressed_size ?? 0n), 0n);
  };

  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b]!;
    const idx = fields.map((f) => batch.fields.findIndex((bf) => bf.id === f.id));
    for (let j = 0; j < fields.length; j++) {
      const f = fields[j]!;
      const c = idx[j]!;
      if (c < 0) {
        if (f.required) throw new TypeError(`batch ${b}: required field ${f.id} (${f.name}) is missing`);
        continue;
      }
      const col = batch.columns[c];
      if (!col || col.length !== batch.numRows) {
        throw new RangeError(`batch ${b}: column of field ${f.id} (${f.name}) holds ${col?.length ?? 0} values, expected numRows = ${batch.numRows}`);
      }
    }
    let start = 0;
    while (start < batch.numRows) {
      const take = Math.min(rowGroupRows - pendingRows, batch.numRows - start);
      const end = start + take;
      // the batch is a row group whole (it fills one, or is the last): encoded from its own columns
      const whole = flatOnly && pendingRows === 0 && start === 0 && take === batch.numRows && (take === rowGroupRows || b === batches.length - 1);
      for (let j = 0; j < fields.length; j++) {
        const f = fields[j]!;
        const c = idx[j]!;
        if (flatOnly && pending[j] === none) pending[j] = whole && c >= 0 ? batch.columns[c]! : columnArray(j, pendingSize);
        const dst = pending[j]!;
        const g = groupStats[j];
        if (c < 0) {
          if (g) {
            for (let i = 0; i < take; i++) dst[pendingRows + i] = null;
            g.values += take;
            g.nulls += take;
          } else {
            for (let i = 0; i < take; i++) dst.push(null);
            markNullSubtree(f, stats, take);
          }
          continue;
        }
        const src = batch.columns[c]!;
        if (g) {
          const before = g.nulls;
          if (flatOnly) appendFlat(dst, pendingRows, src, start, end, g, kinds[j]!);
          else appendPrimitive(dst, pendingRows, src, start, end, g);
          if (f.required && g.nulls > before) {
            throw new TypeError(`field ${f.id} (${f.name}) is required but ${g.nulls - before} of its values in batch ${b} are null`);
          }
        } else {
          for (let i = start; i < end; i++) {
            const v = src[i] ?? null;
            if (v === null && f.required) throw new TypeError(`field ${f.id} (${f.name}) is required but row ${totalRows + i - start} is null`);
            dst.push(convertNested(f, f.type, v, stats));
          }
        }
      }
      pendingRows += take;
      totalRows += take;
      start = end;
      if (pendingRows === rowGroupRows) flush();
    }
  }
  flush();
  pq.finish();
  // a copy the caller owns; the buffer encodes the next file
  const bytes = writer.getBytes().slice();
  if (writer.buffer.byteLength <= WRITER_KEPT_BYTES) keptWriter = writer;

  const metrics: DataFileMetrics = {
    recordCount: BigInt(totalRows),
    columnSizes: new Map(),
    valueCounts: new Map(),
    nullValueCounts: new Map(),
    nanValueCounts: new Map(),
    lowerBounds: new Map(),
    upperBounds: new Map(),
    splitOffsets: [],
  };
  for (const s of stats.values()) finishStats(s, metrics);
  const owners = leafOwners(elements);
  for (const rg of pq.row_groups) {
    const first = rg.columns[0];
    if (first) metrics.splitOffsets.push(BigInt(first.file_offset));
    for (const chunk of rg.columns) {
      const md = chunk.meta_data;
      if (!md) continue;
      const owner = owners.get(md.path_in_schema.join('.'));
      if (owner === undefined) continue;
      metrics.columnSizes.set(owner, (metrics.columnSizes.get(owner) ?? 0n) + BigInt(md.total_compressed_size));
    }
  }
  return { bytes, metrics };
}

/** A whole struct column missing from a batch: count nulls for its primitive leaves. */
function markNullSubtree(f: NestedField, stats: Map<number, Stats>, n: number): void {
  if (f.type.type !== 'struct') return;
  for (const c of f.type.fields) {
    const s = stats.get(c.id);
    if (s) {
      s.values += n;
      s.nulls += n;
    } else markNullSubtree(c, stats, n);
  }
}
