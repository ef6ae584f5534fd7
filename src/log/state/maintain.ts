// State maintenance: keeps a lookup opening a handful of files. Every run
// adds small sorted data files and an equality delete file to each state
// table it changes; past a threshold, a table is rewritten by a k-way merge of
// its (each already sorted) data files with the deletes applied:
//
// - major: every data and delete file -> globally sorted, non-overlapping
//   files of `fileRows` rows; no delete file is left;
// - minor (a big table with few deletes): only the data files at or after the
//   oldest delete file's sequence number, plus every delete file -> sorted
//   files and ONE delete file holding the union of the deleted ids (it still
//   has to reach the older, untouched files).
//
// Both commit as a rewrite at the sequence number of the snapshot they read:
// rows and deletes committed meanwhile by runs stay newer (kept, and still
// applied to the rewritten rows), and a file read that is no longer live
// fails the commit (nothing changed; run it again).
//
// Memory: one chunk of rows (`chunkRows`) per input file plus the deleted ids
// (the deltas' size), never the table. Crash story: files are written before
// the one commit and named by nothing until it lands; a crash leaves orphans
// for gc, and a rerun decides afresh (idempotent). Crash points
// `state-maintain:file-written`, then the lake's commit points.
import type { Batch, DataFile, NestedField } from '../../lake/spec/types.ts';
import { ParquetDataFile } from '../../lake/parquet/read.ts';
import type { Table } from '../../lake/table/table.ts';
import { writeOptions } from '../../lake/table/write.ts';
import { compareStrings } from '../../lake/spec/values.ts';
import { crashPoint } from '../../lake/testing/crash.ts';
import type { EventLog } from '../event-log.ts';
import { ident } from '../schema.ts';
import { STATE_TABLES, stateSchema, type StateTable } from './schema.ts';
import { rowOrder, toBatch } from './delta.ts';
import type { Row } from './rows.ts';

export interface MaintainOptions {
  /** Tables to look at (default all five). */
  tables?: StateTable[];
  /** Rewrite even below the thresholds (a major rewrite). */
  force?: boolean;
  /** Delete files or extra data files a table may gather before it is rewritten (default 8). */
  maxDeltaFiles?: number;
  /** Rows per input file read at a time in the merge (bounds memory; default 4096). */
  chunkRows?: number;
}

export interface TableMaintenance {
  table: string;
  action: 'none' | 'minor' | 'major';
  before: { dataFiles: number; deleteFiles: number; rows: bigint };
  after: { dataFiles: number; deleteFiles: number; rows: bigint };
  /** Rows the merge dropped as deleted. */
  dropped: number;
  ms: number;
}

export interface MaintainReport {
  tables: TableMaintenance[];
  ms: number;
}

interface Live {
  file: DataFile;
  specId: number;
  sequenceNumber: bigint;
}

/** Run maintenance on the state tables that need it. */
export async function maintainState(log: EventLog, opts: MaintainOptions = {}): Promise<MaintainReport> {
  const t0 = Date.now();
  const out: TableMaintenance[] = [];
  for (const name of opts.tables ?? STATE_TABLES) {
    if (!log.lake.tableExists(ident(name))) continue;
    out.push(await log.commit(`state maintain ${name}`, () => maintainTable(log, name, opts)));
  }
  return { tables: out, ms: Date.now() - t0 };
}

/** One line: `state maintain: code_nodes major 12+3 -> 2 files, …`. */
export function formatMaintainReport(r: MaintainReport): string {
  const parts = r.tables.map((t) =>
    t.action === 'none'
      ? `${t.table} ok (${t.before.dataFiles} data, ${t.before.deleteFiles} delete files)`
      : `${t.table} ${t.action}: ${t.before.dataFiles} data + ${t.before.deleteFiles} delete files -> ${t.after.dataFiles} + ${t.after.deleteFiles}, ${t.dropped} deleted rows dropped`,
  );
  return `state maintain: ${parts.join('; ')} in ${r.ms} ms`;
}

