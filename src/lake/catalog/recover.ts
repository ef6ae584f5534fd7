// Recover a lost catalog: re-register every table folder of a lake from its
// newest valid metadata file, as Iceberg's `register_table` does with a file
// it is given. A table folder is `<root>/<ns…>/<table>/` with metadata files
// in `metadata/`; its candidates are tried from the highest version down
// (`NNNNN-<uuid>.metadata.json`, `vN.metadata.json`), and the first valid one
// is registered: it parses, its `location` is this folder (under the root it
// was written at), and the manifest list of its current snapshot exists. Two
// valid files at that version (a commit attempt that crashed before landing,
// beside the one that landed) are reported; the newer (`last-updated-ms`) is
// taken, unless the caller names the file to use.
//
// The recorded root (catalog property `lake.root`) is the root the tables'
// locations agree on, so a lake that was moved before its catalog was lost
// still maps its paths onto the folder it is opened at. A catalog that holds
// no table yet (one a command made over the lost one before it learned to
// refuse) records no authority: its root is taken from the tables too.
//
// Never another lake's tables: a lake folder below the root (its own
// catalog.db or mimir.toml) is not searched — it is reported, and recovered
// with --lake at that folder — and a table folder that the catalog of a lake
// around the root registers is that lake's, reported and left out.
//
// A damaged catalog file (empty, or not a SQLite database) is moved aside,
// renamed `catalog.db.damaged-<time>` (its -wal and -shm with it), and a new
// catalog is built: moving rather than rebuilding in place keeps the damaged
// bytes for whoever wants to look at them, and the rename is atomic, so a
// crash leaves either the damaged file or no catalog.db at all — both of which
// a rerun recovers.
//
// Invariant: no table file is deleted or rewritten — recovery writes the
// catalog only (tables already registered are left as they are), in one
// commit, so a crash leaves either no table or all of them registered, and
// rerunning it finishes the job. The lake's generation history starts again
// at the recovery: reads as of older generations are no longer possible.
import { existsSync, renameSync } from 'node:fs';
import * as nodePath from 'node:path';
import { CATALOG_FILE, DamagedCatalogError, SqlCatalog, identToString, type TableChange, type TableIdent } from './sql-catalog.ts';
import { enclosingLake, scanFolders, type TableFolder } from './folders.ts';
import { defaultResolver } from '../io/fileio.ts';
import { PROP_LAKE_ROOT } from './schema.ts';
import { LakeFileIO } from '../io/rooted.ts';
import { localPath } from '../io/paths.ts';
import { readMetadata } from '../table/commit.ts';
import type { TableMetadata } from '../spec/types.ts';


export interface RecoverOptions {
  /** Report what would be registered; write nothing (not even a new catalog file). */
  dryRun?: boolean;
  /** Metadata files to use instead of the newest valid one, by table (`ns.table` -> file name or path). */
  use?: Map<string, string>;
}

export interface RecoveredTable {
  table: string;
  /** The table folder on disk. */
  folder: string;
  /** registered (or would be, dry run); already in the catalog; no valid metadata file found. */
  status: 'registered' | 'already' | 'unrecoverable';
  /** The metadata location registered (as the metadata names it). */
  metadata?: string;
  version?: number;
  snapshotId?: bigint;
  /** Metadata files in the folder. */
  candidates: number;
  /** Newer files passed over, and why. */
  rejected: { file: string; reason: string }[];
  /** Other valid files at the version taken (an attempt that never landed, or the other way round). */
  sameVersion: string[];
  reason?: string;
}

export interface RecoverReport {
  root: string;
  /** The root the tables were written at (recorded in the catalog). */
  recordedRoot: string;
  /** Whether a new catalog file was created (or would be). */
  createdCatalog: boolean;
  /** Where a damaged catalog file was moved (or, dry run, would be), when there was one. */
  damagedMovedTo?: string;
  /** Lakes of their own below the root (their own catalog): not searched, not recovered here. */
  nestedLakes: string[];
  tables: RecoveredTable[];
  /** The catalog generation after recovery (unchanged on a dry run or when nothing was registered). */
  generation: bigint;
  dryRun: boolean;
  ms: number;
}

export function formatRecoverReport(r: RecoverReport): string {
  const n = (s: RecoveredTable['status']): number => r.tables.filter((t) => t.status === s).length;
  const verb = r.dryRun ? 'would register' : 'registered';
  return (
    `lake recover${r.dryRun ? ' (dry run)' : ''}: ${verb} ${n('registered')} table(s), ${n('already')} already in the catalog, ` +
    `${n('unrecoverable')} not recovered; root ${r.recordedRoot}` +
    (r.recordedRoot !== r.root ? ` (mapped onto ${r.root})` : '') +
    (r.damagedMovedTo ? `; the damaged catalog file ${r.dryRun ? 'would be' : 'was'} moved to ${r.damagedMovedTo}` : '') +
    (r.nestedLakes.length > 0 ? `; left alone ${r.nestedLakes.length} lake(s) of their own inside it: ${r.nestedLakes.join(', ')}` : '') +
    `; generation ${r.generation}; nothing deleted in ${r.ms} ms`
  );
}

