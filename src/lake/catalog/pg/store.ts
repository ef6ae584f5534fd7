// The PostgreSQL catalog's work, asynchronous, on one `pg` connection: it
// runs inside the catalog's worker thread (worker.ts), one call at a time.
// The layout is the SQLite catalog's (schema.ts: the JDBC tables
// `iceberg_tables` and `iceberg_namespace_properties`, so Java's JdbcCatalog
// and PyIceberg's SqlCatalog open the database, plus the `mimir_` tables).
//
// Commits: one READ COMMITTED transaction that first locks the catalog's row
// of `mimir_catalog` (SELECT … FOR UPDATE), so Mimir's commits of one catalog
// run one after another exactly as SQLite's BEGIN IMMEDIATE makes them; each
// table is then compare-and-swapped by `UPDATE … WHERE metadata_location =
// expected` (which also holds against another engine's concurrent commit: the
// UPDATE waits for its row lock and re-checks the row), keys likewise, and the
// generation is the row's counter plus one — allocated by the database under
// that lock, never by a process. Row locks rather than SERIALIZABLE: every
// commit updates that one counter row, so under SERIALIZABLE any two
// concurrent commits conflict and one is aborted and must be retried whole;
// the lock makes the second wait instead. Measured (bench/catalog-pg.ts, 2
// cores at load ~12, each connection committing to its own table): 4
// connections x 100 commits, row lock 191-288 commits/s with 0 aborts,
// SERIALIZABLE 235-251 commits/s with 631-779 aborted attempts; 8 x 50: 152-258
// vs 133-295 with ~1,500 aborts. Same throughput within the noise, but
// SERIALIZABLE aborts ~2-4 attempts per commit, growing with the writers.
//
// Times (commit times, lease expiry) are the database's clock, so machines
// with skewed clocks agree; commit times stay monotone (`last_time_ms`).
//
// Crash story: a process (or machine) that dies mid-commit drops its
// connection; PostgreSQL rolls the transaction back. A connection lost at
// COMMIT leaves the outcome unknown, and the error says so (the run's note
// then answers: generationNoted). A dead machine's lease is not swept by pid
// (another host cannot see its processes): it expires at `expires_ms`.
import { hostname } from 'node:os';
import pg from 'pg';
import { CatalogWriteError } from '../../disk-full.ts';
import {
  AlreadyExistsError,
  CommitConflictError,
  type ForeignMove,
  type GenerationEntry,
  KeyConflictError,
  type KeyChange,
  type LeaseInfo,
  type LoadedPointer,
  NamespaceNotEmptyError,
  NoSuchNamespaceError,
  NoSuchTableError,
  type TableChange,
  type TableIdent,
  checkIdent,
  checkNamespace,
  identToString,
  nsFromString,
  nsToString,
  pidAlive,
} from '../catalog.ts';
import { FOREIGN_COLUMN, ICEBERG_TYPE_TABLE, MIMIR_LAYOUT_VERSION, PG_DDL, T } from '../schema.ts';

/** The database's clock in milliseconds (commit times, lease expiry). */
const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;
/** Any key of `pg_advisory_xact_lock` naming "Mimir creates its tables". */
const DDL_LOCK = 0x6d696d6972; // 'mimir'
const MAX_GENERATION = 0x7fffffffffffffffn;

export interface StoreOptions {
  uri: string;
  /** The URI without its password, for messages. */
  shown: string;
  name: string;
  create: boolean;
  readOnly: boolean;
  reader: boolean;
}

/** What the open found, for the synchronous side. */
export interface OpenInfo {
  readOnly: boolean;
  reader: boolean;
}

type Row = Record<string, unknown>;

function big(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as string | number);
}

