// Writing data files: batches are split by partition (the spec's transforms
// applied to each row), buffered per partition up to a file's row budget, and
// written as Parquet files under `<location>/data/<partition path>/`. Memory
// is bounded by the row budget per open partition, never by the input.
//
// Crash story: a data file is written whole or not at all (FileIO.writeNew);
// files written for a commit that never lands are orphans for maintenance.
import { randomUUID } from 'node:crypto';
import type { FileIO } from '../io/fileio.ts';
import type { Batch, DataFile, NestedField, PartitionSpec, Schema, Value } from '../spec/types.ts';
import type { DataFileWriteOptions } from '../parquet/write.ts';

/** The Parquet encoder (and hyparquet-writer), loaded on the first write: a process that only reads never loads it. */
let parquet: typeof import('../parquet/write.ts') | undefined;
// once loaded, called without a turn of the event loop in between
const encodeDataFile: typeof import('../parquet/write.ts').encodeDataFile = (...args) =>
  parquet ? parquet.encodeDataFile(...args) : import('../parquet/write.ts').then((m) => (parquet = m).encodeDataFile(...args));
import { partitionPath, partitionValues } from '../spec/partition.ts';
import { partitionKey } from '../scan/plan.ts';
import { crashPoint } from '../testing/crash.ts';
import { compareStrings } from '../spec/values.ts';

export interface WriteOptions {
  /** Rows per data file at most (bounds memory while buffering a partition). */
  fileRows: number;
  parquet: DataFileWriteOptions;
}

/** Write options from table properties (`write.parquet.*`, `mimir.write.file-rows`, `mimir.write.page-index.columns`). */
export function writeOptions(props: Record<string, string>): WriteOptions {
  const codec = (props['write.parquet.compression-codec'] ?? 'zstd').toLowerCase();
  const allowed = ['zstd', 'snappy', 'gzip', 'uncompressed'] as const;
  const c = (allowed as readonly string[]).includes(codec) ? (codec as (typeof allowed)[number]) : 'zstd';
  const num = (k: string): number | undefined => {
    const v = props[k];
    const n = v === undefined ? NaN : Number(v);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  };
  const level = num('write.parquet.compression-level');
  const rowGroupRows = num('write.parquet.row-group-limit') ?? num('mimir.write.row-group-rows');
  const pageBytes = num('write.parquet.page-size-bytes');
  const pageRows = num('write.parquet.page-row-limit');
  const dictionaryBytes = num('write.parquet.dict-size-bytes');
  // `mimir.write.page-index.columns`: comma-separated names (absent: every top-level primitive column)
  const indexed = props['mimir.write.page-index.columns']?.split(',').map((c) => c.trim()).filter((c) => c !== '');
  return {
    // 256k rows a file by default: the writer buffers a file's rows per open
    // partition, so this (times the partitions written at once) bounds memory
    fileRows: num('mimir.write.file-rows') ?? 262_144,
    parquet: { codec: c, ...(level ? { zstdLevel: level } : {}), ...(rowGroupRows ? { rowGroupRows } : {}), ...(pageBytes ? { pageBytes } : {}), ...(pageRows ? { pageRows } : {}), ...(dictionaryBytes ? { dictionaryBytes } : {}), ...(indexed ? { pageIndexColumns: indexed } : {}) },
  };
}

interface Pending {
  values: Value[];
  fields: NestedField[];
  /** The partition's batches as given (not copied: the encoder reads them in turn). */
  batches: Batch[];
  rows: number;
}

export class DataFileWriter {
  private pending = new Map<string, Pending>();
  private written: DataFile[] = [];
  private seq = 0;
  private readonly prefix = randomUUID();

  constructor(
    private readonly io: FileIO,
    private readonly location: string,
    private readonly schema: Schema,
    private readonly spec: PartitionSpec,
    private readonly opts: WriteOptions,
  ) {}

