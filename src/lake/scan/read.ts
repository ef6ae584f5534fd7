// Reading planned files: row group by row group (the third pruning level:
// Parquet row-group stats), applying position and equality deletes, the
// exact row filter, and the projection. Columns are matched by field id; a
// column a file lacks reads as the field's initial default, else the file's
// identity partition value, else null. Memory: one row group of one file plus
// the delete sets of that file.
import type { Batch, DataFile, NestedField, PartitionSpec, Schema, TableMetadata, Value } from '../spec/types.ts';
import type { FileIO } from '../io/fileio.ts';
import { ParquetDataFile } from '../parquet/read.ts';
import { fieldsById } from '../spec/schema.ts';
import type { Bound } from '../expr/expr.ts';
import { matchRow, mightMatch } from '../expr/evaluate.ts';
import type { DeleteRef, FileTask } from './plan.ts';

export const POS_FILE_PATH: NestedField = { id: 2147483546, name: 'file_path', required: true, type: { type: 'string' } };
export const POS_POS: NestedField = { id: 2147483545, name: 'pos', required: true, type: { type: 'long' } };

export interface ReadMetrics {
  filesOpened: number;
  rowGroups: number;
  rowGroupsSkipped: number;
  rowsRead: number;
  rowsDeleted: number;
}

/** Caches delete files across the tasks of one scan. */
export class DeleteCache {
  private positions = new Map<string, Map<string, Set<number>>>();
  private equality = new Map<string, { ids: number[]; keys: Set<string> }>();
  constructor(
    private readonly io: FileIO,
    private readonly schema: Schema,
  ) {}

  /** Positions deleted in `dataPath` by a position delete file. */
  async positionsFor(d: DeleteRef, dataPath: string): Promise<Set<number> | undefined> {
    let byFile = this.positions.get(d.file.filePath);
    if (!byFile) {
      byFile = new Map();
      const pf = await ParquetDataFile.open(this.io, d.file.filePath);
      try {
        for (let rg = 0; rg < pf.rowGroupCount; rg++) {
          const b = await pf.readRowGroup(rg, [POS_FILE_PATH, POS_POS]);
          const paths = b.columns[0]!;
          const poss = b.columns[1]!;
          for (let i = 0; i < b.numRows; i++) {
            const p = paths[i] as string;
            let set = byFile.get(p);
            if (!set) byFile.set(p, (set = new Set()));
            set.add(Number(poss[i] as bigint));
          }
        }
      } finally {
        await pf.close();
      }
      this.positions.set(d.file.filePath, byFile);
    }
    return byFile.get(dataPath);
  }

  async equalityKeys(d: DeleteRef): Promise<{ ids: number[]; keys: Set<string> }> {
    let e = this.equality.get(d.file.filePath);
    if (!e) {
      const ids = d.file.equalityIds ?? [];
      const byId = fieldsById(this.schema);
      const fields = ids.map((id) => {
        const f = byId.get(id);
        if (!f) throw new Error(`${d.file.filePath}: equality field id ${id} is not in the table schema`);
        return f;
      });
      const keys = new Set<string>();
      const pf = await ParquetDataFile.open(this.io, d.file.filePath);
      try {
        for (let rg = 0; rg < pf.rowGroupCount; rg++) {
          const b = await pf.readRowGroup(rg, fields);
          for (let i = 0; i < b.numRows; i++) keys.add(rowKey(b.columns.map((c) => c[i] ?? null)));
        }
      } finally {
        await pf.close();
      }
      e = { ids, keys };
      this.equality.set(d.file.filePath, e);
    }
    return e;
  }
}

function keyPart(v: Value): string {
  if (v === null) return '\u0000';
  if (typeof v === 'bigint') return `b${v}`;
  if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
  if (typeof v === 'object') return `o${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x))}`;
  return `${typeof v}:${String(v)}`;
}
function rowKey(values: Value[]): string {
  return values.map(keyPart).join('\u0001');
}

export interface ReadContext {
  io: FileIO;
  metadata: TableMetadata;
  schema: Schema;
  /** Fields to return, in order. */
  output: NestedField[];
  filter: Bound;
  /** Field ids the filter reads. */
  filterIds: Set<number>;
  deletes: DeleteCache;
  metrics: ReadMetrics;
}

