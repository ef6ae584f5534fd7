// The event log: append-only code-graph events in the lake's event tables.
//
// Ring mode: a *unified* lake keeps ring rows (repo `@universe`) in the source
// tables; a *split* lake keeps them in the ring tables. The mode is the node
// source table's property `mimir.ring`. Reads merge per mode (split = the ring
// table plus the source table's non-ring rows, so ring rows left in a source
// table before compaction are never counted twice). Writes route ring rows by
// the mode in force *at commit time*: every append commit carries a guard on
// the node table that re-checks the mode in the catalog transaction itself, so
// no ring row can land in a source table after a switch — from this process
// or any other.
//
// Ring freeze: while a ring split or unsplit makes its final catch-up and
// switch, the node table carries `mimir.ring.freeze` = the catalog lease id of
// the process doing it. An append that finds that lease live does not commit:
// its guard fails (the same in-transaction guard as the mode), and it waits
// with a small jittered backoff and tries again, re-reading the mode — bounded
// (10 minutes by default), then a clear error. A freeze whose lease is dead
// (its holder was killed) is ignored, so a crashed split never blocks appends.
//
// Runs reads (a pin with `history: true`): when the snapshots of the pinned
// generation G are gone (gc expired them), the handle answers from the event
// log of the generation current when it first reads (C), keeping only events
// of runs landed at or before G — every event row names its run, each run
// lands in one generation whose note names it, and compaction and ring split
// move rows without reordering one id's events, so the fold of C restricted
// to those runs is the fold at G. The runs excluded are those noted by the
// generations after G; a generation after G that changed an event table
// without being a run or a row-moving operation (`movesRowsOnly`) makes the
// read refuse (ExpiredGenerationError), never guess. Such a handle holds a
// second lease, on C. `table()` refuses the log's tables there (read them
// through `scan`/`scanRuns`, which apply the restriction).
//
// Runs (run.ts, `beginRun`): an ingest writes its data files as it goes and
// lands them, its run row and its concurrency keys in one commit.
//
// Commit discipline (the seed's): every commit takes the log's commit lock,
// records `releaseBase` (the catalog generation it starts from) and is in
// flight — in this process's registry and, for other processes, as a lease in
// the catalog — until it lands or fails. Pinned handles are read-only and hold
// a lease on their generation while open, so GC keeps what they read (except
// on a lake this process may not write: no lease can be recorded there, and
// the CLI says so).
import { CODE_SOURCES, ensureSourcesTable } from './blobs.ts';
import type { Batch, NestedField, Schema, Value } from '../lake/spec/types.ts';
import { ExpiredGenerationError, Lake } from '../lake/lake.ts';
import { addColumnsUpdate, type Table } from '../lake/table/table.ts';
import { checkUpdate, readMetadata, type CommitTarget } from '../lake/table/commit.ts';
import type { TableMetadata } from '../lake/spec/types.ts';
import { and, ne, type Expr } from '../lake/expr/expr.ts';
import { identToString } from '../lake/catalog/catalog.ts';
import { diskFull } from '../lake/disk-full.ts';
import { Frozen, ModeChanged, frozenCheck, guarded, isRingSplit, modeGuard, routeBatches } from './route.ts';
import { Run, type BeginRunOptions } from './run.ts';
import { batchRows, rowsToBatch, type EventRow } from './batch.ts';
import { StateDelta } from './state/delta.ts';
import { createStateTables } from './state/rebuild.ts';
import {
  CODE_NODE_EVENTS,
  COL_ID,
  COL_OP,
  COL_REPO,
  COL_RUN,
  EVENT_TABLE_PROPERTIES,
  INGEST_RUNS,
  INGEST_RUNS_SCHEMA,
  PROP_RING,
  RING_SPLIT,
  SOURCE_KINDS,
  UNIVERSE_REPO,
  ident,
  kindSchema,
  movesRowsOnly,
  parseRunNote,
  qualified,
  ringTableName,
  runTables,
  tableName,
  type Kind,
} from './schema.ts';


export type RingMode = 'split' | 'unified';

export { Frozen, ModeChanged, guarded, isRingSplit, ringFreeze, type RingFreeze } from './route.ts';
export { batchRows, rowsToBatch, type EventRow } from './batch.ts';

