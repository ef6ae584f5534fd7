// Scan planning: from a snapshot's manifest list to the data files a filter
// may need, each with the delete files that apply to it. Pruning happens at
// two of the three levels here (manifest partition summaries, then each data
// file's partition tuple and column bounds); the third (row groups) is in
// read.ts. Delete files follow the v2 rules: a position delete applies to data
// of the same spec and partition with data sequence <= its own; an equality
// delete to data with sequence strictly lower, in the same partition or
// anywhere when its spec is unpartitioned.
import type { DataFile, ManifestEntry, ManifestFile, PartitionSpec, Schema, Snapshot, TableMetadata, Value } from '../spec/types.ts';
import type { FileIO } from '../io/fileio.ts';
import { decodeManifestList } from '../avro/manifest-list.ts';
import { decodeManifest } from '../avro/manifest.ts';
import { checkManifest } from '../spec/integrity.ts';
import { cachedRead } from '../io/read-cache.ts';
import { partitionType } from '../spec/partition.ts';
import { fromBinary } from '../spec/values.ts';
import { fieldsById, isPrimitive } from '../spec/schema.ts';
import type { Bound } from '../expr/expr.ts';
import { mightMatch, projectToPartition, type ColumnStats, type StatsOf } from '../expr/evaluate.ts';

export interface DeleteRef {
  file: DataFile;
  specId: number;
  sequenceNumber: bigint;
}

export interface FileTask {
  file: DataFile;
  specId: number;
  dataSequenceNumber: bigint;
  deletes: DeleteRef[];
  /**
   * The file's column metrics rule it out, but they may describe columns the
   * table's name mapping no longer gives the same ids: the reader skips it only
   * if the file carries the filter's field ids itself (read.ts).
   */
  metricsExcludeUnlessMapped?: boolean;
}

export interface PlanMetrics {
  manifests: number;
  manifestsSkipped: number;
  dataFiles: number;
  dataFilesSkipped: number;
  deleteFiles: number;
}

/** A stable string key for a partition tuple (bigint and bytes safe). */
export function partitionKey(specId: number, values: Value[]): string {
  const parts = values.map((v) => {
    if (v === null) return 'n';
    if (typeof v === 'bigint') return `b${v}`;
    if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
    return `${typeof v}:${String(v)}`;
  });
  return `${specId}|${parts.join('|')}`;
}

function specOf(m: TableMetadata, id: number, file: string): PartitionSpec {
  const s = m.partitionSpecs.find((p) => p.specId === id);
  if (!s) throw new Error(`${file}: partition spec ${id} is not in the table metadata`);
  return s;
}

/** Stats of a manifest's partition summaries, keyed by partition field id. */
function summaryStats(mf: ManifestFile, spec: PartitionSpec, schema: Schema): StatsOf {
  const ptype = partitionType(spec, schema);
  const byId = new Map<number, ColumnStats>();
  ptype.fields.forEach((f, i) => {
    const s = mf.partitions?.[i];
    if (!s || !isPrimitive(f.type)) return;
    const t = f.type;
    byId.set(f.id, {
      lower: s.lowerBound ? fromBinary(t, s.lowerBound) : undefined,
      upper: s.upperBound ? fromBinary(t, s.upperBound) : undefined,
      nullCount: s.containsNull ? undefined : 0n,
    });
  });
  return (id) => byId.get(id);
}

/** Stats of one data file: exact partition values plus column metrics (unless `partitionOnly`). */
export function fileStats(file: DataFile, spec: PartitionSpec, schema: Schema, opts: { partitionOnly?: boolean } = {}): StatsOf {
  const byId = fieldsById(schema);
  const ptype = partitionType(spec, schema);
  const partIndex = new Map(ptype.fields.map((f, i) => [f.id, i]));
  const count = file.recordCount;
  return (id) => {
    const pi = partIndex.get(id);
    if (pi !== undefined) {
      const v = file.partition[pi] ?? null;
      return v === null ? { nullCount: count, valueCount: count } : { lower: v, upper: v, nullCount: 0n, valueCount: count };
    }
    const f = byId.get(id);
    if (!f || !isPrimitive(f.type) || opts.partitionOnly) return undefined;
    const t = f.type;
    const lo = file.lowerBounds?.get(id);
    const hi = file.upperBounds?.get(id);
    return {
      lower: lo ? fromBinary(t, lo) : undefined,
      upper: hi ? fromBinary(t, hi) : undefined,
      nullCount: file.nullValueCounts?.get(id),
      valueCount: file.valueCounts?.get(id),
      nanCount: file.nanValueCounts?.get(id),
    };
  };
}

export async function readManifestList(io: FileIO, snap: Snapshot): Promise<ManifestFile[]> {
  return cachedRead(io, `manifest list ${snap.manifestList}`, async () => {
    const bytes = await io.readAll(snap.manifestList);
    return { value: decodeManifestList(bytes, snap.manifestList), fileBytes: bytes.length };
  });
}

/**
 * The entries of a manifest a list names, inheritance resolved, checked
 * against the list's record of it (length, file and row counts): a mismatch
 * is an IntegrityError naming the manifest.
 */
