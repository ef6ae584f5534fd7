// A run: one repo ingest or universe add (or repo remove) landing in ONE
// generation. Begun with `EventLog.beginRun`.
//
// A run pins the generation it reads (`generation`, `view`) and the values of
// its concurrency keys at that generation, read together in one catalog
// transaction. It writes its data files as it goes (`write`: memory is the
// caller's batch, never the run), and lands everything in one multi-table
// commit at the end (`commit`): the event tables it wrote, the `ingest_runs`
// row, any extra targets (the serving state tables' updates, `addTarget`) and
// its keys, compare-and-swapped in the same SQLite transaction as the table
// pointers. Readers at any generation see the whole run or none of it.
//
// Invariants:
// - Keys: the commit lands only if every key it sets still holds the value
//   read at `generation` (a repo ingest: `repo:<name>` = the last run id; a
//   universe add: `universe:<name@version>` absent). Otherwise it throws
//   RunConflict('key'): the run's diff is stale, the files are deleted and the
//   caller re-diffs in a new run. So the log never holds an event twice.
// - Ring rows are routed by the mode read at `begin`; the commit carries the
//   mode guard on the node table (route.ts). A mode change since then throws
//   RunConflict('mode') and the caller redoes the run (rare); a live ring
//   freeze makes the commit wait (bounded) and try again.
// - From `begin` to the end of the commit the run holds a catalog lease with
//   releaseBase = `generation`: gc in any process keeps the files it wrote
//   (orphan removal keeps files newer than a live lease) and the snapshots it
//   reads (expiry keeps what pointersAt(releaseBase) names).
//
// Crash story: nothing is visible until the one catalog transaction lands. A
// crash (or a failure: disk full, conflict) before it leaves only files no
// metadata references; `abort` (called by a failed commit too) deletes those
// it can, gc collects the rest once the lease is gone. After it, the whole run
// is there, run row included. Crash points: `run:file-written` after each
// data file batch, `run:row-written`, `run:before-commit`, the lake's points
// inside the commit, `run:committed`.
//
// Failures after the commit point (the disk fills up right after it: ending
// the lease is a catalog write too) never undo the commit. Whether the run
// landed is asked of the catalog — the generation log holds a generation
// noted with the run's note (it names the run id) — never inferred from an
// error: a run that landed is reported landed, with what failed after it
// (`RunCommitted.afterCommit`), and its files are never deleted; only a run
// the catalog does not hold discards its files, and when even that question
// cannot be answered nothing is deleted (gc collects true orphans later). A
// lease that could not be ended is left to expire (swept once its process is
// gone). A run that did not land because the disk is full says which file and
// operation failed (`describeFailure`).
import { describeFailure, diskFull } from '../lake/disk-full.ts';
import type { Lake } from '../lake/lake.ts';
import type { Batch, DataFile } from '../lake/spec/types.ts';
import type { Table } from '../lake/table/table.ts';
import { checkUpdate, type CommitTarget, type TableUpdate } from '../lake/table/commit.ts';
import { KeyConflictError, identToString, type KeyChange, type TableIdent } from '../lake/catalog/catalog.ts';
import { crashPoint } from '../lake/testing/crash.ts';
import type { EventLog } from './event-log.ts';
import { rowsToBatch, type EventRow } from './batch.ts';
import { Frozen, ModeChanged, guarded, isRingSplit, modeGuard, routeBatches } from './route.ts';
import { CODE_NODE_EVENTS, INGEST_RUNS, INGEST_RUNS_SCHEMA, ident, ringTableName, tableName, type Kind } from './schema.ts';

export interface BeginRunOptions {
  /** The repo the run writes (`@universe` for a universe add); recorded in notes and errors. */
  repo: string;
  /** The run id (`ingest_runs.run`, the `run` column of its events). */
  run: string;
  /** What the run is, for the generation log (default `run <run> <repo>`). */
  note?: string;
  /** Concurrency keys to read at the run's generation (see `key`). */
  keys?: readonly string[];
  /** How long the commit waits for a live ring freeze to end (default 10 min). */
  frozenWaitMs?: number;
}

