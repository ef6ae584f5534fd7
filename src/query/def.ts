// `def`: the live definition(s) of a qualified path, in every repo and the
// universe. Items whose public paths (node column `public_paths`, as rustdoc
// would name them, through `pub use` re-exports) include the path first —
// candidates by their name, the path's last segment, pushed down — then the
// exact `qpath` (pushed down as an equality); when nothing has either, the
// path's last segments: an item re-exported higher than it is
// defined (`regex::Regex::new` defined at `regex::regex::string::Regex::new`)
// is found by the crate segment plus the longest run of trailing segments that
// matches, then by the whole path as a suffix (`Regex::new`). The fallback
// pushes the last segment down as `name`. Answered from the state tables
// (query/state.ts: code_keys by path, code_nodes by name) when the lake has
// them at the generation asked, else by folding the log. Read-only.
import { eq } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';
import { byPlace, candidateIds, foldIds, nodeHit, readAt, type NodeHit, type QueryOptions, type ReadAt, type Row } from './read.ts';
import { nodesAtPath, nodesNamed, stateNodeHit } from './state.ts';

export interface DefResult {
  generation: bigint;
  /** How the hits matched: the exact qpath, its last segments, or nothing. */
  match: 'exact' | 'suffix' | 'none';
  hits: NodeHit[];
}

export async function def(log: EventLog, path: string, opts: QueryOptions = {}): Promise<DefResult> {
  checkPath(path, 'def');
  return readAt(log, opts.asOf, (r) => resolvePath(r, path), opts.from);
}

export function checkPath(path: string, what: string): void {
  if (path.trim() === '') throw new Error(`${what}: expected a PATH such as regex::Regex::new, found an empty string`);
}

/** The live nodes a path names at the read generation (see the module comment). */
export async function resolvePath(r: ReadAt, path: string): Promise<DefResult> {
  const segs = path.split('::').filter((s) => s !== '');
  const last = segs[segs.length - 1];
  if (last === undefined) return done(r, 'none', []);
  const v = r.view;
  if (v) {
    // code_keys holds every public path and qpath of a live node: one lookup for both
    const keyed = await nodesAtPath(v, path);
    const published = keyed.filter((row) => hasPublicPath(row, path));
    if (published.length > 0) return done(r, 'exact', published);
    const exact = keyed.filter((row) => row.qpath === path);
    if (exact.length > 0) return done(r, 'exact', exact);
  } else {
    const published = await liveWhere(r, eq('name', last), (row) => hasPublicPath(row, path), ['public_paths']);
    if (published.length > 0) return done(r, 'exact', published);
    const exact = await liveWhere(r, eq('qpath', path), (row) => row.qpath === path, ['qpath']);
    if (exact.length > 0) return done(r, 'exact', exact);
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
      if (hits.length > 0) return done(r, 'suffix', hits);
    }
  }
  const suffix = pool.filter((row) => qp(row).endsWith(`::${path}`) || qp(row) === path);
  return done(r, suffix.length > 0 ? 'suffix' : 'none', suffix);
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

function done(r: ReadAt, match: DefResult['match'], rows: Row[]): DefResult {
  const hits = rows.map(r.view ? stateNodeHit : nodeHit).sort(byPlace((h) => h.qpath ?? ''));
  return { generation: r.generation, match, hits };
}
