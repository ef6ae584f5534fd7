// Test hooks for crash and disk-full tests: named points where a real process
// can be killed, or from which its catalog writes fail as on a full disk.
//
//   MIMIR_CRASH_AT=<point>[#n]  SIGKILL this process the n-th time (default 1st)
//                               `point` is reached.
//   MIMIR_CRASH_TRACE=<file>    append every point reached to <file>, one per
//                               line, so a test can enumerate where to kill.
//   MIMIR_FULL_AFTER=<point>[#n] from the n-th time `point` is reached on,
//                               every catalog write of this process fails with
//                               SQLITE_FULL, as when the disk fills up right
//                               there (a deterministic disk-full window, e.g.
//                               `lake:after-catalog-commit`).
//
// Without those variables a point costs one lookup. Not for production use;
// kept out of the public documentation.
import { appendFileSync } from 'node:fs';

const at = process.env.MIMIR_CRASH_AT;
const trace = process.env.MIMIR_CRASH_TRACE;
const fullAfter = process.env.MIMIR_FULL_AFTER;
const parse = (s: string) => ({ name: s.split('#')[0]!, n: Number(s.split('#')[1] ?? '1') });
const target = at ? parse(at) : undefined;
const fullTarget = fullAfter ? parse(fullAfter) : undefined;
const seen = new Map<string, number>();
let full = false;

export function crashPoint(name: string): void {
  if (!target && !trace && !fullTarget) return;
  const n = (seen.get(name) ?? 0) + 1;
  seen.set(name, n);
  if (trace) appendFileSync(trace, `${name}#${n}\n`);
  if (fullTarget && fullTarget.name === name && fullTarget.n === n) full = true;
  if (target && target.name === name && target.n === n) process.kill(process.pid, 'SIGKILL');
}

/** The failure SQLite gives a write on a full disk (better-sqlite3's SqliteError carries the same code). */
export class InjectedDiskFull extends Error {
  readonly code = 'SQLITE_FULL';
  constructor() {
    super('database or disk is full');
    this.name = 'SqliteError';
  }
}

/** Called before each catalog write: throws SQLITE_FULL once MIMIR_FULL_AFTER's point was reached. */
export function catalogWritePoint(): void {
  if (full) throw new InjectedDiskFull();
}
