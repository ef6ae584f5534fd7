// A state delta: the changes one commit makes to the serving state tables,
// landed in the SAME commit as its events (so the state tables' snapshots line
// up with lake generations). Merge-on-read: per table, the new rows of every
// id the commit adds, changes or moves (data files, each sorted by the table's
// sort columns) plus one position delete file naming the rows (data file,
// position) of every id that was live before and changed, moved or went away,
// resolved in the files live at `finish` (positions.ts: why position deletes;
// the commit checks those files are still live). The new rows are in files
// no delete names. (The former shape, one equality delete file on `id`, is
// still read, and written under the test hook MIMIR_STATE_DELETES=equality.)
//
// Two ways in. Exact (`putNode`, `putEdge`, `putFile`, `drop`): the writer
// knows each id's new fields, position and whether it was live (ingest's diff
// does). Generic (`events`): derived from one kind's event rows; `change` and
// `pos` rows need the id's current state row (looked up at the delta's base),
// `add` and `remove` do not. Both rely on the log's contract: an `add` is for
// an id not live; an entity removed with a live pos row has that pos row
// removed in the same commit.
//
// code_paths (when the lake has it) is append-only: the commit adds the
// (qpath, id) pairs its node events carry (any op) that the table does not
// hold yet — looked up by qpath in the table as it is, except for `adds`
// (a crate with no node event in the lake: every pair is new). Another run
// committing meanwhile writes other crates' ids (runs of one repo are
// serialized by their keys), so no pair is written twice.
//
// Memory: the rows buffered per table (flushed to a sorted file past
// `flushRows`), plus the ids to delete and the (qpath, id) pairs met (the
// delta's size, never the table's), and for each table that wrote a file of
// full row groups, that file's column arrays, kept for its next (ColumnPool).
// Crash story: files are written before the commit and named by nothing until
// it lands; a failed or abandoned commit leaves orphans that `abort` (or gc)
// removes. Crash point `state:file-written` after each file.
import type { Batch, DataFile, Value } from '../../lake/spec/types.ts';
import type { Table } from '../../lake/table/table.ts';
import { checkUpdate, type TableUpdate } from '../../lake/table/commit.ts';
import { writeOptions } from '../../lake/table/write.ts';
import { ModeChanged } from '../route.ts';
import type { TableIdent } from '../../lake/catalog/catalog.ts';
import { compareStrings } from '../../lake/spec/values.ts';
import { crashPoint } from '../../lake/testing/crash.ts';
import type { EventLog } from '../event-log.ts';
import { batchRows } from '../batch.ts';
import { ident, type Entity, type Kind } from '../schema.ts';
import { APPEND_ONLY, PROP_BUILDING, PROP_KEYS, CODE_EDGES_IN, CODE_EDGES_OUT, CODE_FILES, CODE_KEYS, CODE_NODES, CODE_PATHS, CORE_STATE_TABLES, SORT_COLUMNS, STATE_TABLES, TABLE_ENTITY, dstName, idKey, keysLayout, stateSchema, type KeysLayout, type StateTable, type Via } from './schema.ts';
import { edgeRow, fileRow, keyRows, nodeRow, ownPosition, placed, posOf, type Placed, type Row } from './rows.ts';
import { and, eq, ge, le, type Expr } from '../../lake/expr/expr.ts';
import { StateView } from './view.ts';
import { DeletedFilesGone } from '../../lake/table/snapshot.ts';
import { resolvePositions, stateDeletesMode, type StateDeletes } from './positions.ts';

/** One target of the commit: a state table and a fresh row-delta update for each attempt. */
export interface StateTarget {
  ident: TableIdent;
  update: () => TableUpdate;
  /** A check only (code_paths still being built): the table is not changed. */
  assertOnly?: boolean;
}

export interface StateDeltaOptions {
  /** Rows buffered per table before a sorted file is written (bounds memory; default 50 000). */
  flushRows?: number;
}

type Owner = 'node' | 'edge' | 'file';

/**
 * The code_paths lookups for some qpaths: per first path segment (a crate's
 * paths share their root), the range from its least to its greatest qpath —
 * the rows between are the same root's (other versions of the crate, mostly
 * the same paths), read in a few pages; an IN list of a crate's thousand
 * paths cost ~8x as much (a page span per value).
 */
export function pathRanges(qpaths: string[]): Expr[] {
  const byRoot = new Map<string, { lo: string; hi: string }>();
  for (const q of qpaths) {
    const at = q.indexOf('::');
    const root = at < 0 ? q : q.slice(0, at);
    const r = byRoot.get(root);
    if (!r) byRoot.set(root, { lo: q, hi: q });
    else {
      if (compareStrings(q, r.lo) < 0) r.lo = q;
      if (compareStrings(q, r.hi) > 0) r.hi = q;
    }
  }
  // in the table's order
  const ranges = [...byRoot.values()].sort((a, b) => compareStrings(a.lo, b.lo));
  return ranges.map((r) => (r.lo === r.hi ? eq('qpath', r.lo) : and(ge('qpath', r.lo), le('qpath', r.hi))));
}

/** Compare two values of a sort column: nulls first, strings by UTF-8 bytes. */
export function compareValues(a: Value, b: Value): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A comparator of rows by a table's sort columns. */
export function rowOrder(t: StateTable): (a: Row, b: Row) => number {
  const cols = SORT_COLUMNS[t];
  return (a, b) => {
    for (const c of cols) {
      const d = compareValues(a[c] ?? null, b[c] ?? null);
      if (d !== 0) return d;
    }
    return 0;
  };
}

