// The history a lake keeps: per table, at most its newest K snapshots
// (`mimir.history.keep-snapshots`: the table property, else `[history]
// keep-snapshots` in mimir.toml, else 32; 0 = no count bound), and among them
// only those younger than the age retention (gc's `--retain`, 7 days by
// default) — plus, whatever their rank or age, the current snapshot, every
// ref's, and every snapshot a live catalog lease's generation has current
// (pinned readers, `mimir serve`'s pins, runs and commits in flight, in any
// process). A snapshot is kept when both bounds keep it; the age bound never
// drops the newest `keepLast` (gc's --keep-last, default 1).
//
// Two callers: `expireHistory` after a run (maintain.ts's history task, when
// a table holds more than K + slack snapshots — `mimir.history.slack`,
// default 8 — so it runs about once every `slack` commits of a table, not
// after each) and gc (every table, every time). Each expires the snapshots
// outside the bounds, then deletes the metadata files of the generations
// whose snapshots went (lake/maintenance/history.ts) and the files only the
// expired snapshots reached (lake/maintenance/expire.ts). Readers as of an
// older generation get an ExpiredGenerationError from the tables (the log's
// `--as-of` answers such generations from the event log instead); catalog
// rows — generation notes and pointers — are never removed.
//
// Invariant: nothing a live lease may read is deleted. The protected
// snapshots are computed inside the expiry's own commit (EventLog.commit: its
// lease is live first), so a reader that took its lease before that is seen;
// one that pins an old generation after it may find that generation expired
// (its reads fail with ExpiredGenerationError, nothing is misread). A reader
// of the current generation is safe without a lease for K commits of a table.
//
// Crash story: expire.ts's — one metadata commit, then deletions from the top
// of the reference chain down; a crash leaves files nothing kept names, which
// the next expiry (metadata files) and gc's orphan removal (the rest) collect.
import { expireSnapshots, GcDisabledError } from '../lake/maintenance/index.ts';
import { identToString, type TableIdent } from '../lake/catalog/catalog.ts';
import type { Lake } from '../lake/lake.ts';
import { readMetadata } from '../lake/table/commit.ts';
import { isMissing } from '../lake/maintenance/reachable.ts';
import type { EventLog } from './event-log.ts';

/** Table property: the newest snapshots a table keeps (0 = no count bound). */
export const PROP_HISTORY_KEEP_SNAPSHOTS = 'mimir.history.keep-snapshots';
/** Table property: snapshots beyond the kept ones tolerated before a run's maintenance expires them. */
export const PROP_HISTORY_SLACK = 'mimir.history.slack';
/**
 * 32: at one snapshot per run per table (a run commits every table it touches
 * once; maintenance adds a rewrite now and then), a lake's file count levels
 * off after ~40 runs (K + slack), and metadata.json holds ≤ 40 snapshots.
 * The soak (bench/soak.ts) measured the curve; see docs/design.md.
 */
export const DEFAULT_KEEP_SNAPSHOTS = 32;
export const DEFAULT_HISTORY_SLACK = 8;
/** gc's default age retention, also the age bound of a run's expiry. */
export const DEFAULT_RETAIN_MS = 7 * 24 * 60 * 60 * 1000;

function count(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  return v.trim() !== '' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** The newest snapshots a table with these properties keeps in this lake (0: no count bound). */
export function keepSnapshots(lake: Lake, props: Record<string, string>): number {
  return count(props[PROP_HISTORY_KEEP_SNAPSHOTS]) ?? lake.settings.keepSnapshots ?? DEFAULT_KEEP_SNAPSHOTS;
}

/** Snapshots tolerated beyond `keepSnapshots` before a run's maintenance expires them. */
export function historySlack(props: Record<string, string>): number {
  return count(props[PROP_HISTORY_SLACK]) ?? DEFAULT_HISTORY_SLACK;
}

/**
 * Snapshot ids per table (identToString) that a live lease's generation reads
 * (each table's current snapshot at that generation); only `only` when given.
 */
export async function protectedSnapshots(lake: Lake, only?: TableIdent): Promise<Map<string, Set<bigint>>> {
  const out = new Map<string, Set<bigint>>();
  const gens = new Set(lake.catalog.liveLeases().map((l) => l.releaseBase));
  const want = only === undefined ? undefined : identToString(only);
  for (const g of gens) {
    if (g > lake.catalog.pointerGeneration()) continue;
    for (const [table, loc] of lake.catalog.pointersAt(g)) {
      if (want !== undefined && table !== want) continue;
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

export interface HistoryOptions {
  /** Age bound (ms): snapshots older expire (default 7 days). */
  olderThanMs?: number;
  /** The age bound never drops the newest N of a branch (default 1). */
  keepLast?: number;
  /** Count bound; default the table's `keepSnapshots`. 0: none. */
  maxSnapshots?: number;
  dryRun?: boolean;
}

export interface HistoryReport {
  table: string;
  /** Snapshot ids expired (or, dry run, that would be). */
  expired: bigint[];
  /** Files deleted with them: metadata files of expired generations, manifest lists, manifests, data files, statistics. */
  deleted: string[];
  /** Of `deleted`, the metadata files. */
  metadataFiles: number;
  /** Snapshot ids kept only because a live lease's generation reads them. */
  protected: bigint[];
  /** Why the table was left alone (gc.enabled=false). */
  skipped?: string;
}

/** Expire one table's history to its bounds (see the module comment), as one commit of `log`. */
export async function expireHistory(log: EventLog, id: TableIdent, opts: HistoryOptions = {}): Promise<HistoryReport> {
  const name = identToString(id);
  const { lake } = log;
  const dryRun = opts.dryRun === true;
  const other = lake.otherLakeHolding(id);
  if (other !== undefined) {
    const skipped = `its files are in ${other}, a lake of its own (its own catalog): only that lake's gc may expire them`;
    return { table: name, expired: [], deleted: [], metadataFiles: 0, protected: [], skipped };
  }
  const run = async (): Promise<HistoryReport> => {
    // computed inside the commit: leases taken up to now (this commit's own included) are seen
    const protect = (await protectedSnapshots(lake, id)).get(name) ?? new Set<bigint>();
    const table = await lake.loadTable(id);
    const maxSnapshots = opts.maxSnapshots ?? keepSnapshots(lake, table.properties);
    try {
      const r = await expireSnapshots(table, {
        olderThanMs: opts.olderThanMs ?? DEFAULT_RETAIN_MS, keepLast: opts.keepLast ?? 1, maxSnapshots, dryRun, protect, pruneMetadata: true,
      });
      const d = r.deleted;
      const kept = table.metadata.snapshots.map((s) => s.snapshotId).filter((s) => protect.has(s) && s !== table.metadata.currentSnapshotId);
      return {
        table: name,
        expired: r.expired,
        deleted: [...d.metadataFiles, ...d.statistics, ...d.manifestLists, ...d.manifests, ...d.dataFiles, ...d.deleteFiles],
        metadataFiles: d.metadataFiles.length,
        protected: kept,
      };
    } catch (e) {
      if (e instanceof GcDisabledError) return { table: name, expired: [], deleted: [], metadataFiles: 0, protected: [], skipped: e.message };
      throw e;
    }
  };
  return dryRun ? run() : log.commit(`expire history of ${name}`, run);
}