/** A pinned read handle refused a write. */
export class PinnedError extends Error {}

/** How long an append waits for a ring freeze to end before giving up (default). */
export const FROZEN_WAIT_MS = 10 * 60_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A FIFO async mutex. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = prev.then(() => next);
    await prev;
    return release;
  }
}

/** A commit of this process in flight. */
export interface InFlightCommit {
  note: string;
  releaseBase: bigint;
  startedMs: number;
}

interface Shared {
  lake: Lake;
  ownsLake: boolean;
  commitLock: Mutex;
  inFlight: Set<InFlightCommit>;
  /** The catalog generation the latest commit of this log started from. */
  releaseBase: bigint;
  writeProps: Record<string, string>;
  /** Opened with `readOnly`: every write is refused, as on a pinned handle. */
  readOnly: boolean;
  /** Generations found with expired snapshots (runs reads): expiry is never undone, so checked once. */
  expired: Set<bigint>;
}

export interface OpenOptions {
  /** Ring mode of a new lake (default split). Refused if the lake exists with the other mode. */
  init?: RingMode;
  /**
   * A new lake gets the serving state tables (default true); false makes an
   * event log only (`mimir state rebuild` adds them later). No effect on an
   * existing lake.
   */
  stateTables?: boolean;
  /**
   * Read only (`mimir serve`): the tables are not created or evolved on open,
   * and every write of this handle is refused; pins (read leases) still work.
   */
  readOnly?: boolean;
}

/**
 * How a runs read answers generation `generation`: from the log at `at`
 * without the events (and `ingest_runs` rows) of the runs in `exclude`.
 */
export interface RunsRead {
  generation: bigint;
  at: bigint;
  exclude: ReadonlySet<string>;
}

export interface AppendReport {
  rows: number;
  /** Rows routed to the ring table (split lake). */
  ring: number;
  generation: bigint;
}

export class EventLog {
  private released = false;

  /** A runs-read pin's decision, made at its first read (undefined: not decided yet). */
  private runsRead?: Promise<RunsRead | undefined>;
  private readonly extraEnds: (() => void)[] = [];

  private constructor(
    private readonly shared: Shared,
    private readonly pinned?: { generation: bigint; end: () => void; history?: boolean },
  ) {}

  /** Open the log of a lake, creating its tables on first use. */
  static async open(lake: Lake | string, opts: OpenOptions = {}): Promise<EventLog> {
    const owns = typeof lake === 'string';
    const l = typeof lake === 'string' ? Lake.open(lake) : lake;
    const log = new EventLog({
      lake: l,
      ownsLake: owns,
      commitLock: new Mutex(),
      inFlight: new Set(),
      releaseBase: l.catalog.pointerGeneration(),
      writeProps: { ...EVENT_TABLE_PROPERTIES },
      // a lake opened read-only (not writable by this process) gives a read-only handle
      readOnly: opts.readOnly === true || l.readOnly,
      expired: new Set(),
    });
    try {
      if (opts.readOnly || l.readOnly) log.requireTables();
      else await log.ensureTables(opts.init, opts.stateTables !== false);
    } catch (e) {
      if (owns) l.close();
      throw e;
    }
    return log;
  }

  /** A read-only handle creates no tables: the log must be there already. */
  private requireTables(): void {
    const { lake } = this.shared;
    if (!lake.tableExists(ident(CODE_NODE_EVENTS))) {
      throw new Error(`the lake at ${lake.root} (opened read-only) has no event log: no table ${qualified(CODE_NODE_EVENTS)} — nothing read`);
    }
  }

