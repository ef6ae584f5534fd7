// State rows from event rows: a node, edge or file event row (and, for nodes
// and edges, the position in force) -> the rows of the state tables that hold
// it. Pure functions. A state row depends only on its own entity's events and
// pos rows, never on another entity's, so updating one id touches only that
// id's rows (an equality delete on `id` plus the new rows).
//
// Position: the live `pos` row's when the id has one, else the event row's
// own columns (docs/design.md, "Events vs positions").
import type { Value } from '../../lake/spec/types.ts';
import type { Entity } from '../schema.ts';
import { dstName, idKey, type KeysLayout, type Via } from './schema.ts';

export type Row = Record<string, Value>;

/** Where a node or an edge sits. */
export interface Position {
  file: string | null;
  line: number | null;
  col: number | null;
  line_end: number | null;
  col_end: number | null;
}

/** A position and whether it comes from a live pos row. */
export interface Placed extends Position {
  moved: boolean;
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The position a node or edge event row holds in its own columns (null for ends it has no column for). */
export function ownPosition(entity: Entity, r: Record<string, unknown>): Position {
  return entity === 'node'
    ? { file: text(r.file), line: num(r.line_start), col: num(r.col), line_end: num(r.line_end), col_end: null }
    : { file: text(r.file), line: num(r.line), col: num(r.col), line_end: null, col_end: null };
}

/** The position a pos row holds. */
export function posOf(r: Record<string, unknown>): Position {
  return { file: text(r.file), line: num(r.line), col: num(r.col), line_end: num(r.line_end), col_end: num(r.col_end) };
}

export function samePosition(a: Position, b: Position): boolean {
  return a.file === b.file && a.line === b.line && a.col === b.col && a.line_end === b.line_end && a.col_end === b.col_end;
}

export const placed = (p: Position, moved: boolean): Placed => ({ file: p.file, line: p.line, col: p.col, line_end: p.line_end, col_end: p.col_end, moved });

const v = (r: Record<string, unknown>, k: string): Value => (r[k] ?? null) as Value;

/** The code_nodes row of a node (event row or fields with repo, krate and id). */
export function nodeRow(e: Record<string, unknown>, p: Placed): Row {
  return {
    name: v(e, 'name'), qpath: v(e, 'qpath'), id: v(e, 'id'), repo: v(e, 'repo'), krate: v(e, 'krate'), kind: v(e, 'kind'),
    visibility: v(e, 'visibility'), signature: v(e, 'signature'), parent: v(e, 'parent'), body_hash: v(e, 'body_hash'),
    file: p.file, line: p.line, col: p.col, line_end: p.line_end, col_end: p.col_end, moved: p.moved,
    origin: v(e, 'origin'), public_paths: v(e, 'public_paths'), type_info: v(e, 'type_info'),
  };
}

/**
 * The code_keys rows of a node row: its id, its qpath and each public path
 * (deduplicated). In the crate-keyed layout the `id` row is keyed by
 * (krate, id) and carries the node's display columns (KEY_NODE_COLUMNS).
 */
export function keyRows(n: Row, layout: KeysLayout): Row[] {
  const base = { id: n.id, name: n.name, repo: n.repo, krate: n.krate, kind: n.kind };
  const idRow: Row =
    layout === 'krate'
      ? {
          key: idKey(layout, n.krate as string, n.id as string), via: 'id' satisfies Via, ...base,
          qpath: n.qpath, visibility: n.visibility, signature: n.signature, parent: n.parent, file: n.file, line: n.line, col: n.col, line_end: n.line_end,
        }
      : { key: n.id, via: 'id' satisfies Via, ...base };
  const out: Row[] = [idRow];
  const seen = new Set<string>();
  if (typeof n.qpath === 'string') {
    out.push({ key: n.qpath, via: 'qpath' satisfies Via, ...base });
    seen.add(n.qpath);
  }
  if (typeof n.public_paths === 'string') {
    for (const p of n.public_paths.split('\n')) {
      if (p === '' || seen.has(p)) continue;
      seen.add(p);
      out.push({ key: p, via: 'public' satisfies Via, ...base });
    }
  }
  return out;
}

/** The row of an edge in both edge tables. */
export function edgeRow(e: Record<string, unknown>, p: Placed): Row {
  const dstPath = v(e, 'dst_path');
  return {
    dst_name: dstName(typeof dstPath === 'string' ? dstPath : null), dst: v(e, 'dst'), edge_kind: v(e, 'edge_kind'), src: v(e, 'src'),
    id: v(e, 'id'), repo: v(e, 'repo'), krate: v(e, 'krate'), dst_path: dstPath, dst_krate: v(e, 'dst_krate'),
    file: p.file, line: p.line, col: p.col, line_end: p.line_end, col_end: p.col_end, moved: p.moved,
    unresolved_reason: v(e, 'unresolved_reason'), origin: v(e, 'origin'), dispatch: v(e, 'dispatch'),
  };
}

/** The code_files row of a file event row. */
export function fileRow(e: Record<string, unknown>): Row {
  return {
    repo: v(e, 'repo'), krate: v(e, 'krate'), path: v(e, 'path'), id: v(e, 'id'), hash: v(e, 'hash'), size: v(e, 'size'),
    parse_status: v(e, 'parse_status'), crate_dir: v(e, 'crate_dir'),
  };
}

/**
 * The code_paths row of a (qpath, id) pair, unless `seen` (qpath -> ids)
 * holds it already (then null); the pair is added to `seen`.
 */
export function pathRow(qpath: string, id: string, repo: string, krate: string, seen: Map<string, Set<string>>): Row | null {
  let ids = seen.get(qpath);
  if (!ids) seen.set(qpath, (ids = new Set()));
  if (ids.has(id)) return null;
  ids.add(id);
  return { qpath, id, repo, krate };
}
