// Expire snapshots: drop old snapshots from a table's metadata, then delete the
// files that only they reached (spec "Snapshot Retention Policy"; notes §9).
//
// Retained: the current snapshot; every ref's snapshot (a branch or tag whose
// own `max-ref-age-ms` has passed is dropped first, never `main`); for each
// branch its newest ancestors while fewer than `min-snapshots-to-keep` are kept
// or while they are younger than `max-snapshot-age-ms` (ref settings override
// the table's) — and, with `maxSnapshots` N, never more than the newest N of a
// branch whatever their age (the minimum to keep wins over N); snapshots on no
// branch while younger than the age limit (with a count bound: none); every
// snapshot in `protect`. Everything else expires. `gc.enabled=false` refuses.
//
// With `pruneMetadata`, the metadata files of the table's older generations
// (as the catalog's generation log recorded them) whose current snapshot is no
// longer retained are deleted too (history.ts): a generation is readable as
// long as its snapshots are, and no longer.
//
// Invariant: a file is deleted only if an expired snapshot referenced it and no
// snapshot of the table's metadata as committed (with whatever landed
// concurrently) reaches it; reading any retained snapshot's files must succeed
// before anything is deleted. A metadata file is deleted only when its current
// snapshot is not among those retained (so never the current one, nor one a
// live lease's generation points at when the caller protects those snapshots).
//
// Crash story: the metadata change is one optimistic commit, recomputed from
// the fresh base on every retry; nothing is deleted before it lands. Deletion
// goes from the top of the reference chain down: old generations' metadata
// files, then statistics and manifest lists, then manifests, then data and
// delete files, so a crash part way leaves only files nothing still on disk
// names — the next expiry finishes the metadata files (its cursor did not
// move), orphan removal collects the rest. Crash points: `expire:committed`,
// `expire:metadata-pruned`, `expire:lists-deleted`.
import type { Snapshot, SnapshotRef, StatisticsFile, TableMetadata } from '../spec/types.ts';
import type { TableUpdate } from '../table/commit.ts';
import type { Table } from '../table/table.ts';
import { crashPoint } from '../testing/crash.ts';
import { pruneMetadataFiles } from './history.ts';
import { FileSet, ReachabilityWalker } from './reachable.ts';

export interface ExpireOptions {
  /** Expire snapshots older than now − this; default table property `history.expire.max-snapshot-age-ms`, else 5 days. */
  olderThanMs?: number;
  /** Always keep the newest N of each branch's ancestry (main included); default `history.expire.min-snapshots-to-keep`, else 1. */
  keepLast?: number;
  /** Report what would be expired and deleted; commit and delete nothing. */
  dryRun?: boolean;
  /** Snapshot ids never expired, whatever their age (e.g. what live pins and commits in flight read). */
  protect?: Set<bigint>;
  /** Keep at most the newest N snapshots of each branch, whatever their age (0 / undefined: no count bound). */
  maxSnapshots?: number;
  /** Also delete the metadata files of the table's generations whose current snapshot is not retained (history.ts). */
  pruneMetadata?: boolean;
}

export interface ExpireReport {
  expired: bigint[];
  deleted: { manifestLists: string[]; manifests: string[]; dataFiles: string[]; deleteFiles: string[]; statistics: string[]; metadataFiles: string[] };
  dryRun: boolean;
  ms: number;
}

export class GcDisabledError extends Error {}

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * DAY_MS;
const DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 1;

/** The outcome of retention on one base. */
export interface RetentionPlan {
  expired: Snapshot[];
  /** Statistics and partition-statistics entries dropped with their snapshots. */
  expiredStatistics: StatisticsFile[];
  droppedRefs: string[];
  next: TableMetadata;
}

