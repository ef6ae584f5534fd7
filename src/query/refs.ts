// `refs`, `callers`, `callees`: live edges into or out of the item(s) a path
// names, across every repo and the universe. An edge points at an item when
// its `dst` is one of the item's node ids, or — for edges whose target was not
// resolved to an id (or was resolved by path into a dependency) — when its
// `dst_path` is the path asked or the item's qpath. Each hit carries the
// edge's own file and line (the use or call site) and the node at its other
// end. An edge resolved into the item's crate by a re-export path
// (`regex::Regex::new` for `regex::regex::string::Regex::new`, dst_krate set)
// points at it too — never one resolved to another node of its own crate,
// nor a module-level path for a method (edgeNamesByPath). dst / dst_path / dst_krate / src and the edge kind are
// pushed into the scan (an OR of IN lists); the
// fold reads every event of the candidate edges (read.ts). From the state
// tables when the lake has them (query/state.ts): edges into the item by its
// name on code_edges_in, out of it by source on code_edges_out. Read-only.
import { eq, inList, or, type Expr } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';
import type { NodeRef } from '../log/state/view.ts';
import { dstName } from '../log/state/schema.ts';
import { COL_REPO } from '../log/schema.ts';
import { inScope, krateWhere, type CrateScope } from './scope.ts';
import { resolvePath, checkPath } from './def.ts';
import { callsFrom, edgesInto, NODE_HIT_COLUMNS, stateNodeHit } from './state.ts';
import { allOf, byPlace, candidateIds, edgeHit, foldIds, nodeHit, readAt, type EdgeHit, type NodeHit, type QueryOptions, type ReadAt, type Row } from './read.ts';

import type { EdgeKind } from '../extract/types.ts';

export type { EdgeKind };
export const EDGE_KINDS: readonly EdgeKind[] = ['contains', 'impl_of_trait', 'impl_for_type', 'uses', 'calls', 'type_ref', 'value_ref'];

export interface RefsOptions extends QueryOptions {
  /** Only edges of this kind (callers = `calls`). */
  edgeKind?: EdgeKind;
}

/** An edge into the item, with the node it comes from (null when that node is not live). */
export interface RefHit extends EdgeHit {
  from: NodeHit | null;
}

/** An edge out of the item, with the node it goes to (null when unresolved or not live). */
export interface CalleeHit extends EdgeHit {
  to: NodeHit | null;
}

export interface RefsResult {
  generation: bigint;
  /** The live nodes the path named, and how (def's rules). */
  match: 'exact' | 'suffix' | 'none';
  targets: NodeHit[];
  refs: RefHit[];
}

export interface CalleesResult {
  generation: bigint;
  match: 'exact' | 'suffix' | 'none';
  targets: NodeHit[];
  callees: CalleeHit[];
}

export async function refs(log: EventLog, path: string, opts: RefsOptions & CrateScope = {}): Promise<RefsResult> {
  checkPath(path, 'refs');
  return readAt(log, opts.asOf, async (r) => {
    const target = await resolvePath(r, path);
    const ids = new Set(target.hits.map((h) => h.id));
    const paths = new Set([path, ...target.hits.map((h) => h.qpath ?? path)]);
    const krates = new Set(target.hits.map((h) => h.krate));
    const qpaths = target.hits.map((h) => ({ krate: h.krate, qpath: h.qpath ?? '', kind: h.kind }));
    const arms: Expr[] = [inList('dst_path', [...paths])];
    if (ids.size > 0) arms.push(inList('dst', [...ids]), inList('dst_krate', [...krates]));
    const into = arms.length === 1 ? arms[0]! : or(...arms);
    const scope = target.hits.length > 0 ? edgeScope(opts) : { where: [], test: () => true };
    const test = (row: Row): boolean => {
      if (opts.edgeKind !== undefined && row.edge_kind !== opts.edgeKind) return false;
      if (!scope.test(row)) return false;
      if (typeof row.dst === 'string' && ids.has(row.dst)) return true;
      if (typeof row.dst_path !== 'string') return false;
      if (paths.has(row.dst_path)) return true;
      const edge = { krate: row.krate, dst: row.dst ?? null, dstPath: row.dst_path, dstKrate: row.dst_krate ?? null };
      return qpaths.some((q) => edgeNamesByPath(edge, q));
    };
    const edges = r.view
      ? (await edgesInto(r.view, paths, opts.edgeKind, scope.where)).filter(test).map(edgeHit)
      : await liveEdges(r, allOf([into, ...(opts.edgeKind ? [eq('edge_kind', opts.edgeKind)] : []), ...scope.where]), test);
    const from = await nodesById(r, edges.map((e) => (e.src === null ? null : { id: e.src, krate: e.krate })));
    const hits = edges.map((e): RefHit => ({ ...e, from: e.src ? (from.get(e.src) ?? null) : null }));
    hits.sort(byPlace((h) => h.file ?? ''));
    return { generation: r.generation, match: target.match, targets: target.hits, refs: hits };
  }, opts.from);
}

