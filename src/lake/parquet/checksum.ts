// Parquet page checksums: the `crc` field (4) of a PageHeader, the standard
// CRC32 (zlib's polynomial) of the page's bytes as stored — everything after
// the header: for a DATA_PAGE_V2 the levels and the (compressed) values, for
// a dictionary page its (compressed) values. parquet-java writes it by
// default and checks it when asked; Mimir writes it on every page and checks
// it on every read of a file Mimir wrote, so a flipped bit in a page is an
// error naming the file and the page, never a different answer.
//
// What it does not cover, by the format's definition: the page header itself
// (its sizes and counts) and the footer; a damaged header mostly fails to
// parse or makes the page's CRC range wrong (so the check fails), but not
// always. Pure functions over bytes: no I/O, no crash story.
import { crc32 } from 'node:zlib';
import type { ColumnMetaData, FileMetaData } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';

/** The CRC32 of a page's stored bytes (the parts in order), as Parquet's signed i32. */
export function pageCrc(...parts: Uint8Array[]): number {
  let c = 0;
  for (const p of parts) if (p.length > 0) c = crc32(p, c);
  return c | 0;
}

/** Benchmarks flip `enabled` to measure what the check costs a read; `pages` counts the pages checked. */
export const pageChecks = { enabled: true, pages: 0 };

/** A page whose bytes do not match the CRC its header holds: the file is damaged. */
export class PageChecksumError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    message: string,
  ) {
    super(message);
    this.name = 'PageChecksumError';
  }
}

/** `created_by` of the files Mimir writes (parquet-java's form: `<app> version <semver> (build <id>)`). */
export const MIMIR_CREATED_BY = 'mimir version 0.1.0 (build hyparquet-writer)';

/** Whether a footer's `created_by` says Mimir wrote the file (also the form written before 0.1.0's build tag). */
export function writtenByMimir(createdBy: string | undefined): boolean {
  return createdBy !== undefined && createdBy.startsWith('mimir version ');
}

/** A column chunk's byte range and names, for checking and naming pages. */
interface ChunkRange {
  start: number;
  end: number;
  column: string;
  rowGroup: number;
}

/**
 * Checks the pages of a file's column chunks as they are read. Every read of
 * data bytes (a byte range of the file) passes through `check`: each chunk the
 * range holds or starts inside is walked page by page from the range's start
 * (a chunk's start, or a page's offset from the offset index — readers read
 * pages from their start), and every page wholly inside the range whose
 * header holds a CRC is checked. Pages without one (files of older Mimir
 * versions) pass unchecked.
 */
export class PageChecker {
  private readonly chunks: ChunkRange[] = [];
  /** Pages found good, by offset: a page read again (a lookup after a scan) is not hashed again. */
  private readonly good = new Set<number>();

  constructor(
    readonly path: string,
    metadata: FileMetaData,
  ) {
    metadata.row_groups.forEach((rg, rowGroup) => {
      for (const c of rg.columns) {
        const meta: ColumnMetaData | undefined = c.meta_data;
        if (!meta) continue;
        const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
        this.chunks.push({ start, end: start + Number(meta.total_compressed_size), column: meta.path_in_schema.join('.'), rowGroup });
      }
    });
    this.chunks.sort((a, b) => a.start - b.start);
  }

  /** Check the pages inside `bytes`, the file's bytes [start, start + bytes.length). Throws PageChecksumError. */
  check(start: number, bytes: Uint8Array): void {
    if (!pageChecks.enabled) return;
    const end = start + bytes.length;
    for (const c of this.chunks) {
      if (c.end <= start || c.start >= end) continue;
      let at = Math.max(start, c.start);
      const stop = Math.min(end, c.end);
      while (at < stop) {
        const rel = at - start;
        const reader = { view: new DataView(bytes.buffer, bytes.byteOffset + rel, stop - at), offset: 0 };
        let header;
        try {
          header = parquetHeader(reader);
        } catch {
          // a header cut by the range's end (the rest is read later), or bytes that are no header:
          // left to the reader, which parses every header it uses and fails on a damaged one
          break;
        }
        const bodyStart = at + reader.offset;
        const bodyEnd = bodyStart + header.compressed_page_size;
        if (!(header.compressed_page_size >= 0) || bodyEnd > stop) break;
        if (header.crc !== undefined && !this.good.has(at)) {
          const body = bytes.subarray(bodyStart - start, bodyEnd - start);
          const got = pageCrc(body);
          if (got !== header.crc) {
            const hex = (v: number): string => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
            throw new PageChecksumError(
              this.path,
              at,
              `${this.path}: the ${header.type ?? 'page'} at byte ${at} (column ${c.column}, row group ${c.rowGroup}, ${header.compressed_page_size} bytes) ` +
                `fails its CRC32 check: the header says ${hex(header.crc)}, the bytes give ${hex(got)} — the file is damaged; nothing of it was answered`,
            );
          }
          this.good.add(at);
          pageChecks.pages++;
        }
        at = bodyEnd;
      }
    }
  }
}

