// Worker-thread entry of the extract pool: loads the Rust grammar once, then
// extracts one crate per message and posts its graph back. Read-only: it
// touches the crate's files and nothing else; a crash of the thread fails the
// jobs in flight (the pool reports them), never the lake.
import { parentPort } from 'node:worker_threads';
import { extractCrate, loadRust } from '../extract/index.ts';
import { extractInput, jobResult, type ExtractJob, type ExtractReply } from './pool.ts';

const port = parentPort;
if (!port) throw new Error('src/ingest/worker.ts: expected to run in a worker thread, found the main thread');
const parser = loadRust();

// Jobs may be posted ahead: they run one at a time, in the order posted.
let chain: Promise<void> = Promise.resolve();
port.on('message', (msg: { seq: number; job: ExtractJob }) => {
  chain = chain.then(async () => {
    const t0 = performance.now();
    let reply: ExtractReply;
    try {
      const graph = await extractCrate(extractInput(msg.job, await parser));
      reply = { seq: msg.seq, ok: true, result: jobResult(msg.job, graph, performance.now() - t0) };
    } catch (e) {
      reply = { seq: msg.seq, ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e), ms: performance.now() - t0 };
    }
    port.postMessage(reply);
  });
});
