// A pool of worker threads that extract crates (parse + graph), so parsing
// uses every core while the main thread diffs and writes. Each worker loads
// the grammar once. With `workers: 0` the same jobs run in this thread.
//
// Invariant: every job settles — with its graph, or with an error when
// extraction threw, ran past the limit or its worker died (the worker is then
// replaced); a job that was done within the limit is never failed as late
// (its worker marks it done in shared memory before replying), and a job
// claimed by a worker stopped after it left the pool is offered again. Read-only.
// Every job is offered to every worker and run by the one that claims it first
// (a shared compare-and-swap), so the workers take the next crate themselves
// while this thread is busy writing. A job may wait for the summary another
// job of the pool makes (`awaits`): the worker that makes it posts it to the
// other workers directly, and a worker claims a job only once it holds every
// summary the job names, so a dependant starts without a turn of this thread.
// With `room`, a worker claims a job only while the results claimed and not
// yet `consumed` stay within the room's bounds (shared counters).
// Messages: a dependency summary is posted to a worker once and named by id
// after; the worker keeps it until `forget` (DepSummaries calls it for the
// lake's summaries, ingest for those a job makes, when no job of the run will
// take them again; a worker started later is told the made ones already
// forgotten) and no offer it holds names it. A lake summary posted to a worker
// started after its `forget` stays with that worker until the pool closes. Result batches cross as
// dictionaries where values repeat.
// Creating a pool sets V8's tier-up budget for the process (see `tierUpLater`).
import { readFileSync } from 'node:fs';
import { deserialize, serialize, setFlagsFromString } from 'node:v8';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { extractCrate, loadRust, type CrateGraph, type DepCrate, type ExtractInput, type RustParser } from '../extract/index.ts';
import { summaryOf } from './deps.ts';
import type { Batch, NestedField, Value } from '../lake/spec/types.ts';
import { addBatch, edgeFields, nodeFields, type Fields, type RowContext } from './rows.ts';

/** One crate to extract (plain data: it crosses the thread boundary). */
export interface ExtractJob {
  repo: string;
  krate: string;
  rootDir: string;
  targets: string[];
  deps: [string, { krate: string; repo?: string }][];
  maxFileBytes?: number;
  /** The package's edition, its active features (expanded) and build script (see extract's ExtractInput). */
  edition: string;
  features: string[];
  buildScript: string | null;
  /** A target crate's own name in paths and extra cfg names (extract's ExtractInput). */
  ident?: string;
  cfgNames?: string[];
  /** The release profile's cfg (`debug_assertions` off; extract's ExtractInput). */
  release?: boolean;
  /**
   * Summaries of the dependencies to resolve into (ingest/deps.ts), in order:
   * a summary, or `{ awaits: id }` for the one the pool's job of that
   * `summaryId` makes (the job waits for it; left out when its crate has none).
   */
  depCrates?: (DepCrate | Awaits)[];
  /** Return this crate's own summary too (a later job of the run depends on it). */
  summary?: boolean;
  /** Offer the summary, under this id (`ExtractPool.summaryId`), to the pool's jobs that await it. Implies `summary`. */
  summaryId?: number;
  /**
   * The lake has no event of this crate: build its node and edge rows here
   * (all `add`, stamped with this run, as columnar batches of the kinds'
   * schemas) instead of returning those facts.
   */
  addRows?: { run: string; ts: bigint };
  /**
   * Among the jobs offered and not yet claimed, a free worker takes the one
   * of highest priority (default 0; the oldest among equals): a crate that
   * heads a long chain of dependants starts before smaller ones submitted
   * earlier.
   */
  priority?: number;
}

/** A summary another job of the pool makes (see ExtractJob.depCrates). */
export interface Awaits { awaits: number }

export type ExtractReply =
  | { seq: number; ok: true; result: WireResult }
  | { seq: number; ok: false; error: string; ms: number };

/**
 * A column as it crosses the thread boundary: its values, or (when they
 * repeat: repo, krate, run, ts, op, kinds, files, …) its distinct values and
 * one code per row. A structured clone copies every string it meets, so a
 * column of one krate name 5 000 times was 5 000 strings to write, read and
 * collect; as a dictionary it is one string and an Int32Array.
 */
type WireColumn = { values: Value[] } | { dict: Value[]; codes: Int32Array };
interface WireBatch { fields: NestedField[]; numRows: number; columns: WireColumn[] }
/** An ExtractResult as a worker posts it (its batches as WireBatch). */
export type WireResult = Omit<ExtractResult, 'batches'> & { batches?: { node: WireBatch; edge: WireBatch } };

