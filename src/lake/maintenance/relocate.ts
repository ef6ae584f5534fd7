// Relocate a moved or copied lake for other engines: Mimir itself reads and
// writes a moved lake through its root-rebasing FileIO (io/rooted.ts), but
// Spark, Trino, DuckDB or PyIceberg resolve the absolute paths the metadata
// holds — the old root's. `relocateLake` records the folder the lake is
// opened at as its root (the old one becomes a former root, still mapped, so
// older generations read), then rewrites each table's current metadata so
// that every path it names is under the new root: the table location, each
// retained snapshot's manifest list, each manifest (its data and delete file
// paths), statistics files and the metadata-log. Data files are not touched:
// they already sit in the new folder; only their names in the metadata move.
//
// Invariant: nothing is deleted and no data file is rewritten; the new
// manifests and manifest lists are new files, and each table switches in one
// optimistic commit (retried on a conflict, on the new base). Tables already
// under the new root are skipped; a table with position delete files (which
// hold data file paths inside them) or with a location under none of the
// lake's roots is refused and left as it was.
//
// Crash story: the root is recorded first (both roots map onto the folder, so
// every reader of this lake works whichever happened last); a crash before a
// table's commit leaves new manifest files nothing references (gc's);
// rerunning finishes the job, skipping the tables already moved.
import { randomUUID } from 'node:crypto';
import * as nodePath from 'node:path';
import type { Lake } from '../lake.ts';
import { PROP_FORMER_ROOTS, PROP_LAKE_ROOT } from '../catalog/schema.ts';
import { identToString, type TableIdent } from '../catalog/catalog.ts';
import { localPath, fileLocation } from '../io/paths.ts';
import { isWithin } from '../io/rooted.ts';
import type { ManifestFile, Snapshot, TableMetadata } from '../spec/types.ts';
import { currentSchema } from '../spec/metadata.ts';
import { encodeManifest } from '../avro/manifest.ts';
import { encodeManifestList } from '../avro/manifest-list.ts';
import { readManifest, readManifestList } from '../scan/plan.ts';
import type { TableUpdate } from '../table/commit.ts';

export interface RelocateReport {
  /** The root the lake was recorded at before (its paths still map onto the lake). */
  from: string;
  /** The folder the lake is opened at, now its recorded root. */
  to: string;
  tables: { table: string; status: 'relocated' | 'already' | 'refused'; manifests: number; reason?: string }[];
  generation: bigint;
  ms: number;
}

export function formatRelocateReport(r: RelocateReport): string {
  const n = (s: string): number => r.tables.filter((t) => t.status === s).length;
  if (r.from === r.to && n('relocated') === 0) return `lake relocate: the lake at ${r.to} is recorded there already; nothing to do`;
  return (
    `lake relocate: ${r.from} -> ${r.to}: rewrote the metadata of ${n('relocated')} table(s) (${r.tables.reduce((s, t) => s + t.manifests, 0)} manifest(s)), ` +
    `${n('already')} already there, ${n('refused')} refused; generation ${r.generation}; no data file moved or deleted in ${r.ms} ms`
  );
}

/** A path under `from` renamed under `to` (file URLs stay file URLs); other paths unchanged. */
function rebase(path: string, from: string, to: string): string {
  const local = nodePath.normalize(localPath(path));
  if (!nodePath.isAbsolute(local) || !isWithin(local, from)) return path;
  const moved = local === from ? to : nodePath.join(to, local.slice(from.length + 1));
  return path.startsWith('file:') ? fileLocation(moved) : moved;
}

