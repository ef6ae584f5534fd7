// A Parquet offset index (one per column chunk: where each data page starts,
// its compressed size and its first row) parsed from its Thrift compact bytes
// straight into hyparquet's `PageLocation`s, without the generic Thrift
// reader. Why: a question's narrowed reads need the offset index of every
// column they read, and state tables have hundreds of pages per chunk; the
// generic reader builds each 64-bit varint a byte at a time with BigInt
// arithmetic (several heap BigInts per byte) while the JIT is still cold,
// which was the largest part of a question's Thrift decoding and of its
// young-generation garbage. Here a varint is summed as a JS number (exact
// below 2^53; longer ones fall back to BigInt) and converted once.
//
// The result is the same as hyparquet's `readOffsetIndex(...).page_locations`
// (offset and first_row_index bigint, compressed_page_size number); fields
// other than the page locations (`unencoded_byte_array_data_bytes`, later
// additions) are skipped. Malformed bytes throw an Error naming what was
// expected; nothing is cached here (ParquetDataFile memoizes per footer).
// Pure function: no I/O, no crash story.
/** One data page of a column chunk: the shape of hyparquet's PageLocation (which its package does not export). */
export interface PageLocation {
  offset: bigint;
  compressed_page_size: number;
  first_row_index: bigint;
}

const T_TRUE = 1;
const T_FALSE = 2;
const T_BYTE = 3;
const T_I16 = 4;
const T_I32 = 5;
const T_I64 = 6;
const T_DOUBLE = 7;
const T_BINARY = 8;
const T_LIST = 9;
const T_SET = 10;
const T_MAP = 11;
const T_STRUCT = 12;

class Reader {
  pos = 0;
  constructor(readonly b: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.b.length) throw new Error(`offset index: expected more bytes at offset ${this.pos}, found the end (${this.b.length} bytes)`);
    return this.b[this.pos++]!;
  }

  /** An unsigned varint as a number (exact up to 2^53). */
  varNumber(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const byte = this.byte();
      result += (byte & 0x7f) * mul;
      if ((byte & 0x80) === 0) return result;
      mul *= 128;
    }
    throw new Error(`offset index: a varint longer than 10 bytes ending at offset ${this.pos}`);
  }

  /** A zigzag varint of up to 32 bits. */
  i32(): number {
    const z = this.varNumber();
    if (z > 0xffffffff) throw new Error(`offset index: a 32-bit field holds ${z} at offset ${this.pos}`);
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  /** A zigzag varint of up to 64 bits, as a bigint. */
  i64(): bigint {
    const start = this.pos;
    const z = this.varNumber();
    if (z <= Number.MAX_SAFE_INTEGER) return BigInt(z % 2 === 0 ? z / 2 : -(z + 1) / 2);
    // beyond 2^53: read it again exactly
    this.pos = start;
    let big = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.byte();
      big |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
      shift += 7n;
    }
    return (big >> 1n) ^ -(big & 1n);
  }

  /** The next field header of a struct: [type, field id], type 0 at its end. */
  field(last: number): [number, number] {
    const h = this.byte();
    const type = h & 0x0f;
    if (type === 0) return [0, 0];
    const delta = h >> 4;
    return [type, delta !== 0 ? last + delta : this.i32()];
  }

  /** A list header: [element type, size]. */
  list(): [number, number] {
    const h = this.byte();
    const n = h >> 4;
    return [h & 0x0f, n === 15 ? this.varNumber() : n];
  }

  skip(type: number): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return;
      case T_BYTE:
        this.byte();
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.varNumber();
        return;
      case T_DOUBLE:
        this.advance(8);
        return;
      case T_BINARY:
        this.advance(this.varNumber());
        return;
      case T_LIST:
      case T_SET: {
        const [elem, n] = this.list();
        for (let i = 0; i < n; i++) {
          if (elem === T_TRUE || elem === T_FALSE) this.byte(); // a bool in a list takes a byte
          else this.skip(elem);
        }
        return;
      }
      case T_MAP: {
        const n = this.varNumber();
        if (n === 0) return;
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          this.skip(kv >> 4);
          this.skip(kv & 0x0f);
        }
        return;
      }
      case T_STRUCT: {
        let id = 0;
        for (;;) {
          const [t, f] = this.field(id);
          if (t === 0) return;
          this.skip(t);
          id = f;
        }
      }
      default:
        throw new Error(`offset index: unknown Thrift compact type ${type} at offset ${this.pos}`);
    }
  }

  private advance(n: number): void {
    if (this.pos + n > this.b.length) throw new Error(`offset index: a field of ${n} bytes at offset ${this.pos} runs past the end (${this.b.length} bytes)`);
    this.pos += n;
  }
}