/** Rows sampled to decide whether a column goes as a dictionary. */
const WIRE_SAMPLE = 64;

function wireColumn(col: Value[], transfer: ArrayBuffer[]): WireColumn {
  const n = col.length;
  if (n < 2 * WIRE_SAMPLE) return { values: col };
  // mostly distinct values (ids, paths, signatures, hashes) go as they are
  const seen = new Set<Value>();
  for (let i = 0; i < WIRE_SAMPLE; i++) seen.add(col[Math.floor((i * (n - 1)) / (WIRE_SAMPLE - 1))]!);
  if (seen.size > WIRE_SAMPLE / 4) return { values: col };
  const index = new Map<Value, number>();
  const dict: Value[] = [];
  const codes = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = col[i]!;
    let c = index.get(v);
    if (c === undefined) {
      c = dict.length;
      index.set(v, c);
      dict.push(v);
    }
    codes[i] = c;
  }
  transfer.push(codes.buffer);
  return { dict, codes };
}

function toWire(b: Batch, transfer: ArrayBuffer[]): WireBatch {
  return { fields: b.fields, numRows: b.numRows, columns: b.columns.map((c) => wireColumn(c, transfer)) };
}

function fromWire(b: WireBatch): Batch {
  return {
    fields: b.fields,
    numRows: b.numRows,
    columns: b.columns.map((c) => {
      if ('values' in c) return c.values;
      const { dict, codes } = c;
      const out = new Array<Value>(codes.length);
      for (let i = 0; i < codes.length; i++) out[i] = dict[codes[i]!]!;
      return out;
    }),
  };
}

/** A result as a worker posts it, and the ArrayBuffers to transfer with it (see WireColumn). */
export function wireResult(r: ExtractResult): { result: WireResult; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  if (!r.batches) return { result: r as WireResult, transfer };
  const { batches, ...rest } = r;
  return { result: { ...rest, batches: { node: toWire(batches.node, transfer), edge: toWire(batches.edge, transfer) } }, transfer };
}

/** The ExtractResult a worker posted (its batches back as plain columns). */
export function fromWireResult(r: WireResult): ExtractResult {
  if (!r.batches) return r as ExtractResult;
  const { batches, ...rest } = r;
  return { ...rest, batches: { node: fromWire(batches.node), edge: fromWire(batches.edge) } };
}

export interface ExtractResult {
  /** With `addRows`, `nodes` and `edges` are empty: they are in `batches`. */
  graph: CrateGraph;
  /** With `summary`: what dependants resolve against (from a worker, as v8.serialize wrote it). */
  summary?: DepCrate | Uint8Array;
  batches?: { node: Batch; edge: Batch };
  /** Time the extraction took in its thread. */
  ms: number;
}

/** What extract gets for a job (in the thread that runs it). */
export function extractInput(job: ExtractJob & { depCrates?: DepCrate[] }, parser: RustParser): ExtractInput {
  return {
    repo: job.repo, krate: job.krate, rootDir: job.rootDir, targets: job.targets, deps: new Map(job.deps),
    // synchronous: the thread has nothing else to do meanwhile, and a promise read is an open,
    // a stat, reads and a close, each a round trip through libuv's thread pool
    readFile: async (p) => readFileSync(p), parser, limits: { maxFileBytes: job.maxFileBytes },
    edition: job.edition, features: job.features, buildScript: job.buildScript, depCrates: job.depCrates,
    ...job.ident ? { ident: job.ident } : {}, ...job.cfgNames ? { cfgNames: job.cfgNames } : {}, ...job.release ? { release: true } : {},
  };
}

/** The result of a job from its graph (in the thread that extracted it). */
export function jobResult(job: ExtractJob, graph: CrateGraph, ms: number): ExtractResult {
  const summary = job.summary || job.summaryId !== undefined ? { summary: summaryOf(job.krate, job.repo, graph) } : {};
  if (!job.addRows) return { graph, ms, ...summary };
  const ctx: RowContext = { repo: job.repo, krate: job.krate, run: job.addRows.run, ts: job.addRows.ts };
  const nodes = new Map<string, Fields>();
  for (const n of graph.nodes) nodes.set(n.id, nodeFields(n));
  const node = addBatch('node', ctx, nodes);
  nodes.clear();
  const edges = new Map<string, Fields>();
  for (const e of graph.edges) edges.set(e.id, edgeFields(e));
  const edge = addBatch('edge', ctx, edges);
  return { graph: { ...graph, nodes: [], edges: [] }, batches: { node, edge }, ms, ...summary };
}

