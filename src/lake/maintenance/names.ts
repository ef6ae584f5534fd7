// The names of the files Mimir writes inside a table folder, and nothing else:
// garbage collection deletes only files that match them, so a stranger's file
// placed in a table folder (a note, a copy, another tool's output) is reported
// and never deleted.
//
// Writers and their names, relative to the table location:
//   metadata/NNNNN-<uuid>.metadata.json      table/commit.ts, lake.ts (create)
//   metadata/<uuid>-m<N>[-a<K>].avro         table/snapshot.ts (manifests)
//   metadata/snap-<id>-<attempt>-<uuid>.avro table/snapshot.ts (manifest lists)
//   data/[<partition>/…]NNNNN-<uuid>.parquet table/write.ts (data files)
//   data/delete-<uuid>.parquet               table/write.ts (delete files, equality and position)
//   <any folder>/.<name>.<uuid>.tmp          io/fileio.ts (a write a crash cut short)
// A writer that names a new kind of file adds its pattern here (the names test
// checks every file a real lake holds against these).
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

const METADATA = [
  new RegExp(`^\\d{5,}-${UUID}\\.metadata\\.json$`),
  new RegExp(`^${UUID}-m\\d+(-a\\d+)?\\.avro$`),
  new RegExp(`^snap-\\d+-\\d+-${UUID}\\.avro$`),
];
const DATA = [new RegExp(`^\\d{5,}-${UUID}\\.parquet$`), new RegExp(`^delete-${UUID}\\.parquet$`)];
const TMP = new RegExp(`^\\..+\\.${UUID}\\.tmp$`);

/**
 * Whether `rel` (a path relative to a table's location, `/`-separated) is a
 * name Mimir writes: only such files may be deleted by gc.
 */
export function isMimirFile(rel: string): boolean {
  const parts = rel.split('/');
  const name = parts[parts.length - 1]!;
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return false;
  if (TMP.test(name)) return parts[0] === 'metadata' || parts[0] === 'data';
  if (parts[0] === 'metadata') return parts.length === 2 && METADATA.some((r) => r.test(name));
  if (parts[0] === 'data') return DATA.some((r) => r.test(name));
  return false;
}

/** A Mimir metadata file name (`NNNNN-<uuid>.metadata.json`). */
export function isMimirMetadataFile(name: string): boolean {
  return METADATA[0]!.test(name);
}
