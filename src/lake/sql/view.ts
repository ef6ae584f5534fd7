// The SQL text of a DuckDB view over one Iceberg table at one snapshot, built
// from the snapshot's live files as its manifests list them (never a listing
// of a data folder), with the table's deletes applied as Iceberg v2 says:
// - data files are read with DuckDB's `read_parquet`, columns mapped by
//   Iceberg field id to the schema's names and types (`schema = map {…}`), so
//   renamed columns read right and a column added later reads as its initial
//   default (NULL without one) in older files; a field added inside a struct
//   reads as its initial default in the files that lack it (which files those
//   are comes from their footers: `present`); a file without field ids of a
//   table with a name mapping is read on its own, its columns picked by the
//   names the mapping gives each field id (`columns`), never by today's names;
// - a position delete (file_path, pos) removes row `pos` of the data file whose
//   path is `file_path`, when the data file's data sequence number is <= the
//   delete file's;
// - an equality delete removes a data row whose equality columns all match
//   (NULL matches NULL) when the data file's data sequence number is < the
//   delete file's, and the delete is global (unpartitioned spec) or of the
//   same spec and partition as the data file.
// A table without a snapshot or without data files is an empty view with the
// schema's columns and types. Pure functions: no I/O, no DuckDB; paths are
// given local (session.ts maps metadata paths to local files).
import type { IcebergType, NestedField, Schema, Value } from '../spec/types.ts';
import { displayValue } from '../spec/values.ts';
import { stringifyJson } from '../spec/json.ts';

/** A live data file: where DuckDB reads it, the path the metadata (and position deletes) name it by, its data sequence number and partition key. */
export interface ViewDataFile {
  local: string;
  uri: string;
  seq: bigint;
  /** Spec id and partition tuple, as text: equality deletes of a partitioned spec apply within one key. */
  partitionKey: string;
  /** Values of identity partition fields by source field id: a file may leave those columns out (Iceberg lets writers). */
  identity?: Map<number, Value>;
  /** The field ids the file holds, where the schema has fields with initial defaults inside structs (from its footer). */
  present?: Set<number>;
  /** For a file without field ids (a name-mapped table): each top-level field id's column name in the file. */
  columns?: Map<number, string>;
}

export interface ViewPositionDeleteFile {
  local: string;
  seq: bigint;
}

export interface ViewEqualityDeleteFile {
  local: string;
  seq: bigint;
  /** Undefined: a delete of an unpartitioned spec, applying to every partition. */
  partitionKey?: string;
  equalityIds: number[];
}

export interface ViewInput {
  /** The schema rows are read with (the snapshot's for time travel, else the current one). */
  schema: Schema;
  data: ViewDataFile[];
  positionDeletes: ViewPositionDeleteFile[];
  equalityDeletes: ViewEqualityDeleteFile[];
}

/** `"name"` with inner quotes doubled. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `'text'` with inner quotes doubled. */
export const quoteString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** DuckDB's type for an Iceberg type. */
export function duckType(t: IcebergType): string {
  switch (t.type) {
    case 'boolean':
      return 'BOOLEAN';
    case 'int':
      return 'INTEGER';
    case 'long':
      return 'BIGINT';
    case 'float':
      return 'FLOAT';
    case 'double':
      return 'DOUBLE';
    case 'decimal':
      return `DECIMAL(${t.precision}, ${t.scale})`;
    case 'date':
      return 'DATE';
    case 'time':
      return 'TIME';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'timestamptz':
      return 'TIMESTAMPTZ';
    case 'timestamp_ns':
      return 'TIMESTAMP_NS';
    case 'timestamptz_ns':
      // DuckDB has no nanosecond TIMESTAMPTZ; microseconds keep the instant
      return 'TIMESTAMPTZ';
    case 'string':
      return 'VARCHAR';
    case 'uuid':
      return 'UUID';
    case 'fixed':
    case 'binary':
      return 'BLOB';
    case 'unknown':
      return 'VARCHAR';
    case 'struct':
      return `STRUCT(${t.fields.map((f) => `${quoteIdent(f.name)} ${duckType(f.type)}`).join(', ')})`;
    case 'list':
      return `${duckType(t.element)}[]`;
    case 'map':
      return `MAP(${duckType(t.key)}, ${duckType(t.value)})`;
  }
}

/**
 * An initial default as `read_parquet`'s `default_value` wants it: VARCHAR text
 * DuckDB casts to the column's type (every entry of the map has one type), or
 * NULL. Nested defaults are not mapped (NULL).
 */
