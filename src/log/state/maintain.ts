// State maintenance: keeps a lookup opening a handful of files. Every run
// adds small sorted data files and a position delete file to each state
// table it changes (a lake made before: an equality delete file, which
// engines may not apply — any equality delete makes the table rewritten
// whole, so a maintenance converts an old lake; reads apply both kinds
// meanwhile); past a threshold — too many delete files, too many data
// files for its rows, or data files overlapping: more than `maxOverlap` of
// them hold one value of the first sort column by their bounds (each run's
// file spans the whole key range, so a lookup opens every run's file) — a
// table is rewritten by a k-way merge of its (each already sorted) data files
// with the deletes applied:
//
// - major: every data and delete file -> globally sorted, non-overlapping
//   files of `fileRows` rows; no delete file is left;
// - minor (a big table with few deletes): only the data files at or after the
//   oldest delete file's sequence number and every file a position delete
//   names, plus every delete file -> sorted files, no delete file left (each
//   position names a file rewritten); with no delete file, the data
//   files no rewrite wrote (runs' files: not marked with the sort order) ->
//   sorted files beside the rewritten ones (two layers: a lookup opens two).
//
// Both commit as a rewrite at the sequence number of the snapshot they read:
// rows committed meanwhile by runs stay newer (kept); a file read that is no
// longer live, or a position delete committed meanwhile that may name a file
// the rewrite removes (its rows would live again: DeletedFilesGone), fails
// the commit (nothing changed), and a run whose deletes name a file the
// rewrite removed fails its own (delta.ts): the table is planned again from what is
// live then (another process's maintenance got there first), up to 3 plans.
//
// Memory: one chunk of rows (`chunkRows`) per input file plus the deleted ids
// (the deltas' size), never the table; plus, when some input may be sorted by
// a table's former order (LEGACY_SORT_COLUMNS: code_nodes was (name, qpath,
// id), now (name, id)), the rows of one value of the orders' shared first
// column (one name), which the merge re-sorts before writing them.
//
// Layout: `force` also gives a table the current layout before rewriting it —
// its sort order (stateSortOrder) as the default, and every default property
// (STATE_TABLE_PROPERTIES: dictionary cap, page size, …) — in a metadata
// commit of its own, so a lake made by an older version gets the layout its
// lookups are tuned for; files this maintenance writes are marked with that
// order. A crash between the two commits leaves the new layout over the old
// files: readable, and the next rewrite re-sorts (unmarked files count as
// possibly legacy). Crash story: files are written before
// the one commit and named by nothing until it lands; a crash leaves orphans
// for gc, and a rerun decides afresh (idempotent). Crash points
// `state-maintain:file-written`, then the lake's commit points.
import type { Batch, DataFile, NestedField, TableMetadata, Value } from '../../lake/spec/types.ts';
import { ParquetDataFile } from '../../lake/parquet/read.ts';
import { POS_FILE_PATH, POS_POS } from '../../lake/scan/read.ts';
import type { Table } from '../../lake/table/table.ts';
import { writeOptions } from '../../lake/table/write.ts';
import { ValidationError, metadataUpdate, type TableUpdate } from '../../lake/table/commit.ts';
import { compareStrings } from '../../lake/spec/values.ts';
import { crashPoint } from '../../lake/testing/crash.ts';
import type { EventLog } from '../event-log.ts';
import { ident } from '../schema.ts';
import { LEGACY_SORT_COLUMNS, SORT_COLUMNS, STATE_TABLES, STATE_TABLE_PROPERTIES, stateSchema, stateSortOrder, type StateTable } from './schema.ts';
import { compareValues, rowOrder, toBatch } from './delta.ts';
import type { Row } from './rows.ts';

export interface MaintainOptions {
  /** Tables to look at (default all five). */
  tables?: StateTable[];
  /** Rewrite even below the thresholds (a major rewrite). */
  force?: boolean;
  /** Delete files or extra data files a table may gather before it is rewritten (default 8). */
  maxDeltaFiles?: number;
  /**
   * Data files one value of the table's first sort column may fall in (by
   * the files' column bounds) before the table is rewritten (default 4): a
   * lookup opens about that many files, whatever the file count.
   */
  maxOverlap?: number;
  /**
   * Rewrite a table holding equality deletes (a lake made before position
   * deletes) even below the thresholds (default true: `state maintain`
   * converts an old lake). The maintenance after each run passes false, so a
   * run costs what it writes: such a table converts when it passes a
   * threshold, or at `state maintain`.
   */
  convert?: boolean;
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
  /**
   * The table's layout (default sort order and properties) against the
   * current one: `applied` by this (forced) maintenance, `outdated` (a lake
   * made by an older version: `--force` applies it), else `current`.
   */
  layout: 'current' | 'applied' | 'outdated';
  /** Before: the most data files one value of the first sort column fell in (overlapDepth). */
  overlap: number;
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
    out.push(await maintainPlanned(log, name, opts));
  }
  return { tables: out, ms: Date.now() - t0 };
}

