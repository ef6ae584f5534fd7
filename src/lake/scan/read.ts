// Reading planned files: row group by row group (the third pruning level:
// Parquet row-group stats, then page stats of the filter columns narrowing a
// group to the row span that might match), applying position and equality deletes, the
// exact row filter, and the projection. Columns are matched by field id; a
// column a file lacks reads as the field's initial default, else the file's
// identity partition value, else null. Memory: one row group of one file plus
// the delete sets of that file. Every data and delete file opened is checked:
// the row count of its footer must be its manifest entry's record_count.
import type { Batch, DataFile, NestedField, PartitionSpec, Schema, TableMetadata, Value } from '../spec/types.ts';
import { initialValue } from '../spec/values.ts';
import type { FileIO } from '../io/fileio.ts';
import { ParquetDataFile, type PageStats } from '../parquet/read.ts';
import { fieldsById } from '../spec/schema.ts';
import type { Bound } from '../expr/expr.ts';
import { matchRow, mightMatch, type ColumnStats } from '../expr/evaluate.ts';
import type { DeleteRef, FileTask } from './plan.ts';
import type { NameMapping } from '../spec/name-mapping.ts';
import { checkRowCount } from '../spec/integrity.ts';
import { cachedRead } from '../io/read-cache.ts';

/** Open a data or delete file, checking its footer's row count against its manifest entry (IntegrityError). */
async function openChecked(io: FileIO, file: DataFile, opts: { nameMapping?: NameMapping }): Promise<ParquetDataFile> {
  const pf = await ParquetDataFile.open(io, file.filePath, opts);
  try {
    checkRowCount(file.filePath, pf.numRows, file.recordCount);
  } catch (e) {
    await pf.close();
    throw e;
  }
  return pf;
}

export const POS_FILE_PATH: NestedField = { id: 2147483546, name: 'file_path', required: true, type: { type: 'string' } };
export const POS_POS: NestedField = { id: 2147483545, name: 'pos', required: true, type: { type: 'long' } };
/** A position delete file's columns have fixed names too: files written without field ids still read. */
const POS_MAPPING: NameMapping = [
  { names: [POS_FILE_PATH.name], fieldId: POS_FILE_PATH.id, fields: [] },
  { names: [POS_POS.name], fieldId: POS_POS.id, fields: [] },
];

export interface ReadMetrics {
  filesOpened: number;
  /** Files opened only to learn that the manifest's metrics held (tables with a name mapping). */
  filesMetricsSkipped: number;
  rowGroups: number;
  rowGroupsSkipped: number;
  rowsRead: number;
  /** Rows whose filter columns were read to find the matches (the spans page statistics left). */
  filterRowsRead: number;
  rowsDeleted: number;
}

/** Caches delete files across the tasks of one scan. */
export class DeleteCache {
  private positions = new Map<string, Map<string, Set<number>>>();
  private equality = new Map<string, { ids: number[]; keys: Set<string> }>();
  constructor(
    private readonly io: FileIO,
    private readonly schema: Schema,
    private readonly nameMapping?: NameMapping,
  ) {}

