// Scan filters: an unbound expression over column names (or field ids), bound
// to a schema before use. Binding resolves each column to its field id and
// type and coerces literals to the column's Value representation, so every
// evaluator compares like with like. `not` is pushed down to the leaves on
// binding, which lets the stats evaluators stay inclusive ("might match").
import type { NestedField, PrimitiveType, Schema, Value } from '../spec/types.ts';
import { fieldsById, isPrimitive } from '../spec/schema.ts';
import { coerceValue } from '../spec/values.ts';

type Col = string | number;

export type Expr =
  | { op: 'true' }
  | { op: 'false' }
  | { op: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'; col: Col; value: unknown }
  | { op: 'in' | 'notIn'; col: Col; values: unknown[] }
  | { op: 'isNull' | 'notNull'; col: Col }
  | { op: 'and' | 'or'; args: Expr[] }
  | { op: 'not'; arg: Expr };

export const alwaysTrue: Expr = { op: 'true' };
export const eq = (col: Col, value: unknown): Expr => ({ op: 'eq', col, value });
export const ne = (col: Col, value: unknown): Expr => ({ op: 'ne', col, value });
export const lt = (col: Col, value: unknown): Expr => ({ op: 'lt', col, value });
export const le = (col: Col, value: unknown): Expr => ({ op: 'le', col, value });
export const gt = (col: Col, value: unknown): Expr => ({ op: 'gt', col, value });
export const ge = (col: Col, value: unknown): Expr => ({ op: 'ge', col, value });
export const inList = (col: Col, values: unknown[]): Expr => ({ op: 'in', col, values });
export const isNull = (col: Col): Expr => ({ op: 'isNull', col });
export const notNull = (col: Col): Expr => ({ op: 'notNull', col });
export const and = (...args: Expr[]): Expr => ({ op: 'and', args });
export const or = (...args: Expr[]): Expr => ({ op: 'or', args });
export const not = (arg: Expr): Expr => ({ op: 'not', arg });

/** A range on one column (both ends optional, inclusive unless said). */
export function range(col: Col, r: { gt?: unknown; ge?: unknown; lt?: unknown; le?: unknown }): Expr {
  const parts: Expr[] = [];
  if (r.gt !== undefined) parts.push(gt(col, r.gt));
  if (r.ge !== undefined) parts.push(ge(col, r.ge));
  if (r.lt !== undefined) parts.push(lt(col, r.lt));
  if (r.le !== undefined) parts.push(le(col, r.le));
  return parts.length === 1 ? parts[0]! : and(...parts);
}

export type CmpOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** A bound expression: leaves name a field id and hold coerced literals. */
export type Bound =
  | { op: 'true' }
  | { op: 'false' }
  | { op: CmpOp; id: number; type: PrimitiveType; value: Value }
  | { op: 'in' | 'notIn'; id: number; type: PrimitiveType; values: Value[] }
  | { op: 'isNull' | 'notNull'; id: number; type: PrimitiveType }
  | { op: 'and' | 'or'; args: Bound[] };

const NEGATE: Record<CmpOp, CmpOp> = { eq: 'ne', ne: 'eq', lt: 'ge', le: 'gt', gt: 'le', ge: 'lt' };

function resolve(schema: Schema, byId: Map<number, NestedField>, col: Col): NestedField {
  if (typeof col === 'number') {
    const f = byId.get(col);
    if (!f) throw new Error(`filter: no field with id ${col} in schema ${schema.schemaId}`);
    return f;
  }
  const top = schema.fields.find((f) => f.name === col);
  if (top) return top;
  // dotted path into structs
  const parts = col.split('.');
  let fields = schema.fields;
  let found: NestedField | undefined;
  for (const p of parts) {
    found = fields.find((f) => f.name === p);
    if (!found) break;
    fields = found.type.type === 'struct' ? found.type.fields : [];
  }
  if (!found) {
    const names = schema.fields.map((f) => f.name).join(', ');
    throw new Error(`filter: no column "${col}" (columns: ${names})`);
  }
  return found;
}

/** Bind to a schema: resolve columns, coerce literals, push `not` to the leaves. */
export function bind(expr: Expr, schema: Schema): Bound {
  const byId = fieldsById(schema);
  const go = (e: Expr, negated: boolean): Bound => {
    switch (e.op) {
      case 'true':
        return { op: negated ? 'false' : 'true' };
      case 'false':
        return { op: negated ? 'true' : 'false' };
      case 'not':
        return go(e.arg, !negated);
      case 'and':
      case 'or': {
        const args = e.args.map((a) => go(a, negated));
        const op = (e.op === 'and') !== negated ? 'and' : 'or';
        return simplify({ op, args });
      }
      default: {
        const f = resolve(schema, byId, e.col);
        if (!isPrimitive(f.type)) throw new Error(`filter: column "${f.name}" is a ${f.type.type}, not a primitive`);
        const type = f.type;
        const what = `filter on "${f.name}"`;
        if (e.op === 'isNull' || e.op === 'notNull') {
          const op = (e.op === 'isNull') !== negated ? 'isNull' : 'notNull';
          return { op, id: f.id, type };
        }
        if ('values' in e) {
          const values = e.values.map((v) => coerceValue(type, v, what));
          const op = (e.op === 'in') !== negated ? 'in' : 'notIn';
          if (values.length === 0) return { op: op === 'in' ? 'false' : 'true' };
          return { op, id: f.id, type, values };
        }
        if (!('value' in e)) throw new Error(`filter: unknown operator ${(e as { op: string }).op}`);
        if (e.value === null || e.value === undefined) {
          throw new Error(`${what}: compare with null is never true; use isNull/notNull`);
        }
        const value = coerceValue(type, e.value, what);
        return { op: negated ? NEGATE[e.op] : e.op, id: f.id, type, value };
      }
    }
  };
  return go(expr, false);
}

function simplify(b: { op: 'and' | 'or'; args: Bound[] }): Bound {
  const absorbing = b.op === 'and' ? 'false' : 'true';
  const neutral = b.op === 'and' ? 'true' : 'false';
  const args: Bound[] = [];
  for (const a of b.args) {
    if (a.op === absorbing) return { op: absorbing };
    if (a.op === neutral) continue;
    if (a.op === b.op) args.push(...a.args);
    else args.push(a);
  }
  if (args.length === 0) return { op: neutral };
  if (args.length === 1) return args[0]!;
  return { op: b.op, args };
}

/** Field ids a bound expression reads. */
export function referencedIds(b: Bound, out = new Set<number>()): Set<number> {
  if (b.op === 'and' || b.op === 'or') for (const a of b.args) referencedIds(a, out);
  else if ('id' in b) out.add(b.id);
  return out;
}

/** Parse a CLI filter `col=value`, `col!=v`, `col<v`, `col<=v`, `col>v`, `col>=v`, `col~null`. */
export function parseWhere(text: string): Expr {
  const m = /^\s*([^=!<>~\s]+)\s*(=|!=|<=|>=|<|>|!~|~)\s*(.*)$/.exec(text);
  if (!m) throw new Error(`--where "${text}": expected col=value (also !=, <, <=, >, >=, col~null, col!~null)`);
  const [, col, op, raw] = m as unknown as [string, string, string, string];
  if (op === '~' || op === '!~') {
    if (raw.trim() !== 'null') throw new Error(`--where "${text}": ${op} takes only null`);
    return op === '~' ? isNull(col) : notNull(col);
  }
  if (op === '=' && raw.includes(',') && raw.startsWith('[') && raw.endsWith(']')) {
    return inList(col, raw.slice(1, -1).split(',').map((s) => s.trim()));
  }
  const value: unknown = raw;
  switch (op) {
    case '=':
      return eq(col, value);
    case '!=':
      return ne(col, value);
    case '<':
      return lt(col, value);
    case '<=':
      return le(col, value);
    case '>':
      return gt(col, value);
    default:
      return ge(col, value);
  }
}