/** Rows as one batch of the table's schema. */
export function toBatch(t: StateTable, rows: Row[]): Batch {
  const fields = stateSchema(t).fields;
  return { fields, numRows: rows.length, columns: fields.map((f) => rows.map((r) => r[f.name] ?? null)) };
}

/** Code units at or above U+D800: where JS `<` on strings can disagree with UTF-8 byte order. */
const HIGH_UNITS = /[\ud800-\uffff]/;

/**
 * Rows as one batch of the table's schema, in the table's sort order: the
 * order of `rows.sort(rowOrder(t))` (ties in input order), the batch
 * `toBatch` would make of it; `rows` is left as it is (see `sortOrder`).
 */
export function sortedBatch(t: StateTable, rows: Row[]): Batch {
  return sortedParts(t, [rowColumns(t, rows)], rows.length);
}

/** Rows as columns of the table's schema, in input order. */
function rowColumns(t: StateTable, rows: Row[]): Value[][] {
  const n = rows.length;
  // column by column, rows in input order (sequential reads of each row)
  return stateSchema(t).fields.map((f) => {
    const name = f.name;
    const col = new Array<Value>(n);
    for (let i = 0; i < n; i++) col[i] = rows[i]![name] ?? null;
    return col;
  });
}

/**
 * Parts of `n` rows in all, each given as columns of the table's schema, as
 * one batch in the table's sort order: the batch `sortedBatch` makes of their
 * rows one part after another.
 */
export function sortedParts(t: StateTable, parts: readonly Value[][][], n: number): Batch {
  const whole = parts.map((columns) => ({ columns, from: 0, to: columns[0]?.length ?? 0 }));
  const fields = stateSchema(t).fields;
  // one group of all n rows (none when n is 0)
  return sortedGroups(t, whole, n, Math.max(n, 1), undefined)[0] ?? { fields, numRows: 0, columns: fields.map(() => []) };
}

/** Rows [from, to) of columns of a table's schema: a piece of the rows a delta buffers. */
interface Part {
  columns: Value[][];
  from: number;
  to: number;
}

/**
 * The column arrays one table's flushes are written from, reused flush after
 * flush: per row group of a flush, one array of exactly `groupRows` values a
 * column. An array of more than 16k values lives in V8's large-object space,
 * whose every allocation maps fresh pages: made anew each flush, the sorted
 * columns were fresh memory to fault in (page faults cost this machine's main
 * thread ~8 us of system time each), and a flush of more rows than a row group
 * was copied again into the encoder's own arrays.
 */
class ColumnPool {
  private readonly groups: Value[][][] = [];
  /** Sort columns joined (at least as long as a flush; only the first n values are read). */
  private keys: Value[][] = [];

  constructor(
    readonly groupRows: number,
    private readonly width: number,
  ) {}

  /** The arrays of row group k. */
  group(k: number): Value[][] {
    let g = this.groups[k];
    if (!g) this.groups[k] = g = Array.from({ length: this.width }, () => new Array<Value>(this.groupRows).fill(null));
    return g;
  }

  /** An array of at least n values for sort column c. */
  key(c: number, n: number): Value[] {
    let a = this.keys[c];
    if (!a || a.length < n) this.keys[c] = a = new Array<Value>(n).fill(null);
    return a;
  }

  /** Let go of the values of a written flush (they are the file's, not this table's buffer). */
  clear(): void {
    for (const g of this.groups) for (const c of g) c.fill(null);
    for (const k of this.keys) k.fill(null);
  }
}

/**
 * The rows of `parts` (n in all) in the table's sort order, as batches of
 * `groupRows` rows (the last one shorter): the batches `sortedParts` would make
 * of them, cut into row groups. Only the sort columns are joined into one
 * array; every column is then written once, each part's values straight to
 * their sorted places (joining every column and then permuting it copied each
 * value twice: 1.2 s of the main thread on bench:ingest). A full group is
 * written into `pool`'s arrays when given (the caller clears them once the
 * batches are written); others into new arrays.
 */
function sortedGroups(t: StateTable, parts: readonly Part[], n: number, groupRows: number, pool: ColumnPool | undefined): Batch[] {
  const fields = stateSchema(t).fields;
  const column = (name: string, c: number): Value[] => {
    const j = fields.findIndex((f) => f.name === name);
    if (parts.length === 1 && parts[0]!.from === 0) return parts[0]!.columns[j]!;
    const out = pool ? pool.key(c, n) : new Array<Value>(n);
    let k = 0;
    for (const p of parts) k = copyInto(out, k, p.columns[j]!, p.from, p.to);
    return out;
  };
  const order = sortOrder(SORT_COLUMNS[t].map(column), n);
  const groups = Math.ceil(n / groupRows);
  const batches: Batch[] = [];
  for (let g = 0; g < groups; g++) {
    const rows = Math.min(groupRows, n - g * groupRows);
    const columns = pool && rows === groupRows ? pool.group(g) : fields.map(() => new Array<Value>(rows));
    batches.push({ fields, numRows: rows, columns });
  }
  // row k of the parts goes to group gOf[k], at oOf[k]
  const gOf = new Int32Array(n);
  const oOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const k = order[i]!;
    const g = (i / groupRows) | 0;
    gOf[k] = g;
    oOf[k] = i - g * groupRows;
  }
  for (let j = 0; j < fields.length; j++) {
    const outs = batches.map((b) => b.columns[j]!);
    const same = constantOf(parts, j);
    if (same !== undefined) {
      for (const o of outs) o.fill(same);
      continue;
    }
    let k = 0;
    if (outs.length === 1) for (const p of parts) k = scatterInto(outs[0]!, k, p.columns[j]!, p.from, p.to, oOf);
    else for (const p of parts) k = scatterGroups(outs, k, p.columns[j]!, p.from, p.to, gOf, oOf);
  }
  return batches;
}

