// Reachability: the files a table's metadata names, by kind — manifest lists,
// manifests, data files, delete files, statistics and partition-statistics
// files, and metadata files themselves. Paths are compared by a normalized key
// (`file:///x`, `file:/x` and `/x` are one file; percent-escapes decoded on both
// sides, so a file of a lake written before paths were literal — on disk under
// the decoded name — is still the file its metadata names), while the strings
// the metadata holds are kept for reporting and deletion.
//
// Invariant: a walk never guesses. A file the walk must read and cannot is an
// error, except where the caller says a missing file is expected (history
// whose snapshots were expired): then it is skipped, and what it named is
// simply not reached — callers that delete only ever delete unreached files
// they were told to consider, so "not reached" must never come from a file
// that exists but could not be read. Read-only: nothing here writes.
import * as nodePath from 'node:path';
import type { FileIO } from '../io/fileio.ts';
import { defaultResolver } from '../io/fileio.ts';
import type { Snapshot, StatisticsFile, TableMetadata } from '../spec/types.ts';
import { decodeManifestList } from '../avro/manifest-list.ts';
import { decodeManifest } from '../avro/manifest.ts';
import { checkManifest } from '../spec/integrity.ts';
import { readMetadata } from '../table/commit.ts';

/** The comparison key of a path: local paths (plain or `file:` URLs) normalized; other URIs as given, s3a/s3n folded into s3. */
export function pathKey(path: string): string {
  if (path.startsWith('file:') || path.startsWith('/')) {
    let local = nodePath.normalize(defaultResolver(path));
    try {
      local = decodeURIComponent(local);
    } catch {
      // a literal '%' not followed by two hex digits: the name as it is
    }
    return local.length > 1 ? local.replace(/\/+$/, '') : local;
  }
  return path.replace(/^s3[an]?:\/\//, 's3://').replace(/\/+$/, '');
}

/** A set of paths keyed by `pathKey`, remembering the first spelling seen. */
export class FileSet {
  private readonly byKey = new Map<string, string>();
  add(path: string): void {
    const k = pathKey(path);
    if (!this.byKey.has(k)) this.byKey.set(k, path);
  }
  has(path: string): boolean {
    return this.byKey.has(pathKey(path));
  }
  hasKey(key: string): boolean {
    return this.byKey.has(key);
  }
  get size(): number {
    return this.byKey.size;
  }
  /** The paths as first spelled. */
  paths(): string[] {
    return [...this.byKey.values()];
  }
  /** Paths of this set that `other` lacks. */
  minus(other: FileSet): string[] {
    const out: string[] = [];
    for (const [k, p] of this.byKey) if (!other.hasKey(k)) out.push(p);
    return out;
  }
  addAll(other: FileSet): void {
    for (const [k, p] of other.byKey) if (!this.byKey.has(k)) this.byKey.set(k, p);
  }
}

export interface Reached {
  metadataFiles: FileSet;
  manifestLists: FileSet;
  manifests: FileSet;
  dataFiles: FileSet;
  deleteFiles: FileSet;
  statistics: FileSet;
}

export function emptyReached(): Reached {
  return {
    metadataFiles: new FileSet(),
    manifestLists: new FileSet(),
    manifests: new FileSet(),
    dataFiles: new FileSet(),
    deleteFiles: new FileSet(),
    statistics: new FileSet(),
  };
}

/** Every path of every kind. */
export function allReached(r: Reached): FileSet {
  const all = new FileSet();
  for (const s of [r.metadataFiles, r.manifestLists, r.manifests, r.dataFiles, r.deleteFiles, r.statistics]) all.addAll(s);
  return all;
}

/** Whether `e`, thrown reading `path`, means the file is absent. */
export async function isMissing(io: FileIO, path: string, e: unknown): Promise<boolean> {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return true;
  if (code !== undefined) return false;
  return !(await io.exists(path).catch(() => true));
}

/**
 * Walks snapshots and metadata, accumulating what they reach. Each manifest
 * list and manifest is read at most once per walker; manifests for which
 * `skipManifest` answers true are counted as reached but not read (their
 * files are known to be reached some other way).
 */
export class ReachabilityWalker {
  readonly reached: Reached = emptyReached();
  private readonly listsRead = new Set<string>();
  private readonly manifestsRead = new Set<string>();

  constructor(
    private readonly io: FileIO,
    private readonly skipManifest: (path: string) => boolean = () => false,
  ) {}

  /** A snapshot's manifest list, its manifests and their live files. `tolerateMissing`: an absent list or manifest is skipped. */
  async snapshot(snap: Snapshot, tolerateMissing: boolean): Promise<void> {
    const listKey = pathKey(snap.manifestList);
    if (this.listsRead.has(listKey)) return;
    let bytes: Uint8Array;
    try {
      bytes = await this.io.readAll(snap.manifestList);
    } catch (e) {
      if (tolerateMissing && (await isMissing(this.io, snap.manifestList, e))) return;
      throw new Error(`snapshot ${snap.snapshotId}: cannot read its manifest list ${snap.manifestList}: ${(e as Error).message}`);
    }
    this.listsRead.add(listKey);
    this.reached.manifestLists.add(snap.manifestList);
    let manifests;
    try {
      manifests = decodeManifestList(bytes, snap.manifestList);
    } catch (e) {
      throw new Error(`snapshot ${snap.snapshotId}: its manifest list cannot be decoded: ${(e as Error).message}`);
    }
    for (const mf of manifests) {
      const key = pathKey(mf.manifestPath);
      if (this.manifestsRead.has(key)) continue;
      if (this.skipManifest(mf.manifestPath)) {
        this.manifestsRead.add(key);
        this.reached.manifests.add(mf.manifestPath);
        continue;
      }
      let mbytes: Uint8Array;
      try {
        mbytes = await this.io.readAll(mf.manifestPath);
      } catch (e) {
        if (tolerateMissing && (await isMissing(this.io, mf.manifestPath, e))) continue;
        throw new Error(`snapshot ${snap.snapshotId}: cannot read manifest ${mf.manifestPath} (listed in ${snap.manifestList}): ${(e as Error).message}`);
      }
      this.manifestsRead.add(key);
      this.reached.manifests.add(mf.manifestPath);
      let decoded;
      try {
        decoded = decodeManifest(mbytes, mf.manifestPath, { addedSnapshotId: mf.addedSnapshotId, sequenceNumber: mf.sequenceNumber });
      } catch (e) {
        throw new Error(`snapshot ${snap.snapshotId}: manifest ${mf.manifestPath} (listed in ${snap.manifestList}) cannot be decoded: ${(e as Error).message}`);
      }
      // a manifest that is not what its list says may name other files than it should: never guess
      const { entries } = decoded;
      checkManifest(mf, mbytes.length, entries, snap.manifestList, decoded.checksummed);
      for (const e of entries) {
        if (e.status === 2) continue; // DELETED: not a reference, the file left the table in this snapshot
        const df = e.dataFile;
        if (df.content === 0) this.reached.dataFiles.add(df.filePath);
        else this.reached.deleteFiles.add(df.filePath);
      }
    }
  }

  statistics(files: StatisticsFile[]): void {
    for (const s of files) this.reached.statistics.add(s.statisticsPath);
  }

  /** Every snapshot of a metadata plus its statistics files. */
  async metadata(m: TableMetadata, tolerateMissing: boolean): Promise<void> {
    for (const s of m.snapshots) await this.snapshot(s, tolerateMissing);
    this.statistics(m.statistics);
    this.statistics(m.partitionStatistics);
  }

  /**
   * A metadata file and everything it names. Returns undefined when the file is
   * absent and `tolerateMissing`; any other failure throws.
   */
  async metadataFile(location: string, tolerateMissing: boolean): Promise<TableMetadata | undefined> {
    let m: TableMetadata;
    try {
      m = await readMetadata(this.io, location);
    } catch (e) {
      if (tolerateMissing && (await isMissing(this.io, location, e))) return undefined;
      throw new Error(`cannot read metadata file ${location}: ${(e as Error).message}`);
    }
    this.reached.metadataFiles.add(location);
    await this.metadata(m, tolerateMissing);
    return m;
  }
}