/** An extra commit target (the state tables' update): `update()` is called once per commit attempt. */
export interface RunTarget {
  ident: TableIdent;
  /** A fresh update for each attempt (a failed attempt deletes the manifests its update wrote). */
  update: () => TableUpdate;
  assertOnly?: boolean;
}

export interface RunCommitOptions {
  /** Keys to set (null: remove); each must have been read at `begin` and must still hold that value. */
  keys?: Record<string, string | null>;
}

export interface RunCommitted {
  generation: bigint;
  /** Event rows landed per kind, and how many of them went to ring tables. */
  rows: Record<Kind, number>;
  ring: number;
  /** Data files the run added (events and run row; not counting extra targets). */
  files: number;
  /**
   * What failed after the commit landed (a lease that could not be ended on a
   * full disk, …), one line each naming the run's generation; empty when
   * nothing did. The run is whole in the lake either way.
   */
  afterCommit: string[];
}

/** A run that did not land because a write failed for lack of space: names the file and operation, and what was not kept. */
export class RunDiskFull extends Error {
  constructor(
    readonly file: string,
    readonly op: string,
    message: string,
  ) {
    super(message);
    this.name = 'RunDiskFull';
  }
}

/** The run's diff is stale (a key moved) or its routing is (the ring mode changed): nothing landed, redo the run. */
export class RunConflict extends Error {
  constructor(readonly reason: 'key' | 'mode', message: string) {
    super(message);
    this.name = 'RunConflict';
  }
}

/** How many times `begin` re-reads when a commit lands between reading the generation and taking the lease. */
const BEGIN_TRIES = 50;
const FROZEN_WAIT_MS = 10 * 60_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Registers the run in its log's in-flight set and takes the lease; returns the end of both. */
export type InFlightHook = (releaseBase: bigint, note: string) => () => void;

interface Dest {
  table: Table;
  kind: Kind | 'run';
  files: { file: DataFile; specId: number }[];
  rows: number;
}

export class Run {
  private readonly dests = new Map<string, Dest>();
  private readonly tracked: string[] = [];
  private readonly extra: RunTarget[] = [];
  private state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';

  private constructor(
    private readonly log: EventLog,
    private readonly opts: BeginRunOptions,
    /** The generation every read of the run is made at. */
    readonly generation: bigint,
    private readonly keys: ReadonlyMap<string, string>,
    /** The ring mode the run routes by (checked again at commit). */
    readonly split: boolean,
    /** A read-only handle at `generation` (no lease of its own: the run's protects it). */
    readonly view: EventLog,
    private end: (() => void) | undefined,
  ) {}

  /** Use `EventLog.beginRun`. */
  static async begin(log: EventLog, opts: BeginRunOptions, inFlight: InFlightHook): Promise<Run> {
    const { lake } = log;
    const note = opts.note ?? `run ${opts.run} ${opts.repo}`;
    for (let i = 0; ; i++) {
      const { generation, values } = lake.catalog.readKeys(opts.keys ?? []);
      const end = inFlight(generation, note);
      // the lease protects the snapshots current at `generation` only once taken:
      // if a commit landed in between, gc may have expired them — read again
      if (lake.catalog.pointerGeneration() !== generation && i < BEGIN_TRIES) {
        end();
        continue;
      }
      try {
        const node = await log.table(CODE_NODE_EVENTS, generation);
        if (!node) throw new Error(`the lake at ${lake.root} has no ${CODE_NODE_EVENTS} table at generation ${generation} (expected EventLog.open to create it)`);
        return new Run(log, opts, generation, values, isRingSplit(node.metadata), log.view(generation), end);
      } catch (e) {
        end();
        throw e;
      }
    }
  }

