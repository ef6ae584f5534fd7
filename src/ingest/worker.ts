// Worker-thread entry of the extract pool: loads the Rust grammar once, then
// runs the jobs the pool offers every worker, each one that it claims first
// (pool.ts JobMessage), and posts its graph back. A job is claimed only once
// every summary it waits for is here (posted by the worker that made it, or by
// the pool) and while the pool has room for one more result (pool.ts Room).
// Read-only: it touches the crate's files and nothing else; a crash of the
// thread fails the job it claimed (the pool reports it), never the lake; the
// jobs it did not claim stay for the other workers.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { deserialize, serialize } from 'node:v8';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { extractCrate, loadRust, type DepCrate } from '../extract/index.ts';
import {
  extractInput, factsOf, jobResult, wireResult, ROOM_FACTS, ROOM_RESULTS, ROOM_WAITING,
  type ClaimedMessage, type ExtractJob, type ExtractReply, type JobMessage, type MadeMessage, type PoolMessage, type WakeMessage, type WorkerData,
} from './pool.ts';

const port = parentPort;
if (!port) throw new Error('src/ingest/worker.ts: expected to run in a worker thread, found the main thread');
const data = workerData as Partial<WorkerData> | null;
const me = data?.id;
if (typeof me !== 'number' || me <= 0) throw new Error(`src/ingest/worker.ts: expected workerData.id, a positive number, found ${String(me)}`);
/** The other workers started with this one (a summary this worker makes goes to them directly). */
const peers: MessagePort[] = data?.peers ?? [];
const room = data?.room ?? null;
const parser = loadRust();
lowerPriority(data?.nice ?? 0);

/** This thread's nice value raised by `by` (pool.ts WORKER_NICE); left as it is where threads have no id of their own in /proc. */
function lowerPriority(by: number): void {
  if (by <= 0 || process.platform !== 'linux') return;
  try {
    // "<pid>/task/<tid>": on Linux a thread's id names it to setpriority
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return;
    setPriority(tid, Math.min(19, getPriority(tid) + by));
  } catch {
    // no /proc, or not allowed: the same work at the same priority
  }
}

/**
 * A dependency summary by its id (pool.ts JobMessage): posted whole (serialized)
 * once, decoded the first time a job this worker claims needs it. `none`: its
 * crate failed and resolution goes on without it. Kept while an offer here
 * names it or until the pool says no job will name it again (`forget`).
 */
interface Held { here: boolean; bytes: Uint8Array | null; crate: DepCrate | null; refs: number; forgotten: boolean }
const summaries = new Map<number, Held>();
/** Ids the pool said to forget: one arriving after has no job left here. */
const forgotten = new Set<number>();

function held(id: number): Held {
  let h = summaries.get(id);
  if (!h) summaries.set(id, (h = { here: false, bytes: null, crate: null, refs: 0, forgotten: forgotten.has(id) }));
  return h;
}

function drop(id: number, h: Held): void {
  if (h.forgotten && h.refs === 0) summaries.delete(id);
}

/** A summary arrived (from a peer, the pool, or this worker's own job); `bytes` null: none. */
function arrived(id: number, bytes: Uint8Array | null, crate: DepCrate | null = null): void {
  if (forgotten.has(id) && (summaries.get(id)?.refs ?? 0) === 0) return;
  const h = held(id);
  if (h.here) return;
  h.here = true;
  h.bytes = bytes;
  h.crate = crate;
}

/** A held summary, decoded (once); null when its crate has none. */
function decoded(h: Held): DepCrate | null {
  if (!h.crate && h.bytes) {
    h.crate = deserialize(h.bytes) as DepCrate;
    h.bytes = null;
  }
  return h.crate;
}

/** Jobs offered and not yet claimed or skipped, in the order offered. */
interface Offer { seq: number; claim: Int32Array; job: Omit<ExtractJob, 'depCrates'>; deps: number[] }
const offers: Offer[] = [];
let running = false;

function unoffer(o: Offer): void {
  for (const id of o.deps) {
    const h = summaries.get(id);
    if (!h) continue;
    h.refs--;
    drop(id, h);
  }
}

const onMessage = (msg: PoolMessage) => {
  if ('forget' in msg) {
    for (const id of msg.forget) {
      forgotten.add(id);
      const h = summaries.get(id);
      if (!h) continue;
      h.forgotten = true;
      drop(id, h);
    }
  } else if ('made' in msg) {
    arrived(msg.made, msg.bytes);
  } else if ('seq' in msg) {
    offered(msg);
  }
  // a wake: the pool has room again
  void next();
};
port.on('message', onMessage);
for (const p of peers) p.on('message', onMessage);