  /** Files written so far (all of them after `close`). */
  files(): DataFile[] {
    return this.written;
  }

  async write(batch: Batch): Promise<void> {
    if (batch.numRows === 0) return;
    if (this.spec.fields.length === 0) {
      await this.add('', [], batch, null);
      return;
    }
    const colOf = new Map(batch.fields.map((f, i) => [f.id, i]));
    const groups = new Map<string, { values: Value[]; rows: number[] }>();
    for (let r = 0; r < batch.numRows; r++) {
      const values = partitionValues(this.spec, this.schema, (id) => {
        const c = colOf.get(id);
        return c === undefined ? null : (batch.columns[c]![r] ?? null);
      });
      const k = partitionKey(this.spec.specId, values);
      const g = groups.get(k);
      if (g) g.rows.push(r);
      else groups.set(k, { values, rows: [r] });
    }
    for (const [k, g] of groups) await this.add(k, g.values, batch, g.rows.length === batch.numRows ? null : g.rows);
  }

  private async add(key: string, values: Value[], batch: Batch, rows: number[] | null): Promise<void> {
    let p = this.pending.get(key);
    if (!p || !sameFields(p.fields, batch.fields)) {
      if (p) await this.flush(key);
      p = { values, fields: batch.fields, batches: [], rows: 0 };
      this.pending.set(key, p);
    }
    // the rows of this partition: the batch itself when it is all of them, else a copy of those rows
    const part = rows ? { fields: batch.fields, numRows: rows.length, columns: batch.columns.map((src) => rows.map((r) => src[r] ?? null)) } : batch;
    p.batches.push(part);
    p.rows += part.numRows;
    if (p.rows >= this.opts.fileRows) await this.flush(key);
  }

  private async flush(key: string): Promise<void> {
    const p = this.pending.get(key);
    if (!p || p.rows === 0) return;
    this.pending.delete(key);
    const { bytes, metrics } = await encodeDataFile(this.schema, p.batches, this.opts.parquet);
    const dir = this.spec.fields.length > 0 ? `data/${partitionPath(this.spec, this.schema, p.values)}` : 'data';
    const path = `${this.location.replace(/\/+$/, '')}/${dir}/${String(this.seq++).padStart(5, '0')}-${this.prefix}.parquet`;
    await this.io.writeNew(path, bytes);
    crashPoint('lake:data-file-written');
    const { splitOffsets, recordCount, ...counts } = metrics;
    this.written.push({
      content: 0,
      filePath: path,
      fileFormat: 'PARQUET',
      partition: p.values,
      recordCount,
      fileSizeInBytes: BigInt(bytes.length),
      ...counts,
      splitOffsets,
    });
  }

  /** Flush every partition; returns all files written. */
  async close(): Promise<DataFile[]> {
    for (const k of [...this.pending.keys()]) await this.flush(k);
    return this.written;
  }

  /** Delete what was written (a failed commit). */
  async abort(): Promise<void> {
    this.pending.clear();
    for (const f of this.written) await this.io.delete(f.filePath).catch(() => undefined);
    this.written = [];
  }
}

/**
 * Write one equality delete file (content 2): rows of the equality columns
 * only, each column carrying the table's field id, `equalityIds` naming them
 * (Iceberg v2 "equality delete files"). For an unpartitioned table (the
 * partition tuple is empty) the deletes apply table-wide; a partitioned table
 * passes the partition the deletes belong to. Returns undefined when there is
 * nothing to delete. Whole or nothing, like data files.
 */
