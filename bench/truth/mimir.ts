// Mimir's side of the comparison: the measured crates ingested the way a user
// does it (`universeAdd` into a scratch lake: the same crate reading, the same
// dependency resolution, the same extraction in worker threads), then the
// lake's live nodes and call edges read once; `def` and `callers` answered in
// memory by the rules of src/query/def.ts and src/query/refs.ts (a real `def`
// or `callers` costs a lake scan, ~200 ms, too slow for every public path of
// 57 crates). `checkQueries` asks the real queries on a sample and reports any
// disagreement, so the emulation cannot drift silently from the queries;
// `realAnswers` asks them all (bench --real-queries), for when they change.
import { callers as realCallers, edgeNamesByPath, type RefHit } from '../../src/query/refs.ts';
import { def as realDef } from '../../src/query/def.ts';
import type { NodeHit } from '../../src/query/read.ts';
import { universeAdd, type IngestReport } from '../../src/ingest/index.ts';
import { EventLog } from '../../src/log/event-log.ts';
import type { Value } from '../../src/lake/spec/types.ts';

export interface MNode {
  id: string;
  repo: string;
  krate: string;
  kind: string;
  name: string;
  qpath: string;
  file: string;
  line: number;
  endLine: number;
  parent: string | null;
  /** Node column `public_paths`, split. */
  publicPaths: string[];
  /** The `origin` column: null = written in the source, `macro:<name>` = generated (absent in older lakes: null). */
  origin: string | null;
}

export interface MEdge {
  id: string;
  krate: string;
  src: string;
  dst: string | null;
  dstPath: string;
  dstKrate: string | null;
  file: string;
  line: number;
  /** Why the graph left it without a target (`unresolved_reason`), null when resolved. */
  reason?: string | null;
}

export interface MimirGraph {
  nodes: Map<string, MNode>;
  /** Live `calls` edges (macro invocations included; callers filter them). */
  calls: MEdge[];
  report: IngestReport;
  ingestSeconds: number;
}

const s = (v: Value | undefined): string => (typeof v === 'string' ? v : '');
const n = (v: Value | undefined): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0);

/** Ingest `dirs` into the (empty) lake at `lakeDir` and read its graph. The log stays open for checkQueries. */
export async function ingestGraph(lakeDir: string, dirs: string[], opts: { workers?: number; timeoutMs?: number } = {}): Promise<{ graph: MimirGraph; log: EventLog }> {
  const log = await EventLog.open(lakeDir);
  const t0 = performance.now();
  const report = await universeAdd(log, dirs, { workers: opts.workers ?? 2, extractTimeoutMs: opts.timeoutMs ?? 120_000 });
  const ingestSeconds = (performance.now() - t0) / 1000;
  const nodes = new Map<string, MNode>();
  for (const [id, r] of await log.state('node')) {
    if (r['op'] === 'remove') continue;
    nodes.set(id, {
      id, repo: s(r['repo']), krate: s(r['krate']), kind: s(r['kind']), name: s(r['name']), qpath: s(r['qpath']),
      file: s(r['file']), line: n(r['line_start']), endLine: n(r['line_end']), parent: typeof r['parent'] === 'string' ? r['parent'] : null,
      publicPaths: s(r['public_paths']) === '' ? [] : s(r['public_paths']).split('\n'),
      origin: typeof r['origin'] === 'string' ? r['origin'] : null,
    });
  }
  const calls: MEdge[] = [];
  for (const [id, r] of await log.state('edge')) {
    if (r['op'] === 'remove' || r['edge_kind'] !== 'calls') continue;
    calls.push({
      id, krate: s(r['krate']), src: s(r['src']), dst: typeof r['dst'] === 'string' ? r['dst'] : null,
      dstPath: s(r['dst_path']), dstKrate: typeof r['dst_krate'] === 'string' ? r['dst_krate'] : null,
      file: s(r['file']), line: n(r['line']), reason: typeof r['unresolved_reason'] === 'string' ? r['unresolved_reason'] : null,
    });
  }
  return { graph: { nodes, calls, report, ingestSeconds }, log };
}

// ---- def, as src/query/def.ts answers it -------------------------------------------

export interface DefAnswer {
  match: 'exact' | 'suffix' | 'none';
  hits: MNode[];
}

export class DefIndex {
  private readonly byQpath = new Map<string, MNode[]>();
  private readonly byName = new Map<string, MNode[]>();
  private readonly byPublic = new Map<string, MNode[]>();

  constructor(nodes: Iterable<MNode>) {
    for (const node of nodes) {
      push(this.byQpath, node.qpath, node);
      push(this.byName, node.name, node);
      // every public path, renamed re-exports too (`pub use x::A as B`): the state tables' code_keys hold them all
      for (const p of node.publicPaths) push(this.byPublic, p, node);
    }
  }

  /** resolvePath of src/query/def.ts (from the state tables): a public path, the exact qpath, else the crate segment plus the longest matching tail, else a suffix. */
  def(path: string): DefAnswer {
    const published = this.byPublic.get(path);
    if (published && published.length > 0) return { match: 'exact', hits: published };
    const exact = this.byQpath.get(path);
    if (exact && exact.length > 0) return { match: 'exact', hits: exact };
    const segs = path.split('::').filter((x) => x !== '');
    const last = segs[segs.length - 1];
    if (last === undefined) return { match: 'none', hits: [] };
    const pool = (this.byName.get(last) ?? []).filter((r) => r.qpath === last || r.qpath.endsWith(`::${last}`));
    if (segs.length >= 2) {
      const head = `${segs[0]}::`;
      for (let k = segs.length - 1; k >= 1; k--) {
        if (k === 1 && segs.length > 2) break;
        const tail = `::${segs.slice(segs.length - k).join('::')}`;
        const hits = pool.filter((r) => r.qpath.startsWith(head) && r.qpath.endsWith(tail));
        if (hits.length > 0) return { match: 'suffix', hits };
      }
    }
    const suffix = pool.filter((r) => r.qpath.endsWith(`::${path}`) || r.qpath === path);
    return { match: suffix.length > 0 ? 'suffix' : 'none', hits: suffix };
  }
}

