// A lake: a folder holding the embedded SQLite catalog (`catalog.db`) and one
// folder per table (`<root>/<namespace>/<table>/{metadata,data}`; no table's
// location is inside another's). Tables load as of now, a lake generation or a
// time; a table pinned to the past is read-only. Every write registers a lease
// in the catalog for as long as it is in flight, so orphan removal in any
// process leaves its files alone.
import * as nodePath from 'node:path';
import { LocalFileIO, prefixResolver, relativeResolver, type FileIO } from './io/fileio.ts';
import { fileLocation, isRelativePath, relativeBaseOf } from './io/paths.ts';
import { readLakeSettings } from './settings.ts';
import { SqlCatalog, identToString, type KeyChange, type TableIdent } from './catalog/sql-catalog.ts';
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

export interface LakeOpenOptions {
  /** Create the folder and catalog when missing; default true (ignored when readOnly). */
  create?: boolean;
  /** Open the catalog without writing anything to it (reads only; writes are refused). */
  readOnly?: boolean;
  /** The catalog's name (`catalog_name`); default: the lake's setting (mimir.toml), else 'mimir'. PyIceberg's default is 'default'. */
  catalogName?: string;
  /** The SQLite catalog file, when it is not `<root>/catalog.db` (a PyIceberg or Java catalog). */
  catalogFile?: string;
}

export class Lake {
  readonly io: FileIO;
  readonly hooks: CommitHooks;

  private constructor(
    readonly root: string,
    readonly catalog: SqlCatalog,
  ) {
    // relative locations (a foreign catalog written with a relative warehouse)
    // resolve against the working directory, as PyIceberg does, else the lake root
    this.io = new LocalFileIO(relativeResolver([process.cwd(), root]));
    this.hooks = { begin: (releaseBase) => this.lease(releaseBase, 'commit') };
  }

  static open(root: string, opts: LakeOpenOptions = {}): Lake {
    const abs = nodePath.resolve(root);
    const name = opts.catalogName ?? readLakeSettings(abs).catalogName;
    const catalogOpts = { create: opts.create !== false, readOnly: opts.readOnly === true, ...(name ? { name } : {}) };
    const catalog = opts.catalogFile ? SqlCatalog.openFile(opts.catalogFile, catalogOpts) : SqlCatalog.open(abs, catalogOpts);
    return new Lake(abs, catalog);
  }

  close(): void {
    this.catalog.close();
  }

  tableLocation(ident: TableIdent): string {
    return fileLocation(nodePath.join(this.root, ...ident.namespace, ident.name));
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

  /** Take a lease, renewed while held (a long write keeps its protection); returns its end. */
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
      lease.end();
    };
  }

  async createTable(ident: TableIdent, schema: Schema, opts: CreateTableOptions = {}): Promise<Table> {
    if (!this.catalog.namespaceExists(ident.namespace)) this.catalog.createNamespace(ident.namespace);
    const location = this.tableLocation(ident);
    let last = 999;
    const spec = { specId: 0, fields: (opts.partitionBy ?? []).map((f) => ({ ...f, fieldId: ++last })) };
    const metadata = newTableMetadata({ location, schema, spec, sortOrder: opts.sortOrder, properties: opts.properties });
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

  tableExists(ident: TableIdent): boolean {
    return this.catalog.loadTable(ident) !== undefined;
  }

  async loadTable(ident: TableIdent, opts: LoadOptions = {}): Promise<Table> {
    let generation = opts.generation;
    if (opts.asOfMs !== undefined) generation = this.catalog.generationAt(opts.asOfMs);
    if (generation !== undefined) {
      const loc = this.catalog.pointersAt(generation).get(identToString(ident));
      if (!loc) throw new Error(`table ${identToString(ident)} did not exist at lake generation ${generation}`);
      return new Table(this.io, loc, await this.readTableMetadata(loc), this.catalog, ident, `pinned to lake generation ${generation}`);
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
