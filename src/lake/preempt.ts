// Cooperative preemption of long reads. The lake's reads are synchronous
// underneath (FileIO `syncReads`: readSync, a few µs a page), so a scan that
// awaits only settled promises never lets the event loop turn: in a server no
// timer fires, no connection is accepted and no signal handler runs until the
// whole question is answered. Long loops therefore await `preempt()` at each
// step (TableScan does, once a batch; loops over many rows do every
// `PREEMPT_ROWS` rows): once a slice of `SLICE_MS` has passed since the last
// turn it waits for one (setImmediate), so other requests, timers and signals
// run between slices.
//
// Cancelling: `withinSignal(signal, fn)` runs `fn` with `signal` as the
// cancel signal of everything it awaits (an AsyncLocalStorage scope: nothing
// passes it through the query functions); every `preempt()` in there throws
// the signal's reason once it is aborted. So cancelled work stops at its next
// step — within one slice — having written nothing (reads only: preempt is
// never awaited inside a write). Outside such a scope `preempt()` only yields.
import { AsyncLocalStorage } from 'node:async_hooks';

/** Longest run of synchronous work between two turns of the event loop (ms). */
export const SLICE_MS = 20;

/** Rows a loop handles between two calls of preempt() (a row costs well under a µs to a few µs). */
export const PREEMPT_ROWS = 1024;

const scope = new AsyncLocalStorage<AbortSignal>();
let sliceStart = Date.now();

/** Run `fn` so that every preempt() it awaits throws `signal`'s reason once `signal` is aborted. */
export function withinSignal<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  return scope.run(signal, fn);
}

/**
 * A step of long work: throws the cancel reason when the work was cancelled;
 * else, once a slice is used up, waits for a turn of the event loop.
 */
export async function preempt(): Promise<void> {
  const signal = scope.getStore();
  signal?.throwIfAborted();
  if (Date.now() - sliceStart < SLICE_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  sliceStart = Date.now();
  signal?.throwIfAborted();
}

/** `rows.filter(keep)`, awaiting preempt() every PREEMPT_ROWS rows. */
export async function filterPreempting<T>(rows: readonly T[], keep: (row: T) => boolean): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (i % PREEMPT_ROWS === PREEMPT_ROWS - 1) await preempt();
    if (keep(rows[i]!)) out.push(rows[i]!);
  }
  return out;
}