/**
 * The value every row of the parts holds in column j, if one does (undefined
 * if not): it needs no placing. An edge flush has 4 such columns of 18 (repo,
 * line_end, col_end, moved), and a check stops at the first other value.
 */
function constantOf(parts: readonly Part[], j: number): Value | undefined {
  let first: Value | undefined;
  for (const p of parts) {
    const col = p.columns[j]!;
    if (p.from === p.to) continue;
    if (first === undefined) first = col[p.from]!;
    for (let i = p.from; i < p.to; i++) if (col[i] !== first) return undefined;
  }
  return first;
}

/** `col[from, to)` to their places in `out` (row k of the parts goes to place[k]), from row k; returns the next row. */
function scatterInto(out: Value[], k: number, col: Value[], from: number, to: number, place: Int32Array): number {
  for (let i = from; i < to; i++) out[place[k++]!] = col[i]!;
  return k;
}

/** scatterInto over row groups: row k of the parts goes to outs[gOf[k]] at oOf[k]. */
function scatterGroups(outs: Value[][], k: number, col: Value[], from: number, to: number, gOf: Int32Array, oOf: Int32Array): number {
  for (let i = from; i < to; i++) {
    outs[gOf[k]!]![oOf[k]!] = col[i]!;
    k++;
  }
  return k;
}

/**
 * The row numbers 0..n-1 in the order of the key columns (lexicographic;
 * each column by `compareValues`: nulls first, strings in UTF-8 byte order),
 * equal keys in input order. The first column is ranked (its distinct values
 * numbered as met, one hash lookup a row, then sorted once, by the engine's
 * own string order when no value holds a code unit at or above U+D800, where
 * that equals UTF-8 byte order) and the rows placed by a stable counting sort
 * on that rank; only rows that share a first value are then compared, on the
 * other columns (`sortTies`).
 */
export function sortOrder(keys: Value[][], n: number): Int32Array {
  const order = new Int32Array(n);
  if (keys.length === 0) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  const first = keys[0]!;
  const number = new Map<Value, number>();
  const values: Value[] = [];
  const met = new Int32Array(n); // 0: null, k: values[k - 1] before the sort
  for (let i = 0; i < n; i++) {
    const v = first[i]!;
    if (v === null) continue;
    let k = number.get(v);
    if (k === undefined) number.set(v, (k = values.push(v)));
    met[i] = k;
  }
  if (values.every((v) => typeof v === 'string' && !HIGH_UNITS.test(v))) values.sort(); // UTF-16 code unit order, = UTF-8 byte order here
  else values.sort(compareValues);
  const rankOf = new Int32Array(values.length + 1); // by number met; null ranks 0
  for (let r = 0; r < values.length; r++) rankOf[number.get(values[r]!)!] = r + 1;
  const start = new Int32Array(values.length + 2);
  for (let i = 0; i < n; i++) start[rankOf[met[i]!]! + 1]!++;
  for (let r = 1; r < start.length; r++) start[r]! += start[r - 1]!;
  const at = start.slice();
  for (let i = 0; i < n; i++) order[at[rankOf[met[i]!]!]!++] = i;
  if (keys.length > 1) sortTies(order, start, keys.slice(1));
  return order;
}

/**
 * Each run order[start[r]..start[r+1]) (rows sharing a first value, in input
 * order) by the `rest` key columns; stable (insertion and merge sort), so
 * equal keys keep input order. In place, with no array made per run (a
 * copy of each, sorted by the engine with a comparator: 4k-20k a flush).
 */
function sortTies(order: Int32Array, start: Int32Array, rest: Value[][]): void {
  const m = rest.length;
  // per run, per column: its values are strings without a code unit at or above U+D800 (or null), so `<` is UTF-8 byte order
  const native = new Uint8Array(m);
  const cmp = (i: number, j: number): number => {
    for (let c = 0; c < m; c++) {
      const k = rest[c]!;
      const a = k[i]!;
      const b = k[j]!;
      if (a === b) continue;
      if (native[c] === 1) {
        if (a === null) return -1;
        if (b === null) return 1;
        return a < b ? -1 : 1;
      }
      const d = compareValues(a, b);
      if (d !== 0) return d;
    }
    return 0;
  };
  let tmp = new Int32Array(0);
  for (let r = 0; r + 1 < start.length; r++) {
    const s = start[r]!;
    const e = start[r + 1]!;
    if (e - s < 2) continue;
    for (let c = 0; c < m; c++) native[c] = nativeRun(rest[c]!, order, s, e) ? 1 : 0;
    if (e - s <= INSERTION_RUN) {
      insertionSort(order, s, e, cmp);
      continue;
    }
    if (tmp.length < e - s) tmp = new Int32Array(e - s);
    mergeSort(order, s, e, cmp, tmp);
  }
}

/** Runs of this many rows or fewer are insertion-sorted; longer ones in pieces of it, then merged. */
const INSERTION_RUN = 12;

