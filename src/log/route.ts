// Routing ring rows, and the guard that makes the routing hold at commit time.
// Shared by EventLog's appends and by runs (run.ts).
//
// A batch of a kind's schema is split by its `repo` column into ring rows
// (repo `@universe`) and the rest. Where ring rows go depends on the ring mode
// (the node source table's `mimir.ring`): the ring table in a split lake, the
// source table in a unified one. Files are written for the mode read before
// writing; the commit then carries `modeGuard` on the node table, which
// re-checks the mode inside the catalog transaction (ModeChanged: route
// again) and refuses to land while a live ring freeze is on (Frozen: wait and
// try again). So no ring row lands in the wrong table, from any process.
import type { Lake } from '../lake/lake.ts';
import type { Batch, TableMetadata } from '../lake/spec/types.ts';
import { ValidationError, type TableUpdate } from '../lake/table/commit.ts';
import { COL_REPO, PROP_RING, PROP_RING_FREEZE, RING_SPLIT, UNIVERSE_REPO, kindSchema, type Kind } from './schema.ts';

/** The ring mode changed between writing files and committing them: route again. */
export class ModeChanged extends ValidationError {}

/** A live ring split/unsplit holds the freeze: the commit must wait and try again. */
export class Frozen extends ValidationError {}

/** A ring freeze found on the node table. */
export interface RingFreeze {
  /** The property's value as found. */
  raw: string;
  /** The lease id it names (undefined when the value is not a decimal id). */
  lease: bigint | undefined;
  /** Is that lease live (the holder still running)? */
  live: boolean;
}

export function isRingSplit(m: TableMetadata): boolean {
  return m.properties[PROP_RING] === RING_SPLIT;
}

/** The ring freeze the node table's metadata carries, if any, and whether its lease is live. */
export function ringFreeze(lake: Lake, m: TableMetadata): RingFreeze | undefined {
  const raw = m.properties[PROP_RING_FREEZE];
  if (raw === undefined) return undefined;
  const lease = /^\d+$/.test(raw) ? BigInt(raw) : undefined;
  const live = lease !== undefined && lake.catalog.liveLeases().some((l) => l.id === lease);
  return { raw, lease, live };
}

/** Throw Frozen when the node table's metadata carries a freeze whose lease is live. */
export function frozenCheck(lake: Lake, node: TableMetadata): void {
  const f = ringFreeze(lake, node);
  if (f?.live) throw new Frozen(`the ring is frozen by lease ${f.raw} (a ring split or unsplit is switching)`);
}

/** The check a commit routed for mode `split` carries on the node table's base metadata. */
export function modeGuard(lake: Lake, split: boolean): (base: TableMetadata) => void {
  return (base) => {
    frozenCheck(lake, base);
    if (isRingSplit(base) !== split) throw new ModeChanged(`the ring mode changed to ${isRingSplit(base) ? 'split' : 'unified'} before the commit`);
  };
}

/** An update that runs `check` on the base before applying `inner`. */
export function guarded(inner: TableUpdate, check: (base: TableMetadata) => void): TableUpdate {
  return {
    apply: async (base, attempt) => {
      check(base);
      return inner.apply(base, attempt);
    },
    attemptFiles: () => inner.attemptFiles(),
    sharedFiles: () => inner.sharedFiles(),
  };
}

/** Batches of one kind split by repo: `ring` rows (repo @universe) and the `rest`; `all` = every non-empty batch. */
export interface Routed {
  all: Batch[];
  ring: Batch[];
  rest: Batch[];
  rows: number;
}

/**
 * Check that each batch has the kind's schema (its fields, in order) and split
 * it into ring rows and the rest (values shared, not copied, when a batch is
 * all one or the other).
 */
export function routeBatches(kind: Kind, batches: Batch[], what: string): Routed {
  const schema = kindSchema(kind);
  const want = schema.fields.map((f) => f.name).join(',');
  const repoCol = schema.fields.findIndex((f) => f.name === COL_REPO);
  const out: Routed = { all: [], ring: [], rest: [], rows: 0 };
  for (const [n, b] of batches.entries()) {
    const names = b.fields.map((f) => f.name).join(',');
    if (names !== want || b.columns.length !== schema.fields.length) {
      throw new Error(`${what} ${kind}: batch ${n} has columns ${names}, expected the ${kind} schema's ${want}`);
    }
    if (b.numRows === 0) continue;
    out.all.push(b);
    out.rows += b.numRows;
    const repos = b.columns[repoCol]!;
    let ringRows = 0;
    for (let i = 0; i < b.numRows; i++) if (repos[i] === UNIVERSE_REPO) ringRows++;
    if (ringRows === b.numRows) out.ring.push(b);
    else if (ringRows === 0) out.rest.push(b);
    else {
      out.ring.push(pickRows(b, (i) => repos[i] === UNIVERSE_REPO));
      out.rest.push(pickRows(b, (i) => repos[i] !== UNIVERSE_REPO));
    }
  }
  return out;
}

/** The rows of `b` for which `keep(row index)` holds, as a new batch. */
function pickRows(b: Batch, keep: (i: number) => boolean): Batch {
  const idx: number[] = [];
  for (let i = 0; i < b.numRows; i++) if (keep(i)) idx.push(i);
  return { fields: b.fields, numRows: idx.length, columns: b.columns.map((col) => idx.map((i) => col[i] ?? null)) };
}
