// Worker-thread entry of the extract pool: loads the Rust grammar once, then
// extracts one crate per message and posts its graph back. Read-only: it
// touches the crate's files and nothing else; a crash of the thread fails the
// jobs in flight (the pool reports them), never the lake.
import { parentPort } from 'node:worker_threads';
import { extractCrate, loadRust, type DepCrate } from '../extract/index.ts';
import { extractInput, jobResult, wireResult, type ExtractJob, type ExtractReply, type ForgetMessage, type JobMessage } from './pool.ts';

const port = parentPort;
if (!port) throw new Error('src/ingest/worker.ts: expected to run in a worker thread, found the main thread');
const parser = loadRust();

// Dependency summaries posted whole once, named by id after (pool.ts JobMessage).
const summaries = new Map<number, DepCrate>();

// Jobs may be posted ahead: they run one at a time, in the order posted. A
// job's summaries are looked up as it arrives: a later `forget` cannot take them.
let chain: Promise<void> = Promise.resolve();
port.on('message', (msg: JobMessage | ForgetMessage) => {
  if ('forget' in msg) {
    for (const id of msg.forget) summaries.delete(id);
    return;
  }
  const missing: number[] = [];
  const depCrates: DepCrate[] = [];
  for (const d of msg.job.depCrates ?? []) {
    if (d.crate) summaries.set(d.id, d.crate);
    const c = summaries.get(d.id);
    if (c) depCrates.push(c);
    else missing.push(d.id);
  }
  const job: ExtractJob = { ...msg.job, depCrates };
  chain = chain.then(async () => {
    const t0 = performance.now();
    let reply: ExtractReply;
    let transfer: ArrayBuffer[] = [];
    try {
      if (missing.length > 0) throw new Error(`internal: job ${job.krate} names dependency summaries ${missing.join(', ')} this worker does not hold`);
      const graph = await extractCrate(extractInput(job, await parser));
      const wire = wireResult(jobResult(job, graph, performance.now() - t0));
      reply = { seq: msg.seq, ok: true, result: wire.result };
      transfer = wire.transfer;
    } catch (e) {
      reply = { seq: msg.seq, ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e), ms: performance.now() - t0 };
    }
    port.postMessage(reply, transfer);
  });
});