/** Whether col's values at order[s..e) are strings without a code unit at or above U+D800 (or null). */
function nativeRun(col: Value[], order: Int32Array, s: number, e: number): boolean {
  for (let x = s; x < e; x++) {
    const v = col[order[x]!]!;
    if (v === null) continue;
    if (typeof v !== 'string' || HIGH_UNITS.test(v)) return false;
  }
  return true;
}

/** a[s..e) by cmp, stably. */
function insertionSort(a: Int32Array, s: number, e: number, cmp: (i: number, j: number) => number): void {
  for (let x = s + 1; x < e; x++) {
    const v = a[x]!;
    let y = x - 1;
    while (y >= s && cmp(a[y]!, v) > 0) {
      a[y + 1] = a[y]!;
      y--;
    }
    a[y + 1] = v;
  }
}

/** a[s..e) by cmp, stably: runs of INSERTION_RUN sorted in place, then merged pairwise through `tmp` (at least e - s long). */
function mergeSort(a: Int32Array, s: number, e: number, cmp: (i: number, j: number) => number, tmp: Int32Array): void {
  const n = e - s;
  for (let x = s; x < e; x += INSERTION_RUN) insertionSort(a, x, Math.min(x + INSERTION_RUN, e), cmp);
  let src = a;
  let dst = tmp;
  let from = s; // where the runs start in src
  let to = 0;
  for (let width = INSERTION_RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) dst[to + k++] = cmp(src[from + i]!, src[from + j]!) <= 0 ? src[from + i++]! : src[from + j++]!;
      while (i < mid) dst[to + k++] = src[from + i++]!;
      while (j < hi) dst[to + k++] = src[from + j++]!;
    }
    [src, dst] = [dst, src];
    [from, to] = [to, from];
  }
  if (src !== a) a.set(src.subarray(0, n), s);
}

/** The columns nodeRow and edgeRow (rows.ts) give a state row. */
const NODE_FIELDS = ['name', 'qpath', 'id', 'repo', 'krate', 'kind', 'visibility', 'signature', 'parent', 'body_hash', 'origin', 'public_paths', 'type_info'];
const EDGE_FIELDS = ['dst', 'edge_kind', 'src', 'id', 'repo', 'krate', 'dst_krate', 'unresolved_reason', 'origin', 'dispatch'];

const num = (x: Value | undefined): number | null => (typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x) : null);
const text = (x: Value | undefined): string | null => (typeof x === 'string' ? x : null);

/**
 * The state rows of a batch of `add` events of one kind (ids not live, each
 * once), as columns of each table's schema in batch order: the rows `events`
 * buffers for those adds (nodeRow at the row's own position, not moved, and
 * its keyRows in `keys`'s layout; edgeRow in both edge tables), without an
 * object per row.
 */
export function addColumns(kind: Entity, b: Batch, keys: KeysLayout): Map<StateTable, Value[][]> {
  const n = b.numRows;
  // columns are shared, never written: by the event batch, both edge tables, every all-null column
  const none = new Array<Value>(n).fill(null);
  const nulls = (): Value[] => none;
  const event = new Map(b.fields.map((f, j) => [f.name, b.columns[j]!]));
  const col = (name: string): Value[] => event.get(name) ?? nulls();
  /** A column as `e[name] ?? null` reads it. */
  const same = (name: string): Value[] => {
    const c = col(name);
    for (let i = 0; i < n; i++) if (c[i] === undefined) return c.map((x) => x ?? null);
    return c;
  };
  /** A column as `f(e[name])` reads it: the event's own when f keeps every value (text and int columns of a canonical batch). */
  const mapped = (name: string, f: (x: Value | undefined) => Value): Value[] => {
    const c = col(name);
    let i = 0;
    while (i < n && f(c[i]) === c[i]) i++;
    if (i === n) return c;
    const out = c.slice(0, i);
    for (; i < n; i++) out.push(f(c[i]));
    return out;
  };
  const out = new Map<StateTable, Value[][]>();
  const moved = new Array<Value>(n).fill(false);
  if (kind === 'node') {
    const cols: Record<string, Value[]> = {
      file: mapped('file', text), line: mapped('line_start', num), col: mapped('col', num), line_end: mapped('line_end', num), col_end: nulls(), moved,
    };
    for (const name of NODE_FIELDS) cols[name] ??= same(name);
    out.set(CODE_NODES, stateSchema(CODE_NODES).fields.map((f) => cols[f.name] ?? nulls()));
    // code_keys: the id, the qpath, each public path not seen yet (keyRows)
    const key: Value[] = [];
    const via: Value[] = [];
    const at: number[] = [];
    const id = cols['id']!;
    const qpath = cols['qpath']!;
    const publicPaths = cols['public_paths']!;
    const krate = cols['krate']!;
    for (let i = 0; i < n; i++) {
      key.push(keys === 'krate' ? idKey(keys, krate[i] as string, id[i] as string) : id[i]!);
      via.push('id' satisfies Via);
      at.push(i);
      const q = qpath[i];
      const seen = new Set<string>();
      if (typeof q === 'string') {
        key.push(q);
        via.push('qpath' satisfies Via);
        at.push(i);
        seen.add(q);
      }
      const pp = publicPaths[i];
      if (typeof pp === 'string') {
        for (const p of pp.split('\n')) {
          if (p === '' || seen.has(p)) continue;
          seen.add(p);
          key.push(p);
          via.push('public' satisfies Via);
          at.push(i);
        }
      }
    }
    const keyCols: Record<string, Value[]> = { key, via };
    for (const name of ['id', 'name', 'repo', 'krate', 'kind']) keyCols[name] = at.map((i) => cols[name]![i]!);
    if (keys === 'krate') {
      // the display columns on each node's id row (the first of its rows), null on its path rows
      for (const name of ['qpath', 'visibility', 'signature', 'parent', 'file', 'line', 'col', 'line_end']) {
        const c = cols[name]!;
        keyCols[name] = at.map((i, j) => (via[j] === 'id' ? c[i]! : null));
      }
    }
    out.set(CODE_KEYS, stateSchema(CODE_KEYS).fields.map((f) => keyCols[f.name] ?? new Array<Value>(key.length).fill(null)));
    return out;
  }
  const cols: Record<string, Value[]> = {
    dst_name: mapped('dst_path', (x) => dstName(typeof x === 'string' ? x : null)), dst_path: same('dst_path'),
    file: mapped('file', text), line: mapped('line', num), col: mapped('col', num), line_end: nulls(), col_end: nulls(), moved,
  };
  for (const name of EDGE_FIELDS) cols[name] ??= same(name);
  const edges = stateSchema(CODE_EDGES_OUT).fields.map((f) => cols[f.name] ?? nulls());
  out.set(CODE_EDGES_IN, edges);
  out.set(CODE_EDGES_OUT, edges);
  return out;
}

