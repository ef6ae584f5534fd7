// Remove orphan files: files under a table's location that no metadata of the
// table reaches — leftovers of failed or abandoned commits, crashed writers
// and interrupted maintenance (notes §9) — and metadata files of lake
// generations older than the history kept.
//
// Reachable, per table of the catalog, starting at the catalog's current
// pointer (never a version hint or a directory listing): the current metadata
// file and every file of its metadata-log (Iceberg's own history, trimmed at
// each commit to `write.metadata.previous-versions-max`), the metadata
// locations the lake's generation log recorded for the table — all of them, or
// with `historyRetainMs` those of the generations committed in that window and
// of every generation a live lease reads (pins, commits in flight), so reads
// as of those generations keep working — and from each of those: every
// snapshot's manifest list, manifests, data and delete files, statistics and
// partition-statistics files. Metadata files of older generations are
// orphans: that is what bounds a lake's metadata under many small commits.
//
// Invariant: a file is deleted only when (1) its table's reachability was
// computed in full, (2) no metadata reaches it — checked again after listing,
// against pointers that moved meanwhile — (3) it is older than the horizon,
// than the start of every live lease (commits in flight in any process, minus
// LEASE_SLACK_MS) and than the `protect()` time, and (4) its name is one Mimir
// writes (names.ts) inside the table's `metadata/` or `data/` folder: any other
// file found there is a stranger's, listed in the report and never deleted. A
// table whose metadata cannot be read, whose location is outside the lake, or
// whose files lie in another lake nested in this one's folder (its own
// catalog.db or mimir.toml: that lake's table, which a catalog here claims by
// mistake), is reported and nothing under its location is touched; nor is any
// file inside a nested lake, whichever table's folder it is listed under. The catalog file and
// `version-hint.text` files are never deleted.
//
// Crash story: it only deletes files nothing references, one at a time; a
// crash leaves fewer orphans and running it again finishes the job.
import * as nodePath from 'node:path';
import type { Lake } from '../lake.ts';
import type { TableIdent } from '../catalog/catalog.ts';
import { identToString } from '../catalog/catalog.ts';
import { FileSet, ReachabilityWalker, allReached, pathKey } from './reachable.ts';
import { isMimirFile } from './names.ts';
import { nestedLakeOf } from '../catalog/folders.ts';

export interface OrphanOptions {
  /** Only files whose mtime is older than now − this are deleted; 0 = any age (leases and `protect` still apply). */
  olderThanMs: number;
  /** Report what would be deleted; delete nothing. */
  dryRun?: boolean;
  /** A time (ms since epoch) after which files must be kept (the log layer's pins and in-flight commits). */
  protect?: () => Promise<number | undefined>;
  /**
   * Keep the metadata files of the lake generations committed within this
   * many ms (and of every generation a live lease reads); older generations'
   * metadata files are orphans. Undefined: every generation's are kept.
   */
  historyRetainMs?: number;
}

export interface OrphanReport {
  /** Files listed under the tables' locations. */
  scanned: number;
  /** Listed files that some metadata reaches (or that are never deleted: catalog, version hint). */
  reachable: number;
  /** Orphans deleted (or, dry run, that would be). */
  deleted: string[];
  /** Orphans kept: newer than a live lease or `protect()` (inFlight), or than the horizon (young). */
  kept: { inFlight: number; young: number };
  /** Unreachable files whose names Mimir does not write: a stranger's, listed and never deleted. */
  strangers: string[];
  /** Tables left alone, with the reason (metadata unreadable, location overlapping the lake root or such a table). */
  skipped: { table: string; reason: string }[];
  dryRun: boolean;
  ms: number;
}

/** Files this much older than a live lease's start are fair game; covers clock granularity and skew. */
export const LEASE_SLACK_MS = 2000;

interface TableState {
  ident: TableIdent;
  name: string;
  pointer: string;
  /** Key of the table location. */
  locationKey: string;
  location: string;
  failed?: string;
}

