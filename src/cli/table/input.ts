// Input of the write commands: an Iceberg schema JSON file (field ids as the
// file gives them), `--partition-by` texts (`col`, `bucket[16](col)`,
// `day(col)`…), and JSON Lines rows turned into batches of Values, coerced
// per column type. Lines are parsed losslessly (parseJson), so a long beyond
// 2^53 keeps every digit. Memory is bounded by one batch.
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { UsageError } from '../args.ts';
import { parseJson, type Json } from '../../lake/spec/json.ts';
import { isPrimitive, parseSchema } from '../../lake/spec/schema.ts';
import { coerceValue } from '../../lake/spec/values.ts';
import { canTransform, parseTransform } from '../../lake/spec/transforms.ts';
import type { Batch, IcebergType, NestedField, PartitionField, Schema, Value } from '../../lake/spec/types.ts';

/** Read an Iceberg schema JSON file (or the `schema` of a `describe --json` output). */
export function readSchemaFile(path: string): Schema {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--schema ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let j: Json;
  try {
    j = parseJson(text);
  } catch (e) {
    throw new Error(`--schema ${path}: ${(e as Error).message}`);
  }
  if (j && typeof j === 'object' && !Array.isArray(j) && typeof j !== 'bigint' && j.type === undefined && j.schema !== undefined) j = j.schema;
  const schema = parseSchema(j, `--schema ${path}`);
  const seen = new Set<number>();
  const visit = (fields: NestedField[]): void => {
    for (const f of fields) {
      if (seen.has(f.id)) throw new Error(`--schema ${path}: field id ${f.id} is used twice (field "${f.name}")`);
      seen.add(f.id);
      if (f.type.type === 'struct') visit(f.type.fields);
    }
  };
  visit(schema.fields);
  return schema;
}

const TRANSFORM_SUFFIX: Record<string, string> = { bucket: 'bucket', truncate: 'trunc', year: 'year', month: 'month', day: 'day', hour: 'hour', void: 'null' };

/**
 * Partition fields from `--partition-by` texts: `col` (identity) or
 * `transform(col)` such as `bucket[16](id)`, `truncate[4](name)`, `day(ts)`.
 * Field names follow Java's convention (`id_bucket`, `ts_day`).
 */
export function parsePartitionBy(texts: string[], schema: Schema, commandPath: string): Omit<PartitionField, 'fieldId'>[] {
  return texts.map((text) => {
    const m = /^\s*(?:([a-z]+(?:\[\s*\d+\s*\])?)\s*\(\s*([^()]+?)\s*\)|([^()[\]]+?))\s*$/.exec(text);
    if (!m) throw new UsageError(`--partition-by "${text}": expected col or transform(col), e.g. bucket[16](id), day(ts)`, commandPath);
    const col = (m[2] ?? m[3])!;
    const transform = m[1] ? parseTransform(m[1]) : ({ kind: 'identity' } as const);
    if (transform.kind === 'unknown') {
      throw new UsageError(`--partition-by "${text}": unknown transform "${m[1]}" (identity, bucket[N], truncate[W], year, month, day, hour, void)`, commandPath);
    }
    const src = schema.fields.find((f) => f.name === col);
    if (!src) throw new UsageError(`--partition-by "${text}": no column "${col}" (columns: ${schema.fields.map((f) => f.name).join(', ')})`, commandPath);
    if (!isPrimitive(src.type) || !canTransform(transform, src.type)) {
      throw new UsageError(`--partition-by "${text}": ${transform.kind} does not apply to column "${col}" of type ${src.type.type}`, commandPath);
    }
    const name = transform.kind === 'identity' ? col : `${col}_${TRANSFORM_SUFFIX[transform.kind]}`;
    return { sourceId: src.id, name, transform };
  });
}

/** `k=v` texts (`--property`) as a record. */
export function parseProperties(texts: string[], commandPath: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of texts) {
    const i = t.indexOf('=');
    if (i <= 0) throw new UsageError(`--property "${t}": expected key=value`, commandPath);
    out[t.slice(0, i).trim()] = t.slice(i + 1);
  }
  return out;
}

const isObject = (j: unknown): j is Record<string, Json> => typeof j === 'object' && j !== null && !Array.isArray(j) && !(j instanceof Uint8Array);

