// A small JSON Schema (2020-12) validator for the keywords schemas/*.json
// use: type, properties, required, additionalProperties (boolean), items,
// enum, const, anyOf, minimum, $ref into the same document's $defs, plus the
// annotations ($schema, $id, title, description). A schema using any other
// keyword is refused, so a schema cannot claim more than this checks.
// Integers above 2^53 arrive as bigints (parseJson) and count as integers.
import type { Json } from '../../src/lake/spec/json.ts';

type Schema = { [k: string]: Json };

const KNOWN = new Set(['$schema', '$id', 'title', 'description', '$defs', 'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', 'minimum', '$ref']);

/** Every place `value` breaks `schema` (empty: valid), as `path: what`. */
export function validate(root: Schema, value: Json): string[] {
  const errors: string[] = [];
  check(root, root, value, '$', errors);
  return errors;
}

function typeOf(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function same(a: Json, b: Json): boolean {
  if (typeof a === 'bigint' || typeof b === 'bigint') return typeof a !== 'object' && typeof b !== 'object' && BigInt(a as number) === BigInt(b as number);
  return JSON.stringify(a) === JSON.stringify(b);
}

function check(root: Schema, s: Schema, v: Json, at: string, errors: string[]): void {
  for (const k of Object.keys(s)) if (!KNOWN.has(k)) throw new Error(`schema keyword "${k}" at ${at} is not supported by this validator`);
  if (typeof s.$ref === 'string') {
    const m = /^#\/\$defs\/([^/]+)$/.exec(s.$ref);
    const target = m ? (root.$defs as Schema | undefined)?.[m[1]!] : undefined;
    if (!target || typeof target !== 'object') throw new Error(`unresolved $ref ${s.$ref} at ${at}`);
    check(root, target as Schema, v, at, errors);
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    const t = typeOf(v);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) errors.push(`${at}: expected ${types.join(' or ')}, found ${t}`);
  }
  if (s.const !== undefined && !same(s.const, v)) errors.push(`${at}: expected ${JSON.stringify(s.const)}, found ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)}`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => same(e, v))) errors.push(`${at}: expected one of ${JSON.stringify(s.enum)}, found ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)}`);
  if (typeof s.minimum === 'number' && (typeof v === 'number' || typeof v === 'bigint') && v < s.minimum) errors.push(`${at}: ${v} < minimum ${s.minimum}`);
  if (Array.isArray(s.anyOf)) {
    const ok = s.anyOf.some((sub) => {
      const e: string[] = [];
      check(root, sub as Schema, v, at, e);
      return e.length === 0;
    });
    if (!ok) errors.push(`${at}: matches none of anyOf`);
  }
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const props = (s.properties ?? {}) as Schema;
    for (const r of (s.required ?? []) as string[]) if (!Object.hasOwn(v, r)) errors.push(`${at}: missing "${r}"`);
    for (const [k, x] of Object.entries(v)) {
      if (Object.hasOwn(props, k)) check(root, props[k] as Schema, x as Json, `${at}.${k}`, errors);
      else if (s.additionalProperties === false) errors.push(`${at}: unexpected property "${k}"`);
    }
  }
  if (Array.isArray(v) && s.items !== undefined) v.forEach((x, i) => check(root, s.items as Schema, x, `${at}[${i}]`, errors));
}
