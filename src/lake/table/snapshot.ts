// Producing snapshots: append (add data files), row deltas (add data files
// and delete files) and overwrite/replace (remove exactly the files that were
// read — data or delete files — add new ones, keep whatever else is live,
// including files appended concurrently since the read). The manifests of
// added files are written once, with the snapshot id fixed for all attempts
// and sequence numbers left to inheritance (or fixed, for a rewrite), so a
// retry only rewrites manifests that mark removed files and the manifest list.
//
// Manifests stay few: the entries of every parent manifest that holds a
// removed file are rewritten into ONE manifest per (spec, content), and a
// parent manifest with no live entry left (only deleted entries, recorded by
// the snapshot that deleted them) is not carried into the next snapshot.
import { randomUUID, randomBytes } from 'node:crypto';
import type { FileIO } from '../io/fileio.ts';
import type { DataFile, ManifestEntry, ManifestFile, Operation, PartitionSpec, Snapshot, TableMetadata } from '../spec/types.ts';
import { encodeManifest, type ManifestEntryToWrite } from '../avro/manifest.ts';
import { encodeManifestList } from '../avro/manifest-list.ts';
import { pathMightBeIn, readManifest, readManifestList } from '../scan/plan.ts';
import { currentSchema } from '../spec/metadata.ts';
import { ValidationError, type TableUpdate } from './commit.ts';
import { crashPoint } from '../testing/crash.ts';

/** A positive random 63-bit id. */
export function newSnapshotId(): bigint {
  const b = randomBytes(8);
  b[0] = b[0]! & 0x7f;
  const id = b.readBigUInt64BE(0);
  return id === 0n ? 1n : id;
}

export interface SnapshotChange {
  operation: Operation;
  /** Data files to add, each with the spec its partition tuple follows. */
  added: { file: DataFile; specId: number }[];
  /** Delete files (position or equality) to add. */
  addedDeletes?: { file: DataFile; specId: number }[];
  /** Paths of live files (data or delete) to remove; every one must still be live at commit. */
  removed: Set<string>;
  /** Extra summary entries. */
  summary?: Record<string, string>;
  /**
   * Data sequence number for the added files (a rewrite keeps the sequence
   * number of the snapshot it read, so rows appended meanwhile stay newer).
   */
  dataSequenceNumber?: bigint;
  /**
   * Data sequence number for the added delete files (a rewrite that merges
   * delete files keeps the sequence number of the snapshot it read, so the
   * merged deletes never reach rows committed after that snapshot).
   */
  deleteSequenceNumber?: bigint;
  /**
   * Data files the added position deletes name: each must still be live in
   * the snapshot committed on (a rewrite that replaced one meanwhile would
   * leave the deletes naming nothing and the rows live again). Checked on
   * every attempt; DeletedFilesGone when one is not.
   */
  referenced?: ReadonlySet<string>;
  /**
   * A rewrite of a snapshot with this sequence number: it fails
   * (DeletedFilesGone) when a position delete file committed after that
   * snapshot may name a data file it removes (those deletes would be lost).
   */
  positionDeletesAfter?: bigint;
}

/** A commit refused because position deletes and the data files they name would part (nothing committed). */
export class DeletedFilesGone extends ValidationError {}

function specOf(m: TableMetadata, id: number): PartitionSpec {
  const s = m.partitionSpecs.find((p) => p.specId === id);
  if (!s) throw new ValidationError(`partition spec ${id} is not in the table`);
  return s;
}

export class SnapshotUpdate implements TableUpdate {
  readonly snapshotId = newSnapshotId();
  private readonly commitId = randomUUID();
  private manifestCount = 0;
  private addedManifests: ManifestFile[] | undefined;
  private shared: string[] = [];
  private perAttempt: string[] = [];

  constructor(
    private readonly io: FileIO,
    private readonly change: SnapshotChange,
  ) {}

  attemptFiles(): string[] {
    return this.perAttempt;
  }
  sharedFiles(): string[] {
    return this.shared;
  }

  private manifestPath(m: TableMetadata, attempt?: number): string {
    const n = this.manifestCount++;
    const suffix = attempt === undefined ? '' : `-a${attempt}`;
    return `${m.location.replace(/\/+$/, '')}/metadata/${this.commitId}-m${n}${suffix}.avro`;
  }

