// Every name of the serving state tables: tables, columns, sort orders and
// properties. Nothing else spells them. They are ordinary Iceberg v2 tables
// in namespace `mimir`, unpartitioned, each kept sorted for the lookups it
// serves (docs/design.md, "Serving state tables"). Field ids are fixed here
// forever. Rows are the current state of the log: one row per live node,
// edge, file (code_keys: one per lookup key of a live node), with the
// position merged from `pos` rows — except `code_paths`, which is the log's
// index by qualified path: one row per (qpath, id) pair any node event up to
// the generation carried, removed and renamed items included (append-only,
// never an equality delete; optional: a lake made before it answers history
// from the log until `state maintain` or `state rebuild` builds it).
import type { NestedField, Schema, SortOrder } from '../../lake/spec/types.ts';

export const CODE_NODES = 'code_nodes';
export const CODE_KEYS = 'code_keys';
export const CODE_EDGES_IN = 'code_edges_in';
export const CODE_EDGES_OUT = 'code_edges_out';
export const CODE_FILES = 'code_files';
export const CODE_PATHS = 'code_paths';

export type StateTable = typeof CODE_NODES | typeof CODE_KEYS | typeof CODE_EDGES_IN | typeof CODE_EDGES_OUT | typeof CODE_FILES | typeof CODE_PATHS;
/** The tables a lake "has state tables" by: questions read them, every writer keeps them in step. */
export const CORE_STATE_TABLES: readonly StateTable[] = [CODE_NODES, CODE_KEYS, CODE_EDGES_IN, CODE_EDGES_OUT, CODE_FILES];
/**
 * Every state table: the core ones, then `code_paths` (optional: kept in step
 * when the lake has it, built by rebuild / maintain; a view without it
 * answers history from the log).
 */
export const STATE_TABLES: readonly StateTable[] = [...CORE_STATE_TABLES, CODE_PATHS];
/**
 * Table property of a code_paths being built from the log (`state maintain`
 * on a lake made before it, `state rebuild` creating it): set at its creation,
 * removed by the commit that lands the fold. While set, questions do not read
 * the table (history scans the log) and runs do not write it (their commit
 * asserts it is still set: one that lands after the fold is redone).
 */
export const PROP_BUILDING = 'mimir.state.building';

/** Tables written append-only (no row of them is ever deleted by a commit: no equality delete files). */
export const APPEND_ONLY: ReadonlySet<StateTable> = new Set([CODE_PATHS]);

/** Which entity a table holds rows of (the equality delete key is always `id`). */
export const TABLE_ENTITY: Record<StateTable, 'node' | 'edge' | 'file'> = {
  [CODE_NODES]: 'node',
  [CODE_KEYS]: 'node',
  [CODE_EDGES_IN]: 'edge',
  [CODE_EDGES_OUT]: 'edge',
  [CODE_FILES]: 'file',
  [CODE_PATHS]: 'node',
};

/** code_keys.via: what a key is. */
export type Via = 'id' | 'qpath' | 'public';

const str = (id: number, name: string, required = false): NestedField => ({ id, name, required, type: { type: 'string' } });
const int = (id: number, name: string): NestedField => ({ id, name, required: false, type: { type: 'int' } });
const long = (id: number, name: string): NestedField => ({ id, name, required: false, type: { type: 'long' } });
const bool = (id: number, name: string): NestedField => ({ id, name, required: false, type: { type: 'boolean' } });

/** Position columns every node and edge row carries (merged: the live pos row's, else the event row's own). */
const POSITION = (first: number): NestedField[] => [
  str(first, 'file'),
  int(first + 1, 'line'),
  int(first + 2, 'col'),
  int(first + 3, 'line_end'),
  int(first + 4, 'col_end'),
  // the position comes from a live pos row (not the node/edge event's own columns)
  bool(first + 5, 'moved'),
];

const NODES: NestedField[] = [
  str(1, 'name'),
  str(2, 'qpath'),
  str(3, 'id', true),
  str(4, 'repo', true),
  str(5, 'krate', true),
  str(6, 'kind'),
  str(7, 'visibility'),
  str(8, 'signature'),
  str(9, 'parent'),
  str(10, 'body_hash'),
  ...POSITION(11), // 11..16
  str(17, 'origin'),
  str(18, 'public_paths'),
  str(19, 'type_info'),
];