  get id(): string {
    return this.opts.run;
  }
  get repo(): string {
    return this.opts.repo;
  }
  private get lake(): Lake {
    return this.log.lake;
  }

  /** The value of concurrency key `key` at `generation` (null: absent). The key must be one given to `begin`. */
  key(key: string): string | null {
    if (!(this.opts.keys ?? []).includes(key)) throw new Error(`run ${this.id}: key ${key} was not read at the run's start (keys: ${(this.opts.keys ?? []).join(', ') || 'none'})`);
    return this.keys.get(key) ?? null;
  }

  private open(what: string): void {
    if (this.state !== 'open') throw new Error(`run ${this.id} of ${this.repo}: cannot ${what}, the run is ${this.state}`);
  }

  private async dest(name: string, kind: Kind | 'run'): Promise<Dest> {
    let d = this.dests.get(name);
    if (!d) {
      d = { table: await this.lake.loadTable(ident(name)), kind, files: [], rows: 0 };
      this.dests.set(name, d);
    }
    return d;
  }

  private async writeTo(d: Dest, batches: Batch[]): Promise<void> {
    if (batches.length === 0) return;
    const files = await d.table.writeDataFiles(batches);
    d.files.push(...files);
    for (const b of batches) d.rows += b.numRows;
    crashPoint('run:file-written');
  }

  /**
   * Write events of one kind as data files now (not visible until `commit`):
   * batches of the kind's schema with canonical values (rowsToBatch makes
   * them from rows), ring rows routed by the run's mode.
   */
  async write(kind: Kind, batches: Batch[]): Promise<void> {
    this.open('write');
    const { all, ring, rest } = routeBatches(kind, batches, `run ${this.id}`);
    if (all.length === 0) return;
    if (this.split) {
      await this.writeTo(await this.dest(tableName(kind), kind), rest);
      await this.writeTo(await this.dest(ringTableName(kind), kind), ring);
    } else {
      await this.writeTo(await this.dest(tableName(kind), kind), all);
    }
  }

  /** Files written for this run by others (the state tables' data and delete files): deleted if the run does not land. */
  track(paths: string[]): void {
    this.open('track files');
    this.tracked.push(...paths);
  }

  /** Another table's update to land in the run's commit. */
  addTarget(target: RunTarget): void {
    this.open('add a commit target');
    const name = identToString(target.ident);
    if (this.extra.some((t) => identToString(t.ident) === name) || this.dests.has(target.ident.name)) {
      throw new Error(`run ${this.id}: table ${name} is already a target of the run's commit`);
    }
    this.extra.push(target);
  }

  /** Event rows written so far, per kind. */
  rows(): Record<Kind, number> {
    const out: Record<Kind, number> = { node: 0, edge: 0, file: 0, pos: 0 };
    for (const d of this.dests.values()) if (d.kind !== 'run') out[d.kind] += d.rows;
    return out;
  }

