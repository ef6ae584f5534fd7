// The embedded catalog: one SQLite file (`catalog.db` at the lake root) that
// maps each table to its current metadata file, in the standard JDBC /
// SQL-catalog layout (see schema.ts), plus Mimir's generation counter, its
// generation log and the leases of commits in flight.
//
// Invariant: a commit is one `BEGIN IMMEDIATE` transaction that compare-and-
// swaps every table it touches, bumps the generation exactly once and logs one
// row per table; if any swap fails nothing of it is kept. So a generation names
// one consistent state of the whole lake, and the log lets anyone rebuild the
// pointers as of any older generation.
//
// Crash story: SQLite (WAL mode) makes each commit atomic and durable; a
// process killed mid-commit leaves the previous generation intact. Metadata
// files written for a commit that never landed are orphans for maintenance to
// remove — which is what leases guard against while the writer is still alive.
//
// Concurrency: several processes may commit at once; the IMMEDIATE transaction
// serialises them (busy_timeout 10 s) and a stale expected location is a
// CommitConflictError the writer answers by reloading and retrying.
//
// Commit keys: a commit may also compare-and-swap keys of `mimir_commit_keys`
// in the same transaction (a writer's "the state I derived this from is still
// current"). A stale key is a KeyConflictError, which is not retried here: the
// writer must derive its change again. `readKeys` returns keys together with
// the generation they were read at (one read transaction).
//
// Foreign catalogs (a file written by PyIceberg or Java, without `mimir_`
// tables) open read-only by default and are never altered then; their tables
// load, and as they have no log, "as of a generation" means "as now". Opened
// writable, Mimir's tables are added and the tables already there are logged
// at generation 0 (the state Mimir found).
//
// Foreign commits: another engine may move a table's pointer with the
// standard `UPDATE … WHERE metadata_location = ?` (or create or drop a
// table). The log then disagrees with `iceberg_tables`; the next Mimir commit,
// or `recordForeignCommits()`, first records one generation marked foreign
// holding every such move (at the time it was observed), so time travel by
// generation reaches those states too.
//
// A catalog file that exists but is empty or not a SQLite database is never
// written over, by any open (DamagedCatalogError names `mimir lake recover`).
//
// Read-only use: a read-only open writes nothing (no DDL, no lease, no sweep).
// A reader open (`reader`: the questions) writes nothing at open either — no
// pragma that writes, no DDL, no transaction, so no checkpoint owed at close
// — and afterwards only leases (a pin's `beginLease`/`end`, which gc must
// see); every other write is refused. It needs the catalog in Mimir's
// current layout in WAL mode; a file that is not (an older layout, a foreign
// catalog, a rollback journal) is opened as a writer would open it, which
// brings it up to date once.
// SQLite cannot open a WAL-mode file read-only when its folder is not
// writable and the `-shm` file is absent; then the file is read whole into
// memory (a snapshot of the last checkpoint) — refused if a non-empty `-wal`
// holds commits the snapshot would miss.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import * as nodePath from 'node:path';
import { CatalogWriteError, sqliteSpaceError } from '../disk-full.ts';
import { catalogWritePoint } from '../testing/crash.ts';
import {
  FOREIGN_COLUMN,
  ICEBERG_TYPE_TABLE,
  MIMIR_DDL,
  MIMIR_LAYOUT_VERSION,
  NAMESPACE_COLUMNS,
  STANDARD_DDL,
  T,
  TABLE_COLUMNS,
} from './schema.ts';
import {
  AlreadyExistsError,
  type Catalog,
  CommitConflictError,
  type ForeignMove,
  type GenerationEntry,
  KeyConflictError,
  type KeyChange,
  type Lease,
  type LeaseInfo,
  type LoadedPointer,
  NamespaceNotEmptyError,
  NoSuchNamespaceError,
  NoSuchTableError,
  type TableChange,
  type TableIdent,
  CATALOG_FILE,
  DEFAULT_LEASE_TTL_MS,
  checkIdent,
  checkNamespace,
  identToString,
  nsFromString,
  nsToString,
  pidAlive,
} from './catalog.ts';

// the shared names, for the callers inside lake/catalog and the tests that import them from here
export {
  AlreadyExistsError,
  CATALOG_FILE,
  CommitConflictError,
  DEFAULT_LEASE_TTL_MS,
  KeyConflictError,
  NamespaceNotEmptyError,
  NoSuchNamespaceError,
  NoSuchTableError,
  identToString,
  parseIdent,
} from './catalog.ts';
export type { Catalog, ForeignMove, GenerationEntry, KeyChange, Lease, LeaseInfo, LoadedPointer, TableChange, TableIdent } from './catalog.ts';

type Db = Database.Database;

/** Catalog name used when none is given. */
export const DEFAULT_CATALOG_NAME = 'mimir';
/** How long a writer waits for another process's commit to finish. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * The catalog file exists but holds no catalog: it is empty, or not a SQLite
 * database (truncated, overwritten, a failed copy). It is never written over:
 * a new catalog there would take every table's files for orphans.
 */
export class DamagedCatalogError extends Error {
  constructor(
    readonly path: string,
    found: string,
  ) {
    super(
      `${path} is not a catalog: expected a SQLite database, found ${found}. Its tables' metadata files are what recovery needs: ` +
        `run 'mimir lake recover --lake ${nodePath.dirname(path)}' to move it aside and re-register every table from its newest metadata — nothing written`,
    );
    this.name = 'DamagedCatalogError';
  }
}

/**
 * How young an empty catalog file may be a creator's in flight: a process
 * creating a lake writes the header a few statements after SQLite made the
 * file, so an empty file this young is waited on (a machine under heavy load
 * may stall between them); an older one is refused at once.
 */
const EMPTY_FILE_GRACE_MS = 5000;

