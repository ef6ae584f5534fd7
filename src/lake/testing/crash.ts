// Test hook for crash tests: named points where a real process can be killed.
//
//   MIMIR_CRASH_AT=<point>[#n]  SIGKILL this process the n-th time (default 1st)
//                               `point` is reached.
//   MIMIR_CRASH_TRACE=<file>    append every point reached to <file>, one per
//                               line, so a test can enumerate where to kill.
//
// Without those variables a crash point costs one lookup. Not for production
// use; kept out of the public documentation.
import { appendFileSync } from 'node:fs';

const at = process.env.MIMIR_CRASH_AT;
const trace = process.env.MIMIR_CRASH_TRACE;
const target = at ? { name: at.split('#')[0]!, n: Number(at.split('#')[1] ?? '1') } : undefined;
const seen = new Map<string, number>();

export function crashPoint(name: string): void {
  if (!target && !trace) return;
  const n = (seen.get(name) ?? 0) + 1;
  seen.set(name, n);
  if (trace) appendFileSync(trace, `${name}#${n}\n`);
  if (target && target.name === name && target.n === n) process.kill(process.pid, 'SIGKILL');
}
