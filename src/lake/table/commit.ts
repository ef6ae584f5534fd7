// Optimistic commits. A change is a `TableUpdate`: given the table's current
// metadata it produces the next metadata (writing any manifests it needs).
// The commit writes the new metadata file, then compare-and-swaps the
// catalog pointer of every table in the commit in one catalog transaction.
// On a conflict it reloads, re-applies the update on the new base (updates
// reuse the data files and manifests they already wrote) and tries again,
// with bounded, jittered exponential backoff.
//
// Commit keys (`keys`) are compare-and-swapped in the same catalog
// transaction; a stale key (KeyConflictError) is not retried here: what the
// caller derived its change from is stale, and only the caller can derive it
// again. The attempt's files and the shared manifests are removed then.
//
// Crash story: nothing is visible until the catalog transaction lands; files
// of a failed or abandoned attempt are unreferenced and removed here when
// possible, else by orphan removal later (which never touches files of
// commits in flight: see `CommitHooks`).
//
// Metadata history: each new metadata file logs its base in `metadata-log`,
// trimmed to `write.metadata.previous-versions-max` (default 100). With
// `write.metadata.delete-after-commit.enabled=true` the files trimmed off are
// deleted once the commit landed, as Iceberg defines it — except one a live
// lease's generation still points at (a pinned reader, a commit in flight).
// A crash before that leaves them to gc.
import { randomUUID } from 'node:crypto';
import type { FileIO } from '../io/fileio.ts';
import type { TableMetadata } from '../spec/types.ts';
import { parseTableMetadata, serializeTableMetadata } from '../spec/metadata.ts';
import { CommitConflictError, type KeyChange, type Catalog, type TableIdent, identToString } from '../catalog/catalog.ts';
import { crashPoint } from '../testing/crash.ts';
import { cachedRead } from '../io/read-cache.ts';

/** One table's change; `apply` may be called once per attempt. */
export interface TableUpdate {
  /** The next metadata, built on `base`. Throws `ValidationError` when the change no longer applies. */
  apply(base: TableMetadata, attempt: number): Promise<TableMetadata>;
  /** Files written for this attempt only (removed if the attempt loses). */
  attemptFiles(): string[];
  /** Files written once and reused across attempts (removed if the commit finally fails). */
  sharedFiles(): string[];
}

/** The change can never apply (a file it replaces is gone, …): not retried. */
export class ValidationError extends Error {}

/** Called around each attempt so a caller can register commits in flight. */
export interface CommitHooks {
  /** Before any file of the attempt is written; returns a function called when the attempt ends. */
  begin?(releaseBase: bigint): () => void;
}

export interface RetryPolicy {
  retries: number;
  minWaitMs: number;
  maxWaitMs: number;
}

export function retryPolicy(props: Record<string, string>): RetryPolicy {
  const n = (k: string, d: number): number => {
    const v = props[k];
    const x = v === undefined ? NaN : Number(v);
    return Number.isFinite(x) && x >= 0 ? x : d;
  };
  // more retries than Java's default 4: an embedded lake sees several local
  // writers hammering one table, and a retry here is cheap (manifests reused)
  return { retries: n('commit.retry.num-retries', 20), minWaitMs: n('commit.retry.min-wait-ms', 5), maxWaitMs: n('commit.retry.max-wait-ms', 2000) };
}

export interface CommitTarget {
  ident: TableIdent;
  io: FileIO;
  update: TableUpdate;
  /**
   * Assert only: `update.apply` checks the base (throwing ValidationError when
   * it no longer holds) and the commit asserts the table's pointer unchanged,
   * writing no new metadata for it.
   */
  assertOnly?: boolean;
}

/** An assert-only check of a table's current metadata. */
export function checkUpdate(check: (base: TableMetadata) => void): TableUpdate {
  return metadataUpdate((base) => {
    check(base);
    return base;
  });
}

export interface Committed {
  generation: bigint;
  /** New metadata location and metadata per table, in the order given. */
  tables: { ident: TableIdent; metadataLocation: string; metadata: TableMetadata }[];
}

