// Questions answered from the serving state tables (log/state): the same
// answers as folding the log (read.ts), but each a few pruned lookups —
// names and name prefixes on code_nodes (sorted by name), paths and ids on
// code_keys (sorted by key), edges by their target's name on code_edges_in
// and by their source on code_edges_out. Each function matches its fold
// twin in def.ts, find.ts and refs.ts row for row; the test on the folded row
// is applied again here, so a lookup only has to be complete, never exact.
// Read-only.
import { and, eq, inList, type Expr } from '../lake/expr/expr.ts';
import { filterPreempting } from '../lake/preempt.ts';
import type { StateView } from '../log/state/view.ts';
import { dstName } from '../log/state/schema.ts';
import { COL_ID } from '../log/schema.ts';
import { int, str, type NodeHit, type Row } from './read.ts';

/** The code_nodes columns a NodeHit shows (stateNodeHit): a question reads only these. */
export const NODE_HIT_COLUMNS = ['id', 'repo', 'krate', 'kind', 'name', 'qpath', 'file', 'line', 'col', 'line_end', 'visibility', 'signature', 'parent'];
/** The code_edges_* columns an EdgeHit shows (read.ts edgeHit), and what the exact tests of refs/callers/callees/unresolved read. */
export const EDGE_HIT_COLUMNS = ['id', 'repo', 'krate', 'edge_kind', 'src', 'dst', 'dst_path', 'dst_krate', 'file', 'line', 'col', 'unresolved_reason'];

/** A code_nodes row as a NodeHit (the same fields as nodeHit of a folded event row). */
export function stateNodeHit(row: Row): NodeHit {
  return {
    id: row[COL_ID] as string,
    repo: row.repo as string,
    krate: row.krate as string,
    kind: str(row.kind),
    name: str(row.name),
    qpath: str(row.qpath),
    file: str(row.file),
    line: int(row.line),
    col: int(row.col),
    lineEnd: int(row.line_end),
    visibility: str(row.visibility),
    signature: str(row.signature),
    parent: str(row.parent),
  };
}

/** Live nodes named `name` that pass `test`. */
export async function nodesNamed(view: StateView, name: string, test: (row: Row) => boolean): Promise<Row[]> {
  return (await view.nodes(eq('name', name), NODE_HIT_COLUMNS)).filter(test);
}

/** The code_nodes rows of code_keys rows (by the name and id they carry: no second code_keys lookup). */
export async function nodesOf(view: StateView, keys: Row[], columns = NODE_HIT_COLUMNS): Promise<Row[]> {
  if (keys.length === 0) return [];
  const ids = [...new Set(keys.map((k) => k.id as string))];
  const byId = await view.nodesOfKeys(keys, columns);
  return ids.map((id) => byId.get(id)).filter((r): r is Row => r !== undefined);
}

/** Above this many matches the second pass scans the scope again instead of looking them up by an IN list. */
const MAX_IN_LIST = 2000;

/**
 * Live nodes whose `col` (name or qpath) passes `test`, with `filter` (a
 * pushed-down form of the test, if any) and `scope` (kind, repo, krate).
 * A name lookup reads code_nodes; a qpath lookup reads code_keys (its qpath
 * keys), then the nodes. With no filter, only the looked-up column and the ids
 * are read in a first pass.
 */
export async function nodesMatching(
  view: StateView,
  col: 'name' | 'qpath',
  filter: Expr | undefined,
  test: (v: string | null) => boolean,
  scope: Expr[],
): Promise<Row[]> {
  if (col === 'name') {
    if (filter) {
      const parts = [filter, ...scope];
      return filterPreempting(await view.nodes(parts.length === 1 ? parts[0] : and(...parts), NODE_HIT_COLUMNS), (r) => test(str(r.name)));
    }
    // no filter: a scan of names (and ids) only, then the matches' rows
    const where = scope.length === 0 ? undefined : and(...scope);
    const hits = await filterPreempting(await view.rows('code_nodes', where, ['name', 'id']), (r) => test(str(r.name)));
    if (hits.length === 0) return [];
    // many matches (`*`, `*_new`): one more scan of the scope, not an IN list of them all (a row tests an IN list value by value)
    if (hits.length > MAX_IN_LIST) return filterPreempting(await view.nodes(where, NODE_HIT_COLUMNS), (r) => test(str(r.name)));
    const names = [...new Set(hits.map((r) => r.name as string))];
    const ids = hits.map((r) => r.id as string);
    return view.nodes(and(inList('name', names), inList('id', ids)), NODE_HIT_COLUMNS);
  }
  const keyFilter = (f: Expr | undefined): Expr => {
    const parts: Expr[] = [eq('via', 'qpath')];
    if (f) parts.push(renameCol(f, 'qpath', 'key'));
    return parts.length === 1 ? parts[0]! : and(...parts);
  };
  const keys = await filterPreempting(await view.rows('code_keys', keyFilter(filter), ['key', 'id', 'name']), (k) => test(str(k.key)));
  const nodes = await nodesOf(view, keys);
  return scope.length === 0 ? nodes : nodes.filter((r) => scope.every((e) => holds(e, r)));
}

/** An expression with column `from` renamed `to` (a qpath filter applied to code_keys.key). */
function renameCol(e: Expr, from: string, to: string): Expr {
  switch (e.op) {
    case 'and':
    case 'or':
      return { ...e, args: e.args.map((a) => renameCol(a, from, to)) };
    case 'not':
      return { ...e, arg: renameCol(e.arg, from, to) };
    case 'true':
    case 'false':
      return e;
    default:
      return 'col' in e && e.col === from ? { ...e, col: to } : e;
  }
}

/** Does a row satisfy a scope expression (eq on a column)? */
function holds(e: Expr, r: Row): boolean {
  if (e.op === 'eq') return r[String(e.col)] === e.value;
  if (e.op === 'and') return e.args.every((a) => holds(a, r));
  return true;
}

/** Live edges whose target is looked up by one of `paths` (by the name of the target), of `edgeKind` if given, within `scope` (filters on the edge's repo/krate). */
export async function edgesInto(view: StateView, paths: Iterable<string>, edgeKind: string | undefined, scope: Expr[] = []): Promise<Row[]> {
  const names = [...new Set([...paths].map((p) => dstName(p)).filter((n): n is string => n !== null))];
  if (names.length === 0) return [];
  const parts: Expr[] = [inList('dst_name', names)];
  if (edgeKind !== undefined) parts.push(eq('edge_kind', edgeKind));
  parts.push(...scope);
  return view.edgesIn(parts.length === 1 ? parts[0] : and(...parts), EDGE_HIT_COLUMNS);
}

/** Live `calls` edges out of the given nodes. */
export async function callsFrom(view: StateView, ids: string[]): Promise<Row[]> {
  if (ids.length === 0) return [];
  return view.edgesOut(and(inList('src', ids), eq('edge_kind', 'calls')), EDGE_HIT_COLUMNS);
}
