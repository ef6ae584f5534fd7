// `history`: every event of the item(s) a path names — every node id that
// ever had that qpath (removed ones too; def's last-segment rules when none
// did; found in the state table code_paths when the lake has it at the
// generation, else by a scan of every node event's qpath), their node events and the events of the edges going out of them — in
// commit order, oldest first.
//
// Order: within one table, by data sequence number, then scan order (rows of
// one id never straddle two files of one sequence number, see log/compact.ts).
// Across tables (node vs edge, ring vs source) sequence numbers are not
// comparable, so each event is labelled with the lake generation that
// committed it and sorted by that first. An event's run names it: the
// generation whose note is that run, and that generation's commit time, from
// the catalog alone — exact, and the same whether the snapshots are still
// there or expired (a generation read from the log by runs). Events of runs
// no note names (lakes made before runs were noted) fall back to their
// snapshot: the table's snapshots (in sequence order) matched greedily to
// the catalog's generations that touched it, by commit time (the snapshot's
// own time); null when the snapshot has expired. Events of one generation are
// ordered node before edge, then by id (one run's events are simultaneous),
// then commit order — never by where compaction or a ring move put them.
// After compaction, rewritten rows carry the sequence number of the snapshot
// compaction read (`seq` changes; the order stays right). Read-only.
import { and, eq, inList, type Expr } from '../lake/expr/expr.ts';
import { identToString, type GenerationEntry } from '../lake/catalog/catalog.ts';
import type { Table } from '../lake/table/table.ts';
import { batchRows } from '../log/event-log.ts';
import { COL_ID, COL_KRATE, COL_OP, COL_REPO, COL_RUN, COL_TS, parseRunNote, ringTableName, tableName, type Kind } from '../log/schema.ts';
import type { EventLog } from '../log/event-log.ts';
import { checkPath, resolvePath } from './def.ts';
import { inScope, type CrateScope } from './scope.ts';
import { candidateIds, edgeHit, nodeHit, readAt, type EdgeHit, type NodeHit, type QueryOptions, type ReadAt, type Row } from './read.ts';

export interface HistoryEvent {
  kind: 'node' | 'edge';
  op: string;
  id: string;
  repo: string;
  krate: string;
  /** Lake generation that committed the event (its run's; null for a run no generation notes whose snapshot has expired). */
  generation: bigint | null;
  /** Commit time of that generation, epoch ms (null when the generation is not known). */
  committedMs: number | null;
  /** The event's own `ts` column (epoch microseconds), as ingest wrote it. */
  ts: bigint | null;
  /** The run that wrote the event, and the commit that run indexed (null when it recorded none). */
  run: string | null;
  rev: string | null;
  /** The commit's subject line (git-native ingest), else null. */
  subject: string | null;
  /** Data sequence number of the file that holds the event (ordering within its table). */
  seq: bigint;
  /** The row as a node or an edge. */
  node?: NodeHit;
  edge?: EdgeHit;
}

export interface HistoryResult {
  generation: bigint;
  /** Node ids the path named (ever). */
  ids: string[];
  events: HistoryEvent[];
}

/**
 * With `--repo` / `--krate` (scope.ts CrateScope): `ids` stay every id the
 * path named; only the events of the ids whose (repo, krate) is in scope are
 * read — the events a scoped answer keeps (an id's events are in its crate,
 * and so are the edges going out of it).
 */