  /**
   * Create what is missing. The node source table carries the mode, so it is
   * created last: a crash midway leaves no node table and the next open
   * finishes the job (idempotent).
   */
  private async ensureTables(init: RingMode | undefined, stateTables: boolean): Promise<void> {
    const { lake } = this.shared;
    const nodeIdent = ident(CODE_NODE_EVENTS);
    if (lake.tableExists(nodeIdent)) {
      if (init) {
        const mode = (await this.ringSplit()) ? 'split' : 'unified';
        if (mode !== init) throw new Error(`the lake at ${lake.root} exists and is ${mode}; it cannot be initialised as ${init} (use mimir ring split/unsplit)`);
      }
      // a lake made before some table existed: create the rest
    }
    const want: { name: string; schema: Schema; props?: Record<string, string> }[] = [];
    for (const k of SOURCE_KINDS) want.push({ name: ringTableName(k), schema: kindSchema(k) });
    for (const k of SOURCE_KINDS) if (k !== 'node') want.push({ name: tableName(k), schema: kindSchema(k) });
    want.push({ name: INGEST_RUNS, schema: INGEST_RUNS_SCHEMA });
    const mode = init ?? 'split';
    const fresh = !lake.tableExists(nodeIdent);
    for (const w of want) {
      const id = ident(w.name);
      if (lake.tableExists(id)) continue;
      try {
        await lake.createTable(id, w.schema, { properties: { ...this.shared.writeProps, ...w.props } });
      } catch (e) {
        if (!lake.tableExists(id)) throw e; // another process created it first: fine
      }
    }
    // a new lake gets its (empty) state tables before the node table marks it
    // made; an older lake gets them from `mimir state rebuild` (they need a fold)
    if (fresh && stateTables) await createStateTables(this);
    // and the content-addressed sources table (log/blobs.ts; an older lake gets it at its next ingest)
    if (fresh) await ensureSourcesTable(lake);
    const node: { schema: Schema; props: Record<string, string> } = { schema: kindSchema('node'), props: mode === 'split' ? { [PROP_RING]: RING_SPLIT } : {} };
    if (!lake.tableExists(nodeIdent)) {
      try {
        await lake.createTable(nodeIdent, node.schema, { properties: { ...this.shared.writeProps, ...node.props } });
      } catch (e) {
        if (!lake.tableExists(nodeIdent)) throw e;
      }
    }
    for (const k of SOURCE_KINDS) for (const name of [ringTableName(k), tableName(k)]) await this.evolveTable(name, kindSchema(k), k);
    await this.evolveTable(INGEST_RUNS, INGEST_RUNS_SCHEMA, INGEST_RUNS);
  }

  /**
   * Schema evolution of a log table made before some of its columns existed
   * (`body_hash`, the columns docs/design.md reserves, the run's commit
   * columns): add the missing trailing columns, each with the id `schema.ts`
   * fixes and nothing else. A table's present columns must be a prefix of
   * `schema`'s (same ids, names and types); anything else is refused, never
   * renumbered.
   * Checked again inside the commit, so two processes opening the same old
   * lake add them once.
   */
  private async evolveTable(name: string, schema: Schema, what: string): Promise<void> {
    const { lake } = this.shared;
    const want = schema.fields;
    const where = `table ${qualified(name)} of the lake at ${lake.root}`;
    const missing = (m: TableMetadata): NestedField[] => {
      const have = m.schemas.find((s) => s.schemaId === m.currentSchemaId)?.fields ?? [];
      for (const [i, h] of have.entries()) {
        const w = want[i];
        if (!w) throw new Error(`${where}: unexpected column ${h.name} (field ${h.id}) after the ${want.length} columns of the ${what} schema`);
        if (w.id !== h.id || w.name !== h.name || w.type.type !== h.type.type) {
          throw new Error(`${where}: expected column ${w.name} as field ${w.id} of type ${w.type.type}, found ${h.name} as field ${h.id} of type ${h.type.type}`);
        }
      }
      const rest = want.slice(have.length);
      if (rest.length > 0 && m.lastColumnId !== rest[0]!.id - 1) {
        throw new Error(`${where} lacks column ${rest[0]!.name} and its last column id is ${m.lastColumnId}, expected ${rest[0]!.id - 1} so that the added column gets id ${rest[0]!.id}; refusing to evolve it`);
      }
      return rest;
    };
    const table = await lake.loadTable(ident(name));
    const rest = missing(table.metadata);
    if (rest.length === 0) return;
    const names = rest.map((f) => f.name).join(', ');
    await this.commit(`add ${names} to ${name}`, () => table.commit({
      apply: async (base, attempt) => {
        const now = missing(base);
        return now.length === 0 ? base : addColumnsUpdate(now.map((f) => ({ name: f.name, type: f.type }))).apply(base, attempt);
      },
      attemptFiles: () => [],
      sharedFiles: () => [],
    }, `add columns ${names}`));
    if (missing(table.metadata).length > 0) throw new Error(`${where}: columns ${names} missing after adding them`);
  }