/** The version a metadata file name carries (`00012-…` 12, `v3.metadata.json` 3), or -1. */
export function metadataVersion(name: string): number {
  const m = /^(\d+)-/.exec(name) ?? /^v(\d+)\./.exec(name);
  return m ? Number(m[1]) : -1;
}

interface Candidate {
  name: string;
  version: number;
  metadata: TableMetadata;
  /** The root the file's location shows it was written under. */
  root: string;
}

/** The root a table location implies for a folder at `parts` below it, or undefined when the location is not that folder. */
function rootOf(location: string, parts: string[]): string | undefined {
  const local = nodePath.normalize(localPath(location)).replace(/\/+$/, '');
  if (!nodePath.isAbsolute(local)) return undefined;
  const tail = nodePath.sep + nodePath.join(...parts);
  return local.endsWith(tail) ? local.slice(0, local.length - tail.length) || nodePath.sep : undefined;
}

async function examine(folder: TableFolder, root: string, use: string | undefined): Promise<{ chosen?: Candidate; rejected: RecoveredTable['rejected']; sameVersion: string[]; reason?: string }> {
  const rejected: RecoveredTable['rejected'] = [];
  const names = use !== undefined ? [nodePath.basename(use)] : [...folder.metadataFiles].sort((a, b) => metadataVersion(b) - metadataVersion(a) || (a < b ? 1 : -1));
  if (use !== undefined && !folder.metadataFiles.includes(names[0]!)) {
    return { rejected, sameVersion: [], reason: `the file given, ${use}, is not in ${nodePath.join(folder.dir, 'metadata')}` };
  }
  const valid: Candidate[] = [];
  for (const name of names) {
    const version = metadataVersion(name);
    if (valid.length > 0 && version !== valid[0]!.version) break;
    const file = nodePath.join(folder.dir, 'metadata', name);
    let metadata: TableMetadata;
    try {
      metadata = await readMetadata(new LakeFileIO(root), file);
    } catch (e) {
      rejected.push({ file: name, reason: `does not parse: ${(e as Error).message}` });
      continue;
    }
    const written = rootOf(metadata.location, folder.parts);
    if (written === undefined) {
      rejected.push({ file: name, reason: `its location ${metadata.location} is not the folder ${folder.parts.join('/')} of a lake` });
      continue;
    }
    const io = new LakeFileIO(root, [written]);
    const snap = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId);
    if (snap && !(await io.exists(snap.manifestList))) {
      rejected.push({ file: name, reason: `the manifest list of its current snapshot ${snap.snapshotId} is missing (${io.local(snap.manifestList)})` });
      continue;
    }
    valid.push({ name, version, metadata, root: written });
  }
  if (valid.length === 0) return { rejected, sameVersion: [], reason: `none of its ${folder.metadataFiles.length} metadata file(s) is valid` };
  valid.sort((a, b) => (b.metadata.lastUpdatedMs > a.metadata.lastUpdatedMs ? 1 : b.metadata.lastUpdatedMs < a.metadata.lastUpdatedMs ? -1 : 0));
  return { chosen: valid[0], rejected, sameVersion: valid.slice(1).map((c) => c.name) };
}

/** Where a damaged catalog file goes: `catalog.db.damaged-<UTC time>`, a free name. */
function damagedName(catalogFile: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let i = 0; ; i++) {
    const p = `${catalogFile}.damaged-${stamp}${i === 0 ? '' : `-${i}`}`;
    if (!existsSync(p)) return p;
  }
}

/** Whether the catalog file at `file` is damaged (empty or not SQLite); other failures to open are thrown. */
function isDamaged(root: string): boolean {
  try {
    SqlCatalog.open(root, { create: false, readOnly: true }).close();
    return false;
  } catch (e) {
    if (e instanceof DamagedCatalogError) return true;
    throw e;
  }
}

/** Move a damaged catalog file (and its -wal, -shm) aside; returns where it went. */
function moveAside(catalogFile: string): string {
  const to = damagedName(catalogFile);
  for (const suffix of ['-wal', '-shm']) if (existsSync(catalogFile + suffix)) renameSync(catalogFile + suffix, to + suffix);
  renameSync(catalogFile, to);
  return to;
}

/**
 * Table folders under `root` that the catalog of a lake around it registers
 * (folder -> "the catalog X registers it as T"): they are that lake's.
 */
function claimedByEnclosingLakes(root: string): Map<string, string> {
  const claimed = new Map<string, string>();
  for (let around = enclosingLake(root); around !== undefined; around = enclosingLake(around)) {
    if (!existsSync(nodePath.join(around, CATALOG_FILE))) continue;
    let other: SqlCatalog;
    try {
      other = SqlCatalog.open(around, { create: false, readOnly: true });
    } catch {
      continue; // not readable as a catalog: it registers nothing we can see
    }
    try {
      const recorded = other.property(PROP_LAKE_ROOT);
      for (const ident of other.listAllTables()) {
        const loc = other.loadTable(ident)?.metadataLocation;
        if (!loc) continue;
        let local = nodePath.normalize(defaultResolver(loc));
        if (recorded !== undefined && local.startsWith(recorded.replace(/\/+$/, '') + nodePath.sep)) local = nodePath.join(around, local.slice(recorded.replace(/\/+$/, '').length));
        const folder = nodePath.dirname(nodePath.dirname(local)); // <table>/metadata/<file>
        if (!claimed.has(folder)) claimed.set(folder, `the catalog ${other.path} registers it as ${identToString(ident)}: it is that lake's table`);
      }
    } finally {
      other.close();
    }
  }
  return claimed;
}