/** The generation log's metadata locations of a table kept as roots: all, or those since `since`. */
function loggedHistory(lake: Lake, ident: TableIdent, since: bigint | undefined): string[] {
  return since === undefined ? lake.catalog.everMetadataLocations(ident) : lake.catalog.metadataLocationsSince(ident, since);
}

async function reachTable(lake: Lake, ident: TableIdent, pointer: string, since: bigint | undefined): Promise<{ files: FileSet; location: string }> {
  const w = new ReachabilityWalker(lake.io);
  const cur = await w.metadataFile(pointer, false);
  if (!cur) throw new Error(`current metadata file ${pointer} is missing`);
  const history = [...cur.metadataLog.map((e) => e.metadataFile), ...loggedHistory(lake, ident, since)];
  for (const loc of history) {
    if (w.reached.metadataFiles.has(loc)) continue;
    await w.metadataFile(loc, true);
  }
  return { files: allReached(w.reached), location: cur.location };
}

/** `a` equals `b` or lies under it (keys). */
function within(a: string, b: string): boolean {
  return a === b || a.startsWith(b.endsWith('/') ? b : b + '/');
}

/** Remove files no metadata of any catalog table reaches. */
export async function removeOrphanFiles(lake: Lake, opts: OrphanOptions): Promise<OrphanReport> {
  lake.refuseObjectStorage('orphan file removal (gc)');
  if (!Number.isFinite(opts.olderThanMs) || opts.olderThanMs < 0) {
    throw new Error(`removeOrphanFiles: olderThanMs must be a number >= 0, found ${opts.olderThanMs}`);
  }
  const start = Date.now();
  const dryRun = opts.dryRun === true;
  const horizon = start - opts.olderThanMs;
  // leases and protect before the pointers are read: a writer not seen here starts after `start`
  const keepAfter: number[] = lake.catalog.liveLeases().map((l) => l.startedMs - LEASE_SLACK_MS);
  const p1 = await opts.protect?.();
  if (p1 !== undefined) keepAfter.push(p1);
  // the oldest generation whose metadata files stay: the retention window's, or a live lease's
  const sinceOf = (leaseGens: bigint[]): bigint | undefined => {
    if (opts.historyRetainMs === undefined) return undefined;
    let g = lake.catalog.generationAt(start - opts.historyRetainMs);
    for (const b of leaseGens) if (b < g) g = b;
    return g;
  };
  let since = sinceOf(lake.catalog.liveLeases().map((l) => l.releaseBase));

  const reachable = new FileSet();
  const skipped: OrphanReport['skipped'] = [];
  const blocked: string[] = []; // location keys of tables whose reachability is unknown
  const tables: TableState[] = [];
  // table locations are named under the recorded root (the lake's FileIO maps it onto the opened one)
  const rootKey = pathKey(lake.recordedRoot);
  for (const ident of lake.catalog.listAllTables()) {
    const name = identToString(ident);
    const p = lake.catalog.loadTable(ident);
    if (!p) continue;
    const other = lake.otherLakeHolding(ident);
    if (other !== undefined) {
      skipped.push({ table: name, reason: `its files are in ${other}, a lake of its own (its own catalog): only that lake's gc may remove them` });
      blocked.push(pathKey(p.metadataLocation), pathKey(nodePath.posix.dirname(nodePath.posix.dirname(pathKey(p.metadataLocation)))));
      continue;
    }
    try {
      const r = await reachTable(lake, ident, p.metadataLocation, since);
      reachable.addAll(r.files);
      const locationKey = pathKey(r.location);
      if (within(rootKey, locationKey)) {
        skipped.push({ table: name, reason: `its location ${r.location} holds the lake root ${lake.recordedRoot}` });
        continue;
      }
      if (!within(locationKey, rootKey)) {
        skipped.push({ table: name, reason: `its location ${r.location} is outside the lake (${lake.recordedRoot}): gc never deletes there` });
        continue;
      }
      tables.push({ ident, name, pointer: p.metadataLocation, location: r.location, locationKey });
    } catch (e) {
      skipped.push({ table: name, reason: (e as Error).message });
      blocked.push(pathKey(lake.tableLocation(ident)), pathKey(nodePath.posix.dirname(nodePath.posix.dirname(pathKey(p.metadataLocation)))));
    }
  }

  // list
  const catalogKey = pathKey(lake.catalog.path);
  const neverDelete = (key: string): boolean =>
    key === catalogKey || key.startsWith(catalogKey + '-') || key.endsWith('/metadata/version-hint.text');
  const listed = new Set<string>();
  const candidates: { path: string; key: string; mtimeMs: number; table: TableState; mimir: boolean }[] = [];
  let scanned = 0;
  let reachableCount = 0;
  for (const t of tables) {
    const local = t.location.startsWith('file:') || t.location.startsWith('/');
    for (const f of await lake.io.list(local ? t.locationKey : t.location)) {
      const key = pathKey(f.path);
      if (listed.has(key)) continue;
      listed.add(key);
      scanned++;
      if (reachable.hasKey(key) || neverDelete(key)) reachableCount++;
      else candidates.push({ path: f.path, key, mtimeMs: f.mtimeMs, table: t, mimir: isMimirFile(key.slice(t.locationKey.length + 1)) });
    }
  }

  // commits that landed while we walked and listed: reach their metadata too;
  // those still in flight hold leases now
  const leases2 = lake.catalog.liveLeases();
  for (const l of leases2) keepAfter.push(l.startedMs - LEASE_SLACK_MS);
  const p2 = await opts.protect?.();
  if (p2 !== undefined) keepAfter.push(p2);
  // a pin taken meanwhile on an older generation keeps that generation's metadata too
  const since2 = since === undefined ? undefined : sinceOf([since, ...leases2.map((l) => l.releaseBase)]);
  const olderHistory = since2 !== undefined && since !== undefined && since2 < since;
  since = since2;
  for (const t of tables) {
    if (olderHistory) {
      try {
        reachable.addAll((await reachTable(lake, t.ident, t.pointer, since)).files);
      } catch (e) {
        t.failed = (e as Error).message;
      }
    }
    for (let round = 0; !t.failed; round++) {
      const p = lake.catalog.loadTable(t.ident);
      if (!p) {
        t.failed = 'dropped while orphan removal ran';
        break;
      }
      if (p.metadataLocation === t.pointer) break;
      if (round >= 10) {
        t.failed = 'its pointer kept moving while orphan removal ran';
        break;
      }
      try {
        reachable.addAll((await reachTable(lake, t.ident, p.metadataLocation, since)).files);
        t.pointer = p.metadataLocation;
      } catch (e) {
        t.failed = (e as Error).message;
        break;
      }
    }
    if (t.failed) {
      skipped.push({ table: t.name, reason: t.failed });
      blocked.push(t.locationKey);
    }
  }

  // a lake inside a table's folder keeps its own files (folders checked once each)
  const nestedByDir = new Map<string, boolean>();
  const inNestedLake = (path: string): boolean => {
    const local = lake.io.local(path);
    if (!nodePath.isAbsolute(local)) return false;
    const dir = nodePath.dirname(local);
    let v = nestedByDir.get(dir);
    if (v === undefined) nestedByDir.set(dir, (v = nestedLakeOf(lake.root, dir) !== undefined));
    return v;
  };
  const cutoff = Math.min(horizon, ...keepAfter);
  const deleted: string[] = [];
  const strangers: string[] = [];
  let young = 0;
  let inFlight = 0;
  for (const c of candidates) {
    if (reachable.hasKey(c.key)) {
      reachableCount++;
      continue;
    }
    if (blocked.some((b) => within(c.key, b) || within(b, c.key)) || c.table.failed) continue;
    if (inNestedLake(c.path)) continue;
    if (!c.mimir) strangers.push(c.path);
    else if (c.mtimeMs >= horizon) young++;
    else if (c.mtimeMs >= cutoff) inFlight++;
    else {
      if (!dryRun) await lake.io.delete(c.path);
      deleted.push(c.path);
    }
  }
  return { scanned, reachable: reachableCount, deleted, kept: { inFlight, young }, strangers, skipped, dryRun, ms: Date.now() - start };
}
