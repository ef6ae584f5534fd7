// A table: its metadata as of one load, reads (scans, files, snapshots) and
// writes (append, overwrite, properties, schema and spec evolution). A table
// opened from a metadata file, or pinned to a snapshot or lake generation, is
// read-only; a catalog table commits through the catalog (see commit.ts) and
// reloads itself after each commit.
import type { FileIO } from '../io/fileio.ts';
import type { Batch, DataFile, IcebergType, NestedField, PartitionField, PartitionSpec, Schema, Snapshot, TableMetadata } from '../spec/types.ts';
import { currentSchema, snapshotAsOf } from '../spec/metadata.ts';
import { maxFieldId } from '../spec/schema.ts';
import { specsEquivalent } from '../spec/partition.ts';
import { transformResultType } from '../spec/transforms.ts';
import { isPrimitive } from '../spec/schema.ts';
import { identToString, type Catalog, type TableIdent } from '../catalog/catalog.ts';
import { commitTables, loadCurrent, metadataUpdate, type CommitHooks, type Committed, type TableUpdate } from './commit.ts';
import { SnapshotUpdate } from './snapshot.ts';
import { DataFileWriter, writeEqualityDeleteFile, writeOptions, writePositionDeleteFile } from './write.ts';
import { TableScan, type ScanOptions } from '../scan/scan.ts';
import { readManifest, readManifestList } from '../scan/plan.ts';

/** Which snapshot to read. */
export interface SnapshotSelector {
  snapshotId?: bigint;
  ref?: string;
  asOfMs?: bigint;
}

export interface CommitResult {
  generation: bigint;
  snapshotId?: bigint;
  metadataLocation: string;
}

export class ReadOnlyTableError extends Error {}

export class Table {
  constructor(
    readonly io: FileIO,
    public metadataLocation: string,
    public metadata: TableMetadata,
    readonly catalog?: Catalog,
    readonly ident?: TableIdent,
    /** Why writes are refused, when they are. */
    readonly readOnlyReason?: string,
    readonly hooks?: CommitHooks,
  ) {}

  get name(): string {
    return this.ident ? identToString(this.ident) : this.metadataLocation;
  }
  get schema(): Schema {
    return currentSchema(this.metadata);
  }
  get spec(): PartitionSpec {
    const s = this.metadata.partitionSpecs.find((p) => p.specId === this.metadata.defaultSpecId);
    if (!s) throw new Error(`${this.metadataLocation}: default spec ${this.metadata.defaultSpecId} is missing`);
    return s;
  }
  get properties(): Record<string, string> {
    return this.metadata.properties;
  }
  currentSnapshot(): Snapshot | undefined {
    const id = this.metadata.currentSnapshotId;
    return id === undefined ? undefined : this.metadata.snapshots.find((s) => s.snapshotId === id);
  }

  /** The snapshot a selector names (undefined: an empty table). */
  snapshot(sel: SnapshotSelector = {}): Snapshot | undefined {
    const m = this.metadata;
    if (sel.snapshotId !== undefined) {
      const s = m.snapshots.find((x) => x.snapshotId === sel.snapshotId);
      if (!s) throw new Error(`${this.name}: no snapshot ${sel.snapshotId}`);
      return s;
    }
    if (sel.ref !== undefined) {
      const r = m.refs[sel.ref];
      if (!r) throw new Error(`${this.name}: no branch or tag "${sel.ref}" (refs: ${Object.keys(m.refs).join(', ') || 'none'})`);
      return m.snapshots.find((x) => x.snapshotId === r.snapshotId);
    }
    if (sel.asOfMs !== undefined) return snapshotAsOf(m, sel.asOfMs);
    return this.currentSnapshot();
  }

  scan(opts: ScanOptions = {}): TableScan {
    return new TableScan(this.io, this.metadata, this.snapshot(opts), opts);
  }

  /** Live data files of a snapshot (current by default). */
  async dataFiles(sel: SnapshotSelector = {}): Promise<{ file: DataFile; specId: number; sequenceNumber: bigint }[]> {
    const snap = this.snapshot(sel);
    if (!snap) return [];
    const out: { file: DataFile; specId: number; sequenceNumber: bigint }[] = [];
    for (const mf of await readManifestList(this.io, snap)) {
      const entries = await readManifest(this.io, mf);
      for (const e of entries) if (e.status !== 2) out.push({ file: e.dataFile, specId: mf.partitionSpecId, sequenceNumber: e.sequenceNumber });
    }
    return out;
  }

  // ---- writes ---------------------------------------------------------------

