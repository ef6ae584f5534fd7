// Test hook for race tests: named points where a reader can be held, in
// process, while a test lets another process or handle commit, then
// released — so an interleaving that a loaded machine produces by chance is
// produced on purpose (the crash points of crash.ts are the same idea for
// kills).
//
//   const h = holdAt('state-view:pointer code_edges_in', { nth: 2 });
//   … start a read …; await h.reached; … commit …; h.release();
//
// A point in the code is `const p = pausePoint(name); if (p) await p;`:
// without a hold armed it costs one size check and never yields to the
// event loop, so the code around it keeps its synchronous runs. Reaches are
// counted per name while any hold is armed or counting is on (`reaches`).
// Not for production use; kept out of the public documentation.

interface Hold {
  nth: number;
  seen: number;
  reached: () => void;
  released: Promise<void>;
}

const holds = new Map<string, Hold>();
const counts = new Map<string, number>();
let counting = false;

/** A point where a test may hold the caller: a promise to await when a hold is armed on `name`, else undefined. */
export function pausePoint(name: string): Promise<void> | undefined {
  if (holds.size === 0 && !counting) return undefined;
  counts.set(name, (counts.get(name) ?? 0) + 1);
  const h = holds.get(name);
  if (!h || ++h.seen !== h.nth) return undefined;
  holds.delete(name);
  h.reached();
  return h.released;
}

/**
 * Hold the `nth` (default first) caller to reach `name` from now on, until
 * `release`. `reached` resolves once it is held. One hold per name at a time.
 */
export function holdAt(name: string, opts: { nth?: number } = {}): { reached: Promise<void>; release: () => void } {
  if (holds.has(name)) throw new Error(`a hold is already armed at ${name}`);
  let reached!: () => void;
  let release!: () => void;
  const r = new Promise<void>((res) => (reached = res));
  const released = new Promise<void>((res) => (release = res));
  const h: Hold = { nth: opts.nth ?? 1, seen: 0, reached, released };
  holds.set(name, h);
  return {
    reached: r,
    release: () => {
      if (holds.get(name) === h) holds.delete(name);
      release();
    },
  };
}

/** Count reaches of every point from now on (`reaches`); `false` stops counting and forgets the counts. */
export function countReaches(on: boolean): void {
  counting = on;
  counts.clear();
}

/** How many times `name` was reached since counting began (or a hold was armed). */
export function reaches(name: string): number {
  return counts.get(name) ?? 0;
}