/** `col[from, to)` into `out` from `k`; returns the next free index. Its own function: a loop on-stack-replaced inside
 * its caller's loop over parts left the outer loop's property access without feedback (deoptimized ~20x in a bench:ingest run). */
function copyInto(out: Value[], k: number, col: Value[], from: number, to: number): number {
  for (let i = from; i < to; i++) out[k++] = col[i]!;
  return k;
}

/** code_paths rows as its columns. */
interface PathColumns {
  qpath: string[];
  id: string[];
  repo: string[];
  krate: string[];
}

const pathColumns = (): PathColumns => ({ qpath: [], id: [], repo: [], krate: [] });

/** A table's buffered rows: parts given as columns (in order), then rows given one by one. */
interface Buffered {
  parts: Part[];
  rows: Row[];
}

/** Row groups of a state table's files when its properties name none (the encoder's default). */
const GROUP_ROWS = 64 * 1024;

export class StateDelta {
  private readonly buffers = new Map<StateTable, Buffered>();
  private readonly files = new Map<StateTable, { file: DataFile; specId: number }[]>();
  private readonly deleteFiles = new Map<StateTable, { file: DataFile; specId: number }>();
  private readonly deletes: Record<Owner, Set<string>> = { node: new Set(), edge: new Set(), file: new Set() };
  /** Per table, the data files its position delete file names (checked still live at commit). */
  private readonly referenced = new Map<StateTable, Set<string>>();
  /** How rows are deleted (positions.ts): position deletes, or the former equality deletes (a test hook). */
  private readonly deletesMode: StateDeletes = stateDeletesMode();
  private readonly flushRows: number;
  private finished = false;
  /**
   * code_paths pairs met, as its columns: `fresh` new to the table for sure, `maybe` to look up; `seen`: qpath -> its id
   * (a set only when it has more than one: a set and a row object per pair cost ~0.1 s of the main thread on bench:ingest).
   * Undefined: the lake has no code_paths.
   */
  private readonly pairs: { fresh: PathColumns; maybe: PathColumns; seen: Map<string, string | Set<string>> } | undefined;

  private readonly tables = new Map<StateTable, Promise<Table>>();
  /** Per table, the arrays its flushes of full row groups are sorted into (made at its first such flush). */
  private readonly pools = new Map<StateTable, ColumnPool>();
  /** Tables with a flush in progress (a second one meanwhile sorts into new arrays). */
  private readonly flushing = new Set<StateTable>();

  private constructor(
    private readonly log: EventLog,
    /** The generation lookups read (the commit's base). */
    readonly base: bigint,
    opts: StateDeltaOptions,
    /** code_paths: kept in step (`on`), being built from the log (`building`: not written, asserted still so), or none. */
    private readonly pathsMode: 'on' | 'building' | 'none',
    /** code_keys' layout when the delta opened (PROP_KEYS): what it writes, and what its commit asserts is still so. */
    readonly keys: KeysLayout,
  ) {
    this.flushRows = opts.flushRows ?? 50_000;
    this.pairs = pathsMode === 'on' ? { fresh: pathColumns(), maybe: pathColumns(), seen: new Map() } : undefined;
    for (const t of STATE_TABLES) {
      this.buffers.set(t, { parts: [], rows: [] });
      this.files.set(t, []);
    }
  }

  /** A delta for the lake's state tables (code_paths too when the lake has it), or undefined when the lake has none (yet). */
  static async open(log: EventLog, opts: StateDeltaOptions & { base?: bigint } = {}): Promise<StateDelta | undefined> {
    for (const name of CORE_STATE_TABLES) if (!log.lake.tableExists(ident(name))) return undefined;
    let paths: 'on' | 'building' | 'none' = 'none';
    if (log.lake.tableExists(ident(CODE_PATHS))) {
      const t = await log.lake.loadTable(ident(CODE_PATHS));
      paths = t.properties[PROP_BUILDING] === undefined ? 'on' : 'building';
    }
    const keys = keysLayout((await log.lake.loadTable(ident(CODE_KEYS))).properties);
    return new StateDelta(log, opts.base ?? log.lake.catalog.pointerGeneration(), opts, paths, keys);
  }