  private writable(reloadOnly = false): { catalog: Catalog; ident: TableIdent } {
    if (this.readOnlyReason || !this.catalog || !this.ident) {
      throw new ReadOnlyTableError(`${this.name} is read-only: ${this.readOnlyReason ?? 'opened from a metadata file, not a catalog'}`);
    }
    if (!reloadOnly && this.metadata.formatVersion > 2) {
      throw new ReadOnlyTableError(
        `${this.name} is an Iceberg format v${this.metadata.formatVersion} table; Mimir writes format v2 only ` +
          `(a v3 writer must assign row lineage ids and write deletion vectors) — nothing written`,
      );
    }
    return { catalog: this.catalog, ident: this.ident };
  }

  /** Reload from the catalog. */
  async refresh(): Promise<this> {
    const { catalog, ident } = this.writable(true);
    const cur = await loadCurrent(catalog, this.io, ident);
    this.metadataLocation = cur.location;
    this.metadata = cur.metadata;
    return this;
  }

  /** Commit an update to this table alone. */
  async commit(update: TableUpdate, note?: string): Promise<Committed> {
    const { catalog, ident } = this.writable();
    const res = await commitTables(catalog, [{ ident, io: this.io, update }], { hooks: this.hooks, note });
    this.metadataLocation = res.tables[0]!.metadataLocation;
    this.metadata = res.tables[0]!.metadata;
    return res;
  }

  /** Write batches as data files of the default spec (not committed). */
  async writeDataFiles(batches: Iterable<Batch> | AsyncIterable<Batch>): Promise<{ file: DataFile; specId: number }[]> {
    this.writable();
    const spec = this.spec;
    const w = new DataFileWriter(this.io, this.metadata.location, this.schema, spec, writeOptions(this.properties));
    try {
      for await (const b of batches) await w.write(b);
      return (await w.close()).map((file) => ({ file, specId: spec.specId }));
    } catch (e) {
      await w.abort();
      throw e;
    }
  }

  /**
   * Write an equality delete file (not committed): `batches` hold the
   * equality columns `equalityIds`, in that order. Unpartitioned tables only
   * (the deletes then apply table-wide); undefined when there is no row.
   */
  async writeEqualityDeletes(equalityIds: number[], batches: Batch[]): Promise<{ file: DataFile; specId: number } | undefined> {
    this.writable();
    const spec = this.spec;
    if (spec.fields.length > 0) throw new Error(`${this.name}: equality deletes are written for unpartitioned tables only (spec ${spec.specId} has ${spec.fields.length} field(s)); nothing written`);
    const file = await writeEqualityDeleteFile(this.io, this.metadata.location, this.schema, equalityIds, batches, writeOptions(this.properties));
    return file ? { file, specId: spec.specId } : undefined;
  }

  /**
   * Write a position delete file (not committed): the (data file, row
   * position) pairs given, sorted by path then position. Unpartitioned
   * tables only; undefined when there is none.
   */
  async writePositionDeletes(deletes: { path: string; pos: bigint }[]): Promise<{ file: DataFile; specId: number } | undefined> {
    this.writable();
    const spec = this.spec;
    if (spec.fields.length > 0) throw new Error(`${this.name}: position deletes are written for unpartitioned tables only (spec ${spec.specId} has ${spec.fields.length} field(s)); nothing written`);
    const file = await writePositionDeleteFile(this.io, this.metadata.location, this.schema.schemaId, deletes, writeOptions(this.properties));
    return file ? { file, specId: spec.specId } : undefined;
  }

  /**
   * A row delta as an update (for multi-table commits): data files and delete
   * files added in one snapshot. The deletes carry the snapshot's sequence
   * number, so they apply to rows committed before it and never to the rows
   * added with them (Iceberg's rule for equality deletes). `referenced`: the
   * data files added position deletes name, each checked still live at
   * commit (DeletedFilesGone when a rewrite replaced one meanwhile).
   */
  rowDeltaUpdate(added: { file: DataFile; specId: number }[], addedDeletes: { file: DataFile; specId: number }[], summary?: Record<string, string>, referenced?: ReadonlySet<string>): SnapshotUpdate {
    const operation = addedDeletes.length === 0 ? 'append' : added.length === 0 ? 'delete' : 'overwrite';
    return new SnapshotUpdate(this.io, { operation, added, addedDeletes, removed: new Set(), summary, ...(referenced ? { referenced } : {}) });
  }

