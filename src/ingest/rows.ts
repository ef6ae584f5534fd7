// Graph facts -> event rows, and the delta of one crate's new facts against
// the lake's current state of that crate: `add` for a new id, `change` for an
// id whose fields (other than run/ts/op) differ, `remove` for an id no longer
// extracted. Pure functions; nothing here reads or writes the lake.
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
import { kindSchema, type Kind, type Op } from '../log/schema.ts';

/** The columns that describe a node, an edge, a file (everything but repo/krate/run/ts/op/id). */
export const FIELDS: Record<Kind, readonly string[]> = {
  node: ['kind', 'name', 'qpath', 'file', 'line_start', 'line_end', 'visibility', 'signature', 'parent', 'body_hash', 'col', 'origin', 'public_paths', 'type_info'],
  edge: ['src', 'dst', 'dst_path', 'dst_krate', 'edge_kind', 'file', 'line', 'col', 'unresolved_reason', 'origin', 'dispatch'],
  file: ['path', 'hash', 'size', 'parse_status'],
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

/**
 * Emit the delta of `next` (id -> fields) against `prev` (the current state:
 * id -> row) through `emit`. Ids appear once in `next` (a later duplicate
 * wins). Returns the counts.
 */
export function diff(
  kind: Kind, ctx: RowContext, prev: Map<string, Record<string, Value>>, next: Map<string, Fields>,
  emit: (row: EventRow) => void,
): DeltaCounts {
  const counts: DeltaCounts = { add: 0, change: 0, remove: 0 };
  const cols = FIELDS[kind];
  const row = (op: Op, id: string, f: Record<string, unknown>): EventRow => {
    const r: EventRow = { repo: ctx.repo, krate: ctx.krate, run: ctx.run, ts: ctx.ts, op, id };
    for (const c of cols) r[c] = f[c] ?? null;
    return r;
  };
  for (const [id, f] of next) {
    const old = prev.get(id);
    if (!old) {
      emit(row('add', id, f));
      counts.add++;
    } else if (cols.some((c) => !same(old[c], f[c]))) {
      emit(row('change', id, f));
      counts.change++;
    }
  }
  for (const [id, old] of prev) {
    if (next.has(id)) continue;
    // a remove carries the last known fields, so history shows what went away
    emit(row('remove', id, old));
    counts.remove++;
  }
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
