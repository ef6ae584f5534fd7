// A table scan: a snapshot, a filter and a projection, streamed batch by
// batch. Planning prunes manifests and files; reading prunes row groups and
// applies deletes and the exact filter. A scan of the current snapshot uses the
// current schema; time travel uses the schema the snapshot was written with.
// MIMIR_TRACE_SCANS=1 prints each finished scan (table, filter, times,
// metrics) on stderr: what a question reads, for profiling.
import type { Batch, NestedField, Schema, Snapshot, TableMetadata, Value } from '../spec/types.ts';
import type { FileIO } from '../io/fileio.ts';
import { alwaysTrue, bind, referencedIds, type Expr } from '../expr/expr.ts';
import { currentSchema } from '../spec/metadata.ts';
import { fieldsById } from '../spec/schema.ts';
import { planFiles, type FileTask, type PlanMetrics } from './plan.ts';
import { DeleteCache, readTask, type ReadMetrics } from './read.ts';
import { nameMappingOf, type NameMapping } from '../spec/name-mapping.ts';
import { preempt } from '../preempt.ts';

export interface ScanOptions {
  filter?: Expr;
  /** Columns by name or field id; all top-level columns when absent. */
  columns?: (string | number)[];
  snapshotId?: bigint;
  ref?: string;
  asOfMs?: bigint;
  /** Read only the planned data files whose path this accepts (a rewrite of chosen files). */
  files?: (filePath: string) => boolean;
  /** Give each batch its rows' positions in their data file (Batch.positions, with Batch.source): what a position delete names. */
  positions?: boolean;
}

export type ScanMetrics = PlanMetrics & ReadMetrics;

export class TableScan {
  readonly schema: Schema;
  readonly fields: NestedField[];
  readonly metrics: ScanMetrics = {
    manifests: 0,
    manifestsSkipped: 0,
    dataFiles: 0,
    dataFilesSkipped: 0,
    deleteFiles: 0,
    filesOpened: 0,
    filesMetricsSkipped: 0,
    rowGroups: 0,
    rowGroupsSkipped: 0,
    rowsRead: 0,
    filterRowsRead: 0,
    rowsDeleted: 0,
  };
  private readonly filter;
  private readonly nameMapping: NameMapping | undefined;
  private readonly onlyFiles: ((filePath: string) => boolean) | undefined;
  private readonly positions: boolean;

  constructor(
    private readonly io: FileIO,
    private readonly metadata: TableMetadata,
    readonly snapshot: Snapshot | undefined,
    opts: ScanOptions,
  ) {
    // time travel reads with the schema the snapshot was written with; a
    // current scan with the current schema (renamed columns, added defaults)
    const travel = opts.snapshotId !== undefined || opts.ref !== undefined || opts.asOfMs !== undefined;
    const sid = travel ? snapshot?.schemaId : undefined;
    this.schema = (sid !== undefined && metadata.schemas.find((s) => s.schemaId === sid)) || currentSchema(metadata);
    const byId = fieldsById(this.schema);
    this.fields = opts.columns
      ? opts.columns.map((c) => {
          const f = typeof c === 'number' ? byId.get(c) : this.schema.fields.find((x) => x.name === c);
          if (!f) throw new Error(`no column "${c}" (columns: ${this.schema.fields.map((x) => x.name).join(', ')})`);
          return f;
        })
      : this.schema.fields;
    this.filter = bind(opts.filter ?? alwaysTrue, this.schema);
    this.nameMapping = nameMappingOf(metadata.properties);
    this.onlyFiles = opts.files;
    this.positions = opts.positions === true;
  }

  async planFiles(): Promise<FileTask[]> {
    if (!this.snapshot) return [];
    const { tasks, metrics } = await planFiles(this.io, this.metadata, this.snapshot, this.schema, this.filter, { mapped: this.nameMapping !== undefined });
    Object.assign(this.metrics, metrics);
    return tasks;
  }

  async *batches(): AsyncGenerator<Batch> {
    if (this.filter.op === 'false') return;
    // timed only when traced: the global `performance` loads node's perf_hooks (~10 modules) at first use
    const trace = process.env.MIMIR_TRACE_SCANS === '1';
    const t0 = trace ? performance.now() : 0;
    const planned = await this.planFiles();
    const tPlan = trace ? performance.now() - t0 : 0;
    const only = this.onlyFiles;
    const tasks = only ? planned.filter((t) => only(t.file.filePath)) : planned;
    const ctx = {
      io: this.io,
      metadata: this.metadata,
      schema: this.schema,
      output: this.fields,
      filter: this.filter,
      filterIds: referencedIds(this.filter),
      deletes: new DeleteCache(this.io, this.schema, this.nameMapping),
      metrics: this.metrics,
      nameMapping: this.nameMapping,
      positions: this.positions,
    };
    for (const t of tasks) {
      const source = { file: t.file.filePath, sequenceNumber: t.dataSequenceNumber };
      for await (const b of readTask(ctx, t)) {
        // reads are synchronous underneath: let the event loop turn (and cancelled work stop) between batches
        await preempt();
        yield { ...b, source };
      }
    }
    if (trace) process.stderr.write(`scan ${this.metadata.location.split('/').slice(-1)[0]} ${JSON.stringify(this.filter, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)).slice(0, 160)} plan ${tPlan.toFixed(1)} ms total ${(performance.now() - t0).toFixed(1)} ms ${JSON.stringify(this.metrics)}\n`);
  }

  /** Rows as objects keyed by column name. */
  async *rows(): AsyncGenerator<Record<string, Value>> {
    for await (const b of this.batches()) {
      for (let i = 0; i < b.numRows; i++) {
        const row: Record<string, Value> = {};
        for (let c = 0; c < b.fields.length; c++) row[b.fields[c]!.name] = b.columns[c]![i] ?? null;
        yield row;
      }
    }
  }

  /** Every row in memory (small tables and tests). */
  async toArray(): Promise<Record<string, Value>[]> {
    const out: Record<string, Value>[] = [];
    for await (const r of this.rows()) out.push(r);
    return out;
  }

  async count(): Promise<number> {
    let n = 0;
    for await (const b of this.batches()) n += b.numRows;
    return n;
  }
}
