// Iceberg schemas and types as JSON (spec App. C): parse type strings and
// nested type objects, schemas with their field defaults, and write them back
// in the spec's shape. Pure functions, no I/O. Invariant: parse(toJson(x))
// equals x for every schema this module produces; a type or field that does
// not match the spec is refused with an error naming where it was found.

import type { Json } from './json.ts';
import type { IcebergType, ListType, MapType, NestedField, PrimitiveType, Schema, StructType } from './types.ts';
import { valueFromJson, valueToJson } from './values.ts';

export function isPrimitive(t: IcebergType): t is PrimitiveType {
  return t.type !== 'struct' && t.type !== 'list' && t.type !== 'map';
}

const SIMPLE = new Set([
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'binary',
  'unknown',
]);

const isObject = (j: Json | undefined): j is { [key: string]: Json } =>
  typeof j === 'object' && j !== null && !Array.isArray(j) && typeof j !== 'bigint';

const show = (j: Json | undefined): string => (j === undefined ? 'nothing' : JSON.stringify(j, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));

function intField(o: { [key: string]: Json }, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${what}: expected integer "${key}", found ${show(v)}`);
  return v;
}

function boolField(o: { [key: string]: Json }, key: string, what: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw new TypeError(`${what}: expected boolean "${key}", found ${show(v)}`);
  return v;
}

/** Parse one type: a primitive type string or a nested struct/list/map object. */
export function parseType(j: Json, what: string): IcebergType {
  if (typeof j === 'string') return parsePrimitive(j, what);
  if (!isObject(j)) throw new TypeError(`${what}: expected a type string or object, found ${show(j)}`);
  switch (j.type) {
    case 'struct':
      return parseStruct(j, what);
    case 'list': {
      const t: ListType = {
        type: 'list',
        elementId: intField(j, 'element-id', what),
        elementRequired: boolField(j, 'element-required', what),
        element: parseType(j.element ?? null, `${what}.element`),
      };
      return t;
    }
    case 'map': {
      const t: MapType = {
        type: 'map',
        keyId: intField(j, 'key-id', what),
        key: parseType(j.key ?? null, `${what}.key`),
        valueId: intField(j, 'value-id', what),
        valueRequired: boolField(j, 'value-required', what),
        value: parseType(j.value ?? null, `${what}.value`),
      };
      return t;
    }
    default:
      throw new TypeError(`${what}: expected a type object of type struct, list or map, found type ${show(j.type)}`);
  }
}

function parsePrimitive(s: string, what: string): PrimitiveType {
  const text = s.trim();
  if (SIMPLE.has(text)) return { type: text } as PrimitiveType;
  let m = /^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(text);
  if (m) {
    const precision = Number(m[1]);
    const scale = Number(m[2]);
    if (precision < 1 || precision > 38) throw new TypeError(`${what}: decimal precision must be 1..38, found ${s}`);
    if (scale > precision) throw new TypeError(`${what}: decimal scale must not exceed precision, found ${s}`);
    return { type: 'decimal', precision, scale };
  }
  m = /^fixed\s*\[\s*(\d+)\s*\]$/.exec(text);
  if (m) return { type: 'fixed', length: Number(m[1]) };
  const v3 = /^(variant|geometry|geography)\b/.exec(text);
  if (v3) {
    throw new TypeError(
      `${what}: type ${JSON.stringify(s)} is an Iceberg v3 type Mimir does not read (variant, geometry, geography are not supported) — the table was not opened`,
    );
  }
  throw new TypeError(`${what}: unsupported type ${JSON.stringify(s)}`);
}

function parseStruct(j: { [key: string]: Json }, what: string): StructType {
  const fields = j.fields;
  if (!Array.isArray(fields)) throw new TypeError(`${what}: expected a "fields" array, found ${show(fields)}`);
  return { type: 'struct', fields: fields.map((f, i) => parseField(f, `${what}.fields[${i}]`)) };
}

function parseField(j: Json, what: string): NestedField {
  if (!isObject(j)) throw new TypeError(`${what}: expected a field object, found ${show(j)}`);
  const id = intField(j, 'id', what);
  const name = j.name;
  if (typeof name !== 'string') throw new TypeError(`${what}: expected string "name", found ${show(name)}`);
  const where = `${what} (${name})`;
  const type = parseType(j.type ?? null, `${where}.type`);
  const f: NestedField = { id, name, required: boolField(j, 'required', where), type };
  if (typeof j.doc === 'string') f.doc = j.doc;
  if (j['initial-default'] !== undefined && j['initial-default'] !== null) {
    f.initialDefault = valueFromJson(type, j['initial-default'], `${where}.initial-default`);
  }
  if (j['write-default'] !== undefined && j['write-default'] !== null) {
    f.writeDefault = valueFromJson(type, j['write-default'], `${where}.write-default`);
  }
  return f;
}

/** Parse a schema object (`type: struct`, `schema-id`, `fields`, optional `identifier-field-ids`). */
export function parseSchema(j: Json, what: string): Schema {
  if (!isObject(j)) throw new TypeError(`${what}: expected a schema object, found ${show(j)}`);
  if (j.type !== 'struct') throw new TypeError(`${what}: expected "type": "struct", found ${show(j.type)}`);
  const struct = parseStruct(j, what);
  const sid = j['schema-id'];
  if (sid !== undefined && (typeof sid !== 'number' || !Number.isInteger(sid))) {
    throw new TypeError(`${what}: expected integer "schema-id", found ${show(sid)}`);
  }
  const s: Schema = { schemaId: sid ?? 0, fields: struct.fields };
  const ids = j['identifier-field-ids'];
  if (ids !== undefined && ids !== null) {
    if (!Array.isArray(ids) || ids.some((x) => typeof x !== 'number' || !Number.isInteger(x))) {
      throw new TypeError(`${what}: expected "identifier-field-ids" as a list of integers, found ${show(ids)}`);
    }
    s.identifierFieldIds = ids as number[];
  }
  return s;
}

export function typeToString(t: IcebergType): string {
  switch (t.type) {
    case 'decimal':
      return `decimal(${t.precision}, ${t.scale})`;
    case 'fixed':
      return `fixed[${t.length}]`;
    case 'struct':
      return `struct<${t.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(', ')}>`;
    case 'list':
      return `list<${typeToString(t.element)}>`;
    case 'map':
      return `map<${typeToString(t.key)}, ${typeToString(t.value)}>`;
    default:
      return t.type;
  }
}

function fieldToJson(f: NestedField): Json {
  const o: { [key: string]: Json } = { id: f.id, name: f.name, required: f.required, type: typeToJson(f.type) };
  if (f.doc !== undefined) o.doc = f.doc;
  if (f.initialDefault !== undefined) o['initial-default'] = valueToJson(f.type, f.initialDefault);
  if (f.writeDefault !== undefined) o['write-default'] = valueToJson(f.type, f.writeDefault);
  return o;
}

export function typeToJson(t: IcebergType): Json {
  switch (t.type) {
    case 'struct':
      return { type: 'struct', fields: t.fields.map(fieldToJson) };
    case 'list':
      return { type: 'list', 'element-id': t.elementId, element: typeToJson(t.element), 'element-required': t.elementRequired };
    case 'map':
      return {
        type: 'map',
        'key-id': t.keyId,
        key: typeToJson(t.key),
        'value-id': t.valueId,
        value: typeToJson(t.value),
        'value-required': t.valueRequired,
      };
    default:
      return typeToString(t);
  }
}

/** Key order `type, schema-id, identifier-field-ids?, fields` (Java's). */
export function schemaToJson(s: Schema): Json {
  const o: { [key: string]: Json } = { type: 'struct', 'schema-id': s.schemaId };
  if (s.identifierFieldIds !== undefined) o['identifier-field-ids'] = [...s.identifierFieldIds];
  o.fields = s.fields.map(fieldToJson);
  return o;
}

/** Every field of the schema by id, nested struct fields included. List elements and map
 * keys/values are reported as synthetic fields named `element`, `key` and `value`. */
export function fieldsById(s: Schema | StructType): Map<number, NestedField> {
  const out = new Map<number, NestedField>();
  const visitType = (t: IcebergType): void => {
    if (t.type === 'struct') for (const f of t.fields) visitField(f);
    else if (t.type === 'list') visitField({ id: t.elementId, name: 'element', required: t.elementRequired, type: t.element });
    else if (t.type === 'map') {
      visitField({ id: t.keyId, name: 'key', required: true, type: t.key });
      visitField({ id: t.valueId, name: 'value', required: t.valueRequired, type: t.value });
    }
  };
  const visitField = (f: NestedField): void => {
    out.set(f.id, f);
    visitType(f.type);
  };
  for (const f of s.fields) visitField(f);
  return out;
}

/** Largest field id used anywhere in the schema (0 for an empty schema). */
export function maxFieldId(s: Schema | StructType): number {
  let m = 0;
  for (const id of fieldsById(s).keys()) if (id > m) m = id;
  return m;
}
