// Garbage collection of the event log's lake: expire old snapshots of every
// table (deleting the files only they reached, and the metadata files of the
// generations whose snapshots went), then remove orphan files (leftovers of
// crashed or failed commits, compactions and splits).
//
// History kept (history.ts): per table, the newest `mimir.history.keep-snapshots`
// snapshots (default 32; `keepSnapshots` here overrides it for every table)
// that are also younger than `retainMs` (default 7 days) — both bounds apply,
// the age bound never dropping the newest `keepLast` — plus the current
// snapshot, refs, and what live leases read. `--as-of` reaches back as far as
// every table still has the generation's snapshot.
//
// Invariant: nothing a live pin or a commit in flight may read is deleted.
// Every live catalog lease (pinned handles, commits in flight, in any process)
// names a releaseBase generation g; the snapshot each table had current at g
// (pointersAt(g)) is protected from expiry, so its manifests, data files and
// metadata file stay. Orphan removal honours the leases itself (files newer
// than a live lease's start are kept) and reaches every metadata file the
// catalog recorded within the retention, so a pinned handle's metadata and what
// it names survive too. Orphans younger than min(retainMs, 1 min) are also
// kept — a margin for writers that take no lease (other engines).
//
// Bounded growth: metadata files of generations older than `retainMs` (and
// read by no live lease) are orphans like any other; those of generations
// whose snapshots the count bound expired are deleted with them. Per table
// what stays is the current file, its metadata-log
// (`write.metadata.previous-versions-max`) and the generations kept. Only
// files whose names Mimir writes are ever deleted; a stranger's file in a
// table folder is listed in the report.
//
// Crash story: each table's expiry is one optimistic commit (through
// EventLog.commit: lock, releaseBase, lease) followed by deletions of files
// nothing kept references any more; orphan removal deletes unreferenced files
// one by one. A crash anywhere leaves only unreferenced files; rerunning finishes.
import { removeOrphanFiles } from '../lake/maintenance/index.ts';
import { crashPoint } from '../lake/testing/crash.ts';
import { EventLog, PinnedError } from './event-log.ts';
import { DEFAULT_RETAIN_MS, expireHistory, type HistoryReport } from './history.ts';

export { DEFAULT_RETAIN_MS } from './history.ts';

export interface GcOptions {
  /** Expire snapshots older than this (ms; default 7 days). Orphans younger than min(retainMs, 1 min) are kept. */
  retainMs?: number;
  /** The age bound keeps at least the newest N snapshots of each branch (default 1). */
  keepLast?: number;
  /** Keep at most the newest N snapshots of each table (default: each table's mimir.history.keep-snapshots, 32; 0 = no count bound). */
  keepSnapshots?: number;
  /** List what would be expired and deleted; change nothing. */
  dryRun?: boolean;
}

/** A table's expiry: snapshots expired, files deleted with them (metadata files of expired generations first), snapshots kept for leases. */
export type GcTableReport = HistoryReport;

export interface GcReport {
  tables: GcTableReport[];
  /** Orphan files deleted (or, dry run, that would be). */
  orphans: string[];
  /** Files in table folders that nothing reaches and whose names Mimir never writes: kept, listed. */
  strangers: string[];
  dryRun: boolean;
  ms: number;
}

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

export async function gc(log: EventLog, opts: GcOptions = {}): Promise<GcReport> {
  if (log.isPinned) throw new PinnedError('a pinned read handle cannot run gc');
  const t0 = Date.now();
  const retainMs = opts.retainMs ?? DEFAULT_RETAIN_MS;
  const keepLast = opts.keepLast ?? 1;
  const dryRun = opts.dryRun === true;
  if (!Number.isFinite(retainMs) || retainMs < 0) throw new Error(`gc: retainMs must be >= 0, found ${retainMs}`);
  if (!Number.isSafeInteger(keepLast) || keepLast < 1) throw new Error(`gc: keepLast must be an integer >= 1, found ${keepLast}`);
  if (opts.keepSnapshots !== undefined && (!Number.isSafeInteger(opts.keepSnapshots) || opts.keepSnapshots < 0)) {
    throw new Error(`gc: keepSnapshots must be an integer >= 0, found ${opts.keepSnapshots}`);
  }
  const { lake } = log;
  // before any expiry: a gc that cannot remove orphans must not do half its work
  lake.refuseObjectStorage('gc (its orphan file removal)');
  const tables: GcTableReport[] = [];
  for (const id of lake.catalog.listAllTables()) {
    crashPoint('gc:before-expire');
    tables.push(await expireHistory(log, id, { olderThanMs: retainMs, keepLast, maxSnapshots: opts.keepSnapshots, dryRun }));
    crashPoint('gc:after-expire');
  }
  crashPoint('gc:before-orphans');
  // outside log.commit: a lease of our own would make orphan removal keep every file newer than it
  const orphans = await removeOrphanFiles(lake, { olderThanMs: Math.min(retainMs, ORPHAN_MARGIN_MS), dryRun, historyRetainMs: retainMs });
  crashPoint('gc:after-orphans');
  return { tables, orphans: orphans.deleted, strangers: orphans.strangers, dryRun, ms: Date.now() - t0 };
}
