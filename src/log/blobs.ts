// The source in the lake: file contents kept content-addressed in one Iceberg
// table, `mimir.code_sources` (hash, size, text), one row per distinct content
// across every repo, crate and version. A file event's `hash` (sha256 of the
// bytes) is the key, so a reader gets the text of any file at any generation
// from the file row it reads at that generation, without a checkout.
//
// Invariants:
// - A row's `hash` is the sha256 of its `text`'s UTF-8 bytes (checked on write:
//   bytes that do not hash as the file row says are not stored).
// - Rows are only ever appended, in the same commit as the run that first
//   recorded the hash (a run target): a reader at generation G finds the text
//   of every file row of G that was stored. Nothing is ever deleted or
//   rewritten, so reading the current snapshot is right for every generation.
// - Stored once: a run writes only hashes the table does not hold at the run's
//   generation nor wrote earlier in the run. Two runs in flight at once may
//   both store the same new content (rare; identical rows, readers take the
//   first): no key guards this, since a blob is never wrong, only repeated.
// - Each data file holds its rows sorted by hash (the table's sort order), in
//   small row groups, so a lookup by hash reads one row group of the files
//   whose hash range covers it.
//
// Memory: the wanted (hash, path) pairs up to CHECK_BATCH, and texts up to
// FILE_BYTES before a data file is written. Crash story: the run's: files
// written are tracked by the run (deleted if it does not land); nothing is
// visible before its commit.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inList, eq } from '../lake/expr/expr.ts';
import type { Lake } from '../lake/lake.ts';
import type { TableIdent } from '../lake/catalog/catalog.ts';
import type { DataFile, NestedField, Schema, SortOrder } from '../lake/spec/types.ts';
import type { TableUpdate } from '../lake/table/commit.ts';
import type { Table } from '../lake/table/table.ts';
import type { EventLog } from './event-log.ts';
import { ident } from './schema.ts';

export const CODE_SOURCES = 'code_sources';

const FIELDS: NestedField[] = [
  { id: 1, name: 'hash', required: true, type: { type: 'string' } },
  { id: 2, name: 'size', required: true, type: { type: 'long' } },
  { id: 3, name: 'text', required: true, type: { type: 'string' } },
];
export const SOURCES_SCHEMA: Schema = { schemaId: 0, fields: FIELDS };

const SORT_ORDER: SortOrder = {
  orderId: 1,
  fields: [{ sourceId: 1, transform: { kind: 'identity' }, direction: 'asc', nullOrder: 'nulls-first' }],
};

/**
 * zstd pages (level 3: see docs/design.md for the measured levels), small row
 * groups (a lookup decodes few texts), and the metadata history of the event
 * tables (`--as-of` reads old generations' metadata).
 */
export const SOURCES_TABLE_PROPERTIES: Record<string, string> = {
  'write.parquet.compression-codec': 'zstd',
  'write.parquet.compression-level': '3',
  'write.parquet.row-group-limit': '256',
  'mimir.table': 'sources',
  'mimir.maintain': 'false',
  'write.metadata.previous-versions-max': '10',
  'write.metadata.delete-after-commit.enabled': 'false',
};

/** Wanted pairs checked against the table at once. */
const CHECK_BATCH = 4096;
/** File reads in flight at once while checking. */
const READ_AHEAD = 16;
/** Bytes of text per data file written. */
const FILE_BYTES = 32 << 20;

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Create `mimir.code_sources` when the lake has none (its own commit, once per lake). */
export async function ensureSourcesTable(lake: Lake): Promise<void> {
  const id = ident(CODE_SOURCES);
  if (lake.readOnly || lake.tableExists(id)) return;
  try {
    await lake.createTable(id, SOURCES_SCHEMA, { sortOrder: SORT_ORDER, properties: { ...SOURCES_TABLE_PROPERTIES } });
  } catch (e) {
    if (!lake.tableExists(id)) throw e; // another process created it meanwhile: fine
  }
}

/** What a run stored. */
export interface SourcesWritten {
  /** Distinct contents written. */
  blobs: number;
  /** Their bytes (uncompressed), and the data files' bytes on disk. */
  bytes: number;
  fileBytes: number;
  /** Wanted contents the lake already held (or this run wrote before). */
  present: number;
  /** Files that no longer hashed as extracted when read again (changed meanwhile): not stored. */
  changed: number;
}

/**
 * The contents one run stores: `want(hash, absPath)` for each file row the
 * run writes with a new hash; `finish()` -> the commit target. `onFile` is
 * called with each data file's path as soon as it is written (the run
 * tracks it).
 */