  /**
   * Land the run: its event files, `runRow` (an `ingest_runs` row; null for
   * none), the extra targets and the keys, in one commit. Throws RunConflict
   * when a key moved since `generation` or the ring mode changed; on any
   * failure the run is aborted (its files deleted) before the error is thrown.
   */
  async commit(runRow: EventRow | null, opts: RunCommitOptions = {}): Promise<RunCommitted> {
    this.open('commit');
    this.state = 'committing';
    try {
      const keys: KeyChange[] = Object.entries(opts.keys ?? {}).map(([key, next]) => ({ key, expected: this.key(key), next }));
      if (runRow) {
        await this.writeTo(await this.dest(INGEST_RUNS, 'run'), [rowsToBatch(INGEST_RUNS_SCHEMA, [runRow], INGEST_RUNS)]);
        crashPoint('run:row-written');
      }
      const waitMs = this.opts.frozenWaitMs ?? FROZEN_WAIT_MS;
      const t0 = Date.now();
      for (let frozenTries = 0; ; ) {
        crashPoint('run:before-commit');
        try {
          const note = this.note;
          const unended = this.lake.unendedLeases.length;
          const afterCommit: string[] = [];
          let generation: bigint;
          try {
            generation = (await this.log.commit(note, () => this.lake.commit(this.targets(), note, { keys }))).generation;
          } catch (e) {
            // the catalog, not the error, says whether the run landed
            const landed = this.landedAt();
            if (landed === undefined) throw e;
            generation = landed;
            afterCommit.push(`run ${this.id} of ${this.repo} landed at generation ${generation}; after it, ${describeFailure(e)} — nothing of the run was deleted`);
          }
          crashPoint('run:committed');
          this.state = 'committed';
          this.release();
          for (const m of this.lake.unendedLeases.slice(unended)) afterCommit.push(`run ${this.id} of ${this.repo} landed at generation ${generation}; after it, ${m}`);
          const rows = this.rows();
          let ring = 0;
          let files = 0;
          for (const [name, d] of this.dests) {
            files += d.files.length;
            if (d.kind !== 'run' && name === ringTableName(d.kind)) ring += d.rows;
          }
          return { generation, rows, ring, files, afterCommit };
        } catch (e) {
          if (e instanceof Frozen) {
            const waited = Date.now() - t0;
            if (waited >= waitMs) {
              throw new Error(`run ${this.id} of ${this.repo}: ${e.message}, and it stayed frozen for ${waited} ms (limit ${waitMs} ms) — nothing committed; retry when the ring split/unsplit has switched`);
            }
            const cap = Math.min(80, 10 * 2 ** Math.min(frozenTries++, 3));
            await sleep(Math.min(20 + Math.random() * cap, Math.max(1, waitMs - waited)));
            continue;
          }
          if (e instanceof ModeChanged) throw new RunConflict('mode', `run ${this.id} of ${this.repo}: ${e.message} — nothing committed, the run must be redone`);
          if (e instanceof KeyConflictError) {
            throw new RunConflict('key', `run ${this.id} of ${this.repo}: the state it read at generation ${this.generation} is no longer current (${e.message})`);
          }
          throw e;
        }
      }
    } catch (e) {
      await this.discard();
      throw e;
    }
  }

  /** This attempt's targets: fresh updates (a failed attempt removed the manifests of the last ones). */
  private targets(): Omit<CommitTarget, 'io'>[] {
    const guard = modeGuard(this.lake, this.split);
    const targets: Omit<CommitTarget, 'io'>[] = [];
    for (const [name, d] of this.dests) {
      if (d.files.length === 0) continue;
      const update = d.table.appendUpdate(d.files, { 'mimir.kind': d.kind, 'mimir.run': this.id });
      targets.push({ ident: ident(name), update: name === CODE_NODE_EVENTS ? guarded(update, guard) : update });
    }
    if (!targets.some((t) => t.ident.name === CODE_NODE_EVENTS)) {
      targets.push({ ident: ident(CODE_NODE_EVENTS), update: checkUpdate(guard), assertOnly: true });
    }
    for (const t of this.extra) targets.push({ ident: t.ident, update: t.update(), assertOnly: t.assertOnly });
    return targets;
  }

  /** The note of the run's generation (it names the run id). */
  private get note(): string {
    return this.opts.note ?? `run ${this.id} ${this.repo}`;
  }

  /** The generation the run landed at, from the catalog's generation log; undefined: it did not land. */
  landedAt(): bigint | undefined {
    return this.lake.catalog.generationNoted(this.note, this.generation);
  }

  /** Give the run up: delete every file it wrote or tracked, end its lease. Idempotent; refused after the commit landed. */
  async abort(): Promise<void> {
    if (this.state === 'committed') throw new Error(`run ${this.id} of ${this.repo} has landed; it cannot be aborted`);
    if (this.state === 'aborted') return;
    await this.discard();
  }