  get lake(): Lake {
    return this.shared.lake;
  }
  get isPinned(): boolean {
    return this.pinned !== undefined;
  }
  /** The lake generation a pinned handle reads; undefined for the read-write handle. */
  get pinnedGeneration(): bigint | undefined {
    return this.pinned?.generation;
  }
  get releaseBase(): bigint {
    return this.shared.releaseBase;
  }
  get writeProps(): Readonly<Record<string, string>> {
    return this.shared.writeProps;
  }
  /** Commits of this process in flight now. */
  inFlight(): InFlightCommit[] {
    return [...this.shared.inFlight];
  }

  /**
   * A read-only handle fixed to a lake generation or a time. With `history`,
   * a generation whose snapshots gc expired is read from the current log
   * restricted to its runs (see "Runs reads" above; `runsReadOf`).
   */
  pin(at: { generation: bigint } | { asOf: Date | number }, opts: { history?: boolean } = {}): EventLog {
    const { lake } = this.shared;
    const generation = 'generation' in at ? at.generation : lake.catalog.generationAt(at.asOf instanceof Date ? at.asOf.getTime() : at.asOf);
    const now = lake.catalog.pointerGeneration();
    if (generation > now) throw new Error(`generation ${generation} is in the future (the lake is at ${now})`);
    return new EventLog(this.shared, { generation, end: this.lease(generation, `pin ${generation}`), history: opts.history === true });
  }

  /** A catalog lease on `generation`, renewed until the returned function ends it (none on a read-only lake). */
  private lease(generation: bigint, note: string): () => void {
    const { lake } = this.shared;
    // a read-only lake cannot record a lease: the pin is then invisible to gc elsewhere (Lake.notes says so)
    if (lake.readOnly) return () => undefined;
    let lease: ReturnType<typeof lake.catalog.beginLease>;
    try {
      lease = lake.catalog.beginLease({ releaseBase: generation, note, ttlMs: 60_000 });
    } catch (e) {
      // nor can a full disk record it: the pin reads without one, taking the risk a read-only open
      // takes (a gc elsewhere cannot see it) — better than no answer on a full disk
      if (!diskFull(e)) throw e;
      return () => undefined;
    }
    const timer = setInterval(() => {
      try {
        lease.renew();
      } catch {
        // expired: GC's horizon is then the only guard
      }
    }, 20_000);
    timer.unref();
    return () => {
      clearInterval(timer);
      lease.end();
    };
  }

  /**
   * How this handle reads `generation` (default its own): undefined = from
   * the tables' snapshots at it; a `RunsRead` = from the log at a later
   * generation restricted to runs (only a `history` pin, only for its own
   * generation, only when the snapshots there are expired). Decided once, at
   * the first read; throws ExpiredGenerationError when the log after the
   * generation cannot be told apart by runs.
   */
  runsReadOf(generation: bigint = this.readGeneration()): Promise<RunsRead | undefined> {
    const p = this.pinned;
    if (!p?.history || generation !== p.generation) return Promise.resolve(undefined);
    this.runsRead ??= this.decideRunsRead(p.generation);
    return this.runsRead;
  }

  private async decideRunsRead(g: bigint): Promise<RunsRead | undefined> {
    const { lake, expired } = this.shared;
    if (!expired.has(g)) {
      if (await this.snapshotsReadable(g)) return undefined;
      expired.add(g);
    }
    const at = lake.catalog.pointerGeneration();
    if (!this.released) this.extraEnds.push(this.lease(at, `pin ${g} (runs read at ${at})`));
    const exclude = new Set<string>();
    const logTables = new Set(runTables().map(qualified));
    for (const e of lake.catalog.generations({ limit: Number(at - g), before: at + 1n })) {
      if (e.generation <= g) continue;
      const run = parseRunNote(e.note);
      if (run && !e.foreign) {
        exclude.add(run.run);
        continue;
      }
      const touched = e.tables.map((t) => identToString(t.ident)).filter((t) => logTables.has(t));
      if (touched.length === 0 || (!e.foreign && movesRowsOnly(e.note))) continue;
      throw new ExpiredGenerationError(
        `lake generation ${g}: its snapshots were expired by gc, and it cannot be rebuilt from the event log: generation ${e.generation} ` +
          `(${e.foreign ? 'a commit of another engine' : `note ${JSON.stringify(e.note)}`}) changed ${touched.join(', ')} outside a run, so its events ` +
          `cannot be told apart from those at ${g} — nothing answered (read a generation at or after ${e.generation}, or within gc's retention)`,
      );
    }
    return { generation: g, at, exclude };
  }

