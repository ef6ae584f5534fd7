// Reads Iceberg Parquet data and delete files row group by row group, with
// columns resolved by Parquet `field_id` (never by the file's own names: Java
// sanitizes them, renames never rewrite files) and values converted to the
// `Value` representation of the *table* field's type (spec/types.ts). A column
// without a field id gets one from the table's name mapping (spec order: the
// file's own ids win, see spec/name-mapping.ts); a file with no ids at all and
// no mapping to give them is refused, never read as all nulls.
//
// Invariant: memory is bounded by one row group of the projected columns —
// `open` reads only the footer (ranged reads; it keeps those last bytes, which
// usually hold the page indexes too), `readRowGroup` fetches only that group's
// column chunks — or, for a row range, only the pages covering it (offset
// index) — through an AsyncBuffer over FileIO's InputFile,
// and nothing here keeps a row group after returning it. Read-only: no crash story.
//
// Tolerated differences between file and table (notes §0, §2): REQUIRED in the
// file but optional in the table; int->long, float->double and decimal
// precision widening; timestamps in millis/nanos/INT96; `time` adjusted to UTC
// (pyarrow); uuid as plain FIXED_LEN_BYTE_ARRAY(16) (PyIceberg); decimals as
// INT32/INT64/FIXED/BYTE_ARRAY. Row-group statistics come from the raw footer
// bytes, so no value goes through a lossy JS number; so do page statistics
// (the column index), read on demand for the filter columns of a row group.
// The pages of a file Mimir wrote are checked against their CRC32 as their
// bytes are read (checksum.ts): damaged bytes are an error naming the file
// and the page, never an answer.
import { parquetMetadata, parquetRead, parquetSchema } from 'hyparquet';
import type { FileMetaData, SchemaElement, SchemaTree, AsyncBuffer } from 'hyparquet';
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';
import type { Compressors } from 'hyparquet';
import { zstdDecompress } from '../codec/zstd.ts';
import { parseOffsetIndex, type PageLocation } from './offset-index.ts';
import { narrowRead, narrowable, onePageLocations } from './narrow.ts';
import { cachedRead } from '../io/read-cache.ts';
import { PageChecker, writtenByMimir } from './checksum.ts';

// hyparquet-compressors' pure-JS zstd (fzstd) rejects some valid frames that
// libzstd writes; decode zstd with libzstd itself (the page knows its size).
// The other codecs (snappy, gzip, brotli, lz4: hyparquet-compressors, with a
// wasm module and a brotli dictionary to load) are loaded when a file first
// uses one: a process reading Mimir's own zstd files never loads them.
const ZSTD = (input: Uint8Array, outputLength: number): Uint8Array => zstdDecompress(input, outputLength, 'Parquet zstd page');
let compressors: Compressors = { ZSTD };
let allCodecs: Promise<void> | undefined;

/** Loads hyparquet-compressors once a file has a column chunk in a codec other than zstd or none. */
function codecsFor(metadata: FileMetaData): Promise<void> | undefined {
  if (allCodecs) return allCodecs;
  const other = metadata.row_groups.some((rg) => rg.columns.some((c) => c.meta_data !== undefined && c.meta_data.codec !== 'UNCOMPRESSED' && c.meta_data.codec !== 'ZSTD'));
  if (!other) return undefined;
  allCodecs = import('hyparquet-compressors').then((m) => {
    compressors = { ...m.compressors, ZSTD };
  });
  return allCodecs;
}
import type { FileIO, InputFile } from '../io/fileio.ts';
import type { Batch, IcebergType, NestedField, PrimitiveType, Value } from '../spec/types.ts';
import { NAME_MAPPING_PROPERTY, mappedById, mappedByName, type NameMapping } from '../spec/name-mapping.ts';
import { bytesBEToBigint, initialValue, unscaledToDecimal } from '../spec/values.ts';

export interface RowGroupStats {
  numRows: number;
  columns: Map<number, { min?: Value; max?: Value; nullCount?: bigint }>;
}

/** One data page of a column chunk (column index + offset index), rows relative to the row group. */
export interface PageStats {
  firstRow: number;
  rows: number;
  /** Bounds converted to the table type; absent when unusable (e.g. a truncated bound that is not UTF-8). */
  min?: Value;
  max?: Value;
  nullCount?: bigint;
  /** Every value of the page is null. */
  nullPage: boolean;
}

/**
 * I/O counters for tests and benchmarks (pruning tests observe how much was
 * read): files opened (footers parsed or taken from the read cache), row
 * groups read, bytes read from storage (footers and column chunks/pages) and
 * rows handed out by readRowGroup.
 */
export const readStats = { filesOpened: 0, rowGroupsRead: 0, bytesRead: 0, rowsDecoded: 0 };

/** First footer read: most footers fit; a larger one costs one more ranged read. */
const FOOTER_GUESS = 64 * 1024;

/** Page statistics parsed from a footer's page indexes, by (row group, chunk, type): see pageStats. */
const PAGE_STATS = new WeakMap<FileMetaData, Map<string, PageStats[] | undefined>>();
/** Page locations parsed from a footer's offset indexes, by (row group, chunk): see pageLocations. */
const PAGE_LOCATIONS = new WeakMap<FileMetaData, Map<number, Promise<PageLocation[] | undefined>>>();
const MAGIC = 0x31524150; // "PAR1" little-endian

