// Garbage collection of the event log's lake: expire old snapshots of every
// table (deleting the files only they reached), then remove orphan files
// (leftovers of crashed or failed commits, compactions and splits).
//
// Invariant: nothing a live pin or a commit in flight may read is deleted.
// Every live catalog lease (pinned handles, commits in flight, in any process)
// names a releaseBase generation g; the snapshot each table had current at g
// (pointersAt(g)) is protected from expiry, so its manifests and data files
// stay. Orphan removal honours the leases itself (files newer than a live
// lease's start are kept) and reaches every metadata file the catalog ever
// recorded, so a pinned handle's metadata and what it names survive too.
// Orphans younger than min(retainMs, 1 min) are also kept — a margin for
// writers that take no lease (other engines).
//
// Bounded growth: the history kept is the retention window. Metadata files of
// lake generations older than `retainMs` (and read by no live lease) are
// orphans like any other, so `--as-of` works for the retention period and a
// lake's metadata stays bounded under many small commits: per table, the
// current file, its metadata-log (`write.metadata.previous-versions-max`) and
// the generations of the window. Only files whose names Mimir writes are ever
// deleted; a stranger's file in a table folder is listed in the report.
//
// Crash story: each table's expiry is one optimistic commit (through
// EventLog.commit: lock, releaseBase, lease) followed by deletions of files
// nothing references any more; orphan removal deletes unreferenced files one
// by one. A crash anywhere leaves only unreferenced files; rerunning finishes.
import { expireSnapshots, GcDisabledError, removeOrphanFiles } from '../lake/maintenance/index.ts';
import { identToString } from '../lake/catalog/sql-catalog.ts';
import { readMetadata } from '../lake/table/commit.ts';
import { isMissing } from '../lake/maintenance/reachable.ts';
import { crashPoint } from '../lake/testing/crash.ts';
import { EventLog, PinnedError } from './event-log.ts';

export interface GcOptions {
  /** Expire snapshots older than this (ms; default 7 days). Orphans younger than min(this, 1 min) are kept. */
  retainMs?: number;
  /** Keep at least the newest N snapshots of each branch (default 1). */
  keepLast?: number;
  /** List what would be expired and deleted; change nothing. */
  dryRun?: boolean;
}

export interface GcTableReport {
  table: string;
  /** Snapshot ids expired (or, dry run, that would be). */
  expired: bigint[];
  /** Files deleted with them: manifest lists, manifests, data files, statistics (or would be). */
  deleted: string[];
  /** Snapshot ids kept because a live pin or commit in flight reads them. */
  protected: bigint[];
  /** Why the table was left alone (gc.enabled=false). */
  skipped?: string;
}

export interface GcReport {
  tables: GcTableReport[];
  /** Orphan files deleted (or, dry run, that would be). */
  orphans: string[];
  /** Files in table folders that nothing reaches and whose names Mimir never writes: kept, listed. */
  strangers: string[];
  dryRun: boolean;
  ms: number;
}

export const DEFAULT_RETAIN_MS = 7 * 24 * 60 * 60 * 1000;
const ORPHAN_MARGIN_MS = 60_000;

export function formatGcReport(r: GcReport): string {
  const expired = r.tables.reduce((s, t) => s + t.expired.length, 0);
  const files = r.tables.reduce((s, t) => s + t.deleted.length, 0);
  const prot = r.tables.reduce((s, t) => s + t.protected.length, 0);
  const skipped = r.tables.filter((t) => t.skipped).map((t) => t.table);
  const verb = r.dryRun ? 'would expire' : 'expired';
  return (
    `gc${r.dryRun ? ' (dry run)' : ''}: ${verb} ${expired} snapshot(s) in ${r.tables.length} table(s), ` +
    `${r.dryRun ? 'would delete' : 'deleted'} ${files} file(s) with them and ${r.orphans.length} orphan file(s); ` +
    `${prot} snapshot(s) kept for pins and commits in flight` +
    (skipped.length > 0 ? `; skipped ${skipped.join(', ')}` : '') +
    (r.strangers.length > 0 ? `; kept ${r.strangers.length} file(s) Mimir did not write (listed)` : '') +
    ` in ${r.ms} ms`
  );
}

/** Snapshot ids per table (identToString) that a live lease's generation reads. */
async function protectedSnapshots(log: EventLog): Promise<Map<string, Set<bigint>>> {
  const { lake } = log;
  const out = new Map<string, Set<bigint>>();
  const gens = new Set(lake.catalog.liveLeases().map((l) => l.releaseBase));
  for (const g of gens) {
    if (g > lake.catalog.pointerGeneration()) continue;
    for (const [table, loc] of lake.catalog.pointersAt(g)) {
      let m;
      try {
        m = await readMetadata(lake.io, loc);
      } catch (e) {
        // a pin taken on a generation older than the history kept: its reads fail on their own
        if (await isMissing(lake.io, loc, e)) continue;
        throw e;
      }
      if (m.currentSnapshotId === undefined) continue;
      let s = out.get(table);
      if (!s) out.set(table, (s = new Set()));
      s.add(m.currentSnapshotId);
    }
  }
  return out;
}

export async function gc(log: EventLog, opts: GcOptions = {}): Promise<GcReport> {
  if (log.isPinned) throw new PinnedError('a pinned read handle cannot run gc');
  const t0 = Date.now();
  const retainMs = opts.retainMs ?? DEFAULT_RETAIN_MS;
  const keepLast = opts.keepLast ?? 1;
  const dryRun = opts.dryRun === true;
  if (!Number.isFinite(retainMs) || retainMs < 0) throw new Error(`gc: retainMs must be >= 0, found ${retainMs}`);
  if (!Number.isSafeInteger(keepLast) || keepLast < 1) throw new Error(`gc: keepLast must be an integer >= 1, found ${keepLast}`);
  const { lake } = log;
  const tables: GcTableReport[] = [];
  for (const id of lake.catalog.listAllTables()) {
    const name = identToString(id);
    crashPoint('gc:before-expire');
    const run = async (): Promise<GcTableReport> => {
      // computed inside the commit: leases taken up to now (this commit's own included) are seen
      const protect = (await protectedSnapshots(log)).get(name) ?? new Set<bigint>();
      const table = await lake.loadTable(id);
      try {
        const r = await expireSnapshots(table, { olderThanMs: retainMs, keepLast, dryRun, protect });
        const d = r.deleted;
        const kept = table.metadata.snapshots.map((s) => s.snapshotId).filter((s) => protect.has(s) && s !== table.metadata.currentSnapshotId);
        return {
          table: name,
          expired: r.expired,
          deleted: [...d.statistics, ...d.manifestLists, ...d.manifests, ...d.dataFiles, ...d.deleteFiles],
          protected: kept,
        };
      } catch (e) {
        if (e instanceof GcDisabledError) return { table: name, expired: [], deleted: [], protected: [], skipped: e.message };
        throw e;
      }
    };
    tables.push(dryRun ? await run() : await log.commit(`gc expire ${name}`, run));
    crashPoint('gc:after-expire');
  }
  crashPoint('gc:before-orphans');
  // outside log.commit: a lease of our own would make orphan removal keep every file newer than it
  const orphans = await removeOrphanFiles(lake, { olderThanMs: Math.min(retainMs, ORPHAN_MARGIN_MS), dryRun, historyRetainMs: retainMs });
  crashPoint('gc:after-orphans');
  return { tables, orphans: orphans.deleted, strangers: orphans.strangers, dryRun, ms: Date.now() - t0 };
}