  /**
   * Can the log's tables be read at `g` from their own snapshots? Each table
   * the catalog had at `g`: its metadata file is there, its snapshot is still
   * listed by the table's current metadata (not expired) and its manifest
   * list is there. Reads only metadata.
   */
  private async snapshotsReadable(g: bigint): Promise<boolean> {
    const { lake } = this.shared;
    if (g === lake.catalog.pointerGeneration()) return true;
    const then = lake.catalog.pointersAt(g);
    for (const name of runTables()) {
      const loc = then.get(qualified(name));
      if (!loc) continue;
      if (!(await lake.io.exists(loc))) return false;
      const m = await readMetadata(lake.io, loc);
      if (m.currentSnapshotId === undefined) continue;
      const snap = m.snapshots.find((s) => s.snapshotId === m.currentSnapshotId);
      const now = lake.catalog.loadTable(ident(name));
      if (!snap || !now) return false;
      const current = now.metadataLocation === loc ? m : await readMetadata(lake.io, now.metadataLocation);
      if (!current.snapshots.some((s) => s.snapshotId === snap.snapshotId)) return false;
      if (!(await lake.io.exists(snap.manifestList))) return false;
    }
    return true;
  }

  /**
   * A read-only handle at `generation` that takes no lease of its own: for a
   * caller that already protects that generation (a run's lease). Closing it
   * releases nothing.
   */
  view(generation: bigint): EventLog {
    return new EventLog(this.shared, { generation, end: () => undefined });
  }

  /**
   * Begin a run: one ingest (or universe add, repo remove) that lands in one
   * commit (see run.ts). It is in flight, here and as a catalog lease, from
   * now until its commit or abort.
   */
  async beginRun(opts: BeginRunOptions): Promise<Run> {
    this.refuse('begin a run');
    const { lake, inFlight } = this.shared;
    return Run.begin(this, opts, (releaseBase, note) => {
      const entry: InFlightCommit = { note, releaseBase, startedMs: Date.now() };
      inFlight.add(entry);
      const endLease = lake.hooks.begin!(releaseBase);
      return () => {
        inFlight.delete(entry);
        endLease();
      };
    });
  }

  /** The generation reads of this handle see (pinned, or the current one). */
  readGeneration(): bigint {
    return this.pinned?.generation ?? this.shared.lake.catalog.pointerGeneration();
  }

  /**
   * Load a table as this handle sees it (at `generation` if given). On a runs
   * read, `code_sources` (rows never removed) is the table at the read
   * generation; the log's tables are refused (their rows need the runs
   * restriction: `scan`, `scanRuns`), and so is any other table.
   */
  async table(name: string, generation?: bigint): Promise<Table | undefined> {
    const { lake } = this.shared;
    const id = ident(name);
    let g = generation ?? this.pinned?.generation;
    if (g === undefined) return lake.tableExists(id) ? lake.loadTable(id) : undefined;
    const runs = await this.runsReadOf(g);
    if (runs) {
      if (name !== CODE_SOURCES) {
        throw new Error(`table ${qualified(name)} as of lake generation ${g}: that generation's snapshots are expired and it is read from the event log at ${runs.at} by runs; read the log through EventLog.scan or scanRuns — nothing read`);
      }
      g = runs.at;
    }
    const loc = lake.catalog.pointerAt(id, g);
    return loc ? lake.loadTable(id, { generation: g }) : undefined;
  }

  /** Is the lake split (as this handle sees it; a runs read: as the generation it reads)? */
  async ringSplit(generation?: bigint): Promise<boolean> {
    const g = generation ?? this.pinned?.generation;
    const runs = g === undefined ? undefined : await this.runsReadOf(g);
    const t = await this.tableAt(CODE_NODE_EVENTS, runs ? runs.at : g);
    return t ? isRingSplit(t.metadata) : false;
  }

