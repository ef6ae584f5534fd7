// The catalog interface: what the lake (and everything above it) asks of a
// catalog — table pointers (compare-and-swap, multi-table commits that land
// all or nothing), the generation log (one number per commit naming the state
// of the whole lake, pointers as of any generation), leases of commits in
// flight (what gc must not delete), commit keys, foreign commits, and the
// catalog's own properties. Two implementations:
// - sql-catalog.ts: SQLite in the lake folder (`catalog.db`), the default;
// - pg/: PostgreSQL (`postgresql://…`), the same JDBC tables and `mimir_` tables.
// Nothing outside lake/catalog/ names an implementation: it gets a Catalog
// from `openCatalog` (open.ts).
//
// Synchronous, on purpose. The SQLite catalog is synchronous (better-sqlite3)
// and about 100 call sites above rely on it (`pointerGeneration()` is read on every
// server request, inside loops, in constructors). Making the interface async
// would put an await (a microtask turn, ~1 µs, and an allocation) on every one
// of those hot paths of the default, for the benefit of the optional server
// catalog. The one synchronous PostgreSQL client on npm, pg-native (its
// querySync), sits on the native `libpq` addon, built by node-gyp against the
// system's libpq at install time: a compiler and headers on every machine
// that installs Mimir, for an optional feature (not tried). So
// the PostgreSQL catalog runs the ordinary async `pg` client in a worker
// thread, and its methods block on the answer (Atomics.wait on a shared word,
// then receiveMessageOnPort): one round trip a call, each whole operation (a
// commit with all its compare-and-swaps) one call and one transaction in the
// worker. Measured against a local server (2 cores, load ~4):
// pointerGeneration 110-340 µs, loadTable ~170 µs, against SQLite's 4-6 µs
// and ~25 µs; the SQLite path is unchanged (no await, no worker). A cache of
// pointers refreshed at async points was the other option: it makes every
// sync getter answer from a possibly stale copy, which the generation-pinned
// reads and gc's lease check must never see; a blocking call has no staleness.
//
// Invariants every implementation keeps: a commit is one transaction that
// compare-and-swaps every table it touches (and its keys), allocates exactly
// one new generation from the database (never from a process) and logs one
// row per table; if any swap fails nothing of it is kept. Leases expire when
// not renewed (`expires_ms`), so a dead machine's lease stops holding gc.
import type { CatalogWriteError } from '../disk-full.ts';

/** File name of the embedded (SQLite) catalog inside the lake root. */
export const CATALOG_FILE = 'catalog.db';

/** Lease lifetime without renewal: long enough to write a large commit's files. */
export const DEFAULT_LEASE_TTL_MS = 5 * 60_000;

/** Whether a process of this host is alive (a lease of a dead one is swept). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------
// Identifiers

export interface TableIdent {
  namespace: string[];
  name: string;
}

/** `{namespace: ['a','b'], name: 't'}` -> `'a.b.t'`. */
export function identToString(i: TableIdent): string {
  return [...i.namespace, i.name].join('.');
}

/** `'a.b.t'` -> `{namespace: ['a','b'], name: 't'}` (the last dot-part is the name). */
export function parseIdent(s: string): TableIdent {
  const parts = s.split('.');
  if (parts.some((p) => p === '')) {
    throw new Error(`table identifier '${s}': expected dot-separated non-empty parts such as 'ns.table'`);
  }
  const name = parts.pop() as string;
  return { namespace: parts, name };
}

export function nsToString(ns: readonly string[]): string {
  return ns.join('.');
}

export function nsFromString(s: string): string[] {
  return s === '' ? [] : s.split('.');
}

export function checkNamespace(ns: readonly string[], what: string): void {
  if (ns.length === 0) throw new Error(`${what}: expected a namespace with at least one level, found none`);
  for (const level of ns) {
    if (level === '' || level.includes('.')) {
      throw new Error(`${what}: namespace level '${level}' must be non-empty and hold no '.' (levels are stored joined by '.')`);
    }
  }
}

