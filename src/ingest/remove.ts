// `repo remove`: every live item, edge and file of one repo removed, as
// events (`op` = remove, carrying the last known fields), in ONE run and one
// commit with its `ingest_runs` row (status `removed`) — the only way a whole
// repo leaves the lake (an ingest never removes crates unless a valid
// workspace no longer has them). The universe (`@universe`) is refused: it is
// shared by every repo.
//
// Invariants: reads are at the run's generation and the commit asserts the
// repo's key (`repo:<name>`) is still the run id read then, so a concurrent
// ingest of the same repo makes one of them re-diff (no item is removed while
// an add lands unseen, none removed twice). Memory: one crate's state at a
// time, plus the writer's buffer. A dry run reads the same and writes
// nothing. Crash story: the run's (runs.ts): nothing is visible before its one
// commit.
import { and, eq } from '../lake/expr/expr.ts';
import type { EventLog, EventRow } from '../log/event-log.ts';
import { withRun } from '../log/run.ts';
import { describeFailure } from '../lake/disk-full.ts';
import { maintain } from '../log/maintain.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, parseRunNote, runNote, type Kind } from '../log/schema.ts';
import { StateDelta } from '../log/state/delta.ts';
import { newRunId, repoKey } from './ingest.ts';
import { Writer } from './writer.ts';

export interface RemoveRepoOptions {
  /** Report what would be removed; write nothing. */
  dryRun?: boolean;
  /** Rows buffered before the run writes a data file (default 50 000). */
  batchRows?: number;
  /** Run the log's maintenance after the removal (default true; see log/maintain.ts). */
  maintain?: boolean;
}

export interface RemovedCrate {
  krate: string;
  /** Live rows removed (or that would be) per kind. */
  rows: Record<string, number>;
}

export interface RemoveRepoReport {
  run: string;
  repo: string;
  dryRun: boolean;
  crates: RemovedCrate[];
  /** Remove events written (or that would be). */
  events: number;
  /** The generation the removal landed in (dry run: the generation read; already removed: the earlier removal's). */
  generation: bigint;
  /** Nothing of the repo was live: the run that removed it before and its generation (nothing written now). */
  alreadyRemoved?: { generation: bigint; run: string };
  attempts: number;
  ms: number;
  /**
   * What failed after the removal landed (its lease end, the maintenance
   * after it — e.g. on a full disk), one line each naming the generation:
   * the removal is whole in the lake either way.
   */
  afterCommit?: string[];
}

/** The repo has no live item in the lake and never had one: nothing to remove. `known`: the repos runs have named (for did-you-mean). */
export class NoSuchRepoError extends Error {
  constructor(
    message: string,
    readonly repo: string,
    readonly known: string[],
  ) {
    super(message);
    this.name = 'NoSuchRepoError';
  }
}

/** The run (and the generation it landed in) that last removed `repo` (with `rev`, a universe crate): newest first, undefined if none. */
export function lastRemoval(log: EventLog, repo: string, rev: string | null = null): { generation: bigint; run: string } | undefined {
  const catalog = log.lake.catalog;
  let before: bigint | undefined;
  for (;;) {
    const page = catalog.generations({ limit: 500, ...(before !== undefined ? { before } : {}) });
    if (page.length === 0) return undefined;
    for (const g of page) {
      const n = parseRunNote(g.note);
      if (n?.what === 'remove' && n.repo === repo && n.rev === rev && g.generation <= log.readGeneration()) return { generation: g.generation, run: n.run };
    }
    before = page[page.length - 1]!.generation;
  }
}

/** The repo names runs have named (ingest or remove), for did-you-mean. */
function knownRepos(log: EventLog): Set<string> {
  const out = new Set<string>();
  let before: bigint | undefined;
  for (;;) {
    const page = log.lake.catalog.generations({ limit: 500, ...(before !== undefined ? { before } : {}) });
    if (page.length === 0) return out;
    for (const g of page) {
      const n = parseRunNote(g.note);
      if (n && n.repo !== UNIVERSE_REPO) out.add(n.repo);
    }
    before = page[page.length - 1]!.generation;
  }
}

/** Thrown inside the run when every item of the repo was removed already: the run is given up, the caller reports it. */
class AlreadyRemoved extends Error {
  constructor(readonly at: { generation: bigint; run: string } | undefined) {
    super('already removed');
  }
}

/** Remove every live row of `repo` (see the module comment). */
export async function removeRepo(log: EventLog, repo: string, opts: RemoveRepoOptions = {}): Promise<RemoveRepoReport> {
  if (repo === UNIVERSE_REPO) {
    throw new Error(`repo remove: ${UNIVERSE_REPO} is the universe, shared by every repo, and cannot be removed — nothing removed`);
  }
  const started = Date.now();
  const runId = newRunId(started);
  const ts = BigInt(started) * 1000n;
  const dryRun = opts.dryRun === true;
  let landed;
  try {
    landed = await removeRun(log, repo, runId, ts, dryRun, opts);
  } catch (e) {
    if (!(e instanceof AlreadyRemoved)) throw e;
    const g = e.at?.generation ?? log.readGeneration();
    return { run: runId, repo, dryRun, crates: [], events: 0, generation: g, attempts: 1, ms: Date.now() - started, alreadyRemoved: e.at ?? { generation: g, run: '' } };
  }
  const { result, generation, attempts, afterCommit } = landed;
  if (!dryRun && opts.maintain !== false) await maintainAfterRemove(log, runId, generation, afterCommit);
  return { ...result, generation, attempts, ms: Date.now() - started, ...afterCommit.length > 0 ? { afterCommit } : {} };
}