  /** A table at `g` (undefined: the current one), no runs restriction. */
  private async tableAt(name: string, g: bigint | undefined): Promise<Table | undefined> {
    const { lake } = this.shared;
    const id = ident(name);
    if (g === undefined) return lake.tableExists(id) ? lake.loadTable(id) : undefined;
    const loc = lake.catalog.pointerAt(id, g);
    return loc ? lake.loadTable(id, { generation: g }) : undefined;
  }

  private refuse(what: string): void {
    if (this.pinned) throw new PinnedError(`a pinned read handle cannot ${what}`);
    if (this.shared.readOnly) throw new PinnedError(`a read-only handle cannot ${what}`);
  }

  /**
   * Run `fn` as one commit of this log: under the commit lock, with
   * `releaseBase` recorded and the commit registered in flight (here and as a
   * catalog lease) until it lands or fails.
   */
  async commit<T>(note: string, fn: () => Promise<T>): Promise<T> {
    this.refuse(note);
    const release = await this.shared.commitLock.lock();
    const { lake } = this.shared;
    const entry: InFlightCommit = { note, releaseBase: lake.catalog.pointerGeneration(), startedMs: Date.now() };
    this.shared.releaseBase = entry.releaseBase;
    this.shared.inFlight.add(entry);
    try {
      return await lake.inFlight(note, fn);
    } finally {
      this.shared.inFlight.delete(entry);
      release();
    }
  }

  /**
   * Append events of one kind. Ring rows go where the mode in force at commit
   * time says; a switch in between (here or in another process) makes the
   * commit fail its guard, and the rows are routed again. While a live ring
   * freeze is on, the append waits (at most `frozenWaitMs`, default 10 min)
   * and then routes by the mode it finds.
   */
  async append(kind: Kind, rows: EventRow[], opts: { frozenWaitMs?: number } = {}): Promise<AppendReport> {
    this.refuse('append');
    if (rows.length === 0) return { rows: 0, ring: 0, generation: this.shared.lake.catalog.pointerGeneration() };
    return this.appendBatches(kind, [rowsToBatch(kindSchema(kind), rows, kind)], opts);
  }

  /**
   * `append` for rows already in columnar form: batches of the kind's schema
   * (its fields, in order) holding canonical values — no coercion is done here.
   * Ring rows are routed exactly as `append` routes them (by the repo column,
   * per the mode in force at commit time, with the same freeze wait and mode
   * retry). All batches land in one commit.
   */
  async appendBatches(kind: Kind, batches: Batch[], opts: { frozenWaitMs?: number } = {}): Promise<AppendReport> {
    this.refuse('append');
    const { all, ring, rest } = routeBatches(kind, batches, 'appendBatches');
    if (all.length === 0) return { rows: 0, ring: 0, generation: this.shared.lake.catalog.pointerGeneration() };
    const waitMs = opts.frozenWaitMs ?? FROZEN_WAIT_MS;
    const t0 = Date.now();
    let modeRetries = 0;
    for (let frozenTries = 0; ; ) {
      try {
        return await this.commit(`append ${kind}`, async () => {
          const { lake } = this.shared;
          const node = await lake.loadTable(ident(CODE_NODE_EVENTS));
          frozenCheck(lake, node.metadata);
          const split = isRingSplit(node.metadata);
          const plan: { table: Table; batches: Batch[] }[] = [];
          const src = kind === 'node' ? node : await lake.loadTable(ident(tableName(kind)));
          const srcBatches = split ? rest : all;
          if (srcBatches.length > 0) plan.push({ table: src, batches: srcBatches });
          if (split && ring.length > 0) plan.push({ table: await lake.loadTable(ident(ringTableName(kind))), batches: ring });
          return await this.commitAppends(plan, split, kind);
        });
      } catch (e) {
        if (e instanceof ModeChanged && modeRetries++ < 5) continue;
        if (e instanceof Frozen) {
          const waited = Date.now() - t0;
          if (waited >= waitMs) {
            throw new Error(
              `append ${kind}: ${e.message}, and it stayed frozen for ${waited} ms (limit ${waitMs} ms) — nothing appended; retry when the ring split/unsplit has switched (a freeze whose lease is dead is ignored)`,
            );
          }
          const cap = Math.min(80, 10 * 2 ** Math.min(frozenTries++, 3));
          await sleep(Math.min(20 + Math.random() * cap, Math.max(1, waitMs - waited)));
          continue;
        }
        throw e;
      }
    }
  }

