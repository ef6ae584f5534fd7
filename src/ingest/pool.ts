// A pool of worker threads that extract crates (parse + graph), so parsing
// uses every core while the main thread diffs and writes. Each worker loads
// the grammar once. With `workers: 0` the same jobs run in this thread.
//
// Invariant: every job settles — with its graph, or with an error when
// extraction threw or its worker died (the worker is then replaced). Read-only.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { extractCrate, loadRust, type CrateGraph, type RustParser } from '../extract/index.ts';

/** One crate to extract (plain data: it crosses the thread boundary). */
export interface ExtractJob {
  repo: string;
  krate: string;
  rootDir: string;
  targets: string[];
  deps: [string, { krate: string; repo?: string }][];
  maxFileBytes?: number;
}

export type ExtractReply =
  | { seq: number; ok: true; graph: CrateGraph; ms: number }
  | { seq: number; ok: false; error: string; ms: number };

export interface ExtractResult {
  graph: CrateGraph;
  /** Time the extraction took in its thread. */
  ms: number;
}

interface Slot {
  worker: Worker;
  busy: { seq: number; krate: string; timer: NodeJS.Timeout | null; resolve: (r: ExtractResult) => void; reject: (e: Error) => void } | null;
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
  private readonly queue: { job: ExtractJob; resolve: (r: ExtractResult) => void; reject: (e: Error) => void }[] = [];
  private seq = 0;
  private closed = false;
  private local: Promise<RustParser> | null = null;

  /**
   * `timeoutMs` bounds one crate's extraction in a worker: past it the worker
   * is terminated and replaced, and the job fails (a pathological input must
   * not stall a run). Jobs run in this thread (`workers: 0`) have no limit.
   */
  constructor(readonly workers: number, private readonly timeoutMs = DEFAULT_EXTRACT_TIMEOUT_MS) {
    for (let i = 0; i < workers; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const { url, execArgv } = workerEntry();
    const worker = new Worker(url, execArgv ? { execArgv } : {});
    const slot: Slot = { worker, busy: null };
    worker.on('message', (r: ExtractReply) => {
      const b = slot.busy;
      if (!b || b.seq !== r.seq) return;
      slot.busy = null;
      if (b.timer) clearTimeout(b.timer);
      if (r.ok) b.resolve({ graph: r.graph, ms: r.ms });
      else b.reject(new Error(r.error));
      this.pump();
    });
    const die = (err: Error) => {
      const b = slot.busy;
      slot.busy = null;
      if (b?.timer) clearTimeout(b.timer);
      b?.reject(err);
      const i = this.slots.indexOf(slot);
      if (i >= 0 && !this.closed) {
        this.slots[i] = this.spawn();
        this.pump();
      }
    };
    worker.on('error', (e) => die(e instanceof Error ? e : new Error(String(e))));
    worker.on('exit', (code) => { if (!this.closed && this.slots.includes(slot)) die(new Error(`extract worker exited with code ${code}`)); });
    worker.unref();
    return slot;
  }

  /** Extract one crate (in a worker, or here when the pool has none). */
  run(job: ExtractJob): Promise<ExtractResult> {
    if (this.closed) return Promise.reject(new Error('the extract pool is closed'));
    if (this.workers === 0) return this.runHere(job);
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.pump();
    });
  }

  private async runHere(job: ExtractJob): Promise<ExtractResult> {
    this.local ??= loadRust();
    const t0 = performance.now();
    const graph = await extractCrate({
      repo: job.repo, krate: job.krate, rootDir: job.rootDir, targets: job.targets, deps: new Map(job.deps),
      readFile: (p) => readFile(p), parser: await this.local, limits: { maxFileBytes: job.maxFileBytes },
    });
    return { graph, ms: performance.now() - t0 };
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy || this.queue.length === 0) continue;
      const next = this.queue.shift()!;
      const seq = ++this.seq;
      const timer = setTimeout(() => this.expire(slot, seq), this.timeoutMs);
      slot.busy = { seq, krate: next.job.krate, timer, resolve: next.resolve, reject: next.reject };
      slot.worker.ref();
      slot.worker.postMessage({ seq, job: next.job });
    }
    for (const slot of this.slots) if (!slot.busy) slot.worker.unref();
  }

  /** A job ran past the limit: fail it, and replace its worker (terminating it stops the runaway work). */
  private expire(slot: Slot, seq: number): void {
    const b = slot.busy;
    if (!b || b.seq !== seq) return;
    slot.busy = null;
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots[i] = this.spawn();
    void slot.worker.terminate();
    b.reject(new Error(`extracting ${b.krate} took over ${this.timeoutMs} ms; its worker was stopped`));
    this.pump();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(new Error('the extract pool closed'));
    await Promise.all(this.slots.map(async (s) => {
      s.busy?.reject(new Error('the extract pool closed'));
      await s.worker.terminate();
    }));
  }
}