/** Re-register the table folders under `root` in its catalog (created when absent, or when damaged: moved aside first). */
export async function recoverCatalog(rootDir: string, opts: RecoverOptions = {}): Promise<RecoverReport> {
  const t0 = Date.now();
  const root = nodePath.resolve(rootDir);
  const dryRun = opts.dryRun === true;
  const { tables: folders, lakes: nestedLakes } = scanFolders(root);
  if (folders.length === 0) {
    const nested = nestedLakes.length > 0
      ? `; ${nestedLakes.join(', ')} ${nestedLakes.length === 1 ? 'is a lake' : 'are lakes'} of its own (own ${CATALOG_FILE} or mimir.toml), left alone: give --lake ${nestedLakes[0]} to use or recover it`
      : '';
    throw new Error(`no table folders under ${root} (a folder <namespace>/<table>/metadata/ holding *.metadata.json files)${nested} — nothing to recover, nothing written`);
  }
  const catalogFile = nodePath.join(root, CATALOG_FILE);
  let damagedMovedTo: string | undefined;
  if (existsSync(catalogFile) && isDamaged(root)) damagedMovedTo = dryRun ? damagedName(catalogFile) : moveAside(catalogFile);
  const createdCatalog = !existsSync(catalogFile) || (dryRun && damagedMovedTo !== undefined);
  const claimed = claimedByEnclosingLakes(root);
  let catalog: SqlCatalog | undefined;
  if (!createdCatalog || !dryRun) catalog = SqlCatalog.open(root, { create: true, readOnly: dryRun });
  try {
    // a catalog without tables records no authority on the root (one made over the lost catalog, say)
    const recorded = catalog && catalog.listAllTables().length > 0 ? catalog.property(PROP_LAKE_ROOT) : undefined;
    const tables: RecoveredTable[] = [];
    const chosen: { ident: TableIdent; t: RecoveredTable; c: Candidate }[] = [];
    for (const folder of folders) {
      const ident: TableIdent = { namespace: folder.parts.slice(0, -1), name: folder.parts[folder.parts.length - 1]! };
      const name = identToString(ident);
      const t: RecoveredTable = { table: name, folder: folder.dir, status: 'unrecoverable', candidates: folder.metadataFiles.length, rejected: [], sameVersion: [] };
      tables.push(t);
      if (ident.namespace.length === 0) {
        t.reason = 'a table folder directly under the lake root has no namespace';
        continue;
      }
      if (catalog?.loadTable(ident)) {
        t.status = 'already';
        t.metadata = catalog.loadTable(ident)!.metadataLocation;
        continue;
      }
      const owner = claimed.get(folder.dir);
      if (owner !== undefined) {
        t.reason = owner;
        continue;
      }
      const r = await examine(folder, root, opts.use?.get(name));
      t.rejected = r.rejected;
      t.sameVersion = r.sameVersion;
      if (!r.chosen) {
        t.reason = r.reason;
        continue;
      }
      chosen.push({ ident, t, c: r.chosen });
    }
    // one root for the lake: the recorded one, else the one most tables were written under
    const counts = new Map<string, number>();
    for (const { c } of chosen) counts.set(c.root, (counts.get(c.root) ?? 0) + 1);
    const recordedRoot = recorded ?? [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? root;
    const changes: TableChange[] = [];
    for (const { ident, t, c } of chosen) {
      if (nodePath.normalize(c.root) !== nodePath.normalize(recordedRoot)) {
        t.reason = `it was written under ${c.root}, the lake's other tables under ${recordedRoot}`;
        continue;
      }
      t.status = 'registered';
      t.version = c.version;
      t.metadata = `${c.metadata.location.replace(/\/+$/, '')}/metadata/${c.name}`;
      if (c.metadata.currentSnapshotId !== undefined) t.snapshotId = c.metadata.currentSnapshotId;
      changes.push({ ident, expected: null, next: t.metadata });
    }
    let generation = catalog?.pointerGeneration() ?? 0n;
    if (!dryRun && catalog) {
      for (const c of changes) if (!catalog.namespaceExists(c.ident.namespace)) catalog.createNamespace(c.ident.namespace);
      if (changes.length > 0) generation = catalog.commit(changes, `recover ${changes.length} table(s) from their metadata files`);
      if (recorded === undefined) catalog.setProperty(PROP_LAKE_ROOT, recordedRoot);
    }
    return { root, recordedRoot, createdCatalog, ...(damagedMovedTo ? { damagedMovedTo } : {}), nestedLakes, tables, generation, dryRun, ms: Date.now() - t0 };
  } finally {
    catalog?.close();
  }
}
