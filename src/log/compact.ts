// Compaction of the event log: rewrite each source table into files
// partitioned by `repo` (identity; the spec is evolved the first time) and
// sorted by (krate, id), at most `targetFileRows` rows a file; in a split lake
// drop the source tables' ring rows (repo `@universe`), but only after
// re-verifying that the ring table holds every one of them (per-krate counts
// and content digests); ring tables are rewritten sorted by krate.
//
// Invariant: the merged rows of every kind (EventLog.rows) and the folded state
// (EventLog.state) are the same before and after, and rows appended meanwhile
// — by any process — are kept and stay newer. Each table gets ONE replace
// commit that removes exactly the files it read at snapshot S and adds the
// rewritten files with S's data sequence number, so appends that landed after
// S (higher sequence numbers) still win the fold. Within a rewritten file the
// rows of one id keep their commit order: the sort key is (krate, id, data
// sequence number of the source file, position in the scan), and a file is
// only ever cut between two ids, so one id's events never straddle two files of
// the same sequence number (unless a single id has more than targetFileRows
// events). Assumed, as everywhere in the log: an id belongs to one (repo,
// krate); rows of one id under different krates or repos are not reordered
// relative to each other by the fold after compaction (they share S's number).
//
// Ring tables stay unpartitioned and are sorted by (krate, id): the universe
// holds thousands of crate versions of a few hundred rows each, so identity
// (krate) would make thousands of tiny files, while sorted files of
// targetFileRows rows give each file a narrow krate min/max, so a crate's rows
// are one or two files and a krate filter prunes the rest by column bounds.
//
// Memory: pass 1 streams the (repo, krate) columns and keeps one counter per
// (repo, krate); pass 2 rewrites chunks — runs of consecutive krates of one
// repo packed up to targetFileRows rows — each read with a pruned, exact filter
// and sorted in memory. Peak rows in memory = max(targetFileRows, rows of the
// largest single (repo, krate)); never the table. The price is I/O: a file
// whose krate bounds span several chunks (the unsorted files of the first run)
// is read once per chunk it overlaps. Verification streams (memory per krate).
// Compaction runs inside EventLog.commit (lock + lease) one table at a time, so
// appends of this process wait for the table being rewritten; other processes
// keep appending.
//
// The `ingest_runs` table (one row per run, no ids to fold, no ring) is
// compacted too, more simply: its small files (fewer rows than its target,
// RUNS_TARGET_FILE_ROWS) are streamed, in scan order, into files of the target
// size, replacing exactly the files read. Memory: the writer's one file.
//
// Crash story: rewritten files are invisible until the replace commit lands;
// a crash before it leaves unreferenced files (their lease dies with the
// process) that gc collects, and the lake reads exactly as before. A crash
// after the layout commit (spec / sort order) leaves a table whose old files
// keep their old spec — readable, same rows. Rerunning converges: tables
// already compacted are skipped. A failed commit deletes its own files.
import type { Batch, DataFile, PartitionSpec, SortOrder, TableMetadata, Value } from '../lake/spec/types.ts';
import type { Table } from '../lake/table/table.ts';
import { checkUpdate, ValidationError, type CommitTarget, type TableUpdate } from '../lake/table/commit.ts';
import { DataFileWriter, writeOptions } from '../lake/table/write.ts';
import { updateSpecUpdate } from '../lake/table/table.ts';
import { specsEquivalent } from '../lake/spec/partition.ts';
import { and, eq, ge, inList, le, type Expr } from '../lake/expr/expr.ts';
import { crashPoint } from '../lake/testing/crash.ts';
import { EventLog, PinnedError, guarded, isRingSplit } from './event-log.ts';
import { compareStats, krateStats, rowDigest, type KrateStats } from './digest.ts';
import { CODE_NODE_EVENTS, COL_ID, COL_KRATE, COL_REPO, INGEST_RUNS, SOURCE_KINDS, UNIVERSE_REPO, ident, qualified, ringTableName, tableName } from './schema.ts';

