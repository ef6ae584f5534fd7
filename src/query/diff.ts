// `diff`: what changed in the graph between two lake generations — nodes and
// edges added, changed (any column but run, ts and op differs) and removed —
// comparing the folded state at `from` with the folded state at `to`, each
// read through a pinned handle (so GC keeps both). `repo` is pushed into both
// scans. Memory: the folded state of the repo (or the lake) at both ends.
// Read-only.
import type { Value } from '../lake/spec/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { COL_OP, COL_RUN, COL_TS, type Kind } from '../log/schema.ts';
import { allOf, byPlace, edgeHit, nodeHit, scopeFilter, type EdgeHit, type NodeHit, type Row } from './read.ts';

export interface DiffOptions {
  from: bigint;
  to: bigint;
  repo?: string;
}

export interface Changes<T> {
  added: T[];
  changed: { before: T; after: T; columns: string[] }[];
  removed: T[];
}

export interface DiffResult {
  from: bigint;
  to: bigint;
  repo: string | null;
  nodes: Changes<NodeHit>;
  edges: Changes<EdgeHit>;
}

/** Columns that say when and by which run, not what: not a change by themselves. */
const BOOKKEEPING = new Set([COL_RUN, COL_TS, COL_OP]);

export async function diff(log: EventLog, opts: DiffOptions): Promise<DiffResult> {
  for (const [k, g] of [['from', opts.from], ['to', opts.to]] as const) {
    if (g < 0n) throw new Error(`diff: --${k} expected a generation >= 0, found ${g}`);
  }
  const from = log.pin({ generation: opts.from });
  try {
    const to = log.pin({ generation: opts.to });
    try {
      const filter = allOf(scopeFilter({ repo: opts.repo }));
      const changes = async <T extends { id: string; repo: string; krate: string; file: string | null; line: number | null }>(
        kind: Kind,
        view: (r: Row) => T,
        key: (t: T) => string,
      ): Promise<Changes<T>> => {
        const before = await from.state(kind, filter);
        const after = await to.state(kind, filter);
        const out: Changes<T> = { added: [], changed: [], removed: [] };
        for (const [id, a] of after) {
          const b = before.get(id);
          if (!b) out.added.push(view(a));
          else {
            const columns = changedColumns(b, a);
            if (columns.length > 0) out.changed.push({ before: view(b), after: view(a), columns });
          }
        }
        for (const [id, b] of before) if (!after.has(id)) out.removed.push(view(b));
        const order = byPlace(key);
        out.added.sort(order);
        out.removed.sort(order);
        out.changed.sort((x, y) => order(x.after, y.after));
        return out;
      };
      return {
        from: opts.from,
        to: opts.to,
        repo: opts.repo ?? null,
        nodes: await changes('node', nodeHit, (h) => h.qpath ?? ''),
        edges: await changes('edge', edgeHit, (h) => `${h.dstPath ?? ''}\u0000${h.src ?? ''}`),
      };
    } finally {
      to.close();
    }
  } finally {
    from.close();
  }
}

function changedColumns(a: Row, b: Row): string[] {
  const cols = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...cols].filter((c) => !BOOKKEEPING.has(c) && !same(a[c] ?? null, b[c] ?? null)).sort();
}

function same(x: Value, y: Value): boolean {
  if (x === y) return true;
  if (x instanceof Uint8Array && y instanceof Uint8Array) return x.length === y.length && x.every((v, i) => v === y[i]);
  return false;
}