/** Raw (undecoded) statistics of one column chunk, straight from the thrift footer. */
interface RawStats {
  max?: Uint8Array;
  min?: Uint8Array;
  nullCount?: bigint;
  maxValue?: Uint8Array;
  minValue?: Uint8Array;
}

const utf8 = new TextDecoder('utf-8');
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** Annotations we convert ourselves; hyparquet must hand us the physical values. */
function stripLeaf(e: SchemaElement): SchemaElement {
  if (e.num_children) return e;
  const ct = e.converted_type;
  const lt = e.logical_type?.type;
  const keepString = ct === 'UTF8' || lt === 'STRING';
  if (keepString) return e;
  if (ct === undefined && lt === undefined) return e;
  const out: SchemaElement = { ...e };
  delete out.converted_type;
  delete out.logical_type;
  return out;
}

function asBuffer(u: Uint8Array): ArrayBuffer {
  if (u.byteOffset === 0 && u.byteLength === u.buffer.byteLength && u.buffer instanceof ArrayBuffer) return u.buffer;
  return u.slice().buffer as ArrayBuffer;
}

function bigintOf(x: unknown): bigint | undefined {
  if (typeof x === 'bigint') return x;
  if (typeof x === 'number') return BigInt(x);
  return undefined;
}

// ---- physical -> Value conversion ----------------------------------------------

type Unit = 'MILLIS' | 'MICROS' | 'NANOS';