  /** Write each table's batches, then commit all appends with the mode guard in one catalog transaction. */
  private async commitAppends(plan: { table: Table; batches: Batch[] }[], split: boolean, kind: Kind): Promise<AppendReport> {
    const { lake } = this.shared;
    const count = (bs: Batch[]): number => bs.reduce((s, b) => s + b.numRows, 0);
    const guard = modeGuard(lake, split);
    const written: string[] = [];
    let state: StateDelta | undefined;
    let landed = false;
    try {
      const targets: Omit<CommitTarget, 'io'>[] = [];
      for (const p of plan) {
        const files = await p.table.writeDataFiles(p.batches);
        for (const f of files) written.push(f.file.filePath);
        const update = p.table.appendUpdate(files, { 'mimir.kind': kind });
        const isNode = p.table.ident!.name === CODE_NODE_EVENTS;
        targets.push({ ident: p.table.ident!, update: isNode ? guarded(update, guard) : update });
      }
      // the serving state tables change in the same commit (docs/design.md)
      state = await StateDelta.open(this);
      if (state) {
        for (const p of plan) await state.events(kind, p.batches);
        for (const t of await state.finish()) targets.push({ ident: t.ident, update: t.update(), assertOnly: t.assertOnly });
      }
      if (!targets.some((t) => t.ident.name === CODE_NODE_EVENTS)) {
        targets.push({ ident: ident(CODE_NODE_EVENTS), update: checkUpdate(guard), assertOnly: true });
      }
      const res = await lake.commit(targets, `append ${kind}`);
      landed = true;
      const ringRows = plan.filter((p) => p.table.ident!.name.endsWith('_ring')).reduce((s, p) => s + count(p.batches), 0);
      return { rows: plan.reduce((s, p) => s + count(p.batches), 0), ring: ringRows, generation: res.generation };
    } catch (e) {
      // a failure after the commit landed never deletes what it committed
      if (landed) throw e;
      // the commit did not land: the data files written for it are ours to remove
      for (const f of written) await lake.io.delete(f).catch(() => undefined);
      await state?.abort();
      throw e;
    }
  }

  /**
   * Scan one kind, merged per the mode of the generation read: unified = the
   * source table; split = the ring table plus the source table's non-ring rows.
   * Every table is read at one lake generation, so a merge never mixes states.
   * A runs read (expired generation) scans the generation it reads, without
   * the rows of the runs it excludes.
   */
  async *scan(kind: Kind, opts: { filter?: Expr; columns?: string[]; generation?: bigint } = {}): AsyncGenerator<Batch> {
    const g = opts.generation ?? this.readGeneration();
    const runs = await this.runsReadOf(g);
    if (!runs) {
      yield* this.scanAt(kind, opts.filter, opts.columns, g);
      return;
    }
    yield* withoutRuns(this.scanAt(kind, opts.filter, withRunColumn(opts.columns), runs.at), runs.exclude, opts.columns);
  }

  private async *scanAt(kind: Kind, filter: Expr | undefined, columns: string[] | undefined, g: bigint): AsyncGenerator<Batch> {
    const split = await this.ringSplit(g);
    const src = await this.tableAt(tableName(kind), g);
    if (!split) {
      if (src) yield* src.scan({ filter, columns }).batches();
      return;
    }
    // a filter that holds no ring row (`repo` pinned to repos other than @universe: a repo's item, its
    // history) leaves the ring table unread: its manifests (one per universe add) are never opened
    const ring = filter && excludesRepo(filter, UNIVERSE_REPO) ? undefined : await this.tableAt(ringTableName(kind), g);
    if (ring) yield* ring.scan({ filter, columns }).batches();
    if (src) {
      const notRing = ne(COL_REPO, UNIVERSE_REPO);
      yield* src.scan({ filter: filter ? and(filter, notRing) : notRing, columns }).batches();
    }
  }