class RelocateUpdate implements TableUpdate {
  private files: string[] = [];
  manifests = 0;
  constructor(
    private readonly lake: Lake,
    private readonly from: string,
    private readonly to: string,
  ) {}
  attemptFiles(): string[] {
    return this.files;
  }
  sharedFiles(): string[] {
    return [];
  }
  async apply(base: TableMetadata): Promise<TableMetadata> {
    this.files = [];
    this.manifests = 0;
    const { from, to } = this;
    const location = rebase(base.location, from, to).replace(/\/+$/, '');
    const commit = randomUUID();
    const schema = currentSchema(base);
    const rewritten = new Map<string, ManifestFile>();
    const snapshots: Snapshot[] = [];
    for (const snap of base.snapshots) {
      const out: ManifestFile[] = [];
      for (const mf of await readManifestList(this.lake.io, snap)) {
        let done = rewritten.get(mf.manifestPath);
        if (!done) {
          const entries = await readManifest(this.lake.io, mf, snap.manifestList);
          if (entries.some((e) => e.dataFile.content === 1)) {
            throw new Error(`it has position delete files (in ${mf.manifestPath}), which name data files inside them and are not rewritten`);
          }
          const spec = base.partitionSpecs.find((s) => s.specId === mf.partitionSpecId);
          if (!spec) throw new Error(`manifest ${mf.manifestPath}: partition spec ${mf.partitionSpecId} is not in the table`);
          const { bytes } = encodeManifest(
            entries.map((e) => ({
              status: e.status,
              snapshotId: e.snapshotId,
              sequenceNumber: e.sequenceNumber,
              fileSequenceNumber: e.fileSequenceNumber,
              dataFile: {
                ...e.dataFile,
                filePath: rebase(e.dataFile.filePath, from, to),
                ...(e.dataFile.referencedDataFile !== undefined ? { referencedDataFile: rebase(e.dataFile.referencedDataFile, from, to) } : {}),
              },
            })),
            { schema, spec, content: mf.content },
          );
          const path = `${location}/metadata/${commit}-m${rewritten.size}.avro`;
          await this.lake.io.writeNew(path, bytes);
          this.files.push(path);
          this.manifests++;
          done = { ...mf, manifestPath: path, manifestLength: BigInt(bytes.length) };
          rewritten.set(mf.manifestPath, done);
        }
        out.push(done);
      }
      const listPath = `${location}/metadata/snap-${snap.snapshotId}-1-${commit}.avro`;
      await this.lake.io.writeNew(
        listPath,
        encodeManifestList(out, { snapshotId: snap.snapshotId, parentSnapshotId: snap.parentSnapshotId, sequenceNumber: snap.sequenceNumber }),
      );
      this.files.push(listPath);
      snapshots.push({ ...snap, manifestList: listPath });
    }
    return {
      ...base,
      location,
      snapshots,
      statistics: base.statistics.map((s) => ({ ...s, statisticsPath: rebase(s.statisticsPath, from, to) })),
      partitionStatistics: base.partitionStatistics.map((s) => ({ ...s, statisticsPath: rebase(s.statisticsPath, from, to) })),
      metadataLog: base.metadataLog.map((e) => ({ ...e, metadataFile: rebase(e.metadataFile, from, to) })),
    };
  }
}

/** Make the folder the lake is opened at its recorded root, rewriting every table's current metadata to name it. */
export async function relocateLake(lake: Lake): Promise<RelocateReport> {
  const t0 = Date.now();
  lake.refuseObjectStorage('lake relocate');
  if (lake.readOnly) throw new Error(`lake relocate: the lake at ${lake.root} is opened read-only — nothing changed`);
  const to = nodePath.normalize(lake.root);
  const from = nodePath.normalize(lake.recordedRoot);
  const formers = new Set(lake.formerRoots);
  if (from !== to) {
    // both roots map onto the folder from here on, whatever happens next
    formers.add(from);
    lake.catalog.setProperty(PROP_FORMER_ROOTS, [...formers].join('\n'));
    lake.catalog.setProperty(PROP_LAKE_ROOT, to);
  }
  const report: RelocateReport = { from, to, tables: [], generation: lake.catalog.pointerGeneration(), ms: 0 };
  const olds = [from, ...formers].filter((r) => r !== to);
  const targets: { ident: TableIdent; update: RelocateUpdate; old: string }[] = [];
  for (const ident of lake.catalog.listAllTables()) {
    const table = identToString(ident);
    const t = await lake.loadTable(ident);
    const loc = nodePath.normalize(localPath(t.metadata.location));
    if (isWithin(loc, to)) {
      report.tables.push({ table, status: 'already', manifests: 0 });
      continue;
    }
    const old = olds.find((r) => isWithin(loc, r));
    if (old === undefined) {
      report.tables.push({ table, status: 'refused', manifests: 0, reason: `its location ${t.metadata.location} is under none of the lake's roots (${[to, ...olds].join(', ')})` });
      continue;
    }
    targets.push({ ident, update: new RelocateUpdate(lake, old, to), old });
  }
  // one commit per table: a table that cannot be rewritten is refused alone
  for (const target of targets) {
    const table = identToString(target.ident);
    try {
      const res = await lake.commit([{ ident: target.ident, update: target.update }], `relocate ${table} from ${target.old} to ${to}`);
      report.generation = res.generation;
      report.tables.push({ table, status: 'relocated', manifests: target.update.manifests });
    } catch (e) {
      report.tables.push({ table, status: 'refused', manifests: 0, reason: (e as Error).message });
    }
  }
  report.tables.sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0));
  report.ms = Date.now() - t0;
  return report;
}
