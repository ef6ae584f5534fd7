// A lake: a folder holding the embedded SQLite catalog (`catalog.db`) and one
// folder per table (`<root>/<namespace>/<table>/{metadata,data}`; no table's
// location is inside another's). Tables load as of now, a lake generation or a
// time; a table pinned to the past is read-only. Every write registers a lease
// in the catalog for as long as it is in flight, so orphan removal in any
// process leaves its files alone. The catalog may live elsewhere instead
// (`catalog`: a PostgreSQL database or another SQLite file, or the lake's
// mimir.toml `[catalog] uri`); the files stay in the folder either way.
//
// A lake is self-contained and relocatable: the catalog records the root it
// was created at (`lake.root`), table locations are named under that recorded
// root, and the lake's FileIO (io/rooted.ts) maps them onto the folder the
// lake was opened at, refusing any write or delete outside it. A copy made
// with `cp -a` is thus an independent lake. Lakes made before the root was
// recorded get it at their first writable open: the root their tables'
// locations agree on (so an old lake copied before this still maps onto the
// copy), else the opened folder.
//
// Opening never creates a catalog over the table folders of a lake whose
// catalog was lost (`LostCatalogError`: recover it instead), and a read-only
// open (or `readOnly: 'auto'` on a folder this process cannot write) writes
// nothing: no schema, no root, no lease. A reader open (`reader`: questions)
// writes nothing at open either and then only the leases of its pins (so gc
// elsewhere keeps what it reads); see catalog/catalog.ts.
//
// A warehouse (`warehouse`: `s3://bucket/prefix`) puts the table files in
// object storage instead (io/s3.ts): table locations are named below it, and
// the lake's FileIO writes and deletes only there. It is chosen when a lake
// is made and recorded in the catalog (`lake.warehouse`), so every later open
// — any machine sharing a PostgreSQL catalog, or a SQLite one — finds it; a
// different one given later is refused, as is one given to a lake that
// already holds tables (they would be split across two places). What must be
// local stays in the lake folder: the SQLite catalog when there is one, the
// commit lock, crash traces. Maintenance that walks folders (orphan removal,
// relocation, catalog recovery) refuses such a lake (`refuseObjectStorage`).
import { accessSync, constants as fsc, existsSync, mkdirSync } from 'node:fs';
import * as nodePath from 'node:path';
import { LocalFileIO, defaultResolver, prefixResolver, relativeResolver, type FileIO } from './io/fileio.ts';
import { fileLocation, isRelativePath, relativeBaseOf } from './io/paths.ts';
import { LakeFileIO } from './io/rooted.ts';
import { readLakeSettings, type LakeSettings } from './settings.ts';
import { CATALOG_FILE, identToString, type Catalog, type KeyChange, type TableIdent } from './catalog/catalog.ts';
import { isServerCatalog, openCatalog } from './catalog/open.ts';
import { findTableFolders, nestedLakeOf } from './catalog/folders.ts';
import { PROP_FORMER_ROOTS, PROP_LAKE_ROOT, PROP_WAREHOUSE } from './catalog/schema.ts';
import { isS3Path, normS3Path } from './io/s3.ts';
import { isMissing } from './maintenance/reachable.ts';
import type { PartitionField, Schema, SortOrder, TableMetadata } from './spec/types.ts';
import { newTableMetadata, serializeTableMetadata } from './spec/metadata.ts';
import { Table } from './table/table.ts';
import { commitTables, readMetadata, type CommitHooks, type CommitTarget, type Committed } from './table/commit.ts';

/** Lease lifetime; renewed at a third of it while the holder lives. */
const LEASE_TTL_MS = 60_000;

export interface CreateTableOptions {
  partitionBy?: Omit<PartitionField, 'fieldId'>[];
  sortOrder?: SortOrder;
  properties?: Record<string, string>;
}

export interface LoadOptions {
  /** Read the table as the lake held it at this generation (read-only). */
  generation?: bigint;
  /** Read the table as the lake held it at this time, ms since epoch (read-only). */
  asOfMs?: number;
}

export { PROP_FORMER_ROOTS, PROP_LAKE_ROOT };

