// The run's event buffer: rows and columnar batches per kind, written as the
// run's data files (Run.write) whenever `batchRows` rows are buffered, so
// memory is bounded by the buffer, never by the run. Flushes node, edge,
// pos, then file events; nothing is visible until the run commits (src/log/run.ts).
// Every event batch of an ingest passes through `flush` on its way to the run.
import type { Batch } from '../lake/spec/types.ts';
import { rowsToBatch, type EventRow } from '../log/event-log.ts';
import type { Run } from '../log/run.ts';
import type { StateDelta } from '../log/state/delta.ts';
import { kindSchema, type Kind } from '../log/schema.ts';
import type { DeltaCounts } from './rows.ts';

/**
 * Buffers rows (and columnar batches) per kind; flushes node, edge, pos, then
 * file events as the run's data files, at most `limit` rows a write (a single
 * batch larger than that is written alone). Nothing is visible until the run
 * commits.
 */
export class Writer {
  private readonly buf: Record<Kind, EventRow[]> = { node: [], edge: [], pos: [], file: [] };
  private readonly batches: Record<Kind, Batch[]> = { node: [], edge: [], pos: [], file: [] };
  private batchRows = 0;
  readonly counts: DeltaCounts = { add: 0, change: 0, remove: 0 };
  /** Event rows pushed per kind (every row the run writes, pos rows included). */
  readonly rows: Record<Kind, number> = { node: 0, edge: 0, pos: 0, file: 0 };
  written = 0;
  constructor(
    private readonly run: Run,
    private readonly limit: number,
    /** The run's changes to the serving state tables (undefined: the lake has none). */
    readonly state?: StateDelta,
  ) {}

  push(kind: Kind, row: EventRow): void {
    this.buf[kind].push(row);
    this.rows[kind]++;
  }
  /** A batch of the kind's schema, values canonical (see EventLog.appendBatches). */
  pushBatch(kind: Kind, batch: Batch): void {
    if (batch.numRows === 0) return;
    this.batches[kind].push(batch);
    this.rows[kind] += batch.numRows;
    this.batchRows += batch.numRows;
  }
  get buffered(): number {
    return this.buf.node.length + this.buf.edge.length + this.buf.pos.length + this.buf.file.length + this.batchRows;
  }
  async maybeFlush(): Promise<void> {
    if (this.buffered >= this.limit) await this.flush();
  }
  async flush(): Promise<void> {
    for (const kind of ['node', 'edge', 'pos', 'file'] as const) {
      const rows = this.buf[kind];
      this.buf[kind] = [];
      for (let i = 0; i < rows.length; i += this.limit) {
        const chunk = rows.slice(i, i + this.limit);
        await this.run.write(kind, [rowsToBatch(kindSchema(kind), chunk, kind)]);
        this.written += chunk.length;
      }
      const batches = this.batches[kind];
      this.batches[kind] = [];
      let group: Batch[] = [];
      let n = 0;
      const send = async () => {
        if (group.length > 0) await this.run.write(kind, group);
        this.written += n;
        this.batchRows -= n;
        group = [];
        n = 0;
      };
      for (const b of batches) {
        if (n > 0 && n + b.numRows > this.limit) await send();
        group.push(b);
        n += b.numRows;
      }
      await send();
    }
  }
}
