// Helpers for the ring split tests: rows of each kind, lakes built unified,
// and per-kind merged-read stats (counts and digests) to compare states.
import { EventLog, type EventRow } from '../../src/log/event-log.ts';
import { krateStats, type KrateStats } from '../../src/log/digest.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, type Kind } from '../../src/log/schema.ts';

/** `n` rows of a kind for `repo`, ids from `start`, spread over `krates` krates. */
export function rowsOf(kind: Kind, repo: string, n: number, start = 0, krates = 4, tag = 'r'): EventRow[] {
  const out: EventRow[] = [];
  for (let i = start; i < start + n; i++) {
    const krate = repo === UNIVERSE_REPO ? `dep${i % krates}@1.0.0` : `${repo}-k${i % krates}`;
    const common = { repo, krate, run: `${tag}-run`, ts: 1_700_000_000_000_000n + BigInt(i), op: 'add', id: `${kind}-${repo}-${tag}-${i}` };
    if (kind === 'node') out.push({ ...common, kind: 'fn', name: `f${i}`, qpath: `${krate}::f${i}`, file: `src/m${i % 7}.rs`, line_start: i % 1000, line_end: (i % 1000) + 3, visibility: 'pub', signature: `fn f${i}()`, parent: null });
    else if (kind === 'edge') out.push({ ...common, src: `n${i}`, dst: `n${i + 1}`, dst_path: `p::${i}`, dst_krate: krate, edge_kind: 'calls', file: `src/m${i % 7}.rs`, line: i % 500 });
    else out.push({ ...common, path: `src/f${i}.rs`, hash: `h${i}`, size: BigInt(100 + i), parse_status: 'ok' });
  }
  return out;
}

export const ring = (kind: Kind, n: number, start = 0, krates = 4, tag = 'r'): EventRow[] => rowsOf(kind, UNIVERSE_REPO, n, start, krates, tag);

/** A unified lake with ring and repo rows of every kind, appended in `appends` commits per kind. */
export async function buildUnified(root: string, ringRows = 30, repoRows = 10, appends = 3): Promise<EventLog> {
  // an event log only: the ring split's own subject (the state tables are covered by test/log/state*.test.ts)
  const log = await EventLog.open(root, { init: 'unified', stateTables: false });
  for (const kind of SOURCE_KINDS) {
    const per = Math.ceil(ringRows / appends);
    for (let a = 0; a < appends; a++) {
      const start = a * per;
      const n = Math.min(per, ringRows - start);
      if (n > 0) await log.append(kind, [...ring(kind, n, start), ...rowsOf(kind, 'acme', a === 0 ? repoRows : 0, 0)]);
    }
  }
  return log;
}

/** Stats of each kind's merged read, as the handle sees it now. */
export async function mergedStats(log: EventLog): Promise<Map<Kind, KrateStats>> {
  const out = new Map<Kind, KrateStats>();
  for (const kind of SOURCE_KINDS) out.set(kind, await krateStats(log.scan(kind)));
  return out;
}

export function statsText(s: Map<Kind, KrateStats>): string {
  const parts: string[] = [];
  for (const [k, m] of s) for (const [kr, v] of [...m].sort((a, b) => a[0].localeCompare(b[0]))) parts.push(`${k}/${kr}=${v.rows}:${v.digest.toString(16)}`);
  return parts.join('\n');
}