  /** A (qpath, id) pair a node event of this commit carries. */
  private pair(e: Record<string, unknown>, fresh: boolean): void {
    if (typeof e.qpath === 'string') this.pathPair(e.qpath, e.id as string, e.repo as string, e.krate as string, fresh);
  }

  /** A (qpath, id) pair, kept unless met already. */
  private pathPair(qpath: string, id: string, repo: string, krate: string, fresh: boolean): void {
    const p = this.pairs;
    if (!p) return;
    const ids = p.seen.get(qpath);
    if (ids === undefined) p.seen.set(qpath, id);
    else if (typeof ids === 'string') {
      if (ids === id) return;
      p.seen.set(qpath, new Set([ids, id]));
    } else {
      if (ids.has(id)) return;
      ids.add(id);
    }
    const c = fresh ? p.fresh : p.maybe;
    c.qpath.push(qpath);
    c.id.push(id);
    c.repo.push(repo);
    c.krate.push(krate);
  }

  /** A state table, loaded (writable, current) on first use: a delta touches only the tables it changes. */
  private table(name: StateTable): Promise<Table> {
    let t = this.tables.get(name);
    if (!t) this.tables.set(name, (t = this.log.lake.loadTable(ident(name))));
    return t;
  }

  // ---- exact input ----------------------------------------------------------

  /** A node is live with these columns (an event row or fields with repo, krate, id) at this position. */
  /** Buffered until `maybeFlush` or `finish` (call `maybeFlush` now and then: it bounds memory). */
  putNode(e: Record<string, unknown>, p: Placed, replaces: boolean): void {
    const n = nodeRow(e, p);
    this.pair(n, false);
    this.push(CODE_NODES, n);
    for (const k of keyRows(n, this.keys)) this.push(CODE_KEYS, k);
    if (replaces) this.deletes.node.add(n.id as string);
  }

  putEdge(e: Record<string, unknown>, p: Placed, replaces: boolean): void {
    const r = edgeRow(e, p);
    this.push(CODE_EDGES_IN, r);
    this.push(CODE_EDGES_OUT, r);
    if (replaces) this.deletes.edge.add(r.id as string);
  }

  putFile(e: Record<string, unknown>, replaces: boolean): void {
    const r = fileRow(e);
    this.push(CODE_FILES, r);
    if (replaces) this.deletes.file.add(r.id as string);
  }

  /** The id is no longer live. */
  drop(owner: Owner, id: string): void {
    this.deletes[owner].add(id);
  }

  private push(t: StateTable, r: Row): void {
    if (this.finished) throw new Error('state delta: rows added after finish');
    this.buffers.get(t)!.rows.push(r);
  }

  // ---- generic input --------------------------------------------------------

  /**
   * The state changes one commit's events of `kind` make (see the module
   * comment): the last event of an id in the batches wins.
   */
  async events(kind: Kind, batches: Batch[]): Promise<void> {
    const last = new Map<string, Row>();
    for (const b of batches) {
      for (const r of batchRows(b)) {
        last.set(r.id as string, r);
        // every node event's path, removes and superseded events too (code_paths is every pair the log holds)
        if (kind === 'node') this.pair(r, false);
      }
    }
    if (last.size === 0) return;
    if (kind === 'file') {
      for (const [id, e] of last) {
        if (e.op === 'remove') this.drop('file', id);
        else this.putFile(e, e.op !== 'add');
      }
      await this.maybeFlush();
      return;
    }
    if (kind === 'pos') {
      const by: Record<Entity, Map<string, Row>> = { node: new Map(), edge: new Map() };
      for (const [id, p] of last) (p.entity === 'edge' ? by.edge : by.node).set(id, p);
      for (const entity of ['node', 'edge'] as const) {
        if (by[entity].size === 0) continue;
        const cur = await this.current(entity, [...by[entity].values()]);
        for (const [id, p] of by[entity]) {
          const c = cur.get(id);
          if (!c) continue; // a position of an id not live: nothing to show
          if (p.op === 'remove') {
            throw new Error(
              `state delta: a pos remove for live ${entity} ${id} without its ${entity} remove in the same commit; the state tables cannot place it (expected the entity's event beside it); nothing committed`,
            );
          }
          this.putState(entity, c, placed(posOf(p), true));
        }
      }
      await this.maybeFlush();
      return;
    }
    const entity: Entity = kind;
    const changed = [...last.values()].filter((e) => e.op === 'change');
    const cur = changed.length > 0 ? await this.current(entity, changed) : new Map<string, Row>();
    for (const [id, e] of last) {
      if (e.op === 'remove') {
        this.drop(entity, id);
        continue;
      }
      const c = cur.get(id);
      // a change keeps a position that came from a live pos row (it still wins)
      const p = c?.moved === true ? placed(positionOfState(c), true) : placed(ownPosition(entity, e), false);
      if (entity === 'node') this.putNode(e, p, c !== undefined);
      else this.putEdge(e, p, c !== undefined);
    }
    await this.maybeFlush();
  }

