// `find`: live nodes by name. NAME is matched against the item's `name`, or
// against its `qpath` when it contains `::`; `exact` = equal; a NAME with `*`
// or `?` is a glob over the whole value (case-sensitive); otherwise a name
// matches fuzzily (its letters in order, case-insensitive: suggest.ts, which
// answer.ts ranks by) and a path is a case-insensitive substring. Equality, a glob's literal prefix, kind, repo and
// krate are pushed into the scan. From the state tables (query/state.ts) when
// the lake has them; else the fold reads every event of the candidate ids
// (read.ts). Read-only.
import { eq, type Expr } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';
import { nodesMatching, stateNodeHit } from './state.ts';
import { fuzzyScore } from './suggest.ts';
import { filterPreempting } from '../lake/preempt.ts';
import { compileGlob, hasGlob } from './glob.ts';
import { allOf, byPlace, candidateIds, foldIds, nodeHit, prefixRange, readAt, scopeFilter, type NodeHit, type QueryOptions, type Row } from './read.ts';

export interface FindOptions extends QueryOptions {
  kind?: string;
  repo?: string;
  krate?: string;
  /**
   * A filter on `krate` pushed into the lookups (answer.ts: the crate as
   * ranges of its spellings, scope.ts krateWhere); a superset, not tested
   * again here: the caller narrows the hits.
   */
  krateWhere?: Expr;
  exact?: boolean;
}

export interface FindResult {
  /** The generation the answer is true at. */
  generation: bigint;
  hits: NodeHit[];
}

/** How a NAME matches: the column, the pushed-down filter (if any) and the exact test. */
export function nameMatcher(name: string, exact = false): { col: 'name' | 'qpath'; filter?: Expr; test: (v: string | null) => boolean } {
  const col = name.includes('::') ? 'qpath' : 'name';
  if (exact) return { col, filter: eq(col, name), test: (v) => v === name };
  if (hasGlob(name)) {
    // matched in linear time (glob.ts), never as a RegExp: `*` runs backtrack exponentially there
    const glob = compileGlob(name);
    return { col, filter: prefixRange(col, name), test: (v) => v !== null && glob.test(v) };
  }
  if (col === 'name') return { col, test: (v) => v !== null && fuzzyScore(name, v) !== null };
  const lower = name.toLowerCase();
  return { col, test: (v) => v !== null && v.toLowerCase().includes(lower) };
}

export async function find(log: EventLog, name: string, opts: FindOptions = {}): Promise<FindResult> {
  if (name === '') throw new Error('find: expected a NAME, found an empty string');
  const m = nameMatcher(name, opts.exact);
  return readAt(log, opts.asOf, async (r) => {
    const scope = scopeFilter(opts);
    // krate is on every row (never emptied by a remove): safe in the fold's scope too
    if (opts.krateWhere !== undefined) scope.push(opts.krateWhere);
    const parts = [...scope];
    if (opts.kind !== undefined) parts.push(eq('kind', opts.kind));
    if (r.view) {
      const rows = await nodesMatching(r.view, m.col, m.filter, m.test, parts);
      const keep = (row: Row): boolean =>
        (opts.kind === undefined || row.kind === opts.kind) &&
        (opts.repo === undefined || row.repo === opts.repo) &&
        (opts.krate === undefined || row.krate === opts.krate) &&
        m.test(typeof row[m.col] === 'string' ? (row[m.col] as string) : null);
      const hits = (await filterPreempting(rows, keep)).map(stateNodeHit);
      hits.sort(byPlace((h) => h.qpath ?? ''));
      return { generation: r.generation, hits };
    }
    if (m.filter) parts.push(m.filter);
    const ids = await candidateIds(r, 'node', allOf(parts), { columns: [m.col], fn: (row) => m.test(typeof row[m.col] === 'string' ? (row[m.col] as string) : null) });
    const state = await foldIds(r, 'node', ids, scope);
    const keep = (row: Row): boolean =>
      (opts.kind === undefined || row.kind === opts.kind) && m.test(typeof row[m.col] === 'string' ? (row[m.col] as string) : null);
    const hits = (await filterPreempting([...state.values()], keep)).map(nodeHit);
    hits.sort(byPlace((h) => h.qpath ?? ''));
    return { generation: r.generation, hits };
  }, opts.from);
}
