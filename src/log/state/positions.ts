// Position deletes for the state tables: the rows a state delta replaces or
// drops, resolved to (data file, row position) in the files live when the
// delta is finished. The id column alone is read (column pruning), through a
// filtered scan, so files and row groups whose id bounds cannot hold a
// deleted id are skipped, and rows already deleted are not named again.
//
// Why position deletes (not equality deletes, not deletion-free tables):
// DESIGN.md "Engines read what we write" — released PyIceberg does not apply
// equality deletes and DuckDB's Iceberg reader has known bugs with them, so
// those engines read deleted rows; every engine applies position deletes.
// bench/state-deletes.ts measured the deletion-free alternative (after each
// run, a state maintenance that leaves no delete file: the files the run's
// deletes name, and its own, merged and rewritten) on 5 Debian crates in the
// universe and 3 as repos ingested 4 or 6 times with edits between (load
// 15-30, three runs): per edited run it wrote 3.6-4x the state bytes (3.0-3.2
// MB against 0.77-0.87 MB) and 1.1-1.5x the write CPU. Its cost is the size
// of the tables, not of the run: a run's ids are spread over every file of a
// table sorted by name, so "the files it touched" is the whole table — with
// a large universe, every run of a small repo would rewrite all of it.
// Lookups are what it buys, between maintenances: with the read cache a
// server and a question's process use (a third run, 4 runs, load ~17), find
// took 116 against 243 ms (6 data files and no delete file against 21 data
// and 13 delete files) and callers 25 against 24 ms — the price of position
// deletes until a table passes its thresholds (maxDeltaFiles), as it was with
// the former equality deletes (their write: 2.4 s CPU and 3.0 MB a run with
// the maintenance they caused, against 1.9 s and 0.77 MB).
//
// Invariant: a position delete names files live when it was resolved; the
// commit checks they still are (SnapshotChange.referenced), and a state
// rewrite checks no position delete committed after its read names a file it
// removes (positionDeletesAfter) — so a delete never parts from its rows.
// Crash story: nothing here writes; the delta writes the file and the run's
// one commit names it.
import { inList } from '../../lake/expr/expr.ts';
import type { Table } from '../../lake/table/table.ts';

export type StateDeletes = 'position' | 'equality';

/**
 * How state deltas delete rows: position deletes; `MIMIR_STATE_DELETES=equality`
 * is a test hook that writes the former shape (a lake made before), for the
 * conversion tests and bench/state-deletes.ts.
 */
export function stateDeletesMode(): StateDeletes {
  return process.env.MIMIR_STATE_DELETES === 'equality' ? 'equality' : 'position';
}

/** Ids looked up with an IN filter at most (above: the id column read whole). */
const IN_MAX = 4000;

export interface Resolved {
  deletes: { path: string; pos: bigint }[];
  /** The data files named. */
  referenced: Set<string>;
}

/** The live rows of `table` whose id is one of `ids`, as (file, position) pairs. */
export async function resolvePositions(table: Table, ids: string[]): Promise<Resolved> {
  const deletes: { path: string; pos: bigint }[] = [];
  const referenced = new Set<string>();
  if (ids.length === 0 || !table.currentSnapshot()) return { deletes, referenced };
  const want = new Set(ids);
  // a long IN list prunes little (ids are hashes: every file spans them) and costs a check per value
  // and page; past IN_MAX the id column is read whole and each value looked up in the set
  const filter = ids.length <= IN_MAX ? inList('id', ids) : undefined;
  for await (const b of table.scan({ filter, columns: ['id'], positions: true }).batches()) {
    const path = b.source?.file;
    const pos = b.positions;
    if (path === undefined || !pos) throw new Error(`${table.name}: a scan asked for row positions gave a batch without them; no delete written`);
    const col = b.columns[0]!;
    for (let i = 0; i < b.numRows; i++) {
      if (!want.has(col[i] as string)) continue;
      deletes.push({ path, pos: BigInt(pos[i]!) });
      referenced.add(path);
    }
  }
  return { deletes, referenced };
}