/** One JSON value as a Value of type `t` (nested types recursively). */
export function coerceJson(t: IcebergType, v: Json | undefined, what: string): Value {
  if (v === null || v === undefined) return null;
  switch (t.type) {
    case 'struct': {
      if (!isObject(v)) throw new TypeError(`${what}: expected an object for a struct, found ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)}`);
      return coerceObject(t.fields, v, what);
    }
    case 'list':
      if (!Array.isArray(v)) throw new TypeError(`${what}: expected an array for a list`);
      return v.map((x, i) => {
        const w = `${what}[${i}]`;
        const c = coerceJson(t.element, x, w);
        if (c === null && t.elementRequired) throw new TypeError(`${w}: list element is required, found null`);
        return c;
      });
    case 'map': {
      const out = new Map<Value, Value>();
      const entries: [Json, Json][] = Array.isArray(v)
        ? v.map((e, i) => {
            if (!isObject(e) || !('key' in e)) throw new TypeError(`${what}[${i}]: expected {"key": …, "value": …}`);
            return [e.key!, e.value ?? null];
          })
        : isObject(v)
          ? Object.entries(v)
          : [];
      if (!Array.isArray(v) && !isObject(v)) throw new TypeError(`${what}: expected an object or an array of {key, value} for a map`);
      for (const [k, x] of entries) {
        const key = coerceJson(t.key, k, `${what} key`);
        if (key === null) throw new TypeError(`${what}: map keys cannot be null`);
        const val = coerceJson(t.value, x, `${what}[${String(k)}]`);
        if (val === null && t.valueRequired) throw new TypeError(`${what}[${String(k)}]: map value is required, found null`);
        out.set(key, val);
      }
      return out;
    }
    default:
      return coerceValue(t, v, what);
  }
}

/** A JSON object as a struct Value: unknown keys and missing required fields are errors. */
function coerceObject(fields: NestedField[], o: Record<string, Json>, what: string): { [name: string]: Value } {
  const out: { [name: string]: Value } = {};
  for (const f of fields) {
    // a column the line leaves out takes its write-default (v3), else null
    const v = o[f.name] === undefined && f.writeDefault !== undefined ? f.writeDefault : coerceJson(f.type, o[f.name], `${what}: column "${f.name}"`);
    if (v === null && f.required) throw new TypeError(`${what}: column "${f.name}" is required, found ${o[f.name] === undefined ? 'nothing' : 'null'}`);
    out[f.name] = v;
  }
  for (const k of Object.keys(o)) {
    if (!fields.some((f) => f.name === k)) throw new TypeError(`${what}: no column "${k}" (columns: ${fields.map((f) => f.name).join(', ')})`);
  }
  return out;
}

/** Lines of a file, or of stdin for `-`. */
function lines(source: string): AsyncIterable<string> {
  const input = source === '-' ? process.stdin : createReadStream(source, { encoding: 'utf8' });
  return createInterface({ input, crlfDelay: Infinity });
}

const LONG_DIGITS = /\d{16}/;

export interface JsonlProgress {
  rows: number;
  lines: number;
}

/**
 * Batches of at most `batchRows` rows from a JSON Lines source; blank lines
 * are skipped; a line that is not an object of the schema's columns is an
 * error naming the source and line number.
 */
export async function* jsonlBatches(
  source: string,
  fields: NestedField[],
  batchRows: number,
  progress: JsonlProgress = { rows: 0, lines: 0 },
): AsyncGenerator<Batch> {
  const name = source === '-' ? 'stdin' : source;
  let columns: Value[][] = fields.map(() => []);
  let n = 0;
  for await (const text of lines(source)) {
    progress.lines++;
    if (text.trim() === '') continue;
    const where = `${name}:${progress.lines}`;
    let j: Json;
    try {
      // JSON.parse is exact for every integer below 16 digits; longer ones need the lossless parser
      j = LONG_DIGITS.test(text) ? parseJson(text) : (JSON.parse(text) as Json);
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
    if (!isObject(j)) throw new TypeError(`${where}: expected a JSON object per line`);
    const row = coerceObject(fields, j, where);
    for (let c = 0; c < fields.length; c++) columns[c]!.push(row[fields[c]!.name] ?? null);
    n++;
    progress.rows++;
    if (n >= batchRows) {
      yield { fields, numRows: n, columns };
      columns = fields.map(() => []);
      n = 0;
    }
  }
  if (n > 0) yield { fields, numRows: n, columns };
}
