// A narrowed read of one flat column chunk: the values of rows [from, to) of
// a row group, decoding only those rows. A question asks for a handful of
// rows, but hyparquet decodes every page it touches whole — every value of a
// data page (thousands for a low-cardinality column) and every entry of the
// chunk's dictionary (each a new string) — which, while the JIT is cold, was
// most of a question's CPU and young-generation garbage. Here the pages are
// still fetched and decompressed whole (zstd frames cannot be cut), but the
// definition levels and values are walked without allocating up to `from`,
// and only the rows asked for are materialized; a dictionary's entries are
// located (one pass over their lengths) and only the entries used are made.
//
// The values returned are exactly those hyparquet's `parquetRead` gives for
// the same rows (with `utf8: false` and the reader's stripped schema element):
// strings for UTF8/STRING byte arrays (decoded as hyparquet decodes them),
// Uint8Array for other byte arrays, numbers for INT32/FLOAT/DOUBLE, bigints
// for INT64, null for a null. It takes only what it knows — a top-level
// OPTIONAL/REQUIRED column of those types, ZSTD or uncompressed, every data
// page a DATA_PAGE_V2 in PLAIN or RLE_DICTIONARY/PLAIN_DICTIONARY encoding
// over a PLAIN dictionary, pages where the offset index says (a chunk without
// one: a single page, checked) — and answers
// `undefined` for anything else (the caller then lets hyparquet read that
// column), never a guess. Malformed bytes throw. Read-only: no crash story.
import type { AsyncBuffer, ColumnMetaData, SchemaElement } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import type { PageLocation } from './offset-index.ts';

/** Decompresses one zstd page to its known size. */
export type Decompress = (input: Uint8Array, size: number) => Uint8Array;

/** Tests flip `enabled` to compare with hyparquet's whole-page decoding; `taken` counts the chunks read here. */
export const narrowReads = { enabled: true, taken: 0 };

// the same decoder hyparquet's default stringFromBytes uses (non-fatal: invalid bytes become U+FFFD)
const utf8 = new TextDecoder();

type Kind = 'string' | 'bytes' | 'int32' | 'int64' | 'float' | 'double';

function kindOf(e: SchemaElement): Kind | undefined {
  switch (e.type) {
    case 'BYTE_ARRAY':
      if (e.converted_type === 'UTF8' || e.logical_type?.type === 'STRING') return 'string';
      return e.converted_type === undefined && e.logical_type === undefined ? 'bytes' : undefined;
    case 'INT32':
      return e.converted_type === undefined && e.logical_type === undefined ? 'int32' : undefined;
    case 'INT64':
      return e.converted_type === undefined && e.logical_type === undefined ? 'int64' : undefined;
    case 'FLOAT':
      return e.converted_type === undefined && e.logical_type === undefined ? 'float' : undefined;
    case 'DOUBLE':
      return e.converted_type === undefined && e.logical_type === undefined ? 'double' : undefined;
    default:
      return undefined;
  }
}

/** Whether `narrowRead` can read this chunk at all (without fetching anything). */
export function narrowable(e: SchemaElement, meta: ColumnMetaData): boolean {
  return (
    narrowReads.enabled &&
    kindOf(e) !== undefined &&
    (e.repetition_type === 'OPTIONAL' || e.repetition_type === 'REQUIRED') &&
    (meta.codec === 'ZSTD' || meta.codec === 'UNCOMPRESSED') &&
    meta.path_in_schema.length === 1
  );
}

/** Largest chunk without an offset index that onePageLocations takes as one page. */
const ONE_PAGE_MAX_BYTES = 1 << 20;

/**
 * The page locations of a chunk written without an offset index, taken as a
 * single data page from its first data page to the chunk's end. Writers
 * (ours, hyparquet-writer) omit the offset index exactly when the chunk has
 * one data page: a column nearly all null or of one repeated value, such as
 * code_files' crate_dir, one page holding every row of its group. Without
 * this the chunk went to hyparquet, which decodes the whole page (every row
 * of the group: 1,204 rows at 1x, 11,995 at 10x) for the few rows asked. A
 * wrong guess (a chunk of several pages) costs only its read: narrowRead
 * checks the page header's row count against the range and declines.
 * Undefined for a chunk above ONE_PAGE_MAX_BYTES (a foreign file without
 * page indexes: left to hyparquet, not read twice).
 */