  /** Positions deleted in `dataPath` by a position delete file. */
  async positionsFor(d: DeleteRef, dataPath: string): Promise<Set<number> | undefined> {
    let byFile = this.positions.get(d.file.filePath);
    if (!byFile) {
      // immutable: a reader with a read cache (a server, one question's scans) parses it once
      byFile = await cachedRead(this.io, `position deletes ${d.file.filePath}`, async () => {
        const out = new Map<string, Set<number>>();
        const pf = await openChecked(this.io, d.file, { nameMapping: POS_MAPPING });
        try {
          for (let rg = 0; rg < pf.rowGroupCount; rg++) {
            const b = await pf.readRowGroup(rg, [POS_FILE_PATH, POS_POS]);
            const paths = b.columns[0]!;
            const poss = b.columns[1]!;
            for (let i = 0; i < b.numRows; i++) {
              const p = paths[i] as string;
              let set = out.get(p);
              if (!set) out.set(p, (set = new Set()));
              set.add(Number(poss[i] as bigint));
            }
          }
        } finally {
          await pf.close();
        }
        // a position held in a set takes ~8x what it takes in the file (the cache counts 4x the bytes given)
        return { value: out, fileBytes: Math.max(Number(d.file.fileSizeInBytes), Number(d.file.recordCount) * 8) };
      });
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
      const pf = await openChecked(this.io, d.file, { nameMapping: this.nameMapping });
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
  /** The table's name mapping (files without field ids). */
  nameMapping?: NameMapping;
  /** Give each batch its rows' positions in the data file (Batch.positions). */
  positions?: boolean;
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

  const pf = await openChecked(ctx.io, task.file, { nameMapping: ctx.nameMapping });
  ctx.metrics.filesOpened++;
  if (task.metricsExcludeUnlessMapped && [...ctx.filterIds].every((id) => pf.hasOwnField(id))) {
    // the manifest's metrics describe these very columns: the file holds no match
    ctx.metrics.filesMetricsSkipped++;
    await pf.close();
    return;
  }
  const filterFields = [...ctx.filterIds].map((id) => byId.get(id)!).filter(Boolean);
  const realFilter = filter.op !== 'true' && filterFields.length > 0;
  /** The rows of span [from, to) of row group `rg` (its first row is row `base` of the file) that pass. */
  const readSpan = async (rg: number, base: number, from: number, to: number): Promise<Batch | undefined> => {
    // A real filter: read its columns first; the other columns are read only
    // for the row range that holds matches (pages outside it are skipped).
    let candidates: number[] | undefined; // rows relative to `from`
    let fcols: Map<number, Value[]> | undefined;
    let fFrom = 0;
    if (realFilter && filterFields.length < readFields.length) {
      const fb = await pf.readRowGroup(rg, filterFields, missing, { from, to });
      ctx.metrics.filterRowsRead += fb.numRows;
      fcols = new Map(filterFields.map((f, j) => [f.id, fb.columns[j]!]));
      fFrom = from;
      const cf = fcols;
      const mask = selectRows(filter, (id) => cf.get(id)!, fb.numRows);
      candidates = [];
      for (let at = 0; at < fb.numRows; at++) {
        if (mask[at] === 0) continue;
        if (deleted.size > 0 && deleted.has(base + from + at)) {
          ctx.metrics.rowsDeleted++;
          continue;
        }
        candidates.push(at);
      }
      if (candidates.length === 0) {
        ctx.metrics.rowsRead += to - from;
        return undefined;
      }
    }
    // filter columns already read are reused, not read again
    const rest = fcols ? readFields.filter((f) => !fcols.has(f.id)) : readFields;
    let cols: Value[][];
    let numRows: number;
    /** The file position of row i of `cols` (when not base + from + i). */
    let rowPos: number[] | undefined;
    if (candidates && fcols) {
      // the other columns of the candidate rows only: one read per cluster of
      // nearby candidates (an IN list of far-apart values reads the pages of
      // each, not the span between them); rows are compacted to the candidates
      const cand = candidates;
      const restCols: Value[][] = rest.map(() => new Array<Value>(cand.length));
      for (const [a, z] of clusters(cand, CLUSTER_GAP)) {
        const lo = cand[a]!;
        const hi = cand[z]!;
        const b = rest.length > 0 ? await pf.readRowGroup(rg, rest, missing, { from: fFrom + lo, to: fFrom + hi + 1 }) : undefined;
        ctx.metrics.rowsRead += hi - lo + 1;
        if (b) for (let j = 0; j < rest.length; j++) for (let c = a; c <= z; c++) restCols[j]![c] = b.columns[j]![cand[c]! - lo] ?? null;
      }
      const byRest = new Map(rest.map((f, j) => [f.id, restCols[j]!]));
      const fc = fcols;
      cols = readFields.map((f) => byRest.get(f.id) ?? cand.map((c) => fc.get(f.id)![c] ?? null));
      if (ctx.positions) rowPos = cand.map((c) => base + from + c);
      candidates = cand.map((_c, k) => k);
      numRows = cand.length;
    } else {
      const b = await pf.readRowGroup(rg, rest, missing, { from, to });
      ctx.metrics.rowsRead += to - from;
      if (realFilter) ctx.metrics.filterRowsRead += to - from;
      cols = b.columns;
      numRows = b.numRows;
    }
    const keep: number[] = [];
    const mask = !candidates && realFilter ? selectRows(filter, (id) => cols[col.get(id)!]!, numRows) : undefined;
    const n = candidates ? candidates.length : numRows;
    for (let k = 0; k < n; k++) {
      const i = candidates ? candidates[k]! : k;
      if (!candidates && deleted.size > 0 && deleted.has(base + from + i)) {
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
      if (mask && mask[i] === 0) continue;
      keep.push(i);
    }
    if (keep.length === 0) return undefined;
    const outCols = output.map((_f, j) => {
      const c = cols[j]!;
      if (keep.length === c.length) return c;
      const o = new Array<Value>(keep.length);
      for (let k = 0; k < keep.length; k++) o[k] = c[keep[k]!] ?? null;
      return o;
    });
    if (!ctx.positions) return { fields: output, numRows: keep.length, columns: outCols };
    const rp = rowPos;
    const positions = keep.map((i) => (rp ? rp[i]! : base + from + i));
    return { fields: output, numRows: keep.length, columns: outCols, positions };
  };
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
      // Page statistics of the filter columns narrow the group to the row spans
      // whose pages might match (an IN list of far-apart values: one span each);
      // only those spans are read, of any column.
      let spans: { from: number; to: number }[] = [{ from: 0, to: rows }];
      if (realFilter) {
        const found = await pageSpans(pf, rg, rows, filter, filterFields, missing);
        if (found === null) {
          ctx.metrics.rowGroupsSkipped++;
          base += rows;
          continue;
        }
        if (found) spans = found;
      }
      ctx.metrics.rowGroups++;
      for (const { from, to } of spans) {
        const b = await readSpan(rg, base, from, to);
        if (b) yield b;
      }
      base += rows;
    }
  } finally {
    await pf.close();
  }
}

/** Candidate rows closer than this share one read of the other columns (a few pages of small rows). */
const CLUSTER_GAP = 2048;

/** Runs of sorted row numbers with gaps under `gap`, as [first, last] indices into `rows`. */
function clusters(rows: number[], gap: number): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  for (let k = 1; k <= rows.length; k++) {
    if (k === rows.length || rows[k]! - rows[k - 1]! > gap) {
      out.push([start, k - 1]);
      start = k;
    }
  }
  return out;
}