const KEYS: NestedField[] = [
  str(1, 'key', true),
  str(2, 'via', true),
  str(3, 'id', true),
  str(4, 'name'),
  str(5, 'repo', true),
  str(6, 'krate', true),
  str(7, 'kind'),
  // the node's display columns, on its `id` row only and only in the crate-keyed layout
  // (KEYS_BY_CRATE): a node by id is then one row of code_keys, code_nodes unread
  str(8, 'qpath'),
  str(9, 'visibility'),
  str(10, 'signature'),
  str(11, 'parent'),
  str(12, 'file'),
  int(13, 'line'),
  int(14, 'col'),
  int(15, 'line_end'),
];

/**
 * Table property of code_keys: how its `id` rows are laid out. Set
 * (`krate`) by the creation of a new lake's code_keys and by the commit of
 * `mimir state rebuild` that refolds it: each node's `id` row has key
 * `krate + '\0' + id` (idKey; a crate's ids are adjacent, so the ids one answer
 * looks up fall in a few pages) and carries the node's display columns
 * (KEY_NODE_COLUMNS). Absent (a lake made before it): key = id, display
 * columns null. Every writer writes the layout the property names, and a
 * commit that wrote code_keys asserts the property is still what it read.
 * `state maintain --force` never sets it (a merge does not recompute keys).
 */
export const PROP_KEYS = 'mimir.state.keys';
export const KEYS_BY_CRATE = 'krate';

/** The layout of a code_keys (its properties): `krate` (crate-keyed id rows with display columns) or `id`. */
export type KeysLayout = 'krate' | 'id';
export const keysLayout = (properties: Record<string, string>): KeysLayout => (properties[PROP_KEYS] === KEYS_BY_CRATE ? 'krate' : 'id');

/** The key of a node's `id` row in a layout. */
export const idKey = (layout: KeysLayout, krate: string, id: string): string => (layout === 'krate' ? `${krate}\u0000${id}` : id);

/** The code_nodes columns a crate-keyed `id` row of code_keys carries too (what a node shown by id needs). */
export const KEY_NODE_COLUMNS: readonly string[] = ['id', 'repo', 'krate', 'kind', 'name', 'qpath', 'file', 'line', 'col', 'line_end', 'visibility', 'signature', 'parent'];

/** One schema for both edge tables (the same rows, sorted two ways). */
const EDGES: NestedField[] = [
  // the target's last path segment (see dstName): what refs and callers look up by
  str(1, 'dst_name'),
  str(2, 'dst'),
  str(3, 'edge_kind'),
  str(4, 'src'),
  str(5, 'id', true),
  str(6, 'repo', true),
  str(7, 'krate', true),
  str(8, 'dst_path'),
  str(9, 'dst_krate'),
  ...POSITION(10), // 10..15
  str(16, 'unresolved_reason'),
  str(17, 'origin'),
  str(18, 'dispatch'),
];

const FILES: NestedField[] = [
  str(1, 'repo', true),
  str(2, 'krate', true),
  str(3, 'path'),
  str(4, 'id', true),
  str(5, 'hash'),
  long(6, 'size'),
  str(7, 'parse_status'),
  str(8, 'crate_dir'),
];

/** code_paths: a (qpath, id) pair some node event carried, and the id's crate (an id lives in one). */
const PATHS: NestedField[] = [
  str(1, 'qpath', true),
  str(2, 'id', true),
  str(3, 'repo', true),
  str(4, 'krate', true),
];

const SCHEMAS: Record<StateTable, Schema> = {
  [CODE_NODES]: { schemaId: 0, fields: NODES },
  [CODE_KEYS]: { schemaId: 0, fields: KEYS },
  [CODE_EDGES_IN]: { schemaId: 0, fields: EDGES },
  [CODE_EDGES_OUT]: { schemaId: 0, fields: EDGES },
  [CODE_FILES]: { schemaId: 0, fields: FILES },
  [CODE_PATHS]: { schemaId: 0, fields: PATHS },
};