export function onePageLocations(meta: ColumnMetaData): PageLocation[] | undefined {
  const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
  const end = start + Number(meta.total_compressed_size);
  const first = Number(meta.data_page_offset);
  if (!(first >= start && first < end) || end - start > ONE_PAGE_MAX_BYTES) return undefined;
  return [{ offset: BigInt(first), compressed_page_size: end - first, first_row_index: 0n }];
}

/** A cursor over a byte range. */
class Bytes {
  pos: number;
  readonly view: DataView;
  constructor(
    readonly b: Uint8Array,
    pos = 0,
    readonly end = b.length,
  ) {
    this.pos = pos;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  need(n: number, what: string): void {
    if (this.pos + n > this.end) throw new Error(`narrow read: ${what} needs ${n} bytes at ${this.pos}, only ${this.end - this.pos} left`);
  }
  varint(): number {
    let x = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      this.need(1, 'a varint');
      const byte = this.b[this.pos++]!;
      x += (byte & 0x7f) * mul;
      if ((byte & 0x80) === 0) return x;
      mul *= 128;
    }
    throw new Error(`narrow read: a run header longer than 5 bytes at ${this.pos}`);
  }
}

/** Values of an RLE / bit-packed hybrid stream (no length prefix), read in order; `skip` without materializing. */
class Hybrid {
  private left = 0; // values left in the current run
  private rle = false;
  private value = 0; // the RLE run's value
  private bitPos = 0; // the bit-packed run's next bit, absolute in bytes*8
  constructor(
    private readonly r: Bytes,
    private readonly width: number,
  ) {}

  private run(): void {
    const h = this.r.varint();
    if ((h & 1) === 0) {
      this.rle = true;
      this.left = h >>> 1;
      const bytes = (this.width + 7) >> 3;
      this.r.need(bytes, 'an RLE value');
      let v = 0;
      for (let i = 0; i < bytes; i++) v += this.r.b[this.r.pos++]! * 2 ** (8 * i);
      this.value = v;
    } else {
      this.rle = false;
      const groups = h >>> 1;
      this.left = groups * 8;
      const bytes = groups * this.width;
      this.bitPos = this.r.pos * 8;
      // a last group may be cut short by the stream's end (writers pad; tolerate as hyparquet does)
      this.r.pos = Math.min(this.r.pos + bytes, this.r.end);
    }
  }

  skip(n: number): void {
    while (n > 0) {
      if (this.left === 0) this.run();
      const k = Math.min(n, this.left);
      if (!this.rle) this.bitPos += k * this.width;
      this.left -= k;
      n -= k;
    }
  }

  next(): number {
    if (this.left === 0) this.run();
    this.left--;
    if (this.rle) return this.value;
    const w = this.width;
    let v = 0;
    for (let i = 0; i < w; i++) {
      const bit = this.bitPos + i;
      const byte = bit >> 3;
      if (byte >= this.r.end) throw new Error(`narrow read: a bit-packed run runs past its stream (${this.r.end} bytes)`);
      if ((this.r.b[byte]! >> (bit & 7)) & 1) v += 2 ** i;
    }
    this.bitPos += w;
    return v;
  }
}

