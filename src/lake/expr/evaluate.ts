// Evaluating bound filters. Pruning is one idea applied at three levels: a
// level supplies per-column statistics (manifest partition summaries, a data
// file's partition tuple and column bounds, a Parquet row group's stats) and
// `mightMatch` answers "could any row here match?" — false only when the stats
// prove no row can. Rows themselves are then checked exactly by `matchRow`.
// Predicates on source columns reach partition values through `projectToPartition`.
import type { PartitionSpec, PrimitiveType, Schema, Value } from '../spec/types.ts';
import { compareValues } from '../spec/values.ts';
import { applyTransform, transformResultType } from '../spec/transforms.ts';
import { fieldsById, isPrimitive } from '../spec/schema.ts';
import type { Bound, CmpOp } from './expr.ts';

/** What a level knows of one column; any part may be unknown. */
export interface ColumnStats {
  lower?: Value;
  upper?: Value;
  nullCount?: bigint;
  valueCount?: bigint;
  nanCount?: bigint;
}

/** Statistics of a unit (manifest, file, row group): `undefined` = unknown column. */
export type StatsOf = (id: number) => ColumnStats | undefined;

const isNaNValue = (v: Value): boolean => typeof v === 'number' && Number.isNaN(v);

/** Inclusive evaluation: false only when the statistics prove no row matches. */
export function mightMatch(b: Bound, stats: StatsOf): boolean {
  switch (b.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return b.args.every((a) => mightMatch(a, stats));
    case 'or':
      return b.args.some((a) => mightMatch(a, stats));
    default:
      break;
  }
  const s = stats(b.id);
  if (!s) return true;
  const allNull = s.nullCount !== undefined && s.valueCount !== undefined && s.nullCount === s.valueCount;
  switch (b.op) {
    case 'isNull':
      return s.nullCount === undefined || s.nullCount > 0n;
    case 'notNull':
      return !allNull;
    case 'notIn':
    case 'ne':
      return !allNull;
    case 'in':
      if (allNull) return false;
      return b.values.some((v) => valueInRange(b.type, v, s));
    default: {
      if (allNull) return false;
      return cmpMightMatch(b.op, b.type, b.value, s);
    }
  }
}

function valueInRange(t: PrimitiveType, v: Value, s: ColumnStats): boolean {
  if (isNaNValue(v)) return s.nanCount === undefined || s.nanCount > 0n;
  if (s.lower !== undefined && s.lower !== null && compareValues(t, v, s.lower) < 0) return false;
  if (s.upper !== undefined && s.upper !== null && compareValues(t, v, s.upper) > 0) return false;
  return true;
}

function cmpMightMatch(op: CmpOp, t: PrimitiveType, v: Value, s: ColumnStats): boolean {
  if (isNaNValue(v)) return op === 'eq' ? s.nanCount === undefined || s.nanCount > 0n : true;
  const lo = s.lower ?? undefined;
  const hi = s.upper ?? undefined;
  switch (op) {
    case 'eq':
      return valueInRange(t, v, s);
    case 'lt':
      return lo === undefined || lo === null || compareValues(t, lo, v) < 0;
    case 'le':
      return lo === undefined || lo === null || compareValues(t, lo, v) <= 0;
    case 'gt':
      return hi === undefined || hi === null || compareValues(t, hi, v) > 0;
    case 'ge':
      return hi === undefined || hi === null || compareValues(t, hi, v) >= 0;
    default:
      return true;
  }
}

/** Exact evaluation on one row; comparisons with null are false. */
export function matchRow(b: Bound, get: (id: number) => Value): boolean {
  switch (b.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return b.args.every((a) => matchRow(a, get));
    case 'or':
      return b.args.some((a) => matchRow(a, get));
    case 'isNull':
      return get(b.id) === null;
    case 'notNull':
      return get(b.id) !== null;
    case 'in': {
      const v = get(b.id);
      return v !== null && b.values.some((x) => compareValues(b.type, v, x) === 0);
    }
    case 'notIn': {
      const v = get(b.id);
      return v !== null && !b.values.some((x) => compareValues(b.type, v, x) === 0);
    }
    default: {
      const v = get(b.id);
      if (v === null) return false;
      if (isNaNValue(v) || isNaNValue(b.value)) return b.op === 'ne' ? !(isNaNValue(v) && isNaNValue(b.value)) : b.op === 'eq' && isNaNValue(v) && isNaNValue(b.value);
      const c = compareValues(b.type, v, b.value);
      switch (b.op) {
        case 'eq':
          return c === 0;
        case 'ne':
          return c !== 0;
        case 'lt':
          return c < 0;
        case 'le':
          return c <= 0;
        case 'gt':
          return c > 0;
        case 'ge':
          return c >= 0;
      }
    }
  }
}

/**
 * Project a filter on source columns to an inclusive filter on a spec's
 * partition fields (field ids of the spec, result types): every row that
 * matches `b` lies in a partition that matches the projection.
 */
export function projectToPartition(b: Bound, spec: PartitionSpec, schema: Schema): Bound {
  const byId = fieldsById(schema);
  const go = (e: Bound): Bound => {
    switch (e.op) {
      case 'true':
      case 'false':
        return e;
      case 'and':
      case 'or': {
        const args = e.args.map(go);
        if (e.op === 'and') {
          const kept = args.filter((a) => a.op !== 'true');
          if (kept.some((a) => a.op === 'false')) return { op: 'false' };
          return kept.length === 0 ? { op: 'true' } : kept.length === 1 ? kept[0]! : { op: 'and', args: kept };
        }
        if (args.some((a) => a.op === 'true')) return { op: 'true' };
        const kept = args.filter((a) => a.op !== 'false');
        return kept.length === 0 ? { op: 'false' } : kept.length === 1 ? kept[0]! : { op: 'or', args: kept };
      }
      default: {
        const parts: Bound[] = [];
        for (const pf of spec.fields) {
          if (pf.sourceId !== e.id) continue;
          const src = byId.get(pf.sourceId);
          if (!src || !isPrimitive(src.type)) continue;
          const p = projectLeaf(e, pf.transform, src.type, pf.fieldId);
          if (p) parts.push(p);
        }
        if (parts.length === 0) return { op: 'true' };
        return parts.length === 1 ? parts[0]! : { op: 'and', args: parts };
      }
    }
  };
  return go(b);
}

type Leaf = Exclude<Bound, { op: 'true' | 'false' | 'and' | 'or' }>;

function projectLeaf(e: Leaf, tr: PartitionSpec['fields'][number]['transform'], src: PrimitiveType, pid: number): Bound | undefined {
  if (tr.kind === 'void' || tr.kind === 'unknown') return undefined;
  const type = transformResultType(tr, src);
  if (!('value' in e) && !('values' in e)) return { op: e.op, id: pid, type };
  const t = (v: Value): Value => applyTransform(tr, src, v);
  if (tr.kind === 'identity') {
    if ('values' in e) return { op: e.op, id: pid, type, values: e.values };
    return { op: e.op, id: pid, type, value: e.value };
  }
  const monotonic = tr.kind !== 'bucket';
  switch (e.op) {
    case 'eq':
      return { op: 'eq', id: pid, type, value: t(e.value) };
    case 'in':
      return { op: 'in', id: pid, type, values: e.values.map(t) };
    case 'lt':
    case 'le':
      return monotonic ? { op: 'le', id: pid, type, value: t(e.value) } : undefined;
    case 'gt':
    case 'ge':
      return monotonic ? { op: 'ge', id: pid, type, value: t(e.value) } : undefined;
    default:
      return undefined;
  }
}