export async function writeEqualityDeleteFile(
  io: FileIO,
  location: string,
  schema: Schema,
  equalityIds: number[],
  batches: Batch[],
  opts: WriteOptions,
  partition: Value[] = [],
): Promise<DataFile | undefined> {
  const rows = batches.reduce((s, b) => s + b.numRows, 0);
  if (rows === 0) return undefined;
  const fields = equalityIds.map((id) => {
    const f = schema.fields.find((x) => x.id === id);
    if (!f) throw new Error(`equality delete: field id ${id} is not a top-level column of schema ${schema.schemaId}`);
    return f;
  });
  for (const [i, b] of batches.entries()) {
    if (b.fields.length !== fields.length || b.fields.some((f, j) => f.id !== fields[j]!.id)) {
      throw new Error(`equality delete: batch ${i} has field ids ${b.fields.map((f) => f.id).join(',')}, expected ${equalityIds.join(',')}`);
    }
  }
  const deleteSchema: Schema = { schemaId: schema.schemaId, fields };
  const { bytes, metrics } = await encodeDataFile(deleteSchema, batches, opts.parquet);
  return { ...(await landDeleteFile(io, location, 2, bytes, metrics, partition)), equalityIds: [...equalityIds] };
}

/**
 * A delete file's encoded bytes written under `location`/data as a new
 * `delete-<uuid>.parquet` (the name gc knows as Mimir's) and its manifest
 * record, equality (2) or position (1) deletes alike.
 */
async function landDeleteFile(
  io: FileIO,
  location: string,
  content: 1 | 2,
  bytes: Uint8Array,
  metrics: Awaited<ReturnType<typeof encodeDataFile>>['metrics'],
  partition: Value[],
): Promise<DataFile> {
  const path = `${location.replace(/\/+$/, '')}/data/delete-${randomUUID()}.parquet`;
  await io.writeNew(path, bytes);
  crashPoint('lake:delete-file-written');
  const { splitOffsets, recordCount, ...counts } = metrics;
  return { content, filePath: path, fileFormat: 'PARQUET', partition, recordCount, fileSizeInBytes: BigInt(bytes.length), ...counts, splitOffsets };
}

function sameFields(a: NestedField[], b: NestedField[]): boolean {
  return a.length === b.length && a.every((f, i) => f.id === b[i]!.id);
}

/**
 * Write one position delete file (content 1): rows of (`file_path`, `pos`)
 * with the spec's reserved field ids (2147483546, 2147483545), sorted by
 * path then position as the spec requires, so every engine applies it (a
 * reader may merge it with the data file's rows in order). `file_path`
 * carries bounds (scans skip a delete file that cannot name a data file);
 * a file naming one data file also records it as `referenced_data_file`.
 * Returns undefined when there is nothing to delete. Whole or nothing, like
 * data files.
 */
export async function writePositionDeleteFile(
  io: FileIO,
  location: string,
  schemaId: number,
  deletes: { path: string; pos: bigint }[],
  opts: WriteOptions,
  partition: Value[] = [],
): Promise<DataFile | undefined> {
  if (deletes.length === 0) return undefined;
  const rows = [...deletes].sort((a, b) => compareStrings(a.path, b.path) || (a.pos < b.pos ? -1 : a.pos > b.pos ? 1 : 0));
  for (let i = 1; i < rows.length; i++) {
    if (rows[i]!.path === rows[i - 1]!.path && rows[i]!.pos === rows[i - 1]!.pos) throw new Error(`position delete: ${rows[i]!.path} position ${rows[i]!.pos} given twice; nothing written`);
  }
  const fields: NestedField[] = [
    { id: 2147483546, name: 'file_path', required: true, type: { type: 'string' } },
    { id: 2147483545, name: 'pos', required: true, type: { type: 'long' } },
  ];
  const batch: Batch = { fields, numRows: rows.length, columns: [rows.map((r) => r.path), rows.map((r) => r.pos)] };
  const { bytes, metrics } = await encodeDataFile({ schemaId, fields }, [batch], opts.parquet);
  const one = rows[0]!.path === rows[rows.length - 1]!.path ? rows[0]!.path : undefined;
  return { ...(await landDeleteFile(io, location, 1, bytes, metrics, partition)), ...(one !== undefined ? { referencedDataFile: one } : {}) };
}

