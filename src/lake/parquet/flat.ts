// One column chunk of a flat (top-level, primitive) column, written straight
// from its converted values: the hot path of every Mimir table (event tables,
// state tables, sources are all flat). Byte for byte the Parquet structures
// hyparquet-writer's generic `writeColumn` makes for such a column (data page
// v2, same dictionary decisions, page splits, page index), without its
// per-value generality: no nested levels computed per value, no slices of
// every page, strings written to the page buffer as they are read, page
// bounds from one comparison per value. Used by `encodeDataFile` (write.ts)
// for schemas whose every field is a string, int, date, long, time,
// timestamp or boolean; others go through hyparquet-writer.
//
// Invariants: a page holds whole values; bounds are in UTF-8 byte order for
// strings; the chunk is appended to `writer` whole (nothing is written to
// storage here).
import type { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { pageCrc } from './checksum.ts';
import { unconvertMinMax } from 'hyparquet-writer/src/unconvert.js';
import { compareStrings } from '../spec/values.ts';

type WriterInit = ConstructorParameters<typeof ParquetWriter>[0];
type SchemaElement = WriterInit['schema'][number];
type CompressionCodec = NonNullable<WriterInit['codec']>;
export type PageIndexes = ParquetWriter['pendingIndexes'][number];
type ColumnIndex = NonNullable<PageIndexes['columnIndex']>;
type OffsetIndex = NonNullable<PageIndexes['offsetIndex']>;
type MinMax = NonNullable<Parameters<typeof unconvertMinMax>[0]>;

/** The physical kinds this writer handles. */
export type FlatKind = 'string' | 'int32' | 'int64' | 'boolean';

export interface FlatColumn {
  name: string;
  element: SchemaElement;
  kind: FlatKind;
  /** The row group's values (strings, 32-bit integers, bigints, booleans; null for none). */
  data: readonly unknown[];
  /** Rows in the row group (data.length may be larger: its tail is ignored). */
  rows: number;
  codec: CompressionCodec;
  compress: ((input: Uint8Array) => Uint8Array) | undefined;
  pageBytes: number;
  /** Most rows a page holds (undefined: no cap; pages are cut by bytes only). */
  pageRows?: number;
  /** Whether a dictionary is worth trying (strings: decided by the caller's sample). */
  tryDictionary: boolean;
  /** Strings: no dictionary when its distinct values take more than this (UTF-16 length + 4 a value). */
  dictionaryCap?: number;
  columnIndex: boolean;
  truncate: number;
}

/** What writeFlatColumn gives back: the chunk's page indexes and its values' bounds (undefined: no value). */
export interface FlatChunk {
  indexes: PageIndexes;
  /** The least and greatest non-null value (strings in UTF-8 byte order), from the page bounds. */
  min: unknown;
  max: unknown;
}

/** Sampling rejects a dictionary when distinct values are more than this share of the sampled bytes (as hyparquet-writer). */
const SAMPLE_REJECTION = 0.9;
const HIGH_UNIT = 0xd800;
const utf8 = new TextEncoder();
/** Strings of at least this many UTF-16 units are written by Buffer#write (shorter ones: a char loop is cheaper than the call). */
const NATIVE_UTF8 = 32;

/** A growable byte buffer reused across pages (a Buffer: long strings are written by its native UTF-8 encoder). */
class Scratch {
  buf = Buffer.allocUnsafeSlow(1 << 16);
  view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  len = 0;
  reset(): void {
    this.len = 0;
  }
  shrink(): void {
    this.buf = Buffer.allocUnsafeSlow(1 << 16);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
    this.len = 0;
  }
  ensure(extra: number): void {
    const need = this.len + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const b = Buffer.allocUnsafeSlow(size);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
    this.view = new DataView(b.buffer, b.byteOffset, b.length);
  }
  byte(v: number): void {
    this.ensure(1);
    this.buf[this.len++] = v;
  }
  varint(v: number): void {
    this.ensure(5);
    while (v > 0x7f) {
      this.buf[this.len++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.len++] = v;
  }
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.len, v, true);
    this.len += 4;
  }
  i32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.len, v, true);
    this.len += 4;
  }
  i64(v: bigint): void {
    this.ensure(8);
    this.view.setBigInt64(this.len, v, true);
    this.len += 8;
  }
  /** A PLAIN byte array: 4-byte length, then the UTF-8 bytes. Returns whether a code unit >= U+D800 was met. */
  str(s: string): boolean {
    const n = s.length;
    if (n >= NATIVE_UTF8) {
      // long values: the native encoder (same bytes as TextEncoder: lone surrogates as U+FFFD), ~10x a char loop
      this.ensure(4 + 3 * n);
      const at = this.len + 4;
      const written = this.buf.write(s, at);
      this.view.setUint32(this.len, written, true);
      this.len = at + written;
      if (written === n) return false;
      for (let k = 0; k < n; k++) if (s.charCodeAt(k) >= HIGH_UNIT) return true;
      return false;
    }
    this.ensure(4 + n);
    const at = this.len + 4;
    const buf = this.buf;
    let k = 0;
    for (; k < n; k++) {
      const c = s.charCodeAt(k);
      if (c >= 0x80) break;
      buf[at + k] = c;
    }
    if (k === n) {
      this.view.setUint32(this.len, n, true);
      this.len = at + n;
      return false;
    }
    // not ASCII: encode the value whole (at most 3 bytes a UTF-16 unit)
    this.ensure(4 + 3 * n);
    const r = utf8.encodeInto(s, this.buf.subarray(at));
    this.view.setUint32(this.len, r.written, true);
    this.len = at + r.written;
    for (; k < n; k++) if (s.charCodeAt(k) >= HIGH_UNIT) return true;
    return false;
  }
}