/**
 * The row spans of a row group whose filter-column pages might match (from
 * the column index), in order, adjacent pieces joined: null when no page can
 * match, undefined when no filter column has page statistics. Pages of
 * different columns need not line up: the group is cut at every page boundary
 * and each piece judged by the pages covering it. An IN list of values far
 * apart in the sort order gets a span per value, not the rows between them.
 */
async function pageSpans(
  pf: ParquetDataFile,
  rg: number,
  rows: number,
  filter: Bound,
  fields: NestedField[],
  missing: (f: NestedField) => Value,
): Promise<{ from: number; to: number }[] | null | undefined> {
  const pages = new Map<number, PageStats[]>();
  const constant = new Map<number, ColumnStats>();
  for (const f of fields) {
    if (!pf.hasField(f.id)) {
      constant.set(f.id, missingStats(missing, f, rows));
      continue;
    }
    const p = await pf.pageStats(rg, f);
    if (p) pages.set(f.id, p);
  }
  if (pages.size === 0) return undefined;
  const cuts = new Set<number>([0]);
  for (const p of pages.values()) for (const pg of p) if (pg.firstRow < rows) cuts.add(pg.firstRow);
  const starts = [...cuts].sort((a, b) => a - b);
  const at = new Map<number, number>([...pages.keys()].map((id) => [id, 0]));
  const spans: { from: number; to: number }[] = [];
  for (let s = 0; s < starts.length; s++) {
    const start = starts[s]!;
    const end = s + 1 < starts.length ? starts[s + 1]! : rows;
    const hit = mightMatch(filter, (id) => {
      const c = constant.get(id);
      if (c) return c;
      const p = pages.get(id);
      if (!p) return undefined;
      let k = at.get(id)!;
      while (k + 1 < p.length && p[k + 1]!.firstRow <= start) k++;
      at.set(id, k);
      const pg = p[k]!;
      const n = BigInt(pg.rows);
      if (pg.nullPage) return { nullCount: n, valueCount: n };
      return { lower: pg.min, upper: pg.max, nullCount: pg.nullCount, valueCount: n };
    });
    if (!hit) continue;
    const prev = spans[spans.length - 1];
    if (prev && prev.to === start) prev.to = end;
    else spans.push({ from: start, to: end });
  }
  return spans.length === 0 ? null : spans;
}

const INTEGRAL = new Set(['int', 'date', 'long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

/**
 * The filter over `n` rows of columns (by field id), as a mask (1 = match):
 * one tight loop per predicate instead of one tree walk per row. Integer
 * comparisons use the values as they are (numbers or bigints, no conversion);
 * every other predicate is `matchRow` on the one value.
 */
function selectRows(b: Bound, column: (id: number) => Value[], n: number): Uint8Array {
  const m = new Uint8Array(n);
  switch (b.op) {
    case 'true':
      m.fill(1);
      return m;
    case 'false':
      return m;
    case 'and': {
      m.fill(1);
      for (const a of b.args) {
        const x = selectRows(a, column, n);
        for (let i = 0; i < n; i++) m[i]! &= x[i]!;
      }
      return m;
    }
    case 'or': {
      for (const a of b.args) {
        const x = selectRows(a, column, n);
        for (let i = 0; i < n; i++) m[i]! |= x[i]!;
      }
      return m;
    }
    default:
      break;
  }
  const c = column(b.id);
  if (INTEGRAL.has(b.type.type) && 'value' in b && (typeof b.value === 'bigint' || typeof b.value === 'number')) {
    const x = b.value;
    type Int = number | bigint;
    const loop = (test: (v: Int) => boolean): void => {
      for (let i = 0; i < n; i++) {
        const v = c[i];
        if (v !== null && v !== undefined && test(v as Int)) m[i] = 1;
      }
    };
    switch (b.op) {
      case 'lt':
        loop((v) => v < x);
        return m;
      case 'le':
        loop((v) => v <= x);
        return m;
      case 'gt':
        loop((v) => v > x);
        return m;
      case 'ge':
        loop((v) => v >= x);
        return m;
      case 'eq':
        loop((v) => v >= x && v <= x);
        return m;
      case 'ne':
        loop((v) => v < x || v > x);
        return m;
    }
  }
  let cur: Value = null;
  const get = (): Value => cur;
  for (let i = 0; i < n; i++) {
    cur = c[i] ?? null;
    if (matchRow(b, get)) m[i] = 1;
  }
  return m;
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
    return initialValue(f);
  };
}
