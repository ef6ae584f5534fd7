// `def`: the live definition(s) of a qualified path, in every repo and the
// universe. Items whose public paths (node column `public_paths`, as rustdoc
// would name them, through `pub use` re-exports) include the path first —
// candidates by their name, the path's last segment, pushed down — then the
// exact `qpath` (pushed down as an equality); then the path through a facade
// (`facade::x::Item` where module `facade` re-exports another crate or item
// as `x`: its type_info `x` rewrites the path); when nothing has either, the
// path's last segments: an item re-exported higher than it is
// defined (`regex::Regex::new` defined at `regex::regex::string::Regex::new`)
// is found by the crate segment plus the longest run of trailing segments that
// matches, then by the whole path as a suffix (`Regex::new`). The fallback
// pushes the last segment down as `name`. Answered from the state tables
// (query/state.ts: code_keys by path, code_nodes by name) when the lake has
// them at the generation asked, else by folding the log. Read-only.
import { and, eq, inList } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';
import type { StateView } from '../log/state/view.ts';
import { byPlace, candidateIds, foldIds, nodeHit, readAt, type NodeHit, type QueryOptions, type ReadAt, type Row } from './read.ts';
import { inScope, type CrateScope } from './scope.ts';
import { NODE_HIT_COLUMNS, nodesNamed, nodesOf, stateNodeHit } from './state.ts';

export interface DefResult {
  generation: bigint;
  /** How the hits matched: the exact qpath, its last segments, or nothing. */
  match: 'exact' | 'suffix' | 'none';
  hits: NodeHit[];
  /** With a scope: the rules chose items outside it too (left out of `hits`). */
  outside?: boolean;
}

/**
 * With `--repo` / `--krate` (scope.ts CrateScope): the rules choose among
 * every crate's items as without it (the same answer, narrowed), but from
 * the state tables only the chosen items in scope are read — the other
 * versions of a crate share its paths (10 of them in a 10x universe).
 */
export async function def(log: EventLog, path: string, opts: QueryOptions & CrateScope = {}): Promise<DefResult> {
  checkPath(path, 'def');
  const scope = opts.repo === undefined && opts.krate === undefined ? undefined : { repo: opts.repo, krate: opts.krate };
  return readAt(log, opts.asOf, (r) => resolvePath(r, path, scope), opts.from);
}

export function checkPath(path: string, what: string): void {
  if (path.trim() === '') throw new Error(`${what}: expected a PATH such as regex::Regex::new, found an empty string`);
}

/** The live nodes a path names at the read generation (see the module comment), those in `scope` when given. */
export async function resolvePath(r: ReadAt, path: string, scope?: CrateScope, hops = 0): Promise<DefResult> {
  const segs = path.split('::').filter((s) => s !== '');
  const last = segs[segs.length - 1];
  if (last === undefined) return done(r, 'none', []);
  const v = r.view;
  if (v) {
    const at = await definedAt(v, path, scope);
    if (at) return { ...done(r, 'exact', at.rows), ...(scope ? { outside: at.outside } : {}) }; // rows already in scope
  } else {
    const published = await liveWhere(r, eq('name', last), (row) => hasPublicPath(row, path), ['public_paths']);
    if (published.length > 0) return done(r, 'exact', published, scope);
    const exact = await liveWhere(r, eq('qpath', path), (row) => row.qpath === path, ['qpath']);
    if (exact.length > 0) return done(r, 'exact', exact, scope);
  }
  // `facade::x::Item` through a module's `pub use dep as x;` / `pub extern crate dep as x;` (its type_info x)
  const via = hops < MAX_REEXPORT_HOPS ? await throughReexport(r, segs) : null;
  if (via !== null) {
    const hit = await resolvePath(r, via, scope, hops + 1);
    if (hit.hits.length > 0) return hit;
  }
  const inPool = (row: Row): boolean => typeof row.qpath === 'string' && (row.qpath === last || row.qpath.endsWith(`::${last}`));
  const pool = v ? await nodesNamed(v, last, inPool) : await liveWhere(r, eq('name', last), inPool, ['qpath']);
  const qp = (row: Row): string => row.qpath as string;
  // the crate segment plus the longest matching tail of the rest
  if (segs.length >= 2) {
    const head = `${segs[0]}::`;
    for (let k = segs.length - 1; k >= 1; k--) {
      if (k === 1 && segs.length > 2) break; // `a::b::c` never degrades to `a::…::c`
      const tail = `::${segs.slice(segs.length - k).join('::')}`;
      const hits = pool.filter((row) => qp(row).startsWith(head) && qp(row).endsWith(tail));
      if (hits.length > 0) return done(r, 'suffix', hits, scope);
    }
  }
  const suffix = pool.filter((row) => qp(row).endsWith(`::${path}`) || qp(row) === path);
  return done(r, suffix.length > 0 ? 'suffix' : 'none', suffix, scope);
}

/** Re-exports of other crates followed by one `def` (a facade of a facade …). */
const MAX_REEXPORT_HOPS = 4;