function timeUnitOf(e: SchemaElement): Unit | 'INT96' {
  if (e.type === 'INT96') return 'INT96';
  const lt = e.logical_type;
  if (lt && (lt.type === 'TIMESTAMP' || lt.type === 'TIME')) return lt.unit;
  const ct = e.converted_type;
  if (ct === 'TIMESTAMP_MILLIS' || ct === 'TIME_MILLIS') return 'MILLIS';
  if (e.type === 'INT32') return 'MILLIS'; // TIME_MILLIS is the only INT32 time
  return 'MICROS';
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function uuidText(b: Uint8Array): string {
  const h = HEX;
  return (
    h[b[0]!]! + h[b[1]!]! + h[b[2]!]! + h[b[3]!]! + '-' + h[b[4]!]! + h[b[5]!]! + '-' + h[b[6]!]! + h[b[7]!]! + '-' +
    h[b[8]!]! + h[b[9]!]! + '-' + h[b[10]!]! + h[b[11]!]! + h[b[12]!]! + h[b[13]!]! + h[b[14]!]! + h[b[15]!]!
  );
}

function describe(e: SchemaElement): string {
  const ann = e.logical_type?.type ?? e.converted_type;
  return `${e.type ?? 'group'}${ann ? ` ${ann}` : ''}`;
}

/** Throws unless the file column can be read as the table type. */
function checkCompatible(file: string, f: NestedField, t: PrimitiveType, e: SchemaElement): void {
  const p = e.type;
  const ok = ((): boolean => {
    switch (t.type) {
      case 'boolean':
        return p === 'BOOLEAN';
      case 'int':
      case 'date':
        return p === 'INT32';
      case 'long':
        return p === 'INT64' || p === 'INT32';
      case 'float':
        return p === 'FLOAT';
      case 'double':
        return p === 'DOUBLE' || p === 'FLOAT';
      case 'time':
        return p === 'INT64' || p === 'INT32';
      case 'timestamp':
      case 'timestamptz':
      case 'timestamp_ns':
      case 'timestamptz_ns':
        return p === 'INT64' || p === 'INT96';
      case 'string':
        return p === 'BYTE_ARRAY';
      case 'uuid':
        return p === 'FIXED_LEN_BYTE_ARRAY' && e.type_length === 16;
      case 'fixed':
        return p === 'FIXED_LEN_BYTE_ARRAY' && e.type_length === t.length;
      case 'binary':
        return p === 'BYTE_ARRAY' || p === 'FIXED_LEN_BYTE_ARRAY';
      case 'decimal': {
        if (p !== 'INT32' && p !== 'INT64' && p !== 'FIXED_LEN_BYTE_ARRAY' && p !== 'BYTE_ARRAY') return false;
        const scale = e.logical_type?.type === 'DECIMAL' ? e.logical_type.scale : e.scale ?? 0;
        const precision = e.logical_type?.type === 'DECIMAL' ? e.logical_type.precision : e.precision;
        return scale === t.scale && (precision === undefined || precision <= t.precision);
      }
      case 'unknown':
        return true;
    }
  })();
  if (!ok) {
    const tt = t.type === 'decimal' ? `decimal(${t.precision}, ${t.scale})` : t.type === 'fixed' ? `fixed[${t.length}]` : t.type;
    const fs = e.scale !== undefined ? ` (precision ${e.precision}, scale ${e.scale})` : e.type_length ? ` (length ${e.type_length})` : '';
    throw new TypeError(`${file}: column "${e.name}" (field id ${f.id}, ${f.name}) is ${describe(e)}${fs}; cannot read it as ${tt}`);
  }
}

/** One physical value (non-null) to a Value of `t`. Used for nested data and statistics. */
function convertOne(v: unknown, t: PrimitiveType, e: SchemaElement): Value {
  switch (t.type) {
    case 'boolean':
      return v as boolean;
    case 'int':
    case 'date':
      return v as number;
    case 'long':
      return typeof v === 'bigint' ? v : BigInt(v as number);
    case 'float':
    case 'double':
      return v as number;
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return toMicros(v, timeUnitOf(e));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return toNanos(v, timeUnitOf(e));
    case 'string':
      return typeof v === 'string' ? v : utf8.decode(v as Uint8Array);
    case 'uuid':
      return uuidText(v as Uint8Array);
    case 'fixed':
    case 'binary':
      return typeof v === 'string' ? new TextEncoder().encode(v) : (v as Uint8Array);
    case 'decimal':
      return unscaledToDecimal(unscaledOf(v), t.scale);
    case 'unknown':
      return null;
  }
}

function unscaledOf(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  return bytesBEToBigint(v as Uint8Array);
}

function toMicros(v: unknown, unit: Unit | 'INT96'): bigint {
  const x = typeof v === 'bigint' ? v : BigInt(v as number);
  if (unit === 'MICROS') return x;
  if (unit === 'MILLIS') return x * 1000n;
  return floorDiv(x, 1000n); // NANOS and INT96 (hyparquet gives INT96 as nanos)
}

function toNanos(v: unknown, unit: Unit | 'INT96'): bigint {
  const x = typeof v === 'bigint' ? v : BigInt(v as number);
  if (unit === 'NANOS' || unit === 'INT96') return x;
  if (unit === 'MICROS') return x * 1000n;
  return x * 1000000n;
}

/** Converts `data[lo..hi)` of a top-level primitive column chunk into `out[offset..]`: one tight loop per type. */
function convertPrimitiveInto(out: Value[], offset: number, data: ArrayLike<unknown>, lo: number, hi: number, t: PrimitiveType, e: SchemaElement): void {
  offset -= lo;
  switch (t.type) {
    case 'boolean':
    case 'int':
    case 'date':
    case 'float':
    case 'double':
    case 'string': {
      if (t.type === 'string' && e.converted_type !== 'UTF8' && e.logical_type?.type !== 'STRING') break;
      for (let i = lo; i < hi; i++) {
        const v = data[i];
        out[offset + i] = v === undefined || v === null ? null : (v as Value);
      }
      return;
    }
    case 'long': {
      if (e.type === 'INT64') {
        for (let i = lo; i < hi; i++) {
          const v = data[i];
          out[offset + i] = v === undefined || v === null ? null : (v as bigint);
        }
        return;
      }
      break;
    }
    case 'time':
    case 'timestamp':
    case 'timestamptz': {
      if (e.type === 'INT64' && timeUnitOf(e) === 'MICROS') {
        for (let i = lo; i < hi; i++) {
          const v = data[i];
          out[offset + i] = v === undefined || v === null ? null : (v as bigint);
        }
        return;
      }
      break;
    }
    case 'uuid': {
      for (let i = lo; i < hi; i++) {
        const v = data[i];
        out[offset + i] = v === undefined || v === null ? null : uuidText(v as Uint8Array);
      }
      return;
    }
    default:
      break;
  }
  for (let i = lo; i < hi; i++) {
    const v = data[i];
    out[offset + i] = v === undefined || v === null ? null : convertOne(v, t, e);
  }
}

// ---- the file ------------------------------------------------------------------------

export class ParquetDataFile {
  private readonly byId = new Map<number, SchemaTree>();
  private readonly topById = new Map<number, SchemaTree>();
  /** Leaf path (joined by \u0001) -> column index inside a row group, per row group (built lazily). */
  private readonly columnIndex: (Map<string, number> | undefined)[];
  private readonly groupStarts: number[];
  private readonly file: AsyncBuffer;
  private readonly rawMetadata: FileMetaData;

  /** Field id of each column or group: its own, else the one the name mapping gives it. */
  private readonly ids = new Map<SchemaTree, number>();
  /** Field ids the file's columns carry themselves. */
  private readonly ownIds = new Set<number>();

  private constructor(
    readonly path: string,
    private readonly input: InputFile,
    size: number,
    private readonly metadata: FileMetaData,
    private readonly rawStats: (RawStats | undefined)[][],
    /** The last bytes of the file as read by `open` (footer, usually the page indexes too). */
    tail: Uint8Array,
    nameMapping: NameMapping | undefined,
  ) {
    this.nested = { file: path, idOf: (n) => this.ids.get(n) };
    const tree = parquetSchema(metadata);
    const own = (node: SchemaTree): void => {
      if (node.element.field_id !== undefined) this.ownIds.add(node.element.field_id);
      for (const c of node.children) own(c);
    };
    for (const c of tree.children) own(c);
    if (this.ownIds.size === 0 && nameMapping === undefined && tree.children.length > 0) {
      throw new Error(
        `${path}: its columns carry no Parquet field ids and the table has no ${NAME_MAPPING_PROPERTY} to map them by name ` +
          `(columns ${tree.children.map((c) => c.element.name).join(', ')}) — not read`,
      );
    }
    const visit = (node: SchemaTree, level: NameMapping | undefined, top: boolean, parentIsList: boolean): void => {
      let id = node.element.field_id;
      let entry = level === undefined ? undefined : id !== undefined ? mappedById(level, id) ?? mappedByName(level, node.element.name) : mappedByName(level, node.element.name);
      if (entry === undefined && level !== undefined && parentIsList) entry = mappedByName(level, 'element');
      if (id === undefined && entry?.fieldId !== undefined && !this.ownIds.has(entry.fieldId) && !this.byId.has(entry.fieldId)) id = entry.fieldId;
      if (id !== undefined) {
        this.ids.set(node, id);
        if (!this.byId.has(id)) this.byId.set(id, node);
        if (top && !this.topById.has(id)) this.topById.set(id, node);
      }
      const ann = node.element.logical_type?.type ?? node.element.converted_type;
      const isList = ann === 'LIST';
      const wrapper = isList || ann === 'MAP' || ann === 'MAP_KEY_VALUE';
      for (const c of node.children) {
        // the repeated middle level of a LIST or MAP is not in the mapping: its children are
        if (wrapper && c.element.repetition_type === 'REPEATED' && c.children.length > 0 && c.element.field_id === undefined) {
          for (const g of c.children) visit(g, entry?.fields, false, isList);
        } else visit(c, entry?.fields, false, isList);
      }
    };
    for (const c of tree.children) visit(c, nameMapping, true, false);
    this.columnIndex = metadata.row_groups.map(() => undefined);
    this.groupStarts = [];
    let start = 0;
    for (const rg of metadata.row_groups) {
      this.groupStarts.push(start);
      start += Number(rg.num_rows);
    }
    this.rawMetadata = { ...metadata, schema: metadata.schema.map(stripLeaf) };
    const tailStart = size - tail.length;
    // every page of a file Mimir wrote carries a CRC, checked as its bytes are read (checksum.ts)
    const checker = writtenByMimir(metadata.created_by) ? new PageChecker(path, metadata) : undefined;
    this.file = {
      byteLength: size,
      slice: async (s: number, e?: number): Promise<ArrayBuffer> => {
        const end = e ?? size;
        // offset/column indexes usually lie in the tail already read: no I/O for them
        if (s >= tailStart && end <= size) {
          const part = tail.slice(s - tailStart, end - tailStart);
          checker?.check(s, part);
          return part.buffer;
        }
        readStats.bytesRead += end - s;
        const bytes = await input.read(s, end);
        checker?.check(s, bytes);
        return asBuffer(bytes);
      },
    };
  }

  /**
   * Opens a file and reads its footer with ranged reads. `nameMapping` (the
   * table's `schema.name-mapping.default`) gives ids to columns without them.
   */
  static async open(io: FileIO, path: string, opts: { nameMapping?: NameMapping } = {}): Promise<ParquetDataFile> {
    const input = await io.open(path);
    try {
      // the footer's parse, once per file for a reader with a read cache (files never change)
      const footer = await cachedRead(io, `parquet footer ${path}`, async () => {
        const size = await input.size();
        const bad = (what: string): Error => new Error(`${path}: not a readable Parquet file: ${what}`);
        if (size < 12) throw bad(`expected at least 12 bytes ("PAR1", footer, length, "PAR1"), found ${size}`);
        const firstLen = Math.min(size, FOOTER_GUESS);
        let tail = await input.read(size - firstLen, size);
        readStats.bytesRead += firstLen;
        const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
        const magic = view.getUint32(tail.length - 4, true);
        if (magic !== MAGIC) {
          const found = Array.from(tail.subarray(tail.length - 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
          throw bad(`expected trailing magic "PAR1" (50 41 52 31), found ${found}`);
        }
        const metaLen = view.getUint32(tail.length - 8, true);
        if (metaLen + 12 > size) throw bad(`footer length ${metaLen} does not fit in a file of ${size} bytes`);
        if (metaLen + 8 > tail.length) {
          const more = await input.read(size - metaLen - 8, size - firstLen);
          readStats.bytesRead += more.length;
          const joined = new Uint8Array(metaLen + 8);
          joined.set(more, 0);
          joined.set(tail, more.length);
          tail = joined;
        }
        const footerBytes = tail.subarray(tail.length - metaLen - 8);
        let metadata: FileMetaData;
        let rawStats: (RawStats | undefined)[][];
        try {
          metadata = parquetMetadata(footerBytes);
          rawStats = readRawStats(footerBytes, metaLen);
        } catch (e) {
          throw bad(`corrupt footer (${metaLen} bytes): ${(e as Error).message}`);
        }
        if (rawStats.length !== metadata.row_groups.length) throw bad('corrupt footer: row group statistics do not line up');
        return { value: { size, tail, metadata, rawStats }, fileBytes: tail.length };
      });
      await codecsFor(footer.metadata);
      readStats.filesOpened++;
      return new ParquetDataFile(path, input, footer.size, footer.metadata, footer.rawStats, footer.tail, opts.nameMapping);
    } catch (e) {
      await input.close().catch(() => undefined);
      throw e;
    }
  }

  get numRows(): number {
    return Number(this.metadata.num_rows);
  }

  get rowGroupCount(): number {
    return this.metadata.row_groups.length;
  }

  /** Rows of one row group. */
  rowGroupRows(index: number): number {
    return Number(this.group(index).num_rows);
  }

  /** Whether any column or group of the file has this field id (its own or by the name mapping). */
  hasField(fieldId: number): boolean {
    return this.byId.has(fieldId);
  }

  /** The name of the file's top-level column holding this field id (its own or by the name mapping), if any. */
  topColumnName(fieldId: number): string | undefined {
    return this.topById.get(fieldId)?.element.name;
  }

  /** Whether a column or group of the file carries this field id itself (not by the name mapping). */
  hasOwnField(fieldId: number): boolean {
    return this.ownIds.has(fieldId);
  }

  private readonly nested: NestedContext;

  private group(index: number): FileMetaData['row_groups'][number] {
    const rg = this.metadata.row_groups[index];
    if (!rg) throw new RangeError(`${this.path}: row group ${index} does not exist (the file has ${this.rowGroupCount})`);
    return rg;
  }

  private chunkIndex(index: number, leaf: SchemaTree): number {
    let m = this.columnIndex[index];
    if (!m) {
      m = new Map();
      this.group(index).columns.forEach((c, i) => {
        if (c.meta_data) m!.set(c.meta_data.path_in_schema.join('\u0001'), i);
      });
      this.columnIndex[index] = m;
    }
    return m.get(leaf.path.join('\u0001')) ?? -1;
  }

  /**
   * Min/max/null count of primitive fields in one row group, converted to the
   * table type; absent when the file's statistics are missing or unusable.
   */
  rowGroupStats(index: number, fields: NestedField[]): RowGroupStats {
    const rg = this.group(index);
    const out: RowGroupStats = { numRows: Number(rg.num_rows), columns: new Map() };
    for (const f of fields) {
      if (f.type.type === 'struct' || f.type.type === 'list' || f.type.type === 'map') continue;
      const node = this.byId.get(f.id);
      if (!node || node.children.length || isRepeatedPath(node)) continue;
      const ci = this.chunkIndex(index, node);
      if (ci < 0) continue;
      const raw = this.rawStats[index]?.[ci];
      const entry: { min?: Value; max?: Value; nullCount?: bigint } = {};
      if (raw?.nullCount !== undefined) entry.nullCount = raw.nullCount;
      const e = node.element;
      try {
        checkCompatible(this.path, f, f.type, e);
      } catch {
        out.columns.set(f.id, entry);
        continue;
      }
      let lo = raw?.minValue;
      let hi = raw?.maxValue;
      if ((lo === undefined || hi === undefined) && legacyOrderIsSigned(e)) {
        lo = raw?.min;
        hi = raw?.max;
      }
      if (lo !== undefined && hi !== undefined) {
        const a = statValue(lo, f.type, e);
        const b = statValue(hi, f.type, e);
        if (a !== undefined && b !== undefined) {
          const float = f.type.type === 'float' || f.type.type === 'double';
          // a zero bound may have been written with either sign: widen it (Parquet spec)
          entry.min = float && a === 0 ? -0 : a;
          entry.max = float && b === 0 ? 0 : b;
        }
      }
      out.columns.set(f.id, entry);
    }
    return out;
  }

  /**
   * Per-page statistics of a top-level primitive field in one row group, from
   * the chunk's column index and offset index (two small ranged reads, often
   * served by the footer tail). Undefined when the file has no page index for
   * it or the column cannot be read as the field's type.
   */
  async pageStats(index: number, f: NestedField): Promise<PageStats[] | undefined> {
    const rg = this.group(index);
    if (!isPrimitiveType(f.type)) return undefined;
    const node = this.topById.get(f.id);
    if (!node || node.children.length) return undefined;
    const ci = this.chunkIndex(index, node);
    // parsed once per footer (a footer from the read cache is shared by every open of its file)
    let memo = PAGE_STATS.get(this.metadata);
    if (!memo) PAGE_STATS.set(this.metadata, (memo = new Map()));
    const key = `${index}:${ci}:${JSON.stringify(f.type)}`;
    if (memo.has(key)) return memo.get(key);
    const pages = await this.readPageStats(rg, ci, node, f, f.type);
    memo.set(key, pages);
    return pages;
  }

  private async readPageStats(rg: FileMetaData['row_groups'][number], ci: number, node: SchemaTree, f: NestedField, type: PrimitiveType): Promise<PageStats[] | undefined> {
    const chunk = rg.columns[ci];
    if (!chunk?.column_index_offset || !chunk.column_index_length || !chunk.offset_index_offset || !chunk.offset_index_length) return undefined;
    const e = node.element;
    try {
      checkCompatible(this.path, f, type, e);
    } catch {
      return undefined;
    }
    const at = (o: bigint, n: number): Promise<ArrayBuffer> => Promise.resolve(this.file.slice(Number(o), Number(o) + n));
    const [cBuf, locs] = await Promise.all([at(chunk.column_index_offset, chunk.column_index_length), this.pageLocations(rg, ci)]);
    if (locs === undefined) return undefined;
    let pages: PageStats[];
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const cix = deserializeTCompactProtocol({ view: new DataView(cBuf), offset: 0 }) as any;
      const nullPages: unknown[] = cix.field_1 ?? [];
      const mins: unknown[] = cix.field_2 ?? [];
      const maxs: unknown[] = cix.field_3 ?? [];
      const nullCounts: unknown[] | undefined = cix.field_5;
      const groupRows = Number(rg.num_rows);
      if (locs.length === 0 || nullPages.length !== locs.length || mins.length !== locs.length || maxs.length !== locs.length) return undefined;
      const float = type.type === 'float' || type.type === 'double';
      pages = locs.map((loc, i) => {
        const firstRow = Number(loc.first_row_index);
        const end = i + 1 < locs.length ? Number(locs[i + 1]!.first_row_index) : groupRows;
        const p: PageStats = { firstRow, rows: end - firstRow, nullPage: nullPages[i] === true };
        const nc = nullCounts ? bigintOf(nullCounts[i]) : undefined;
        if (nc !== undefined) p.nullCount = nc;
        const lo = mins[i];
        const hi = maxs[i];
        if (!p.nullPage && lo instanceof Uint8Array && hi instanceof Uint8Array) {
          const a = statValue(lo, type, e);
          const b = statValue(hi, type, e);
          if (a !== undefined && b !== undefined) {
            p.min = float && a === 0 ? -0 : a;
            p.max = float && b === 0 ? 0 : b;
          }
        }
        return p;
      });
      if (pages.some((p, i) => p.rows < 0 || (i === 0 && p.firstRow !== 0))) return undefined;
    } catch {
      return undefined; // a malformed page index only costs the pruning
    }
    return pages;
  }

  /**
   * The page locations of a column chunk (its offset index), parsed once per
   * footer (parseOffsetIndex: no generic Thrift decoding) and shared by every
   * open of the file. Undefined when the chunk has no offset index or it does
   * not parse (readers then do without: hyparquet reads the index itself, or
   * page statistics are not used).
   */
  private pageLocations(rg: FileMetaData['row_groups'][number], ci: number): Promise<PageLocation[] | undefined> {
    const chunk = rg.columns[ci];
    if (!chunk?.offset_index_offset || !chunk.offset_index_length) return Promise.resolve(undefined);
    let memo = PAGE_LOCATIONS.get(this.metadata);
    if (!memo) PAGE_LOCATIONS.set(this.metadata, (memo = new Map()));
    const key = this.metadata.row_groups.indexOf(rg) * 65536 + ci;
    let p = memo.get(key);
    if (!p) {
      const start = Number(chunk.offset_index_offset);
      const length = chunk.offset_index_length;
      p = Promise.resolve(this.file.slice(start, start + length)).then(
        (buf) => parseOffsetIndex(new Uint8Array(buf)),
        () => undefined,
      ).catch(() => undefined);
      memo.set(key, p);
    }
    return p;
  }

  /**
   * Rows [from, to) of a top-level primitive field through narrowRead, into
   * `out`; false (nothing written) when narrowRead does not take the chunk.
   */
  private async readNarrow(rg: FileMetaData['row_groups'][number], node: SchemaTree, field: NestedField, from: number, to: number, out: Value[]): Promise<boolean> {
    if (!isPrimitiveType(field.type) || node.children.length) return false;
    const ci = this.chunkIndex(this.metadata.row_groups.indexOf(rg), node);
    const meta = rg.columns[ci]?.meta_data;
    const element = stripLeaf(node.element);
    if (!meta || !narrowable(element, meta)) return false;
    // a chunk without an offset index: one page, as writers omit it exactly then (narrowRead checks)
    const pages = (await this.pageLocations(rg, ci)) ?? onePageLocations(meta);
    if (pages === undefined) return false;
    let data: unknown[] | undefined;
    try {
      data = await narrowRead(this.file, meta, element, pages, Number(rg.num_rows), from, to, ZSTD);
    } catch (e) {
      throw new Error(`${this.path}: reading rows ${from}..${to} of column "${node.element.name}": ${(e as Error).message}`);
    }
    if (data === undefined) return false;
    convertPrimitiveInto(out, 0, data, 0, data.length, field.type, node.element);
    return true;
  }

  /**
   * All rows of one row group, one column per requested field (matched by
   * field id). A field absent from the file gets `missing(field)` (default null).
   */
  async readRowGroup(
    index: number,
    fields: NestedField[],
    missing?: (field: NestedField) => Value,
    rows?: { from: number; to: number },
  ): Promise<Batch> {
    const rg = this.group(index);
    readStats.rowGroupsRead++;
    const groupRows = Number(rg.num_rows);
    const from = rows ? Math.max(0, Math.min(rows.from, groupRows)) : 0;
    const to = rows ? Math.max(from, Math.min(rows.to, groupRows)) : groupRows;
    const numRows = to - from;
    readStats.rowsDecoded += numRows;
    // a row range reads only the pages it needs (offset index); chunks are clipped to it
    const narrowed = numRows < groupRows;
    const groupStart = this.groupStarts[index]! + from;
    const columns: Value[][] = [];
    const present: { j: number; node: SchemaTree; field: NestedField }[] = [];
    const names = new Set<string>();
    for (let j = 0; j < fields.length; j++) {
      const f = fields[j]!;
      const node = this.topById.get(f.id);
      if (!node) {
        const v = missing ? missing(f) : null;
        columns.push(new Array<Value>(numRows).fill(v));
        continue;
      }
      if (f.type.type !== 'struct' && f.type.type !== 'list' && f.type.type !== 'map') {
        if (node.children.length) throw new TypeError(`${this.path}: field id ${f.id} (${f.name}) is a group in the file but ${f.type.type} in the table`);
        checkCompatible(this.path, f, f.type, node.element);
      }
      columns.push(new Array<Value>(numRows));
      present.push({ j, node, field: f });
      names.add(node.element.name);
    }
    // a narrowed read decodes only its rows of the flat columns narrowRead takes; hyparquet reads the rest
    let rest = present;
    if (narrowed && present.length && numRows > 0) {
      const done = await Promise.all(present.map(({ j, node, field }) => this.readNarrow(rg, node, field, from, to, columns[j]!)));
      rest = present.filter((_, k) => !done[k]);
      for (const { node } of present.filter((_, k) => done[k])) names.delete(node.element.name);
    }
    if (rest.length && numRows > 0) {
      const chunks = new Map<string, { rowStart: number; data: ArrayLike<unknown> }[]>();
      // a narrowed read: the page locations of the chunks read, parsed here once per footer (hyparquet
      // would parse each chunk's offset index again at every read); a chunk without them is left to it
      let pageLocationsByGroup: Record<string, PageLocation[]>[] | undefined;
      if (narrowed) {
        const locations: Record<string, PageLocation[]> = {};
        await Promise.all(
          rg.columns.map(async (c, ci) => {
            const p = c.meta_data?.path_in_schema;
            if (!p || !names.has(p[0]!)) return;
            const locs = await this.pageLocations(rg, ci);
            if (locs !== undefined && locs.length > 0) locations[p.join('.')] = locs;
          }),
        );
        pageLocationsByGroup = this.metadata.row_groups.map((_, i) => (i === index ? locations : {}));
      }
      try {
        await parquetRead({
          // not in ParquetReadOptions' type: hyparquet's planner takes it through the options (plan.js)
          ...(pageLocationsByGroup ? ({ pageLocationsByGroup } as object) : {}),
          file: this.file,
          metadata: this.rawMetadata,
          columns: [...names],
          rowStart: groupStart,
          rowEnd: groupStart + numRows,
          useOffsetIndex: narrowed,
          compressors,
          utf8: false,
          parsers: { timestampFromNanoseconds: (n: bigint) => n },
          onChunk: ({ columnName, columnData, rowStart }) => {
            let list = chunks.get(columnName);
            if (!list) chunks.set(columnName, (list = []));
            list.push({ rowStart, data: columnData as ArrayLike<unknown> });
          },
        });
      } catch (e) {
        throw new Error(`${this.path}: reading row group ${index}: ${(e as Error).message}`);
      }
      for (const { j, node, field } of rest) {
        const out = columns[j]!;
        const list = chunks.get(node.element.name) ?? [];
        let filled = 0;
        for (const chunk of list) {
          const { rowStart, data } = chunk;
          // pages may extend past a narrowed range on either side: convert only [lo, hi)
          let lo = 0;
          let hi = data.length;
          if (narrowed) {
            lo = Math.max(rowStart, groupStart) - rowStart;
            hi = Math.min(rowStart + data.length, groupStart + numRows) - rowStart;
            if (hi <= lo) continue;
          }
          const offset = rowStart + lo - groupStart;
          if (offset < 0 || offset + (hi - lo) > numRows) throw new Error(`${this.path}: row group ${index}: column "${node.element.name}" returned rows outside the group`);
          if (isPrimitiveType(field.type)) convertPrimitiveInto(out, offset, data, lo, hi, field.type, node.element);
          else for (let i = lo; i < hi; i++) out[offset + i - lo] = convertNested(this.nested, data[i], field, field.type, node);
          filled += hi - lo;
        }
        if (filled !== numRows) {
          throw new Error(`${this.path}: row group ${index}: column "${node.element.name}" (field id ${field.id}) has ${filled} values, expected ${numRows}`);
        }
      }
    }
    return { fields, numRows, columns };
  }

  async close(): Promise<void> {
    await this.input.close();
  }
}

function isPrimitiveType(t: IcebergType): t is PrimitiveType {
  return t.type !== 'struct' && t.type !== 'list' && t.type !== 'map';
}

function isRepeatedPath(node: SchemaTree): boolean {
  // SchemaTree has no parent link; a leaf under a LIST/MAP has a path longer than its struct nesting.
  // Field ids on elements inside lists/maps still resolve, but their stats describe elements, not rows.
  return node.path.some((p) => p === 'list' || p === 'key_value');
}

/** The deprecated min/max used signed comparison: trustworthy only for numeric physical types. */
function legacyOrderIsSigned(e: SchemaElement): boolean {
  if (e.converted_type?.startsWith('UINT_')) return false;
  if (e.logical_type?.type === 'INTEGER' && !e.logical_type.isSigned) return false;
  return e.type === 'BOOLEAN' || e.type === 'INT32' || e.type === 'INT64' || e.type === 'FLOAT' || e.type === 'DOUBLE';
}

/** A raw statistics value (Parquet plain encoding) as a Value of `t`; undefined if unusable. */
function statValue(b: Uint8Array, t: PrimitiveType, e: SchemaElement): Value | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let phys: unknown;
  switch (e.type) {
    case 'BOOLEAN':
      if (b.length < 1) return undefined;
      phys = b[0] !== 0;
      break;
    case 'INT32':
      if (b.length !== 4) return undefined;
      phys = dv.getInt32(0, true);
      break;
    case 'INT64':
      if (b.length !== 8) return undefined;
      phys = dv.getBigInt64(0, true);
      break;
    case 'FLOAT':
      if (b.length !== 4) return undefined;
      phys = dv.getFloat32(0, true);
      if (Number.isNaN(phys)) return undefined;
      break;
    case 'DOUBLE':
      if (b.length !== 8) return undefined;
      phys = dv.getFloat64(0, true);
      if (Number.isNaN(phys)) return undefined;
      break;
    case 'BYTE_ARRAY':
      if (t.type === 'string') {
        try {
          return utf8Strict.decode(b);
        } catch {
          return undefined;
        }
      }
      phys = b.slice();
      break;
    case 'FIXED_LEN_BYTE_ARRAY':
      if (e.type_length !== undefined && b.length !== e.type_length) return undefined;
      phys = b.slice();
      break;
    default:
      return undefined; // INT96 order is undefined
  }
  return convertOne(phys, t, e);
}

/** Reads the raw statistics of every column chunk straight from the footer thrift. */
function readRawStats(footer: Uint8Array, metaLen: number): (RawStats | undefined)[][] {
  const view = new DataView(footer.buffer, footer.byteOffset, footer.byteLength);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const meta = deserializeTCompactProtocol({ view, offset: footer.byteLength - 8 - metaLen }) as any;
  const groups: unknown[] = meta.field_4 ?? [];
  return groups.map((g) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const cols: any[] = (g as any).field_1 ?? [];
    return cols.map((c) => {
      const s = c?.field_3?.field_12;
      if (!s) return undefined;
      const bytes = (x: unknown): Uint8Array | undefined => (x instanceof Uint8Array ? x : undefined);
      return {
        max: bytes(s.field_1),
        min: bytes(s.field_2),
        nullCount: bigintOf(s.field_3),
        maxValue: bytes(s.field_5),
        minValue: bytes(s.field_6),
      };
    });
  });
}