  /**
   * A rewrite as an update: replace exactly `removed` (data and delete files
   * that were read) with new data and delete files carrying the sequence
   * numbers given (those of the snapshot read, so deletes and rows committed
   * after it keep applying and staying newer). Fails without committing if any
   * removed file is no longer live, or when a position delete committed
   * after the snapshot read may name a removed data file (DeletedFilesGone).
   */
  rewriteUpdate(
    removed: string[],
    added: { file: DataFile; specId: number }[],
    addedDeletes: { file: DataFile; specId: number }[],
    seq: { dataSequenceNumber: bigint; deleteSequenceNumber?: bigint },
    summary?: Record<string, string>,
  ): SnapshotUpdate {
    return new SnapshotUpdate(this.io, {
      operation: 'replace', added, addedDeletes, removed: new Set(removed), summary,
      dataSequenceNumber: seq.dataSequenceNumber, deleteSequenceNumber: seq.deleteSequenceNumber ?? seq.dataSequenceNumber,
      positionDeletesAfter: seq.dataSequenceNumber,
    });
  }

  /** Live delete files of a snapshot (current by default). */
  async deleteFiles(sel: SnapshotSelector = {}): Promise<{ file: DataFile; specId: number; sequenceNumber: bigint }[]> {
    return (await this.liveFiles(sel)).filter((f) => f.file.content !== 0);
  }

  /** Live files of a snapshot, data and delete, with their data sequence numbers. */
  async liveFiles(sel: SnapshotSelector = {}): Promise<{ file: DataFile; specId: number; sequenceNumber: bigint }[]> {
    const snap = this.snapshot(sel);
    if (!snap) return [];
    const out: { file: DataFile; specId: number; sequenceNumber: bigint }[] = [];
    for (const mf of await readManifestList(this.io, snap)) {
      const entries = await readManifest(this.io, mf);
      for (const e of entries) if (e.status !== 2) out.push({ file: e.dataFile, specId: mf.partitionSpecId, sequenceNumber: e.sequenceNumber });
    }
    return out;
  }

  /** Append batches in one snapshot. */
  async append(batches: Iterable<Batch> | AsyncIterable<Batch>): Promise<CommitResult> {
    const { catalog } = this.writable();
    // the lease covers writing the data files too, not just the commit
    const end = this.hooks?.begin?.(catalog.pointerGeneration());
    try {
      const files = await this.writeDataFiles(batches);
      try {
        return await this.appendFiles(files);
      } catch (e) {
        // the commit did not land (the catalog's answer is definitive): the files are ours to remove
        for (const f of files) await this.io.delete(f.file.filePath).catch(() => undefined);
        throw e;
      }
    } finally {
      end?.();
    }
  }

  /** Append already written data files in one snapshot. */
  async appendFiles(files: { file: DataFile; specId: number }[], summary?: Record<string, string>): Promise<CommitResult> {
    this.writable();
    const u = new SnapshotUpdate(this.io, { operation: 'append', added: files, removed: new Set(), summary });
    const res = await this.commit(u);
    return { generation: res.generation, snapshotId: u.snapshotId, metadataLocation: this.metadataLocation };
  }

  /**
   * Replace exactly `filesRead` with `newFiles`, keeping every other live file
   * (including files appended concurrently). Fails without committing if any
   * file read is no longer live.
   */
  overwriteUpdate(
    filesRead: (DataFile | string)[],
    newFiles: { file: DataFile; specId: number }[],
    operation: 'overwrite' | 'replace' | 'delete' = 'overwrite',
    opts: { dataSequenceNumber?: bigint } = {},
  ): SnapshotUpdate {
    const removed = new Set(filesRead.map((f) => (typeof f === 'string' ? f : f.filePath)));
    const op = newFiles.length === 0 && operation === 'overwrite' ? 'delete' : operation;
    return new SnapshotUpdate(this.io, { operation: op, added: newFiles, removed, dataSequenceNumber: opts.dataSequenceNumber });
  }

  /** An append as an update, for multi-table commits. */
  appendUpdate(files: { file: DataFile; specId: number }[], summary?: Record<string, string>): SnapshotUpdate {
    return new SnapshotUpdate(this.io, { operation: 'append', added: files, removed: new Set(), summary });
  }

  async overwrite(filesRead: (DataFile | string)[], newFiles: { file: DataFile; specId: number }[], operation: 'overwrite' | 'replace' | 'delete' = 'overwrite'): Promise<CommitResult> {
    this.writable();
    const u = this.overwriteUpdate(filesRead, newFiles, operation);
    const res = await this.commit(u);
    return { generation: res.generation, snapshotId: u.snapshotId, metadataLocation: this.metadataLocation };
  }

  async setProperties(props: Record<string, string>): Promise<CommitResult> {
    const res = await this.commit(setPropertiesUpdate(props));
    return { generation: res.generation, metadataLocation: this.metadataLocation };
  }