/**
 * The log's maintenance after a removal landed (repo or universe crate): a
 * failure does not fail the removal — it is whole in the lake, and the next
 * run or `mimir compact` maintains again — but is added to `afterCommit`.
 */
export async function maintainAfterRemove(log: EventLog, runId: string, generation: bigint, afterCommit: string[]): Promise<void> {
  try {
    await maintain(log);
  } catch (e) {
    afterCommit.push(`run ${runId} landed at generation ${generation}; after it, the maintenance failed: ${describeFailure(e)}`);
  }
}

/** The removal as one run (see the module comment); throws AlreadyRemoved when nothing of the repo is live but it had items. */
async function removeRun(
  log: EventLog,
  repo: string,
  runId: string,
  ts: bigint,
  dryRun: boolean,
  opts: RemoveRepoOptions,
): Promise<{ result: RemoveRepoReport; generation: bigint; attempts: number; afterCommit: string[] }> {
  return withRun(
    log,
    { repo, run: runId, keys: [repoKey(repo)], note: runNote({ what: 'remove', repo, rev: null, run: runId }), abortAfter: dryRun },
    async (run) => {
      const view = run.view;
      const crates: RemovedCrate[] = [];
      // the serving state tables lose the repo's rows in the same commit (when the lake has them)
      const state = dryRun ? undefined : await StateDelta.open(view, { base: run.generation });
      const writer = new Writer(run, opts.batchRows ?? 50_000, state);
      try {
        let events = 0;
        for (const krate of await repoKrates(view, repo)) {
          const rows: Record<string, number> = {};
          let n = 0;
          for (const kind of SOURCE_KINDS) {
            const live = await view.state(kind, and(eq('repo', repo), eq('krate', krate)));
            rows[kind] = live.size;
            n += live.size;
            if (dryRun) continue;
            for (const row of live.values()) {
              writer.push(kind, { ...row, run: runId, ts, op: 'remove' });
              // a pos row goes with its entity: dropping the node or edge drops its place
              if (kind !== 'pos') state?.drop(kind, row['id'] as string);
            }
            await writer.maybeFlush();
            await state?.maybeFlush();
          }
          if (n > 0) crates.push({ krate, rows });
          events += n;
        }
        if (events === 0) {
          // a rerun after a removal whose outcome the user did not see (a crash, a lost terminal) converges
          if (crates.length === 0 && (await repoKrates(view, repo)).length > 0) throw new AlreadyRemoved(lastRemoval(view, repo));
          throw new NoSuchRepoError(
            `repo remove: repo ${repo} has no live item in the lake at ${log.lake.root} (generation ${run.generation}) and never had one — nothing removed`,
            repo,
            [...knownRepos(view)].sort(),
          );
        }
        await writer.flush();
        if (state) {
          const targets = await state.finish();
          run.track(state.paths());
          for (const t of targets) run.addTarget(t);
        }
        const report: RemoveRepoReport = { run: runId, repo, dryRun, crates, events, generation: run.generation, attempts: 0, ms: 0 };
        const row: EventRow = {
          run: runId, repo, rev: null, started: ts, finished: BigInt(Date.now()) * 1000n, status: 'removed', events: BigInt(events),
          summary: JSON.stringify({ removed: crates }),
        };
        return { row, keys: { [repoKey(repo)]: runId }, result: report };
      } catch (e) {
        await state?.abort();
        throw e;
      }
    },
  );
}

/** The krates of `repo` that have any event of any kind (one krate-column scan per kind), sorted. */
async function repoKrates(log: EventLog, repo: string): Promise<string[]> {
  const found = new Set<string>();
  for (const kind of SOURCE_KINDS as readonly Kind[]) {
    for await (const b of log.scan(kind, { filter: eq('repo', repo), columns: ['krate'] })) {
      const c = b.fields.findIndex((f) => f.name === 'krate');
      for (const v of b.columns[c]!) if (typeof v === 'string') found.add(v);
    }
  }
  return [...found].sort();
}

/** `repo remove demo: 2 crates, 1234 remove events (a@0.1.0: node 10, edge 20, file 3; …), generation 12`. */
export function formatRemoveReport(r: RemoveRepoReport): string {
  if (r.alreadyRemoved) {
    const by = r.alreadyRemoved.run ? ` by run ${r.alreadyRemoved.run}` : '';
    return `repo remove ${r.repo}: already removed at generation ${r.alreadyRemoved.generation}${by} — nothing to do, nothing written`;
  }
  const per = r.crates.map((c) => `${c.krate}: ${Object.entries(c.rows).map(([k, n]) => `${k} ${n}`).join(', ')}`).join('; ');
  const head = r.dryRun ? `repo remove ${r.repo} (dry run): would write` : `repo remove ${r.repo} run ${r.run}: wrote`;
  return `${head} ${r.events} remove event${r.events === 1 ? '' : 's'} over ${r.crates.length} crate${r.crates.length === 1 ? '' : 's'} (${per})`
    + (r.dryRun ? ` — nothing written (generation ${r.generation})` : `, generation ${r.generation}`)
    + (r.afterCommit ?? []).map((w) => `; warning: ${w}`).join('');
}