async function maintainTable(log: EventLog, name: StateTable, opts: MaintainOptions): Promise<TableMaintenance> {
  const t0 = Date.now();
  const table = await log.lake.loadTable(ident(name));
  const snap = table.currentSnapshot();
  const live: Live[] = snap ? await table.liveFiles() : [];
  const data = live.filter((f) => f.file.content === 0);
  const deletes = live.filter((f) => f.file.content !== 0);
  const rows = data.reduce((s, f) => s + f.file.recordCount, 0n);
  const before = { dataFiles: data.length, deleteFiles: deletes.length, rows };
  const none: TableMaintenance = { table: name, action: 'none', before, after: before, dropped: 0, ms: 0 };
  if (!snap) return none;
  const fileRows = writeOptions(table.properties).fileRows;
  const max = opts.maxDeltaFiles ?? 8;
  const ideal = Math.max(1, Math.ceil(Number(rows) / fileRows));
  if (!opts.force && deletes.length <= max && data.length <= ideal + max) return { ...none, ms: Date.now() - t0 };
  if (deletes.some((d) => d.file.content !== 2)) throw new Error(`${name}: holds position delete files, which state tables never get; not rewritten`);

  // major when the deletes are a large share or the table is small; else minor
  const deleted = deletes.reduce((s, f) => s + f.file.recordCount, 0n);
  const oldest = deletes.length > 0 ? deletes.reduce((m, d) => (d.sequenceNumber < m ? d.sequenceNumber : m), deletes[0]!.sequenceNumber) : undefined;
  const major = opts.force || oldest === undefined || rows < BigInt(fileRows) || deleted * 20n > rows;
  const inputs = major ? data : data.filter((f) => f.sequenceNumber >= oldest!);
  const deletedAt = await loadDeletes(log, table, deletes);
  const schemaFields = stateSchema(name).fields;
  const writer = new SortedWriter(table, name, fileRows);
  let dropped = 0;
  try {
    dropped = await mergeFiles(log, inputs, schemaFields, name, deletedAt, opts.chunkRows ?? 4096, (r) => writer.add(r));
    await writer.close();
    let union: { file: DataFile; specId: number } | undefined;
    if (!major && deletedAt.size > 0) {
      const idField = table.schema.fields.find((f) => f.name === 'id')!;
      const ids = [...deletedAt.keys()].sort(compareStrings);
      union = await table.writeEqualityDeletes([idField.id], [{ fields: [idField], numRows: ids.length, columns: [ids] }]);
      if (union) writer.extra.push(union.file.filePath);
      crashPoint('state-maintain:file-written');
    }
    const removed = [...inputs, ...deletes].map((f) => f.file.filePath);
    await table.commit(
      table.rewriteUpdate(removed, writer.files, union ? [union] : [], { dataSequenceNumber: snap.sequenceNumber }, { 'mimir.state': major ? 'major' : 'minor' }),
      `state maintain ${name}`,
    );
  } catch (e) {
    await writer.abort();
    throw e;
  }
  const after = await table.liveFiles();
  return {
    table: name,
    action: major ? 'major' : 'minor',
    before,
    after: {
      dataFiles: after.filter((f) => f.file.content === 0).length,
      deleteFiles: after.filter((f) => f.file.content !== 0).length,
      rows: after.filter((f) => f.file.content === 0).reduce((s, f) => s + f.file.recordCount, 0n),
    },
    dropped,
    ms: Date.now() - t0,
  };
}

/** Every deleted id with the highest sequence number that deletes it. */
async function loadDeletes(log: EventLog, table: Table, deletes: Live[]): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  const idField = table.schema.fields.find((f) => f.name === 'id')!;
  for (const d of deletes) {
    const eq = d.file.equalityIds ?? [];
    if (eq.length !== 1 || eq[0] !== idField.id) throw new Error(`${d.file.filePath}: an equality delete on field ids ${eq.join(',')}, expected only ${idField.id} (id); not rewritten`);
    const pf = await ParquetDataFile.open(log.lake.io, d.file.filePath);
    try {
      for (let rg = 0; rg < pf.rowGroupCount; rg++) {
        const b = await pf.readRowGroup(rg, [idField]);
        for (const v of b.columns[0]!) {
          const id = v as string;
          const prev = out.get(id);
          if (prev === undefined || d.sequenceNumber > prev) out.set(id, d.sequenceNumber);
        }
      }
    } finally {
      await pf.close();
    }
  }
  return out;
}

/** A sorted stream of one file's rows, chunk by chunk. */
class FileCursor {
  private rg = 0;
  private at = 0;
  private buf: Row[] = [];
  private i = 0;
  constructor(
    private readonly pf: ParquetDataFile,
    private readonly fields: NestedField[],
    private readonly chunk: number,
    /** Is a row deleted? */
    private readonly dead: (r: Row) => boolean,
    private readonly onDrop: () => void,
  ) {}