/** Nested values: hyparquet assembles structs as objects by Parquet name, lists as arrays, maps as objects. */
interface NestedContext {
  file: string;
  /** Field id of a node of the file's schema (its own, else by the name mapping). */
  idOf(node: SchemaTree): number | undefined;
}

function convertNested(cx: NestedContext, v: unknown, f: NestedField, t: IcebergType, node: SchemaTree): Value {
  const file = cx.file;
  if (v === null || v === undefined) return null;
  if (t.type === 'struct') {
    const o = v as Record<string, unknown>;
    const out: { [name: string]: Value } = {};
    for (const c of t.fields) {
      const child = node.children.find((n) => cx.idOf(n) === c.id);
      // a field the file lacks reads as its initial default (v3), else null
      out[c.name] = child ? convertNested(cx, o[child.element.name], c, c.type, child) : initialValue(c);
    }
    return out;
  }
  if (t.type === 'list') {
    const el = listElement(node);
    const ef: NestedField = { id: t.elementId, name: 'element', required: t.elementRequired, type: t.element };
    return (v as unknown[]).map((x) => convertNested(cx, x, ef, t.element, el));
  }
  if (t.type === 'map') {
    const kv = node.children[0];
    const kn = kv?.children.find((n) => n.element.name === 'key') ?? kv?.children[0];
    const vn = kv?.children.find((n) => n.element.name === 'value') ?? kv?.children[1];
    if (!kn || !vn) throw new TypeError(`${file}: field id ${f.id} (${f.name}) is not a Parquet MAP group`);
    const kf: NestedField = { id: t.keyId, name: 'key', required: true, type: t.key };
    const vf: NestedField = { id: t.valueId, name: 'value', required: t.valueRequired, type: t.value };
    const out = new Map<Value, Value>();
    const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as Record<string, unknown>);
    for (const [k, x] of entries) {
      out.set(mapKey(cx, k, kf, t.key, kn), convertNested(cx, x, vf, t.value, vn));
    }
    return out;
  }
  if (node.children.length) throw new TypeError(`${file}: field id ${f.id} (${f.name}) is a group in the file but ${t.type} in the table`);
  checkCompatible(file, f, t, node.element);
  return convertOne(v, t, node.element);
}

/** hyparquet turns map keys into object property names: recover the physical key, then convert. */
function mapKey(cx: NestedContext, k: unknown, f: NestedField, t: IcebergType, node: SchemaTree): Value {
  if (typeof k !== 'string' || !isPrimitiveType(t)) return convertNested(cx, k, f, t, node);
  const p = node.element.type;
  let phys: unknown = k;
  if (p === 'INT64' || p === 'INT96') phys = BigInt(k);
  else if (p === 'INT32' || p === 'FLOAT' || p === 'DOUBLE') phys = Number(k);
  else if (p === 'BOOLEAN') phys = k === 'true';
  else if ((p === 'FIXED_LEN_BYTE_ARRAY' || p === 'BYTE_ARRAY') && t.type !== 'string') {
    phys = k === '' ? new Uint8Array(0) : Uint8Array.from(k.split(',').map(Number));
  }
  return convertNested(cx, phys, f, t, node);
}

function listElement(node: SchemaTree): SchemaTree {
  // 3-level: LIST group -> repeated group -> element; 2-level: LIST group -> repeated element
  const rep = node.children[0];
  if (!rep) throw new TypeError(`list group "${node.element.name}" has no children`);
  return rep.children.length === 1 ? rep.children[0]! : rep;
}