function intProp(props: Record<string, string>, key: string): number | undefined {
  const v = props[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function requireGc(m: TableMetadata, name: string): void {
  if ((m.properties['gc.enabled'] ?? 'true').trim().toLowerCase() === 'false') {
    throw new GcDisabledError(`${name}: table property gc.enabled=false forbids expiring snapshots — nothing expired or deleted`);
  }
}

/** Which snapshots `base` keeps and the metadata without the others (pure). */
export function planRetention(
  base: TableMetadata, nowMs: number, opts: { olderThanMs?: number; keepLast?: number; protect?: Set<bigint>; maxSnapshots?: number }, name = base.location,
): RetentionPlan {
  requireGc(base, name);
  const maxAge = opts.olderThanMs ?? intProp(base.properties, 'history.expire.max-snapshot-age-ms') ?? DEFAULT_MAX_SNAPSHOT_AGE_MS;
  const minKeep = opts.keepLast ?? intProp(base.properties, 'history.expire.min-snapshots-to-keep') ?? DEFAULT_MIN_SNAPSHOTS_TO_KEEP;
  if (!Number.isFinite(maxAge) || maxAge < 0) throw new Error(`expireSnapshots ${name}: olderThanMs must be >= 0, found ${maxAge}`);
  if (!Number.isSafeInteger(minKeep) || minKeep < 1) throw new Error(`expireSnapshots ${name}: keepLast must be an integer >= 1, found ${minKeep}`);
  const maxCount = opts.maxSnapshots ?? 0;
  if (!Number.isSafeInteger(maxCount) || maxCount < 0) throw new Error(`expireSnapshots ${name}: maxSnapshots must be an integer >= 0, found ${maxCount}`);
  const capped = maxCount > 0;
  const now = BigInt(Math.floor(nowMs));
  const byId = new Map(base.snapshots.map((s) => [s.snapshotId, s]));

  // refs past their own max age go (never main)
  const refs: Record<string, SnapshotRef> = {};
  const droppedRefs: string[] = [];
  for (const [refName, ref] of Object.entries(base.refs)) {
    const snap = byId.get(ref.snapshotId);
    if (refName !== 'main' && ref.maxRefAgeMs !== undefined && snap && now - snap.timestampMs > ref.maxRefAgeMs) droppedRefs.push(refName);
    else refs[refName] = ref;
  }
  // a table without a main ref (v1) still has its current snapshot on a main branch
  const branches: SnapshotRef[] = Object.values(refs);
  if (base.currentSnapshotId !== undefined && !refs.main) branches.push({ snapshotId: base.currentSnapshotId, type: 'branch' });

  const retained = new Set<bigint>();
  const onABranch = new Set<bigint>();
  if (base.currentSnapshotId !== undefined) retained.add(base.currentSnapshotId);
  if (opts.protect) for (const s of base.snapshots) if (opts.protect.has(s.snapshotId)) retained.add(s.snapshotId);
  for (const ref of branches) {
    retained.add(ref.snapshotId);
    if (ref.type !== 'branch') continue;
    const keep = ref.minSnapshotsToKeep ?? minKeep;
    const cap = capped ? Math.max(maxCount, keep) : Infinity;
    const oldest = now - (ref.maxSnapshotAgeMs ?? BigInt(maxAge));
    let kept = 0;
    let stillKeeping = true;
    const seen = new Set<bigint>();
    for (let s = byId.get(ref.snapshotId); s && !seen.has(s.snapshotId); s = s.parentSnapshotId === undefined ? undefined : byId.get(s.parentSnapshotId)) {
      seen.add(s.snapshotId);
      onABranch.add(s.snapshotId);
      if (stillKeeping && kept < cap && (kept < keep || s.timestampMs >= oldest)) {
        retained.add(s.snapshotId);
        kept++;
      } else stillKeeping = false;
    }
  }
  const oldest = now - BigInt(maxAge);
  if (!capped) for (const s of base.snapshots) if (!onABranch.has(s.snapshotId) && s.timestampMs >= oldest) retained.add(s.snapshotId);

  const expired = base.snapshots.filter((s) => !retained.has(s.snapshotId));
  const expiredIds = new Set(expired.map((s) => s.snapshotId));
  // like Java: an entry of an expired snapshot drops it and every entry before it
  const snapshotLog: TableMetadata['snapshotLog'] = [];
  for (const e of base.snapshotLog) {
    if (byId.has(e.snapshotId) && !expiredIds.has(e.snapshotId)) snapshotLog.push(e);
    else snapshotLog.length = 0;
  }
  const expiredStatistics = [...base.statistics, ...base.partitionStatistics].filter((f) => expiredIds.has(f.snapshotId));
  const next: TableMetadata =
    expired.length === 0 && droppedRefs.length === 0
      ? base
      : {
          ...base,
          snapshots: base.snapshots.filter((s) => !expiredIds.has(s.snapshotId)),
          refs,
          snapshotLog,
          statistics: base.statistics.filter((f) => !expiredIds.has(f.snapshotId)),
          partitionStatistics: base.partitionStatistics.filter((f) => !expiredIds.has(f.snapshotId)),
        };
  return { expired, expiredStatistics, droppedRefs, next };
}

/** A TableUpdate that re-plans retention on each attempt's base; `last` is the plan of the attempt that landed. */
class ExpireUpdate implements TableUpdate {
  last: RetentionPlan | undefined;
  constructor(
    private readonly nowMs: number,
    private readonly opts: ExpireOptions,
    private readonly name: string,
  ) {}
  async apply(base: TableMetadata): Promise<TableMetadata> {
    this.last = planRetention(base, this.nowMs, this.opts, this.name);
    return this.last.next;
  }
  attemptFiles(): string[] {
    return [];
  }
  sharedFiles(): string[] {
    return [];
  }
}

/**
 * Expire snapshots of `table` and delete the files only they reached.
 * Throws `GcDisabledError` when `gc.enabled=false`.
 */
export async function expireSnapshots(table: Table, opts: ExpireOptions = {}): Promise<ExpireReport> {
  const t0 = Date.now();
  const dryRun = opts.dryRun === true;
  const name = table.name;
  const writable = table.catalog !== undefined && table.ident !== undefined && table.readOnlyReason === undefined;
  if (writable) await table.refresh();
  if (!dryRun && !writable) {
    throw new Error(`expireSnapshots ${name}: the table is read-only (${table.readOnlyReason ?? 'opened from a metadata file'}) — nothing expired`);
  }

  let plan = planRetention(table.metadata, t0, opts, name);
  let after = plan.next;
  if (!dryRun && plan.expired.length + plan.droppedRefs.length > 0) {
    const update = new ExpireUpdate(t0, opts, name);
    await table.commit(update, `expire snapshots of ${name}`);
    plan = update.last!;
    after = table.metadata; // as committed: concurrent commits included
    crashPoint('expire:committed');
  }
  const files = await filesOnlyExpiredReach(table, plan, after, dryRun);
  // metadata files of expired generations first: they name the snapshots whose files go next
  const metadataFiles = opts.pruneMetadata && writable ? await pruneMetadataFiles(table, after, { dryRun }) : [];
  const deleted = { ...files, metadataFiles };
  if (!dryRun) {
    crashPoint('expire:metadata-pruned');
    // statistics and manifest lists next: after them nothing names the rest
    for (const p of [...deleted.statistics, ...deleted.manifestLists]) await table.io.delete(p);
    crashPoint('expire:lists-deleted');
    for (const p of deleted.manifests) await table.io.delete(p);
    for (const p of [...deleted.dataFiles, ...deleted.deleteFiles]) await table.io.delete(p);
  }
  return { expired: plan.expired.map((s) => s.snapshotId), deleted, dryRun, ms: Date.now() - t0 };
}

/** What the expired snapshots reached and no snapshot of `after` does. */
async function filesOnlyExpiredReach(table: Table, plan: RetentionPlan, after: TableMetadata, dryRun: boolean): Promise<Omit<ExpireReport['deleted'], 'metadataFiles'>> {
  const none = { manifestLists: [], manifests: [], dataFiles: [], deleteFiles: [], statistics: [] };
  if (plan.expired.length === 0 && plan.expiredStatistics.length === 0) return none;
  const kept = new ReachabilityWalker(table.io);
  try {
    await kept.metadata(after, false);
  } catch (e) {
    throw new Error(
      `expireSnapshots ${table.name}: ${plan.expired.length} snapshot(s) ${dryRun ? 'would be expired' : 'were expired (committed)'}, ` +
        `but the files of the retained snapshots could not all be read, so no file ${dryRun ? 'would be' : 'was'} deleted: ${(e as Error).message}`,
    );
  }
  const retained = kept.reached;
  // manifests a retained snapshot lists need not be read again: their live files are reached already
  const gone = new ReachabilityWalker(table.io, (p) => retained.manifests.has(p));
  for (const s of plan.expired) await gone.snapshot(s, true);
  const stats = new FileSet();
  for (const f of plan.expiredStatistics) stats.add(f.statisticsPath);
  const r = gone.reached;
  return {
    manifestLists: r.manifestLists.minus(retained.manifestLists),
    manifests: r.manifests.minus(retained.manifests),
    dataFiles: r.dataFiles.minus(retained.dataFiles),
    deleteFiles: r.deleteFiles.minus(retained.deleteFiles),
    statistics: stats.minus(retained.statistics),
  };
}
