// The state tables' rows as a fold of the event log, (repo, krate) by
// (repo, krate): what `mimir state rebuild` writes and `mimir state verify`
// compares with. Crates are folded in groups whose events fit a budget; each
// group costs one filtered scan of every event kind, and its fold (latest
// event per id wins, `remove` hides; a live pos row places its id) is held in
// memory, so memory is bounded by the budget, never by the log. Every row of
// an id carries the same repo and krate, so a group's filter reaches every
// event of its ids. code_paths is not a fold of latest events but the set of
// distinct (qpath, id) pairs of every node event row (any op) of the group:
// one more scan of four columns of the node tables. Read-only.
import { and, inList, type Expr } from '../../lake/expr/expr.ts';
import type { EventLog } from '../event-log.ts';
import { COL_ID, COL_KRATE, COL_REPO, SOURCE_KINDS } from '../schema.ts';
import { CODE_EDGES_IN, CODE_EDGES_OUT, CODE_FILES, CODE_KEYS, CODE_NODES, CODE_PATHS, CORE_STATE_TABLES, STATE_TABLES, type KeysLayout, type StateTable } from './schema.ts';
import { edgeRow, fileRow, keyRows, nodeRow, ownPosition, pathRow, placed, posOf, type Row } from './rows.ts';

export interface CrateKey {
  repo: string;
  krate: string;
}

/** `repo` and `krate` as one map key. */
export const crateKey = (repo: string, krate: string): string => `${repo}\u0000${krate}`;

/** Events per (repo, krate) at a generation, over every kind (one scan of two columns per table). */
export async function crateCounts(log: EventLog, generation: bigint): Promise<Map<string, CrateKey & { events: number }>> {
  const out = new Map<string, CrateKey & { events: number }>();
  for (const kind of SOURCE_KINDS) {
    for await (const b of log.scan(kind, { columns: [COL_REPO, COL_KRATE], generation })) {
      const rc = b.fields.findIndex((f) => f.name === COL_REPO);
      const kc = b.fields.findIndex((f) => f.name === COL_KRATE);
      for (let i = 0; i < b.numRows; i++) {
        const repo = b.columns[rc]![i] as string;
        const krate = b.columns[kc]![i] as string;
        const k = crateKey(repo, krate);
        const c = out.get(k);
        if (c) c.events++;
        else out.set(k, { repo, krate, events: 1 });
      }
    }
  }
  return out;
}

/** Crates in groups of at most `budget` events (a crate larger than the budget is a group alone), in key order. */
export function groupCrates(counts: Map<string, CrateKey & { events: number }>, budget: number): CrateKey[][] {
  const keys = [...counts.keys()].sort();
  const groups: CrateKey[][] = [];
  let cur: CrateKey[] = [];
  let n = 0;
  for (const k of keys) {
    const c = counts.get(k)!;
    if (cur.length > 0 && n + c.events > budget) {
      groups.push(cur);
      cur = [];
      n = 0;
    }
    cur.push({ repo: c.repo, krate: c.krate });
    n += c.events;
  }
  if (cur.length > 0) groups.push(cur);
  return groups;
}

/**
 * The state rows of one group of crates at a generation, per state table
 * (unsorted; `tables`: only those, default all), code_keys in `keys`'s layout.
 */
export async function foldGroup(log: EventLog, generation: bigint, group: CrateKey[], tables: readonly StateTable[] = STATE_TABLES, keys: KeysLayout = 'krate'): Promise<Map<StateTable, Row[]>> {
  const wanted = new Set(group.map((c) => crateKey(c.repo, c.krate)));
  const filter = and(inList(COL_REPO, [...new Set(group.map((c) => c.repo))]), inList(COL_KRATE, [...new Set(group.map((c) => c.krate))]));
  const out = new Map<StateTable, Row[]>();
  if (tables.some((t) => t !== CODE_PATHS)) {
    for (const [t, rows] of await foldLatest(log, generation, filter, wanted, keys)) if (tables.includes(t)) out.set(t, rows);
  }
  if (tables.includes(CODE_PATHS)) out.set(CODE_PATHS, await pathPairs(log, generation, filter, wanted));
  return out;
}

/** The tables of live rows (all but code_paths) of the crates `wanted`, through `filter`. */
async function foldLatest(log: EventLog, generation: bigint, filter: Expr, wanted: Set<string>, keys: KeysLayout): Promise<Map<StateTable, Row[]>> {
  const mine = (r: Row): boolean => wanted.has(crateKey(r.repo as string, r.krate as string));
  const out = new Map<StateTable, Row[]>(CORE_STATE_TABLES.map((t) => [t, []]));
  const pos = await log.state('pos', filter, { generation });
  const nodes = await log.state('node', filter, { generation });
  for (const [id, n] of nodes) {
    if (!mine(n)) continue;
    const p = pos.get(id);
    const row = nodeRow(n, p && p.entity !== 'edge' ? placed(posOf(p), true) : placed(ownPosition('node', n), false));
    out.get(CODE_NODES)!.push(row);
    out.get(CODE_KEYS)!.push(...keyRows(row, keys));
  }
  nodes.clear();
  const edges = await log.state('edge', filter, { generation });
  for (const [id, e] of edges) {
    if (!mine(e)) continue;
    const p = pos.get(id);
    const row = edgeRow(e, p && p.entity === 'edge' ? placed(posOf(p), true) : placed(ownPosition('edge', e), false));
    out.get(CODE_EDGES_IN)!.push(row);
    out.get(CODE_EDGES_OUT)!.push(row);
  }
  edges.clear();
  pos.clear();
  for (const f of (await log.state('file', filter, { generation })).values()) if (mine(f)) out.get(CODE_FILES)!.push(fileRow(f));
  return out;
}

/** The code_paths rows of some crates: the distinct (qpath, id) pairs of their node event rows, any op. */
async function pathPairs(log: EventLog, generation: bigint, filter: Expr, wanted: Set<string>): Promise<Row[]> {
  const seen = new Map<string, Set<string>>(); // qpath -> ids
  const out: Row[] = [];
  for await (const b of log.scan('node', { filter, columns: ['qpath', COL_ID, COL_REPO, COL_KRATE], generation })) {
    const col = (name: string): unknown[] => b.columns[b.fields.findIndex((f) => f.name === name)]!;
    const q = col('qpath');
    const id = col(COL_ID);
    const repo = col(COL_REPO);
    const krate = col(COL_KRATE);
    for (let i = 0; i < b.numRows; i++) {
      const path = q[i];
      if (typeof path !== 'string' || !wanted.has(crateKey(repo[i] as string, krate[i] as string))) continue;
      const row = pathRow(path, id[i] as string, repo[i] as string, krate[i] as string, seen);
      if (row) out.push(row);
    }
  }
  return out;
}
