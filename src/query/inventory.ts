// What the lake holds, as of one generation: its repos (crates, live items,
// the last run: id, what it was, status, rev, the generation it landed in and
// that generation's time) and its universe crates (live items, and which
// repos' live edges point into each). `mimir repo list`, `mimir universe
// list`. Read from the serving state tables (two columns of code_nodes, two of
// code_edges_in, streamed: memory grows with the number of repos and crates,
// never with the items) and ingest_runs; a lake without state tables, or a
// generation whose snapshots gc expired, folds the log instead (slow, as for
// every question). Read-only.
import type { EventLog } from '../log/event-log.ts';
import type { Batch } from '../lake/spec/types.ts';
import { CODE_EDGES_IN, CODE_NODES } from '../log/state/schema.ts';
import { UNIVERSE_REPO, parseRunNote } from '../log/schema.ts';
import { readAt, type AsOf, type ReadAt } from './read.ts';

export interface LastRun {
  run: string;
  /** `ingest`, `universe` (a universe add), `remove` (repo remove), or null when the run's generation note is gone. */
  what: string | null;
  status: string | null;
  rev: string | null;
  /** The lake generation the run landed in, and that generation's time (ISO 8601 UTC); null when unknown. */
  generation: bigint | null;
  time: string | null;
}

export interface RepoEntry {
  repo: string;
  /** Crates with live items. */
  crates: number;
  /** Live items (nodes). */
  items: number;
  lastRun: LastRun | null;
}

export interface ReposAnswer {
  question: 'repos';
  version: 1;
  generation: bigint;
  repos: RepoEntry[];
}

export interface UniverseCrateEntry {
  /** `name@version`. */
  krate: string;
  items: number;
  /** Live edges of each repo (not `@universe`) pointing into the crate. */
  pointedFrom: Record<string, number>;
}

export interface UniverseAnswer {
  question: 'universe';
  version: 1;
  generation: bigint;
  crates: UniverseCrateEntry[];
}

/** (repo, krate) -> live node count at the read. */
async function itemsPerCrate(r: ReadAt): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  const add = (repo: string, krate: string): void => {
    let m = out.get(repo);
    if (!m) out.set(repo, (m = new Map()));
    m.set(krate, (m.get(krate) ?? 0) + 1);
  };
  if (r.view) {
    for await (const b of (await r.view.table(CODE_NODES)).scan({ columns: ['repo', 'krate'] }).batches()) {
      const [repo, krate] = [column(b, 'repo'), column(b, 'krate')];
      for (let i = 0; i < b.numRows; i++) add(repo[i] as string, krate[i] as string);
    }
  } else {
    for (const row of (await r.log.state('node', undefined, { generation: r.generation })).values()) add(row.repo as string, row.krate as string);
  }
  return out;
}

function column(b: Batch, name: string): unknown[] {
  const i = b.fields.findIndex((f) => f.name === name);
  if (i < 0) throw new Error(`expected a column ${name} in the scan, found ${b.fields.map((f) => f.name).join(', ')}`);
  return b.columns[i] as unknown[];
}

/** The latest run of each repo (by start time) at the read, with its generation and time from the generation log. */
async function lastRuns(r: ReadAt): Promise<Map<string, LastRun>> {
  const latest = new Map<string, { run: string; status: string | null; rev: string | null; started: bigint }>();
  for await (const b of r.log.scanRuns({ generation: r.generation, columns: ['run', 'repo', 'rev', 'started', 'status'] })) {
    const [run, repo, rev, started, status] = ['run', 'repo', 'rev', 'started', 'status'].map((c) => column(b, c));
    for (let i = 0; i < b.numRows; i++) {
      const prev = latest.get(repo![i] as string);
      const s = started![i] as bigint;
      if (prev && prev.started >= s) continue;
      latest.set(repo![i] as string, { run: run![i] as string, status: (status![i] as string | null) ?? null, rev: (rev![i] as string | null) || null, started: s });
    }
  }
  const wanted = new Map([...latest.values()].map((x) => [x.run, x]));
  const found = new Map<string, { what: string; generation: bigint; time: string }>();
  // newest first; a run's generation is never after the read
  for (const g of r.log.lake.catalog.generations({ limit: Number.MAX_SAFE_INTEGER })) {
    if (found.size === wanted.size) break;
    if (g.generation > r.generation) continue;
    const note = parseRunNote(g.note);
    if (note && wanted.has(note.run) && !found.has(note.run)) found.set(note.run, { what: note.what, generation: g.generation, time: new Date(g.timeMs).toISOString() });
  }
  const out = new Map<string, LastRun>();
  for (const [repo, x] of latest) {
    const f = found.get(x.run);
    out.set(repo, { run: x.run, what: f?.what ?? null, status: x.status, rev: x.rev, generation: f?.generation ?? null, time: f?.time ?? null });
  }
  return out;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The repos of the lake at `asOf` (default now), by name: those with live
 * items, and those whose last run was not a `repo remove` (an ingested
 * workspace with no items yet). `@universe` is not a repo (universeList).
 */
export async function repoList(log: EventLog, opts: { asOf?: AsOf } = {}): Promise<ReposAnswer> {
  return readAt(log, opts.asOf, async (r) => {
    const [items, runs] = [await itemsPerCrate(r), await lastRuns(r)];
    const names = new Set([...items.keys(), ...[...runs].filter(([, x]) => x.what !== 'remove').map(([repo]) => repo)]);
    names.delete(UNIVERSE_REPO);
    const repos = [...names].sort(byName).map((repo): RepoEntry => {
      const crates = items.get(repo) ?? new Map<string, number>();
      return { repo, crates: crates.size, items: [...crates.values()].reduce((a, b) => a + b, 0), lastRun: runs.get(repo) ?? null };
    });
    return { question: 'repos', version: 1, generation: r.generation, repos };
  });
}

/** The universe crates at `asOf` (default now), by name@version, with the repos whose live edges point into each. */
export async function universeList(log: EventLog, opts: { asOf?: AsOf } = {}): Promise<UniverseAnswer> {
  return readAt(log, opts.asOf, async (r) => {
    const crates = (await itemsPerCrate(r)).get(UNIVERSE_REPO) ?? new Map<string, number>();
    const pointed = new Map<string, Record<string, number>>([...crates.keys()].map((k) => [k, {}]));
    const count = (repo: string, dst: unknown): void => {
      const into = typeof dst === 'string' ? pointed.get(dst) : undefined;
      if (into && repo !== UNIVERSE_REPO) into[repo] = (into[repo] ?? 0) + 1;
    };
    if (r.view) {
      for await (const b of (await r.view.table(CODE_EDGES_IN)).scan({ columns: ['repo', 'dst_krate'] }).batches()) {
        const [repo, dst] = [column(b, 'repo'), column(b, 'dst_krate')];
        for (let i = 0; i < b.numRows; i++) count(repo[i] as string, dst[i]);
      }
    } else {
      for (const row of (await r.log.state('edge', undefined, { generation: r.generation })).values()) count(row.repo as string, row.dst_krate);
    }
    const list = [...crates].sort(([a], [b]) => byName(a, b)).map(([krate, items]) => ({ krate, items, pointedFrom: pointed.get(krate)! }));
    return { question: 'universe', version: 1, generation: r.generation, crates: list };
  });
}