const scratch = new Scratch();
const levels = new Scratch();
const strings = new Scratch();

/**
 * Typed arrays of one chunk's rows (dictionary codes, PLAIN string offsets,
 * definition levels), reused chunk after chunk: writeFlatColumn never yields,
 * and nothing it returns holds them. Made anew per column, a 64k-row group's
 * took ~0.6 MB of fresh memory a column. Dropped past ROWS_KEPT rows (a rare
 * huge chunk).
 */
let codesKept = new Int32Array(0);
let offsKept = new Int32Array(0);
let defsKept = new Uint8Array(0);
const ROWS_KEPT = 1 << 20;

function codesOf(n: number): Int32Array {
  if (codesKept.length < n) codesKept = new Int32Array(n);
  return codesKept.subarray(0, n);
}

function offsOf(n: number): Int32Array {
  if (offsKept.length < n) offsKept = new Int32Array(n);
  return offsKept.subarray(0, n);
}

function defsOf(n: number): Uint8Array {
  if (defsKept.length < n) defsKept = new Uint8Array(n);
  return defsKept.subarray(0, n);
}

/** Let a rare huge chunk's arrays go. */
function trimKept(): void {
  if (codesKept.length > ROWS_KEPT) codesKept = new Int32Array(0);
  if (offsKept.length > ROWS_KEPT) offsKept = new Int32Array(0);
  if (defsKept.length > ROWS_KEPT) defsKept = new Uint8Array(0);
}

/**
 * RLE / bit-packed hybrid of `values[start, end)` at `bitWidth` (as
 * hyparquet-writer writes it: a run of 8+ equal values is an RLE run, the rest
 * bit-packed in groups of 8, the last group padded with zeros).
 */
