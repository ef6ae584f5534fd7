// Access to Avro records by Iceberg field id, through the writer schema found
// in the file. Names are never trusted (writers of different versions name
// the same field differently); ids are. Also the conversion of Avro values of
// a (primitive) writer type into our `Value` representation.
import { stringifyJson, type Json } from '../spec/json.ts';
import type { Value } from '../spec/types.ts';
import { bytesBEToBigint, bytesToUuid, unscaledToDecimal } from '../spec/values.ts';
import { avroCompatibleName } from './container.ts';

type JsonObject = { [key: string]: Json };

const isObject = (j: Json | undefined): j is JsonObject => typeof j === 'object' && j !== null && !Array.isArray(j);

/** Named types (records, fixed, enums) of a schema, by name and full name. */
export class AvroSchemaIndex {
  private readonly named = new Map<string, JsonObject>();

  constructor(
    root: Json,
    readonly file: string,
  ) {
    this.collect(root, '');
  }

  private collect(t: Json | undefined, ns: string): void {
    if (Array.isArray(t)) {
      for (const b of t) this.collect(b, ns);
      return;
    }
    if (!isObject(t)) return;
    const kind = t['type'];
    if (kind === 'record' || kind === 'error' || kind === 'fixed' || kind === 'enum') {
      const name = String(t['name'] ?? '');
      const space = typeof t['namespace'] === 'string' ? t['namespace'] : ns;
      const short = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
      const full = name.includes('.') ? name : space ? `${space}.${name}` : name;
      this.named.set(short, t);
      this.named.set(full, t);
      if (kind === 'record' || kind === 'error') {
        const inner = full.includes('.') ? full.slice(0, full.lastIndexOf('.')) : '';
        for (const f of (t['fields'] ?? []) as Json[]) if (isObject(f)) this.collect(f['type'], inner);
      }
    } else if (kind === 'array') this.collect(t['items'], ns);
    else if (kind === 'map') this.collect(t['values'], ns);
    else if (isObject(kind) || Array.isArray(kind)) this.collect(kind, ns);
  }

  /** The type with name references (and `{"type": {...}}` wrappers) resolved, one level deep. */
  deref(t: Json | undefined): Json {
    if (typeof t === 'string') {
      return this.named.get(t) ?? this.named.get(t.slice(t.lastIndexOf('.') + 1)) ?? t;
    }
    if (isObject(t)) {
      const inner = t['type'];
      if (isObject(inner)) return this.deref(inner);
      if (typeof inner === 'string' && this.named.has(inner)) return this.deref(inner);
    }
    return t ?? null;
  }

  /** `["null", T]` -> T (dereferenced); any other type dereferenced. */
  nonNull(t: Json | undefined): Json {
    if (Array.isArray(t)) {
      const rest = t.filter((b) => b !== 'null' && !(isObject(b) && b['type'] === 'null'));
      if (rest.length !== 1) throw new Error(`${this.file}: unsupported Avro union ${stringifyJson(t)}`);
      return this.deref(rest[0]);
    }
    return this.deref(t);
  }

  /** Fields of a record type (after `nonNull`), keyed by Iceberg field id. */
  fields(recordType: Json | undefined, what: string): FieldMap {
    const t = this.nonNull(recordType);
    if (!isObject(t) || (t['type'] !== 'record' && t['type'] !== 'error')) {
      throw new Error(`${this.file}: expected ${what} to be an Avro record, found ${stringifyJson(t)}`);
    }
    const list: AvroField[] = [];
    for (const f of (t['fields'] ?? []) as Json[]) {
      if (!isObject(f) || typeof f['name'] !== 'string') continue;
      const id = f['field-id'];
      list.push({
        name: f['name'],
        key: avroCompatibleName(f['name']),
        type: f['type'] ?? null,
        fieldId: typeof id === 'number' ? id : typeof id === 'string' && /^-?\d+$/.test(id) ? Number(id) : undefined,
      });
    }
    return new FieldMap(list, this, what);
  }
}

export interface AvroField {
  /** The name in the schema. */
  name: string;
  /** The key of the decoded record object (the name made Avro-valid). */
  key: string;
  type: Json;
  fieldId: number | undefined;
}

export class FieldMap {
  private readonly byId = new Map<number, AvroField>();

  constructor(
    readonly list: AvroField[],
    readonly index: AvroSchemaIndex,
    readonly what: string,
  ) {
    for (const f of list) if (f.fieldId !== undefined) this.byId.set(f.fieldId, f);
  }

  has(id: number): boolean {
    return this.byId.has(id);
  }

  field(id: number): AvroField | undefined {
    return this.byId.get(id);
  }

  /** The value of field `id` in a decoded record; undefined when the schema has no such field. */
  get(record: unknown, id: number): unknown {
    const f = this.byId.get(id);
    if (!f) return undefined;
    return (record as Record<string, unknown>)[f.key];
  }

  /** Like `get`, but the field must exist and be non-null. */
  need(record: unknown, id: number): unknown {
    const v = this.get(record, id);
    if (v === undefined || v === null) {
      const f = this.byId.get(id);
      throw new Error(
        `${this.index.file}: ${this.what}: field ${id}${f ? ` (${f.name})` : ''} is ${f ? 'null' : 'missing from the schema'}, expected a value`,
      );
    }
    return v;
  }
}

export function asBigInt(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new Error(`${what}: expected an integer, found ${String(v)}`);
}

export function asNumber(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint' && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  throw new Error(`${what}: expected a number, found ${String(v)}`);
}

export function asBytes(v: unknown, what: string): Uint8Array {
  if (v instanceof Uint8Array) return new Uint8Array(v); // a plain copy, not a view of the block
  throw new Error(`${what}: expected bytes, found ${String(v)}`);
}

/**
 * An Avro value of a primitive writer type as our `Value`: ints (dates) stay
 * numbers, longs (times, timestamps) are bigint, decimals become canonical
 * strings, uuids lowercase hyphenated strings, bytes/fixed plain Uint8Arrays.
 */
export function avroToValue(v: unknown, writerType: Json, index: AvroSchemaIndex, what: string): Value {
  if (v === null || v === undefined) return null;
  const t = index.nonNull(writerType);
  const base = typeof t === 'string' ? t : isObject(t) ? t['type'] : undefined;
  const logical = isObject(t) ? t['logicalType'] : undefined;
  switch (base) {
    case 'boolean':
      return Boolean(v);
    case 'int':
    case 'float':
    case 'double':
      return asNumber(v, what);
    case 'long':
      return asBigInt(v, what);
    case 'string':
      return logical === 'uuid' ? String(v).toLowerCase() : String(v);
    case 'bytes':
    case 'fixed': {
      const b = asBytes(v, what);
      if (logical === 'decimal' && isObject(t)) {
        const scale = typeof t['scale'] === 'number' ? t['scale'] : 0;
        return unscaledToDecimal(bytesBEToBigint(b), scale);
      }
      if (base === 'fixed' && b.length === 16 && isObject(t) && (logical === 'uuid' || t['name'] === 'uuid_fixed')) {
        return bytesToUuid(b);
      }
      return b;
    }
    case 'enum':
      return String(v);
    default:
      throw new Error(`${what}: unsupported Avro type ${stringifyJson(t)} for a partition value`);
  }
}
