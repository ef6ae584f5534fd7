// Check a lake's files against its metadata, reading everything a reader of
// any retained snapshot would: per table of the catalog, the current metadata
// file, every snapshot's manifest list, every manifest (its checksum, length
// and entry counts against the list: spec/integrity.ts), and every live data
// and delete file (present, of the size its entry records; with `footers`,
// also its Parquet footer's row count against the entry's record_count). Each
// file is read once however many snapshots share it.
//
// Invariant: read-only, and a problem never stops the check: each is reported
// with the table and the file it concerns, and the rest is still read (what a
// broken manifest list names is not reached, and says so).
import type { Lake } from '../lake.ts';
import { identToString } from '../catalog/catalog.ts';
import type { ManifestFile, TableMetadata } from '../spec/types.ts';
import { readMetadata } from '../table/commit.ts';
import { readManifest, readManifestList } from '../scan/plan.ts';
import { ParquetDataFile } from '../parquet/read.ts';
import { checkRowCount } from '../spec/integrity.ts';
import { pathKey } from './reachable.ts';

export interface CheckOptions {
  /** Also open each data and delete file's Parquet footer and compare its row count (slower: one read per file). */
  footers?: boolean;
  /** Only the current snapshot of each table (default: every snapshot the metadata retains). */
  currentOnly?: boolean;
}

export interface CheckProblem {
  table: string;
  file: string;
  problem: string;
}

export interface CheckReport {
  tables: number;
  snapshots: number;
  manifestLists: number;
  manifests: number;
  /** Data and delete files checked. */
  files: number;
  footers: boolean;
  problems: CheckProblem[];
  ms: number;
}

export function formatCheckReport(r: CheckReport): string {
  return (
    `lake check: ${r.tables} table(s), ${r.snapshots} snapshot(s), ${r.manifestLists} manifest list(s), ${r.manifests} manifest(s), ` +
    `${r.files} data/delete file(s)${r.footers ? ' with their footers' : ''}: ` +
    `${r.problems.length === 0 ? 'no problem' : `${r.problems.length} problem(s)`} in ${r.ms} ms`
  );
}

export async function checkLake(lake: Lake, opts: CheckOptions = {}): Promise<CheckReport> {
  const t0 = Date.now();
  const report: CheckReport = { tables: 0, snapshots: 0, manifestLists: 0, manifests: 0, files: 0, footers: opts.footers === true, problems: [], ms: 0 };
  const seenManifests = new Set<string>();
  const seenFiles = new Set<string>();
  for (const ident of lake.catalog.listAllTables()) {
    const table = identToString(ident);
    const pointer = lake.catalog.loadTable(ident)?.metadataLocation;
    if (!pointer) continue;
    report.tables++;
    const problem = (file: string, e: unknown): void => {
      report.problems.push({ table, file, problem: e instanceof Error ? e.message : String(e) });
    };
    let m: TableMetadata;
    try {
      m = await readMetadata(lake.io, pointer);
    } catch (e) {
      problem(pointer, e);
      continue;
    }
    const snaps = opts.currentOnly ? m.snapshots.filter((s) => s.snapshotId === m.currentSnapshotId) : m.snapshots;
    for (const snap of snaps) {
      report.snapshots++;
      let manifests: ManifestFile[];
      try {
        manifests = await readManifestList(lake.io, snap);
        report.manifestLists++;
      } catch (e) {
        problem(snap.manifestList, new Error(`snapshot ${snap.snapshotId}: ${(e as Error).message} (its manifests were not checked)`));
        continue;
      }
      for (const mf of manifests) {
        const key = pathKey(mf.manifestPath);
        if (seenManifests.has(key)) continue;
        seenManifests.add(key);
        report.manifests++;
        let entries;
        try {
          entries = await readManifest(lake.io, mf, snap.manifestList);
        } catch (e) {
          problem(mf.manifestPath, e);
          continue;
        }
        for (const e of entries) {
          if (e.status === 2) continue;
          const df = e.dataFile;
          const fkey = pathKey(df.filePath);
          if (seenFiles.has(fkey)) continue;
          seenFiles.add(fkey);
          report.files++;
          try {
            const input = await lake.io.open(df.filePath);
            let size: number;
            try {
              size = await input.size();
            } finally {
              await input.close();
            }
            if (BigInt(size) !== df.fileSizeInBytes) {
              throw new Error(`${df.filePath}: it is ${size} bytes, its manifest entry (in ${mf.manifestPath}) records ${df.fileSizeInBytes}`);
            }
            if (opts.footers && df.fileFormat.toUpperCase() === 'PARQUET') {
              const pf = await ParquetDataFile.open(lake.io, df.filePath);
              try {
                checkRowCount(df.filePath, pf.numRows, df.recordCount);
              } finally {
                await pf.close();
              }
            }
          } catch (err) {
            problem(df.filePath, err);
          }
        }
      }
    }
  }
  report.ms = Date.now() - t0;
  return report;
}