/** The metadata location and content of a table as the catalog has it now. */
export async function loadCurrent(catalog: Catalog, io: FileIO, ident: TableIdent): Promise<{ location: string; metadata: TableMetadata }> {
  const p = catalog.loadTable(ident);
  if (!p) throw new Error(`table ${identToString(ident)} does not exist in the catalog ${catalog.path}`);
  return { location: p.metadataLocation, metadata: await readMetadata(io, p.metadataLocation) };
}

export async function readMetadata(io: FileIO, location: string): Promise<TableMetadata> {
  // parsed once per file for a reader with a read cache (a metadata file never changes)
  return cachedRead(io, `metadata ${location}`, async () => {
    const bytes = await io.readAll(location);
    let text: string;
    if (location.endsWith('.gz.metadata.json') || location.endsWith('.metadata.json.gz')) {
      const { gunzipSync } = await import('node:zlib');
      text = gunzipSync(bytes).toString('utf8');
    } else text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    return { value: parseTableMetadata(text, location), fileBytes: bytes.length };
  });
}

/** `<location>/metadata/<V+1>-<uuid>.metadata.json`, V taken from the base file name. */
export function nextMetadataLocation(m: TableMetadata, baseLocation: string | null): string {
  let v = 0;
  if (baseLocation) {
    const name = baseLocation.slice(baseLocation.lastIndexOf('/') + 1);
    const mm = /^(\d+)-/.exec(name) ?? /^v(\d+)\./.exec(name);
    v = mm ? Number(mm[1]) + 1 : m.metadataLog.length + 1;
  }
  return `${m.location.replace(/\/+$/, '')}/metadata/${String(v).padStart(5, '0')}-${randomUUID()}.metadata.json`;
}

