// The PostgreSQL catalog, synchronous as the Catalog interface is: each call
// is posted to the catalog's worker thread (worker.ts, which holds the `pg`
// connection and does the work: store.ts) and this thread blocks on a shared
// word until the answer is there (Atomics.wait, then receiveMessageOnPort).
// Why synchronous at all: catalog.ts. One call is one whole operation — a
// commit with all its compare-and-swaps is one call and one transaction.
//
// Invariant: calls are strictly one at a time (this thread is blocked during
// each), so the worker never sees two. The worker is unref'd: it never keeps
// the process alive, and a process that exits mid-call drops its connection,
// which rolls back its open transaction.
//
// Connection errors name the server (the URI without its password) and what
// was not done; a worker that does not answer within CALL_TIMEOUT_MS is
// reported as such and the call fails.
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { CatalogWriteError } from '../../disk-full.ts';
import {
  AlreadyExistsError,
  type Catalog,
  CommitConflictError,
  DEFAULT_LEASE_TTL_MS,
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
} from '../catalog.ts';
import type { OpenOptions } from '../sql-catalog.ts';
import type { OpenInfo, StoreOptions } from './store.ts';
import type { Call, Reply, SentError, WorkerData } from './worker.ts';

/** Longest wait for one answer (a commit may wait for others' locks first: the server's lock_timeout is shorter). */
const CALL_TIMEOUT_MS = 180_000;

/** The classes an answer's error may be rebuilt as (by name). */
const ERRORS: Record<string, { prototype: Error }> = {
  CommitConflictError,
  KeyConflictError,
  NoSuchTableError,
  NoSuchNamespaceError,
  AlreadyExistsError,
  NamespaceNotEmptyError,
  CatalogWriteError,
  RangeError,
};

function rebuild(sent: SentError): Error {
  const proto = ERRORS[sent.name]?.prototype ?? Error.prototype;
  const e = Object.create(proto) as Error;
  Object.assign(e, sent.fields);
  Object.defineProperty(e, 'message', { value: sent.message, writable: true, configurable: true });
  Object.defineProperty(e, 'name', { value: sent.name, writable: true, configurable: true });
  Error.captureStackTrace(e, rebuild);
  return e;
}

/** `postgresql://user:secret@host/db` -> `postgresql://user:***@host/db` (for messages). */
export function shownUri(uri: string): string {
  try {
    const u = new URL(uri);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return uri.replace(/:[^:@/]*@/, ':***@');
  }
}

/** How the worker is started: compiled (.js) directly; as TypeScript it registers tsx's loader first. */
function workerEntry(): URL {
  if (!import.meta.url.endsWith('.ts')) return new URL('./worker.js', import.meta.url);
  const entry = new URL('./worker.ts', import.meta.url);
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const boot = `import { register } from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(entry.href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`);
}

export class PgCatalog implements Catalog {
  readonly kind = 'postgresql';
  readonly name: string;
  readonly path: string;
  readonly readOnly: boolean;
  readonly reader: boolean;
  readonly snapshotRead = false;
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly word: Int32Array;
  private closed = false;

  private constructor(worker: Worker, port: MessagePort, word: Int32Array, opts: StoreOptions) {
    this.worker = worker;
    this.port = port;
    this.word = word;
    this.name = opts.name;
    this.path = opts.shown;
    this.readOnly = opts.readOnly;
    this.reader = opts.reader;
  }

  /** Connect to the database at `uri` and (unless read-only or a reader) create the tables when missing. */
  static open(uri: string, opts: OpenOptions = {}): PgCatalog {
    const readOnly = opts.readOnly === true;
    const store: StoreOptions = {
      uri,
      shown: shownUri(uri),
      name: opts.name ?? 'mimir',
      create: opts.create !== false && !readOnly,
      readOnly,
      reader: opts.reader === true && !readOnly,
    };
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    const data: WorkerData = { port: port2, flag, opts: store };
    const worker = new Worker(workerEntry(), { workerData: data, transferList: [port2] });
    worker.unref();
    port1.unref();
    const first = new PgCatalog(worker, port1, new Int32Array(flag), store);
    let info: OpenInfo;
    try {
      info = first.call<OpenInfo>('open', []);
    } catch (e) {
      first.close();
      throw e;
    }
    if (info.reader === store.reader) return first;
    // a reader of a catalog not yet in the current layout was opened as a writer (as SQLite's)
    (first as { reader: boolean }).reader = info.reader;
    return first;
  }