function writeHybrid(out: Scratch, values: Int32Array | Uint8Array, start: number, end: number, bitWidth: number): void {
  let groups = 0;
  let groupStart = 0;
  let i = start;
  const width = (bitWidth + 7) >> 3;
  const flushGroups = (): void => {
    out.varint((groups << 1) | 1);
    const mask = bitWidth >= 32 ? -1 : (1 << bitWidth) - 1;
    let acc = 0;
    let bits = 0;
    const total = groups * 8;
    out.ensure(total * 4 + 8);
    const buf = out.buf;
    let at = out.len;
    for (let g = 0; g < total; g++) {
      const idx = groupStart + g;
      const v = idx < end ? values[idx]! & mask : 0;
      acc |= v << bits;
      bits += bitWidth;
      while (bits >= 8) {
        buf[at++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    out.len = at;
    groups = 0;
  };
  while (i < end) {
    const v = values[i]!;
    let run = 1;
    while (i + run < end && values[i + run] === v) run++;
    if (run >= 8) {
      if (groups > 0) flushGroups();
      out.varint(run << 1);
      for (let j = 0; j < width; j++) out.byte((v >> (j << 3)) & 0xff);
      i += run;
    } else {
      if (groups === 0) groupStart = i;
      groups++;
      i += 8;
    }
  }
  if (groups > 0) flushGroups();
}

function compareAny(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

/** Estimated PLAIN bytes of a value for page splits and dictionary decisions (hyparquet-writer's estimate). */
function estimate(kind: FlatKind, v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (kind === 'string') return (v as string).length;
  if (kind === 'int32') return 4;
  if (kind === 'int64') return 8;
  return 0.125;
}

/**
 * The dictionary of a column and each value's code (-1: null), or undefined
 * when PLAIN is smaller or sampling says so (hyparquet-writer's rules: a
 * spread sample of 1000 rejects at > 90% distinct bytes; kept when the
 * dictionary and its codes take at most half the PLAIN bytes).
 */
function dictionaryOf(c: FlatColumn): { dict: unknown[]; codes: Int32Array } | undefined {
  const { data, rows: n, kind } = c;
  if (kind === 'boolean' || !c.tryDictionary || n === 0) return undefined;
  const prefix = kind === 'string' ? 4 : 0;
  if (kind !== 'string') {
    // strings were sampled by the caller (with its size cap)
    const sample = Math.min(n, 1000);
    const seen = new Set<unknown>();
    let distinct = 0;
    let total = 0;
    for (let i = 0; i < sample; i++) {
      const v = data[sample === 1 ? 0 : Math.floor((i * (n - 1)) / (sample - 1))];
      const size = estimate(kind, v) + (v === null || v === undefined ? 0 : prefix);
      if (!seen.has(v)) {
        seen.add(v);
        distinct += size;
      }
      total += size;
    }
    if (!total || distinct / total > SAMPLE_REJECTION) return undefined;
  }
  const cap = kind === 'string' ? c.dictionaryCap ?? Infinity : Infinity;
  const index = new Map<unknown, number>();
  const dict: unknown[] = [];
  const codes = codesOf(n); // every value of it is set below before it is read
  let dictSize = 0;
  let totalSize = 0;
  let nonNull = 0;
  // runs of one value (constant and sorted columns) skip the lookup
  let last: unknown = undefined;
  let lastCode = -1;
  for (let i = 0; i < n; i++) {
    const v = data[i];
    if (v === null || v === undefined) {
      codes[i] = -1;
      continue;
    }
    nonNull++;
    const size = kind === 'string' ? (v as string).length : kind === 'int32' ? 4 : 8;
    totalSize += size;
    if (v === last) {
      codes[i] = lastCode;
      continue;
    }
    let code = index.get(v);
    if (code === undefined) {
      code = dict.length;
      dict.push(v);
      index.set(v, code);
      dictSize += size;
      if (dictSize + dict.length * prefix > cap) return undefined;
    }
    codes[i] = code;
    last = v;
    lastCode = code;
  }
  const bitWidth = Math.ceil(Math.log2(dict.length));
  const indexSize = Math.ceil((nonNull * bitWidth) / 8);
  const plainSize = totalSize + nonNull * prefix;
  const dictValueSize = dictSize + dict.length * prefix;
  if (2 * (dictValueSize + indexSize) > plainSize) return undefined;
  return { dict, codes };
}

/** PLAIN values of one kind into `out`; returns whether a string had a code unit >= U+D800. */
function plainValue(out: Scratch, kind: FlatKind, v: unknown): boolean {
  if (kind === 'string') return out.str(v as string);
  if (kind === 'int32') out.i32(v as number);
  else out.i64(v as bigint);
  return false;
}

/**
 * Appends one column chunk (dictionary page if any, data pages v2) to
 * `writer`; returns its chunk metadata and page indexes, as
 * hyparquet-writer's writeColumn does (statistics left to the caller).
 */
export function writeFlatColumn(writer: ByteWriter, c: FlatColumn): FlatChunk {
  const { data, rows: n, kind, element } = c;
  const type = element.type!;
  const optional = element.repetition_type !== 'REQUIRED';
  const compress = c.codec === 'UNCOMPRESSED' ? undefined : c.compress;
  const offsetStart = writer.offset;
  let uncompressed = 0;
  const encodings: NonNullable<PageIndexes['chunk']['meta_data']>['encodings'] = [];

  const dictionary = dictionaryOf(c);
  let dictionaryPageOffset: bigint | undefined;
  // a string with a code unit >= U+D800 in the column: bounds compared in UTF-8 order, not with `<`
  let high = false;
  // PLAIN strings: every value written once, up front, into one buffer (value i's record at offs[i]);
  // pages are ranges of it, cut and bounded in the same pass
  const plain = kind === 'string' && !dictionary ? plainStrings(data, n, c.pageBytes, c.pageRows ?? Infinity) : undefined;
  if (plain) high = plain.high;
  // definition levels of an optional column: 1 present, 0 null
  const defs = optional ? definitionLevels(data, n) : undefined;
  if (dictionary) {
    scratch.reset();
    for (const v of dictionary.dict) if (plainValue(scratch, kind, v)) high = true;
    const raw = scratch.buf.subarray(0, scratch.len);
    const body = compress ? compress(raw) : raw;
    dictionaryPageOffset = BigInt(writer.offset);
    const headerStart = writer.offset;
    dictionaryPageHeader(writer, raw.length, body.length, dictionary.dict.length, pageCrc(body));
    uncompressed += writer.offset - headerStart + raw.length;
    writer.appendBytes(body);
    encodings.push('PLAIN');
  }
  const encoding = dictionary ? 'RLE_DICTIONARY' : kind === 'boolean' && n > 16 ? 'RLE' : 'PLAIN';
  encodings.push(encoding);

  // page boundaries: by estimated bytes (dictionary codes count 4) or the row cap, a page of at least one value
  const ends = plain ? plain.ends : pageEnds(data, n, c.pageBytes, c.pageRows ?? Infinity, dictionary?.codes, kind);
  const paged = ends.length > 1;
  let columnIndex: ColumnIndex | undefined = c.columnIndex && paged
    ? { null_pages: [], min_values: [], max_values: [], boundary_order: 'UNORDERED', null_counts: [] }
    : undefined;
  const offsetIndex: OffsetIndex | undefined = paged ? { page_locations: [] } : undefined;
  let ascending = true;
  let descending = true;
  let prevMin: unknown;
  let prevMax: unknown;
  // the chunk's bounds: the least page min and the greatest page max (every page's bounds are
  // computed, column index or not: they are the chunk's statistics and the file's metrics)
  let chunkMin: unknown;
  let chunkMax: unknown;

  // a dictionary much smaller than the chunk: values ranked once, page bounds by comparing ranks
  const ranks = dictionary && dictionary.dict.length * 8 <= n ? rankDictionary(dictionary.dict, high) : undefined;

  const dataPageOffset = BigInt(writer.offset);
  let start = 0;
  for (let page = 0; page < ends.length; page++) {
    const end = ends[page]!;
    const pageOffset = writer.offset;
    let nulls = 0;
    levels.reset();
    if (defs) {
      nulls = countNulls(defs, start, end);
      writeHybrid(levels, defs, start, end, 1);
    }
    scratch.reset();
    let raw: Uint8Array;
    if (plain) raw = strings.buf.subarray(plain.offs[start]!, plain.offs[end]!);
    else {
      if (dictionary) dictionaryCodesPage(dictionary.codes, start, end, nulls);
      else if (kind === 'boolean') booleanPage(data, start, end, nulls, encoding === 'RLE');
      else if (kind === 'string') plainStringsPage(data, start, end);
      else if (kind === 'int32') plainInt32Page(data, start, end);
      else plainInt64Page(data, start, end);
      raw = scratch.buf.subarray(0, scratch.len);
    }
    // page bounds: one pass over the page's values (booleans: false < true), or over its codes
    if (ranks) codeBounds(dictionary!.codes, start, end, ranks);
    else if (high) utf8Bounds(data, start, end);
    else if (plain) {
      boundMin = plain.mins[page];
      boundMax = plain.maxs[page];
    } else nativeBounds(data, start, end);
    const min = boundMin;
    const max = boundMax;
    if (min !== undefined) {
      if (chunkMin === undefined) {
        chunkMin = min;
        chunkMax = max;
      } else {
        if (high ? compareStrings(min as string, chunkMin as string) < 0 : (min as number) < (chunkMin as number)) chunkMin = min;
        if (high ? compareStrings(chunkMax as string, max as string) < 0 : (chunkMax as number) < (max as number)) chunkMax = max;
      }
    }
    const body = compress ? compress(raw) : raw;
    const headerStart = writer.offset;
    const levelBytes = levels.buf.subarray(0, levels.len);
    dataPageV2Header(writer, levels.len + raw.length, levels.len + body.length, pageCrc(levelBytes, body), end - start, nulls, ENCODING_CODES[encoding], levels.len);
    uncompressed += writer.offset - headerStart + levels.len + raw.length;
    if (levels.len > 0) writer.appendBytes(levelBytes);
    writer.appendBytes(body);

    if (columnIndex) {
      const nullPage = nulls === end - start;
      const minBytes = unconvertMinMax(min as MinMax | undefined, element, false, c.truncate);
      const maxBytes = unconvertMinMax(max as MinMax | undefined, element, true, c.truncate);
      if (!nullPage && (!minBytes || !maxBytes)) {
        // bounds are required for a page with values: without them no column index
        columnIndex = undefined;
      } else {
        columnIndex.null_pages.push(nullPage);
        columnIndex.min_values.push(minBytes ?? new Uint8Array());
        columnIndex.max_values.push(maxBytes ?? new Uint8Array());
        columnIndex.null_counts?.push(BigInt(nulls));
        if (prevMin !== undefined && min !== undefined) {
          const o = compareAny(prevMin, min);
          if (o > 0) ascending = false;
          if (o < 0) descending = false;
        }
        if (prevMax !== undefined && max !== undefined) {
          const o = compareAny(prevMax, max);
          if (o > 0) ascending = false;
          if (o < 0) descending = false;
        }
        prevMin = min;
        prevMax = max;
      }
    }
    offsetIndex?.page_locations.push({ offset: BigInt(pageOffset), compressed_page_size: writer.offset - pageOffset, first_row_index: BigInt(start) });
    start = end;
  }
  // a chunk of long texts may have grown the buffer far: not kept past 32 MiB
  if (strings.buf.length > 32 << 20) strings.shrink();
  trimKept();
  if (columnIndex) columnIndex.boundary_order = ascending ? 'ASCENDING' : descending ? 'DESCENDING' : 'UNORDERED';

  const indexes: PageIndexes = {
    chunk: {
      meta_data: {
        type,
        encodings,
        path_in_schema: [c.name],
        codec: c.codec,
        num_values: BigInt(n),
        total_compressed_size: BigInt(writer.offset - offsetStart),
        total_uncompressed_size: BigInt(uncompressed),
        data_page_offset: dataPageOffset,
        dictionary_page_offset: dictionaryPageOffset,
      },
      file_offset: BigInt(offsetStart),
    },
    ...(columnIndex ? { columnIndex } : {}),
    ...(offsetIndex ? { offsetIndex } : {}),
  };
  return { indexes, min: chunkMin, max: chunkMax };
}

const levelsScratch = new Scratch();

// ---- page headers: Thrift compact protocol, the bytes hyparquet-writer's
// writePageHeader makes for these two kinds of page (its generic serializer
// walks an object of `field_N` keys per header: ~1 s of bench:ingest's main thread)

/** Parquet's Encoding enum values of the encodings flat.ts writes. */
const ENCODING_CODES = { PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const;
const header = new Uint8Array(96);
let headerLen = 0;

/** An unsigned varint, as hyparquet-writer's ByteWriter#appendVarInt writes it. */
function headerVarint(v: number): void {
  while ((v & ~0x7f) !== 0) {
    header[headerLen++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  header[headerLen++] = v;
}

/** A compact-protocol i32 field following the previous field id (delta 1): header byte, then zigzag varint. */
function headerI32(v: number): void {
  header[headerLen++] = 0x15;
  headerVarint((v << 1) ^ (v >> 31));
}

/** PageHeader { type: DATA_PAGE_V2, sizes, crc, data_page_header_v2 { …, is_compressed: true (the default, omitted) } }. */
function dataPageV2Header(writer: ByteWriter, uncompressed: number, compressed: number, crc: number, values: number, nulls: number, encoding: number, defsLength: number): void {
  headerLen = 0;
  headerI32(3); // 1: type DATA_PAGE_V2
  headerI32(uncompressed); // 2
  headerI32(compressed); // 3
  headerI32(crc); // 4: crc (checksum.ts)
  header[headerLen++] = 0x4c; // 8 (delta 4): struct
  headerI32(values); // 1: num_values
  headerI32(nulls); // 2: num_nulls
  headerI32(values); // 3: num_rows (flat: one value a row)
  headerI32(encoding); // 4
  headerI32(defsLength); // 5: definition_levels_byte_length
  headerI32(0); // 6: repetition_levels_byte_length
  header[headerLen++] = 0; // end of data_page_header_v2
  header[headerLen++] = 0; // end of PageHeader
  writer.appendBytes(header.subarray(0, headerLen));
}

/** PageHeader { type: DICTIONARY_PAGE, sizes, crc, dictionary_page_header { num_values, encoding: PLAIN } }. */
function dictionaryPageHeader(writer: ByteWriter, uncompressed: number, compressed: number, values: number, crc: number): void {
  headerLen = 0;
  headerI32(2); // 1: type DICTIONARY_PAGE
  headerI32(uncompressed); // 2
  headerI32(compressed); // 3
  headerI32(crc); // 4: crc (checksum.ts)
  header[headerLen++] = 0x3c; // 7 (delta 3): struct
  headerI32(values); // 1: num_values
  headerI32(ENCODING_CODES.PLAIN); // 2: encoding
  header[headerLen++] = 0; // end of dictionary_page_header
  header[headerLen++] = 0; // end of PageHeader
  writer.appendBytes(header.subarray(0, headerLen));
}

// ---- the parts of writeFlatColumn: small functions, each with its own type
// feedback (one kind of value a loop), so the JIT compiles each once, cheaply

/** A string column PLAIN in `strings`: value i's record at offs[i], its pages' ends and `<` bounds. */
interface PlainStrings {
  offs: Int32Array;
  ends: number[];
  mins: (string | undefined)[];
  maxs: (string | undefined)[];
  /** Whether a value has a code unit >= U+D800 (then the bounds above are not in UTF-8 order: unused). */
  high: boolean;
}

/**
 * The values of a string column PLAIN into `strings`, every value once, with
 * the pages cut as pageEnds cuts them (by the values' UTF-8 bytes) and each
 * page's bounds as nativeBounds finds them, while each value is at hand:
 * the separate passes for page cuts and bounds cost bench:ingest's main thread
 * ~0.8 s more (the strings are scattered in the heap, out of the cache again
 * by the second pass).
 */
function plainStrings(data: readonly unknown[], n: number, pageBytes: number, pageRows: number): PlainStrings {
  strings.reset();
  const offs = offsOf(n + 1); // every value of it is set below
  const ends: number[] = [];
  const mins: (string | undefined)[] = [];
  const maxs: (string | undefined)[] = [];
  let high = false;
  let acc = 0;
  let start = 0;
  let min: string | undefined;
  let max: string | undefined;
  for (let i = 0; i < n; i++) {
    const at = strings.len;
    offs[i] = at;
    const v = data[i] as string | null | undefined;
    const present = v !== null && v !== undefined;
    let size = 0;
    if (present) {
      if (strings.str(v)) high = true;
      size = strings.len - at - 4;
    }
    acc += size;
    if ((acc >= pageBytes || i - start >= pageRows) && i > start) {
      ends.push(i);
      mins.push(min);
      maxs.push(max);
      start = i;
      acc = size;
      min = max = undefined;
    }
    if (!present) continue;
    if (min === undefined) min = max = v;
    else if (v < min) min = v;
    else if (max! < v) max = v;
  }
  offs[n] = strings.len;
  if (start < n || n === 0) {
    ends.push(n);
    mins.push(min);
    maxs.push(max);
  }
  return { offs, ends, mins, maxs, high };
}

/** Definition levels of an optional column: 1 present, 0 null. */
function definitionLevels(data: readonly unknown[], n: number): Uint8Array {
  const defs = defsOf(n);
  for (let i = 0; i < n; i++) {
    const v = data[i];
    defs[i] = v !== null && v !== undefined ? 1 : 0;
  }
  return defs;
}

function countNulls(defs: Uint8Array, start: number, end: number): number {
  let nulls = 0;
  for (let i = start; i < end; i++) if (defs[i] === 0) nulls++;
  return nulls;
}

/**
 * Page boundaries: by estimated bytes (dictionary codes count 4; the value
 * that reaches `pageBytes` starts the next page, as hyparquet-writer cuts), or
 * after `pageRows` rows; a page of at least one value.
 */
function pageEnds(data: readonly unknown[], n: number, pageBytes: number, pageRows: number, codes: Int32Array | undefined, kind: FlatKind): number[] {
  if (codes) return codePageEnds(codes, n, pageBytes, pageRows);
  const ends: number[] = [];
  let acc = 0;
  let start = 0;
  for (let i = 0; i < n; i++) {
    const v = data[i];
    const size = v === null || v === undefined ? 0 : estimate(kind, v);
    acc += size;
    if ((acc >= pageBytes || i - start >= pageRows) && i > start) {
      ends.push(i);
      start = i;
      acc = size;
    }
  }
  if (start < n || n === 0) ends.push(n);
  return ends;
}

/** pageEnds of a dictionary-coded column: a code counts 4 bytes, a null (-1) none; read from the codes alone. */
function codePageEnds(codes: Int32Array, n: number, pageBytes: number, pageRows: number): number[] {
  const ends: number[] = [];
  let acc = 0;
  let start = 0;
  for (let i = 0; i < n; i++) {
    const size = codes[i]! < 0 ? 0 : 4;
    acc += size;
    if ((acc >= pageBytes || i - start >= pageRows) && i > start) {
      ends.push(i);
      start = i;
      acc = size;
    }
  }
  if (start < n || n === 0) ends.push(n);
  return ends;
}

/** A dictionary-coded page's values into `scratch`: bit width, then the present codes RLE/bit-packed. */
function dictionaryCodesPage(codes: Int32Array, start: number, end: number, nulls: number): void {
  const present = new Int32Array(end - start - nulls);
  let m = 0;
  let most = 0;
  for (let i = start; i < end; i++) {
    const code = codes[i]!;
    if (code < 0) continue;
    present[m++] = code;
    if (code > most) most = code;
  }
  const bitWidth = Math.ceil(Math.log2(most + 1));
  scratch.byte(bitWidth);
  writeHybrid(scratch, present, 0, m, bitWidth);
}

/** A boolean page's values into `scratch`: RLE (length-prefixed) or PLAIN bit-packed. */
function booleanPage(data: readonly unknown[], start: number, end: number, nulls: number, rle: boolean): void {
  const bits = new Int32Array(end - start - nulls);
  let m = 0;
  for (let i = start; i < end; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) bits[m++] = v ? 1 : 0;
  }
  if (rle) {
    levelsScratch.reset();
    writeHybrid(levelsScratch, bits, 0, m, 1);
    scratch.u32(levelsScratch.len);
    scratch.ensure(levelsScratch.len);
    scratch.buf.set(levelsScratch.buf.subarray(0, levelsScratch.len), scratch.len);
    scratch.len += levelsScratch.len;
  } else {
    // PLAIN booleans: bit-packed, least significant bit first
    scratch.ensure((m + 7) >> 3);
    for (let k = 0; k < m; k += 8) {
      let b = 0;
      for (let j = 0; j < 8 && k + j < m; j++) b |= bits[k + j]! << j;
      scratch.buf[scratch.len++] = b;
    }
  }
}

function plainStringsPage(data: readonly unknown[], start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) scratch.str(v as string);
  }
}

function plainInt32Page(data: readonly unknown[], start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) scratch.i32(v as number);
  }
}

function plainInt64Page(data: readonly unknown[], start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) scratch.i64(v as bigint);
  }
}