/** Append the base file to the metadata log (trimmed to previous-versions-max). */
export function withMetadataLog(next: TableMetadata, base: TableMetadata, baseLocation: string): TableMetadata {
  const max = Number(next.properties['write.metadata.previous-versions-max'] ?? '100');
  const log = [...base.metadataLog, { timestampMs: base.lastUpdatedMs, metadataFile: baseLocation }];
  return { ...next, metadataLog: log.slice(Math.max(0, log.length - (Number.isFinite(max) && max > 0 ? max : 100))) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Commit updates to one or more tables atomically (one catalog transaction),
 * retrying on conflicts.
 */
export async function commitTables(
  catalog: Catalog, targets: CommitTarget[], opts: { hooks?: CommitHooks; note?: string; keys?: KeyChange[] } = {},
): Promise<Committed> {
  if (targets.length === 0) throw new Error('commitTables: nothing to commit');
  const first = await loadCurrent(catalog, targets[0]!.io, targets[0]!.ident);
  const policy = retryPolicy(first.metadata.properties);
  let lastConflict: unknown;
  // one in-flight registration for the whole commit: files of an attempt that
  // lost are reused by the next one, so they stay protected between attempts
  const end = opts.hooks?.begin?.(catalog.pointerGeneration());
  try {
    for (let attempt = 0; attempt <= policy.retries; attempt++) {
      const written: { io: FileIO; path: string }[] = [];
      let landed = false;
      try {
        const bases = await Promise.all(targets.map((t, i) => (i === 0 && attempt === 0 ? first : loadCurrent(catalog, t.io, t.ident))));
        const results: Committed['tables'] = [];
        const changes = [];
        for (let i = 0; i < targets.length; i++) {
          const t = targets[i]!;
          const base = bases[i]!;
          if (!t.assertOnly && base.metadata.formatVersion > 2) {
            throw new ValidationError(
              `${identToString(t.ident)} is an Iceberg format v${base.metadata.formatVersion} table; Mimir writes format v2 only ` +
                `(a v3 writer must assign row lineage ids and write deletion vectors) — nothing written`,
            );
          }
          let next = await t.update.apply(base.metadata, attempt);
          for (const f of t.update.attemptFiles()) written.push({ io: t.io, path: f });
          if (t.assertOnly) {
            changes.push({ ident: t.ident, expected: base.location, next: base.location });
            results.push({ ident: t.ident, metadataLocation: base.location, metadata: base.metadata });
            continue;
          }
          next = withMetadataLog({ ...next, lastUpdatedMs: BigInt(Date.now()) }, base.metadata, base.location);
          const loc = nextMetadataLocation(next, base.location);
          await t.io.writeNew(loc, serializeTableMetadata(next));
          written.push({ io: t.io, path: loc });
          crashPoint('lake:metadata-written');
          changes.push({ ident: t.ident, expected: base.location, next: loc });
          results.push({ ident: t.ident, metadataLocation: loc, metadata: next });
        }
        crashPoint('lake:before-catalog-commit');
        try {
          const generation = catalog.commit(changes, opts.note, opts.keys);
          crashPoint('lake:after-catalog-commit');
          landed = true;
          // landed: nothing after this may fail the commit (its files must not be cleaned up)
          await deleteDroppedMetadata(catalog, targets, bases, results).catch(() => undefined);
          return { generation, tables: results };
        } catch (e) {
          if (!(e instanceof CommitConflictError)) throw e;
          lastConflict = e;
        }
      } catch (e) {
        // an update whose apply threw (a replace of files no longer live) may have written some of this
        // attempt's files already: they are not in `written` yet (files of earlier attempts, listed again
        // by updates not applied in this one, are gone already: deleting them again is a no-op)
        for (const t of targets) for (const f of t.update.attemptFiles()) written.push({ io: t.io, path: f });
        await cleanup(written);
        await cleanupShared(targets);
        throw e;
      }
      if (!landed) await cleanup(written);
      const wait = Math.min(policy.maxWaitMs, policy.minWaitMs * 2 ** Math.min(attempt, 16));
      await sleep(wait / 2 + Math.random() * wait);
    }
  } finally {
    end?.();
  }
  await cleanupShared(targets);
  throw new Error(
    `commit to ${targets.map((t) => identToString(t.ident)).join(', ')} failed after ${policy.retries + 1} attempts: ${(lastConflict as Error)?.message ?? 'conflict'}`,
  );
}

/** Whether a table's properties ask for metadata files trimmed off the log to be deleted at commit. */
export function deleteAfterCommit(props: Record<string, string>): boolean {
  return (props['write.metadata.delete-after-commit.enabled'] ?? 'false').trim().toLowerCase() === 'true';
}

/**
 * `write.metadata.delete-after-commit.enabled`: delete the metadata files the
 * landed commit trimmed off each table's metadata-log, keeping any a live
 * lease's generation reads. Best effort: what is left is gc's.
 */
async function deleteDroppedMetadata(
  catalog: Catalog,
  targets: CommitTarget[],
  bases: { location: string; metadata: TableMetadata }[],
  results: Committed['tables'],
): Promise<void> {
  let leased: Set<string> | undefined;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    const next = results[i]!;
    if (t.assertOnly || !deleteAfterCommit(next.metadata.properties)) continue;
    const base = bases[i]!;
    const kept = new Set([next.metadataLocation, ...next.metadata.metadataLog.map((e) => e.metadataFile)]);
    const dropped = [...base.metadata.metadataLog.map((e) => e.metadataFile), base.location].filter((f) => !kept.has(f) && f.endsWith('.metadata.json'));
    if (dropped.length === 0) continue;
    if (!leased) {
      leased = new Set();
      for (const l of catalog.liveLeases()) {
        if (l.releaseBase <= catalog.pointerGeneration()) for (const loc of catalog.pointersAt(l.releaseBase).values()) leased.add(loc);
      }
    }
    for (const f of dropped) if (!leased.has(f)) await t.io.delete(f).catch(() => undefined);
  }
}

async function cleanup(files: { io: FileIO; path: string }[]): Promise<void> {
  for (const f of files) await f.io.delete(f.path).catch(() => undefined);
}
async function cleanupShared(targets: CommitTarget[]): Promise<void> {
  for (const t of targets) for (const f of t.update.sharedFiles()) await t.io.delete(f).catch(() => undefined);
}

/** An update that only changes metadata fields (properties, schema, spec). */
export function metadataUpdate(fn: (base: TableMetadata) => TableMetadata): TableUpdate {
  return {
    apply: async (base) => fn(base),
    attemptFiles: () => [],
    sharedFiles: () => [],
  };
}