function str(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

function rowIdent(r: Row): TableIdent {
  return { namespace: nsFromString(String(r.table_namespace)), name: String(r.table_name) };
}

/** A failure of the server or the connection (not one of the catalog's own refusals). */
function isServerError(e: unknown): e is Error & { code?: string } {
  if (!(e instanceof Error)) return false;
  const known = [CommitConflictError, KeyConflictError, AlreadyExistsError, NoSuchNamespaceError, NoSuchTableError, NamespaceNotEmptyError, RangeError];
  return !known.some((k) => e instanceof k) && !e.message.startsWith('commit to ');
}

export class PgStore {
  private readonly client: pg.Client;
  private readonly host = hostname();
  private readonly opts: StoreOptions;
  private readonly name: string;
  private readonly path: string;
  private hasMimir = true;
  private readOnly: boolean;
  private reader: boolean;

  constructor(opts: StoreOptions) {
    this.opts = opts;
    this.name = opts.name;
    this.path = opts.shown;
    this.readOnly = opts.readOnly;
    this.reader = opts.reader && !opts.readOnly;
    // a server that does not answer fails the open in 10 s; a commit waits at most 60 s for other commits' locks
    this.client = new pg.Client({ connectionString: opts.uri, application_name: 'mimir', connectionTimeoutMillis: 10_000, lock_timeout: 60_000 });
    // a server gone later: the next call fails with the reason; an unhandled 'error' event would end the worker
    this.client.on('error', () => undefined);
  }

  private async q(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.client.query(sql, params)).rows as Row[];
  }

  private async one(sql: string, params: unknown[] = []): Promise<Row | undefined> {
    return (await this.q(sql, params))[0];
  }

  /**
   * One transaction; `op` and `outcome` name it in a failure of the server.
   * A connection lost at COMMIT leaves the outcome unknown, and says so.
   */
  private async tx<R>(op: string, outcome: string, fn: () => Promise<R>, mode = ''): Promise<R> {
    try {
      await this.q(`BEGIN${mode}`);
    } catch (e) {
      throw this.serverError(op, e, outcome);
    }
    let out: R;
    try {
      out = await fn();
    } catch (e) {
      await this.q('ROLLBACK').catch(() => undefined);
      throw isServerError(e) ? this.serverError(op, e, outcome) : e;
    }
    try {
      await this.q('COMMIT');
    } catch (e) {
      throw this.serverError(op, e, ' — the connection failed at COMMIT, so whether it landed is unknown (a run finds out by its note)');
    }
    return out;
  }

  private serverError(op: string, e: unknown, outcome: string): CatalogWriteError {
    if (e instanceof CatalogWriteError) return e;
    const err = e as Error & { code?: string };
    // 53100: disk_full — reported as the disk-full failures of the SQLite catalog are
    return new CatalogWriteError(op, this.path, err.code ?? 'error', err.message, outcome, err.code === '53100');
  }

  /** Connect, and (unless read-only, or a reader of a catalog already in the current layout) create the tables. */
  async open(): Promise<OpenInfo> {
    try {
      await this.client.connect();
    } catch (e) {
      const err = e as Error & { code?: string };
      throw new Error(`cannot connect to the PostgreSQL catalog at ${this.path}: ${err.code ? `${err.code} ` : ''}${err.message} — nothing read or written`);
    }
    const present = new Set(
      (await this.q(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)).map((r) => String(r.table_name)),
    );
    const all = Object.values(T).every((t) => present.has(t));
    const registered = all && (await this.one(`SELECT 1 FROM ${T.catalog} WHERE catalog_name = $1`, [this.name])) !== undefined;
    if (this.readOnly || (this.reader && registered)) {
      if (!present.has(T.tables)) {
        throw new Error(`PostgreSQL catalog ${this.path} holds no ${T.tables} table: not a catalog (opened read-only or to read) — nothing written`);
      }
      this.hasMimir = all;
      return { readOnly: this.readOnly, reader: this.reader };
    }
    if (!this.opts.create && !registered && !present.has(T.tables)) {
      throw new Error(`no catalog in PostgreSQL database ${this.path}: it holds no ${T.tables} table (opened with create=false) — nothing written`);
    }
    this.reader = false;
    // in the current layout and registered: nothing to write (and no lock to take)
    if (registered) return { readOnly: false, reader: false };
    await this.tx('create the catalog tables', ' — nothing written', async () => {
      await this.q(`SELECT pg_advisory_xact_lock($1)`, [DDL_LOCK]);
      // only what is missing: CREATE INDEX IF NOT EXISTS share-locks its table even when the index exists,
      // which deadlocks against a commit of another catalog name waiting for our INSERT below
      for (const ddl of PG_DDL) {
        const made = /^CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)/.exec(ddl)?.[1];
        if (made === undefined) throw new Error(`PG_DDL: cannot tell what '${ddl.slice(0, 40)}…' creates`);
        const exists = await this.one(`SELECT to_regclass($1) IS NOT NULL AS e`, [made]);
        if (exists?.e !== true) await this.q(ddl);
      }
      const added = await this.q(
        `INSERT INTO ${T.catalog} (catalog_name, generation, last_time_ms, layout_version) VALUES ($1, 0, 0, $2)
         ON CONFLICT (catalog_name) DO NOTHING RETURNING generation`,
        [this.name, MIMIR_LAYOUT_VERSION],
      );
      // tables another engine made before Mimir's tables: logged at generation 0 (what Mimir found)
      if (added.length === 1) {
        await this.q(
          `INSERT INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location)
           SELECT catalog_name, 0, table_namespace, table_name, metadata_location, NULL FROM ${T.tables}
           WHERE catalog_name = $1 AND metadata_location IS NOT NULL${this.typeFilter()} ON CONFLICT DO NOTHING`,
          [this.name],
        );
      }
    });
    return { readOnly: false, reader: false };
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }

  private typeFilter(): string {
    return ` AND (iceberg_type = '${ICEBERG_TYPE_TABLE}' OR iceberg_type IS NULL)`;
  }

  private requireWritable(what: string): void {
    if (this.readOnly) throw new Error(`${what}: catalog ${this.path} was opened read-only — nothing written`);
    if (this.reader) throw new Error(`${what}: catalog ${this.path} was opened to read (it takes leases only) — nothing written`);
  }

  private requireMimir(what: string): void {
    if (!this.hasMimir) throw new Error(`${what}: catalog ${this.path} has no Mimir tables (${T.catalog} …)`);
  }

  // -------------------------------------------------------------------------
  // Namespaces and tables

  async catalogNames(): Promise<string[]> {
    const rows = await this.q(`SELECT catalog_name AS n FROM ${T.tables} UNION SELECT catalog_name AS n FROM ${T.namespaceProps} ORDER BY n`);
    return rows.map((r) => String(r.n));
  }

  async createNamespace(ns: string[], props: Record<string, string>): Promise<void> {
    this.requireWritable('createNamespace');
    checkNamespace(ns, `createNamespace in ${this.path}`);
    const key = nsToString(ns);
    await this.tx(`create namespace '${key}'`, ' — nothing written', async () => {
      if (await this.namespaceExists(ns)) throw new AlreadyExistsError(`namespace '${key}'`, this.path);
      const ins = `INSERT INTO ${T.namespaceProps} (catalog_name, namespace, property_key, property_value) VALUES ($1, $2, $3, $4)`;
      try {
        await this.q(ins, [this.name, key, 'exists', 'true']);
      } catch (e) {
        // another process created it since the check
        if ((e as { code?: string }).code === '23505') throw new AlreadyExistsError(`namespace '${key}'`, this.path);
        throw e;
      }
      for (const [k, v] of Object.entries(props)) if (k !== 'exists') await this.q(ins, [this.name, key, k, v]);
    });
  }

  async listNamespaces(): Promise<string[][]> {
    const rows = await this.q(
      `SELECT table_namespace AS ns FROM ${T.tables} WHERE catalog_name = $1
       UNION SELECT namespace AS ns FROM ${T.namespaceProps} WHERE catalog_name = $1 ORDER BY ns`,
      [this.name],
    );
    return rows.map((r) => nsFromString(String(r.ns)));
  }

  async namespaceExists(ns: string[]): Promise<boolean> {
    const key = nsToString(ns);
    const row = await this.one(
      `SELECT 1 FROM ${T.namespaceProps} WHERE catalog_name = $1 AND namespace = $2
       UNION ALL SELECT 1 FROM ${T.tables} WHERE catalog_name = $1 AND table_namespace = $2 LIMIT 1`,
      [this.name, key],
    );
    return row !== undefined;
  }

  async namespaceProperties(ns: string[]): Promise<Record<string, string>> {
    if (!(await this.namespaceExists(ns))) throw new NoSuchNamespaceError(ns, this.path);
    const rows = await this.q(
      `SELECT property_key AS k, property_value AS v FROM ${T.namespaceProps} WHERE catalog_name = $1 AND namespace = $2 ORDER BY property_key`,
      [this.name, nsToString(ns)],
    );
    const out: Record<string, string> = {};
    for (const r of rows) out[String(r.k)] = str(r.v) ?? '';
    return out;
  }

  async dropNamespace(ns: string[]): Promise<void> {
    this.requireWritable('dropNamespace');
    const key = nsToString(ns);
    await this.tx(`drop namespace '${key}'`, ' — nothing dropped', async () => {
      if (!(await this.namespaceExists(ns))) throw new NoSuchNamespaceError(ns, this.path);
      const tables = (await this.listTables(ns)).length;
      const children = (await this.listNamespaces()).filter((n) => n.length > ns.length && nsToString(n.slice(0, ns.length)) === key).length;
      if (tables > 0 || children > 0) throw new NamespaceNotEmptyError(ns, tables, children, this.path);
      await this.q(`DELETE FROM ${T.namespaceProps} WHERE catalog_name = $1 AND namespace = $2`, [this.name, key]);
    });
  }

  async listTables(ns: string[]): Promise<TableIdent[]> {
    const rows = await this.q(
      `SELECT table_namespace, table_name FROM ${T.tables} WHERE catalog_name = $1 AND table_namespace = $2${this.typeFilter()} ORDER BY table_name`,
      [this.name, nsToString(ns)],
    );
    return rows.map(rowIdent);
  }

  async listAllTables(): Promise<TableIdent[]> {
    const rows = await this.q(
      `SELECT table_namespace, table_name FROM ${T.tables} WHERE catalog_name = $1${this.typeFilter()} ORDER BY table_namespace, table_name`,
      [this.name],
    );
    return rows.map(rowIdent);
  }

  private async currentRow(ident: TableIdent, anyType = false): Promise<Row | undefined> {
    return this.one(
      `SELECT table_namespace, table_name, metadata_location, previous_metadata_location FROM ${T.tables}
       WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3${anyType ? '' : this.typeFilter()}`,
      [this.name, nsToString(ident.namespace), ident.name],
    );
  }

  async loadTable(ident: TableIdent): Promise<LoadedPointer | undefined> {
    const row = await this.currentRow(ident);
    if (row === undefined || row.metadata_location === null) return undefined;
    return { metadataLocation: String(row.metadata_location), previousMetadataLocation: str(row.previous_metadata_location) };
  }

  async requireTable(ident: TableIdent): Promise<LoadedPointer> {
    const t = await this.loadTable(ident);
    if (t === undefined) throw new NoSuchTableError(ident, this.path);
    return t;
  }

  // -------------------------------------------------------------------------
  // Commits

  async commit(changes: TableChange[], note: string | undefined, keys: KeyChange[]): Promise<bigint> {
    this.requireWritable('commit');
    this.requireMimir('commit');
    if (changes.length === 0) throw new Error(`commit to ${this.path}: expected at least one table change, found none`);
    const seen = new Set<string>();
    for (const c of changes) {
      const key = identToString(c.ident);
      if (seen.has(key)) throw new Error(`commit to ${this.path}: table ${key} appears twice in one commit`);
      seen.add(key);
      checkIdent(c.ident, `commit to ${this.path}`);
      if (c.expected === null && c.next === null) throw new Error(`commit to ${this.path}: change of ${key} has neither expected nor next location`);
    }
    const seenKeys = new Set<string>();
    for (const k of keys) {
      if (seenKeys.has(k.key)) throw new Error(`commit to ${this.path}: key ${k.key} appears twice in one commit`);
      seenKeys.add(k.key);
    }
    return this.tx('commit', ' — nothing of this commit was applied', async () => {
      await this.lockCatalog();
      await this.recordForeignIn();
      for (const k of keys) {
        const actual = await this.keyValue(k.key, true);
        if (actual !== k.expected) throw new KeyConflictError(k.key, k.expected, actual, this.path);
      }
      for (const c of changes) await this.applyChange(c);
      const gen = await this.bump();
      await this.q(`INSERT INTO ${T.generations} (catalog_name, generation, time_ms, note, pid, host) VALUES ($1, $2, $3, $4, $5, $6)`, [
        this.name,
        gen.generation,
        gen.timeMs,
        note ?? null,
        process.pid,
        this.host,
      ]);
      for (const c of changes) {
        if (c.next === c.expected) continue;
        await this.q(
          `INSERT INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [this.name, gen.generation, nsToString(c.ident.namespace), c.ident.name, c.next, c.expected],
        );
      }
      for (const k of keys) {
        if (k.next === undefined) continue;
        if (k.next === null) await this.q(`DELETE FROM ${T.keys} WHERE catalog_name = $1 AND key = $2`, [this.name, k.key]);
        else {
          await this.q(
            `INSERT INTO ${T.keys} (catalog_name, key, value, generation) VALUES ($1, $2, $3, $4)
             ON CONFLICT (catalog_name, key) DO UPDATE SET value = excluded.value, generation = excluded.generation`,
            [this.name, k.key, k.next, gen.generation],
          );
        }
      }
      return gen.generation;
    });
  }

  /** Inside a transaction: wait for, then hold, the catalog's row (Mimir's commits of this catalog run one at a time). */
  private async lockCatalog(): Promise<void> {
    const row = await this.one(`SELECT generation FROM ${T.catalog} WHERE catalog_name = $1 FOR UPDATE`, [this.name]);
    if (row === undefined) throw new Error(`commit to ${this.path}: no ${T.catalog} row for catalog '${this.name}'`);
  }

  /** Inside a transaction holding the catalog row: the next generation and its (monotone) time, from the database. */
  private async bump(): Promise<{ generation: bigint; timeMs: bigint }> {
    const row = await this.one(
      `UPDATE ${T.catalog} SET generation = generation + 1, last_time_ms = GREATEST(last_time_ms, ${NOW_MS})
       WHERE catalog_name = $1 RETURNING generation, last_time_ms`,
      [this.name],
    );
    if (row === undefined) throw new Error(`commit to ${this.path}: no ${T.catalog} row for catalog '${this.name}'`);
    return { generation: big(row.generation), timeMs: big(row.last_time_ms) };
  }

  private async applyChange(c: TableChange): Promise<void> {
    const ns = nsToString(c.ident.namespace);
    if (c.expected === null) {
      if (!(await this.namespaceExists(c.ident.namespace))) throw new NoSuchNamespaceError(c.ident.namespace, this.path);
      if ((await this.currentRow(c.ident, true)) !== undefined) throw new AlreadyExistsError(`table ${identToString(c.ident)}`, this.path);
      try {
        await this.q(
          `INSERT INTO ${T.tables} (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
           VALUES ($1, $2, $3, $4, NULL, $5)`,
          [this.name, ns, c.ident.name, c.next, ICEBERG_TYPE_TABLE],
        );
      } catch (e) {
        // another engine created it since the check
        if ((e as { code?: string }).code === '23505') throw new AlreadyExistsError(`table ${identToString(c.ident)}`, this.path);
        throw e;
      }
      return;
    }
    const where = `catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND metadata_location = $4${this.typeFilter()}`;
    if (c.next === c.expected) {
      // an assertion: the table must still be at `expected`; its row is locked so that it stays there until the commit
      const row = await this.one(`SELECT metadata_location FROM ${T.tables} WHERE ${where} FOR UPDATE`, [this.name, ns, c.ident.name, c.expected]);
      if (row === undefined) throw new CommitConflictError(c.ident, c.expected, str((await this.currentRow(c.ident))?.metadata_location), this.path);
      return;
    }
    const changed =
      c.next === null
        ? await this.client.query(`DELETE FROM ${T.tables} WHERE ${where}`, [this.name, ns, c.ident.name, c.expected])
        : await this.client.query(`UPDATE ${T.tables} SET metadata_location = $5, previous_metadata_location = $4 WHERE ${where}`, [
            this.name,
            ns,
            c.ident.name,
            c.expected,
            c.next,
          ]);
    if (changed.rowCount !== 1) {
      throw new CommitConflictError(c.ident, c.expected, str((await this.currentRow(c.ident))?.metadata_location), this.path);
    }
  }

  async generationNoted(note: string, after: bigint): Promise<bigint | undefined> {
    if (!this.hasMimir) return undefined;
    const row = await this.one(
      `SELECT generation FROM ${T.generations} WHERE catalog_name = $1 AND generation > $2 AND note = $3 ORDER BY generation LIMIT 1`,
      [this.name, after, note],
    );
    return row === undefined ? undefined : big(row.generation);
  }

  /** A key's value; `lock` (inside a commit) holds its row until the commit ends. */
  private async keyValue(key: string, lock = false): Promise<string | null> {
    if (!this.hasMimir) return null;
    const row = await this.one(`SELECT value FROM ${T.keys} WHERE catalog_name = $1 AND key = $2${lock ? ' FOR UPDATE' : ''}`, [this.name, key]);
    return str(row?.value);
  }

  async readKeys(keys: readonly string[]): Promise<{ generation: bigint; values: Map<string, string> }> {
    // one snapshot for the keys and the generation
    return this.tx('read commit keys', '', async () => {
      const values = new Map<string, string>();
      for (const k of keys) {
        const v = await this.keyValue(k);
        if (v !== null) values.set(k, v);
      }
      return { generation: await this.pointerGeneration(), values };
    }, ' ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  // -------------------------------------------------------------------------
  // Generations

  async pointerGeneration(): Promise<bigint> {
    if (!this.hasMimir) return 0n;
    const row = await this.one(`SELECT generation FROM ${T.catalog} WHERE catalog_name = $1`, [this.name]);
    return row === undefined ? 0n : big(row.generation);
  }

  async generations(opts: { limit?: number; before?: bigint }): Promise<GenerationEntry[]> {
    if (!this.hasMimir) return [];
    const heads = await this.q(
      `SELECT generation, time_ms, note, ${FOREIGN_COLUMN} AS foreign_commit FROM ${T.generations}
       WHERE catalog_name = $1 AND generation < $2 ORDER BY generation DESC LIMIT $3`,
      [this.name, opts.before ?? MAX_GENERATION, opts.limit ?? 100],
    );
    if (heads.length === 0) return [];
    const rows = await this.q(
      `SELECT generation, table_namespace, table_name, metadata_location FROM ${T.log}
       WHERE catalog_name = $1 AND generation BETWEEN $2 AND $3 ORDER BY generation, table_namespace, table_name`,
      [this.name, heads[heads.length - 1].generation, heads[0].generation],
    );
    const byGen = new Map<bigint, GenerationEntry>();
    const out = heads.map((h) => {
      const e: GenerationEntry = { generation: big(h.generation), timeMs: Number(h.time_ms), note: str(h.note), foreign: Number(h.foreign_commit) === 1, tables: [] };
      byGen.set(e.generation, e);
      return e;
    });
    for (const r of rows) byGen.get(big(r.generation))?.tables.push({ ident: rowIdent(r), metadataLocation: str(r.metadata_location) });
    return out;
  }

  private async checkGeneration(generation: bigint, what: string): Promise<void> {
    const current = await this.pointerGeneration();
    if (generation < 0n || generation > current) throw new RangeError(`${what} on ${this.path}: expected a generation in 0..${current}`);
  }

  async pointersAt(generation: bigint): Promise<Map<string, string>> {
    await this.checkGeneration(generation, `pointersAt(${generation})`);
    const idents = new Map<string, TableIdent>();
    for (const i of await this.listAllTables()) idents.set(identToString(i), i);
    if (this.hasMimir) for (const i of await this.loggedTables()) idents.set(identToString(i), i);
    const out = new Map<string, string>();
    for (const [key, ident] of idents) {
      const loc = await this.locationAt(ident, generation);
      if (loc !== null) out.set(key, loc);
    }
    return out;
  }

  async pointerAt(ident: TableIdent, generation: bigint): Promise<string | undefined> {
    await this.checkGeneration(generation, `pointerAt(${identToString(ident)}, ${generation})`);
    return (await this.locationAt(ident, generation)) ?? undefined;
  }

  private async locationAt(ident: TableIdent, generation: bigint): Promise<string | null> {
    if (this.hasMimir) {
      const args = [this.name, nsToString(ident.namespace), ident.name, generation];
      const atOrBefore = await this.one(
        `SELECT metadata_location FROM ${T.log} WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3
           AND generation <= $4 ORDER BY generation DESC LIMIT 1`,
        args,
      );
      if (atOrBefore !== undefined) return str(atOrBefore.metadata_location);
      const after = await this.one(
        `SELECT previous_metadata_location FROM ${T.log} WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3
           AND generation > $4 ORDER BY generation ASC LIMIT 1`,
        args,
      );
      if (after !== undefined) return str(after.previous_metadata_location);
    }
    return (await this.loadTable(ident))?.metadataLocation ?? null;
  }

  async generationAt(timeMs: number): Promise<bigint> {
    if (!this.hasMimir) return 0n;
    const row = await this.one(`SELECT max(generation) AS g FROM ${T.generations} WHERE catalog_name = $1 AND time_ms <= $2`, [
      this.name,
      Math.floor(timeMs),
    ]);
    return row?.g === null || row?.g === undefined ? 0n : big(row.g);
  }

  async metadataLocationsSince(ident: TableIdent, generation: bigint): Promise<string[]> {
    const seen = new Set<string>();
    const at = await this.locationAt(ident, generation);
    if (at !== null) seen.add(at);
    for (const r of await this.loggedLocationsAfter(ident, generation)) if (r.metadataLocation !== null) seen.add(r.metadataLocation);
    const row = await this.currentRow(ident);
    if (row?.metadata_location) seen.add(String(row.metadata_location));
    return [...seen];
  }

  async everMetadataLocations(ident: TableIdent): Promise<string[]> {
    const seen = new Set<string>();
    const add = (s: unknown): void => {
      if (s !== null && s !== undefined) seen.add(String(s));
    };
    if (this.hasMimir) {
      const rows = await this.q(
        `SELECT metadata_location, previous_metadata_location FROM ${T.log}
         WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 ORDER BY generation`,
        [this.name, nsToString(ident.namespace), ident.name],
      );
      for (const r of rows) {
        add(r.previous_metadata_location);
        add(r.metadata_location);
      }
    }
    const row = await this.currentRow(ident);
    if (row !== undefined) {
      add(row.previous_metadata_location);
      add(row.metadata_location);
    }
    return [...seen];
  }

  async loggedLocationsAfter(ident: TableIdent, generation: bigint): Promise<{ generation: bigint; metadataLocation: string | null }[]> {
    if (!this.hasMimir) return [];
    const rows = await this.q(
      `SELECT generation, metadata_location FROM ${T.log}
       WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND generation > $4 ORDER BY generation`,
      [this.name, nsToString(ident.namespace), ident.name, generation],
    );
    return rows.map((r) => ({ generation: big(r.generation), metadataLocation: str(r.metadata_location) }));
  }

  // -------------------------------------------------------------------------
  // Foreign commits

  async foreignMoves(): Promise<ForeignMove[]> {
    if (!this.hasMimir) return [];
    const moved = await this.q(
      `SELECT table_namespace, table_name, metadata_location AS current,
         (SELECT l.metadata_location FROM ${T.log} l WHERE l.catalog_name = t.catalog_name
            AND l.table_namespace = t.table_namespace AND l.table_name = t.table_name
            ORDER BY l.generation DESC LIMIT 1) AS logged
       FROM ${T.tables} t WHERE catalog_name = $1 AND metadata_location IS NOT NULL${this.typeFilter()}
       ORDER BY table_namespace, table_name`,
      [this.name],
    );
    const out: ForeignMove[] = moved
      .filter((r) => str(r.logged) !== str(r.current))
      .map((r) => ({ ident: rowIdent(r), logged: str(r.logged), current: str(r.current) }));
    // logged tables absent now: their last logged location, unless that was a drop
    const gone = await this.q(
      `SELECT DISTINCT ON (table_namespace, table_name) table_namespace, table_name, metadata_location FROM ${T.log} l
       WHERE catalog_name = $1 AND NOT EXISTS (SELECT 1 FROM ${T.tables} t WHERE t.catalog_name = l.catalog_name
         AND t.table_namespace = l.table_namespace AND t.table_name = l.table_name AND t.metadata_location IS NOT NULL${this.typeFilter()})
       ORDER BY table_namespace, table_name, generation DESC`,
      [this.name],
    );
    for (const r of gone) if (r.metadata_location !== null) out.push({ ident: rowIdent(r), logged: String(r.metadata_location), current: null });
    return out;
  }

  private async loggedTables(): Promise<TableIdent[]> {
    const rows = await this.q(`SELECT DISTINCT table_namespace, table_name FROM ${T.log} WHERE catalog_name = $1 ORDER BY table_namespace, table_name`, [
      this.name,
    ]);
    return rows.map(rowIdent);
  }

  async recordForeignCommits(): Promise<bigint | undefined> {
    this.requireWritable('recordForeignCommits');
    this.requireMimir('recordForeignCommits');
    return this.tx('record foreign commits', ' — nothing recorded', async () => {
      await this.lockCatalog();
      return this.recordForeignIn();
    });
  }

  /** Inside a transaction holding the catalog row: the foreign-commit generation, if any pointer moved. */
  private async recordForeignIn(): Promise<bigint | undefined> {
    const moves = await this.foreignMoves();
    if (moves.length === 0) return undefined;
    const gen = await this.bump();
    const note = `foreign commit: ${moves.map((m) => identToString(m.ident)).join(', ')}`;
    await this.q(
      `INSERT INTO ${T.generations} (catalog_name, generation, time_ms, note, pid, host, ${FOREIGN_COLUMN}) VALUES ($1, $2, $3, $4, NULL, NULL, 1)`,
      [this.name, gen.generation, gen.timeMs, note],
    );
    for (const m of moves) {
      await this.q(
        `INSERT INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [this.name, gen.generation, nsToString(m.ident.namespace), m.ident.name, m.current, m.logged],
      );
    }
    return gen.generation;
  }

  // -------------------------------------------------------------------------
  // Properties

  async property(key: string): Promise<string | undefined> {
    if (!this.hasMimir) return undefined;
    const row = await this.one(`SELECT value FROM ${T.properties} WHERE catalog_name = $1 AND key = $2`, [this.name, key]);
    return row === undefined ? undefined : String(row.value);
  }

  async setProperty(key: string, value: string | undefined): Promise<void> {
    this.requireWritable('setProperty');
    try {
      if (value === undefined) await this.q(`DELETE FROM ${T.properties} WHERE catalog_name = $1 AND key = $2`, [this.name, key]);
      else {
        await this.q(
          `INSERT INTO ${T.properties} (catalog_name, key, value) VALUES ($1, $2, $3) ON CONFLICT (catalog_name, key) DO UPDATE SET value = excluded.value`,
          [this.name, key, value],
        );
      }
    } catch (e) {
      throw this.serverError(`set catalog property ${key}`, e, ' — nothing written');
    }
  }

  // -------------------------------------------------------------------------
  // Leases (times on the database's clock)

  async beginLease(releaseBase: bigint, note: string | null, ttlMs: number): Promise<bigint> {
    if (this.readOnly) this.requireWritable('beginLease');
    this.requireMimir('beginLease');
    try {
      const row = await this.one(
        `INSERT INTO ${T.leases} (catalog_name, pid, host, release_base, started_ms, expires_ms, note)
         VALUES ($1, $2, $3, $4, ${NOW_MS}, ${NOW_MS} + $5, $6) RETURNING id`,
        [this.name, process.pid, this.host, releaseBase, ttlMs, note],
      );
      return big(row?.id);
    } catch (e) {
      throw this.serverError(`begin a lease${note ? ` (${note})` : ''}`, e, ' — no lease taken, nothing of the commit written');
    }
  }

  async renewLease(id: bigint, ttlMs: number): Promise<boolean> {
    try {
      const r = await this.client.query(`UPDATE ${T.leases} SET expires_ms = ${NOW_MS} + $2 WHERE id = $1`, [id, ttlMs]);
      return r.rowCount === 1;
    } catch (e) {
      throw this.serverError(`renew lease ${id}`, e, ' — the lease keeps its old expiry');
    }
  }

  /** Undefined when ended; the failure otherwise (the lease is then left to expire). */
  async endLease(id: bigint, note: string | null): Promise<CatalogWriteError | undefined> {
    try {
      await this.q(`DELETE FROM ${T.leases} WHERE id = $1`, [id]);
      return undefined;
    } catch (e) {
      return this.serverError(`end lease ${id}${note ? ` (${note})` : ''}`, e, ' — the lease is left to expire (swept once its ttl passed)');
    }
  }

  async liveLeases(): Promise<LeaseInfo[]> {
    if (!this.hasMimir) return [];
    const rows = await this.q(
      `SELECT id, pid, host, release_base, started_ms, expires_ms, note, ${NOW_MS} AS now FROM ${T.leases} WHERE catalog_name = $1 ORDER BY id`,
      [this.name],
    );
    const live: LeaseInfo[] = [];
    const dead: bigint[] = [];
    for (const r of rows) {
      const lease: LeaseInfo = {
        id: big(r.id),
        pid: Number(r.pid),
        host: String(r.host),
        releaseBase: big(r.release_base),
        startedMs: Number(r.started_ms),
        expiresMs: Number(r.expires_ms),
        note: str(r.note),
      };
      // expiry on the database's clock; a process of this host is also checked by pid
      const alive = big(r.expires_ms) > big(r.now) && (lease.host !== this.host || pidAlive(lease.pid));
      if (alive) live.push(lease);
      else dead.push(lease.id);
    }
    if (dead.length > 0 && !this.readOnly && !this.reader) {
      // housekeeping only: the dead leases are not in `live` either way, and the next sweep removes them
      await this.q(`DELETE FROM ${T.leases} WHERE id = ANY($1::bigint[])`, [dead.map(String)]).catch(() => undefined);
    }
    return live;
  }
}