/** The rows of one planned file, batch by batch (one batch a row group). */
export async function* readTask(ctx: ReadContext, task: FileTask): AsyncGenerator<Batch> {
  const { schema, output, filter } = ctx;
  const byId = fieldsById(schema);
  const spec = ctx.metadata.partitionSpecs.find((s) => s.specId === task.specId);
  const missing = missingValue(task.file, spec);

  // the fields to read: output ∪ filter ∪ equality-delete columns
  const eqDeletes = task.deletes.filter((d) => d.file.content === 2);
  const posDeletes = task.deletes.filter((d) => d.file.content === 1);
  const readIds: number[] = output.map((f) => f.id);
  const need = new Set(readIds);
  const addId = (id: number): void => {
    if (!need.has(id)) {
      need.add(id);
      readIds.push(id);
    }
  };
  for (const id of ctx.filterIds) addId(id);
  const eqSets = await Promise.all(eqDeletes.map((d) => ctx.deletes.equalityKeys(d)));
  for (const e of eqSets) for (const id of e.ids) addId(id);
  const readFields = readIds.map((id) => {
    const f = byId.get(id);
    if (!f) throw new Error(`field id ${id} is not in schema ${schema.schemaId}`);
    return f;
  });
  const col = new Map(readIds.map((id, i) => [id, i]));

  const deleted = new Set<number>();
  for (const d of posDeletes) {
    const s = await ctx.deletes.positionsFor(d, task.file.filePath);
    if (s) for (const p of s) deleted.add(p);
  }

  const pf = await ParquetDataFile.open(ctx.io, task.file.filePath);
  ctx.metrics.filesOpened++;
  const filterFields = [...ctx.filterIds].map((id) => byId.get(id)!).filter(Boolean);
  try {
    let base = 0;
    for (let rg = 0; rg < pf.rowGroupCount; rg++) {
      const stats = pf.rowGroupStats(rg, filterFields);
      const rows = stats.numRows;
      if (filterFields.length > 0 && !mightMatch(filter, (id) => {
        const c = stats.columns.get(id);
        if (!c) return pf.hasField(id) ? undefined : missingStats(missing, byId.get(id)!, rows);
        return { lower: c.min, upper: c.max, nullCount: c.nullCount, valueCount: BigInt(rows) };
      })) {
        ctx.metrics.rowGroupsSkipped++;
        base += rows;
        continue;
      }
      // A real filter: read its columns first; the other columns are read only
      // for the row range that holds matches (pages outside it are skipped).
      let from = 0;
      let candidates: number[] | undefined;
      if (filter.op !== 'true' && eqSets.length === 0 && filterFields.length > 0 && filterFields.length < readFields.length) {
        const fb = await pf.readRowGroup(rg, filterFields, missing);
        const fcols = new Map(filterFields.map((f, j) => [f.id, fb.columns[j]!]));
        let at = 0;
        const getF = (id: number): Value => fcols.get(id)![at] ?? null;
        candidates = [];
        for (; at < rows; at++) {
          if (deleted.size > 0 && deleted.has(base + at)) {
            ctx.metrics.rowsDeleted++;
            continue;
          }
          if (matchRow(filter, getF)) candidates.push(at);
        }
        if (candidates.length === 0) {
          ctx.metrics.rowGroups++;
          ctx.metrics.rowsRead += rows;
          base += rows;
          continue;
        }
        from = candidates[0]!;
      }
      const to = candidates ? candidates[candidates.length - 1]! + 1 : rows;
      const b = candidates
        ? await pf.readRowGroup(rg, readFields, missing, { from, to })
        : await pf.readRowGroup(rg, readFields, missing);
      ctx.metrics.rowGroups++;
      ctx.metrics.rowsRead += rows;
      const keep: number[] = [];
      const cols = b.columns;
      let i = 0;
      const get = (id: number): Value => cols[col.get(id)!]![i] ?? null;
      const n = candidates ? candidates.length : b.numRows;
      for (let k = 0; k < n; k++) {
        i = candidates ? candidates[k]! - from : k;
        if (!candidates && deleted.size > 0 && deleted.has(base + i)) {
          ctx.metrics.rowsDeleted++;
          continue;
        }
        if (eqSets.length > 0) {
          let hit = false;
          for (const e of eqSets) {
            if (e.keys.has(rowKey(e.ids.map((id) => cols[col.get(id)!]![i] ?? null)))) {
              hit = true;
              break;
            }
          }
          if (hit) {
            ctx.metrics.rowsDeleted++;
            continue;
          }
        }
        if (!candidates && filter.op !== 'true' && !matchRow(filter, get)) continue;
        keep.push(i);
      }
      base += rows;
      if (keep.length === 0) continue;
      const outCols = output.map((_f, j) => {
        const c = cols[j]!;
        if (keep.length === b.numRows) return c;
        const o = new Array<Value>(keep.length);
        for (let k = 0; k < keep.length; k++) o[k] = c[keep[k]!] ?? null;
        return o;
      });
      yield { fields: output, numRows: keep.length, columns: outCols };
    }
  } finally {
    await pf.close();
  }
}

function missingStats(missing: (f: NestedField) => Value, f: NestedField, rows: number) {
  const v = missing(f);
  const n = BigInt(rows);
  return v === null ? { nullCount: n, valueCount: n } : { lower: v, upper: v, nullCount: 0n, valueCount: n };
}

/** What a column absent from a file reads as (initial default, identity partition value, null). */
function missingValue(file: DataFile, spec: PartitionSpec | undefined): (f: NestedField) => Value {
  return (f: NestedField) => {
    if (spec) {
      const i = spec.fields.findIndex((p) => p.sourceId === f.id && p.transform.kind === 'identity');
      if (i >= 0) return file.partition[i] ?? null;
    }
    return f.initialDefault ?? null;
  };
}