function offered(msg: JobMessage): void {
  const deps: number[] = [];
  for (const d of msg.job.depCrates ?? []) {
    const h = held(d.id);
    h.refs++;
    if (d.bytes !== undefined) arrived(d.id, d.bytes);
    deps.push(d.id);
  }
  const { depCrates: _d, ...job } = msg.job;
  offers.push({ seq: msg.seq, claim: msg.claim, job, deps });
}

/** Every summary the offer names is here. */
function ready(o: Offer): boolean {
  for (const id of o.deps) if (!summaries.get(id)?.here) return false;
  return true;
}

/** The ready offer of highest priority (the oldest among equals); offers another worker claimed are dropped. */
function pick(): Offer | undefined {
  let best: Offer | undefined;
  for (let i = 0; i < offers.length; i++) {
    const o = offers[i]!;
    if (Atomics.load(o.claim, 0) !== 0) {
      offers.splice(i--, 1);
      unoffer(o);
      continue;
    }
    if (ready(o) && (!best || (o.job.priority ?? 0) > (best.job.priority ?? 0))) best = o;
  }
  return best;
}

/** One more result may be held (pool.ts Room): takes its place and says true when there is. */
function reserve(): boolean {
  if (!room) return true;
  const { ctl, results, facts } = room;
  let said = false;
  for (;;) {
    const n = Atomics.load(ctl, ROOM_RESULTS);
    // none held: always room (the facts a worker counted for a result that never reached the pool block nothing)
    if (n === 0 || (n < results && Atomics.load(ctl, ROOM_FACTS) < facts)) {
      if (Atomics.compareExchange(ctl, ROOM_RESULTS, n, n + 1) === n) return true;
      continue;
    }
    if (said) return false;
    // full: say so, then look again (the pool frees room, then reads the flag: no wake is lost)
    Atomics.store(ctl, ROOM_WAITING, 1);
    said = true;
  }
}

/** Run the ready offers one at a time, highest priority first, each one this worker claims before any other does. */
async function next(): Promise<void> {
  if (running) return;
  running = true;
  try {
    // a job runs without yielding to this thread's event loop: let the offers and summaries
    // that came meanwhile in before choosing the next one
    for (let o = pick(); o; o = (await new Promise((r) => setImmediate(r)), pick())) {
      if (!reserve()) return; // no room for its result yet: the pool wakes this worker when there is
      offers.splice(offers.indexOf(o), 1);
      if (Atomics.compareExchange(o.claim, 0, 0, me as number) !== 0) { // another worker has it
        if (room) {
          Atomics.sub(room.ctl, ROOM_RESULTS, 1);
          // the place given back may be the one another worker found taken: have the pool wake it
          if (Atomics.load(room.ctl, ROOM_WAITING) !== 0) port!.postMessage({ wake: true } satisfies WakeMessage);
        }
        unoffer(o);
        continue;
      }
      const claimed: ClaimedMessage = { claimed: o.seq, at: Date.now() };
      port!.postMessage(claimed);
      await runJob(o);
      unoffer(o);
    }
  } finally {
    running = false;
  }
}

async function runJob(o: Offer): Promise<void> {
  const t0 = performance.now();
  let reply: ExtractReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const depCrates: DepCrate[] = [];
    for (const id of o.deps) {
      const c = decoded(summaries.get(id)!);
      if (c) depCrates.push(c);
    }
    const job = { ...o.job, depCrates };
    const graph = await extractCrate(extractInput(job, await parser));
    const result = jobResult(job, graph, performance.now() - t0);
    if (job.summaryId !== undefined) {
      // to the other workers straight away: the jobs waiting for it start without a turn of the main thread
      const own = result.summary as DepCrate;
      const bytes = serialize(own);
      const made: MadeMessage = { made: job.summaryId, bytes };
      for (const p of peers) p.postMessage(made);
      arrived(job.summaryId, null, own);
      result.summary = bytes;
    }
    const wire = wireResult(result);
    // counted once nothing can fail before the reply goes (the pool takes them off when it reads it)
    if (room) Atomics.add(room.ctl, ROOM_FACTS, factsOf(result));
    reply = { seq: o.seq, ok: true, result: wire.result };
    transfer = wire.transfer;
  } catch (e) {
    reply = { seq: o.seq, ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e), ms: performance.now() - t0 };
  }
  if (reply.ok) Atomics.store(o.claim, 1, 1);
  port!.postMessage(reply, transfer);
}