  async removeProperties(keys: string[]): Promise<CommitResult> {
    const res = await this.commit(removePropertiesUpdate(keys));
    return { generation: res.generation, metadataLocation: this.metadataLocation };
  }

  /** Add optional columns (schema evolution): old files read them as null or their initial default. */
  async addColumns(cols: { name: string; type: IcebergType; doc?: string }[]): Promise<CommitResult> {
    const res = await this.commit(addColumnsUpdate(cols));
    return { generation: res.generation, metadataLocation: this.metadataLocation };
  }

  /** Make a new partition spec the default (spec evolution); old files keep theirs. */
  async updateSpec(fields: Omit<PartitionField, 'fieldId'>[]): Promise<CommitResult> {
    const res = await this.commit(updateSpecUpdate(fields));
    return { generation: res.generation, metadataLocation: this.metadataLocation };
  }
}

const RESERVED = new Set([
  'format-version',
  'uuid',
  'snapshot-count',
  'current-snapshot-id',
  'current-snapshot-summary',
  'current-snapshot-timestamp-ms',
  'current-schema',
  'default-partition-spec',
  'default-sort-order',
]);

export function setPropertiesUpdate(props: Record<string, string>): TableUpdate {
  for (const k of Object.keys(props)) if (RESERVED.has(k)) throw new Error(`property "${k}" is reserved by the Iceberg spec and cannot be set`);
  return metadataUpdate((base) => ({ ...base, properties: { ...base.properties, ...props } }));
}

export function removePropertiesUpdate(keys: string[]): TableUpdate {
  return metadataUpdate((base) => {
    const properties = { ...base.properties };
    for (const k of keys) delete properties[k];
    return { ...base, properties };
  });
}

export function addColumnsUpdate(cols: { name: string; type: IcebergType; doc?: string }[]): TableUpdate {
  return metadataUpdate((base) => {
    const cur = currentSchema(base);
    let next = base.lastColumnId;
    const renumber = (t: IcebergType): IcebergType => {
      if (t.type === 'struct') return { type: 'struct', fields: t.fields.map((f) => ({ ...f, id: ++next, type: renumber(f.type) })) };
      if (t.type === 'list') return { ...t, elementId: ++next, element: renumber(t.element) };
      if (t.type === 'map') return { ...t, keyId: ++next, valueId: ++next, key: renumber(t.key), value: renumber(t.value) };
      return t;
    };
    const added: NestedField[] = cols.map((c) => {
      if (cur.fields.some((f) => f.name === c.name)) throw new Error(`column "${c.name}" already exists`);
      const id = ++next;
      return { id, name: c.name, required: false, type: renumber(c.type), ...(c.doc ? { doc: c.doc } : {}) };
    });
    const schemaId = Math.max(...base.schemas.map((s) => s.schemaId)) + 1;
    const schema: Schema = { ...cur, schemaId, fields: [...cur.fields, ...added] };
    return { ...base, schemas: [...base.schemas, schema], currentSchemaId: schemaId, lastColumnId: Math.max(next, maxFieldId(schema)) };
  });
}

export function updateSpecUpdate(fields: Omit<PartitionField, 'fieldId'>[]): TableUpdate {
  return metadataUpdate((base) => {
    const schema = currentSchema(base);
    let last = base.lastPartitionId;
    const withIds: PartitionField[] = fields.map((f) => {
      const src = schema.fields.find((x) => x.id === f.sourceId);
      if (!src || !isPrimitive(src.type)) throw new Error(`partition source field ${f.sourceId} is not a primitive column`);
      transformResultType(f.transform, src.type);
      // reuse the id of an equivalent field of an earlier spec
      for (const s of base.partitionSpecs) {
        const same = s.fields.find((p) => p.sourceId === f.sourceId && p.name === f.name && JSON.stringify(p.transform) === JSON.stringify(f.transform));
        if (same) return { ...f, fieldId: same.fieldId };
      }
      return { ...f, fieldId: ++last };
    });
    const candidate: PartitionSpec = { specId: -1, fields: withIds };
    const existing = base.partitionSpecs.find((s) => specsEquivalent(s, candidate));
    if (existing) return { ...base, defaultSpecId: existing.specId };
    const specId = Math.max(...base.partitionSpecs.map((s) => s.specId)) + 1;
    return {
      ...base,
      partitionSpecs: [...base.partitionSpecs, { specId, fields: withIds }],
      defaultSpecId: specId,
      lastPartitionId: Math.max(last, base.lastPartitionId),
    };
  });
}
