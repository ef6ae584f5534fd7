// Metadata files of expired generations. The catalog's generation log records,
// for every lake generation, the metadata file each table it touched moved to;
// a read as of a generation opens those files and their current snapshots.
// Once a table's expiry has dropped the snapshot a metadata file had current,
// that generation can no longer be read from the table, and the file is only
// weight: every one of them carries the snapshot list of its time. This walks
// the table's logged locations oldest first, from a cursor kept in the
// catalog's properties (`history.pruned-through.<table>` = the generation
// handled through), and deletes each file whose current snapshot is not
// retained, stopping at the first whose snapshot is (later generations
// descend from it). A file with no snapshot (a table just created) goes with
// the expired file after it. Only locations after the table's last drop are
// considered: an earlier incarnation's files are gc's, by age.
//
// Invariants: never the table's current metadata file, nor one logged after
// it; never a file whose current snapshot the table's current metadata still
// holds (read at the start of the walk, so an expiry that went further in
// another process, moving the cursor, is never second-guessed by an older
// plan) — so a live lease's generation keeps its files
// whenever its snapshots were protected from expiry; no directory listing
// (the cost is one metadata read per file deleted plus one); catalog rows are
// never removed (generation notes and pointers stay, naming deleted files:
// reading such a generation is an ExpiredGenerationError).
//
// Crash story: files are deleted before the cursor moves, oldest first; a
// crash leaves the cursor behind, and the next walk finds those files gone
// (absent counts as deleted) and goes on. Two processes walking at once
// delete the same files (deleting an absent file is not an error); the cursor
// only ever matters as a starting point, so a stale value costs reads only.
import type { TableMetadata } from '../spec/types.ts';
import type { Table } from '../table/table.ts';
import { identToString, type Catalog, type TableIdent } from '../catalog/catalog.ts';
import { readMetadata } from '../table/commit.ts';
import { isMissing } from './reachable.ts';

/** Catalog property prefix of the per-table cursor (value: a generation, decimal). */
export const PRUNED_THROUGH_PREFIX = 'history.pruned-through.';

/** The generation through which the table's expired metadata files were handled (0 when never). */
export function prunedThrough(catalog: Catalog, ident: TableIdent): bigint {
  const v = catalog.property(PRUNED_THROUGH_PREFIX + identToString(ident));
  return v !== undefined && /^\d+$/.test(v) ? BigInt(v) : 0n;
}

/**
 * Delete the metadata files of `table`'s older generations whose current
 * snapshot the table (its current metadata file, read now) no longer holds;
 * a dry run judges by `after`, the metadata the expiry would commit. Returns
 * the files deleted (dry run: that would be).
 */
export async function pruneMetadataFiles(table: Table, after: TableMetadata, opts: { dryRun?: boolean } = {}): Promise<string[]> {
  const { catalog, ident } = table;
  if (!catalog || !ident) return [];
  const dryRun = opts.dryRun === true;
  const from = prunedThrough(catalog, ident);
  const current = catalog.loadTable(ident)?.metadataLocation;
  if (current === undefined) return [];
  // retained = what the table holds now (a later expiry in another process may
  // have gone further than `after`, and its cursor with it: never judge a newer
  // file by an older plan); a dry run judges by the plan it would commit
  const retained = new Set((dryRun ? after : await readMetadata(table.io, current)).snapshots.map((s) => s.snapshotId));
  let rows = catalog.loggedLocationsAfter(ident, from);
  let through = from;
  const lastDrop = rows.map((r) => r.metadataLocation).lastIndexOf(null);
  if (lastDrop >= 0) {
    through = rows[lastDrop]!.generation;
    rows = rows.slice(lastDrop + 1);
  }
  // the walk ends at the current file; a pointer the log places at or before the cursor (another
  // engine moved it back) or never logged: nothing is judged
  if (!rows.some((r) => r.metadataLocation === current)) return [];
  const deleted: string[] = [];
  let pending: string[] = []; // files without a snapshot: they go with the next expired one
  for (const row of rows) {
    const loc = row.metadataLocation!;
    if (loc === current) break;
    let snapshot: bigint | undefined;
    let gone = false;
    try {
      snapshot = (await readMetadata(table.io, loc)).currentSnapshotId;
    } catch (e) {
      if (!(await isMissing(table.io, loc, e))) throw new Error(`history of ${table.name}: cannot read metadata file ${loc} (generation ${row.generation}): ${(e as Error).message} — nothing more deleted`);
      gone = true;
    }
    if (!gone && snapshot === undefined) {
      pending.push(loc);
      continue;
    }
    if (!gone && retained.has(snapshot!)) break;
    for (const f of gone ? pending : [...pending, loc]) {
      if (!dryRun) await table.io.delete(f);
      deleted.push(f);
    }
    pending = [];
    through = row.generation;
  }
  if (!dryRun && through > from) {
    try {
      catalog.setProperty(PRUNED_THROUGH_PREFIX + identToString(ident), String(through));
    } catch {
      // a catalog without Mimir's properties table: the next walk starts over (reads only)
    }
  }
  return deleted;
}