/**
 * Properties every table created in a lake gets unless its own say otherwise.
 * Iceberg's metadata-log keeps 100 previous metadata files by default, and gc
 * keeps what that log lists: a table committed to at every run would hold 100
 * metadata files after any gc. Ten is what the event tables always had.
 */
export const LAKE_TABLE_DEFAULTS: Readonly<Record<string, string>> = {
  'write.metadata.previous-versions-max': '10',
};

export interface LakeOpenOptions {
  /** Create the folder and catalog when absent (default true; never over a lost catalog's table folders). */
  create?: boolean;
  /**
   * true: open read-only (nothing written, no leases). 'auto': read-only when
   * this process cannot write the lake folder or its catalog, else read-write.
   */
  readOnly?: boolean | 'auto';
  /**
   * Open to read, taking leases only (unless readOnly resolves true): no DDL,
   * no transaction, no root recorded at open; other writes are refused. An
   * older catalog is opened as a writer would open it (brought up to date once).
   */
  reader?: boolean;
  /** Create a catalog even though table folders exist (catalog recovery only). */
  overTableFolders?: boolean;
  /** The catalog's name (`catalog_name`); default: the lake's setting (mimir.toml), else 'mimir'. PyIceberg's default is 'default'. */
  catalogName?: string;
  /** The SQLite catalog file, when it is not `<root>/catalog.db` (a PyIceberg or Java catalog). */
  catalogFile?: string;
  /**
   * Where the catalog is: a `postgresql://` URI or a SQLite file; wins over
   * catalogFile and the lake's mimir.toml (`[catalog] uri`). The table files
   * stay under `root` either way.
   */
  catalog?: string;
  /**
   * Refuse to read any file outside the opened root (lexically or through a
   * symlink), whatever the metadata names; relative locations resolve against
   * the root only. `mimir serve` opens its lake so. Default: a path outside the
   * root is read where it says, as any Iceberg reader does.
   */
  confineReads?: boolean;
  /**
   * Put the tables in object storage below this prefix (`s3://bucket/prefix`)
   * instead of the lake folder: taken when the lake is made and recorded in its
   * catalog; afterwards it must be absent or the recorded one.
   */
  warehouse?: string;
}

/** Where the lake's recorded root came from. */
export type RootSource = 'recorded' | 'inferred' | 'opened';

/** A folder holds table folders but no catalog: creating one would orphan every table. */
export class LostCatalogError extends Error {
  constructor(
    readonly root: string,
    readonly tables: string[],
  ) {
    super(
      `${root} holds ${tables.length === 1 ? 'a table folder' : `${tables.length} table folders`} (${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}) ` +
        `but no ${CATALOG_FILE}: the lake's catalog was lost, and a new one would take every table's files for orphans. ` +
        `Run 'mimir lake recover --lake ${root}' to re-register the tables from their newest metadata — nothing created`,
    );
    this.name = 'LostCatalogError';
  }
}

/** An operation that walks the lake's folders, asked of a lake whose tables live in object storage. */
export class ObjectStorageUnsupportedError extends Error {
  constructor(what: string, warehouse: string) {
    super(`${what} is not supported yet on a lake whose tables live in object storage (${warehouse}): it walks the lake's folders on the local disk — nothing done`);
    this.name = 'ObjectStorageUnsupportedError';
  }
}

/** A warehouse must be an s3:// prefix with a bucket (checked before anything is opened or made). */
function checkWarehouse(given: string): void {
  if (!isS3Path(given) || !/^s3[an]?:\/\/[^/]+/i.test(given)) {
    throw new Error(`--warehouse: expected an object-storage prefix s3://bucket/prefix, found '${given}' (tables in the lake folder need no --warehouse) — nothing opened`);
  }
}

/**
 * The warehouse the lake uses: the one its catalog records, else the one
 * given (recorded now when the catalog may be written); refused when they
 * differ, when the given one is no s3:// prefix, or when it comes to a lake
 * that already holds tables.
 */