/**
 * `a::b::x::rest` where the live module `a::b` (by public path or qpath)
 * re-exports another crate's item or root as `x` (type_info `x`, written by
 * the resolver for `pub use dep::Item as x;` and `pub extern crate dep as x;`):
 * the path rewritten as `<that item's path>::rest`; the longest module first.
 * Null when no module on the way re-exports the next segment.
 */
async function throughReexport(r: ReadAt, segs: readonly string[]): Promise<string | null> {
  for (let i = segs.length - 1; i >= 1; i--) {
    const mod = segs.slice(0, i).join('::');
    const modName = segs[i - 1]!;
    let rows: Row[];
    if (r.view) {
      const keys = await r.view.keys(and(eq('key', mod), inList('via', ['qpath', 'public'])), ['id', 'name', 'via', 'repo', 'krate']);
      rows = await nodesOf(r.view, keys, ['id', 'kind', 'qpath', 'public_paths', 'type_info']);
    } else {
      rows = await liveWhere(r, eq('name', modName), (row) => row.qpath === mod || hasPublicPath(row, mod), ['qpath', 'public_paths']);
    }
    for (const row of rows) {
      if (row.kind !== 'module' || typeof row.type_info !== 'string') continue;
      const x = reexportsOf(row.type_info)[segs[i]!];
      if (x !== undefined) return [x, ...segs.slice(i + 1)].join('::');
    }
  }
  return null;
}

/** A module's type_info `x` (name -> re-exported item's definition path); {} when absent or unreadable. */
function reexportsOf(typeInfo: string): Record<string, string> {
  try {
    const x = (JSON.parse(typeInfo) as { x?: unknown }).x;
    return typeof x === 'object' && x !== null ? x as Record<string, string> : {};
  } catch {
    return {};
  }
}

/**
 * From the state tables: the live nodes whose public paths include `path`,
 * else those whose qpath it is — one code_keys lookup (its `qpath` and
 * `public` rows) for both; undefined when no live node has the path either
 * way. With a scope, the nodes of the key rows in scope are read, and the
 * others only when the choice between the two rules depends on them (no
 * `public` key row, none in scope publishes it: do the others?); `outside`:
 * key rows out of scope were left out.
 */
async function definedAt(view: StateView, path: string, scope: CrateScope | undefined): Promise<{ rows: Row[]; outside: boolean } | undefined> {
  const keys = await view.keys(and(eq('key', path), inList('via', ['qpath', 'public'])), ['id', 'name', 'via', 'repo', 'krate']);
  if (keys.length === 0) return undefined;
  const keep = (k: Row): boolean => scope === undefined || (typeof k.repo === 'string' && typeof k.krate === 'string' && inScope(scope, k.repo, k.krate));
  const mine = keys.filter(keep);
  const rows = await nodesOf(view, mine, [...NODE_HIT_COLUMNS, 'public_paths']);
  const published = rows.filter((row) => hasPublicPath(row, path));
  // a `public` key row is a node publishing the path (a public path equal to the qpath has only its `qpath` row)
  let anyPublished = published.length > 0 || keys.some((k) => k.via === 'public');
  if (!anyPublished && mine.length < keys.length) {
    const others = await nodesOf(view, keys.filter((k) => !keep(k)), ['id', 'name', 'public_paths']);
    anyPublished = others.some((row) => hasPublicPath(row, path));
  }
  const chosen = anyPublished ? published : rows.filter((row) => row.qpath === path);
  // every key row's node is live (one commit writes both); were one not, the suffix rules follow, as they would without key rows
  if (chosen.length === 0 && mine.length === keys.length) return undefined;
  return { rows: chosen, outside: mine.length < keys.length };
}

/** Is `path` one of the row's public paths (`\n`-joined in `public_paths`)? */
export function hasPublicPath(row: Row, path: string): boolean {
  const p = row['public_paths'];
  return typeof p === 'string' && (p === path || p.startsWith(`${path}\n`) || p.endsWith(`\n${path}`) || p.includes(`\n${path}\n`));
}

/** Live node rows among the ids that ever matched `filter` + `test`, checked again after the fold. */
async function liveWhere(r: ReadAt, filter: ReturnType<typeof eq>, test: (row: Row) => boolean, columns: string[]): Promise<Row[]> {
  const ids = await candidateIds(r, 'node', filter, { columns, fn: test });
  const state = await foldIds(r, 'node', ids);
  return [...state.values()].filter(test);
}

function done(r: ReadAt, match: DefResult['match'], rows: Row[], scope?: CrateScope): DefResult {
  if (scope !== undefined) {
    // the fold and the suffix rules choose across every crate; the scope narrows their choice
    const kept = rows.filter((row) => inScope(scope, row.repo as string, row.krate as string));
    return { ...done(r, match, kept), outside: kept.length < rows.length };
  }
  const hits = rows.map(r.view ? stateNodeHit : nodeHit).sort(byPlace((h) => h.qpath ?? ''));
  return { generation: r.generation, match, hits };
}