/** Refuse an existing catalog file that is empty and stays so (another process creating it fills it at once). */
function refuseEmptyFile(path: string): void {
  const start = Date.now();
  for (;;) {
    let st: { size: number; mtimeMs: number };
    try {
      st = statSync(path);
    } catch {
      return; // gone: the open below says so
    }
    if (st.size > 0) return;
    if (Date.now() >= Math.min(st.mtimeMs, start) + EMPTY_FILE_GRACE_MS) throw new DamagedCatalogError(path, 'an empty file (0 bytes)');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

export interface OpenOptions {
  /** Catalog name (the `catalog_name` column); default 'mimir'. */
  name?: string;
  /** Create the folder, file and tables when missing; default true (ignored when readOnly). */
  create?: boolean;
  /** Open without writing anything, not even Mimir's own tables; default false. */
  readOnly?: boolean;
  /**
   * Open to read and take leases only (ignored with readOnly): nothing is
   * written at open; commits, properties and namespaces are refused. A catalog
   * not yet in the current layout (or not in WAL mode) gets the writable open.
   */
  reader?: boolean;
  /** (With readOnly.) The disk is full: SQLite may fail to make the shared-memory file, then the file is read as a snapshot. */
  fullDisk?: boolean;
}

// ---------------------------------------------------------------------------

const MAX_GENERATION = 0x7fffffffffffffffn;

function num(v: unknown): number {
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

function big(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

interface TableRow {
  table_namespace: string;
  table_name: string;
  metadata_location: string | null;
  previous_metadata_location: string | null;
}

interface LogRow extends TableRow {
  generation: bigint;
}

export class SqlCatalog implements Catalog {
  readonly kind = 'sqlite';
  readonly name: string;
  /** The folder holding the catalog file (the lake root for a Mimir lake). */
  readonly root: string;
  /** The SQLite file. */
  readonly path: string;
  readonly readOnly: boolean;
  private readonly db: Db;
  /** Whether `iceberg_tables` has the V1 `iceberg_type` column. */
  private readonly hasType: boolean;
  /** Whether the `mimir_` tables exist (false for a foreign catalog opened read-only). */
  private readonly hasMimir: boolean;
  /** pointerGeneration's statement, prepared on first use (the db lives as long as this catalog). */
  private generationStmt: Database.Statement | undefined;
  /** locationAt's two statements, prepared once. */
  private atOrBeforeStmt: Database.Statement | undefined;
  private afterStmt: Database.Statement | undefined;
  /** Whether `mimir_commit_keys` exists (absent in a read-only catalog of the first layout). */
  private readonly hasKeys: boolean;
  /** Whether `mimir_generations` has the foreign-commit column (older files opened read-only may lack it). */
  private readonly hasForeignColumn: boolean;
  /** Whether `mimir_properties` exists (false for catalogs made before it, opened read-only). */
  private readonly hasProps: boolean;
  /** Read-only and read from an in-memory copy of the file (its folder is not writable). */
  readonly snapshotRead: boolean;
  /** Opened as a reader: leases are written, nothing else (OpenOptions.reader). */
  readonly reader: boolean;
  private readonly host = hostname();

  private constructor(
    db: Db,
    path: string,
    name: string,
    readOnly: boolean,
    hasType: boolean,
    hasMimir: boolean,
    hasKeys: boolean,
    hasForeignColumn: boolean,
    hasProps: boolean,
    snapshotRead: boolean,
    reader = false,
  ) {
    this.db = db;
    this.path = path;
    this.root = nodePath.dirname(path);
    this.name = name;
    this.readOnly = readOnly;
    this.hasType = hasType;
    this.hasMimir = hasMimir;
    this.hasKeys = hasKeys;
    this.hasForeignColumn = hasForeignColumn;
    this.hasProps = hasProps;
    this.snapshotRead = snapshotRead;
    this.reader = reader;
  }

  /** Open (by default create) the catalog of the lake at `lakeRoot` (`<lakeRoot>/catalog.db`). */
  static open(lakeRoot: string, opts: OpenOptions = {}): SqlCatalog {
    const root = nodePath.resolve(lakeRoot);
    if (opts.create !== false && !opts.readOnly) mkdirSync(root, { recursive: true });
    return SqlCatalog.openFile(nodePath.join(root, CATALOG_FILE), opts);
  }

  /** Open a catalog file at any path (a Mimir one, or a standard SQL catalog written by others). */
  static openFile(dbPath: string, opts: OpenOptions = {}): SqlCatalog {
    const path = nodePath.resolve(dbPath);
    const name = opts.name ?? DEFAULT_CATALOG_NAME;
    const readOnly = opts.readOnly === true;
    const create = opts.create !== false && !readOnly;
    if (!existsSync(path) && !create) {
      throw new Error(`no catalog at ${path}: the file does not exist (opened with create=false or read-only)`);
    }
    if (existsSync(path)) refuseEmptyFile(path);
    if (opts.reader === true && !readOnly && existsSync(path)) {
      const r = SqlCatalog.openReader(path, name);
      if (r) return r;
    }
    let db: Db;
    let snapshotRead = false;
    try {
      if (readOnly) ({ db, snapshotRead } = openReadOnly(path, opts.fullDisk === true));
      else db = new Database(path, { fileMustExist: !create, timeout: BUSY_TIMEOUT_MS });
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SQLITE_NOTADB') throw new DamagedCatalogError(path, (e as Error).message);
      throw new Error(`cannot open catalog ${path}${readOnly ? ' read-only' : ''}: ${(e as Error).message}`);
    }
    try {
      db.defaultSafeIntegers(true);
      let tables: Set<string>;
      try {
        tables = listSqliteTables(db);
      } catch (e) {
        if (!readOnly && isReadOnlyError(e)) throw readOnlyCatalog(path, e);
        if (sqliteSpaceError(e, path)) {
          // a full disk: SQLite cannot make the WAL's shared-memory file. A reader reads a snapshot of the file instead
          db.close();
          if (opts.reader === true && !readOnly) return SqlCatalog.openFile(path, { ...opts, readOnly: true, reader: false, fullDisk: true });
          const code = String((e as { code?: unknown }).code);
          throw new CatalogWriteError('open the catalog: SQLite makes its shared-memory and write-ahead files', `${path}-shm`, code, (e as Error).message, ' — nothing read or written', true);
        }
        throw new DamagedCatalogError(path, (e as Error).message);
      }
      if (!tables.has(T.tables)) {
        if (!create || tables.size > 0) {
          const found = tables.size > 0 ? `tables ${[...tables].sort().join(', ')}` : 'no tables';
          throw new Error(`${path} is not a catalog: expected table ${T.tables}, found ${found}`);
        }
      }
      if (!readOnly) {
        try {
          // WAL lets readers proceed while one process commits; the mode is persistent.
          db.pragma('journal_mode = WAL');
          db.pragma('synchronous = NORMAL');
          db.transaction(() => {
            for (const ddl of STANDARD_DDL) db.exec(ddl);
            for (const ddl of MIMIR_DDL) db.exec(ddl);
            if (!columnsOf(db, T.generations).has(FOREIGN_COLUMN)) {
              db.exec(`ALTER TABLE ${T.generations} ADD COLUMN ${FOREIGN_COLUMN} INTEGER NOT NULL DEFAULT 0`);
            }
            const added = db
              .prepare(`INSERT OR IGNORE INTO ${T.catalog} (catalog_name, generation, last_time_ms, layout_version) VALUES (?, 0, 0, ?)`)
              .run(name, MIMIR_LAYOUT_VERSION);
            if (added.changes === 1) adoptTables(db, name);
          }).immediate();
        } catch (e) {
          if (isReadOnlyError(e)) throw readOnlyCatalog(path, e);
          throw e;
        }
        tables = listSqliteTables(db);
      }
      const tableCols = columnsOf(db, T.tables);
      for (const c of TABLE_COLUMNS) {
        if (c !== 'iceberg_type' && !tableCols.has(c)) {
          throw new Error(`${path} is not a catalog: ${T.tables} lacks column ${c} (found ${[...tableCols].join(', ')})`);
        }
      }
      if (tables.has(T.namespaceProps)) {
        const nsCols = columnsOf(db, T.namespaceProps);
        for (const c of NAMESPACE_COLUMNS) {
          if (!nsCols.has(c)) {
            throw new Error(`${path} is not a catalog: ${T.namespaceProps} lacks column ${c}`);
          }
        }
      }
      const hasMimir = tables.has(T.catalog) && tables.has(T.generations) && tables.has(T.log) && tables.has(T.leases);
      const hasForeign = hasMimir && columnsOf(db, T.generations).has(FOREIGN_COLUMN);
      return new SqlCatalog(db, path, name, readOnly, tableCols.has('iceberg_type'), hasMimir, tables.has(T.keys), hasForeign, tables.has(T.properties), snapshotRead);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /**
   * The reader open: a read-write connection (leases need it) on which
   * nothing is written at open. Undefined when the file is not a catalog in
   * the current layout and WAL mode (the caller then opens it as a writer,
   * which brings it there) or cannot be opened for writing.
   */
  private static openReader(path: string, name: string): SqlCatalog | undefined {
    let db: Db | undefined;
    try {
      db = new Database(path, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
      db.defaultSafeIntegers(true);
      // per connection, not stored: a lease's commit then needs no fsync (as a writer's)
      db.pragma('synchronous = NORMAL');
      const wal = String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
      const tables = listSqliteTables(db);
      const layout = [T.tables, T.namespaceProps, T.catalog, T.generations, T.log, T.leases, T.keys, T.properties].every((t) => tables.has(t));
      const tableCols = layout ? columnsOf(db, T.tables) : new Set<string>();
      const current =
        wal &&
        layout &&
        TABLE_COLUMNS.every((c) => c === 'iceberg_type' || tableCols.has(c)) &&
        columnsOf(db, T.generations).has(FOREIGN_COLUMN) &&
        db.prepare(`SELECT 1 FROM ${T.catalog} WHERE catalog_name = ?`).get(name) !== undefined;
      if (!current) {
        db.close();
        return undefined;
      }
      return new SqlCatalog(db, path, name, false, tableCols.has('iceberg_type'), true, true, true, true, false, true);
    } catch {
      db?.close();
      return undefined;
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Every catalog name the file holds tables or namespaces for (a file may hold several catalogs), sorted. */
  catalogNames(): string[] {
    const rows = this.db
      .prepare(`SELECT catalog_name AS n FROM ${T.tables} UNION SELECT catalog_name AS n FROM ${T.namespaceProps} ORDER BY n`)
      .all() as { n: string }[];
    return rows.map((r) => r.n);
  }

  // -------------------------------------------------------------------------
  // Namespaces

  createNamespace(ns: string[], props: Record<string, string> = {}): void {
    this.requireWritable('createNamespace');
    checkNamespace(ns, `createNamespace in ${this.path}`);
    const key = nsToString(ns);
    this.db
      .transaction(() => {
        if (this.namespaceExists(ns)) throw new AlreadyExistsError(`namespace '${key}'`, this.path);
        const ins = this.db.prepare(
          `INSERT INTO ${T.namespaceProps} (catalog_name, namespace, property_key, property_value) VALUES (?, ?, ?, ?)`,
        );
        ins.run(this.name, key, 'exists', 'true');
        for (const [k, v] of Object.entries(props)) {
          if (k !== 'exists') ins.run(this.name, key, k, v);
        }
      })
      .immediate();
  }

  /** Every namespace that has properties or tables, sorted. */
  listNamespaces(): string[][] {
    const rows = this.db
      .prepare(
        `SELECT table_namespace AS ns FROM ${T.tables} WHERE catalog_name = ?
         UNION SELECT namespace AS ns FROM ${T.namespaceProps} WHERE catalog_name = ?
         ORDER BY ns`,
      )
      .all(this.name, this.name) as { ns: string }[];
    return rows.map((r) => nsFromString(r.ns));
  }

  namespaceExists(ns: string[]): boolean {
    const key = nsToString(ns);
    const row = this.db
      .prepare(
        `SELECT 1 FROM ${T.namespaceProps} WHERE catalog_name = ? AND namespace = ?
         UNION ALL SELECT 1 FROM ${T.tables} WHERE catalog_name = ? AND table_namespace = ? LIMIT 1`,
      )
      .get(this.name, key, this.name, key);
    return row !== undefined;
  }

  /** The namespace's properties (including `exists`); throws NoSuchNamespaceError. */
  namespaceProperties(ns: string[]): Record<string, string> {
    if (!this.namespaceExists(ns)) throw new NoSuchNamespaceError(ns, this.path);
    const rows = this.db
      .prepare(
        `SELECT property_key AS k, property_value AS v FROM ${T.namespaceProps}
         WHERE catalog_name = ? AND namespace = ? ORDER BY property_key`,
      )
      .all(this.name, nsToString(ns)) as { k: string; v: string | null }[];
    const out: Record<string, string> = {};
    for (const r of rows) out[r.k] = r.v ?? '';
    return out;
  }

  /** Drop an empty namespace; refuses (NamespaceNotEmptyError) when it holds tables or child namespaces. */
  dropNamespace(ns: string[]): void {
    this.requireWritable('dropNamespace');
    const key = nsToString(ns);
    this.db
      .transaction(() => {
        if (!this.namespaceExists(ns)) throw new NoSuchNamespaceError(ns, this.path);
        const tables = this.listTables(ns).length;
        const children = this.listNamespaces().filter(
          (n) => n.length > ns.length && nsToString(n.slice(0, ns.length)) === key,
        ).length;
        if (tables > 0 || children > 0) throw new NamespaceNotEmptyError(ns, tables, children, this.path);
        this.db.prepare(`DELETE FROM ${T.namespaceProps} WHERE catalog_name = ? AND namespace = ?`).run(this.name, key);
      })
      .immediate();
  }

  // -------------------------------------------------------------------------
  // Tables

  listTables(ns: string[]): TableIdent[] {
    const rows = this.db
      .prepare(
        `SELECT table_namespace, table_name FROM ${T.tables}
         WHERE catalog_name = ? AND table_namespace = ?${this.typeFilter()} ORDER BY table_name`,
      )
      .all(this.name, nsToString(ns)) as TableRow[];
    return rows.map(rowIdent);
  }

  listAllTables(): TableIdent[] {
    const rows = this.db
      .prepare(
        `SELECT table_namespace, table_name FROM ${T.tables}
         WHERE catalog_name = ?${this.typeFilter()} ORDER BY table_namespace, table_name`,
      )
      .all(this.name) as TableRow[];
    return rows.map(rowIdent);
  }

  /** The table's current pointer, or undefined when there is no such table. */
  loadTable(ident: TableIdent): LoadedPointer | undefined {
    const row = this.currentRow(ident);
    if (row === undefined || row.metadata_location === null) return undefined;
    return { metadataLocation: row.metadata_location, previousMetadataLocation: row.previous_metadata_location };
  }

  /** Like loadTable, but throws NoSuchTableError. */
  requireTable(ident: TableIdent): LoadedPointer {
    const t = this.loadTable(ident);
    if (t === undefined) throw new NoSuchTableError(ident, this.path);
    return t;
  }

  /**
   * Apply every change or none: one IMMEDIATE transaction compare-and-swaps each
   * table, bumps the generation once and logs one row per table. Returns the
   * new generation. Throws CommitConflictError (stale expected location, or the
   * table vanished), AlreadyExistsError (create of an existing table) or
   * NoSuchNamespaceError (create in a missing namespace); then nothing changed.
   * `keys` are compare-and-swapped in the same transaction, before the tables:
   * a stale one throws KeyConflictError and nothing changes.
   */
  commit(changes: TableChange[], note?: string, keys: KeyChange[] = []): bigint {
    this.requireWritable('commit');
    if (changes.length === 0) throw new Error(`commit to ${this.path}: expected at least one table change, found none`);
    const seen = new Set<string>();
    for (const c of changes) {
      const key = identToString(c.ident);
      if (seen.has(key)) throw new Error(`commit to ${this.path}: table ${key} appears twice in one commit`);
      seen.add(key);
      checkIdent(c.ident, `commit to ${this.path}`);
      if (c.expected === null && c.next === null) {
        throw new Error(`commit to ${this.path}: change of ${key} has neither expected nor next location`);
      }
    }
    if (keys.length > 0) this.requireKeys('commit');
    const seenKeys = new Set<string>();
    for (const k of keys) {
      if (seenKeys.has(k.key)) throw new Error(`commit to ${this.path}: key ${k.key} appears twice in one commit`);
      seenKeys.add(k.key);
    }
    const run = this.db.transaction((): bigint => {
      this.recordForeignIn();
      for (const k of keys) this.applyKey(k);
      for (const c of changes) this.applyChange(c);
      const bumped = this.db
        .prepare(
          `UPDATE ${T.catalog} SET generation = generation + 1, last_time_ms = max(last_time_ms, ?)
           WHERE catalog_name = ? RETURNING generation, last_time_ms`,
        )
        .get(Date.now(), this.name) as { generation: bigint; last_time_ms: bigint } | undefined;
      if (bumped === undefined) throw new Error(`commit to ${this.path}: no ${T.catalog} row for catalog '${this.name}'`);
      const gen = bumped.generation;
      this.db
        .prepare(`INSERT INTO ${T.generations} (catalog_name, generation, time_ms, note, pid, host) VALUES (?, ?, ?, ?, ?, ?)`)
        .run(this.name, gen, bumped.last_time_ms, note ?? null, process.pid, this.host);
      const log = this.db.prepare(
        `INSERT INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location)
         VALUES (?, ?, ?, ?, ?, ?)`,
      );
      for (const c of changes) {
        if (c.next !== c.expected) log.run(this.name, gen, nsToString(c.ident.namespace), c.ident.name, c.next, c.expected);
      }
      const setKey = this.db.prepare(
        `INSERT INTO ${T.keys} (catalog_name, key, value, generation) VALUES (?, ?, ?, ?)
         ON CONFLICT (catalog_name, key) DO UPDATE SET value = excluded.value, generation = excluded.generation`,
      );
      const delKey = this.db.prepare(`DELETE FROM ${T.keys} WHERE catalog_name = ? AND key = ?`);
      for (const k of keys) {
        if (k.next === undefined) continue;
        if (k.next === null) delKey.run(this.name, k.key);
        else setKey.run(this.name, k.key, k.next, gen);
      }
      return gen;
    });
    return this.write('commit', () => run.immediate(), ' — nothing of this commit was applied');
  }

  /**
   * A write to the catalog file: SQLite's failure (SQLITE_FULL on a full disk,
   * SQLITE_BUSY, …) becomes a CatalogWriteError naming the file and `op`,
   * with `outcome` (what was not done) appended.
   */
  private write<T>(op: string, fn: () => T, outcome = ''): T {
    try {
      catalogWritePoint();
      return fn();
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE_')) throw new CatalogWriteError(op, this.path, code, (e as Error).message, outcome);
      throw e;
    }
  }

  /**
   * The generation after `after` whose note is `note`, if one landed (a run's
   * note names its run id, so it is the run's own generation). The answer to
   * "did this commit land?" when its caller failed after the commit point.
   */
  generationNoted(note: string, after: bigint): bigint | undefined {
    if (!this.hasMimir) return undefined;
    const row = this.db
      .prepare(`SELECT generation FROM ${T.generations} WHERE catalog_name = ? AND generation > ? AND note = ? ORDER BY generation LIMIT 1`)
      .get(this.name, after, note) as { generation: bigint } | undefined;
    return row === undefined ? undefined : big(row.generation);
  }

  private applyKey(k: KeyChange): void {
    const actual = this.keyValue(k.key);
    if (actual !== k.expected) throw new KeyConflictError(k.key, k.expected, actual, this.path);
  }

  private keyValue(key: string): string | null {
    if (!this.hasKeys) return null;
    const row = this.db.prepare(`SELECT value FROM ${T.keys} WHERE catalog_name = ? AND key = ?`).get(this.name, key) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  /**
   * The values of `keys` (absent ones are missing from the map) and the
   * generation, read in one transaction: the keys as they were at that
   * generation.
   */
  readKeys(keys: readonly string[]): { generation: bigint; values: Map<string, string> } {
    return this.db.transaction(() => {
      const values = new Map<string, string>();
      for (const k of keys) {
        const v = this.keyValue(k);
        if (v !== null) values.set(k, v);
      }
      return { generation: this.pointerGeneration(), values };
    })();
  }

  private applyChange(c: TableChange): void {
    const ns = nsToString(c.ident.namespace);
    if (c.expected === null) {
      if (!this.namespaceExists(c.ident.namespace)) throw new NoSuchNamespaceError(c.ident.namespace, this.path);
      if (this.currentRow(c.ident, true) !== undefined) {
        throw new AlreadyExistsError(`table ${identToString(c.ident)}`, this.path);
      }
      if (this.hasType) {
        this.db
          .prepare(
            `INSERT INTO ${T.tables} (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
             VALUES (?, ?, ?, ?, NULL, ?)`,
          )
          .run(this.name, ns, c.ident.name, c.next, ICEBERG_TYPE_TABLE);
      } else {
        this.db
          .prepare(
            `INSERT INTO ${T.tables} (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location)
             VALUES (?, ?, ?, ?, NULL)`,
          )
          .run(this.name, ns, c.ident.name, c.next);
      }
      return;
    }
    const where = `catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?${this.typeFilter()}`;
    if (c.next === c.expected) {
      // an assertion: the table must still be at `expected`; nothing changes
      const row = this.currentRow(c.ident);
      if (row?.metadata_location !== c.expected) throw new CommitConflictError(c.ident, c.expected, row?.metadata_location ?? null, this.path);
      return;
    }
    const result =
      c.next === null
        ? this.db.prepare(`DELETE FROM ${T.tables} WHERE ${where}`).run(this.name, ns, c.ident.name, c.expected)
        : this.db
            .prepare(`UPDATE ${T.tables} SET metadata_location = ?, previous_metadata_location = ? WHERE ${where}`)
            .run(c.next, c.expected, this.name, ns, c.ident.name, c.expected);
    if (result.changes !== 1) {
      const actual = this.currentRow(c.ident)?.metadata_location ?? null;
      throw new CommitConflictError(c.ident, c.expected, actual, this.path);
    }
  }

  // -------------------------------------------------------------------------
  // Generations

  /** The current generation (0 for a new catalog, and for a foreign one without Mimir's tables). */
  pointerGeneration(): bigint {
    if (!this.hasMimir) return 0n;
    // prepared once: a server checks the generation on every request (its prepare was ~10% of a cached answer's CPU)
    this.generationStmt ??= this.db.prepare(`SELECT generation FROM ${T.catalog} WHERE catalog_name = ?`);
    const row = this.generationStmt.get(this.name) as
      | { generation: bigint }
      | undefined;
    return row === undefined ? 0n : big(row.generation);
  }

  /** Generations newest first: at most `limit` (default 100), all below `before` when given. */
  generations(opts: { limit?: number; before?: bigint } = {}): GenerationEntry[] {
    if (!this.hasMimir) return [];
    const limit = opts.limit ?? 100;
    const heads = this.db
      .prepare(
        `SELECT generation, time_ms, note, ${this.hasForeignColumn ? FOREIGN_COLUMN : '0'} AS foreign_commit FROM ${T.generations}
         WHERE catalog_name = ? AND generation < ? ORDER BY generation DESC LIMIT ?`,
      )
      .all(this.name, opts.before ?? MAX_GENERATION, limit) as {
      generation: bigint;
      time_ms: bigint;
      note: string | null;
      foreign_commit: bigint | number;
    }[];
    if (heads.length === 0) return [];
    const lo = heads[heads.length - 1].generation;
    const hi = heads[0].generation;
    const rows = this.db
      .prepare(
        `SELECT generation, table_namespace, table_name, metadata_location FROM ${T.log}
         WHERE catalog_name = ? AND generation BETWEEN ? AND ? ORDER BY generation, table_namespace, table_name`,
      )
      .all(this.name, lo, hi) as LogRow[];
    const byGen = new Map<bigint, GenerationEntry>();
    const out = heads.map((h) => {
      const e: GenerationEntry = { generation: big(h.generation), timeMs: num(h.time_ms), note: h.note, foreign: num(h.foreign_commit) === 1, tables: [] };
      byGen.set(e.generation, e);
      return e;
    });
    for (const r of rows) {
      byGen.get(big(r.generation))?.tables.push({ ident: rowIdent(r), metadataLocation: r.metadata_location });
    }
    return out;
  }

  /**
   * identToString -> metadata location of every table as of `generation`,
   * rebuilt from the log. A table the log never saw before (created before the
   * log existed, e.g. in a foreign catalog) is taken at the location its first
   * logged change replaced, or at its current pointer when never logged.
   */
  pointersAt(generation: bigint): Map<string, string> {
    const current = this.pointerGeneration();
    if (generation < 0n || generation > current) {
      throw new RangeError(`pointersAt(${generation}) on ${this.path}: expected a generation in 0..${current}`);
    }
    const out = new Map<string, string>();
    const idents = new Map<string, TableIdent>();
    for (const i of this.listAllTables()) idents.set(identToString(i), i);
    if (this.hasMimir) for (const i of this.loggedTables()) idents.set(identToString(i), i);
    for (const [key, ident] of idents) {
      const loc = this.locationAt(ident, generation);
      if (loc !== null) out.set(key, loc);
    }
    return out;
  }

  /**
   * One table's metadata location as of `generation`: what
   * `pointersAt(generation)` holds for it (undefined: no entry), from two
   * index seeks instead of the whole map (every table of the catalog, and an
   * index walk of the log's table names). A read of one table at a pinned
   * generation asks this; `mimir serve`'s history answers asked the whole map
   * 22 times an answer (about 550 statements).
   */
  pointerAt(ident: TableIdent, generation: bigint): string | undefined {
    const current = this.pointerGeneration();
    if (generation < 0n || generation > current) {
      throw new RangeError(`pointerAt(${identToString(ident)}, ${generation}) on ${this.path}: expected a generation in 0..${current}`);
    }
    return this.locationAt(ident, generation) ?? undefined;
  }

  private locationAt(ident: TableIdent, generation: bigint): string | null {
    if (this.hasMimir) {
      const args = [this.name, nsToString(ident.namespace), ident.name, generation] as const;
      // prepared once: every read of a table at a pinned generation asks these
      this.atOrBeforeStmt ??= this.db.prepare(
        `SELECT metadata_location FROM ${T.log} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?
           AND generation <= ? ORDER BY generation DESC LIMIT 1`,
      );
      const atOrBefore = this.atOrBeforeStmt.get(...args) as { metadata_location: string | null } | undefined;
      if (atOrBefore !== undefined) return atOrBefore.metadata_location;
      this.afterStmt ??= this.db.prepare(
        `SELECT previous_metadata_location FROM ${T.log} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?
           AND generation > ? ORDER BY generation ASC LIMIT 1`,
      );
      const after = this.afterStmt.get(...args) as { previous_metadata_location: string | null } | undefined;
      if (after !== undefined) return after.previous_metadata_location;
    }
    return this.loadTable(ident)?.metadataLocation ?? null;
  }

  /** The last generation committed at or before `timeMs` (0 if none). Commit times are monotone. */
  generationAt(timeMs: number): bigint {
    if (!this.hasMimir) return 0n;
    const row = this.db
      .prepare(`SELECT max(generation) AS g FROM ${T.generations} WHERE catalog_name = ? AND time_ms <= ?`)
      .get(this.name, Math.floor(timeMs)) as { g: bigint | null };
    return row.g === null ? 0n : big(row.g);
  }

  /**
   * The metadata locations a read of the table as of `generation` or any later
   * one may need: the one current at `generation`, every one the log recorded
   * after it, and the current row's.
   */
  metadataLocationsSince(ident: TableIdent, generation: bigint): string[] {
    const seen = new Set<string>();
    const at = this.locationAt(ident, generation);
    if (at !== null) seen.add(at);
    if (this.hasMimir) {
      const rows = this.db
        .prepare(
          `SELECT metadata_location FROM ${T.log}
           WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND generation > ? ORDER BY generation`,
        )
        .all(this.name, nsToString(ident.namespace), ident.name, generation) as { metadata_location: string | null }[];
      for (const r of rows) if (r.metadata_location !== null) seen.add(r.metadata_location);
    }
    const row = this.currentRow(ident);
    if (row?.metadata_location) seen.add(row.metadata_location);
    return [...seen];
  }

  /** Every metadata location the log (and the current row) ever recorded for the table, oldest first. */
  everMetadataLocations(ident: TableIdent): string[] {
    const seen = new Set<string>();
    const add = (s: string | null): void => {
      if (s !== null) seen.add(s);
    };
    if (this.hasMimir) {
      const rows = this.db
        .prepare(
          `SELECT metadata_location, previous_metadata_location FROM ${T.log}
           WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? ORDER BY generation`,
        )
        .all(this.name, nsToString(ident.namespace), ident.name) as TableRow[];
      for (const r of rows) {
        add(r.previous_metadata_location);
        add(r.metadata_location);
      }
    }
    const row = this.currentRow(ident);
    if (row !== undefined) {
      add(row.previous_metadata_location);
      add(row.metadata_location);
    }
    return [...seen];
  }

  /**
   * The table's metadata locations the generation log recorded after
   * `generation`, oldest first, each with its generation (null location: the
   * table was dropped there). Catalog rows are never removed: a location may
   * name a file that history expiry has deleted since.
   */
  loggedLocationsAfter(ident: TableIdent, generation: bigint): { generation: bigint; metadataLocation: string | null }[] {
    if (!this.hasMimir) return [];
    const rows = this.db
      .prepare(
        `SELECT generation, metadata_location FROM ${T.log}
         WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND generation > ? ORDER BY generation`,
      )
      .all(this.name, nsToString(ident.namespace), ident.name, generation) as { generation: bigint; metadata_location: string | null }[];
    return rows.map((r) => ({ generation: big(r.generation), metadataLocation: r.metadata_location }));
  }

  // -------------------------------------------------------------------------
  // Foreign commits

  /**
   * Tables whose pointer differs from where the log last had them: moved,
   * created or dropped by another engine. Empty for a catalog without
   * Mimir's tables (it has no log to differ from).
   */
  foreignMoves(): ForeignMove[] {
    if (!this.hasMimir) return [];
    const moved = this.db
      .prepare(
        `SELECT table_namespace, table_name, metadata_location AS current,
           (SELECT l.metadata_location FROM ${T.log} l WHERE l.catalog_name = t.catalog_name
              AND l.table_namespace = t.table_namespace AND l.table_name = t.table_name
              ORDER BY l.generation DESC LIMIT 1) AS logged
         FROM ${T.tables} t WHERE catalog_name = ? AND metadata_location IS NOT NULL${this.typeFilter()}
         ORDER BY table_namespace, table_name`,
      )
      .all(this.name) as { table_namespace: string; table_name: string; current: string; logged: string | null }[];
    const out: ForeignMove[] = moved
      .filter((r) => r.logged !== r.current)
      .map((r) => ({ ident: rowIdent(r), logged: r.logged, current: r.current }));
    // logged tables absent now: their last logged location, unless that was a drop
    const present = new Set(moved.map((r) => `${r.table_namespace}\u0000${r.table_name}`));
    const last = this.db.prepare(
      `SELECT metadata_location FROM ${T.log} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? ORDER BY generation DESC LIMIT 1`,
    );
    for (const ident of this.loggedTables()) {
      if (present.has(`${nsToString(ident.namespace)}\u0000${ident.name}`)) continue;
      const r = last.get(this.name, nsToString(ident.namespace), ident.name) as { metadata_location: string | null } | undefined;
      if (r?.metadata_location) out.push({ ident, logged: r.metadata_location, current: null });
    }
    return out;
  }

  /**
   * Every table the log names, by index seeks (one per table, not per log
   * row: the log grows with every generation).
   */
  private loggedTables(): TableIdent[] {
    const firstNs = this.db.prepare(`SELECT table_namespace AS v FROM ${T.log} WHERE catalog_name = ? ORDER BY table_namespace LIMIT 1`);
    const nextNs = this.db.prepare(`SELECT table_namespace AS v FROM ${T.log} WHERE catalog_name = ? AND table_namespace > ? ORDER BY table_namespace LIMIT 1`);
    const firstName = this.db.prepare(`SELECT table_name AS v FROM ${T.log} WHERE catalog_name = ? AND table_namespace = ? ORDER BY table_name LIMIT 1`);
    const nextName = this.db.prepare(
      `SELECT table_name AS v FROM ${T.log} WHERE catalog_name = ? AND table_namespace = ? AND table_name > ? ORDER BY table_name LIMIT 1`,
    );
    const out: TableIdent[] = [];
    type Row = { v: string } | undefined;
    for (let ns = (firstNs.get(this.name) as Row)?.v; ns !== undefined; ns = (nextNs.get(this.name, ns) as Row)?.v) {
      for (let name = (firstName.get(this.name, ns) as Row)?.v; name !== undefined; name = (nextName.get(this.name, ns, name) as Row)?.v) {
        out.push({ namespace: nsFromString(ns), name });
      }
    }
    return out;
  }

  /**
   * Record the foreign moves (if any) as one generation marked foreign, in
   * one IMMEDIATE transaction; returns it, or undefined when there was
   * nothing to record. Commits do the same first thing, inside their own
   * transaction, so a foreign state is a generation before Mimir builds on it.
   */
  recordForeignCommits(): bigint | undefined {
    this.requireWritable('recordForeignCommits');
    this.requireMimir('recordForeignCommits');
    return this.db.transaction(() => this.recordForeignIn()).immediate();
  }

  /** Inside a transaction: the foreign-commit generation, if any pointer moved. */
  private recordForeignIn(): bigint | undefined {
    const moves = this.foreignMoves();
    if (moves.length === 0) return undefined;
    const gen = this.bump();
    const names = moves.map((m) => identToString(m.ident));
    const note = `foreign commit: ${names.join(', ')}`;
    this.db
      .prepare(
        `INSERT INTO ${T.generations} (catalog_name, generation, time_ms, note, pid, host, ${FOREIGN_COLUMN}) VALUES (?, ?, ?, ?, NULL, NULL, 1)`,
      )
      .run(this.name, gen.generation, gen.timeMs, note);
    const log = this.db.prepare(
      `INSERT INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    for (const m of moves) log.run(this.name, gen.generation, nsToString(m.ident.namespace), m.ident.name, m.current, m.logged);
    return gen.generation;
  }

  /** Inside a transaction: the next generation and its (monotone) time. */
  private bump(): { generation: bigint; timeMs: bigint } {
    const bumped = this.db
      .prepare(
        `UPDATE ${T.catalog} SET generation = generation + 1, last_time_ms = max(last_time_ms, ?)
         WHERE catalog_name = ? RETURNING generation, last_time_ms`,
      )
      .get(Date.now(), this.name) as { generation: bigint; last_time_ms: bigint } | undefined;
    if (bumped === undefined) throw new Error(`commit to ${this.path}: no ${T.catalog} row for catalog '${this.name}'`);
    return { generation: bumped.generation, timeMs: bumped.last_time_ms };
  }

  // -------------------------------------------------------------------------
  // Catalog properties (Mimir's own, e.g. the root the lake was created at)

  /** A property of this catalog; undefined when unset (or the catalog predates properties). */
  property(key: string): string | undefined {
    if (!this.hasProps) return undefined;
    const row = this.db.prepare(`SELECT value FROM ${T.properties} WHERE catalog_name = ? AND key = ?`).get(this.name, key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  /** Set (or, with undefined, remove) a property of this catalog. */
  setProperty(key: string, value: string | undefined): void {
    this.requireWritable('setProperty');
    this.write(`set catalog property ${key}`, () => {
      if (value === undefined) this.db.prepare(`DELETE FROM ${T.properties} WHERE catalog_name = ? AND key = ?`).run(this.name, key);
      else {
        this.db
          .prepare(`INSERT INTO ${T.properties} (catalog_name, key, value) VALUES (?, ?, ?) ON CONFLICT (catalog_name, key) DO UPDATE SET value = excluded.value`)
          .run(this.name, key, value);
      }
    }, ' — nothing written');
  }

  // -------------------------------------------------------------------------
  // Leases

  /**
   * Announce a commit in flight, visible to every process: maintenance must
   * not delete files newer than `releaseBase`'s state while the lease is live.
   * The lease lives until `end()`, until `ttlMs` (default 5 min) passes without
   * `renew()`, or until its process dies.
   */
  beginLease(opts: { releaseBase: bigint; note?: string; ttlMs?: number }): Lease {
    if (this.readOnly) this.requireWritable('beginLease');
    this.requireMimir('beginLease');
    const ttl = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    const now = Date.now();
    const what = `begin a lease${opts.note ? ` (${opts.note})` : ''}`;
    const info = this.write(what, () =>
      this.db
        .prepare(
          `INSERT INTO ${T.leases} (catalog_name, pid, host, release_base, started_ms, expires_ms, note)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(this.name, process.pid, this.host, opts.releaseBase, now, now + ttl, opts.note ?? null),
    );
    const id = big(info.lastInsertRowid);
    let ended = false;
    return {
      id,
      renew: () => {
        const r = this.write(`renew lease ${id}`, () => this.db.prepare(`UPDATE ${T.leases} SET expires_ms = ? WHERE id = ?`).run(Date.now() + ttl, id));
        if (r.changes !== 1) throw new Error(`lease ${id} in ${this.path} cannot be renewed: it ended or expired and was swept`);
      },
      end: () => {
        if (ended || !this.db.open) return undefined;
        try {
          this.write(`end lease ${id}${opts.note ? ` (${opts.note})` : ''}`, () => this.db.prepare(`DELETE FROM ${T.leases} WHERE id = ?`).run(id),
            ' — the lease is left to expire (swept once its ttl passed or its process is gone)');
          ended = true;
          return undefined;
        } catch (e) {
          if (e instanceof CatalogWriteError) return e;
          throw e;
        }
      },
    };
  }

  /** Leases not ended, not expired and (on this host) held by a live process; sweeps the others when writable. */
  liveLeases(): LeaseInfo[] {
    if (!this.hasMimir) return [];
    const now = Date.now();
    const rows = this.db
      .prepare(
        `SELECT id, pid, host, release_base, started_ms, expires_ms, note FROM ${T.leases}
         WHERE catalog_name = ? ORDER BY id`,
      )
      .all(this.name) as {
      id: bigint;
      pid: bigint;
      host: string;
      release_base: bigint;
      started_ms: bigint;
      expires_ms: bigint;
      note: string | null;
    }[];
    const live: LeaseInfo[] = [];
    const dead: bigint[] = [];
    for (const r of rows) {
      const lease: LeaseInfo = {
        id: big(r.id),
        pid: num(r.pid),
        host: r.host,
        releaseBase: big(r.release_base),
        startedMs: num(r.started_ms),
        expiresMs: num(r.expires_ms),
        note: r.note,
      };
      const alive = lease.expiresMs > now && (lease.host !== this.host || pidAlive(lease.pid));
      if (alive) live.push(lease);
      else dead.push(lease.id);
    }
    if (dead.length > 0 && !this.readOnly && !this.reader) {
      const del = this.db.prepare(`DELETE FROM ${T.leases} WHERE id = ?`);
      try {
        this.write('sweep dead leases', () =>
          this.db.transaction(() => {
            for (const id of dead) del.run(id);
          })(),
        );
      } catch (e) {
        // housekeeping only: the dead leases are not in `live` either way, and the next sweep removes them
        if (!(e instanceof CatalogWriteError)) throw e;
      }
    }
    return live;
  }

  // -------------------------------------------------------------------------

  private typeFilter(): string {
    return this.hasType ? ` AND (iceberg_type = '${ICEBERG_TYPE_TABLE}' OR iceberg_type IS NULL)` : '';
  }

  /** The row of a table; `anyType` also finds views (for name clashes on create). */
  private currentRow(ident: TableIdent, anyType = false): TableRow | undefined {
    return this.db
      .prepare(
        `SELECT table_namespace, table_name, metadata_location, previous_metadata_location FROM ${T.tables}
         WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?${anyType ? '' : this.typeFilter()}`,
      )
      .get(this.name, nsToString(ident.namespace), ident.name) as TableRow | undefined;
  }

  private requireWritable(what: string): void {
    if (this.readOnly) throw new Error(`${what}: catalog ${this.path} was opened read-only — nothing written`);
    if (this.reader) throw new Error(`${what}: catalog ${this.path} was opened to read (it takes leases only) — nothing written`);
  }

  private requireKeys(what: string): void {
    if (!this.hasKeys) throw new Error(`${what}: catalog ${this.path} has no ${T.keys} table (opened read-only or foreign) — nothing written`);
  }

  private requireMimir(what: string): void {
    if (!this.hasMimir) throw new Error(`${what}: catalog ${this.path} has no Mimir tables (${T.catalog} …)`);
  }
}

/**
 * Open an SQL catalog written by PyIceberg or Java (e.g. PyIceberg's default
 * catalog name is 'default'). Read-only unless `writable`: only then are
 * Mimir's tables added to the file.
 */
export function openForeignCatalog(dbPath: string, catalogName: string, opts: { writable?: boolean } = {}): SqlCatalog {
  return SqlCatalog.openFile(dbPath, { name: catalogName, readOnly: opts.writable !== true, create: false });
}

/** A catalog name's tables when Mimir's tables are first added for it: logged at generation 0 (what Mimir found). */
function adoptTables(db: Db, name: string): void {
  const hasType = columnsOf(db, T.tables).has('iceberg_type');
  db.prepare(
    `INSERT OR IGNORE INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location)
     SELECT catalog_name, 0, table_namespace, table_name, metadata_location, NULL FROM ${T.tables}
     WHERE catalog_name = ? AND metadata_location IS NOT NULL${hasType ? ` AND (iceberg_type = '${ICEBERG_TYPE_TABLE}' OR iceberg_type IS NULL)` : ''}`,
  ).run(name);
}

function isReadOnlyError(e: unknown): boolean {
  return e instanceof Database.SqliteError && /^SQLITE_(READONLY|CANTOPEN|PERM|AUTH)/.test(e.code);
}

function readOnlyCatalog(path: string, e: unknown): Error {
  const err = e as { code?: string; message: string };
  return new Error(
    `cannot open catalog ${path} for writing: ${err.code ?? 'error'} (${err.message}) — the lake is read-only for this process; ` +
      `commands that only read (queries, table scan, ring status, log generations) work on it — nothing written`,
  );
}

/**
 * Open a catalog file read-only. SQLite needs the `-shm` file of a WAL-mode
 * database, and creates it when absent — impossible in a folder this process
 * cannot write. Then the file is read into memory (header marked rollback-
 * journal, as SQLite's deserialiser requires), unless a non-empty `-wal`
 * holds commits not yet checkpointed into it.
 */
function openReadOnly(path: string, fullDisk = false): { db: Db; snapshotRead: boolean } {
  let db: Db | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    listSqliteTables(db);
    return { db, snapshotRead: false };
  } catch (e) {
    db?.close();
    const code = (e as { code?: unknown }).code;
    // a read-only open on a full disk reads the snapshot too: it writes nothing either way
    if (typeof code === 'string' && sqliteSpaceError(e, path)) fullDisk = true;
    else if (typeof code !== 'string' || !/^SQLITE_(READONLY|CANTOPEN)/.test(code)) throw e;
  }
  const wal = `${path}-wal`;
  const walBytes = existsSync(wal) ? statSync(wal).size : 0;
  if (walBytes > 0) {
    throw new Error(
      `its write-ahead log ${wal} holds ${walBytes} bytes of commits not yet in the file, and SQLite cannot read it ` +
        `without writing ${path}-shm, ${fullDisk ? 'and the disk holding it is full; free some space' : 'in a folder this process may not write; open the lake once with write access'} ` +
        `(any mimir command that writes folds the log in) — nothing read`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
  // bytes 18 and 19: file format write/read version, 2 = WAL; the deserialiser opens only 1 (rollback journal)
  if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return { db: new Database(bytes, { readonly: true }), snapshotRead: true };
}

function listSqliteTables(db: Db): Set<string> {
  const rows = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[];
  return new Set(rows.map((r) => r.name).filter((n) => !n.startsWith('sqlite_')));
}

function columnsOf(db: Db, table: string): Set<string> {
  const rows = db.pragma(`table_info(${table})`) as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

function rowIdent(r: { table_namespace: string; table_name: string }): TableIdent {
  return { namespace: nsFromString(r.table_namespace), name: r.table_name };
}
