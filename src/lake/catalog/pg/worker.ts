// The PostgreSQL catalog's worker thread: one PgStore (one connection),
// answering the catalog's calls one at a time on its port. Each answer is
// posted, then the shared word is bumped and notified, which wakes the caller
// blocked in Atomics.wait (pg-catalog.ts). Errors travel as name, message and
// own fields, and are rebuilt as the same classes on the other side. Nothing
// is kept here between calls but the connection; the worker ends with its
// catalog's close, or with its process (PostgreSQL then rolls back whatever
// transaction was open).
import { workerData, type MessagePort } from 'node:worker_threads';
import { PgStore, type StoreOptions } from './store.ts';

export interface WorkerData {
  port: MessagePort;
  flag: SharedArrayBuffer;
  opts: StoreOptions;
}

export interface Call {
  op: string;
  args: unknown[];
}

export interface SentError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export type Reply = { ok: true; value: unknown; error?: SentError } | { ok: false; error: SentError };

function send(e: unknown): SentError {
  const err = e instanceof Error ? e : new Error(String(e));
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    try {
      structuredClone(v);
      fields[k] = v;
    } catch {
      // a field that cannot cross (a socket, a function) is left behind
    }
  }
  return { name: err.name, message: err.message, fields };
}

const { port, flag, opts } = workerData as WorkerData;
const word = new Int32Array(flag);
const store = new PgStore(opts);
const methods = store as unknown as Record<string, ((...a: unknown[]) => Promise<unknown>) | undefined>;

port.on('message', (m: Call) => {
  void (async (): Promise<void> => {
    let reply: Reply;
    try {
      const fn = methods[m.op];
      if (typeof fn !== 'function') throw new Error(`PostgreSQL catalog worker: no operation '${m.op}'`);
      const value = await fn.apply(store, m.args);
      reply = value instanceof Error ? { ok: true, value: undefined, error: send(value) } : { ok: true, value };
    } catch (e) {
      reply = { ok: false, error: send(e) };
    }
    port.postMessage(reply);
    Atomics.add(word, 0, 1);
    Atomics.notify(word, 0);
  })();
});
