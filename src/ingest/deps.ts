// What a crate's resolution needs of the crates it depends on — their nodes'
// ids, kinds, names, qpaths, parents, public paths and type_info
// (extract's DepCrate) — from the lake at the run's generation (a dependency
// extracted earlier in the same run is summarized by the worker that
// extracted it: summaryOf, and pool.ts). Never their sources: a repo resolves
// into universe crates without reparsing them.
//
// Invariants: memory is bounded by the dependencies of the jobs in flight —
// a summary is loaded when the first job that needs it starts and dropped
// when the last job that needs it (known up front) has started or gets it
// elsewhere (`pass`), not kept for the run. Read-only on the lake (one projected, krate-filtered scan per
// load). A dependency that is neither in the lake nor in this run is simply
// absent: resolution keeps text paths into it.
import { decodeTypeInfo, type CrateGraph, type DepCrate, type DepNode, type NodeKind } from '../extract/index.ts';
import { and, eq, inList } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';

/** Node columns a summary reads. */
const COLUMNS = ['id', 'op', 'krate', 'kind', 'name', 'qpath', 'parent', 'public_paths', 'type_info'];

/** A dependency: its `name@version` and the repo its ids live in. */
export interface DepRef {
  krate: string;
  repo: string;
}

/** A crate's summary (what dependants need) from its extracted graph. */
export function summaryOf(krate: string, repo: string, graph: Pick<CrateGraph, 'nodes'>): DepCrate {
  return {
    krate, repo,
    nodes: graph.nodes.map((n) => ({
      id: n.id, kind: n.kind, name: n.name, qpath: n.qpath, parent: n.parent, publicPaths: n.publicPaths, typeInfo: decodeTypeInfo(n.typeInfo),
    })),
  };
}

/** The summaries of dependency crates (`name@version` in `repo`) as the lake holds them at `log`'s generation. */
export async function loadDepCrates(log: EventLog, deps: readonly DepRef[]): Promise<DepCrate[]> {
  const byRepo = new Map<string, string[]>();
  for (const d of deps) byRepo.set(d.repo, [...(byRepo.get(d.repo) ?? []), d.krate]);
  const out: DepCrate[] = [];
  for (const [repo, krates] of byRepo) {
    // fold the events per id: the latest (by sequence number, then order) wins, a remove hides
    const latest = new Map<string, { seq: bigint; row: Record<string, unknown> }>();
    for await (const b of log.scan('node', { filter: and(eq('repo', repo), inList('krate', krates)), columns: COLUMNS })) {
      const seq = b.source?.sequenceNumber ?? 0n;
      const col = (name: string) => b.columns[b.fields.findIndex((f) => f.name === name)] ?? [];
      const cols = Object.fromEntries(COLUMNS.map((c) => [c, col(c)]));
      for (let i = 0; i < b.numRows; i++) {
        const id = cols['id']![i] as string;
        const prev = latest.get(id);
        if (prev && seq < prev.seq) continue;
        const row: Record<string, unknown> = {};
        for (const c of COLUMNS) row[c] = cols[c]![i];
        latest.set(id, { seq, row });
      }
    }
    const perKrate = new Map<string, DepNode[]>(krates.map((k) => [k, []]));
    for (const { row } of latest.values()) {
      if (row['op'] === 'remove') continue;
      perKrate.get(row['krate'] as string)?.push({
        id: row['id'] as string, kind: row['kind'] as NodeKind, name: (row['name'] as string | null) ?? '', qpath: (row['qpath'] as string | null) ?? '',
        parent: (row['parent'] as string | null) ?? null,
        publicPaths: typeof row['public_paths'] === 'string' && row['public_paths'] !== '' ? (row['public_paths'] as string).split('\n') : [],
        typeInfo: decodeTypeInfo((row['type_info'] as string | null) ?? null),
      });
    }
    for (const [krate, nodes] of perKrate) if (nodes.length > 0) out.push({ krate, repo, nodes });
  }
  return out;
}

/**
 * Summaries shared by the jobs of a run: each is loaded once and kept while
 * jobs that declared it are still to start. `expect` declares every job's
 * dependencies up front.
 */
export class DepSummaries {
  private readonly cache = new Map<string, DepCrate | null>();
  /** Jobs still to start that need a krate. */
  private readonly pending = new Map<string, number>();

  /** `onDrop`: a summary no job of the run will take again (the pool's workers may drop their copies). */
  constructor(private readonly log: EventLog, private readonly onDrop?: (crate: DepCrate) => void) {}

  /** A job that will need `deps` (called once per job, before any start). */
  expect(deps: readonly DepRef[]): void {
    for (const d of deps) this.pending.set(d.krate, (this.pending.get(d.krate) ?? 0) + 1);
  }

  /** The summaries for a job that starts now (loading the missing ones), after which the job no longer counts as pending. */
  async take(deps: readonly DepRef[]): Promise<DepCrate[]> {
    const missing = deps.filter((d) => !this.cache.has(d.krate));
    if (missing.length > 0) {
      const loaded = await loadDepCrates(this.log, missing);
      for (const d of missing) this.cache.set(d.krate, loaded.find((c) => c.krate === d.krate) ?? null);
    }
    const out: DepCrate[] = [];
    for (const d of deps) {
      const c = this.cache.get(d.krate);
      if (c) out.push(c);
      this.taken(d.krate, c);
    }
    return out;
  }

  /** A job that starts now gets `deps` elsewhere (from the run's own results): it no longer counts as pending for them. */
  pass(deps: readonly DepRef[]): void {
    for (const d of deps) this.taken(d.krate, this.cache.get(d.krate));
  }

  private taken(krate: string, c: DepCrate | null | undefined): void {
    const left = (this.pending.get(krate) ?? 1) - 1;
    if (left > 0) {
      this.pending.set(krate, left);
      return;
    }
    this.pending.delete(krate);
    this.cache.delete(krate);
    if (c) this.onDrop?.(c);
  }
}