/** The facts (nodes, edges and their rows) of a result: what its room counts. */
export function factsOf(r: Pick<ExtractResult | WireResult, 'graph' | 'batches'>): number {
  return r.graph.nodes.length + r.graph.edges.length + (r.batches ? r.batches.node.numRows + r.batches.edge.numRows : 0);
}

/**
 * Bounds on the results the workers may hold: claimed and not yet `consumed`
 * by the caller (running, posted, or waiting to be taken), at most `results`
 * of them, and no new claim once they hold `facts` facts or more (a claim
 * does not know its crate's size: the bound is passed by at most one crate
 * per worker). With none held, a worker may always claim one.
 */
export interface Room { results: number; facts: number }

/** Slots of the shared room counters (WorkerData.room.ctl). */
export const ROOM_RESULTS = 0;
export const ROOM_FACTS = 1;
/** Set by a worker that found no room: the pool wakes the workers when it frees some. */
export const ROOM_WAITING = 2;

/** What a worker starts with. */
export interface WorkerData {
  id: number;
  /** Ports to the workers started with it: a summary it makes goes to them (MadeMessage). */
  peers: MessagePort[];
  room: (Room & { ctl: Int32Array }) | null;
  /** Added to the worker thread's nice value at its start (see WORKER_NICE). */
  nice: number;
}

/**
 * How much lower than the main thread's the workers' scheduling priority is
 * (Linux nice, per thread). The main thread is the run's critical path: it
 * diffs and writes what the workers extract and works alone at the end. With
 * two workers on two cores, equal shares gave it about two thirds of a core
 * while they ran; at +5 it gets a core when it has work and the workers take
 * the rest. bench:ingest on 2 cores, 6 alternated pairs (quiet box): end to
 * end 11.13 s mean at +0, 10.56 s at +5 (faster in 5 pairs of 6). With more
 * cores than busy threads it changes nothing. Where a thread's nice cannot be
 * set (not Linux), the workers run as before.
 */
export const WORKER_NICE = 5;

interface Pending {
  seq: number;
  job: ExtractJob;
  resolve: (r: ExtractResult) => void;
  reject: (e: Error) => void;
  /** Shared with every worker (see JobMessage): [0] = the id of the worker that claimed the job (0 while none has), [1] = 1 once it is done and its result posted. */
  claim: Int32Array;
  /** The job's time limit, set once its worker says it started. */
  timer: NodeJS.Timeout | null;
}

interface Slot {
  /** Unique in the process (a replaced worker's successor gets a new one): what a claim holds. */
  id: number;
  worker: Worker;
  /** The dependency summaries the worker holds, by their ids (see JobMessage). */
  held: Map<DepCrate, number>;
  /** Started to replace one: it has no peers, so the summaries workers make reach it through this thread. */
  late: boolean;
  /** Ids of the made summaries this thread posted to it. */
  got: Set<number>;
}

/** A summary a job of the pool makes (ExtractJob.summaryId), as this thread knows it. */
interface Made {
  /** undefined: not made yet; null: its crate has none. */
  value: DepCrate | Uint8Array | null | undefined;
  /** Made by a worker with peers: those have it from that worker. */
  byPeers: boolean;
  /** Unsettled jobs that await it (a replacement worker gets it from here). */
  users: number;
  forgotten: boolean;
  /** Jobs run in this thread that wait for it. */
  waiters: ((v: DepCrate | null) => void)[];
}

/**
 * A job as offered to the workers: every worker gets every job, and the first
 * to claim it (compare-and-swap of `claim[0]` from 0 to its id) runs it; the
 * others skip it. So a worker that finishes a crate starts the next one
 * without this thread: while this thread is busy writing (seconds of Parquet
 * encoding at a time), the workers keep taking jobs in order and no core
 * waits for it to hand out work. A dependency summary goes whole the first
 * time a worker gets it, then by id alone: the worker keeps it until told to
 * forget it. Summaries were most of the bytes posted to workers (the same
 * crate's summary to every crate depending on it: 56 MB of messages for
 * bench:ingest's 103 crates, ~12 MB of distinct summaries).
 */