/** Call sites of the item: refs of kind `calls`, each with the calling node. */
export function callers(log: EventLog, path: string, opts: QueryOptions & CrateScope = {}): Promise<RefsResult> {
  return refs(log, path, { ...opts, edgeKind: 'calls' });
}

/** Calls made by the item: edges of kind `calls` from its node(s), each with the called node when resolved. */
export async function callees(log: EventLog, path: string, opts: QueryOptions & CrateScope = {}): Promise<CalleesResult> {
  checkPath(path, 'callees');
  return readAt(log, opts.asOf, async (r) => {
    const target = await resolvePath(r, path);
    if (target.hits.length === 0) return { generation: r.generation, match: target.match, targets: [], callees: [] };
    const scope = edgeScope(opts);
    // the calls of the targets in scope only (their edges are in their crates)
    const ids = new Set(target.hits.filter((h) => scope.test(h)).map((h) => h.id));
    if (ids.size === 0) return { generation: r.generation, match: target.match, targets: target.hits, callees: [] };
    const test = (row: Row): boolean => row.edge_kind === 'calls' && typeof row.src === 'string' && ids.has(row.src) && scope.test(row);
    const edges = r.view
      ? (await callsFrom(r.view, [...ids])).filter(test).map(edgeHit)
      : await liveEdges(r, allOf([inList('src', [...ids]), eq('edge_kind', 'calls'), ...scope.where]), test);
    const to = await calledNodes(r, edges);
    const hits = edges.map((e): CalleeHit => ({ ...e, to: e.dst ? (to.get(e.dst) ?? null) : null }));
    hits.sort(byPlace((h) => h.file ?? ''));
    return { generation: r.generation, match: target.match, targets: target.hits, callees: hits };
  }, opts.from);
}

/**
 * The question's `--repo` / `--krate` as filters pushed into the edge lookups
 * (`repo =`, the krate's spellings as ranges: krateWhere; every edge row has
 * both, a remove too) and the exact test (inScope) on a row or hit with
 * `repo` and `krate`. refs/callers keep the edges whose (repo, krate) — the
 * referencing site's — is in scope, callees the edges of the targets in
 * scope (an edge lives in its source's crate). The targets are resolved
 * whatever the scope (def's rules across every crate, as without it), and
 * refs/callers of a path with no live target are not narrowed (the caller
 * tells "no such item" from "none here" by the edges found).
 */
function edgeScope(opts: CrateScope): { where: Expr[]; test: (row: { repo?: unknown; krate?: unknown }) => boolean } {
  if (opts.repo === undefined && opts.krate === undefined) return { where: [], test: () => true };
  const where: Expr[] = [];
  if (opts.repo !== undefined) where.push(eq(COL_REPO, opts.repo));
  const k = opts.krate === undefined ? undefined : krateWhere(opts.krate);
  if (k !== undefined) where.push(k);
  return { where, test: (row) => typeof row.repo === 'string' && typeof row.krate === 'string' && inScope(opts, row.repo, row.krate) };
}

