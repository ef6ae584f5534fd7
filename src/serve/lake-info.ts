// `/api/lake`: what the lake holds at one generation — its tables (snapshot,
// rows and files from the snapshot summary), the newest generations up to
// it, the ring mode, the newest ingest runs and the live crates (each repo's
// and the universe's, from the file state: query/scope.ts liveCrates). Read through a pinned
// handle, like every answer, so the whole reply is of one generation (and
// the pointer generation it reports is the one its request read, not a
// later one read while it was computed).
// Memory: the runs are streamed and only the newest `runs` kept.
import { identToString, parseIdent } from '../lake/catalog/catalog.ts';
import { batchRows, type EventLog } from '../log/event-log.ts';
import { liveCrates } from '../query/scope.ts';

export interface LakeTableInfo {
  table: string;
  formatVersion: number;
  metadataLocation: string;
  currentSnapshotId: bigint | null;
  snapshots: number;
  /** From the current snapshot's summary (null when absent). */
  records: bigint | null;
  dataFiles: bigint | null;
  deleteFiles: bigint | null;
  properties: Record<string, string>;
}

export interface LakeRun {
  run: string;
  repo: string;
  rev: string | null;
  /** Epoch microseconds, as the ingest_runs table keeps them. */
  started: bigint | null;
  finished: bigint | null;
  status: string | null;
  events: bigint | null;
  summary: string | null;
}

export interface LakeInfo {
  root: string;
  /** The generation this reply is true at. */
  generation: bigint;
  /** The catalog's current generation (newer than `generation` for an asOf read). */
  pointerGeneration: bigint;
  ringMode: 'split' | 'unified';
  tables: LakeTableInfo[];
  generations: { generation: bigint; timeMs: number; note: string | null; tables: string[] }[];
  runs: LakeRun[];
  /** Every live crate (repo `@universe`: the dependency crates), sorted by repo then krate. */
  crates: { repo: string; krate: string }[];
}

const summaryCount = (s: Record<string, string> | undefined, key: string): bigint | null => {
  const v = s?.[key];
  return v !== undefined && /^\d+$/.test(v) ? BigInt(v) : null;
};

/** `now`: the pointer generation the reply reports (the server's, read once per request; default the catalog's now). */
export async function lakeInfo(pinned: EventLog, opts: { generations: number; runs: number; now?: bigint }): Promise<LakeInfo> {
  const lake = pinned.lake;
  const g = pinned.readGeneration();
  const tables: LakeTableInfo[] = [];
  const pointers = [...lake.catalog.pointersAt(g)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, loc] of pointers) {
    const t = await lake.loadTable(parseIdent(name), { generation: g });
    const m = t.metadata;
    const snap = m.currentSnapshotId === undefined ? undefined : m.snapshots.find((s) => s.snapshotId === m.currentSnapshotId);
    tables.push({
      table: name,
      formatVersion: m.formatVersion,
      metadataLocation: loc,
      currentSnapshotId: m.currentSnapshotId ?? null,
      snapshots: m.snapshots.length,
      records: summaryCount(snap?.summary, 'total-records'),
      dataFiles: summaryCount(snap?.summary, 'total-data-files'),
      deleteFiles: summaryCount(snap?.summary, 'total-delete-files'),
      properties: m.properties,
    });
  }
  const generations = opts.generations === 0 ? [] : lake.catalog.generations({ limit: opts.generations, before: g + 1n }).map((e) => ({
    generation: e.generation,
    timeMs: e.timeMs,
    note: e.note,
    tables: e.tables.map((t) => identToString(t.ident)),
  }));
  return {
    root: lake.root,
    generation: g,
    pointerGeneration: opts.now ?? lake.catalog.pointerGeneration(),
    ringMode: (await pinned.ringSplit()) ? 'split' : 'unified',
    tables,
    generations,
    runs: await newestRuns(pinned, opts.runs),
    crates: (await liveCrates(pinned, g))
      .map((c) => ({ repo: c.repo, krate: c.krate }))
      .sort((a, b) => (a.repo === b.repo ? (a.krate < b.krate ? -1 : a.krate > b.krate ? 1 : 0) : a.repo < b.repo ? -1 : 1)),
  };
}

/** The newest `n` rows of ingest_runs (by `started`), streamed: at most `n` kept. */
async function newestRuns(pinned: EventLog, n: number): Promise<LakeRun[]> {
  if (n === 0) return [];
  const keep: LakeRun[] = [];
  const micros = (v: unknown): bigint | null => (typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : null);
  const s = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  for await (const b of pinned.scanRuns()) {
    for (const r of batchRows(b)) {
      keep.push({ run: String(r.run), repo: String(r.repo), rev: s(r.rev), started: micros(r.started), finished: micros(r.finished), status: s(r.status), events: micros(r.events), summary: s(r.summary) });
    }
    if (keep.length > 2 * n) trim(keep, n);
  }
  trim(keep, n);
  return keep;
}

function trim(runs: LakeRun[], n: number): void {
  runs.sort((a, b) => (a.started === b.started ? (a.run < b.run ? 1 : -1) : (a.started ?? -1n) < (b.started ?? -1n) ? 1 : -1));
  runs.length = Math.min(runs.length, n);
}
