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
import type { Value } from '../lake/spec/types.ts';
import type { EventRow } from '../log/event-log.ts';
import type { Kind, Op } from '../log/schema.ts';

/** The columns that describe a node, an edge, a file (everything but repo/krate/run/ts/op/id). */
export const FIELDS: Record<Kind, readonly string[]> = {
  node: ['kind', 'name', 'qpath', 'file', 'line_start', 'line_end', 'visibility', 'signature', 'parent', 'body_hash'],
  edge: ['src', 'dst', 'dst_path', 'dst_krate', 'edge_kind', 'file', 'line'],
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
  };
}

export function edgeFields(e: EdgeFact): Fields {
  return { src: e.src, dst: e.dst, dst_path: e.dstPath, dst_krate: e.dstKrate, edge_kind: e.kind, file: e.file, line: e.line };
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
