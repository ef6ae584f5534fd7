// Reading the graph for queries: one lake generation per question (an `asOf`
// pins a read handle through EventLog.pin; otherwise the current generation is
// fixed at the start so that every scan of one question sees the same state),
// and the fold of current state restricted to a set of ids. A generation whose
// snapshots gc expired is answered all the same: the pin reads the current
// log restricted to the runs landed by then (EventLog "runs reads"; never the
// state tables), so every question below works unchanged.
//
// Invariant: a query never trusts a filter on a column that a `remove` event
// may leave empty. Candidate ids are found with the selective filter (name,
// qpath, dst…) pushed into the scan; their state is then folded from *every*
// event of those ids (a filter on `id` plus repo/krate, which every row
// carries), and the question's predicate is checked again on the folded row.
// Read-only: nothing here writes.
import type { Value } from '../lake/spec/types.ts';
import { generationOf, type AsOf } from './as-of.ts';
import { and, inList, type Expr } from '../lake/expr/expr.ts';
import { batchRows, type EventLog } from '../log/event-log.ts';
import { StateView } from '../log/state/view.ts';
import { PREEMPT_ROWS, preempt } from '../lake/preempt.ts';
import { COL_ID, COL_KRATE, COL_OP, COL_REPO, type Kind } from '../log/schema.ts';

/** When to answer: a lake generation, or a time (the last generation committed at or before it). */
export type { AsOf } from './as-of.ts';

export interface QueryOptions {
  asOf?: AsOf;
  /**
   * Where answers come from: `state` (default) = the serving state tables
   * when the lake has them at the generation asked, else the log; `log` =
   * always fold the event log (slower; the same answers — for checks and
   * benchmarks).
   */
  from?: 'state' | 'log';
}

/** An event row by column name, as the lake returns it. */
export type Row = Record<string, Value>;

/** A read of one question: the handle and the generation every scan uses. */
export interface ReadAt {
  log: EventLog;
  generation: bigint;
  /**
   * The serving state tables at that generation, when the lake has them (and
   * they are not expired there): questions are answered from them; without,
   * by folding the log.
   */
  view?: StateView;
}

/** Run `fn` on a handle fixed to `asOf` (a pinned handle, closed afterwards) or to the handle's generation now. */
export async function readAt<T>(log: EventLog, asOf: AsOf | undefined, fn: (r: ReadAt) => Promise<T>, from: QueryOptions['from'] = 'state'): Promise<T> {
  const view = (l: EventLog, g: bigint): Promise<StateView | undefined> => (from === 'log' ? Promise.resolve(undefined) : StateView.open(l, g));
  if (asOf === undefined) {
    const generation = log.readGeneration();
    return fn({ log, generation, view: await view(log, generation) });
  }
  const g = await generationOf(log, asOf);
  // a handle pinned there already (the server's, an answer's source lookups) is used as it is
  if (log.pinnedGeneration === g) return fn({ log, generation: g, view: await view(log, g) });
  // history: a generation whose snapshots gc expired is read from the log by runs (EventLog.runsReadOf)
  const pinned = log.pin({ generation: g }, { history: true });
  try {
    const generation = pinned.readGeneration();
    return await fn({ log: pinned, generation, view: await view(pinned, generation) });
  } finally {
    pinned.close();
  }
}

/** Filters on columns every event row carries (safe for a fold). */
export function scopeFilter(scope: { repo?: string; krate?: string }): Expr[] {
  const out: Expr[] = [];
  if (scope.repo !== undefined) out.push({ op: 'eq', col: COL_REPO, value: scope.repo });
  if (scope.krate !== undefined) out.push({ op: 'eq', col: COL_KRATE, value: scope.krate });
  return out;
}

export function allOf(parts: Expr[]): Expr | undefined {
  return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : and(...parts);
}

/**
 * Ids of every event (any op, any time up to the read generation) matching
 * `filter` and, when given, `test` on the `columns` it reads.
 */
export async function candidateIds(r: ReadAt, kind: Kind, filter: Expr | undefined, test?: { columns: string[]; fn: (row: Row) => boolean }): Promise<Set<string>> {
  const ids = new Set<string>();
  const columns = test ? [COL_ID, ...test.columns.filter((c) => c !== COL_ID)] : [COL_ID];
  for await (const b of r.log.scan(kind, { filter, columns, generation: r.generation })) {
    const idCol = b.columns[b.fields.findIndex((f) => f.name === COL_ID)]!;
    if (!test) {
      for (const v of idCol) ids.add(v as string);
      continue;
    }
    let n = 0;
    for (const row of batchRows(b)) {
      if (++n % PREEMPT_ROWS === 0) await preempt();
      if (test.fn(row)) ids.add(row[COL_ID] as string);
    }
  }
  return ids;
}

/** Above this many ids the fold scans by scope only (an IN list that long prunes little and costs much). */
const MAX_IN_LIST = 2000;

/**
 * Current state (latest event wins, `remove` hides) of the given ids, at the
 * read generation; `scope` filters are pushed down too.
 */