export interface CompactOptions {
  /**
   * Rows per output file at most (default 1,000,000 ≈ 200 MB of events before
   * compression, ~20–40 MB of zstd Parquet). Also the in-memory sort bound (see
   * the module comment). A file is cut only between ids, so a single id with
   * more events than this makes one larger file.
   */
  targetFileRows?: number;
  /** Only these tables (names in namespace `mimir`), in the usual order; default every event table and `ingest_runs`. */
  only?: string[];
}

export interface CompactSide {
  files: number;
  rows: bigint;
  bytes: bigint;
}

export interface CompactTableReport {
  table: string;
  before: CompactSide;
  after: CompactSide;
  /** Ring rows removed from a split lake's source table (they live in the ring table). */
  droppedRingRows: bigint;
  /** Why the table was left unchanged (already compacted, refused, empty…). */
  skipped?: string;
}

export interface CompactReport {
  tables: CompactTableReport[];
  ms: number;
}

export const DEFAULT_TARGET_FILE_ROWS = 1_000_000;
/** Rows per `ingest_runs` file after compaction (about 1 KB a row; a run with many problems has a larger summary). */
export const RUNS_TARGET_FILE_ROWS = 10_000;

/** Compaction refused a table (verification failed): the table is left unchanged. */
export class CompactRefusedError extends Error {}

/** One line: per table files/rows/bytes before -> after (or why skipped), and the time. */
export function formatCompactReport(r: CompactReport): string {
  const parts = r.tables.map((t) => {
    const head = `${t.table}: files ${t.before.files}->${t.after.files}, rows ${t.before.rows}->${t.after.rows}, bytes ${t.before.bytes}->${t.after.bytes}`;
    const dropped = t.droppedRingRows > 0n ? `, ring rows dropped ${t.droppedRingRows}` : '';
    return t.skipped ? `${t.table}: skipped (${t.skipped})` : head + dropped;
  });
  return `compacted ${r.tables.filter((t) => !t.skipped).length} of ${r.tables.length} tables in ${r.ms} ms — ${parts.join('; ')}`;
}

/** Compact every source and ring table of the log (see the module comment). */
export async function compact(log: EventLog, opts: CompactOptions = {}): Promise<CompactReport> {
  if (log.isPinned) throw new PinnedError('a pinned read handle cannot compact');
  const target = opts.targetFileRows ?? DEFAULT_TARGET_FILE_ROWS;
  if (!Number.isSafeInteger(target) || target < 1) throw new Error(`compact: targetFileRows must be an integer >= 1, found ${target}`);
  const t0 = Date.now();
  const tables: CompactTableReport[] = [];
  const split = await log.ringSplit();
  const wanted = (name: string): boolean => opts.only === undefined || opts.only.includes(name);
  // ring tables first: the source tables' verification then reads them compacted
  for (const kind of SOURCE_KINDS) {
    const name = ringTableName(kind);
    if (!wanted(name)) continue;
    if (!split) {
      const t = await log.table(name);
      const side = t ? sideOf(await t.dataFiles()) : { files: 0, rows: 0n, bytes: 0n };
      tables.push({ table: qualified(name), before: side, after: side, droppedRingRows: 0n, skipped: 'unified lake: the ring table is not read' });
      continue;
    }
    tables.push(await compactTable(log, name, { ring: true, dropRing: false, target }));
  }
  for (const kind of SOURCE_KINDS) {
    if (!wanted(tableName(kind))) continue;
    tables.push(await compactTable(log, tableName(kind), { ring: false, dropRing: split, target, ringTable: ringTableName(kind) }));
  }
  if (wanted(INGEST_RUNS) && (await log.table(INGEST_RUNS))) tables.push(await compactRuns(log, RUNS_TARGET_FILE_ROWS));
  return { tables, ms: Date.now() - t0 };
}

interface TableJob {
  /** A ring table (unpartitioned) rather than a source table (identity(repo)). */
  ring: boolean;
  /** Drop rows of repo @universe (split lake, source table), after verification. */
  dropRing: boolean;
  target: number;
  ringTable?: string;
}

type LiveFile = { file: DataFile; specId: number; sequenceNumber: bigint };

function sideOf(files: LiveFile[]): CompactSide {
  let rows = 0n;
  let bytes = 0n;
  for (const f of files) {
    rows += f.file.recordCount;
    bytes += f.file.fileSizeInBytes;
  }
  return { files: files.length, rows, bytes };
}