/**
 * Does `path` (an edge's target path, resolved into the crate of `qpath`)
 * name the item at `qpath`? Equal, or the crate segment and the rest as a
 * tail (`regex::Regex::new` names `regex::regex::string::Regex::new`): a
 * re-export seen from outside the crate.
 */
export function pathNames(path: string, qpath: string): boolean {
  if (path === qpath) return true;
  const segs = path.split('::');
  if (segs.length < 2) return false;
  return qpath.startsWith(`${segs[0]}::`) && qpath.endsWith(`::${segs.slice(1).join('::')}`);
}

/**
 * Does an edge name the item `target` by its path (pathNames), not by id? Only
 * an edge into the item's crate whose target is not a node of the edge's own
 * crate: an edge resolved inside its crate names its node by id, so it is
 * another item's (ripgrep's `search(&args)` is no call of the method
 * `SearchWorker::search`). And a member of an impl or trait (a method, an
 * associated item) is named with its owner: the path's last two segments
 * are the qpath's (`regex::Regex::new`), never a module-level `krate::name`.
 */
export function edgeNamesByPath(
  edge: { krate: unknown; dst: unknown; dstPath: string; dstKrate: unknown },
  target: { krate: string; qpath: string; kind: string | null },
): boolean {
  if (edge.dstKrate !== target.krate) return false;
  if (typeof edge.dst === 'string' && edge.dstKrate === edge.krate) return false;
  if (target.kind === 'method' || target.kind === 'trait_item') {
    const p = edge.dstPath.split('::');
    const q = target.qpath.split('::');
    if (p.length < 3 || p[p.length - 2] !== q[q.length - 2]) return false;
  }
  return pathNames(edge.dstPath, target.qpath);
}

async function liveEdges(r: ReadAt, filter: Expr | undefined, test: (row: Row) => boolean): Promise<EdgeHit[]> {
  const ids = await candidateIds(r, 'edge', filter, { columns: ['dst', 'dst_path', 'dst_krate', 'src', 'edge_kind'], fn: test });
  const state = await foldIds(r, 'edge', ids);
  return [...state.values()].filter(test).map(edgeHit);
}

/** An edge's target as a node to look up: the id in the edge's `dst_krate` (else its own crate). */
const targetOf = (e: EdgeHit): NodeRef | null => (e.dst === null ? null : { id: e.dst, krate: e.dstKrate ?? e.krate });

/**
 * The nodes edges call into. From crate-keyed code_keys: by (dst_krate, dst),
 * the id rows carrying what is shown. From older ones: by (name, id) on
 * code_nodes with the name the edge row itself gives (dstName of its
 * dst_path: every edge into an item carries the item's last segment), so the
 * ids need no code_keys lookup; an id not found so (a name spelled
 * otherwise) is looked up by id.
 */
async function calledNodes(r: ReadAt, edges: EdgeHit[]): Promise<Map<string, NodeHit>> {
  if (!r.view || (await r.view.keysLayout()) === 'krate') return nodesById(r, edges.map(targetOf));
  const dsts = edges.filter((e) => e.dst !== null);
  const keys = dsts.map((e) => ({ id: e.dst, name: dstName(e.dstPath) })).filter((k) => k.name !== null);
  const out = new Map([...(await r.view.nodesOfKeys(keys, NODE_HIT_COLUMNS))].map(([id, row]) => [id, stateNodeHit(row)]));
  const rest = dsts.filter((e) => !out.has(e.dst!)).map(targetOf);
  if (rest.length > 0) for (const [id, n] of await nodesById(r, rest)) out.set(id, n);
  return out;
}

/** Live nodes by id, each looked up in its crate (NodeRef). */
async function nodesById(r: ReadAt, refs: (NodeRef | null)[]): Promise<Map<string, NodeHit>> {
  const want = refs.filter((x): x is NodeRef => x !== null);
  if (r.view) return new Map([...(await r.view.nodesById(want, NODE_HIT_COLUMNS))].map(([id, row]) => [id, stateNodeHit(row)]));
  const state = await foldIds(r, 'node', new Set(want.map((x) => x.id)));
  return new Map([...state].map(([id, row]) => [id, nodeHit(row)]));
}
