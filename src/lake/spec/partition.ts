// Partition specs and sort orders as JSON, the partition tuple type a spec
// gives a manifest, partition values of a row, and the Hive-style path of a
// partition. Pure functions, no I/O. Invariant: partitionValues and
// partitionPath agree with the reference implementation for every transform
// we can apply; a spec naming a column the schema lacks still parses and types
// (its values are unknown), so old specs never make a table unreadable.

import type { Json } from './json.ts';
import { fieldsById, isPrimitive } from './schema.ts';
import { applyTransform, parseTransform, transformResultType, transformToString } from './transforms.ts';
import type { NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, SortField, SortOrder, StructType, Value } from './types.ts';
import { formatDate, valueToJson } from './values.ts';

/** Partition field ids start here (v1 specs without field ids number their fields from it). */
export const PARTITION_DATA_ID_START = 1000;

const isObject = (j: Json | undefined): j is { [key: string]: Json } =>
  typeof j === 'object' && j !== null && !Array.isArray(j) && typeof j !== 'bigint';

const show = (j: Json | undefined): string =>
  j === undefined ? 'nothing' : JSON.stringify(j, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

function int(o: { [key: string]: Json }, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${what}: expected integer "${key}", found ${show(v)}`);
  return v;
}

function str(o: { [key: string]: Json }, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new TypeError(`${what}: expected string "${key}", found ${show(v)}`);
  return v;
}

/** `source-id`, or the first of v3's `source-ids`. */
function sourceId(o: { [key: string]: Json }, what: string): number {
  const ids = o['source-ids'];
  if (o['source-id'] === undefined && Array.isArray(ids) && typeof ids[0] === 'number') return ids[0];
  return int(o, 'source-id', what);
}

/** The fields of a spec (v2 objects, or a v1 `partition-spec` array whose fields may lack ids). */
export function parsePartitionFields(j: Json, what: string): PartitionField[] {
  if (!Array.isArray(j)) throw new TypeError(`${what}: expected a list of partition fields, found ${show(j)}`);
  return j.map((f, i) => {
    const w = `${what}[${i}]`;
    if (!isObject(f)) throw new TypeError(`${w}: expected a partition field object, found ${show(f)}`);
    return {
      sourceId: sourceId(f, w),
      fieldId: f['field-id'] === undefined ? PARTITION_DATA_ID_START + i : int(f, 'field-id', w),
      name: str(f, 'name', w),
      transform: parseTransform(str(f, 'transform', w)),
    };
  });
}

export function parsePartitionSpec(j: Json, what: string): PartitionSpec {
  if (!isObject(j)) throw new TypeError(`${what}: expected a partition spec object, found ${show(j)}`);
  return { specId: int(j, 'spec-id', what), fields: parsePartitionFields(j.fields ?? null, `${what}.fields`) };
}

/** Java's field key order: name, transform, source-id, field-id. */
export function partitionFieldsToJson(s: PartitionSpec): Json {
  return s.fields.map((f) => ({ name: f.name, transform: transformToString(f.transform), 'source-id': f.sourceId, 'field-id': f.fieldId }));
}

export function partitionSpecToJson(s: PartitionSpec): Json {
  return { 'spec-id': s.specId, fields: partitionFieldsToJson(s) };
}

/** Same fields (source, transform, name) in the same order; spec ids and partition field ids
 * are ignored, like Java's `compatibleWith` (reuse a spec instead of adding an equal one). */
export function specsEquivalent(a: PartitionSpec, b: PartitionSpec): boolean {
  return (
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i]!;
      return f.sourceId === g.sourceId && f.name === g.name && transformToString(f.transform) === transformToString(g.transform);
    })
  );
}

/** Source type of a partition field, or undefined when the schema lacks a primitive column with that id. */
export function partitionSourceType(f: PartitionField, schema: Schema): PrimitiveType | undefined {
  const src = fieldsById(schema).get(f.sourceId);
  return src && isPrimitive(src.type) ? src.type : undefined;
}

/** The partition tuple's struct: one optional field per spec field, id = partition field id,
 * type = the transform's result type (`unknown` when the source column is missing). */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  const byId = fieldsById(schema);
  const fields: NestedField[] = spec.fields.map((f) => {
    const src = byId.get(f.sourceId);
    const type: PrimitiveType = src && isPrimitive(src.type) ? transformResultType(f.transform, src.type) : { type: 'unknown' };
    return { id: f.fieldId, name: f.name, required: false, type };
  });
  return { type: 'struct', fields };
}

/** Partition values of one row, in spec field order. `row(fieldId)` gives the row's source value. */
export function partitionValues(spec: PartitionSpec, schema: Schema, row: (fieldId: number) => Value): Value[] {
  const byId = fieldsById(schema);
  return spec.fields.map((f) => {
    if (f.transform.kind === 'void') return null;
    const src = byId.get(f.sourceId);
    if (!src || !isPrimitive(src.type)) {
      throw new TypeError(`partition field ${f.name} (${f.fieldId}): source column ${f.sourceId} is not a primitive column of schema ${schema.schemaId}`);
    }
    return applyTransform(f.transform, src.type, row(f.sourceId));
  });
}

/** Java's URLEncoder.encode(UTF-8): keep [A-Za-z0-9.*_-], space as "+", the rest %XX. */
export function escapePathValue(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

const pad = (n: number, w: number): string => (n < 0 ? `-${String(-n).padStart(w, '0')}` : String(n).padStart(w, '0'));

/** Human text of a partition value (Java's Transform.toHumanString). */
export function partitionHumanString(f: PartitionField, resultType: PrimitiveType, v: Value): string {
  if (v === null) return 'null';
  switch (f.transform.kind) {
    case 'year':
      return pad(1970 + (v as number), 4);
    case 'month': {
      const m = v as number;
      const y = 1970 + Math.floor(m / 12);
      return `${pad(y, 4)}-${pad(m - Math.floor(m / 12) * 12 + 1, 2)}`;
    }
    case 'day':
      return formatDate(v as number);
    case 'hour': {
      const h = v as number;
      const days = Math.floor(h / 24);
      return `${formatDate(days)}-${pad(h - days * 24, 2)}`;
    }
    case 'bucket':
      return String(v);
  }
  switch (resultType.type) {
    case 'date':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return String(valueToJson(resultType, v));
    case 'binary':
    case 'fixed':
      return Buffer.from(v as Uint8Array).toString('base64');
    default:
      return String(v);
  }
}

/** Hive-style relative path of a partition: `name=value/...` with escaped values, `null` for nulls. */
export function partitionPath(spec: PartitionSpec, schema: Schema, values: Value[]): string {
  const types = partitionType(spec, schema).fields;
  return spec.fields
    .map((f, i) => `${escapePathValue(f.name)}=${escapePathValue(partitionHumanString(f, types[i]!.type as PrimitiveType, values[i] ?? null))}`)
    .join('/');
}

// ---- sort orders ------------------------------------------------------------

export function parseSortOrder(j: Json, what: string): SortOrder {
  if (!isObject(j)) throw new TypeError(`${what}: expected a sort order object, found ${show(j)}`);
  const fields = j.fields;
  if (!Array.isArray(fields)) throw new TypeError(`${what}: expected a "fields" list, found ${show(fields)}`);
  return {
    orderId: int(j, 'order-id', what),
    fields: fields.map((f, i): SortField => {
      const w = `${what}.fields[${i}]`;
      if (!isObject(f)) throw new TypeError(`${w}: expected a sort field object, found ${show(f)}`);
      const direction = str(f, 'direction', w).toLowerCase();
      const nullOrder = str(f, 'null-order', w).toLowerCase();
      if (direction !== 'asc' && direction !== 'desc') throw new TypeError(`${w}: expected direction "asc" or "desc", found ${show(f.direction)}`);
      if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') {
        throw new TypeError(`${w}: expected null-order "nulls-first" or "nulls-last", found ${show(f['null-order'])}`);
      }
      return { sourceId: sourceId(f, w), transform: parseTransform(str(f, 'transform', w)), direction, nullOrder };
    }),
  };
}

/** Java's key order: order-id, fields[transform, source-id, direction, null-order]. */
export function sortOrderToJson(o: SortOrder): Json {
  return {
    'order-id': o.orderId,
    fields: o.fields.map((f) => ({
      transform: transformToString(f.transform),
      'source-id': f.sourceId,
      direction: f.direction,
      'null-order': f.nullOrder,
    })),
  };
}

/** The unsorted order (id 0, no fields). */
export const UNSORTED_ORDER: SortOrder = { orderId: 0, fields: [] };
