// Pictures of calls: the callers of an item, their callers, … up to `depth`
// levels (or the callees, or every reference), as a graph of items — one node
// per item (its id; labelled by its qualified path), one edge per (from, to,
// kind), always pointing from the caller (referrer) to the callee (referee).
// Each level is the answer of `callers`/`callees`/`refs` for the items the
// level before found (answer.ts), read at one generation, so the picture is
// of one state of the lake. Bounded by `maxNodes` (the graph says it was cut).
// A callee that was not resolved is a leaf labelled by the path the code
// wrote. callGraphBoth puts an item's callers (levels -1, -2, …) and callees
// (1, 2, …) in one graph: `mimir graph` and its picture (graph-layout.ts).
// Read-only.
import type { EventLog } from '../log/event-log.ts';
import { answerCallees, answerRefs, type AnswerOptions, type PlacedNode } from './answer.ts';
import type { EdgeKind } from './refs.ts';
import { generationOf } from './as-of.ts';
import { UnknownNameError } from './scope.ts';

export type GraphDirection = 'callers' | 'callees' | 'refs';

export interface GraphNode {
  id: string;
  /** The qualified path (or, for an unresolved callee, the path as written). */
  label: string;
  repo: string | null;
  krate: string | null;
  /** Levels from the item asked about (0 = it). */
  level: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** `calls`, or a refs edge kind. */
  kind: string;
}

export interface CallGraph {
  question: 'graph';
  version: 1;
  /** `both`: callers (negative levels) and callees (positive) of one item, callGraphBoth. */
  direction: GraphDirection | 'both';
  generation: bigint;
  depth: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** True when `maxNodes` stopped the walk before `depth` levels. */
  truncated: boolean;
}

export interface GraphOptions extends AnswerOptions {
  direction: GraphDirection;
  /** Levels of callers (callees, refs) to follow; at least 1. */
  depth: number;
  /** At most this many nodes (default 500): a picture larger than that is not read. */
  maxNodes?: number;
  /** refs only: edges of this kind. */
  edgeKind?: EdgeKind;
}

/** The graph of `path`'s callers (callees, references) up to `opts.depth` levels, at `opts.asOf` (default now). */
export async function callGraph(log: EventLog, path: string, opts: GraphOptions): Promise<CallGraph> {
  const generation = opts.asOf === undefined ? log.readGeneration() : await generationOf(log, opts.asOf);
  const { direction: _direction, depth: _depth, maxNodes: _maxNodes, edgeKind, ...rest } = opts;
  const ask: AnswerOptions = { ...rest, asOf: { generation }, limit: undefined, context: undefined };
  const maxNodes = opts.maxNodes ?? 500;
  const nodes = new Map<string, GraphNode>();
  const edges = new Map<string, GraphEdge>();
  let truncated = false;
  const addNode = (n: { id: string; qpath: string | null; repo: string | null; krate: string | null }, level: number): boolean => {
    if (nodes.has(n.id)) return false;
    if (nodes.size >= maxNodes) {
      truncated = true;
      return false;
    }
    nodes.set(n.id, { id: n.id, label: n.qpath ?? n.id, repo: n.repo, krate: n.krate, level });
    return true;
  };
  const addEdge = (from: string, to: string, kind: string): void => {
    if (nodes.has(from) && nodes.has(to)) edges.set(`${from}\u0000${to}\u0000${kind}`, { from, to, kind });
  };

  // level 0: the items the path names; then each level's new items, by their qualified paths
  let frontier: { path: string; first: boolean }[] = [{ path, first: true }];
  for (let level = 1; level <= opts.depth && frontier.length > 0 && !truncated; level++) {
    const next: { path: string; first: boolean }[] = [];
    const asked = new Set<string>();
    for (const f of frontier) {
      if (asked.has(f.path)) continue;
      asked.add(f.path);
      try {
        if (opts.direction === 'callees') {
          const a = await answerCallees(log, f.path, ask);
          for (const t of a.targets) if (f.first) addNode(t, 0);
          for (const h of a.callees) {
            const to = h.to ?? { id: `unresolved:${h.dstPath ?? h.dst ?? h.id}`, qpath: h.dstPath ?? null, repo: null, krate: h.dstKrate };
            if (addNode(to, level) && h.to?.qpath) next.push({ path: h.to.qpath, first: false });
            addEdge(h.src ?? a.targets[0]?.id ?? '', to.id, h.edgeKind ?? 'calls');
          }
        } else {
          const a = await answerRefs(log, f.path, { ...ask, edgeKind: opts.direction === 'callers' ? 'calls' : edgeKind }, opts.direction === 'callers' ? 'callers' : 'refs');
          for (const t of a.targets) if (f.first) addNode(t, 0);
          for (const h of a.refs) {
            const from: PlacedNode | null = h.from;
            if (!from) continue;
            if (addNode(from, level) && from.qpath) next.push({ path: from.qpath, first: false });
            addEdge(from.id, h.dst ?? a.targets[0]?.id ?? '', h.edgeKind ?? 'refs');
          }
        }
      } catch (e) {
        // the item asked about must exist; one found on the way that has no path of its own ends there
        if (f.first || !(e instanceof UnknownNameError)) throw e;
      }
    }
    frontier = next;
  }
  return { question: 'graph', version: 1, direction: opts.direction, generation, depth: opts.depth, nodes: [...nodes.values()], edges: [...edges.values()], truncated };
}

/**
 * The callers of `path` up to `opts.depth` levels (levels -1…-depth) and its
 * callees (1…depth) as one graph, both read at one generation. An item that is
 * both keeps its caller level; edges still point from caller to callee.
 */
export async function callGraphBoth(log: EventLog, path: string, opts: Omit<GraphOptions, 'direction' | 'edgeKind'>): Promise<CallGraph> {
  const up = await callGraph(log, path, { ...opts, direction: 'callers' });
  const down = await callGraph(log, path, { ...opts, asOf: { generation: up.generation }, direction: 'callees' });
  const nodes = new Map<string, GraphNode>(up.nodes.map((n) => [n.id, { ...n, level: -n.level }]));
  for (const n of down.nodes) if (!nodes.has(n.id)) nodes.set(n.id, n);
  const edges = new Map<string, GraphEdge>();
  for (const e of [...up.edges, ...down.edges]) edges.set(`${e.from}\u0000${e.to}\u0000${e.kind}`, e);
  return { question: 'graph', version: 1, direction: 'both', generation: up.generation, depth: opts.depth, nodes: [...nodes.values()], edges: [...edges.values()], truncated: up.truncated || down.truncated };
}