export interface JobMessage {
  seq: number;
  /** A view of a SharedArrayBuffer (the same memory in every worker): [claimed by, done]. */
  claim: Int32Array;
  /**
   * A summary goes whole as `bytes` (v8.serialize: serialized once, whatever the number of workers;
   * a worker decodes it when it claims a job that needs it; null: its crate has none); without
   * `bytes`, the worker holds it or it comes later (MadeMessage) and the job waits for it.
   */
  job: Omit<ExtractJob, 'depCrates'> & { depCrates?: { id: number; bytes?: Uint8Array | null }[] };
}

/** A summary made (by a job of the pool, or given by its caller) for the jobs that await it; null: none. */
export interface MadeMessage {
  made: number;
  bytes: Uint8Array | null;
}

/**
 * The pool has room for results again (see Room). A worker posts it to the
 * pool when it gave back a place another worker may have found taken (its
 * claim lost the race): the pool wakes every worker, as when it frees room.
 */
export interface WakeMessage {
  wake: true;
}

/** The worker may drop these summaries: no job will name them again. */
export interface ForgetMessage {
  forget: number[];
}

/** A worker claimed job `seq` at `at` (Date.now() in the worker): its time limit runs from then. */
export interface ClaimedMessage {
  claimed: number;
  at: number;
}

/** What a worker posts: a claim, a job's outcome, or a wake for the others. */
export type WorkerMessage = ClaimedMessage | ExtractReply | WakeMessage;

/** What a worker receives (from this thread, or a made summary from a peer). */
export type PoolMessage = JobMessage | ForgetMessage | MadeMessage | WakeMessage;

/**
 * V8's interrupt budget (bytecode run before a function is considered for
 * optimization) while extracting, for `mimir ingest` and library callers
 * (bench:ingest, tests) alike: the value bin/mimir.js sets for questions run
 * through the CLI bundle (commands run from dist/'s modules, ingest among
 * them, do not get that one). With V8's default (66 KiB) the resolver's and
 * the macro matcher's large polymorphic functions were optimized early,
 * deoptimized on the next object shape ("wrong map") and compiled again, up
 * to ~20 times each: TurboFan on V8's background threads was ~17-25 s of the
 * ~45-65 s of CPU of bench:ingest's corpus (loaded box); ~7-9 s with this
 * budget (270 KiB: ~15 s, 540 KiB: ~9-10 s), the workers' own CPU about the
 * same, and the graph identical.
 */
export const EXTRACT_INTERRUPT_BUDGET = 1_048_576;

let tieredUp = false;

/**
 * Set EXTRACT_INTERRUPT_BUDGET once per process, before the first worker
 * starts (the flag is process-wide: it applies to every isolate, and to
 * functions whose budget is set after it).
 */
function tierUpLater(): void {
  if (tieredUp) return;
  tieredUp = true;
  setFlagsFromString(`--interrupt-budget=${EXTRACT_INTERRUPT_BUDGET}`);
}

/** Default limit on one crate's extraction in a worker (then the worker is replaced and the crate reported). */
export const DEFAULT_EXTRACT_TIMEOUT_MS = 120_000;

/** How a worker thread loads worker.ts: compiled (.js) directly; as TypeScript it registers tsx's loader first. */
function workerEntry(): { url: URL; execArgv?: string[] } {
  const entry = new URL('./worker.ts', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) return { url: new URL('./worker.js', import.meta.url) };
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const boot = `import { register } from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(entry.href)});`;
  return { url: new URL(`data:text/javascript,${encodeURIComponent(boot)}`) };
}

export class ExtractPool {
  private readonly slots: Slot[] = [];
  /** Jobs offered to the workers and not settled, by seq (oldest first). */
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private lastSlotId = 0;
  private closed = false;
  private local: Promise<RustParser> | null = null;
  /** Ids of the dependency summaries posted (JobMessage), and those no job will need any more (`forget`). */
  private readonly summaryIds = new WeakMap<DepCrate, number>();
  private lastSummaryId = 0;
  /** Each summary serialized once, for every worker it goes to. */
  private readonly summaryBytes = new WeakMap<DepCrate, Uint8Array>();
  /** Summaries jobs of the pool make, by id (ExtractJob.summaryId). */
  private readonly made = new Map<number, Made>();
  /** The room's shared counters (see Room), when the pool has one. */
  private readonly room: (Room & { ctl: Int32Array }) | null;