  get head(): Row | undefined {
    return this.buf[this.i];
  }

  /** Move to the next live row; false at the end. */
  async advance(): Promise<boolean> {
    this.i++;
    while (this.i >= this.buf.length) {
      if (!(await this.fill())) return false;
    }
    return true;
  }

  /** Load the next chunk of live rows; false when the file is done. */
  private async fill(): Promise<boolean> {
    while (this.rg < this.pf.rowGroupCount) {
      const n = this.pf.rowGroupRows(this.rg);
      if (this.at >= n) {
        this.rg++;
        this.at = 0;
        continue;
      }
      const to = Math.min(n, this.at + this.chunk);
      const b = await this.pf.readRowGroup(this.rg, this.fields, undefined, { from: this.at, to });
      this.at = to;
      const rows: Row[] = [];
      for (let i = 0; i < b.numRows; i++) {
        const r: Row = {};
        for (let c = 0; c < b.fields.length; c++) r[b.fields[c]!.name] = b.columns[c]![i] ?? null;
        if (this.dead(r)) this.onDrop();
        else rows.push(r);
      }
      this.buf = rows;
      this.i = 0;
      if (rows.length > 0) return true;
    }
    this.buf = [];
    this.i = 0;
    return false;
  }

  async start(): Promise<boolean> {
    this.i = -1;
    return this.advance();
  }
}

/** Merge sorted files into `emit` in sort order, dropping deleted rows; returns how many were dropped. */
async function mergeFiles(
  log: EventLog,
  inputs: Live[],
  fields: NestedField[],
  name: StateTable,
  deletedAt: Map<string, bigint>,
  chunk: number,
  emit: (r: Row) => Promise<void>,
): Promise<number> {
  const order = rowOrder(name);
  let dropped = 0;
  const opened: ParquetDataFile[] = [];
  try {
    // a min-heap of cursors by their head row
    const heap: FileCursor[] = [];
    for (const f of inputs) {
      const pf = await ParquetDataFile.open(log.lake.io, f.file.filePath);
      opened.push(pf);
      const seq = f.sequenceNumber;
      const c = new FileCursor(pf, fields, chunk, (r) => {
        const at = deletedAt.get(r.id as string);
        return at !== undefined && at > seq;
      }, () => dropped++);
      if (await c.start()) heap.push(c);
    }
    const less = (a: FileCursor, b: FileCursor): boolean => order(a.head!, b.head!) < 0;
    const down = (i: number): void => {
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) return;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    };
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
    while (heap.length > 0) {
      const top = heap[0]!;
      await emit(top.head!);
      if (!(await top.advance())) {
        heap[0] = heap[heap.length - 1]!;
        heap.pop();
      }
      if (heap.length > 0) down(0);
    }
  } finally {
    for (const pf of opened) await pf.close();
  }
  return dropped;
}

/** Writes rows arriving in sort order as files of `fileRows` rows (each file one slice of the order). */
class SortedWriter {
  readonly files: { file: DataFile; specId: number }[] = [];
  /** Other files written (a merged delete file), removed on abort. */
  readonly extra: string[] = [];
  private buf: Row[] = [];
  private readonly batchRows = 16_384;
  /** Rows already in columnar form, waiting for the file they belong to. */
  private pending: Batch[] = [];
  private pendingRows = 0;

  constructor(
    private readonly table: Table,
    private readonly name: StateTable,
    private readonly fileRows: number,
  ) {}

  async add(r: Row): Promise<void> {
    this.buf.push(r);
    if (this.buf.length >= this.batchRows) this.spill();
    if (this.pendingRows >= this.fileRows) await this.writeFile();
  }

  private spill(): void {
    if (this.buf.length === 0) return;
    this.pending.push(toBatch(this.name, this.buf));
    this.pendingRows += this.buf.length;
    this.buf = [];
  }

  private async writeFile(): Promise<void> {
    this.spill();
    if (this.pendingRows === 0) return;
    const batches = this.pending;
    this.pending = [];
    this.pendingRows = 0;
    // one file per call: the writer's own file-row limit is at least ours
    this.files.push(...(await this.table.writeDataFiles(batches)));
    crashPoint('state-maintain:file-written');
  }

  async close(): Promise<void> {
    await this.writeFile();
  }

  async abort(): Promise<void> {
    for (const f of [...this.files.map((x) => x.file.filePath), ...this.extra]) await this.table.io.delete(f).catch(() => undefined);
  }
}
