// `universe remove NAME@VERSION`: every live item, edge, position and file of
// one universe crate version removed, as events (`op` = remove, carrying the
// last known fields), in ONE run and one commit with its `ingest_runs` row
// (status `removed`) and the serving state tables' updates — the undo of a
// `universe add` made by mistake. Refused (nothing written) while live edges
// of a repo point into the crate (`dst_krate`), unless `force`: those edges
// would name a crate the lake no longer has. Edges of other universe crates
// into it are counted and reported, never a reason to refuse (they are
// dependencies of dependencies, re-resolved when the crate is added again).
// The file contents it stored stay in `mimir.code_sources` (shared by hash,
// and earlier generations still read them).
//
// Invariants: reads are at the run's generation; the commit asserts the
// crate's key (`universe:<name@version>`) still holds the value read then and
// removes it, so a concurrent add or remove of the same version makes one of
// them re-read (the crate is never half removed, never removed twice), and a
// later `universe add` of it is not skipped. Memory: one kind of the crate's
// state at a time, plus the writer's buffer. Crash story: the run's (runs.ts).
import { and, eq, inList } from '../lake/expr/expr.ts';
import type { EventLog, EventRow } from '../log/event-log.ts';
import { withRun } from '../log/run.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, runNote } from '../log/schema.ts';
import { StateDelta } from '../log/state/delta.ts';
import { newRunId, universeKey } from './ingest.ts';
import { Writer } from './writer.ts';
import { lastRemoval, maintainAfterRemove } from './remove.ts';

export interface UniverseRemoveOptions {
  /** Remove even while repos' edges point into the crate. */
  force?: boolean;
  /** Report what would be removed and what points into it; write nothing. */
  dryRun?: boolean;
  batchRows?: number;
  /** Run the log's maintenance after the removal (default true). */
  maintain?: boolean;
}

export interface UniverseRemoveReport {
  run: string;
  krate: string;
  dryRun: boolean;
  forced: boolean;
  /** Live rows removed (or that would be) per kind. */
  rows: Record<string, number>;
  events: number;
  /** Live edges pointing into the crate, per repo (`@universe` = other universe crates). */
  pointedFrom: Record<string, number>;
  generation: bigint;
  attempts: number;
  ms: number;
  /** The crate was not live and a run had removed it: that run and its generation (nothing written now). */
  alreadyRemoved?: { generation: bigint; run: string };
  /**
   * What failed after the removal landed (its lease end, the maintenance
   * after it — e.g. on a full disk), one line each naming the generation:
   * the removal is whole in the lake either way.
   */
  afterCommit?: string[];
}

/** Repos' edges point into the crate and `force` was not given: nothing written. */
export class UniverseRemoveRefused extends Error {
  constructor(message: string, readonly pointedFrom: Record<string, number>) {
    super(message);
    this.name = 'UniverseRemoveRefused';
  }
}

const KRATE = /^[A-Za-z0-9_-]+@\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?$/;

/** Remove universe crate `krate` (`name@version`); see the module comment. */
export async function removeUniverseCrate(log: EventLog, krate: string, opts: UniverseRemoveOptions = {}): Promise<UniverseRemoveReport> {
  if (!KRATE.test(krate)) throw new Error(`universe remove: expected NAME@VERSION (e.g. regex@1.10.2), found ${JSON.stringify(krate)} — nothing removed`);
  const started = Date.now();
  const runId = newRunId(started);
  const ts = BigInt(started) * 1000n;
  const dryRun = opts.dryRun === true;
  let landed;
  try {
    landed = await removeRun(log, krate, runId, ts, dryRun, opts);
  } catch (e) {
    if (!(e instanceof AlreadyRemovedCrate)) throw e;
    return {
      run: runId, krate, dryRun, forced: false, rows: {}, events: 0, pointedFrom: {},
      generation: e.at.generation, attempts: 1, ms: Date.now() - started, alreadyRemoved: e.at,
    };
  }
  const { result, generation, attempts, afterCommit } = landed;
  if (!dryRun && opts.maintain !== false) await maintainAfterRemove(log, runId, generation, afterCommit);
  return { ...result, generation, attempts, ms: Date.now() - started, ...afterCommit.length > 0 ? { afterCommit } : {} };
}

/** The crate is not live and a run removed it before: given up inside the run, reported by the caller. */
class AlreadyRemovedCrate extends Error {
  constructor(readonly at: { generation: bigint; run: string }) {
    super('already removed');
  }
}