  private async writeManifest(
    m: TableMetadata,
    spec: PartitionSpec,
    entries: ManifestEntryToWrite[],
    seq: bigint,
    attempt: number | undefined,
    content: 0 | 1,
  ): Promise<ManifestFile> {
    const schema = currentSchema(m);
    const { bytes, summary } = encodeManifest(entries, { schema, spec, content });
    const path = this.manifestPath(m, attempt);
    await this.io.writeNew(path, bytes);
    crashPoint('lake:manifest-written');
    (attempt === undefined ? this.shared : this.perAttempt).push(path);
    const { minDataSequenceNumber, ...counts } = summary;
    return {
      ...counts,
      manifestPath: path,
      manifestLength: BigInt(bytes.length),
      partitionSpecId: spec.specId,
      content,
      sequenceNumber: seq,
      minSequenceNumber: minDataSequenceNumber ?? seq,
      addedSnapshotId: this.snapshotId,
    };
  }

  /**
   * Merge `kept` into one manifest per (spec, content) when there are more
   * than the table's `commit.manifest.min-count-to-merge` (default 100; 0 or
   * `commit.manifest-merge.enabled` = false: never). Live entries are written
   * as EXISTING with their sequence numbers; entries of removed files are left
   * out. Written per attempt (the parent differs between attempts).
   */
  private async mergeManifests(base: TableMetadata, kept: ManifestFile[], seq: bigint, attempt: number): Promise<ManifestFile[]> {
    const props = base.properties;
    const min = Number(props['commit.manifest.min-count-to-merge'] ?? MERGE_MIN_COUNT);
    if (props['commit.manifest-merge.enabled'] === 'false' || !Number.isFinite(min) || min <= 0 || kept.length <= min) return kept;
    const groups = new Map<string, ManifestFile[]>();
    for (const mf of kept) {
      const k = `${mf.partitionSpecId}/${mf.content}`;
      const g = groups.get(k);
      if (g) g.push(mf);
      else groups.set(k, [mf]);
    }
    const out: ManifestFile[] = [];
    for (const g of groups.values()) {
      if (g.length < 2) {
        out.push(...g);
        continue;
      }
      const entries: ManifestEntryToWrite[] = [];
      for (const mf of g) {
        const es = await readManifest(this.io, mf);
        for (const e of es) if (e.status !== 2) entries.push(explicit(e, 0, e.snapshotId));
      }
      if (entries.length === 0) continue;
      out.push(await this.writeManifest(base, specOf(base, g[0]!.partitionSpecId), entries, seq, attempt, g[0]!.content));
    }
    return out;
  }

  /** The checks `referenced` and `positionDeletesAfter` ask for, on the parent's manifests. */
  private async checkPositionDeletes(parentManifests: ManifestFile[]): Promise<void> {
    const referenced = this.change.referenced;
    const after = this.change.positionDeletesAfter;
    if ((!referenced || referenced.size === 0) && after === undefined) return;
    const found = new Set<string>();
    const removedData = [...this.change.removed];
    for (const mf of parentManifests) {
      if (mf.content === 0 && (!referenced || referenced.size === 0)) continue;
      if (mf.content === 1 && (after === undefined || mf.sequenceNumber <= after)) continue;
      for (const e of await readManifest(this.io, mf)) {
        if (e.status === 2) continue;
        const f = e.dataFile;
        if (f.content === 0) {
          if (referenced?.has(f.filePath)) found.add(f.filePath);
        } else if (f.content === 1 && after !== undefined && e.sequenceNumber > after) {
          const hit = removedData.find((p) => !this.change.removed.has(f.filePath) && pathMightBeIn(f, p) && (f.referencedDataFile === undefined || f.referencedDataFile === p));
          if (hit !== undefined) {
            throw new DeletedFilesGone(`${this.change.operation}: ${f.filePath}, a position delete file committed after the snapshot read (sequence number ${e.sequenceNumber} > ${after}), may name ${hit}, which this rewrite removes; nothing committed`);
          }
        }
      }
    }
    if (referenced && found.size !== referenced.size) {
      const gone = [...referenced].filter((p) => !found.has(p));
      throw new DeletedFilesGone(`${this.change.operation}: ${gone.length} of ${referenced.size} data file(s) the position deletes name are no longer live (first: ${gone[0]}; rewritten meanwhile); nothing committed`);
    }
  }