  /**
   * Scan `ingest_runs` as this handle sees it (a runs read: at the generation
   * it reads, without the rows of the runs it excludes). Nothing when the
   * table did not exist.
   */
  async *scanRuns(opts: { filter?: Expr; columns?: string[]; generation?: bigint } = {}): AsyncGenerator<Batch> {
    const g = opts.generation ?? this.readGeneration();
    const runs = await this.runsReadOf(g);
    const t = await this.tableAt(INGEST_RUNS, runs ? runs.at : g);
    if (!t) return;
    if (!runs) {
      yield* t.scan({ filter: opts.filter, columns: opts.columns }).batches();
      return;
    }
    yield* withoutRuns(t.scan({ filter: opts.filter, columns: withRunColumn(opts.columns) }).batches(), runs.exclude, opts.columns);
  }

  /** Rows of a scan as objects (small results and tests). */
  async rows(kind: Kind, opts: { filter?: Expr; columns?: string[]; generation?: bigint } = {}): Promise<Record<string, Value>[]> {
    const out: Record<string, Value>[] = [];
    for await (const b of this.scan(kind, opts)) out.push(...batchRows(b));
    return out;
  }

  /**
   * Current state: the events folded per `id` in commit order — the latest
   * event wins, `remove` hides the id.
   */
  async state(kind: Kind, filter?: Expr, opts: { generation?: bigint } = {}): Promise<Map<string, Record<string, Value>>> {
    const latest = new Map<string, { seq: bigint; row: Record<string, Value> }>();
    for await (const b of this.scan(kind, { filter, generation: opts.generation })) {
      const seq = b.source?.sequenceNumber ?? 0n;
      for (const row of batchRows(b)) {
        const id = row[COL_ID] as string;
        const prev = latest.get(id);
        if (!prev || seq >= prev.seq) latest.set(id, { seq, row });
      }
    }
    const out = new Map<string, Record<string, Value>>();
    for (const [id, { row }] of latest) if (row[COL_OP] !== 'remove') out.set(id, row);
    return out;
  }

  /** Release a pinned handle's lease, and the lake if this log opened it. */
  close(): void {
    if (this.released) return;
    this.released = true;
    for (const end of this.extraEnds) end();
    if (this.pinned) this.pinned.end();
    else if (this.shared.ownsLake) this.shared.lake.close();
  }
}

/** A projection that includes `run` (undefined = every column, run among them). */
function withRunColumn(columns: string[] | undefined): string[] | undefined {
  return columns === undefined || columns.includes(COL_RUN) ? columns : [...columns, COL_RUN];
}

/**
 * Batches without the rows whose `run` is in `exclude`, projected back to
 * `columns` (the run column dropped when the caller did not ask for it).
 * Keeps each batch's source (file, sequence number) and row order.
 */
async function* withoutRuns(batches: AsyncIterable<Batch>, exclude: ReadonlySet<string>, columns: string[] | undefined): AsyncGenerator<Batch> {
  for await (const b of batches) {
    const runAt = b.fields.findIndex((f) => f.name === COL_RUN);
    if (runAt < 0) throw new Error(`a runs read of ${b.source?.file ?? 'a batch'}: no ${COL_RUN} column — nothing read`);
    const drop = columns !== undefined && !columns.includes(COL_RUN);
    const keepCols = b.fields.map((_, i) => i).filter((i) => !(drop && i === runAt));
    const run = b.columns[runAt]!;
    const rows: number[] = [];
    for (let i = 0; i < b.numRows; i++) if (!exclude.has(run[i] as string)) rows.push(i);
    if (rows.length === 0) continue;
    const all = rows.length === b.numRows;
    yield {
      fields: keepCols.map((i) => b.fields[i]!),
      numRows: rows.length,
      columns: keepCols.map((i) => (all ? b.columns[i]! : rows.map((r) => b.columns[i]![r]!))),
      ...(b.source ? { source: b.source } : {}),
    };
  }
}

/**
 * Does `e` reject every row whose `col` is `value`? (By the shape of the
 * expression alone: `col = x`, `col IN (…)` without `value`, an `and` with
 * such an arm, an `or` whose every arm is such; anything else: no.)
 */
export function excludesRepo(e: Expr, value: string, col: string = COL_REPO): boolean {
  switch (e.op) {
    case 'false':
      return true;
    case 'eq':
      return e.col === col && e.value !== value;
    case 'in':
      return e.col === col && !e.values.includes(value);
    case 'and':
      return e.args.some((a) => excludesRepo(a, value, col));
    case 'or':
      return e.args.length > 0 && e.args.every((a) => excludesRepo(a, value, col));
    default:
      return false;
  }
}
