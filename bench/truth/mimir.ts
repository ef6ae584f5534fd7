// Mimir's side of the comparison: the measured crates ingested the way a user
// does it (`universeAdd` into a scratch lake: the same crate reading, the same
// dependency resolution, the same extraction in worker threads), then the
// lake's live nodes and call edges read once; `def` and `callers` answered in
// memory by the rules of src/query/def.ts and src/query/refs.ts (a real `def`
// or `callers` costs a lake scan, ~200 ms, too slow for every public path of
// 57 crates). `checkQueries` asks the real queries on a sample and reports any
// disagreement, so the emulation cannot drift silently from the queries.
import { pathNames } from '../../src/query/refs.ts';
import { callers as realCallers } from '../../src/query/refs.ts';
import { def as realDef } from '../../src/query/def.ts';
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
    });
  }
  const calls: MEdge[] = [];
  for (const [id, r] of await log.state('edge')) {
    if (r['op'] === 'remove' || r['edge_kind'] !== 'calls') continue;
    calls.push({
      id, krate: s(r['krate']), src: s(r['src']), dst: typeof r['dst'] === 'string' ? r['dst'] : null,
      dstPath: s(r['dst_path']), dstKrate: typeof r['dst_krate'] === 'string' ? r['dst_krate'] : null,
      file: s(r['file']), line: n(r['line']),
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

  constructor(nodes: Iterable<MNode>) {
    for (const node of nodes) {
      push(this.byQpath, node.qpath, node);
      push(this.byName, node.name, node);
    }
  }

  /** resolvePath of src/query/def.ts: the exact qpath, else the crate segment plus the longest matching tail, else a suffix. */
  def(path: string): DefAnswer {
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
        if (pathNames(e.dstPath, h.qpath)) out.add(e);
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

/**
 * Ask the real `def` and `callers` on `paths` and compare with the emulation:
 * the paths whose answers differ (as sets of node ids / edge ids).
 */
export async function checkQueries(log: EventLog, defs: DefIndex, callersIdx: CallersIndex, paths: string[]): Promise<{ checked: number; differ: string[] }> {
  const differ: string[] = [];
  for (const p of paths) {
    const real = await realDef(log, p);
    const mine = defs.def(p);
    const a = real.hits.map((h) => h.id).sort().join(',');
    const b = mine.hits.map((h) => h.id).sort().join(',');
    if (a !== b || real.match !== mine.match) { differ.push(`def ${p}: query ${real.match} [${a}], bench ${mine.match} [${b}]`); continue; }
    const rc = await realCallers(log, p);
    const x = rc.refs.map((r) => r.id).sort().join(',');
    const y = callersIdx.callers(p).map((e) => e.id).sort().join(',');
    if (x !== y) differ.push(`callers ${p}: query ${rc.refs.length} edges, bench ${callersIdx.callers(p).length}`);
  }
  return { checked: paths.length, differ };
}
