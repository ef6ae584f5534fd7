// Graph facts -> event rows, and the delta of one crate's new facts against
// the lake's current state of that crate: `add` for a new id, `change` for an
// id whose *semantic* fields differ, `remove` for an id no longer extracted.
// Pure functions; nothing here reads or writes the lake.
//
// Positions apart from content (docs/design.md, "Events vs positions"): where
// a node or an edge sits (file, line, col, ends) is not semantic. An id whose
// position differs from its current one (its live `pos` row, else its own
// row's) gets a `pos` row; a line shift thus writes pos rows only. A node or
// edge event still carries the position at its time, and a pos row is written
// beside it only when the id has a live pos row (which would otherwise win).
// Removing an id with a live pos row removes that too, so a later re-add
// starts from its own row's position.
//
// A node's `body_hash` is one of its fields, so a body edit that moves no
// line is a `change`. Rows written before that column existed read it as
// null: the first re-extraction of such a crate records every node's hash as
// a change (once).
import { createHash } from 'node:crypto';
import type { EdgeFact, FileFact, NodeFact } from '../extract/index.ts';
import type { Batch, PrimitiveType, Value } from '../lake/spec/types.ts';
import { coerceValue } from '../lake/spec/values.ts';
import type { EventRow } from '../log/event-log.ts';
import { kindSchema, type Entity, type Kind, type Op } from '../log/schema.ts';
import { ownPosition, posOf, samePosition, type Position } from '../log/state/rows.ts';

export type { Position };

type RowKind = Exclude<Kind, 'pos'>;

/** The semantic columns of a node, an edge, a file: a difference in any is a `change` event. */
export const SEMANTIC: Record<RowKind, readonly string[]> = {
  node: ['kind', 'name', 'qpath', 'visibility', 'signature', 'parent', 'body_hash', 'origin', 'public_paths', 'type_info'],
  edge: ['src', 'dst', 'dst_path', 'dst_krate', 'edge_kind', 'unresolved_reason', 'origin', 'dispatch'],
  file: ['path', 'hash', 'size', 'parse_status', 'target_kind'],
};

/** The position columns of a node or an edge row (written with its events, read when it has no pos row). */
export const POSITION: Record<Entity, readonly string[]> = {
  node: ['file', 'line_start', 'line_end', 'col'],
  edge: ['file', 'line', 'col'],
};

/** Every column an event of the kind carries besides repo/krate/run/ts/op/id. */
export const FIELDS: Record<RowKind, readonly string[]> = {
  node: [...SEMANTIC.node, ...POSITION.node],
  edge: [...SEMANTIC.edge, ...POSITION.edge],
  // crate_dir (where the crate sits in the repo) rides on a file's events without
  // being semantic: written whenever the row is, so a fold of the log and the
  // code_files state table agree on it
  file: [...SEMANTIC.file, 'crate_dir'],
};

/** parse_status of the manifest row (see ingest.ts: the crate's input fingerprint). */
export const MANIFEST_STATUS = 'manifest';
export const MANIFEST_PATH = 'Cargo.toml';

/** Stable id of a file row: (repo, krate, path). */
export function fileId(repo: string, krate: string, p: string): string {
  return createHash('sha256').update(JSON.stringify([repo, krate, 'file', p])).digest('hex').slice(0, 32);
}

export type Fields = Record<string, string | number | bigint | null>;

export function nodeFields(n: NodeFact): Fields {
  return {
    kind: n.kind, name: n.name, qpath: n.qpath, file: n.file, line_start: n.lineStart, line_end: n.lineEnd,
    visibility: n.visibility, signature: n.signature, parent: n.parent, body_hash: n.bodyHash,
    col: n.col, origin: n.origin, public_paths: n.publicPaths.length > 0 ? n.publicPaths.join('\n') : null, type_info: n.typeInfo,
  };
}

export function edgeFields(e: EdgeFact): Fields {
  return {
    src: e.src, dst: e.dst, dst_path: e.dstPath, dst_krate: e.dstKrate, edge_kind: e.kind, file: e.file, line: e.line,
    col: e.col, unresolved_reason: e.unresolvedReason, origin: e.origin, dispatch: e.dispatch,
  };
}

export function fileFields(f: FileFact): Fields {
  return { path: f.path, hash: f.hash, size: BigInt(f.size), parse_status: f.parseStatus };
}

function same(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    try {
      return a !== null && b !== null && BigInt(a as bigint) === BigInt(b as bigint);
    } catch {
      return false;
    }
  }
  return a === b;
}

export interface RowContext {
  repo: string;
  krate: string;
  run: string;
  /** Microseconds since the epoch. */
  ts: bigint;
}

export interface DeltaCounts {
  add: number;
  change: number;
  remove: number;
}

/** What a diff emits: event rows per kind, and (optionally) the new state of every id it touched. */
export interface DeltaSink {
  event(kind: Kind, row: EventRow): void;
  /**
   * The id's state after the delta: its fields, its position and whether that
   * comes from a live pos row (null fields: it is gone); `replaces`: it was
   * live before.
   */
  state?(kind: RowKind, id: string, fields: Fields | null, position: Position | null, moved: boolean, replaces: boolean): void;
}