  /**
   * Delete the run's files — only when the catalog says the run did not land.
   * A landed run (a failure after its commit point) keeps them, and so does a
   * run the catalog cannot answer for (gc removes real orphans later).
   */
  private async discard(): Promise<void> {
    let landed: bigint | undefined;
    try {
      landed = this.landedAt();
    } catch {
      landed = -1n;
    }
    if (landed !== undefined) {
      this.state = landed >= 0n ? 'committed' : 'aborted';
      this.dests.clear();
      this.release();
      return;
    }
    this.state = 'aborted';
    const io = this.lake.io;
    for (const d of this.dests.values()) for (const f of d.files) await io.delete(f.file.filePath).catch(() => undefined);
    for (const p of this.tracked) await io.delete(p).catch(() => undefined);
    this.dests.clear();
    this.release();
  }

  private release(): void {
    const end = this.end;
    this.end = undefined;
    end?.();
  }
}

/** What one attempt of a run produced: its run row, the keys it sets, and a result for the caller. */
export interface RunAttempt<R> {
  row: EventRow | null;
  keys: Record<string, string | null>;
  result: R;
}

/** Attempts of one run before a conflict is given up (each diffs again against the newer state). */
export const RUN_TRIES = 8;

/**
 * Begin a run, let `body` read at its generation and write, commit it; on a
 * RunConflict (another writer of the same keys landed first, or the ring mode
 * changed) discard it and do it all again in a new run — at most `tries`
 * attempts, with jittered exponential backoff. Any other error aborts the run
 * and is thrown. `abortAfter` (a dry run) aborts instead of committing.
 */
export async function withRun<R>(
  log: EventLog,
  opts: BeginRunOptions & { tries?: number; abortAfter?: boolean },
  body: (run: Run, attempt: number) => Promise<RunAttempt<R>>,
): Promise<{ result: R; generation: bigint; attempts: number; afterCommit: string[] }> {
  const tries = opts.tries ?? RUN_TRIES;
  for (let attempt = 1; ; attempt++) {
    let run: Run;
    try {
      run = await log.beginRun(opts);
    } catch (e) {
      throw notLanded(log, opts, e, 'nothing of it was written');
    }
    try {
      const a = await body(run, attempt);
      if (opts.abortAfter) {
        await run.abort();
        return { result: a.result, generation: run.generation, attempts: attempt, afterCommit: [] };
      }
      const c = await run.commit(a.row, { keys: a.keys });
      return { result: a.result, generation: c.generation, attempts: attempt, afterCommit: c.afterCommit };
    } catch (e) {
      await run.abort().catch(() => undefined);
      if (!(e instanceof RunConflict)) throw notLanded(log, opts, e, 'the files it had written were removed');
      if (attempt >= tries) {
        throw new Error(`${e.message}; gave up after ${attempt} attempts (another writer of the same keys kept landing first) — nothing of this run was written`);
      }
      const wait = Math.min(2000, 25 * 2 ** attempt);
      await sleep(wait / 2 + Math.random() * wait);
    }
  }
}

/**
 * The error of a run that did not land: a disk-full failure becomes a
 * RunDiskFull naming the file and the operation, the generation the lake
 * stays at and what was removed; any other error is returned as is.
 */
function notLanded(log: EventLog, opts: BeginRunOptions, e: unknown, removed: string): unknown {
  const full = diskFull(e);
  if (!full || e instanceof RunDiskFull) return e;
  let at = '';
  try {
    at = ` (the lake stays at generation ${log.lake.catalog.pointerGeneration()})`;
  } catch {
    // the message says what it can
  }
  const reason = (e as Error).message.replace(/^disk full while writing [^:]*: /, '');
  return new RunDiskFull(
    full.file,
    full.op,
    `disk full while writing ${full.file} (${full.op}) — run ${opts.run} of ${opts.repo} did not land${at}; ${removed}, nothing the lake holds was deleted; ` +
      `free some space and run it again (${reason})`,
  );
}