export function checkIdent(i: TableIdent, what: string): void {
  checkNamespace(i.namespace, what);
  if (i.name === '' || i.name.includes('.')) {
    throw new Error(`${what}: table name '${i.name}' must be non-empty and hold no '.'`);
  }
}

// ---------------------------------------------------------------------------
// Errors

/** A compare-and-swap failed: the table's pointer was not the one expected. Reload and retry. */
export class CommitConflictError extends Error {
  constructor(
    readonly ident: TableIdent,
    readonly expected: string | null,
    readonly actual: string | null,
    readonly catalogPath: string,
  ) {
    super(
      `commit conflict on table ${identToString(ident)} in ${catalogPath}: expected metadata location ` +
        `${expected ?? '(no table)'}, found ${actual ?? '(no table)'} — nothing of this commit was applied`,
    );
    this.name = 'CommitConflictError';
  }
}

/**
 * A commit key did not hold the value the commit expected: what the writer
 * derived its change from is stale. Not retried by the table-level retry loop.
 */
export class KeyConflictError extends Error {
  constructor(
    readonly key: string,
    readonly expected: string | null,
    readonly actual: string | null,
    readonly catalogPath: string,
  ) {
    super(
      `commit key ${key} in ${catalogPath}: expected ${expected === null ? '(absent)' : expected}, found ${actual === null ? '(absent)' : actual} — nothing of this commit was applied`,
    );
    this.name = 'KeyConflictError';
  }
}

export class NoSuchTableError extends Error {
  constructor(readonly ident: TableIdent, catalogPath: string) {
    super(`no table ${identToString(ident)} in catalog ${catalogPath}`);
    this.name = 'NoSuchTableError';
  }
}

export class NoSuchNamespaceError extends Error {
  constructor(readonly namespace: string[], catalogPath: string) {
    super(`no namespace '${nsToString(namespace)}' in catalog ${catalogPath}`);
    this.name = 'NoSuchNamespaceError';
  }
}

export class AlreadyExistsError extends Error {
  constructor(readonly what: string, catalogPath: string) {
    super(`${what} already exists in catalog ${catalogPath}`);
    this.name = 'AlreadyExistsError';
  }
}

export class NamespaceNotEmptyError extends Error {
  constructor(readonly namespace: string[], tables: number, children: number, catalogPath: string) {
    super(
      `namespace '${nsToString(namespace)}' in ${catalogPath} is not empty: it holds ${tables} table(s) ` +
        `and ${children} child namespace(s) — not dropped`,
    );
    this.name = 'NamespaceNotEmptyError';
  }
}

// ---------------------------------------------------------------------------
// Public shapes

/** One table's pointer move. expected null = create (must not exist); next null = drop. */
/** `next === expected` asserts the table is unchanged within the commit, without changing it. */
export interface TableChange {
  ident: TableIdent;
  expected: string | null;
  next: string | null;
}

/**
 * A commit key's compare-and-swap: the key must hold `expected` (null =
 * absent); it is then set to `next` (null = removed; undefined = left as is,
 * an assertion only).
 */
export interface KeyChange {
  key: string;
  expected: string | null;
  next?: string | null;
}

export interface LoadedPointer {
  metadataLocation: string;
  previousMetadataLocation: string | null;
}

export interface GenerationEntry {
  generation: bigint;
  timeMs: number;
  note: string | null;
  /** The generation records pointers another engine moved (observed by Mimir, not made by it). */
  foreign: boolean;
  /** metadataLocation null = the table was dropped in this generation. */
  tables: { ident: TableIdent; metadataLocation: string | null }[];
}

export interface Lease {
  id: bigint;
  /** Push the expiry to now + ttl; throws if the lease already expired and was swept. */
  renew(): void;
  /**
   * Remove the lease; idempotent. Never throws: a lease that cannot be removed
   * (the disk is full) is left to expire — it is swept once its ttl passed or
   * its process is gone — and the failure is returned for the caller to report.
   */
  end(): CatalogWriteError | undefined;
}

/** A table whose pointer another engine moved since the log last saw it. */
export interface ForeignMove {
  ident: TableIdent;
  /** Where the log last had it (null: never logged, or logged as dropped). */
  logged: string | null;
  /** Where the catalog has it now (null: dropped). */
  current: string | null;
}