function chooseWarehouse(catalog: Catalog, given: string | undefined, mayRecord: boolean): string | undefined {
  const recorded = catalog.property(PROP_WAREHOUSE);
  if (given === undefined) return recorded;
  const wanted = normS3Path(given);
  if (recorded !== undefined) {
    if (normS3Path(recorded) !== wanted) {
      throw new Error(`the lake's catalog ${catalog.path} records its tables in ${recorded}, but the warehouse given is ${wanted}: a lake keeps the warehouse it was made with — nothing opened`);
    }
    return recorded;
  }
  const tables = catalog.listAllTables();
  if (tables.length > 0) {
    throw new Error(
      `the lake of catalog ${catalog.path} already holds ${tables.length} table(s) (${tables.slice(0, 3).map(identToString).join(', ')}) in its folder: ` +
        `a warehouse (${wanted}) is chosen when a lake is made, not added later — nothing changed`,
    );
  }
  if (mayRecord) catalog.setProperty(PROP_WAREHOUSE, wanted);
  return wanted;
}

/** A lake generation whose metadata gc or history expiry removed: it can no longer be read from the tables. */
export class ExpiredGenerationError extends Error {}

function canWrite(path: string): boolean {
  try {
    accessSync(path, fsc.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The root every table's catalog pointer agrees on (`<root>/<ns…>/<table>/metadata/<file>`),
 * or undefined when there are no tables or they disagree.
 */
export function inferRoot(catalog: Catalog): string | undefined {
  const found = new Set<string>();
  for (const ident of catalog.listAllTables()) {
    const p = catalog.loadTable(ident);
    if (!p) continue;
    const local = defaultResolver(p.metadataLocation);
    if (!nodePath.isAbsolute(local)) return undefined;
    const tail = nodePath.join(...ident.namespace, ident.name, 'metadata');
    const dir = nodePath.dirname(nodePath.normalize(local));
    if (!dir.endsWith(nodePath.sep + tail)) return undefined;
    found.add(dir.slice(0, dir.length - tail.length - 1) || nodePath.sep);
  }
  return found.size === 1 ? [...found][0] : undefined;
}

export class Lake {
  /** The lake's files, as its metadata names them, mapped onto `root` and confined to it. */
  readonly io: LakeFileIO;
  readonly hooks: CommitHooks;
  /** The root the lake was created at (new table locations are named under it); `root` when not moved. */
  readonly recordedRoot: string;
  /** Roots before a relocation; their paths map onto `root` too. */
  readonly formerRoots: readonly string[];
  readonly rootSource: RootSource;
  /** This process may not write the lake's catalog (or its folder). */
  readonly notWritable: boolean;
  /** `<root>/mimir.toml` as read at open (empty without the file). */
  readonly settings: LakeSettings;

  private constructor(
    /** The folder the lake was opened at: every file it writes or deletes is inside it. */
    readonly root: string,
    readonly catalog: Catalog,
    roots: { recorded: string; former: string[]; source: RootSource; notWritable: boolean },
    confineReads: boolean,
    settings: LakeSettings,
    /** Where the tables live when not in the folder: an `s3://bucket/prefix`. */
    readonly warehouse?: string,
  ) {
    this.settings = settings;
    this.notWritable = roots.notWritable;
    this.recordedRoot = roots.recorded;
    this.formerRoots = roots.former;
    this.rootSource = roots.source;
    // relative locations (a foreign catalog written with a relative warehouse)
    // resolve against the working directory, as PyIceberg does, else the lake root
    this.io = new LakeFileIO(root, [roots.recorded, ...roots.former], [process.cwd(), root], { confineReads, ...(warehouse !== undefined ? { warehouse } : {}) });
    this.hooks = { begin: (releaseBase) => this.lease(releaseBase, 'commit') };
  }

  static open(root: string, opts: LakeOpenOptions = {}): Lake {
    if (opts.warehouse !== undefined) checkWarehouse(opts.warehouse);
    const abs = nodePath.resolve(root);
    const settings = readLakeSettings(abs);
    // a path given by the caller is relative to the working directory, one in mimir.toml to the lake
    const given = opts.catalog ?? opts.catalogFile;
    const named = given ?? settings.catalogUri;
    const server = named !== undefined && isServerCatalog(named);
    const file = server ? named : named !== undefined ? nodePath.resolve(given !== undefined ? process.cwd() : abs, named) : nodePath.join(abs, CATALOG_FILE);
    // a server catalog: whether this process may write the lake is whether it may write the lake's folder
    const exists = server ? existsSync(abs) : existsSync(file);
    const notWritable = exists && (server ? !canWrite(abs) : !(canWrite(nodePath.dirname(file)) && canWrite(file)));
    const readOnly = opts.readOnly === true || (opts.readOnly === 'auto' && notWritable);
    const create = opts.create !== false && !readOnly;
    if (!server && !exists && create && !opts.overTableFolders) {
      const folders = findTableFolders(abs, 50);
      if (folders.length > 0) throw new LostCatalogError(abs, folders.map((f) => f.parts.join('/')));
    }
    if (server && create) mkdirSync(abs, { recursive: true });
    const name = opts.catalogName ?? settings.catalogName;
    const reader = opts.reader === true && !readOnly;
    const catalogOpts = { create: create && !reader, readOnly, reader, ...(name ? { name } : {}) };
    const catalog = openCatalog(file, catalogOpts);
    try {
      const warehouse = chooseWarehouse(catalog, opts.warehouse, !readOnly && !catalog.reader);
      const recorded = catalog.property(PROP_LAKE_ROOT);
      const former = (catalog.property(PROP_FORMER_ROOTS) ?? '').split('\n').filter((r) => r !== '');
      const confine = opts.confineReads === true;
      if (recorded !== undefined) return new Lake(abs, catalog, { recorded, former, source: 'recorded', notWritable }, confine, settings, warehouse);
      const inferred = inferRoot(catalog);
      const roots = { recorded: inferred ?? abs, former, source: (inferred === undefined ? 'opened' : 'inferred') as RootSource, notWritable };
      if (!readOnly && !catalog.reader) catalog.setProperty(PROP_LAKE_ROOT, roots.recorded);
      return new Lake(abs, catalog, roots, confine, settings, warehouse);
    } catch (e) {
      catalog.close();
      throw e;
    }
  }

  /** Opened read-only: nothing is written, no lease taken. */
  get readOnly(): boolean {
    return this.catalog.readOnly;
  }

  /** The lake was created (or last relocated) elsewhere and is opened here. */
  get moved(): boolean {
    return nodePath.normalize(this.recordedRoot) !== nodePath.normalize(this.root);
  }

  /** One-line notes a front end should show the user (a moved lake, a read-only open). */
  notes(): string[] {
    const out: string[] = [];
    if (this.moved) {
      out.push(
        `the lake at ${this.root} was created at ${this.recordedRoot}: its metadata names files there, which Mimir reads and writes here ` +
          `(never there); other engines still read ${this.recordedRoot} until 'mimir lake relocate' rewrites it`,
      );
    }
    if (this.readOnly && !this.notWritable && this.catalog.snapshotRead) {
      out.push(`the disk holding the lake at ${this.root} is full: its catalog is read from a copy in memory, and this reader takes no lease, so a gc running elsewhere cannot see it`);
    }
    if (this.readOnly && this.notWritable) {
      out.push(
        `the lake at ${this.root} is opened read-only${this.catalog.snapshotRead ? ' (its folder is not writable; the catalog is read from a copy in memory)' : ''}: ` +
          `this reader takes no lease, so a gc running elsewhere cannot see it`,
      );
    }
    return out;
  }

  close(): void {
    this.catalog.close();
  }

  /** Refuse `what` (an operation that walks local folders) on a lake whose tables live in object storage. */
  refuseObjectStorage(what: string): void {
    if (this.warehouse !== undefined) throw new ObjectStorageUnsupportedError(what, this.warehouse);
  }

  tableLocation(ident: TableIdent): string {
    if (this.warehouse !== undefined) return [normS3Path(this.warehouse), ...ident.namespace, ident.name].join('/');
    return fileLocation(nodePath.join(this.recordedRoot, ...ident.namespace, ident.name));
  }

  /** Run `fn` with a lease that marks a commit in flight (files it writes are protected from GC). */
  async inFlight<T>(note: string, fn: () => Promise<T>): Promise<T> {
    const end = this.lease(this.catalog.pointerGeneration(), note);
    try {
      return await fn();
    } finally {
      end();
    }
  }

  /**
   * Leases this process could not end (the disk was full), each with the
   * failure: left to expire, they are swept once their ttl passed or this
   * process is gone. A run reads the ones its commit left (log/run.ts).
   */
  readonly unendedLeases: string[] = [];

  /**
   * Take a lease, renewed while held (a long write keeps its protection);
   * returns its end, which never throws: a commit that landed must not fail
   * for its lease (and its caller must not clean up files it committed).
   */
  private lease(releaseBase: bigint, note: string): () => void {
    const lease = this.catalog.beginLease({ releaseBase, note, ttlMs: LEASE_TTL_MS });
    const timer = setInterval(() => {
      try {
        lease.renew();
      } catch {
        // an expired lease cannot be renewed; orphan removal's horizon is then the only guard
      }
    }, LEASE_TTL_MS / 3);
    timer.unref();
    return () => {
      clearInterval(timer);
      const failed = lease.end();
      if (failed) this.unendedLeases.push(failed.message);
    };
  }

  async createTable(ident: TableIdent, schema: Schema, opts: CreateTableOptions = {}): Promise<Table> {
    if (!this.catalog.namespaceExists(ident.namespace)) this.catalog.createNamespace(ident.namespace);
    const location = this.tableLocation(ident);
    await this.refuseUnknownTableFolder(ident, location);
    let last = 999;
    const spec = { specId: 0, fields: (opts.partitionBy ?? []).map((f) => ({ ...f, fieldId: ++last })) };
    const properties = { ...LAKE_TABLE_DEFAULTS, ...opts.properties };
    const metadata = newTableMetadata({ location, schema, spec, sortOrder: opts.sortOrder, properties });
    const loc = `${location}/metadata/00000-${crypto.randomUUID()}.metadata.json`;
    await this.inFlight(`create ${identToString(ident)}`, async () => {
      await this.io.writeNew(loc, serializeTableMetadata(metadata));
      try {
        this.catalog.commit([{ ident, expected: null, next: loc }], `create ${identToString(ident)}`);
      } catch (e) {
        await this.io.delete(loc);
        throw e;
      }
    });
    return new Table(this.io, loc, await readMetadata(this.io, loc), this.catalog, ident, undefined, this.hooks);
  }

  /**
   * A table folder holding metadata files the catalog never recorded belongs to
   * a table this catalog does not know (a lost or replaced catalog): creating a
   * table there would make its files orphans.
   */
  private async refuseUnknownTableFolder(ident: TableIdent, location: string): Promise<void> {
    if (this.catalog.everMetadataLocations(ident).length > 0) return; // a dropped table of this lake
    const files = (await this.io.list(`${location}/metadata`)).filter((f) => f.path.endsWith('.metadata.json'));
    if (files.length === 0) return;
    // Another writer creating this table now: it takes a lease, writes the metadata
    // file, then commits; seen in that order, its file is not a stranger's.
    if (this.catalog.loadTable(ident) !== undefined) return;
    const creating = `create ${identToString(ident)}`;
    if (this.catalog.liveLeases().some((l) => l.note === creating)) return;
    throw new Error(
      `cannot create table ${identToString(ident)}: its folder ${this.io.local(location)} already holds ${files.length} metadata file(s) ` +
        `of a table this catalog never recorded (a lost or replaced catalog?); run 'mimir lake recover --lake ${this.root}' to register it — nothing created`,
    );
  }

  /**
   * The folder of another lake (its own catalog.db or mimir.toml) inside this
   * lake's folder that holds the table's current metadata, or undefined. Such
   * a table is that lake's: its files move with that lake's catalog, not this
   * one's, so maintenance here must leave it alone (a catalog that claims it
   * was made by a recovery that did not know better).
   */
  otherLakeHolding(ident: TableIdent): string | undefined {
    const p = this.catalog.loadTable(ident);
    if (!p) return undefined;
    const local = this.io.local(p.metadataLocation);
    return nodePath.isAbsolute(local) ? nestedLakeOf(this.root, local) : undefined;
  }

  tableExists(ident: TableIdent): boolean {
    return this.catalog.loadTable(ident) !== undefined;
  }

  async loadTable(ident: TableIdent, opts: LoadOptions = {}): Promise<Table> {
    let generation = opts.generation;
    if (opts.asOfMs !== undefined) generation = this.catalog.generationAt(opts.asOfMs);
    if (generation !== undefined) {
      const loc = this.catalog.pointerAt(ident, generation);
      if (!loc) throw new Error(`table ${identToString(ident)} did not exist at lake generation ${generation}`);
      return new Table(this.io, loc, await this.readGenerationMetadata(ident, generation, loc), this.catalog, ident, `pinned to lake generation ${generation}`);
    }
    const p = this.catalog.loadTable(ident);
    if (!p) throw new Error(`table ${identToString(ident)} does not exist in ${this.catalog.path} (catalog name '${this.catalog.name}')`);
    const readOnly = this.catalog.readOnly ? `catalog ${this.catalog.path} was opened read-only` : undefined;
    return new Table(this.io, p.metadataLocation, await this.readTableMetadata(p.metadataLocation), this.catalog, ident, readOnly, this.hooks);
  }

  /** A table's metadata file; a relative location that is nowhere to be found says where it was looked for. */
  private async readTableMetadata(loc: string): Promise<TableMetadata> {
    try {
      return await readMetadata(this.io, loc);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !isRelativePath(loc)) throw e;
      throw new Error(
        `metadata location ${loc} (from ${this.catalog.path}) is relative and is neither under the working directory ${process.cwd()} ` +
          `nor under the lake root ${this.root}; run from the folder it is relative to, as PyIceberg would — nothing read`,
      );
    }
  }

  private async readGenerationMetadata(ident: TableIdent, generation: bigint, loc: string): Promise<TableMetadata> {
    try {
      return await this.readTableMetadata(loc);
    } catch (e) {
      if (isRelativePath(loc) || !(await isMissing(this.io, loc, e))) throw e;
      throw new ExpiredGenerationError(
        `table ${identToString(ident)} as of lake generation ${generation}: its metadata file ${loc} was removed by gc or history expiry ` +
          `(each table keeps its newest snapshots, mimir.history.keep-snapshots, default 32, within gc's retention period; ` +
          `older generations can no longer be read from the tables)`,
      );
    }
  }

  async dropTable(ident: TableIdent): Promise<void> {
    const p = this.catalog.loadTable(ident);
    if (!p) throw new Error(`table ${identToString(ident)} does not exist`);
    this.catalog.commit([{ ident, expected: p.metadataLocation, next: null }], `drop ${identToString(ident)}`);
  }

  /** Commit updates to several tables atomically: all land or none (with `keys` compare-and-swapped in the same transaction). */
  async commit(targets: Omit<CommitTarget, 'io'>[], note?: string, opts: { keys?: KeyChange[] } = {}): Promise<Committed> {
    return commitTables(
      this.catalog,
      targets.map((t) => ({ ...t, io: this.io })),
      { hooks: this.hooks, note, keys: opts.keys },
    );
  }
}

/**
 * A read-only table from a metadata file. `locationRoot` maps the table's
 * recorded `location` to a local folder (tables written elsewhere, `s3://`
 * copies). A relative location (`data/…`, `file://data/…`) resolves against
 * the folder the metadata file's own place shows, else the working directory.
 */
export async function openMetadataFile(path: string, opts: { locationRoot?: string } = {}): Promise<Table> {
  const local = nodePath.resolve(path);
  let io: FileIO = new LocalFileIO();
  const probe = await readMetadata(io, local);
  if (opts.locationRoot) {
    io = new LocalFileIO(prefixResolver(probe.location, nodePath.resolve(opts.locationRoot)));
  } else {
    const base = relativeBaseOf(local, probe.location);
    io = new LocalFileIO(relativeResolver(base === undefined ? [process.cwd()] : [base, process.cwd()]));
  }
  return new Table(io, local, probe, undefined, undefined, 'opened from a metadata file');
}