  async apply(base: TableMetadata, attempt: number): Promise<TableMetadata> {
    this.perAttempt = [];
    if (base.snapshots.some((s) => s.snapshotId === this.snapshotId)) {
      throw new ValidationError(`snapshot id ${this.snapshotId} already exists in the table`);
    }
    const seq = base.lastSequenceNumber + 1n;
    const parent = base.currentSnapshotId === undefined ? undefined : base.snapshots.find((s) => s.snapshotId === base.currentSnapshotId);

    // 1. the added files' manifests: written once, one per spec and content
    if (!this.addedManifests) {
      this.addedManifests = [];
      const groups: { files: { file: DataFile; specId: number }[]; content: 0 | 1; seq: bigint | null }[] = [
        { files: this.change.added, content: 0, seq: this.change.dataSequenceNumber ?? null },
        { files: this.change.addedDeletes ?? [], content: 1, seq: this.change.deleteSequenceNumber ?? null },
      ];
      for (const g of groups) {
        const bySpec = new Map<number, DataFile[]>();
        for (const a of g.files) {
          if ((a.file.content === 0) !== (g.content === 0)) {
            throw new ValidationError(`${a.file.filePath}: a file of content ${a.file.content} given as ${g.content === 0 ? 'a data' : 'a delete'} file`);
          }
          const l = bySpec.get(a.specId);
          if (l) l.push(a.file);
          else bySpec.set(a.specId, [a.file]);
        }
        for (const [specId, files] of bySpec) {
          const entries = files.map((f) => ({ status: 1 as const, snapshotId: this.snapshotId, sequenceNumber: g.seq, fileSequenceNumber: null, dataFile: f }));
          this.addedManifests.push(await this.writeManifest(base, specOf(base, specId), entries, seq, undefined, g.content));
        }
      }
    }
    const added = this.addedManifests.map((mf) => {
      const fixed = mf.content === 0 ? this.change.dataSequenceNumber : this.change.deleteSequenceNumber;
      return { ...mf, sequenceNumber: seq, minSequenceNumber: fixed ?? seq };
    });

    // 2. the parent's manifests, rewriting those that hold removed files
    const kept: ManifestFile[] = [];
    const found = new Set<string>();
    let deletedFiles = 0n;
    let deletedRecords = 0n;
    let deletedSize = 0n;
    const removedDeletes = { files: 0n, equality: 0n, position: 0n, size: 0n };
    const parentManifests = parent ? await readManifestList(this.io, parent) : [];
    const rewrittenBy = new Map<string, { specId: number; content: number; entries: ManifestEntryToWrite[] }>();
    for (const mf of parentManifests) {
      // a manifest left with no live file only recorded earlier removals: not carried on
      if (mf.addedFilesCount + mf.existingFilesCount === 0 && mf.deletedFilesCount > 0) continue;
      if (this.change.removed.size === 0) {
        kept.push(mf);
        continue;
      }
      const entries = await readManifest(this.io, mf);
      const live = entries.filter((e) => e.status !== 2);
      if (!live.some((e) => this.change.removed.has(e.dataFile.filePath))) {
        kept.push(mf);
        continue;
      }
      const key = `${mf.partitionSpecId}:${mf.content}`;
      let group = rewrittenBy.get(key);
      if (!group) rewrittenBy.set(key, (group = { specId: mf.partitionSpecId, content: mf.content, entries: [] }));
      const rewritten = group.entries;
      for (const e of live) {
        if (this.change.removed.has(e.dataFile.filePath)) {
          found.add(e.dataFile.filePath);
          if (e.dataFile.content === 0) {
            deletedFiles++;
            deletedRecords += e.dataFile.recordCount;
            deletedSize += e.dataFile.fileSizeInBytes;
          } else {
            removedDeletes.files++;
            removedDeletes.size += e.dataFile.fileSizeInBytes;
            if (e.dataFile.content === 2) removedDeletes.equality += e.dataFile.recordCount;
            else removedDeletes.position += e.dataFile.recordCount;
          }
          rewritten.push(explicit(e, 2, this.snapshotId));
        } else rewritten.push(explicit(e, 0, e.snapshotId));
      }
    }
    for (const g of rewrittenBy.values()) {
      kept.push(await this.writeManifest(base, specOf(base, g.specId), g.entries, seq, attempt, g.content as 0 | 1));
    }
    if (found.size !== this.change.removed.size) {
      const missing = [...this.change.removed].filter((p) => !found.has(p));
      throw new ValidationError(
        `${this.change.operation}: ${missing.length} of ${this.change.removed.size} file(s) to replace are no longer live (first: ${missing[0]}); nothing committed`,
      );
    }

    await this.checkPositionDeletes(parentManifests);

    // 3. past `commit.manifest.min-count-to-merge` manifests, the kept ones are
    // merged (per spec and content) so a scan reads a few manifests, not one per commit
    const merged = await this.mergeManifests(base, kept, seq, attempt);

    // 4. the manifest list and the snapshot
    const manifests = [...added.filter((m) => m.addedFilesCount > 0), ...merged];
    const listPath = `${base.location.replace(/\/+$/, '')}/metadata/snap-${this.snapshotId}-${attempt + 1}-${this.commitId}.avro`;
    const listBytes = encodeManifestList(manifests, { snapshotId: this.snapshotId, parentSnapshotId: parent?.snapshotId, sequenceNumber: seq });
    await this.io.writeNew(listPath, listBytes);
    crashPoint('lake:manifest-list-written');
    this.perAttempt.push(listPath);

    const addedRecords = this.change.added.reduce((s, a) => s + a.file.recordCount, 0n);
    const addedSize = this.change.added.reduce((s, a) => s + a.file.fileSizeInBytes, 0n);
    const dels = this.change.addedDeletes ?? [];
    const addedDeletes = {
      files: BigInt(dels.length),
      equalityFiles: BigInt(dels.filter((d) => d.file.content === 2).length),
      positionFiles: BigInt(dels.filter((d) => d.file.content === 1).length),
      equality: dels.filter((d) => d.file.content === 2).reduce((s, d) => s + d.file.recordCount, 0n),
      position: dels.filter((d) => d.file.content === 1).reduce((s, d) => s + d.file.recordCount, 0n),
      size: dels.reduce((s, d) => s + d.file.fileSizeInBytes, 0n),
    };
    const prev = parent?.summary ?? ({} as Record<string, string>);
    const total = (k: string, plus: bigint, minus: bigint): string => String(BigInt(prev[k] ?? '0') + plus - minus);
    const partitions = new Set([...this.change.added, ...dels].map((a) => `${a.specId}:${JSON.stringify(a.file.partition, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`));
    const summary: Snapshot['summary'] = {
      operation: this.change.operation,
      ...(this.change.added.length > 0
        ? { 'added-data-files': String(this.change.added.length), 'added-records': String(addedRecords), 'added-files-size': String(addedSize) }
        : {}),
      ...(deletedFiles > 0n
        ? { 'deleted-data-files': String(deletedFiles), 'deleted-records': String(deletedRecords), 'removed-files-size': String(deletedSize) }
        : {}),
      ...(addedDeletes.files > 0n
        ? {
            'added-delete-files': String(addedDeletes.files),
            ...(addedDeletes.equalityFiles > 0n ? { 'added-equality-delete-files': String(addedDeletes.equalityFiles), 'added-equality-deletes': String(addedDeletes.equality) } : {}),
            ...(addedDeletes.positionFiles > 0n ? { 'added-position-delete-files': String(addedDeletes.positionFiles), 'added-position-deletes': String(addedDeletes.position) } : {}),
          }
        : {}),
      ...(removedDeletes.files > 0n
        ? {
            'removed-delete-files': String(removedDeletes.files),
            ...(removedDeletes.equality > 0n ? { 'removed-equality-deletes': String(removedDeletes.equality) } : {}),
            ...(removedDeletes.position > 0n ? { 'removed-position-deletes': String(removedDeletes.position) } : {}),
          }
        : {}),
      'changed-partition-count': String(partitions.size),
      'total-records': total('total-records', addedRecords, deletedRecords),
      'total-files-size': total('total-files-size', addedSize + addedDeletes.size, deletedSize + removedDeletes.size),
      'total-data-files': total('total-data-files', BigInt(this.change.added.length), deletedFiles),
      'total-delete-files': total('total-delete-files', addedDeletes.files, removedDeletes.files),
      'total-position-deletes': total('total-position-deletes', addedDeletes.position, removedDeletes.position),
      'total-equality-deletes': total('total-equality-deletes', addedDeletes.equality, removedDeletes.equality),
      'engine-name': 'mimir',
      ...this.change.summary,
    };
    const now = BigInt(Date.now());
    const snap: Snapshot = {
      snapshotId: this.snapshotId,
      ...(parent ? { parentSnapshotId: parent.snapshotId } : {}),
      sequenceNumber: seq,
      timestampMs: now > base.lastUpdatedMs ? now : base.lastUpdatedMs + 1n,
      manifestList: listPath,
      summary,
      schemaId: base.currentSchemaId,
    };
    return {
      ...base,
      lastSequenceNumber: seq,
      snapshots: [...base.snapshots, snap],
      currentSnapshotId: snap.snapshotId,
      refs: { ...base.refs, main: { ...(base.refs.main ?? {}), snapshotId: snap.snapshotId, type: 'branch' } },
      snapshotLog: [...base.snapshotLog, { timestampMs: snap.timestampMs, snapshotId: snap.snapshotId }],
    };
  }
}

/** Iceberg's default `commit.manifest.min-count-to-merge`. */
const MERGE_MIN_COUNT = 100;

/** An entry re-written into a new manifest: sequence numbers explicit, as the spec requires. */
function explicit(e: ManifestEntry, status: 0 | 2, snapshotId: bigint): ManifestEntryToWrite {
  return { status, snapshotId, sequenceNumber: e.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber, dataFile: e.dataFile };
}
