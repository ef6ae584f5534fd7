// Rows <-> columnar batches for the log's tables: rows by column name into a
// batch of a table's schema (loose values coerced, required columns checked),
// and a batch back into row objects. Pure functions.
import type { Batch, NestedField, Schema, Value } from '../lake/spec/types.ts';
import { coerceValue } from '../lake/spec/values.ts';
import { isPrimitive } from '../lake/spec/schema.ts';

/** An event row by column name (values in the lake's Value form; loose input is coerced). */
export type EventRow = Record<string, unknown>;

export function batchRows(b: Batch): Record<string, Value>[] {
  const out: Record<string, Value>[] = new Array(b.numRows);
  for (let i = 0; i < b.numRows; i++) {
    const row: Record<string, Value> = {};
    for (let c = 0; c < b.fields.length; c++) row[b.fields[c]!.name] = b.columns[c]![i] ?? null;
    out[i] = row;
  }
  return out;
}

/** Rows by column name into a batch of the kind's schema, coercing loose values. */
export function rowsToBatch(schema: Schema, rows: EventRow[], what: string): Batch {
  const fields: NestedField[] = schema.fields;
  const columns: Value[][] = fields.map(() => new Array<Value>(rows.length));
  for (let c = 0; c < fields.length; c++) {
    const f = fields[c]!;
    if (!isPrimitive(f.type)) throw new Error(`${what}: column ${f.name} is not primitive`);
    const t = f.type;
    const col = columns[c]!;
    for (let i = 0; i < rows.length; i++) {
      const v = rows[i]![f.name];
      const value = v === undefined || v === null ? null : coerceValue(t, v, `${what} row ${i} column ${f.name}`);
      if (value === null && f.required) throw new Error(`${what} row ${i}: column ${f.name} is required`);
      col[i] = value;
    }
  }
  return { fields, numRows: rows.length, columns };
}