/**
 * The usual page location — fields 1, 2, 3 in order (headers 0x16 0x15 0x16:
 * i64, i32, i64), each varint under 7 bytes, then STOP — decoded with no
 * call per byte; undefined (nothing consumed) for any other layout, which the
 * general reader below takes.
 */
function usualPageLocation(r: Reader): PageLocation | undefined {
  const b = r.b;
  let p = r.pos;
  const n = b.length;
  if (p + 7 > n || b[p] !== 0x16) return undefined;
  p++;
  const v = [0, 0, 0];
  for (let f = 0; f < 3; f++) {
    if (f > 0) {
      if (p >= n || b[p] !== (f === 1 ? 0x15 : 0x16)) return undefined;
      p++;
    }
    let x = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (i === 7 || p >= n) return undefined;
      const byte = b[p++]!;
      x += (byte & 0x7f) * mul;
      if ((byte & 0x80) === 0) break;
      mul *= 128;
    }
    v[f] = x % 2 === 0 ? x / 2 : -(x + 1) / 2;
  }
  if (p >= n || b[p] !== 0 || v[1]! > 0x7fffffff || v[1]! < -0x80000000) return undefined;
  r.pos = p + 1;
  return { offset: BigInt(v[0]!), compressed_page_size: v[1]!, first_row_index: BigInt(v[2]!) };
}

function pageLocation(r: Reader): PageLocation {
  const usual = usualPageLocation(r);
  if (usual !== undefined) return usual;
  let offset: bigint | undefined;
  let size: number | undefined;
  let first: bigint | undefined;
  let id = 0;
  for (;;) {
    const [t, f] = r.field(id);
    if (t === 0) break;
    if (f === 1 && t === T_I64) offset = r.i64();
    else if (f === 2 && t === T_I32) size = r.i32();
    else if (f === 3 && t === T_I64) first = r.i64();
    else r.skip(t);
    id = f;
  }
  if (offset === undefined || size === undefined || first === undefined) {
    throw new Error(`offset index: a page location lacks ${offset === undefined ? 'offset' : size === undefined ? 'compressed_page_size' : 'first_row_index'} (before offset ${r.pos})`);
  }
  return { offset, compressed_page_size: size, first_row_index: first };
}

/** The page locations of one column chunk's offset index (its Thrift compact bytes). */
export function parseOffsetIndex(bytes: Uint8Array): PageLocation[] {
  const r = new Reader(bytes);
  let pages: PageLocation[] | undefined;
  let id = 0;
  for (;;) {
    const [t, f] = r.field(id);
    if (t === 0) break;
    if (f === 1 && t === T_LIST) {
      const [elem, n] = r.list();
      if (elem !== T_STRUCT) throw new Error(`offset index: expected a list of page location structs, found element type ${elem}`);
      pages = new Array<PageLocation>(n);
      for (let i = 0; i < n; i++) pages[i] = pageLocation(r);
    } else r.skip(t);
    id = f;
  }
  if (pages === undefined) throw new Error('offset index: no page_locations (field 1)');
  return pages;
}