export interface LeaseInfo {
  id: bigint;
  pid: number;
  host: string;
  releaseBase: bigint;
  startedMs: number;
  expiresMs: number;
  note: string | null;
}

/** A catalog of Iceberg tables with Mimir's generation log, leases and commit keys. */
export interface Catalog {
  /** The catalog name (the `catalog_name` column). */
  readonly name: string;
  /** Where the catalog is, for messages: a file path, or a server URI without its password. */
  readonly path: string;
  /** Opened without writing anything: no DDL, no lease, no sweep. */
  readonly readOnly: boolean;
  /** Opened to read: leases are written, nothing else. */
  readonly reader: boolean;
  /** Read from an in-memory copy (SQLite only: its folder is not writable). */
  readonly snapshotRead: boolean;
  /** The implementation, for messages and `mimir lake info`. */
  readonly kind: 'sqlite' | 'postgresql';

  close(): void;
  /** Every catalog name the store holds tables or namespaces for, sorted. */
  catalogNames(): string[];

  createNamespace(ns: string[], props?: Record<string, string>): void;
  listNamespaces(): string[][];
  namespaceExists(ns: string[]): boolean;
  namespaceProperties(ns: string[]): Record<string, string>;
  dropNamespace(ns: string[]): void;

  listTables(ns: string[]): TableIdent[];
  listAllTables(): TableIdent[];
  /** The table's current pointer, or undefined when there is no such table. */
  loadTable(ident: TableIdent): LoadedPointer | undefined;
  /** Like loadTable, but throws NoSuchTableError. */
  requireTable(ident: TableIdent): LoadedPointer;
  /**
   * Apply every change or none, with `keys` compare-and-swapped in the same
   * transaction; returns the new generation. Throws CommitConflictError,
   * KeyConflictError, AlreadyExistsError or NoSuchNamespaceError, and then
   * nothing changed.
   */
  commit(changes: TableChange[], note?: string, keys?: KeyChange[]): bigint;
  /** The generation after `after` whose note is `note`, if one landed. */
  generationNoted(note: string, after: bigint): bigint | undefined;
  /** Values of `keys` (absent ones missing) and the generation they were read at, in one read. */
  readKeys(keys: readonly string[]): { generation: bigint; values: Map<string, string> };

  /** The current generation (0 for a new catalog). */
  pointerGeneration(): bigint;
  /** Generations newest first: at most `limit` (default 100), all below `before` when given. */
  generations(opts?: { limit?: number; before?: bigint }): GenerationEntry[];
  /** identToString -> metadata location of every table as of `generation`. */
  pointersAt(generation: bigint): Map<string, string>;
  /** One table's entry of `pointersAt(generation)` (undefined: none). */
  pointerAt(ident: TableIdent, generation: bigint): string | undefined;
  /** The last generation committed at or before `timeMs` (0 if none). */
  generationAt(timeMs: number): bigint;
  /** Metadata locations a read of the table as of `generation` or later may need. */
  metadataLocationsSince(ident: TableIdent, generation: bigint): string[];
  /** Every metadata location ever recorded for the table, oldest first. */
  everMetadataLocations(ident: TableIdent): string[];
  /** The table's logged locations after `generation`, oldest first (null: dropped). */
  loggedLocationsAfter(ident: TableIdent, generation: bigint): { generation: bigint; metadataLocation: string | null }[];

  /** Tables whose pointer another engine moved since the log last saw them. */
  foreignMoves(): ForeignMove[];
  /** Record the foreign moves as one generation marked foreign; undefined when none. */
  recordForeignCommits(): bigint | undefined;

  /** A property of this catalog; undefined when unset. */
  property(key: string): string | undefined;
  /** Set (or, with undefined, remove) a property of this catalog. */
  setProperty(key: string, value: string | undefined): void;

  /** Announce a commit in flight (see Lease). */
  beginLease(opts: { releaseBase: bigint; note?: string; ttlMs?: number }): Lease;
  /** Leases not ended, not expired and (on this host) held by a live process; sweeps the others when writable. */
  liveLeases(): LeaseInfo[];
}