export async function history(log: EventLog, path: string, opts: QueryOptions & CrateScope = {}): Promise<HistoryResult> {
  checkPath(path, 'history');
  return readAt(log, opts.asOf, async (r) => {
    // the ids the path ever named, and the (repo, krate) each belongs to (an id lives in one)
    const homes = new Map<string, { repo: string; krate: string }>();
    const home = (row: Row): boolean => {
      if (row.qpath !== path) return false;
      homes.set(row[COL_ID] as string, { repo: row[COL_REPO] as string, krate: row[COL_KRATE] as string });
      return true;
    };
    // code_paths (every (qpath, id) pair of the log, sorted by qpath): a page of the path's rows; a
    // lake without it (made before it, or expired at the generation) scans the qpath column of every node event
    let ids: Set<string>;
    if (r.view && (await r.view.hasPaths())) {
      ids = new Set();
      for (const row of await r.view.paths(eq('qpath', path), ['qpath', COL_ID, COL_REPO, COL_KRATE])) if (home(row)) ids.add(row[COL_ID] as string);
    } else ids = await candidateIds(r, 'node', eq('qpath', path), { columns: ['qpath', COL_REPO, COL_KRATE], fn: home });
    if (ids.size === 0) {
      const hits = (await resolvePath(r, path)).hits;
      for (const h of hits) homes.set(h.id, { repo: h.repo, krate: h.krate });
      ids = new Set(hits.map((h) => h.id));
    }
    if (ids.size === 0) return { generation: r.generation, ids: [], events: [] };
    const all = [...ids].sort();
    if (opts.repo !== undefined || opts.krate !== undefined) {
      ids = new Set(all.filter((id) => {
        const h = homes.get(id);
        return h === undefined || inScope(opts, h.repo, h.krate);
      }));
      for (const id of homes.keys()) if (!ids.has(id)) homes.delete(id);
      if (ids.size === 0) return { generation: r.generation, ids: all, events: [] };
    }
    // every later scan is narrowed to those crates: their events and their edges (an edge lives in its
    // source's crate) are all there, and the other crates' files — most of the universe — are pruned
    const scope = homeScope(homes);
    const edgeIds = await candidateIds(r, 'edge', and(scope, inList('src', [...ids])));
    // the catalog's generation log, read once: it labels events by snapshot and by run
    const gens = r.log.lake.catalog.generations({ limit: Number.MAX_SAFE_INTEGER, before: r.generation + 1n });
    const labels = generationLabels(gens);
    const events = [...(await eventsOf(r, 'node', ids, labels, scope)), ...(edgeIds.size > 0 ? await eventsOf(r, 'edge', edgeIds, labels, scope) : [])];
    await labelRuns(r, events.map((x) => x.e), gens);
    events.sort(
      (a, b) =>
        cmpBig(a.e.generation ?? -1n, b.e.generation ?? -1n) ||
        (a.e.kind === b.e.kind ? 0 : a.e.kind === 'node' ? -1 : 1) ||
        // events of one run (one known generation) are simultaneous: by id, not by where compaction put them
        (a.e.generation !== null ? cmp(a.e.id, b.e.id) : 0) ||
        (a.table === b.table ? cmpBig(a.e.seq, b.e.seq) || a.pos - b.pos : 0) ||
        a.pos - b.pos,
    );
    return { generation: r.generation, ids: all, events: events.map((x) => x.e) };
  }, opts.from);
}

/**
 * Each event's run → the commit it indexed (ingest_runs) and, where the run's
 * generation note names it, the exact generation that landed it and that
 * generation's commit time (the time-matched label stays for runs of older
 * lakes).
 */
async function labelRuns(r: ReadAt, events: HistoryEvent[], generations: GenerationEntry[]): Promise<void> {
  const runs = new Set(events.map((e) => e.run).filter((x): x is string => x !== null));
  if (runs.size === 0) return;
  const gens = new Map<string, { generation: bigint; timeMs: number }>();
  for (const g of generations) {
    const n = parseRunNote(g.note);
    if (n && runs.has(n.run)) gens.set(n.run, { generation: g.generation, timeMs: g.timeMs });
  }
  const revs = new Map<string, { rev: string | null; subject: string | null }>();
  // every column: ingest_runs is small, and older lakes lack `subject`
  for await (const b of r.log.scanRuns({ filter: inList('run', [...runs]), generation: r.generation })) {
    for (const row of batchRows(b)) revs.set(row['run'] as string, { rev: (row['rev'] as string | null) ?? null, subject: (row['subject'] as string | null | undefined) ?? null });
  }
  for (const e of events) {
    if (e.run === null) continue;
    const g = gens.get(e.run);
    if (g !== undefined) {
      e.generation = g.generation;
      e.committedMs = g.timeMs;
    }
    const rv = revs.get(e.run);
    if (rv) {
      e.rev = rv.rev;
      e.subject = rv.subject;
    }
  }
}