/**
 * Emit the delta of `next` (id -> fields) against `prev` (the current state:
 * id -> row) and, for nodes and edges, `prevPos` (the live pos rows of those
 * ids) through `sink`. Ids appear once in `next` (a later duplicate wins).
 * Returns the counts of node/edge/file events (pos rows are not counted).
 */
export function diff(
  kind: RowKind, ctx: RowContext, prev: Map<string, Record<string, Value>>, next: Map<string, Fields>,
  sink: DeltaSink | ((row: EventRow) => void), prevPos: Map<string, Record<string, Value>> = new Map(),
): DeltaCounts {
  const out: DeltaSink = typeof sink === 'function' ? { event: (_k, r) => sink(r) } : sink;
  const counts: DeltaCounts = { add: 0, change: 0, remove: 0 };
  const cols = FIELDS[kind];
  const sem = SEMANTIC[kind];
  const entity: Entity | null = kind === 'file' ? null : kind;
  const common = (op: Op, id: string): EventRow => ({ repo: ctx.repo, krate: ctx.krate, run: ctx.run, ts: ctx.ts, op, id });
  const row = (op: Op, id: string, f: Record<string, unknown>): EventRow => {
    const r = common(op, id);
    for (const c of cols) r[c] = f[c] ?? null;
    return r;
  };
  const posRow = (op: Op, id: string, p: Position): EventRow => ({ ...common(op, id), entity, ...p });
  for (const [id, f] of next) {
    const old = prev.get(id);
    const p = prevPos.get(id);
    // the position as the entity's own row holds it (ends a row has no column for are not recorded)
    const np = entity ? ownPosition(entity, row('add', id, f)) : null;
    if (!old) {
      out.event(kind, row('add', id, f));
      counts.add++;
      // a live pos row of an id not live (not written by ingest) would win over the add's own
      if (p && np && !samePosition(posOf(p), np)) out.event('pos', posRow('change', id, np));
      out.state?.(kind, id, f, np, p !== undefined, false);
      continue;
    }
    const changed = sem.some((c) => !same(old[c], f[c]));
    const moved = entity !== null && np !== null && !samePosition(p ? posOf(p) : ownPosition(entity, old), np);
    if (changed) {
      out.event(kind, row('change', id, f));
      counts.change++;
      if (p && moved) out.event('pos', posRow('change', id, np!));
    } else if (moved) {
      out.event('pos', posRow(p ? 'change' : 'add', id, np!));
    }
    if (changed || moved) out.state?.(kind, id, f, np, p !== undefined || (moved && !changed), true);
  }
  for (const [id, old] of prev) {
    if (next.has(id)) continue;
    // a remove carries the last known fields, so history shows what went away
    out.event(kind, row('remove', id, old));
    counts.remove++;
    const p = prevPos.get(id);
    if (p) out.event('pos', posRow('remove', id, posOf(p)));
    out.state?.(kind, id, null, null, false, true);
  }
  // pos rows of ids no longer live that were not removed with them (not written by ingest): removed now
  for (const [id, p] of prevPos) if (!prev.has(id) && !next.has(id)) out.event('pos', posRow('remove', id, posOf(p)));
  return counts;
}

export function addCounts(into: DeltaCounts, c: DeltaCounts): void {
  into.add += c.add;
  into.change += c.change;
  into.remove += c.remove;
}

/** A value in its canonical Value form (the common cases without a call; the rest as rowsToBatch coerces them). */
function canon(t: PrimitiveType, v: unknown, kind: Kind, i: number, col: string): Value {
  if (v === null || v === undefined) return null;
  if (t.type === 'string' && typeof v === 'string') return v;
  if (t.type === 'int' && typeof v === 'number' && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) return v;
  return coerceValue(t, v, `${kind} row ${i} column ${col}`);
}

/**
 * The rows `diff` emits for a crate the lake has never seen (every id an
 * `add`), as one batch of the kind's schema: the same rows, in the same order,
 * as `rowsToBatch` of them would give, without building row objects.
 */
export function addBatch(kind: Kind, ctx: RowContext, next: Map<string, Fields>): Batch {
  const fields = kindSchema(kind).fields;
  const n = next.size;
  const common: Record<string, Value> = { repo: ctx.repo, krate: ctx.krate, run: ctx.run, ts: ctx.ts, op: 'add' };
  const columns: Value[][] = fields.map((f) => {
    const col = new Array<Value>(n);
    if (f.name in common) {
      col.fill(common[f.name]!);
      return col;
    }
    if (f.type.type === 'struct' || f.type.type === 'list' || f.type.type === 'map') throw new Error(`${kind}: column ${f.name} is not primitive`);
    const t = f.type;
    let i = 0;
    if (f.name === 'id') {
      for (const id of next.keys()) {
        col[i] = canon(t, id, kind, i, f.name);
        i++;
      }
    } else {
      for (const fs of next.values()) {
        const v = canon(t, fs[f.name], kind, i, f.name);
        if (v === null && f.required) throw new Error(`${kind} row ${i}: column ${f.name} is required`);
        col[i] = v;
        i++;
      }
    }
    return col;
  });
  return { fields, numRows: n, columns };
}