/** Plans of one table tried before its refusal is reported. */
const PLAN_ATTEMPTS = 3;

/**
 * One table's maintenance, planned again when its commit is refused because
 * files it read are no longer live: another process's maintenance (two
 * ingests of different repos end at once) rewrote them first. Nothing was
 * committed then and the files written were removed (abort); the next plan
 * reads what is live now, which usually needs nothing more.
 */
async function maintainPlanned(log: EventLog, name: StateTable, opts: MaintainOptions): Promise<TableMaintenance> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await log.commit(`state maintain ${name}`, () => maintainTable(log, name, opts));
    } catch (e) {
      if (!(e instanceof ValidationError) || attempt >= PLAN_ATTEMPTS) throw e;
    }
  }
}

/** One line: `state maintain: code_nodes major 12+3 -> 2 files, …`. */
export function formatMaintainReport(r: MaintainReport): string {
  const parts = r.tables.map((t) =>
    (t.action === 'none'
      ? `${t.table} ok (${t.before.dataFiles} data, ${t.before.deleteFiles} delete files)`
      : `${t.table} ${t.action}: ${t.before.dataFiles} data + ${t.before.deleteFiles} delete files (${t.overlap} overlapping) -> ${t.after.dataFiles} + ${t.after.deleteFiles}, ${t.dropped} deleted rows dropped`) +
    (t.layout === 'applied' ? ', current layout applied' : ''),
  );
  const old = r.tables.filter((t) => t.layout === 'outdated').map((t) => t.table);
  const hint = old.length > 0 ? `; ${old.join(', ')} ${old.length === 1 ? 'has' : 'have'} an older layout (sort order or properties): 'mimir state maintain --force' rewrites ${old.length === 1 ? 'it' : 'them'} with the current one` : '';
  return `state maintain: ${parts.join('; ')} in ${r.ms} ms${hint}`;
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
  let layout: TableMaintenance['layout'] = layoutIsCurrent(table.metadata, name) ? 'current' : 'outdated';
  if (opts.force && layout === 'outdated') {
    await table.commit(layoutUpdate(name), `state maintain ${name}: current layout`);
    layout = 'applied';
  }
  const none: TableMaintenance = { table: name, action: 'none', before, after: before, dropped: 0, layout, overlap: 0, ms: 0 };
  if (!snap) return none;
  const fileRows = writeOptions(table.properties).fileRows;
  const max = opts.maxDeltaFiles ?? 8;
  const ideal = Math.max(1, Math.ceil(Number(rows) / fileRows));
  const firstSort = table.schema.fields.find((f) => f.name === SORT_COLUMNS[name][0])!.id;
  const overlap = overlapDepth(data.map((f) => f.file), firstSort);
  // equality deletes (a lake made before position deletes): engines may not apply them, so any is rewritten away
  const equality = deletes.some((d) => d.file.content === 2);
  if (!opts.force && !(equality && opts.convert !== false) && deletes.length <= max && data.length <= ideal + max && overlap <= (opts.maxOverlap ?? 4)) return { ...none, overlap, ms: Date.now() - t0 };

  // major when the deletes are a large share or the table is small or has equality deletes; else
  // minor: the files at or after the oldest delete and every file a position delete names, or (no
  // delete) the files no rewrite wrote (each run's, overlapping) — no delete file is left either way
  const orderId = currentOrderId(table.metadata, name);
  const deleted = deletes.reduce((s, f) => s + f.file.recordCount, 0n);
  const { deletedAt, positions } = await loadDeletes(log, table, deletes);
  const oldest = deletes.length > 0 ? deletes.reduce((m, d) => (d.sequenceNumber < m ? d.sequenceNumber : m), deletes[0]!.sequenceNumber) : undefined;
  const unmarked = data.filter((f) => orderId === undefined || f.file.sortOrderId !== orderId);
  const minorInputs = oldest !== undefined ? data.filter((f) => f.sequenceNumber >= oldest || positions.has(f.file.filePath)) : unmarked.length >= 2 && unmarked.length < data.length ? unmarked : undefined;
  const major = opts.force || equality || minorInputs === undefined || rows < BigInt(fileRows) || deleted * 20n > rows;
  const inputs = major ? data : minorInputs!;
  // the table's own columns (a code_keys made before its display columns has not got them)
  const have = new Set(table.schema.fields.map((f) => f.id));
  const schemaFields = stateSchema(name).fields.filter((f) => have.has(f.id));
  // inputs not marked with the current order may be sorted by the former one: re-sort by groups
  const regroup = LEGACY_SORT_COLUMNS[name] !== undefined && inputs.some((f) => orderId === undefined || f.file.sortOrderId !== orderId) ? sharedPrefix(name) : undefined;
  const writer = new SortedWriter(table, name, fileRows, orderId);
  let dropped = 0;
  try {
    dropped = await mergeFiles(log, inputs, schemaFields, name, deletedAt, positions, opts.chunkRows ?? 4096, (r) => writer.add(r), regroup);
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
    layout,
    overlap,
    ms: Date.now() - t0,
  };
}