// ---- callers, as src/query/refs.ts answers it -------------------------------------------

export class CallersIndex {
  private readonly byDst = new Map<string, MEdge[]>();
  private readonly byDstPath = new Map<string, MEdge[]>();
  /** By dst_krate and the last segment of dst_path: the candidates of pathNames. */
  private readonly byKrateLast = new Map<string, MEdge[]>();

  constructor(edges: Iterable<MEdge>, private readonly defs: DefIndex) {
    for (const e of edges) {
      if (e.dst) push(this.byDst, e.dst, e);
      push(this.byDstPath, e.dstPath, e);
      if (e.dstKrate) push(this.byKrateLast, `${e.dstKrate}\u0000${lastSeg(e.dstPath)}`, e);
    }
  }

  /** The call edges `mimir callers PATH` lists. */
  callers(path: string): MEdge[] {
    const target = this.defs.def(path);
    const ids = new Set(target.hits.map((h) => h.id));
    const paths = new Set([path, ...target.hits.map((h) => h.qpath)]);
    const out = new Set<MEdge>();
    for (const id of ids) for (const e of this.byDst.get(id) ?? []) out.add(e);
    for (const p of paths) for (const e of this.byDstPath.get(p) ?? []) out.add(e);
    for (const h of target.hits) {
      for (const e of this.byKrateLast.get(`${h.krate}\u0000${lastSeg(h.qpath)}`) ?? []) {
        if (edgeNamesByPath(e, h)) out.add(e);
      }
    }
    return [...out];
  }
}

function lastSeg(p: string): string {
  const i = p.lastIndexOf('::');
  return i >= 0 ? p.slice(i + 2) : p;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** What the comparison asks Mimir: `def PATH` and `callers PATH`. */
export interface Answers {
  def(path: string): DefAnswer;
  callers(path: string): MEdge[];
}

/** The in-memory answers (DefIndex, CallersIndex). */
export function emulated(defs: DefIndex, callersIdx: CallersIndex): Answers {
  return { def: (p) => defs.def(p), callers: (p) => callersIdx.callers(p) };
}

/** Answers `inner` gives, noting every path asked (for a second pass with the real queries). */
export function recording(inner: Answers): Answers & { defPaths: Set<string>; callerPaths: Set<string> } {
  const defPaths = new Set<string>();
  const callerPaths = new Set<string>();
  return {
    defPaths, callerPaths,
    def: (p) => { defPaths.add(p); return inner.def(p); },
    callers: (p) => { callerPaths.add(p); return inner.callers(p); },
  };
}

const fromHit = (h: NodeHit): MNode => ({
  id: h.id, repo: h.repo, krate: h.krate, kind: h.kind ?? '', name: h.name ?? '', qpath: h.qpath ?? '',
  file: h.file ?? '', line: h.line ?? 0, endLine: h.lineEnd ?? 0, parent: h.parent, origin: null, publicPaths: [],
});

const fromRef = (r: RefHit): MEdge => ({
  id: r.id, krate: r.krate, src: r.src ?? '', dst: r.dst, dstPath: r.dstPath ?? '', dstKrate: r.dstKrate, file: r.file ?? '', line: r.line ?? 0,
});

/**
 * The real `def` and `callers` on every path given (about 0.2 s each on a
 * lake read through the event tables), as Answers; `onProgress` after each.
 */
export async function realAnswers(log: EventLog, defPaths: Iterable<string>, callerPaths: Iterable<string>, onProgress?: (done: number, total: number) => void): Promise<Answers> {
  const defs = new Map<string, DefAnswer>();
  const calls = new Map<string, MEdge[]>();
  const dp = [...defPaths];
  const cp = [...callerPaths];
  let done = 0;
  for (const p of dp) {
    const r = await realDef(log, p);
    defs.set(p, { match: r.match, hits: r.hits.map(fromHit) });
    onProgress?.(++done, dp.length + cp.length);
  }
  for (const p of cp) {
    calls.set(p, (await realCallers(log, p)).refs.map(fromRef));
    onProgress?.(++done, dp.length + cp.length);
  }
  return {
    def: (p) => defs.get(p) ?? { match: 'none', hits: [] },
    callers: (p) => calls.get(p) ?? [],
  };
}

/**
 * Ask the real `def` and `callers` on `paths` and compare with the emulation:
 * the paths whose answers differ (as sets of node ids / edge ids).
 */
export async function checkQueries(log: EventLog, mine: Answers, paths: string[]): Promise<{ checked: number; differ: string[] }> {
  const differ: string[] = [];
  for (const p of paths) {
    const real = await realDef(log, p);
    const d = mine.def(p);
    const a = real.hits.map((h) => h.id).sort().join(',');
    const b = d.hits.map((h) => h.id).sort().join(',');
    if (a !== b || real.match !== d.match) { differ.push(`def ${p}: query ${real.match} [${a}], bench ${d.match} [${b}]`); continue; }
    const rc = await realCallers(log, p);
    const x = rc.refs.map((r) => r.id).sort().join(',');
    const mc = mine.callers(p);
    const y = mc.map((e) => e.id).sort().join(',');
    if (x !== y) differ.push(`callers ${p}: query ${rc.refs.length} edges, bench ${mc.length}`);
  }
  return { checked: paths.length, differ };
}
