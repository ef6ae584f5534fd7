// Integrity checks between what a table's metadata says about a file and what
// the file holds, applied wherever a file is read: a manifest's entries
// against the counts its manifest list records for it (added, existing and
// deleted files and rows, and the manifest's length), a data or delete file's
// row count in its Parquet footer against its manifest entry. A mismatch is an
// `IntegrityError` naming the file and both numbers: the file was changed or
// damaged after it was written (or was never the file the metadata meant), and
// nothing read from it is trusted. For a manifest another engine wrote (no
// Mimir checksum), count mismatches are a warning, never a refusal: older
// writers miscounted, and Java, PyIceberg and DuckDB read by the entries.
// Pure functions (but for that warning).
import type { ManifestEntry, ManifestFile } from './types.ts';
import { warn } from '../warnings.ts';

/** A file disagrees with what the metadata says of it. */
export class IntegrityError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message} — the file was altered or damaged after it was written; nothing read from it`);
    this.name = 'IntegrityError';
  }
}

/**
 * A manifest's bytes and entries against its manifest-list record (`ownFile`:
 * a manifest Mimir wrote; another writer's gets warnings, see above). The
 * length is checked only for a manifest Mimir wrote (`ownFile`: it carries
 * Mimir's checksum): other writers are known to record lengths that differ
 * from the file (a DuckDB test table records 4427 for a 4393-byte manifest)
 * and Java and PyIceberg never check it, so for theirs the counts decide.
 */
export function checkManifest(mf: ManifestFile, byteLength: number, entries: readonly ManifestEntry[], listPath?: string, ownFile = true): void {
  const where = listPath ? ` (listed in ${listPath})` : '';
  if (ownFile && BigInt(byteLength) !== mf.manifestLength) {
    throw new IntegrityError(mf.manifestPath, `it is ${byteLength} bytes, its manifest list records ${mf.manifestLength}${where}`);
  }
  if (mf.countsUnknown) return;
  const files = [0, 0, 0];
  const rows = [0n, 0n, 0n];
  for (const e of entries) {
    // status: 0 existing, 1 added, 2 deleted
    files[e.status]!++;
    rows[e.status]! += e.dataFile.recordCount;
  }
  const pairs: [string, bigint | number, bigint | number][] = [
    ['added files', files[1]!, mf.addedFilesCount],
    ['existing files', files[0]!, mf.existingFilesCount],
    ['deleted files', files[2]!, mf.deletedFilesCount],
    ['added rows', rows[1]!, mf.addedRowsCount],
    ['existing rows', rows[0]!, mf.existingRowsCount],
    ['deleted rows', rows[2]!, mf.deletedRowsCount],
  ];
  const wrong = pairs.filter(([, found, said]) => BigInt(found) !== BigInt(said));
  if (wrong.length === 0) return;
  const counts = `its entries count ${wrong.map(([what, found, said]) => `${found} ${what} where its manifest list records ${said}`).join(', ')}${where}`;
  // another writer's miscount (older writers made them): the entries are the truth, as Java reads them
  if (!ownFile) {
    warn(`${mf.manifestPath}: ${counts} — read by its entries, as other engines read it (a miscount of the engine that wrote it; Mimir's own manifests carry a checksum and are refused instead)`);
    return;
  }
  throw new IntegrityError(mf.manifestPath, counts);
}

/** A data or delete file's row count (Parquet footer) against its manifest entry's record_count. */
export function checkRowCount(file: string, footerRows: number | bigint, recordCount: bigint): void {
  if (BigInt(footerRows) !== recordCount) {
    throw new IntegrityError(file, `its Parquet footer counts ${footerRows} rows, its manifest entry records ${recordCount}`);
  }
}