/** A PLAIN stream of values of one kind: skip and read in order. */
class Plain {
  constructor(
    private readonly r: Bytes,
    private readonly kind: Kind,
  ) {}
  private width(): number {
    return this.kind === 'int64' || this.kind === 'double' ? 8 : 4;
  }
  skip(n: number): void {
    if (this.kind === 'string' || this.kind === 'bytes') {
      for (let i = 0; i < n; i++) {
        this.r.need(4, 'a byte array length');
        const len = this.r.view.getUint32(this.r.pos, true);
        this.r.pos += 4;
        this.r.need(len, 'a byte array');
        this.r.pos += len;
      }
    } else {
      const w = this.width() * n;
      this.r.need(w, `${n} plain values`);
      this.r.pos += w;
    }
  }
  next(): unknown {
    const r = this.r;
    switch (this.kind) {
      case 'string':
      case 'bytes': {
        r.need(4, 'a byte array length');
        const len = r.view.getUint32(r.pos, true);
        r.pos += 4;
        r.need(len, 'a byte array');
        const bytes = r.b.subarray(r.pos, r.pos + len);
        r.pos += len;
        return this.kind === 'string' ? utf8.decode(bytes) : bytes;
      }
      case 'int32':
        r.need(4, 'an INT32');
        r.pos += 4;
        return r.view.getInt32(r.pos - 4, true);
      case 'float':
        r.need(4, 'a FLOAT');
        r.pos += 4;
        return r.view.getFloat32(r.pos - 4, true);
      case 'int64':
        r.need(8, 'an INT64');
        r.pos += 8;
        return r.view.getBigInt64(r.pos - 8, true);
      case 'double':
        r.need(8, 'a DOUBLE');
        r.pos += 8;
        return r.view.getFloat64(r.pos - 8, true);
    }
  }
}

/** A PLAIN dictionary: entries located once, made on first use. */
class Dictionary {
  private readonly starts: Int32Array | undefined; // byte arrays: where each entry's bytes start (its length before)
  private readonly made = new Map<number, unknown>();
  constructor(
    private readonly page: Uint8Array,
    readonly size: number,
    private readonly kind: Kind,
  ) {
    if (kind === 'string' || kind === 'bytes') {
      const starts = new Int32Array(size);
      const r = new Bytes(page);
      for (let i = 0; i < size; i++) {
        r.need(4, 'a dictionary entry length');
        const len = r.view.getUint32(r.pos, true);
        starts[i] = r.pos + 4;
        r.pos += 4;
        r.need(len, 'a dictionary entry');
        r.pos += len;
      }
      this.starts = starts;
    } else {
      const w = kind === 'int64' || kind === 'double' ? 8 : 4;
      if (size * w > page.length) throw new Error(`narrow read: a dictionary of ${size} ${kind} values in ${page.length} bytes`);
    }
  }
  get(i: number): unknown {
    if (i >= this.size) throw new Error(`narrow read: dictionary index ${i} past its ${this.size} entries`);
    let v = this.made.get(i);
    if (v !== undefined) return v;
    if (this.starts) {
      v = new Plain(new Bytes(this.page, this.starts[i]! - 4), this.kind).next();
    } else {
      const w = this.kind === 'int64' || this.kind === 'double' ? 8 : 4;
      v = new Plain(new Bytes(this.page, i * w), this.kind).next();
    }
    this.made.set(i, v);
    return v;
  }
}

/**
 * Rows [from, to) of a flat column chunk (rows relative to the row group), or
 * undefined when the chunk is not one this reader takes (see the header).
 */