/** A page's bounds (undefined when all null), set by nativeBounds/utf8Bounds. */
let boundMin: unknown;
let boundMax: unknown;

/** Bounds by `<`: exact for numbers, bigints, booleans and strings without a code unit >= U+D800. */
function nativeBounds(data: readonly unknown[], start: number, end: number): void {
  let min: unknown;
  let max: unknown;
  let i = start;
  for (; i < end && min === undefined; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) min = max = v;
  }
  for (; i < end; i++) {
    const v = data[i];
    if (v === null || v === undefined) continue;
    if ((v as number) < (min as number)) min = v;
    else if ((max as number) < (v as number)) max = v;
  }
  boundMin = min;
  boundMax = max;
}

/** A dictionary's values in order (strings in UTF-8 byte order) and each code's place in it. */
interface Ranks {
  sorted: unknown[];
  rankOf: Int32Array;
}

function rankDictionary(dict: unknown[], high: boolean): Ranks {
  const byRank = Array.from(dict.keys());
  if (high) byRank.sort((a, b) => compareStrings(dict[a] as string, dict[b] as string));
  else byRank.sort((a, b) => ((dict[a] as number) < (dict[b] as number) ? -1 : (dict[b] as number) < (dict[a] as number) ? 1 : 0));
  const rankOf = new Int32Array(dict.length);
  for (let r = 0; r < byRank.length; r++) rankOf[byRank[r]!] = r;
  return { sorted: byRank.map((code) => dict[code]), rankOf };
}

/** Bounds of a dictionary-coded page from its codes (-1: null): the values of the least and greatest rank. */
function codeBounds(codes: Int32Array, start: number, end: number, ranks: Ranks): void {
  const rankOf = ranks.rankOf;
  let lo = 0x7fffffff;
  let hi = -1;
  for (let i = start; i < end; i++) {
    const code = codes[i]!;
    if (code < 0) continue;
    const r = rankOf[code]!;
    if (r < lo) lo = r;
    if (r > hi) hi = r;
  }
  boundMin = hi < 0 ? undefined : ranks.sorted[lo];
  boundMax = hi < 0 ? undefined : ranks.sorted[hi];
}

/** Bounds of strings in UTF-8 byte order. */
function utf8Bounds(data: readonly unknown[], start: number, end: number): void {
  let min: unknown;
  let max: unknown;
  let i = start;
  for (; i < end && min === undefined; i++) {
    const v = data[i];
    if (v !== null && v !== undefined) min = max = v;
  }
  for (; i < end; i++) {
    const v = data[i];
    if (v === null || v === undefined) continue;
    if (compareStrings(v as string, min as string) < 0) min = v;
    else if (compareStrings(max as string, v as string) < 0) max = v;
  }
  boundMin = min;
  boundMax = max;
}