/** The parts of a column chunk's write result the page rewrite moves (hyparquet-writer's shapes). */
export interface WrittenChunk {
  file_offset: bigint;
  meta_data?: {
    data_page_offset: bigint;
    dictionary_page_offset?: bigint;
    total_compressed_size: bigint;
    total_uncompressed_size: bigint;
  };
}
export interface WrittenOffsetIndex {
  page_locations: { offset: bigint; compressed_page_size: number; first_row_index: bigint }[];
}

/** hyparquet-writer's writer and header serializer, as `withPageChecksums` needs them. */
export interface PageWriter {
  offset: number;
  index: number;
  getBytes(): Uint8Array;
  appendBytes(b: Uint8Array): void;
}
export type WritePageHeader = (writer: PageWriter, header: ReturnType<typeof parquetHeader> & { crc?: number }) => void;

/**
 * Give every page of the column chunks just written (`chunks`, in the order
 * written, from byte `groupStart` of `writer` to its end) a CRC: hyparquet-writer
 * writes none. The pages are written again with the crc in their headers and
 * every offset that points into them — the chunks' offsets and sizes, their
 * offset indexes — moved by what the longer headers add. The bytes are those
 * flat.ts writes for the same chunk (test/lake/parquet-flat.test.ts).
 */
export function withPageChecksums(
  writer: PageWriter,
  groupStart: number,
  chunks: { chunk: WrittenChunk; offsetIndex?: WrittenOffsetIndex }[],
  writePageHeader: WritePageHeader,
): void {
  if (writer.offset !== writer.index) throw new Error('internal: page checksums need the whole row group in the writer\'s buffer');
  const old = writer.getBytes().slice(groupStart);
  writer.offset = groupStart;
  writer.index = groupStart;
  for (const { chunk, offsetIndex } of chunks) {
    const meta = chunk.meta_data;
    if (!meta) throw new Error('internal: a written column chunk without meta_data');
    const start = Number(chunk.file_offset);
    const end = start + Number(meta.total_compressed_size);
    const moved = new Map<number, number>();
    const newStart = writer.offset;
    let grown = 0;
    for (let at = start; at < end; ) {
      const rel = at - groupStart;
      const reader = { view: new DataView(old.buffer, old.byteOffset + rel, end - at), offset: 0 };
      const header = parquetHeader(reader);
      const body = old.subarray(rel + reader.offset, rel + reader.offset + header.compressed_page_size);
      moved.set(at, writer.offset);
      const headerStart = writer.offset;
      writePageHeader(writer, { ...header, crc: pageCrc(body) });
      grown += writer.offset - headerStart - reader.offset;
      writer.appendBytes(body);
      at += reader.offset + header.compressed_page_size;
    }
    const to = (o: bigint): bigint => {
      const n = moved.get(Number(o));
      if (n === undefined) throw new Error(`internal: offset ${o} is not the start of a page of its chunk`);
      return BigInt(n);
    };
    meta.data_page_offset = to(meta.data_page_offset);
    if (meta.dictionary_page_offset !== undefined) meta.dictionary_page_offset = to(meta.dictionary_page_offset);
    meta.total_compressed_size = BigInt(writer.offset - newStart);
    meta.total_uncompressed_size += BigInt(grown);
    chunk.file_offset = BigInt(newStart);
    if (offsetIndex) {
      const locs = offsetIndex.page_locations;
      for (let i = 0; i < locs.length; i++) {
        const next = i + 1 < locs.length ? to(locs[i + 1]!.offset) : BigInt(writer.offset);
        locs[i]!.offset = to(locs[i]!.offset);
        locs[i]!.compressed_page_size = Number(next - locs[i]!.offset);
      }
    }
  }
}