  /**
   * A batch of `add` events of one kind for ids not live (a crate new to the
   * lake): the same state as `events(kind, [b])`, built column by column.
   * A batch with another op or an id twice goes the generic way.
   */
  async adds(kind: Entity, b: Batch): Promise<void> {
    const op = b.columns[b.fields.findIndex((f) => f.name === 'op')];
    const id = b.columns[b.fields.findIndex((f) => f.name === 'id')];
    if (!op || !id || op.some((x) => x !== 'add') || new Set(id).size !== id.length) return this.events(kind, [b]);
    if (b.numRows === 0) return;
    if (this.finished) throw new Error('state delta: rows added after finish');
    if (kind === 'node' && this.pairs) {
      const col = (name: string): Value[] | undefined => b.columns[b.fields.findIndex((f) => f.name === name)];
      const [q, repo, krate] = [col('qpath'), col('repo'), col('krate')];
      if (q && repo && krate) {
        for (let i = 0; i < b.numRows; i++) {
          const qpath = q[i];
          if (typeof qpath === 'string') this.pathPair(qpath, id[i] as string, repo[i] as string, krate[i] as string, true);
        }
      }
    }
    for (const [t, columns] of addColumns(kind, b, this.keys)) {
      const buf = this.buffers.get(t)!;
      // rows given one by one before these keep their place
      if (buf.rows.length > 0) {
        const rows = buf.rows.splice(0);
        buf.parts.push({ columns: rowColumns(t, rows), from: 0, to: rows.length });
      }
      buf.parts.push({ columns, from: 0, to: columns[0]?.length ?? 0 });
    }
    await this.maybeFlush();
  }

  /** Re-put a state row (a node or edge row as the tables hold it) at a new position. */
  private putState(entity: Entity, c: Row, p: Placed): void {
    if (entity === 'node') this.putNode(c, p, true);
    else this.putEdge(c, p, true);
  }

  /** The current state rows of the ids of event rows (each row's `krate` is its id's crate). */
  private async current(entity: Entity, events: Row[]): Promise<Map<string, Row>> {
    const view = await StateView.open(this.log, this.base);
    if (!view) throw new Error(`state delta: the state tables did not exist at generation ${this.base}`);
    const refs = events.map((e) => ({ id: e.id as string, krate: e.krate as string }));
    return entity === 'node' ? view.nodesById(refs) : view.edgesById(refs.map((r) => r.id));
  }

  // ---- writing --------------------------------------------------------------

  /** Write a sorted file of `flushRows` rows of each table, while it has that many buffered. */
  async maybeFlush(): Promise<void> {
    for (const [t, b] of this.buffers) while (bufferedRows(b) >= this.flushRows) await this.flushTable(t, this.flushRows);
  }

  /** Write every buffered row (each table's rows as sorted files of at most `flushRows` rows). */
  async flush(): Promise<void> {
    for (const t of STATE_TABLES) {
      const b = this.buffers.get(t)!;
      for (let n = bufferedRows(b); n > 0; n = bufferedRows(b)) await this.flushTable(t, Math.min(n, this.flushRows));
    }
  }

  /** The first n buffered rows of a table (n at most what it holds) as one sorted file. */
  private async flushTable(t: StateTable, n: number): Promise<void> {
    const b = this.buffers.get(t)!;
    if (b.rows.length > 0) {
      const rows = b.rows.splice(0);
      b.parts.push({ columns: rowColumns(t, rows), from: 0, to: rows.length });
    }
    const parts = takeRows(b, n);
    const table = await this.table(t);
    // a file of full row groups is sorted into the table's reused arrays (ColumnPool), unless one is being written
    const groupRows = writeOptions(table.properties).parquet.rowGroupRows ?? GROUP_ROWS;
    let pool: ColumnPool | undefined;
    if (n >= groupRows && !this.flushing.has(t)) {
      pool = this.pools.get(t);
      // the delta's table is loaded once, so its row-group limit never changes under a pool
      if (!pool) this.pools.set(t, (pool = new ColumnPool(groupRows, stateSchema(t).fields.length)));
      this.flushing.add(t);
    }
    try {
      const written = await table.writeDataFiles(sortedGroups(t, parts, n, groupRows, pool));
      this.files.get(t)!.push(...written);
    } finally {
      if (pool) {
        pool.clear();
        this.flushing.delete(t);
      }
    }
    crashPoint('state:file-written');
  }

  /**
   * Flush what is buffered, write the delete files, and return one target per
   * state table that changes (empty when nothing does).
   */
  async finish(): Promise<StateTarget[]> {
    await this.flush();
    this.finished = true;
    await this.writePaths();
    for (const t of STATE_TABLES) {
      if (APPEND_ONLY.has(t)) continue;
      const ids = [...this.deletes[TABLE_ENTITY[t]]].sort(compareStrings);
      if (ids.length === 0) continue;
      const table = await this.table(t);
      let d: { file: DataFile; specId: number } | undefined;
      if (this.deletesMode === 'position') {
        const r = await resolvePositions(table, ids);
        d = await table.writePositionDeletes(r.deletes);
        this.referenced.set(t, r.referenced);
      } else {
        const idField = table.schema.fields.find((f) => f.name === 'id')!;
        d = await table.writeEqualityDeletes([idField.id], [{ fields: [idField], numRows: ids.length, columns: [ids] }]);
      }
      if (d) {
        this.deleteFiles.set(t, d);
        crashPoint('state:file-written');
      }
    }
    const out: StateTarget[] = [];
    if (this.pathsMode === 'building') {
      // the fold being built does not see this commit's events: this commit must land before it
      // (the build's guard then refuses and is rerun) — one landing after it is redone, writing code_paths
      const table = await this.table(CODE_PATHS);
      const update = (): TableUpdate =>
        checkUpdate((base) => {
          if (base.properties[PROP_BUILDING] === undefined) throw new ModeChanged(`${CODE_PATHS} was built from the log while this commit was written without it`);
        });
      out.push({ ident: table.ident!, update, assertOnly: true });
    }
    for (const t of STATE_TABLES) {
      const files = this.files.get(t)!;
      const del = this.deleteFiles.get(t);
      if (files.length === 0 && !del) continue;
      const table = await this.table(t);
      const referenced = this.referenced.get(t);
      const update = (): TableUpdate => sameFiles(table.rowDeltaUpdate(files, del ? [del] : [], { 'mimir.state': 'delta' }, del ? referenced : undefined));
      out.push({ ident: table.ident!, update: t === CODE_KEYS ? () => sameKeys(update(), this.keys) : update });
    }
    return out;
  }