  /**
   * `timeoutMs` bounds one crate's extraction in a worker: past it the worker
   * is terminated and replaced, and the job fails (a pathological input must
   * not stall a run). A job's clock starts when a worker claims it (so it
   * runs at least that long). Jobs run in this thread (`workers: 0`) have no
   * limit. With `room`, the caller says when it is done with each result
   * (`consumed`); without, results are not bounded.
   */
  constructor(readonly workers: number, private readonly timeoutMs = DEFAULT_EXTRACT_TIMEOUT_MS, room?: Room) {
    tierUpLater();
    this.room = room && workers > 0 ? { ...room, ctl: new Int32Array(new SharedArrayBuffer(3 * 4)) } : null;
    // every pair of workers started now shares a channel
    const peers: MessagePort[][] = Array.from({ length: workers }, () => []);
    for (let i = 0; i < workers; i++) {
      for (let j = i + 1; j < workers; j++) {
        const { port1, port2 } = new MessageChannel();
        peers[i]!.push(port1);
        peers[j]!.push(port2);
      }
    }
    for (let i = 0; i < workers; i++) this.slots.push(this.spawn(peers[i]!));
  }

  private spawn(peers: MessagePort[] | null): Slot {
    const { url, execArgv } = workerEntry();
    const id = ++this.lastSlotId;
    const workerData: WorkerData = { id, peers: peers ?? [], room: this.room, nice: WORKER_NICE };
    const worker = new Worker(url, { workerData, transferList: peers ?? [], ...execArgv ? { execArgv } : {} });
    const slot: Slot = { id, worker, held: new Map(), late: peers === null, got: new Set() };
    worker.on('message', (m: WorkerMessage) => {
      if ('wake' in m) {
        this.wake();
        return;
      }
      if ('claimed' in m) {
        const p = this.pending.get(m.claimed);
        if (p && !p.timer) p.timer = setTimeout(() => this.expire(slot, p), Math.max(0, this.timeoutMs - (Date.now() - m.at)));
        return;
      }
      const p = this.pending.get(m.seq);
      if (!p) {
        // a result past its time limit (the job failed; its room is free but for the facts the worker counted)
        if (m.ok && this.room) Atomics.sub(this.room.ctl, ROOM_FACTS, factsOf(m.result));
        return;
      }
      this.settle(p, !m.ok);
      if (!m.ok) {
        p.reject(new Error(m.error));
        return;
      }
      const result = fromWireResult(m.result);
      if (p.job.summaryId !== undefined && result.summary) this.madeBy(p.job.summaryId, result.summary, slot);
      p.resolve(result);
    });
    const die = (err: Error) => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.retire(slot, err);
      if (!this.closed) this.slots[i] = this.offerAll(this.spawn(null));
    };
    worker.on('error', (e) => die(e instanceof Error ? e : new Error(String(e))));
    worker.on('exit', (code) => {
      if (this.closed) return;
      if (this.slots.includes(slot)) die(new Error(`extract worker exited with code ${code}`));
      // stopped after it left the pool (expire): a job it claimed meanwhile goes back to the workers
      else this.reoffer(slot);
    });
    if (this.pending.size === 0) worker.unref();
    return slot;
  }

  /** The job leaves the pool (its outcome is the caller's to deliver); `failed`: it has no result to hold. */
  private settle(p: Pending, failed: boolean): void {
    if (p.timer) clearTimeout(p.timer);
    p.timer = null;
    this.pending.delete(p.seq);
    for (const d of p.job.depCrates ?? []) if ('awaits' in d) this.unuse(d.awaits);
    if (failed && this.room && Atomics.load(p.claim, 0) !== 0) this.free(0);
    if (this.pending.size === 0) for (const s of this.slots) s.worker.unref();
  }

  /** A slot leaves the pool: the job it claimed and has not finished fails with `err`; the jobs no worker claimed stay offered. */
  private retire(slot: Slot, err: Error): void {
    for (const p of [...this.pending.values()]) {
      if (Atomics.load(p.claim, 0) !== slot.id) continue;
      this.settle(p, true);
      p.reject(err);
    }
  }

  /** Jobs a stopped worker claimed after it left the pool: unclaimed again, offered to every worker. */
  private reoffer(gone: Slot): void {
    for (const p of this.pending.values()) {
      if (Atomics.load(p.claim, 0) !== gone.id) continue;
      if (p.timer) clearTimeout(p.timer);
      p.timer = null;
      if (this.room) this.free(0);
      Atomics.store(p.claim, 1, 0);
      Atomics.store(p.claim, 0, 0);
      for (const s of this.slots) this.post(s, p);
    }
  }

  /** Offer a (new) worker every job no worker has claimed. */
  private offerAll(slot: Slot): Slot {
    for (const p of this.pending.values()) if (Atomics.load(p.claim, 0) === 0) this.post(slot, p);
    // the summaries forgotten before it started: it drops them once the offers above no longer name them
    const forget = [...this.made].filter(([, m]) => m.forgotten).map(([id]) => id);
    if (forget.length > 0) slot.worker.postMessage({ forget } satisfies ForgetMessage);
    return slot;
  }

  /**
   * A new id for a summary a job of this pool will make (ExtractJob.summaryId);
   * other jobs await it by that id. When the job fails, the caller says what
   * its dependants get instead (`provide`): they wait until then.
   */
  summaryId(): number {
    const id = ++this.lastSummaryId;
    this.made.set(id, { value: undefined, byPeers: false, users: 0, forgotten: false, waiters: [] });
    return id;
  }

  /** The summary of id `id` is `value` (null: none): a job that made it failed, or its result came from elsewhere. */
  provide(id: number, value: DepCrate | Uint8Array | null): void {
    const m = this.made.get(id);
    if (!m || m.value !== undefined || this.closed) return;
    m.value = value;
    this.madeReady(m);
    if (m.users === 0) return;
    const bytes = value === null || value instanceof Uint8Array ? value : serialize(value);
    for (const s of this.slots) {
      s.got.add(id);
      const msg: MadeMessage = { made: id, bytes };
      s.worker.postMessage(msg);
    }
  }

  /** A worker made summary `id`: its peers have it from it; a worker without peers gets it from here. */
  private madeBy(id: number, bytes: DepCrate | Uint8Array, by: Slot): void {
    const m = this.made.get(id);
    if (!m || m.value !== undefined) return;
    m.value = bytes;
    m.byPeers = !by.late;
    this.madeReady(m);
    if (m.users === 0) return;
    for (const s of this.slots) {
      if (s === by || s.got.has(id) || !(s.late || by.late)) continue;
      s.got.add(id);
      const msg: MadeMessage = { made: id, bytes: bytes instanceof Uint8Array ? bytes : serialize(bytes) };
      s.worker.postMessage(msg);
    }
  }

  private madeReady(m: Made): void {
    if (m.waiters.length === 0) return;
    const v = m.value instanceof Uint8Array ? deserialize(m.value) as DepCrate : m.value ?? null;
    for (const w of m.waiters.splice(0)) w(v);
  }

  private unuse(id: number): void {
    const m = this.made.get(id);
    if (!m) return;
    m.users--;
    if (m.forgotten && m.users <= 0) this.made.delete(id);
  }

  /** Extract one crate (in a worker, or here when the pool has none). */
  run(job: ExtractJob): Promise<ExtractResult> {
    if (this.closed) return Promise.reject(new Error('the extract pool is closed'));
    for (const d of job.depCrates ?? []) {
      if (!('awaits' in d)) continue;
      const m = this.made.get(d.awaits);
      // a forgotten one may still be here for the jobs that named it before, but the workers have dropped it
      if (!m || m.forgotten) return Promise.reject(new Error(`job ${job.krate} awaits summary ${d.awaits}, which is no summaryId of this pool or was forgotten`));
      m.users++;
    }
    if (this.workers === 0) {
      return this.runHere(job).finally(() => { for (const d of job.depCrates ?? []) if ('awaits' in d) this.unuse(d.awaits); });
    }
    return new Promise((resolve, reject) => {
      const p: Pending = { seq: ++this.seq, job, resolve, reject, claim: new Int32Array(new SharedArrayBuffer(8)), timer: null };
      this.pending.set(p.seq, p);
      for (const slot of this.slots) {
        slot.worker.ref();
        this.post(slot, p);
      }
    });
  }

  private async runHere(job: ExtractJob): Promise<ExtractResult> {
    this.local ??= loadRust();
    const depCrates: DepCrate[] = [];
    for (const d of job.depCrates ?? []) {
      const c = 'awaits' in d ? await this.madeHere(d.awaits) : d;
      if (c) depCrates.push(c);
    }
    const t0 = performance.now();
    const graph = await extractCrate(extractInput({ ...job, depCrates }, await this.local));
    const result = jobResult(job, graph, performance.now() - t0);
    if (job.summaryId !== undefined) this.provide(job.summaryId, result.summary ?? null);
    return result;
  }

  /** Summary `id` for a job run in this thread, once it is made. */
  private madeHere(id: number): Promise<DepCrate | null> {
    const m = this.made.get(id);
    if (!m) return Promise.reject(new Error(`internal: the pool has no summary of id ${id}`));
    if (m.value !== undefined) return Promise.resolve(m.value instanceof Uint8Array ? deserialize(m.value) as DepCrate : m.value);
    return new Promise((resolve) => m.waiters.push(resolve));
  }

  private post(slot: Slot, p: Pending): void {
    const used = p.job.depCrates ?? [];
    const depCrates = used.map((crate): { id: number; bytes?: Uint8Array | null } => {
      if ('awaits' in crate) {
        const id = crate.awaits;
        const m = this.made.get(id);
        // made already: a worker without it gets it here (one with peers has it from its maker)
        if (m?.value === undefined || slot.got.has(id) || (m.byPeers && !slot.late)) return { id };
        slot.got.add(id);
        return { id, bytes: m.value === null || m.value instanceof Uint8Array ? m.value : serialize(m.value) };
      }
      let id = this.summaryIds.get(crate);
      if (id === undefined) this.summaryIds.set(crate, (id = ++this.lastSummaryId));
      if (slot.held.has(crate)) return { id };
      slot.held.set(crate, id);
      let bytes = this.summaryBytes.get(crate);
      if (!bytes) this.summaryBytes.set(crate, (bytes = serialize(crate)));
      return { id, bytes };
    });
    const msg: JobMessage = { seq: p.seq, claim: p.claim, job: { ...p.job, depCrates } };
    slot.worker.postMessage(msg);
  }

  /**
   * No job submitted from now on needs `crate` (a dependency summary, or the
   * id of a made one): the workers drop it once no job offered to them names
   * it. A worker started later to replace one gets it whole again with the
   * unclaimed jobs that name it.
   */
  forget(crate: DepCrate | number): void {
    if (typeof crate === 'number') {
      const m = this.made.get(crate);
      if (!m) return;
      m.forgotten = true;
      if (m.users <= 0) this.made.delete(crate);
      const msg: ForgetMessage = { forget: [crate] };
      if (!this.closed) for (const slot of this.slots) slot.worker.postMessage(msg);
      return;
    }
    // after the caller's current step, which may be about to submit the last job that needs it
    setImmediate(() => { if (!this.closed) this.release(crate); });
  }

  private release(crate: DepCrate): void {
    for (const slot of this.slots) {
      const id = slot.held.get(crate);
      if (id === undefined) continue;
      slot.held.delete(crate);
      const msg: ForgetMessage = { forget: [id] };
      slot.worker.postMessage(msg);
    }
  }

  /** The caller is done with `result` (a result of `run`): its room is free (see Room). */
  consumed(result: ExtractResult): void {
    if (this.room) this.free(factsOf(result));
  }

  private free(facts: number): void {
    const ctl = this.room!.ctl;
    Atomics.sub(ctl, ROOM_RESULTS, 1);
    if (facts > 0) Atomics.sub(ctl, ROOM_FACTS, facts);
    this.wake();
  }

  /** Wake every worker when one said it found no room (the flag is cleared first: a worker that finds none again sets it again). */
  private wake(): void {
    if (Atomics.exchange(this.room!.ctl, ROOM_WAITING, 0) === 0 || this.closed) return;
    const msg: WakeMessage = { wake: true };
    for (const slot of this.slots) slot.worker.postMessage(msg);
  }

  /** A job ran past the limit: fail it, and replace its worker (terminating it stops the runaway work). */
  private expire(slot: Slot, p: Pending): void {
    if (this.pending.get(p.seq) !== p || Atomics.load(p.claim, 0) !== slot.id) return;
    // done in time: its result is on its way (this thread was busy when it came)
    if (Atomics.load(p.claim, 1) !== 0) return;
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.settle(p, true);
    this.slots[i] = this.offerAll(this.spawn(null));
    void slot.worker.terminate();
    p.reject(new Error(`extracting ${p.job.krate} took over ${this.timeoutMs} ms; its worker was stopped`));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of [...this.pending.values()]) {
      this.settle(p, true);
      p.reject(new Error('the extract pool closed'));
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