  /** One call to the worker, blocking until its answer. */
  private call<R>(op: string, args: unknown[]): R {
    if (this.closed) throw new Error(`${op}: the PostgreSQL catalog ${this.path} was closed — nothing done`);
    const seen = Atomics.load(this.word, 0);
    const message: Call = { op, args };
    this.port.postMessage(message);
    const deadline = Date.now() + CALL_TIMEOUT_MS;
    for (;;) {
      const got = receiveMessageOnPort(this.port);
      if (got !== undefined) return this.answer<R>(got.message as Reply);
      if (Date.now() >= deadline) {
        throw new Error(`${op}: the PostgreSQL catalog ${this.path} gave no answer in ${CALL_TIMEOUT_MS / 1000} s — its outcome is unknown`);
      }
      Atomics.wait(this.word, 0, seen, 1000);
    }
  }

  private answer<R>(reply: Reply): R {
    if (!reply.ok) throw rebuild(reply.error);
    if (reply.error !== undefined) return rebuild(reply.error) as R;
    return reply.value as R;
  }

  close(): void {
    if (this.closed) return;
    try {
      this.call('close', []);
    } catch {
      // the connection is gone either way
    }
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }

  catalogNames(): string[] {
    return this.call('catalogNames', []);
  }

  createNamespace(ns: string[], props: Record<string, string> = {}): void {
    this.call('createNamespace', [ns, props]);
  }

  listNamespaces(): string[][] {
    return this.call('listNamespaces', []);
  }

  namespaceExists(ns: string[]): boolean {
    return this.call('namespaceExists', [ns]);
  }

  namespaceProperties(ns: string[]): Record<string, string> {
    return this.call('namespaceProperties', [ns]);
  }

  dropNamespace(ns: string[]): void {
    this.call('dropNamespace', [ns]);
  }

  listTables(ns: string[]): TableIdent[] {
    return this.call('listTables', [ns]);
  }

  listAllTables(): TableIdent[] {
    return this.call('listAllTables', []);
  }

  loadTable(ident: TableIdent): LoadedPointer | undefined {
    return this.call('loadTable', [ident]);
  }

  requireTable(ident: TableIdent): LoadedPointer {
    return this.call('requireTable', [ident]);
  }

  commit(changes: TableChange[], note?: string, keys: KeyChange[] = []): bigint {
    return this.call('commit', [changes, note, keys]);
  }

  generationNoted(note: string, after: bigint): bigint | undefined {
    return this.call('generationNoted', [note, after]);
  }

  readKeys(keys: readonly string[]): { generation: bigint; values: Map<string, string> } {
    return this.call('readKeys', [[...keys]]);
  }

  pointerGeneration(): bigint {
    return this.call('pointerGeneration', []);
  }

  generations(opts: { limit?: number; before?: bigint } = {}): GenerationEntry[] {
    return this.call('generations', [opts]);
  }

  pointersAt(generation: bigint): Map<string, string> {
    return this.call('pointersAt', [generation]);
  }

  pointerAt(ident: TableIdent, generation: bigint): string | undefined {
    return this.call('pointerAt', [ident, generation]);
  }

  generationAt(timeMs: number): bigint {
    return this.call('generationAt', [timeMs]);
  }

  metadataLocationsSince(ident: TableIdent, generation: bigint): string[] {
    return this.call('metadataLocationsSince', [ident, generation]);
  }

  everMetadataLocations(ident: TableIdent): string[] {
    return this.call('everMetadataLocations', [ident]);
  }

  loggedLocationsAfter(ident: TableIdent, generation: bigint): { generation: bigint; metadataLocation: string | null }[] {
    return this.call('loggedLocationsAfter', [ident, generation]);
  }

  foreignMoves(): ForeignMove[] {
    return this.call('foreignMoves', []);
  }

  recordForeignCommits(): bigint | undefined {
    return this.call('recordForeignCommits', []);
  }

  property(key: string): string | undefined {
    return this.call('property', [key]);
  }

  setProperty(key: string, value: string | undefined): void {
    this.call('setProperty', [key, value]);
  }

  beginLease(opts: { releaseBase: bigint; note?: string; ttlMs?: number }): Lease {
    const ttl = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    const note = opts.note ?? null;
    const id = this.call<bigint>('beginLease', [opts.releaseBase, note, ttl]);
    let ended = false;
    return {
      id,
      renew: () => {
        if (!this.call<boolean>('renewLease', [id, ttl])) throw new Error(`lease ${id} in ${this.path} cannot be renewed: it ended or expired and was swept`);
      },
      end: () => {
        if (ended || this.closed) return undefined;
        let failed: CatalogWriteError | undefined;
        try {
          failed = this.call<CatalogWriteError | undefined>('endLease', [id, note]);
        } catch (e) {
          failed = new CatalogWriteError(`end lease ${id}`, this.path, 'error', (e as Error).message, ' — the lease is left to expire');
        }
        if (failed === undefined) ended = true;
        return failed;
      },
    };
  }

  liveLeases(): LeaseInfo[] {
    return this.call('liveLeases', []);
  }
}