const identity = { kind: 'identity' } as const;

/** The layout a table should have: its partition fields and the (krate, id) sort order. */
function wantedLayout(m: TableMetadata, ring: boolean): { spec: PartitionSpec; order: Omit<SortOrder, 'orderId'> } {
  const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId)!;
  const id = (n: string): number => {
    const f = schema.fields.find((x) => x.name === n);
    if (!f) throw new Error(`compact: ${m.location} has no column ${n}`);
    return f.id;
  };
  const spec: PartitionSpec = { specId: -1, fields: ring ? [] : [{ sourceId: id(COL_REPO), fieldId: 1000, name: COL_REPO, transform: identity }] };
  const order = {
    fields: [id(COL_KRATE), id(COL_ID)].map((sourceId) => ({ sourceId, transform: identity, direction: 'asc' as const, nullOrder: 'nulls-first' as const })),
  };
  return { spec, order };
}

function sameOrder(a: Omit<SortOrder, 'orderId'>, b: Omit<SortOrder, 'orderId'>): boolean {
  return JSON.stringify(a.fields) === JSON.stringify(b.fields);
}

/** Is the table's default spec and sort order the wanted one? */
function layoutDone(m: TableMetadata, ring: boolean): boolean {
  const w = wantedLayout(m, ring);
  const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId)!;
  const order = m.sortOrders.find((o) => o.orderId === m.defaultSortOrderId);
  return specsEquivalent(spec, w.spec) && order !== undefined && sameOrder(order, w.order);
}

/** Evolve spec (identity(repo) for a source table) and make (krate, id) the default sort order, on any base. */
function layoutUpdate(ring: boolean): TableUpdate {
  return {
    async apply(base, attempt) {
      let m = base;
      const w = wantedLayout(m, ring);
      const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId)!;
      if (!specsEquivalent(spec, w.spec)) {
        m = await updateSpecUpdate(w.spec.fields.map(({ fieldId: _f, ...f }) => f)).apply(m, attempt);
      }
      const existing = m.sortOrders.find((o) => o.orderId !== 0 && sameOrder(o, w.order));
      if (existing) return { ...m, defaultSortOrderId: existing.orderId };
      const orderId = Math.max(0, ...m.sortOrders.map((o) => o.orderId)) + 1;
      return { ...m, sortOrders: [...m.sortOrders, { orderId, ...w.order }], defaultSortOrderId: orderId };
    },
    attemptFiles: () => [],
    sharedFiles: () => [],
  };
}

const splitGuard = (base: TableMetadata): void => {
  if (!isRingSplit(base)) throw new ValidationError('the lake was switched back to unified during compaction: ring rows must stay in the source tables');
};

