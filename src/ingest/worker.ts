// Worker-thread entry of the extract pool: loads the Rust grammar once, then
// runs the jobs the pool offers every worker, each one that it claims first
// (pool.ts JobMessage), and posts its graph back. Read-only: it touches the
// crate's files and nothing else; a crash of the thread fails the job it
// claimed (the pool reports it), never the lake; the jobs it did not claim
// stay for the other workers.
import { deserialize } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { extractCrate, loadRust, type DepCrate } from '../extract/index.ts';
import {
  extractInput, jobResult, wireResult, type ClaimedMessage, type ExtractJob, type ExtractReply, type ForgetMessage, type JobMessage,
} from './pool.ts';

const port = parentPort;
if (!port) throw new Error('src/ingest/worker.ts: expected to run in a worker thread, found the main thread');
const me = (workerData as { id?: unknown } | null)?.id;
if (typeof me !== 'number' || me <= 0) throw new Error(`src/ingest/worker.ts: expected workerData.id, a positive number, found ${String(me)}`);
const parser = loadRust();

// Dependency summaries posted whole once (serialized), named by id after
// (pool.ts JobMessage); decoded the first time a job this worker claims needs one.
interface Held { bytes: Uint8Array | null; crate: DepCrate | null }
const summaries = new Map<number, Held>();

/** Jobs offered and not yet claimed or skipped, in the order offered; their summaries resolved on arrival. */
const offers: { seq: number; claim: Int32Array; job: Omit<ExtractJob, 'depCrates'>; deps: Held[]; missing: number[] }[] = [];
let running = false;

port.on('message', (msg: JobMessage | ForgetMessage) => {
  if ('forget' in msg) {
    for (const id of msg.forget) summaries.delete(id);
    return;
  }
  // a job's summaries are looked up as it arrives: a later `forget` cannot take them
  const missing: number[] = [];
  const deps: Held[] = [];
  for (const d of msg.job.depCrates ?? []) {
    if (d.bytes) summaries.set(d.id, { bytes: d.bytes, crate: null });
    const c = summaries.get(d.id);
    if (c) deps.push(c);
    else missing.push(d.id);
  }
  const { depCrates: _d, ...job } = msg.job;
  offers.push({ seq: msg.seq, claim: msg.claim, job, deps, missing });
  void next();
});

/** A held summary, decoded (once). */
function decoded(h: Held): DepCrate {
  if (!h.crate) {
    h.crate = deserialize(h.bytes!) as DepCrate;
    h.bytes = null;
  }
  return h.crate;
}

/** The offer of highest priority (the oldest among equals), out of the list; offers another worker claimed are dropped. */
function take(): (typeof offers)[number] | undefined {
  let best = -1;
  for (let i = 0; i < offers.length; i++) {
    if (Atomics.load(offers[i]!.claim, 0) !== 0) {
      offers.splice(i--, 1);
      continue;
    }
    if (best < 0 || (offers[i]!.job.priority ?? 0) > (offers[best]!.job.priority ?? 0)) best = i;
  }
  return best < 0 ? undefined : offers.splice(best, 1)[0];
}

/** Run the offered jobs one at a time, highest priority first, each one this worker claims before any other does. */
async function next(): Promise<void> {
  if (running) return;
  running = true;
  try {
    // a job runs without yielding to this thread's event loop: let the offers that came
    // meanwhile in before choosing the next one
    for (let o = take(); o; o = (await new Promise((r) => setImmediate(r)), take())) {
      if (Atomics.compareExchange(o.claim, 0, 0, me as number) !== 0) continue; // another worker has it
      const claimed: ClaimedMessage = { claimed: o.seq, at: Date.now() };
      port!.postMessage(claimed);
      await runJob(o.seq, o.job, o.deps, o.missing);
    }
  } finally {
    running = false;
  }
}

async function runJob(seq: number, offered: Omit<ExtractJob, 'depCrates'>, deps: Held[], missing: number[]): Promise<void> {
  const t0 = performance.now();
  let reply: ExtractReply;
  let transfer: ArrayBuffer[] = [];
  try {
    if (missing.length > 0) throw new Error(`internal: job ${offered.krate} names dependency summaries ${missing.join(', ')} this worker does not hold`);
    const job: ExtractJob = { ...offered, depCrates: deps.map(decoded) };
    const graph = await extractCrate(extractInput(job, await parser));
    const wire = wireResult(jobResult(job, graph, performance.now() - t0));
    reply = { seq, ok: true, result: wire.result };
    transfer = wire.transfer;
  } catch (e) {
    reply = { seq, ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e), ms: performance.now() - t0 };
  }
  port!.postMessage(reply, transfer);
}