  /**
   * code_paths: the pairs met that the table does not hold (the `maybe` ones
   * looked up by qpath, in sorted chunks: each a narrow range of the table's
   * order), as sorted files of at most `flushRows` rows.
   */
  private async writePaths(): Promise<void> {
    const p = this.pairs;
    if (!p || p.fresh.qpath.length + p.maybe.qpath.length === 0) return;
    const table = await this.table(CODE_PATHS);
    const out = p.fresh;
    const maybe = p.maybe;
    const take = (i: number): void => {
      out.qpath.push(maybe.qpath[i]!);
      out.id.push(maybe.id[i]!);
      out.repo.push(maybe.repo[i]!);
      out.krate.push(maybe.krate[i]!);
    };
    if (maybe.qpath.length > 0 && table.currentSnapshot()) {
      const wanted = new Set(maybe.qpath);
      const held = new Map<string, Set<string>>();
      for (const range of pathRanges([...wanted])) {
        for (const r of await table.scan({ filter: range, columns: ['qpath', 'id'] }).toArray()) {
          const q = r.qpath as string;
          if (!wanted.has(q)) continue;
          let ids = held.get(q);
          if (!ids) held.set(q, (ids = new Set()));
          ids.add(r.id as string);
        }
      }
      for (let i = 0; i < maybe.qpath.length; i++) if (!held.get(maybe.qpath[i]!)?.has(maybe.id[i]!)) take(i);
    } else for (let i = 0; i < maybe.qpath.length; i++) take(i);
    p.fresh = pathColumns();
    p.maybe = pathColumns();
    p.seen.clear();
    const cols = new Map<string, Value[]>(Object.entries(out));
    const fields = stateSchema(CODE_PATHS).fields;
    for (let i = 0; i < out.qpath.length; i += this.flushRows) {
      const part = fields.map((f) => cols.get(f.name)!.slice(i, i + this.flushRows));
      const written = await table.writeDataFiles([sortedParts(CODE_PATHS, [part], part[0]!.length)]);
      this.files.get(CODE_PATHS)!.push(...written);
      crashPoint('state:file-written');
    }
  }

  /** Every file this delta wrote (for a run to track, or to delete). */
  paths(): string[] {
    const out: string[] = [];
    for (const fs of this.files.values()) for (const f of fs) out.push(f.file.filePath);
    for (const d of this.deleteFiles.values()) out.push(d.file.filePath);
    return out;
  }

  /** Delete what was written (the commit did not land). */
  async abort(): Promise<void> {
    for (const p of this.paths()) await this.log.lake.io.delete(p).catch(() => undefined);
    for (const t of STATE_TABLES) this.files.set(t, []);
    this.deleteFiles.clear();
    this.referenced.clear();
  }
}

/**
 * A code_keys update that first checks the table's layout is still `keys`
 * (the rows were made for it): `state rebuild` switching it meanwhile makes
 * the commit fail with ModeChanged (a run is redone, an append retried).
 */
function sameKeys(update: TableUpdate, keys: KeysLayout): TableUpdate {
  return {
    apply: async (base, attempt) => {
      const now = keysLayout(base.properties);
      if (now !== keys) throw new ModeChanged(`${CODE_KEYS} changed layout (${PROP_KEYS}: ${keys} -> ${now}) while this commit was written`);
      return update.apply(base, attempt);
    },
    attemptFiles: () => update.attemptFiles(),
    sharedFiles: () => update.sharedFiles(),
  };
}

/**
 * A row delta whose position deletes name files a state rewrite replaced
 * after they were resolved fails as ModeChanged: nothing committed, the run
 * is redone (an append retried) and resolves them in the rewritten files.
 */
function sameFiles(update: TableUpdate): TableUpdate {
  return {
    apply: async (base, attempt) => {
      try {
        return await update.apply(base, attempt);
      } catch (e) {
        if (e instanceof DeletedFilesGone) throw new ModeChanged(e.message);
        throw e;
      }
    },
    attemptFiles: () => update.attemptFiles(),
    sharedFiles: () => update.sharedFiles(),
  };
}

/** The position a state row holds. */
export function positionOfState(r: Row): { file: string | null; line: number | null; col: number | null; line_end: number | null; col_end: number | null } {
  return posOf(r);
}

function bufferedRows(b: Buffered): number {
  let n = b.rows.length;
  for (const p of b.parts) n += p.to - p.from;
  return n;
}

/** The first n rows of a buffer's parts (it holds at least n), taken out of it: a part split at the n-th row keeps its rest. */
function takeRows(b: Buffered, n: number): Part[] {
  const out: Part[] = [];
  let need = n;
  while (need > 0) {
    const p = b.parts[0]!;
    const len = p.to - p.from;
    if (len <= need) {
      out.push(b.parts.shift()!);
      need -= len;
    } else {
      out.push({ columns: p.columns, from: p.from, to: p.from + need });
      p.from += need;
      need = 0;
    }
  }
  return out;
}