/**
 * `repo IN (…) and krate IN (…)` over the homes: a superset of their (repo,
 * krate) pairs that every event row can be pruned by (cheaper per row than an
 * `or` of pairs, measured: a path in ten crate versions ran 1.3x slower so).
 */
function homeScope(homes: Map<string, { repo: string; krate: string }>): Expr {
  const repos = new Set<string>();
  const krates = new Set<string>();
  for (const h of homes.values()) {
    repos.add(h.repo);
    krates.add(h.krate);
  }
  return and(inList(COL_REPO, [...repos]), inList(COL_KRATE, [...krates]));
}

const cmpBig = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

type Labeller = (table: Table, seq: bigint) => { generation: bigint | null; committedMs: number | null };

/** Every event of `ids` of one kind, with its table, scan position and generation label. */
async function eventsOf(r: ReadAt, kind: Kind, ids: Set<string>, label: Labeller, scope: Expr): Promise<{ e: HistoryEvent; table: string; pos: number }[]> {
  // a generation read by runs (snapshots expired) has no snapshots to match: its events are labelled by run only
  const byRuns = (await r.log.runsReadOf(r.generation)) !== undefined;
  const tables = byRuns
    ? []
    : (await Promise.all([r.log.table(tableName(kind), r.generation), r.log.table(ringTableName(kind), r.generation)])).filter((t): t is Table => t !== undefined);
  const out: { e: HistoryEvent; table: string; pos: number }[] = [];
  let pos = 0;
  for await (const b of r.log.scan(kind, { filter: and(scope, inList(COL_ID, [...ids])), generation: r.generation })) {
    const seq = b.source?.sequenceNumber ?? 0n;
    const file = b.source?.file ?? '';
    const table = tables.find((t) => file.startsWith(`${t.metadata.location.replace(/\/+$/, '')}/`));
    const at = table ? label(table, seq) : { generation: null, committedMs: null };
    for (const row of batchRows(b)) {
      out.push({ e: event(kind, row, seq, at), table: table?.name ?? '', pos: pos++ });
    }
  }
  return out;
}

function event(kind: Kind, row: Row, seq: bigint, at: { generation: bigint | null; committedMs: number | null }): HistoryEvent {
  const ts = row[COL_TS];
  const e: HistoryEvent = {
    kind: kind === 'node' ? 'node' : 'edge',
    op: String(row[COL_OP]),
    id: row[COL_ID] as string,
    repo: row[COL_REPO] as string,
    krate: row[COL_KRATE] as string,
    generation: at.generation,
    committedMs: at.committedMs,
    ts: typeof ts === 'bigint' ? ts : null,
    run: typeof row[COL_RUN] === 'string' ? (row[COL_RUN] as string) : null,
    rev: null,
    subject: null,
    seq,
  };
  if (kind === 'node') e.node = nodeHit(row);
  else e.edge = edgeHit(row);
  return e;
}

/**
 * A labeller for (table, sequence number) → generation and commit time. The
 * catalog's generations (newest first, as read) are given; per table, snapshots in sequence
 * order are matched to that table's generations in order, each to the first
 * one committed no earlier than the snapshot (1 ms slack: a snapshot's time
 * may run 1 ms ahead of the clock).
 */
function generationLabels(generations: GenerationEntry[]): Labeller {
  const gens = [...generations].reverse();
  const perTable = new Map<string, Map<bigint, { generation: bigint | null; committedMs: number | null }>>();
  return (table, seq) => {
    const key = table.name;
    let m = perTable.get(key);
    if (!m) {
      m = new Map();
      const name = table.name;
      const touching = gens.filter((g) => g.tables.some((t) => identToString(t.ident) === name));
      const snaps = [...table.metadata.snapshots].sort((a, b) => cmpBig(a.sequenceNumber, b.sequenceNumber));
      let i = 0;
      for (const s of snaps) {
        const ms = Number(s.timestampMs);
        while (i < touching.length && touching[i]!.timeMs < ms - 1) i++;
        const g = touching[i];
        m.set(s.sequenceNumber, { generation: g ? g.generation : null, committedMs: ms });
        if (g) i++;
      }
      perTable.set(key, m);
    }
    return m.get(seq) ?? { generation: null, committedMs: null };
  };
}