/**
 * The most files any one value falls in, by each file's lower and upper
 * bound of field `fieldId` (bytes compare as UTF-8 strings do; a file
 * without bounds — all nulls, or written without metrics — counts for every
 * value): about how many files a lookup of one value opens.
 */
export function overlapDepth(files: DataFile[], fieldId: number): number {
  let everywhere = 0;
  const ranges: [Uint8Array, Uint8Array][] = [];
  for (const f of files) {
    const lo = f.lowerBounds?.get(fieldId);
    const hi = f.upperBounds?.get(fieldId);
    if (lo === undefined || hi === undefined) everywhere++;
    else ranges.push([lo, hi]);
  }
  // sweep: starts before ends at one point (closed ranges touching at a value overlap there)
  const points = ranges.flatMap(([lo, hi]) => [{ at: lo, d: 1 }, { at: hi, d: -1 }]);
  points.sort((a, b) => compareBytes(a.at, b.at) || b.d - a.d);
  let depth = 0;
  let most = 0;
  for (const p of points) {
    depth += p.d;
    if (depth > most) most = depth;
  }
  return most + everywhere;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

const sameFields = (a: { fields: unknown[] }, b: { fields: unknown[] }): boolean => JSON.stringify(a.fields) === JSON.stringify(b.fields);

/** The id of the table's sort order that is the current one (stateSortOrder's fields), when the table has it. */
function currentOrderId(m: TableMetadata, name: StateTable): number | undefined {
  const want = stateSortOrder(name);
  return m.sortOrders.find((o) => o.orderId !== 0 && sameFields(o, want))?.orderId;
}

/** Is the table's default sort order the current one, and every default property set as STATE_TABLE_PROPERTIES says? */
export function layoutIsCurrent(m: TableMetadata, name: StateTable): boolean {
  const id = currentOrderId(m, name);
  return id !== undefined && m.defaultSortOrderId === id && Object.entries(STATE_TABLE_PROPERTIES).every(([k, v]) => m.properties[k] === v);
}

/** On any base: the current sort order as the default (added when absent) and every default property set. */
function layoutUpdate(name: StateTable): TableUpdate {
  return metadataUpdate((base) => {
    const m = { ...base, properties: { ...base.properties, ...STATE_TABLE_PROPERTIES } };
    const id = currentOrderId(m, name);
    if (id !== undefined) return { ...m, defaultSortOrderId: id };
    const orderId = Math.max(0, ...m.sortOrders.map((o) => o.orderId)) + 1;
    return { ...m, sortOrders: [...m.sortOrders, { ...stateSortOrder(name), orderId }], defaultSortOrderId: orderId };
  });
}

/** The leading sort columns the table's former and current orders share (rows equal in them are re-sorted together). */
function sharedPrefix(name: StateTable): readonly string[] {
  const legacy = LEGACY_SORT_COLUMNS[name] ?? [];
  const cur = SORT_COLUMNS[name];
  let n = 0;
  while (n < legacy.length && n < cur.length && legacy[n] === cur[n]) n++;
  if (n === 0) throw new Error(`${name}: its former sort order (${legacy.join(', ')}) shares no leading column with the current one (${cur.join(', ')}); a merge cannot re-sort it in bounded memory`);
  return cur.slice(0, n);
}

/** Position deletes by data file: each deleted position with the sequence number of the delete naming it. */
type Positions = Map<string, Map<number, bigint>>;

/**
 * Every id an equality delete deletes, with the highest sequence number that
 * deletes it, and every position a position delete names, per data file.
 */
async function loadDeletes(log: EventLog, table: Table, deletes: Live[]): Promise<{ deletedAt: Map<string, bigint>; positions: Positions }> {
  const out = new Map<string, bigint>();
  const positions: Positions = new Map();
  const idField = table.schema.fields.find((f) => f.name === 'id')!;
  for (const d of deletes) {
    if (d.file.content === 1) {
      const pf = await ParquetDataFile.open(log.lake.io, d.file.filePath);
      try {
        for (let rg = 0; rg < pf.rowGroupCount; rg++) {
          const b = await pf.readRowGroup(rg, [POS_FILE_PATH, POS_POS]);
          for (let i = 0; i < b.numRows; i++) {
            const path = b.columns[0]![i] as string;
            let at = positions.get(path);
            if (!at) positions.set(path, (at = new Map()));
            const pos = Number(b.columns[1]![i] as bigint);
            const prev = at.get(pos);
            if (prev === undefined || d.sequenceNumber > prev) at.set(pos, d.sequenceNumber);
          }
        }
      } finally {
        await pf.close();
      }
      continue;
    }
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
  return { deletedAt: out, positions };
}

/** A sorted stream of one file's rows, chunk by chunk. */
class FileCursor {
  private rg = 0;
  private at = 0;
  /** The file position of row 0 of row group `rg`. */
  private groupStart = 0;
  private buf: Row[] = [];
  private i = 0;
  constructor(
    private readonly pf: ParquetDataFile,
    private readonly fields: NestedField[],
    private readonly chunk: number,
    /** Is a row deleted? (`pos`: its position in the file) */
    private readonly dead: (r: Row, pos: number) => boolean,
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
        this.groupStart += n;
        continue;
      }
      const first = this.groupStart + this.at;
      const to = Math.min(n, this.at + this.chunk);
      const b = await this.pf.readRowGroup(this.rg, this.fields, undefined, { from: this.at, to });
      this.at = to;
      const rows: Row[] = [];
      for (let i = 0; i < b.numRows; i++) {
        const r: Row = {};
        for (let c = 0; c < b.fields.length; c++) r[b.fields[c]!.name] = b.columns[c]![i] ?? null;
        if (this.dead(r, first + i)) this.onDrop();
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
  positions: Positions,
  chunk: number,
  emit: (r: Row) => Promise<void>,
  /** Re-sort runs of rows equal in these columns (inputs sorted by them, not necessarily by the whole order). */
  regroup?: readonly string[],
): Promise<number> {
  const order = rowOrder(name);
  // with `regroup`, the merge's output is still sorted by those columns (every input is), so each
  // run of rows equal in them is complete when the next begins: sorted whole, then emitted
  const group: Row[] = [];
  let groupKey: Value[] | undefined;
  const flush = async (): Promise<void> => {
    group.sort(order);
    for (const r of group) await emit(r);
    group.length = 0;
  };
  const put = async (r: Row): Promise<void> => {
    if (!regroup) return emit(r);
    const key = regroup.map((c) => r[c] ?? null);
    if (groupKey && key.some((v, i) => compareValues(v, groupKey![i]!) !== 0)) await flush();
    groupKey = key;
    group.push(r);
  };
  let dropped = 0;
  const opened: ParquetDataFile[] = [];
  try {
    // a min-heap of cursors by their head row
    const heap: FileCursor[] = [];
    for (const f of inputs) {
      const pf = await ParquetDataFile.open(log.lake.io, f.file.filePath);
      opened.push(pf);
      const seq = f.sequenceNumber;
      // a position delete applies to data files of its sequence number or older, an equality delete to older only
      const gone = positions.get(f.file.filePath);
      const c = new FileCursor(pf, fields, chunk, (r, pos) => {
        const del = gone?.get(pos);
        if (del !== undefined && del >= seq) return true;
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
      await put(top.head!);
      if (!(await top.advance())) {
        heap[0] = heap[heap.length - 1]!;
        heap.pop();
      }
      if (heap.length > 0) down(0);
    }
    await flush();
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
    /** The table's sort order the rows come in (marked on each file written), when it has it. */
    private readonly sortOrderId: number | undefined,
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
    const written = await this.table.writeDataFiles(batches);
    const id = this.sortOrderId;
    this.files.push(...(id === undefined ? written : written.map((f) => ({ ...f, file: { ...f.file, sortOrderId: id } }))));
    crashPoint('state-maintain:file-written');
  }

  async close(): Promise<void> {
    await this.writeFile();
  }

  async abort(): Promise<void> {
    for (const f of [...this.files.map((x) => x.file.filePath), ...this.extra]) await this.table.io.delete(f).catch(() => undefined);
  }
}