export async function foldIds(r: ReadAt, kind: Kind, ids: Set<string>, scope: Expr[] = []): Promise<Map<string, Row>> {
  if (ids.size === 0) return new Map();
  const parts = [...scope];
  if (ids.size <= MAX_IN_LIST) parts.push(inList(COL_ID, [...ids]));
  const state = await r.log.state(kind, allOf(parts), { generation: r.generation });
  if (ids.size > MAX_IN_LIST) for (const id of state.keys()) if (!ids.has(id)) state.delete(id);
  if ((kind === 'node' || kind === 'edge') && state.size > 0) {
    const pos = await r.log.state('pos', allOf(parts), { generation: r.generation });
    for (const [id, row] of state) {
      const p = pos.get(id);
      if (p) state.set(id, placed(kind, row, p));
    }
  }
  return state;
}

/** A node or edge row with its position taken from its live pos row. */
export function placed(entity: 'node' | 'edge', row: Row, pos: Row): Row {
  return entity === 'node'
    ? { ...row, file: pos.file ?? null, line_start: pos.line ?? null, line_end: pos.line_end ?? null, col: pos.col ?? null }
    : { ...row, file: pos.file ?? null, line: pos.line ?? null, col: pos.col ?? null };
}

/** A folded row that is present (not removed). */
export function isLive(row: Row | undefined): row is Row {
  return row !== undefined && row[COL_OP] !== 'remove';
}

// ---- names and globs (matching: glob.ts) ---------------------------------------

/**
 * A range filter on `col` for the literal prefix of a glob (`Regex*` → `Regex`
 * ≤ col < `Regey`), so that files and row groups whose bounds miss it are
 * pruned. ASCII prefixes only (Parquet orders strings by UTF-8 bytes).
 */
export function prefixRange(col: string, glob: string): Expr | undefined {
  const m = /^[^*?]*/.exec(glob)![0];
  if (m === '' || !/^[\x20-\x7e]*$/.test(m)) return undefined;
  const upper = m.slice(0, -1) + String.fromCharCode(m.charCodeAt(m.length - 1) + 1);
  return and({ op: 'ge', col, value: m }, { op: 'lt', col, value: upper });
}

// ---- typed views of rows -------------------------------------------------------

export const str = (v: Value | undefined): string | null => (typeof v === 'string' ? v : null);
export const int = (v: Value | undefined): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);

/** A node as queries return it. */
export interface NodeHit {
  id: string;
  repo: string;
  krate: string;
  kind: string | null;
  name: string | null;
  qpath: string | null;
  file: string | null;
  line: number | null;
  /** Column of the item's name, 1-based (null when not recorded). */
  col: number | null;
  lineEnd: number | null;
  visibility: string | null;
  signature: string | null;
  parent: string | null;
}

export function nodeHit(row: Row): NodeHit {
  return {
    id: row[COL_ID] as string,
    repo: row[COL_REPO] as string,
    krate: row[COL_KRATE] as string,
    kind: str(row.kind),
    name: str(row.name),
    qpath: str(row.qpath),
    file: str(row.file),
    line: int(row.line_start),
    col: int(row.col),
    lineEnd: int(row.line_end),
    visibility: str(row.visibility),
    signature: str(row.signature),
    parent: str(row.parent),
  };
}

/** An edge as queries return it. */
export interface EdgeHit {
  id: string;
  repo: string;
  krate: string;
  edgeKind: string | null;
  src: string | null;
  dst: string | null;
  dstPath: string | null;
  dstKrate: string | null;
  file: string | null;
  line: number | null;
  /** Column of the reference, 1-based (null when not recorded). */
  col: number | null;
  /** Why the resolver left it unresolved (`in the standard library`, `no receiver`, …): only on an edge with no `dst` whose run recorded one. */
  reason?: string;
}

export function edgeHit(row: Row): EdgeHit {
  return {
    id: row[COL_ID] as string,
    repo: row[COL_REPO] as string,
    krate: row[COL_KRATE] as string,
    edgeKind: str(row.edge_kind),
    src: str(row.src),
    dst: str(row.dst),
    dstPath: str(row.dst_path),
    dstKrate: str(row.dst_krate),
    file: str(row.file),
    line: int(row.line),
    col: int(row.col),
    ...(row.dst == null && typeof row.unresolved_reason === 'string' && row.unresolved_reason !== '' ? { reason: row.unresolved_reason } : {}),
  };
}

/** Stable output order: repo, krate, qpath/file, line, id. */
export function byPlace<T extends { repo: string; krate: string; id: string; file: string | null; line: number | null }>(key: (t: T) => string) {
  return (a: T, b: T): number =>
    cmp(a.repo, b.repo) || cmp(a.krate, b.krate) || cmp(key(a), key(b)) || cmp(a.file ?? '', b.file ?? '') || (a.line ?? 0) - (b.line ?? 0) || cmp(a.id, b.id);
}

export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