export async function readManifest(io: FileIO, mf: ManifestFile, listPath?: string): Promise<ManifestEntry[]> {
  // inheritance depends on the list's entry: part of the key
  return cachedRead(io, `manifest ${mf.manifestPath} ${mf.addedSnapshotId} ${mf.sequenceNumber}`, async () => {
    const bytes = await io.readAll(mf.manifestPath);
    const { entries, checksummed } = decodeManifest(bytes, mf.manifestPath, { addedSnapshotId: mf.addedSnapshotId, sequenceNumber: mf.sequenceNumber });
    checkManifest(mf, bytes.length, entries, listPath, checksummed);
    return { value: entries, fileBytes: bytes.length };
  });
}

/**
 * Plan the files of `snap` that `filter` may match (bound to `schema`).
 * Memory grows with the number of live files, never with rows. With a name
 * mapping (`mapped`), column metrics are only a hint: they were computed with
 * whatever mapping held when the file was added, so a file they rule out is
 * kept, flagged, for the reader to check against the file's own ids.
 */
export async function planFiles(
  io: FileIO,
  metadata: TableMetadata,
  snap: Snapshot,
  schema: Schema,
  filter: Bound,
  opts: { mapped?: boolean } = {},
): Promise<{ tasks: FileTask[]; metrics: PlanMetrics }> {
  const metrics: PlanMetrics = { manifests: 0, manifestsSkipped: 0, dataFiles: 0, dataFilesSkipped: 0, deleteFiles: 0 };
  const manifests = await readManifestList(io, snap);
  const projections = new Map<number, Bound>();
  const projected = (spec: PartitionSpec): Bound => {
    let p = projections.get(spec.specId);
    if (!p) projections.set(spec.specId, (p = projectToPartition(filter, spec, schema)));
    return p;
  };
  const data: FileTask[] = [];
  const deletes: DeleteRef[] = [];
  for (const mf of manifests) {
    metrics.manifests++;
    const spec = specOf(metadata, mf.partitionSpecId, mf.manifestPath);
    if (mf.content === 0 && !mightMatch(projected(spec), summaryStats(mf, spec, schema))) {
      metrics.manifestsSkipped++;
      continue;
    }
    const entries = await readManifest(io, mf, snap.manifestList);
    for (const e of entries) {
      if (e.status === 2) continue;
      const df = e.dataFile;
      if (df.content !== 0 && df.fileFormat.toUpperCase() === 'PUFFIN') {
        throw new Error(
          `${mf.manifestPath}: delete file ${df.filePath} is a deletion vector (Iceberg v3, Puffin); ` +
            `Mimir does not read deletion vectors, so the rows it deletes cannot be told — nothing returned`,
        );
      }
      if (df.content !== 0) {
        metrics.deleteFiles++;
        deletes.push({ file: df, specId: mf.partitionSpecId, sequenceNumber: e.sequenceNumber });
        continue;
      }
      metrics.dataFiles++;
      const stats = fileStats(df, spec, schema);
      if (!mightMatch(projected(spec), stats)) {
        metrics.dataFilesSkipped++;
        continue;
      }
      const task: FileTask = { file: df, specId: mf.partitionSpecId, dataSequenceNumber: e.sequenceNumber, deletes: [] };
      if (!mightMatch(filter, stats)) {
        if (!opts.mapped || !mightMatch(filter, fileStats(df, spec, schema, { partitionOnly: true }))) {
          metrics.dataFilesSkipped++;
          continue;
        }
        task.metricsExcludeUnlessMapped = true;
      }
      data.push(task);
    }
  }
  if (deletes.length > 0) assignDeletes(metadata, data, deletes);
  return { tasks: data, metrics };
}

function assignDeletes(metadata: TableMetadata, data: FileTask[], deletes: DeleteRef[]): void {
  const byPartition = new Map<string, DeleteRef[]>();
  const global: DeleteRef[] = [];
  for (const d of deletes) {
    const spec = specOf(metadata, d.specId, d.file.filePath);
    if (d.file.content === 2 && spec.fields.length === 0) {
      global.push(d);
      continue;
    }
    const k = partitionKey(d.specId, d.file.partition);
    const list = byPartition.get(k);
    if (list) list.push(d);
    else byPartition.set(k, [d]);
  }
  for (const t of data) {
    const local = byPartition.get(partitionKey(t.specId, t.file.partition)) ?? [];
    for (const d of [...local, ...global]) {
      if (d.file.content === 1) {
        if (t.dataSequenceNumber > d.sequenceNumber) continue;
        if (d.file.referencedDataFile !== undefined && d.file.referencedDataFile !== t.file.filePath) continue;
        if (!pathMightBeIn(d.file, t.file.filePath)) continue;
      } else if (t.dataSequenceNumber >= d.sequenceNumber) continue;
      t.deletes.push(d);
    }
  }
}

/** Position delete files carry bounds on file_path: skip those that cannot name this file. */
export function pathMightBeIn(del: DataFile, path: string): boolean {
  const id = 2147483546;
  const lo = del.lowerBounds?.get(id);
  const hi = del.upperBounds?.get(id);
  const enc = new TextEncoder().encode(path);
  const cmp = (a: Uint8Array, b: Uint8Array): number => {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  };
  if (lo && cmp(enc, lo) < 0) return false;
  if (hi && cmp(enc.subarray(0, hi.length), hi) > 0) return false;
  return true;
}