export class SourcesWriter {
  private readonly wanted = new Map<string, string>();
  private readonly done = new Set<string>();
  private pending: { hash: string; text: string; size: number }[] = [];
  private pendingBytes = 0;
  private readonly files: { file: DataFile; specId: number }[] = [];
  readonly written: SourcesWritten = { blobs: 0, bytes: 0, fileBytes: 0, present: 0, changed: 0 };

  private constructor(private readonly table: Table, private readonly view: Table | undefined, private readonly onFile: (path: string) => void) {}

  /**
   * A writer for a run reading at `view`'s generation; undefined when the lake
   * has no sources table (a read-only lake, or one whose table was not created).
   */
  static async open(log: EventLog, view: EventLog, onFile: (path: string) => void): Promise<SourcesWriter | undefined> {
    const id = ident(CODE_SOURCES);
    if (!log.lake.tableExists(id)) return undefined;
    return new SourcesWriter(await log.lake.loadTable(id), await view.table(CODE_SOURCES), onFile);
  }

  /** The content `hash` of the file at `absPath` is recorded by the run: store it unless present. */
  async want(hash: string, absPath: string): Promise<void> {
    if (hash === '') return;
    if (this.done.has(hash) || this.wanted.has(hash)) {
      this.written.present++;
      return;
    }
    this.wanted.set(hash, absPath);
    if (this.wanted.size >= CHECK_BATCH) await this.check();
  }

  /** Look the wanted hashes up at the run's generation; read and buffer the absent ones. */
  private async check(): Promise<void> {
    if (this.wanted.size === 0) return;
    const batch = [...this.wanted];
    this.wanted.clear();
    const present = new Set<string>();
    if (this.view) {
      for await (const b of this.view.scan({ filter: inList('hash', batch.map(([h]) => h)), columns: ['hash'] }).batches()) {
        for (const v of b.columns[0]!) if (typeof v === 'string') present.add(v);
      }
    }
    // the absent hashes' files are read READ_AHEAD at a time and handled in batch order (read one
    // at a time, each awaited, they left this thread idle at the run's end: ~0.45 s on bench:ingest)
    const reads = new Map<string, Promise<Buffer | undefined>>();
    const absent = batch.filter(([hash]) => !present.has(hash));
    let next = 0;
    const readAhead = (): void => {
      for (; next < absent.length && reads.size < READ_AHEAD; next++) {
        const [hash, file] = absent[next]!;
        reads.set(hash, readFile(file).catch(() => undefined));
      }
    };
    for (const [hash] of batch) {
      this.done.add(hash);
      if (present.has(hash)) {
        this.written.present++;
        continue;
      }
      readAhead();
      const bytes = await reads.get(hash)!;
      reads.delete(hash);
      if (bytes === undefined) {
        this.written.changed++;
        continue;
      }
      if (sha256Hex(bytes) !== hash) {
        this.written.changed++;
        continue;
      }
      this.pending.push({ hash, text: bytes.toString('utf8'), size: bytes.length });
      this.pendingBytes += bytes.length;
      if (this.pendingBytes >= FILE_BYTES) await this.flush();
    }
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const rows = this.pending.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
    this.pending = [];
    this.pendingBytes = 0;
    const out = await this.table.writeDataFiles([{
      fields: FIELDS, numRows: rows.length,
      columns: [rows.map((r) => r.hash), rows.map((r) => BigInt(r.size)), rows.map((r) => r.text)],
    }]);
    for (const f of out) {
      this.files.push(f);
      this.onFile(f.file.filePath);
      this.written.fileBytes += Number(f.file.fileSizeInBytes);
    }
    this.written.blobs += rows.length;
    for (const r of rows) this.written.bytes += r.size;
  }

  /** Store what is left; the commit target (none when nothing new was stored). */
  async finish(): Promise<{ ident: TableIdent; update: () => TableUpdate } | undefined> {
    await this.check();
    await this.flush();
    if (this.files.length === 0) return undefined;
    const files = [...this.files];
    return { ident: ident(CODE_SOURCES), update: () => this.table.appendUpdate(files, { 'mimir.sources': String(this.written.blobs) }) };
  }
}

/**
 * The text stored under `hash` (null when the lake holds none: an older lake,
 * a file not stored). Reads the table's current snapshot, which holds every
 * content any generation recorded (rows are never removed).
 */
export async function readBlob(log: EventLog, hash: string): Promise<string | null> {
  if (hash === '') return null;
  const id = ident(CODE_SOURCES);
  if (!log.lake.tableExists(id)) return null;
  const t = await log.lake.loadTable(id);
  for await (const b of t.scan({ filter: eq('hash', hash), columns: ['hash', 'text'] }).batches()) {
    for (let i = 0; i < b.numRows; i++) if (b.columns[0]![i] === hash) return b.columns[1]![i] as string;
  }
  return null;
}