/** The removal as one run (see the module comment). */
async function removeRun(
  log: EventLog,
  krate: string,
  runId: string,
  ts: bigint,
  dryRun: boolean,
  opts: UniverseRemoveOptions,
): Promise<{ result: UniverseRemoveReport; generation: bigint; attempts: number; afterCommit: string[] }> {
  const key = universeKey(krate);
  return withRun(
    log,
    { repo: UNIVERSE_REPO, run: runId, keys: [key], note: runNote({ what: 'remove', repo: UNIVERSE_REPO, rev: krate, run: runId }), abortAfter: dryRun },
    async (run) => {
      const view = run.view;
      const scope = and(eq('repo', UNIVERSE_REPO), eq('krate', krate));
      const pointedFrom = await edgesInto(view, krate);
      const fromRepos = Object.entries(pointedFrom).filter(([r]) => r !== UNIVERSE_REPO);
      const files = await view.state('file', scope);
      if (files.size === 0) {
        // a rerun after a removal whose outcome the user did not see (a crash, a lost terminal) converges
        const before = lastRemoval(view, UNIVERSE_REPO, krate);
        if (before) throw new AlreadyRemovedCrate(before);
        const others = await otherVersions(view, krate);
        throw new Error(`universe remove: the universe has no ${krate} at generation ${run.generation}${others.length ? ` (versions present: ${others.join(', ')})` : ''} — nothing removed`);
      }
      if (fromRepos.length > 0 && !opts.force && !dryRun) {
        const list = fromRepos.map(([r, n]) => `${r}: ${n}`).join(', ');
        throw new UniverseRemoveRefused(
          `universe remove: refused — live edges of repos point into ${krate} (${list}); removing it would leave them naming a crate the lake no longer has. Re-ingest those repos against another version, or pass --force — nothing removed`,
          pointedFrom,
        );
      }
      const state = dryRun ? undefined : await StateDelta.open(view, { base: run.generation });
      const writer = new Writer(run, opts.batchRows ?? 50_000, state);
      try {
        const rows: Record<string, number> = {};
        let events = 0;
        for (const kind of SOURCE_KINDS) {
          const live = kind === 'file' ? files : await view.state(kind, scope);
          rows[kind] = live.size;
          events += live.size;
          if (dryRun) continue;
          for (const row of live.values()) {
            writer.push(kind, { ...row, run: runId, ts, op: 'remove' });
            if (kind !== 'pos') state?.drop(kind, row['id'] as string);
          }
          live.clear();
          await writer.maybeFlush();
          await state?.maybeFlush();
        }
        await writer.flush();
        if (state) {
          const targets = await state.finish();
          run.track(state.paths());
          for (const t of targets) run.addTarget(t);
        }
        const report: UniverseRemoveReport = {
          run: runId, krate, dryRun, forced: opts.force === true && fromRepos.length > 0, rows, events, pointedFrom,
          generation: run.generation, attempts: 0, ms: 0,
        };
        const row: EventRow = {
          run: runId, repo: UNIVERSE_REPO, rev: krate, started: ts, finished: BigInt(Date.now()) * 1000n, status: 'removed', events: BigInt(events),
          summary: JSON.stringify({ removed: krate, rows, pointedFrom, forced: report.forced }),
        };
        return { row, keys: { [key]: null }, result: report };
      } catch (e) {
        await state?.abort();
        throw e;
      }
    },
  );
}

/** Live edges of other crates whose `dst_krate` is `krate`, counted per repo (candidates by the column, then folded by id). */
async function edgesInto(log: EventLog, krate: string): Promise<Record<string, number>> {
  // a later event of a candidate (a change to another target, a remove) may not carry
  // dst_krate = krate: each candidate is folded from all its events before it counts
  const groups = new Map<string, { repo: string; krate: string; ids: string[] }>();
  for (const b of await log.rows('edge', { filter: eq('dst_krate', krate), columns: ['repo', 'krate', 'id'] })) {
    const k = `${b['repo'] as string}\u0000${b['krate'] as string}`;
    const g = groups.get(k) ?? { repo: b['repo'] as string, krate: b['krate'] as string, ids: [] };
    g.ids.push(b['id'] as string);
    groups.set(k, g);
  }
  const out: Record<string, number> = {};
  for (const g of groups.values()) {
    if (g.repo === UNIVERSE_REPO && g.krate === krate) continue; // its own edges
    const ids = [...new Set(g.ids)];
    for (let i = 0; i < ids.length; i += 2000) {
      const live = await log.state('edge', and(eq('repo', g.repo), eq('krate', g.krate), inList('id', ids.slice(i, i + 2000))));
      for (const row of live.values()) if (row['dst_krate'] === krate) out[g.repo] = (out[g.repo] ?? 0) + 1;
    }
  }
  return out;
}

async function otherVersions(log: EventLog, krate: string): Promise<string[]> {
  const name = krate.slice(0, krate.lastIndexOf('@'));
  const out = new Set<string>();
  for (const row of (await log.state('file', and(eq('repo', UNIVERSE_REPO), eq('path', 'Cargo.toml')))).values()) {
    const k = row['krate'] as string;
    if (k.slice(0, k.lastIndexOf('@')) === name) out.add(k);
  }
  return [...out].sort();
}

/** `universe remove regex@1.10.2 run R: wrote 1234 remove events (node 10, edge 20, …), generation 12`. */
export function formatUniverseRemoveReport(r: UniverseRemoveReport): string {
  if (r.alreadyRemoved) return `universe remove ${r.krate}: already removed at generation ${r.alreadyRemoved.generation} by run ${r.alreadyRemoved.run} — nothing to do, nothing written`;
  const per = Object.entries(r.rows).map(([k, n]) => `${k} ${n}`).join(', ');
  const into = Object.entries(r.pointedFrom).map(([repo, n]) => `${repo} ${n}`).join(', ');
  const head = r.dryRun ? `universe remove ${r.krate} (dry run): would write` : `universe remove ${r.krate} run ${r.run}: wrote`;
  return `${head} ${r.events} remove event${r.events === 1 ? '' : 's'} (${per})`
    + (into ? `; edges pointing into it: ${into}${r.forced ? ' (removed anyway: --force)' : ''}` : '; no edge points into it')
    + (r.dryRun ? ` — nothing written (generation ${r.generation})` : `, generation ${r.generation}`)
    + (r.afterCommit ?? []).map((w) => `; warning: ${w}`).join('');
}