async function compactTable(log: EventLog, name: string, job: TableJob): Promise<CompactTableReport> {
  const { lake } = log;
  const id = ident(name);
  const qname = qualified(name);
  let t = await lake.loadTable(id);
  const empty = { files: 0, rows: 0n, bytes: 0n };
  if (!t.currentSnapshot()) return { table: qname, before: empty, after: empty, droppedRingRows: 0n, skipped: 'empty' };

  // 1. layout: spec evolution and sort order, one metadata commit, the first time only
  if (!layoutDone(t.metadata, job.ring)) {
    await log.commit(`compact ${qname}: layout`, async () => {
      await lake.commit([{ ident: id, update: layoutUpdate(job.ring) }], `compact ${qname}: partition by repo, sort by krate, id`);
    });
    crashPoint('compact:layout-committed');
    t = await lake.loadTable(id);
  }

  return log.commit(`compact ${qname}`, async () => {
    t = await lake.loadTable(id);
    const S = t.currentSnapshot()!;
    const live = await t.dataFiles({ snapshotId: S.snapshotId });
    const before = sideOf(live);
    const same = (skipped: string): CompactTableReport => ({ table: qname, before, after: before, droppedRingRows: 0n, skipped });
    if (live.some((f) => f.file.content !== 0)) return same('it has delete files (written by another engine); not rewritten');
    const orderId = t.metadata.defaultSortOrderId;
    const specId = t.metadata.defaultSpecId;

    // 2. what to rewrite: every group (repo partition; the whole ring table) not
    // yet one compacted run (a different targetFileRows alone does not redo one)
    const full = live.some((f) => f.specId !== specId);
    const groups = new Map<string, LiveFile[]>();
    for (const f of live) {
      const key = job.ring || full ? '' : String(f.file.partition[0]);
      const g = groups.get(key);
      if (g) g.push(f);
      else groups.set(key, [f]);
    }
    const dirty: string[] = [];
    // only compaction writes files marked with the sort order, and it rewrites a
    // group whole: a group of marked files is one compacted run already
    for (const [key, files] of groups) {
      const sorted = files.every((f) => f.file.sortOrderId === orderId && f.specId === specId);
      const dropsRing = job.dropRing && (full || key === UNIVERSE_REPO);
      if (full || !sorted || dropsRing) dirty.push(key);
    }
    if (dirty.length === 0) return same('already compacted');
    const allGroups = job.ring || full;
    const filesRead = allGroups ? live : live.filter((f) => dirty.includes(String(f.file.partition[0])));
    const scope: Expr | undefined = allGroups ? undefined : inList(COL_REPO, dirty);

    // 3. pass 1: rows per (repo, krate) of the files read
    const counts = new Map<string, Map<string, number>>();
    for await (const b of t.scan({ snapshotId: S.snapshotId, filter: scope, columns: [COL_REPO, COL_KRATE] }).batches()) {
      const rc = b.fields.findIndex((f) => f.name === COL_REPO);
      const kc = b.fields.findIndex((f) => f.name === COL_KRATE);
      for (let i = 0; i < b.numRows; i++) {
        const repo = String(b.columns[rc]![i]);
        const krate = String(b.columns[kc]![i]);
        let m = counts.get(repo);
        if (!m) counts.set(repo, (m = new Map()));
        m.set(krate, (m.get(krate) ?? 0) + 1);
      }
    }
    crashPoint('compact:counted');

    // 4. verification before any ring row is dropped
    let droppedRingRows = 0n;
    const dropping = job.dropRing && counts.has(UNIVERSE_REPO);
    if (dropping) {
      try {
        await verifyRing(log, t, S.snapshotId, job.ringTable!);
      } catch (e) {
        if (e instanceof CompactRefusedError) return same(e.message);
        throw e;
      }
      for (const n of counts.get(UNIVERSE_REPO)!.values()) droppedRingRows += BigInt(n);
      crashPoint('compact:verified');
    }

    // 5. pass 2: chunks of consecutive krates per repo, sorted in memory, written as files
    const written: { file: DataFile; specId: number }[] = [];
    try {
      const repos = [...counts.keys()].sort(cmp);
      for (const repo of repos) {
        if (job.dropRing && repo === UNIVERSE_REPO) continue;
        for (const chunk of planChunks(counts.get(repo)!, job.target)) {
          const filter = and(eq(COL_REPO, repo), ge(COL_KRATE, chunk.lo), le(COL_KRATE, chunk.hi));
          const rows = await readChunk(t, S.snapshotId, filter);
          for (const files of writeSorted(t, rows, job.target, orderId)) {
            const out = await files;
            written.push(...out);
            crashPoint('compact:file-written');
          }
        }
      }
      crashPoint('compact:before-commit');
      const update = t.overwriteUpdate(
        filesRead.map((f) => f.file.filePath),
        written,
        'replace',
        { dataSequenceNumber: S.sequenceNumber },
      );
      const targets: Omit<CommitTarget, 'io'>[] = [];
      if (dropping && name === CODE_NODE_EVENTS) targets.push({ ident: id, update: guarded(update, splitGuard) });
      else {
        targets.push({ ident: id, update });
        if (dropping) targets.push({ ident: ident(CODE_NODE_EVENTS), update: checkUpdate(splitGuard), assertOnly: true });
      }
      await lake.commit(targets, `compact ${qname}`);
      crashPoint('compact:committed');
    } catch (e) {
      for (const f of written) await lake.io.delete(f.file.filePath).catch(() => undefined);
      if (e instanceof ValidationError) return same(`not committed: ${e.message}`);
      throw e;
    }
    const after = sideOf(await (await lake.loadTable(id)).dataFiles());
    return { table: qname, before, after, droppedRingRows };
  });
}