export async function narrowRead(
  file: AsyncBuffer,
  meta: ColumnMetaData,
  element: SchemaElement,
  pages: PageLocation[],
  groupRows: number,
  from: number,
  to: number,
  decompress: Decompress,
): Promise<unknown[] | undefined> {
  const kind = kindOf(element);
  if (!narrowable(element, meta) || kind === undefined || pages.length === 0 || from >= to) return undefined;
  const maxDef = element.repetition_type === 'OPTIONAL' ? 1 : 0;
  const firstRow = (i: number): number => Number(pages[i]!.first_row_index);
  const pageEnd = (i: number): number => (i + 1 < pages.length ? firstRow(i + 1) : groupRows);
  let i0 = 0;
  while (i0 + 1 < pages.length && firstRow(i0 + 1) <= from) i0++;
  let i1 = i0;
  while (i1 + 1 < pages.length && firstRow(i1 + 1) < to) i1++;
  if (firstRow(i0) > from || pageEnd(i1) < to) return undefined;
  const codec = meta.codec;
  const inflate = (b: Uint8Array, size: number): Uint8Array => (codec === 'ZSTD' ? decompress(b, size) : b);

  // the dictionary page, when the chunk has one: from the chunk's start to its first data page
  const firstData = Number(pages[0]!.offset);
  const chunkStart = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
  let dictionary: Dictionary | undefined;
  if (meta.dictionary_page_offset !== undefined || Number(meta.data_page_offset) < firstData) {
    if (!(chunkStart < firstData)) return undefined;
    const bytes = new Uint8Array(await file.slice(chunkStart, firstData));
    const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
    const h = parquetHeader(reader);
    if (h.type !== 'DICTIONARY_PAGE' || !h.dictionary_page_header) return undefined;
    const enc = h.dictionary_page_header.encoding;
    if (enc !== 'PLAIN' && enc !== 'PLAIN_DICTIONARY') return undefined;
    const body = bytes.subarray(reader.offset, reader.offset + h.compressed_page_size);
    if (body.length !== h.compressed_page_size) throw new Error(`narrow read: a dictionary page of ${h.compressed_page_size} bytes, ${body.length} found`);
    dictionary = new Dictionary(inflate(body, h.uncompressed_page_size), h.dictionary_page_header.num_values, kind);
  }

  const start = Number(pages[i0]!.offset);
  const end = Number(pages[i1]!.offset) + pages[i1]!.compressed_page_size;
  const data = new Uint8Array(await file.slice(start, end));
  const out = new Array<unknown>(to - from);
  for (let p = i0; p <= i1; p++) {
    const at = Number(pages[p]!.offset) - start;
    const reader = { view: new DataView(data.buffer, data.byteOffset + at, data.byteLength - at), offset: 0 };
    const h = parquetHeader(reader);
    const v2 = h.data_page_header_v2;
    if (h.type !== 'DATA_PAGE_V2' || !v2) return undefined;
    const rows = pageEnd(p) - firstRow(p);
    if (v2.num_rows !== rows || v2.num_values !== rows || v2.repetition_levels_byte_length !== 0) return undefined;
    const enc = v2.encoding;
    const dict = enc === 'RLE_DICTIONARY' || enc === 'PLAIN_DICTIONARY';
    if (enc !== 'PLAIN' && !dict) return undefined;
    if (dict && !dictionary) return undefined;
    if (maxDef === 0 && (v2.definition_levels_byte_length !== 0 || v2.num_nulls !== 0)) return undefined;
    const page = data.subarray(at + reader.offset, at + reader.offset + h.compressed_page_size);
    if (page.length !== h.compressed_page_size) throw new Error(`narrow read: a data page of ${h.compressed_page_size} bytes, ${page.length} found`);
    // rows of this page wanted, relative to the page
    const a = Math.max(from, firstRow(p)) - firstRow(p);
    const b = Math.min(to, pageEnd(p)) - firstRow(p);
    const o = firstRow(p) + a - from; // where they go in `out`
    // definition levels (uncompressed in V2): which rows are null; how many values precede row a
    const defLen = v2.definition_levels_byte_length;
    let skipValues = a;
    let present: boolean[] | undefined;
    if (maxDef === 1) {
      const levels = new Hybrid(new Bytes(page, 0, defLen), 1);
      skipValues = 0;
      for (let i = 0; i < a; i++) skipValues += levels.next();
      present = new Array<boolean>(b - a);
      for (let i = a; i < b; i++) present[i - a] = levels.next() === 1;
    }
    const valuesSize = h.uncompressed_page_size - defLen;
    let values: Uint8Array = page.subarray(defLen);
    if (v2.is_compressed !== false && valuesSize > 0) values = inflate(values, valuesSize);
    const r = new Bytes(values);
    if (dict) {
      r.need(1, 'a dictionary bit width');
      const width = values[r.pos++]!;
      if (width > 32) throw new Error(`narrow read: a dictionary bit width of ${width}`);
      const idx = new Hybrid(r, width);
      idx.skip(skipValues);
      for (let i = 0; i < b - a; i++) out[o + i] = present && !present[i] ? null : dictionary!.get(idx.next());
    } else {
      const plain = new Plain(r, kind);
      plain.skip(skipValues);
      for (let i = 0; i < b - a; i++) out[o + i] = present && !present[i] ? null : plain.next();
    }
  }
  narrowReads.taken++;
  return out;
}