/** The columns each table is sorted by, in order (ascending, nulls first; strings by UTF-8 bytes). */
export const SORT_COLUMNS: Record<StateTable, readonly string[]> = {
  // (name, id): a node by id is one page of its name's rows (nodesById: name from code_keys, then
  // name = N and id = X), however many items of the universe share the name ("new", "add", impls' "")
  [CODE_NODES]: ['name', 'id'],
  [CODE_KEYS]: ['key', 'id'],
  [CODE_EDGES_IN]: ['dst_name', 'dst', 'edge_kind', 'id'],
  [CODE_EDGES_OUT]: ['src', 'edge_kind', 'id'],
  [CODE_FILES]: ['repo', 'krate', 'path', 'id'],
  // history's first lookup: every id a qualified path ever named is one page of that path's rows
  [CODE_PATHS]: ['qpath', 'id'],
};

/**
 * Orders the files of older lakes may still be sorted by (a table created
 * before its order changed): they share the current order's first column, so
 * a merge re-sorts each group of rows equal in it (maintain.ts).
 */
export const LEGACY_SORT_COLUMNS: Partial<Record<StateTable, readonly string[]>> = {
  [CODE_NODES]: ['name', 'qpath', 'id'],
};

export function stateSchema(t: StateTable): Schema {
  return SCHEMAS[t];
}

/** The Iceberg sort order of a table (recorded in its metadata, for other engines). */
export function stateSortOrder(t: StateTable): SortOrder {
  const fields = SCHEMAS[t].fields;
  return {
    orderId: 1,
    fields: SORT_COLUMNS[t].map((name) => ({
      sourceId: fields.find((f) => f.name === name)!.id,
      transform: { kind: 'identity' as const },
      direction: 'asc' as const,
      nullOrder: 'nulls-first' as const,
    })),
  };
}

/** Table properties: small pages, so a point lookup decodes little; files of a bounded row count. */
export const STATE_TABLE_PROPERTIES: Record<string, string> = {
  'write.parquet.compression-codec': 'zstd',
  // zstd level 1, not zstd's default 3: on bench:ingest's state files 11% less of the
  // encoder's CPU and 2.4% smaller files (small pages: level 3's search buys nothing there)
  'write.parquet.compression-level': '1',
  'write.parquet.page-size-bytes': '8192',
  // and at most 512 rows a page: a dictionary-coded column's codes count 4
  // bytes, so its 8 KiB pages held 2,048 rows (code_edges_in's dst_name at
  // 10x: a lookup decoded 2,047 rows where 1x decoded 788 PLAIN ones)
  'write.parquet.page-row-limit': '512',
  // a point lookup decodes the whole dictionary of each column it reads: ids,
  // paths and parents (tens of thousands of distinct values a row group) are
  // written PLAIN, low-cardinality columns (repo, krate, kind) keep theirs
  'write.parquet.dict-size-bytes': '16384',
  'write.parquet.row-group-limit': '65536',
  // page bounds only on the columns lookups filter by (the sort columns and a few more)
  'mimir.write.page-index.columns': 'repo,krate,id,name,qpath,kind,key,via,src,dst,dst_name,dst_path,dst_krate,edge_kind,path,hash',
  // every run adds a manifest or two: merged past 16, so a lookup reads a few
  'commit.manifest.min-count-to-merge': '16',
  // a rewrite buffers one file's rows before encoding it: this bounds its memory
  'mimir.write.file-rows': '262144',
  'mimir.table': 'state',
};

/**
 * The name an edge's target is looked up by: the last `::` segment of its
 * path, without a method call's leading `.` or a macro's trailing `!`. A
 * function of the row alone, so an edge's row never depends on other rows.
 */
export function dstName(path: string | null): string | null {
  if (path === null) return null;
  const at = path.lastIndexOf('::');
  let s = at >= 0 ? path.slice(at + 2) : path;
  if (s.startsWith('.')) s = s.slice(1);
  if (s.endsWith('!')) s = s.slice(0, -1);
  return s;
}
