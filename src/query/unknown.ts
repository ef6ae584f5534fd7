// What a question says when its name matches nothing: the paths and names
// the lake has that are closest to it ("did you mean", edit distance over the
// lake's qualified paths under the same crate segment, or over crate names
// when the crate segment itself is unknown, or over item names for a one-
// segment path), and the unresolved edges that carry the name (call sites
// whose target the resolver could not find), which a zero answer counts and
// `--unresolved` lists. From the state tables; on a lake without them, from
// a fold of the node or edge events (slow, as every answer there). Read-only.
import { and, eq, inList, type Expr } from '../lake/expr/expr.ts';
import { dstName } from '../log/state/schema.ts';
import { candidateIds, edgeHit, foldIds, nodeHit, prefixRange, str, type EdgeHit, type NodeHit, type ReadAt, type Row } from './read.ts';
import { EDGE_HIT_COLUMNS, NODE_HIT_COLUMNS, stateNodeHit } from './state.ts';
import { allCrates } from './scope.ts';
import { didYouMean } from './suggest.ts';

/**
 * The lake's qualified paths (and public paths) closest to `path`, best
 * first; `ever`: paths removed since count too (for `history`).
 */
export async function suggestPaths(r: ReadAt, path: string, ever = false): Promise<string[]> {
  const segs = path.split('::').filter((s) => s !== '');
  if (segs.length === 0) return [];
  if (segs.length === 1) return didYouMean(segs[0]!, await allNames(r));
  const under = async (head: string): Promise<string[]> => (ever ? [...(await pathsUnder(r, head)), ...(await pathsEverUnder(r, head))] : pathsUnder(r, head));
  const keys = await under(segs[0]!);
  if (keys.length > 0) return didYouMean(path, keys);
  // the crate segment is unknown: the closest crate names, each with the rest of the path
  const crates = new Set((await allCrates(r.log, r.generation)).map((c) => c.krate.slice(0, c.krate.lastIndexOf('@')).replace(/-/g, '_')));
  const out: string[] = [];
  for (const head of didYouMean(segs[0]!, crates)) {
    const rest = [head, ...segs.slice(1)].join('::');
    const close = didYouMean(rest, await under(head), 1);
    out.push(close[0] ?? head);
  }
  return out;
}

/** Live qualified and public paths starting `head::`. */
async function pathsUnder(r: ReadAt, head: string): Promise<string[]> {
  const prefix = `${head}::`;
  if (r.view) {
    const range = prefixRange('key', `${prefix}*`);
    const filter: Expr = range ? and(range, inList('via', ['qpath', 'public'])) : inList('via', ['qpath', 'public']);
    return (await r.view.rows('code_keys', filter, ['key'])).map((k) => k.key as string).filter((k) => k.startsWith(prefix));
  }
  const test = (row: Row): boolean => typeof row.qpath === 'string' && row.qpath.startsWith(prefix);
  const ids = await candidateIds(r, 'node', prefixRange('qpath', `${prefix}*`), { columns: ['qpath'], fn: test });
  return [...(await foldIds(r, 'node', ids)).values()].filter(test).map((row) => row.qpath as string);
}

/** Qualified paths starting `head::` that any node event ever had (removed items too). */
async function pathsEverUnder(r: ReadAt, head: string): Promise<string[]> {
  const prefix = `${head}::`;
  const out = new Set<string>();
  await candidateIds(r, 'node', prefixRange('qpath', `${prefix}*`), {
    columns: ['qpath'],
    fn: (row) => {
      if (typeof row.qpath === 'string' && row.qpath.startsWith(prefix)) out.add(row.qpath);
      return false;
    },
  });
  return [...out];
}

/** Did any item ever have `path` as its qualified path (removed ones too), up to the read generation? */
export async function everHad(r: ReadAt, path: string): Promise<boolean> {
  const ids = await candidateIds(r, 'node', eq('qpath', path), { columns: ['qpath'], fn: (row) => row.qpath === path });
  return ids.size > 0;
}

/** Every live item name (for a one-segment path or a find that matched nothing). */
export async function allNames(r: ReadAt): Promise<Set<string>> {
  const names = new Set<string>();
  if (r.view) {
    for (const row of await r.view.rows('code_nodes', undefined, ['name'])) if (typeof row.name === 'string') names.add(row.name);
    return names;
  }
  for (const row of (await r.log.state('node', undefined, { generation: r.generation })).values()) if (typeof row.name === 'string') names.add(row.name);
  return names;
}

/** A live edge whose target was not found, with the node it comes from. */
export interface UnresolvedHit {
  edge: EdgeHit;
  from: NodeHit | null;
}

/**
 * Live edges (of `edgeKind` if given) whose target is named like the last
 * segment of `path` and was not resolved to an item (`dst` null; calls into
 * the standard library, named but outside the lake, are not counted).
 */
export async function unresolvedNamed(r: ReadAt, path: string, edgeKind: string | undefined): Promise<UnresolvedHit[]> {
  const name = dstName(path);
  if (name === null || name === '') return [];
  const named = (row: Row): boolean => row.dst === null && (edgeKind === undefined || row.edge_kind === edgeKind) && dstName(str(row.dst_path)) === name;
  const test = (row: Row): boolean => named(row) && row.unresolved_reason !== 'in the standard library';
  let edges: EdgeHit[];
  if (r.view) {
    const f: Expr = inList('dst_name', [name]);
    edges = (await r.view.edgesIn(f, EDGE_HIT_COLUMNS)).filter(test).map(edgeHit);
  } else {
    const ids = await candidateIds(r, 'edge', undefined, { columns: ['dst', 'dst_path', 'edge_kind'], fn: named });
    edges = [...(await foldIds(r, 'edge', ids)).values()].filter(test).map(edgeHit);
  }
  // an edge's source is in the edge's crate
  const srcs = new Set(edges.map((e) => e.src).filter((s): s is string => s !== null));
  const from = new Map<string, NodeHit>();
  if (srcs.size > 0) {
    const refs = edges.flatMap((e) => (e.src === null ? [] : [{ id: e.src, krate: e.krate }]));
    if (r.view) for (const [id, row] of await r.view.nodesById(refs, NODE_HIT_COLUMNS)) from.set(id, stateNodeHit(row));
    else for (const [id, row] of await foldIds(r, 'node', srcs)) if (row.op !== 'remove') from.set(id, nodeHit(row));
  }
  return edges.map((edge) => ({ edge, from: edge.src ? (from.get(edge.src) ?? null) : null }));
}