/**
 * `ingest_runs`: stream the rows of its small files (fewer than `target`
 * rows) into files of `target` rows, in one replace commit that keeps runs
 * appended meanwhile. Skipped when at most one file is small.
 */
async function compactRuns(log: EventLog, target: number): Promise<CompactTableReport> {
  const { lake } = log;
  const id = ident(INGEST_RUNS);
  const qname = qualified(INGEST_RUNS);
  return log.commit(`compact ${qname}`, async () => {
    const t = await lake.loadTable(id);
    const S = t.currentSnapshot();
    const empty = { files: 0, rows: 0n, bytes: 0n };
    if (!S) return { table: qname, before: empty, after: empty, droppedRingRows: 0n, skipped: 'empty' };
    const live = await t.dataFiles({ snapshotId: S.snapshotId });
    const before = sideOf(live);
    const same = (skipped: string): CompactTableReport => ({ table: qname, before, after: before, droppedRingRows: 0n, skipped });
    if (live.some((f) => f.file.content !== 0)) return same('it has delete files (written by another engine); not rewritten');
    const small = live.filter((f) => f.file.recordCount < BigInt(target));
    if (small.length <= 1) return same('already compacted');
    const read = new Set(small.map((f) => f.file.filePath));
    const w = new DataFileWriter(t.io, t.metadata.location, t.schema, t.spec, { ...writeOptions(t.properties), fileRows: target });
    try {
      for await (const b of t.scan({ snapshotId: S.snapshotId, files: (f) => read.has(f) }).batches()) await w.write(b);
      const written = (await w.close()).map((file) => ({ file, specId: t.spec.specId }));
      crashPoint('compact:file-written');
      const update = t.overwriteUpdate([...read], written, 'replace', { dataSequenceNumber: S.sequenceNumber });
      await lake.commit([{ ident: id, update }], `compact ${qname}`);
      crashPoint('compact:committed');
    } catch (e) {
      await w.abort();
      if (e instanceof ValidationError) return same(`not committed: ${e.message}`);
      throw e;
    }
    const after = sideOf(await (await lake.loadTable(id)).dataFiles());
    return { table: qname, before, after, droppedRingRows: 0n };
  });
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Consecutive krates (sorted) packed into chunks of at most `target` rows (a bigger krate alone). */
export function planChunks(krates: Map<string, number>, target: number): { lo: string; hi: string; rows: number }[] {
  const out: { lo: string; hi: string; rows: number }[] = [];
  let cur: { lo: string; hi: string; rows: number } | undefined;
  for (const k of [...krates.keys()].sort(cmp)) {
    const n = krates.get(k)!;
    if (cur && cur.rows + n <= target) {
      cur.hi = k;
      cur.rows += n;
    } else {
      if (cur) out.push(cur);
      cur = { lo: k, hi: k, rows: n };
    }
  }
  if (cur) out.push(cur);
  return out;
}

interface ChunkRows {
  fields: Batch['fields'];
  columns: Value[][];
  krate: string[];
  id: string[];
  seq: bigint[];
  n: number;
}

async function readChunk(t: Table, snapshotId: bigint, filter: Expr): Promise<ChunkRows> {
  const fields = t.schema.fields;
  const out: ChunkRows = { fields, columns: fields.map(() => []), krate: [], id: [], seq: [], n: 0 };
  const kc = fields.findIndex((f) => f.name === COL_KRATE);
  const ic = fields.findIndex((f) => f.name === COL_ID);
  for await (const b of t.scan({ snapshotId, filter }).batches()) {
    const seq = b.source?.sequenceNumber ?? 0n;
    // by field id: the scan projects the current schema in order, but do not rely on it
    const map = fields.map((f) => b.fields.findIndex((x) => x.id === f.id));
    for (let i = 0; i < b.numRows; i++) {
      for (let c = 0; c < fields.length; c++) out.columns[c]!.push(map[c]! < 0 ? null : (b.columns[map[c]!]![i] ?? null));
      out.krate.push(String(out.columns[kc]![out.n]));
      out.id.push(String(out.columns[ic]![out.n]));
      out.seq.push(seq);
      out.n++;
    }
  }
  return out;
}

/** Sort a chunk by (krate, id, sequence number, position) and write files of ~target rows cut between ids. */
function* writeSorted(t: Table, rows: ChunkRows, target: number, orderId: number): Generator<Promise<{ file: DataFile; specId: number }[]>> {
  const idx = Array.from({ length: rows.n }, (_, i) => i);
  idx.sort((a, b) => cmp(rows.krate[a]!, rows.krate[b]!) || cmp(rows.id[a]!, rows.id[b]!) || (rows.seq[a]! < rows.seq[b]! ? -1 : rows.seq[a]! > rows.seq[b]! ? 1 : 0) || a - b);
  let start = 0;
  while (start < idx.length) {
    let end = Math.min(idx.length, start + target);
    // never cut one id's events across files: extend to the end of the id
    while (end < idx.length && end > start && rows.id[idx[end]!] === rows.id[idx[end - 1]!] && rows.krate[idx[end]!] === rows.krate[idx[end - 1]!]) end++;
    const slice = idx.slice(start, end);
    start = end;
    yield (async () => {
      const batch: Batch = { fields: rows.fields, numRows: slice.length, columns: rows.columns.map((col) => slice.map((i) => col[i]!)) };
      const w = new DataFileWriter(t.io, t.metadata.location, t.schema, t.spec, { ...writeOptions(t.properties), fileRows: Number.MAX_SAFE_INTEGER });
      try {
        await w.write(batch);
        const files = await w.close();
        return files.map((file) => ({ file: { ...file, sortOrderId: orderId }, specId: t.spec.specId }));
      } catch (e) {
        await w.abort();
        throw e;
      }
    })();
  }
}

/**
 * Does the ring table hold every ring row the source table has at snapshot S?
 * Per-krate counts and digests must agree; a krate whose ring table side has
 * more rows (ring rows ingested after the split) is checked row by row
 * (multiset of row digests, memory per krate). Throws CompactRefusedError.
 */
async function verifyRing(log: EventLog, src: Table, snapshotId: bigint, ringName: string): Promise<void> {
  const ring = await log.lake.loadTable(ident(ringName));
  const ringOnly = eq(COL_REPO, UNIVERSE_REPO);
  const expected: KrateStats = await krateStats(src.scan({ snapshotId, filter: ringOnly }).batches(), { repo: UNIVERSE_REPO });
  const have: KrateStats = await krateStats(ring.scan().batches());
  const c = compareStats(expected, have);
  if (c.equal) return;
  const missing: string[] = [];
  for (const k of c.differing) {
    const e = expected.get(k);
    if (!e || e.rows === 0n) continue; // a krate ingested after the split
    const h = have.get(k);
    if (!h || h.rows < e.rows) {
      missing.push(`${k} (source ${e.rows}, ring ${h?.rows ?? 0n})`);
      continue;
    }
    // more rows in the ring: contained?
    const want = await digestCounts(src.scan({ snapshotId, filter: and(ringOnly, eq(COL_KRATE, k)) }).batches());
    const got = await digestCounts(ring.scan({ filter: eq(COL_KRATE, k) }).batches());
    let ok = true;
    for (const [d, n] of want) if ((got.get(d) ?? 0) < n) ok = false;
    if (!ok) missing.push(`${k} (source ${e.rows}, ring ${h.rows}, rows differ)`);
  }
  if (missing.length === 0) return;
  const shown = missing.slice(0, 10).join(', ') + (missing.length > 10 ? `, … ${missing.length - 10} more` : '');
  throw new CompactRefusedError(
    `refused: ${qualified(ringName)} does not hold every ring row of ${src.name} — ${missing.length} krate(s) differ: ${shown}; ` +
      `ring rows in the source ${c.totalExpected}, rows in the ring table ${c.totalHave}; nothing dropped, table unchanged`,
  );
}

async function digestCounts(batches: AsyncIterable<Batch>): Promise<Map<bigint, number>> {
  const out = new Map<bigint, number>();
  for await (const b of batches) for (let i = 0; i < b.numRows; i++) {
    const d = rowDigest(b, i);
    out.set(d, (out.get(d) ?? 0) + 1);
  }
  return out;
}