export function defaultText(t: IcebergType, v: Value | undefined): string {
  if (v === undefined || v === null || t.type === 'struct' || t.type === 'list' || t.type === 'map') return 'NULL::VARCHAR';
  if (t.type === 'fixed' || t.type === 'binary') return quoteString([...(v as Uint8Array)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join(''));
  const shown = displayValue(t, v);
  return quoteString(typeof shown === 'string' ? shown : stringifyJson(shown));
}

/** Fields nested in structs (at any depth below the top) that have an initial default: their ids. */
export function nestedDefaultIds(fields: NestedField[]): number[] {
  const out: number[] = [];
  const visit = (t: IcebergType): void => {
    if (t.type !== 'struct') return;
    for (const f of t.fields) {
      if (f.initialDefault !== undefined && f.initialDefault !== null) out.push(f.id);
      visit(f.type);
    }
  };
  for (const f of fields) visit(f.type);
  return out;
}

/** A struct-typed value `ref` with its nested initial defaults filled where the file lacks the field (`f.h<id>` false). */
function withNestedDefaults(t: IcebergType, ref: string, ids: Set<number>): string {
  if (t.type !== 'struct' || !hasNested(t, ids)) return ref;
  const parts = t.fields.map((c) => {
    const inner = `${ref}.${quoteIdent(c.name)}`;
    const value = ids.has(c.id) ? `CASE WHEN f.h${c.id} THEN ${inner} ELSE CAST(${defaultText(c.type, c.initialDefault)} AS ${duckType(c.type)}) END` : withNestedDefaults(c.type, inner, ids);
    return `${quoteIdent(c.name)} := ${value}`;
  });
  return `CASE WHEN ${ref} IS NULL THEN NULL ELSE CAST(struct_pack(${parts.join(', ')}) AS ${duckType(t)}) END`;
}

function hasNested(t: IcebergType, ids: Set<number>): boolean {
  return t.type === 'struct' && t.fields.some((c) => ids.has(c.id) || hasNested(c.type, ids));
}

/** `read_parquet`'s `schema` argument: field id -> name, type and default, for the fields given. */
function fieldIdMap(fields: NestedField[]): string {
  const entries = fields.map((f) => `${f.id}: {name: ${quoteString(f.name)}, type: ${quoteString(duckType(f.type))}, default_value: ${defaultText(f.type, f.initialDefault)}}`);
  return `map {${entries.join(', ')}}`;
}

const list = (paths: string[]): string => `[${paths.map(quoteString).join(', ')}]`;

/** `VALUES (…), (…)` as a derived table with these column names. */
function valuesTable(alias: string, rows: string[][], columns: string[]): string {
  return `(VALUES ${rows.map((r) => `(${r.join(', ')})`).join(', ')}) AS ${alias}(${columns.join(', ')})`;
}

// internal column names: chosen so they cannot collide with a table's columns in practice
const F_NAME = '__mimir_file';
const F_URI = '__mimir_uri';
const F_SEQ = '__mimir_seq';
const F_PART = '__mimir_part';

/** The SELECT a view is defined by (no trailing semicolon). */
export function viewSelect(input: ViewInput): string {
  const fields = input.schema.fields;
  const cols = fields.map((f) => quoteIdent(f.name));
  if (input.data.length === 0) {
    const typed = fields.map((f) => `CAST(NULL AS ${duckType(f.type)}) AS ${quoteIdent(f.name)}`);
    return `SELECT ${typed.join(', ') || '1 AS "_"'} WHERE false`;
  }
  // identity partition columns: the file's value, else the partition's (a file may omit the column)
  const byIdField = new Map(fields.map((f) => [f.id, f]));
  const identityIds = [...new Set(input.data.flatMap((d) => [...(d.identity?.keys() ?? [])]))].filter((id) => byIdField.has(id));
  const nested = new Set(nestedDefaultIds(fields));
  const nestedIds = [...nested];
  const files = valuesTable(
    'f',
    input.data.map((d) => [
      quoteString(d.local), quoteString(d.uri), `${d.seq}::BIGINT`, quoteString(d.partitionKey),
      ...identityIds.map((id) => defaultText(byIdField.get(id)!.type, d.identity?.get(id))),
      // a file whose footer was not read holds every field
      ...nestedIds.map((id) => (d.present === undefined || d.present.has(id) ? 'true' : 'false')),
    ]),
    ['local', 'uri', 'seq', 'part', ...identityIds.map((id) => `p${id}`), ...nestedIds.map((id) => `h${id}`)],
  );
  const filled = fields.map((f) => {
    const value = withNestedDefaults(f.type, `r.${quoteIdent(f.name)}`, nested);
    return identityIds.includes(f.id) ? `COALESCE(${value}, CAST(f.p${f.id} AS ${duckType(f.type)})) AS ${quoteIdent(f.name)}` : `${value} AS ${quoteIdent(f.name)}`;
  });
  // the files read by field id in one read_parquet; each name-mapped file without ids on its own
  const byId = input.data.filter((d) => d.columns === undefined);
  const parts: string[] = [];
  if (byId.length > 0) {
    parts.push(
      `SELECT ${cols.join(', ')}, file_row_number, ${F_NAME} FROM read_parquet(${list(byId.map((d) => d.local))}, schema = ${fieldIdMap(fields)}, filename = ${quoteString(F_NAME)}, file_row_number = true)`,
    );
  }
  for (const d of input.data) {
    if (d.columns === undefined) continue;
    const picked = fields.map((f) => {
      const col = d.columns!.get(f.id);
      return col === undefined ? `CAST(${defaultText(f.type, f.initialDefault)} AS ${duckType(f.type)}) AS ${quoteIdent(f.name)}` : `CAST(${quoteIdent(col)} AS ${duckType(f.type)}) AS ${quoteIdent(f.name)}`;
    });
    parts.push(`SELECT ${picked.join(', ')}, file_row_number, ${F_NAME} FROM read_parquet(${list([d.local])}, filename = ${quoteString(F_NAME)}, file_row_number = true)`);
  }
  const rows =
    `SELECT ${filled.join(', ')}, r.file_row_number, f.uri AS ${F_URI}, f.seq AS ${F_SEQ}, f.part AS ${F_PART} ` +
    `FROM (${parts.join(' UNION ALL ')}) r ` +
    `JOIN ${files} ON r.${F_NAME} = f.local`;
  const where: string[] = [];
  if (input.positionDeletes.length > 0) {
    const pf = valuesTable('pf', input.positionDeletes.map((p) => [quoteString(p.local), `${p.seq}::BIGINT`]), ['local', 'seq']);
    const posRows = `SELECT p.file_path, p.pos, pf.seq FROM read_parquet(${list(input.positionDeletes.map((p) => p.local))}, filename = ${quoteString(F_NAME)}) p JOIN ${pf} ON p.${F_NAME} = pf.local`;
    where.push(`NOT EXISTS (SELECT 1 FROM (${posRows}) pd WHERE pd.file_path = d.${F_URI} AND pd.pos = d.file_row_number AND pd.seq >= d.${F_SEQ})`);
  }
  // equality deletes, one anti-join per set of equality columns
  const byIds = new Map<string, ViewEqualityDeleteFile[]>();
  for (const e of input.equalityDeletes) {
    const key = [...e.equalityIds].sort((a, b) => a - b).join(',');
    byIds.set(key, [...(byIds.get(key) ?? []), e]);
  }
  const fieldById = new Map(fields.map((f) => [f.id, f]));
  for (const [key, group] of byIds) {
    const ids = key.split(',').map(Number);
    const eqFields = ids.map((id) => {
      const f = fieldById.get(id);
      if (!f) throw new Error(`an equality delete file (${group[0]!.local}) names field id ${id}, which the schema read (${fields.map((x) => `${x.id} ${x.name}`).join(', ')}) does not have; no view made`);
      return f;
    });
    const ef = valuesTable('ef', group.map((e) => [quoteString(e.local), `${e.seq}::BIGINT`, e.partitionKey === undefined ? 'NULL::VARCHAR' : quoteString(e.partitionKey)]), ['local', 'seq', 'part']);
    const eqRows =
      `SELECT e.*, ef.seq AS ${F_SEQ}, ef.part AS ${F_PART} FROM read_parquet(${list(group.map((e) => e.local))}, schema = ${fieldIdMap(eqFields)}, filename = ${quoteString(F_NAME)}) e ` +
      `JOIN ${ef} ON e.${F_NAME} = ef.local`;
    const match = eqFields.map((f) => `ed.${quoteIdent(f.name)} IS NOT DISTINCT FROM d.${quoteIdent(f.name)}`).join(' AND ');
    where.push(`NOT EXISTS (SELECT 1 FROM (${eqRows}) ed WHERE ed.${F_SEQ} > d.${F_SEQ} AND (ed.${F_PART} IS NULL OR ed.${F_PART} = d.${F_PART}) AND ${match})`);
  }
  return `SELECT ${cols.map((c) => `d.${c}`).join(', ')} FROM (${rows}) d${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
}
