// Disk full: how a failure for lack of space (ENOSPC, EDQUOT from the file
// system; SQLITE_FULL from the catalog) is recognised wherever it is caught,
// and which file and operation it names — so that a caller can say "disk full
// while writing <file> (<operation>)" and what it did or did not keep, never
// the bare "database or disk is full".
//
// Invariant: `diskFull` only reads an error; it never decides what to delete.
// Whether a run landed is the catalog's to say (log/run.ts), not the error's.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { IoError } from './io/fileio.ts';

/** A catalog write (a commit, a lease, a property) that SQLite refused: the catalog file, the operation and SQLite's code. */
export class CatalogWriteError extends Error {
  constructor(
    readonly op: string,
    readonly file: string,
    readonly code: string,
    reason: string,
    /** What was (not) done, appended to the message. */
    outcome = '',
    /** The failure is for lack of space (SQLITE_FULL, or an I/O error on a full file system: `sqliteSpaceError`). */
    readonly full = code === 'SQLITE_FULL',
  ) {
    super(
      full
        ? `disk full while writing ${file} (${op}): ${code} (${reason})${outcome}`
        : `${op} in catalog ${file} failed: ${code} (${reason})${outcome}`,
    );
    this.name = 'CatalogWriteError';
  }
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/** The file and operation of a disk-full failure; undefined when `e` is not one. */
export function diskFull(e: unknown): { file: string; op: string } | undefined {
  if (e instanceof CatalogWriteError) return e.full ? { file: e.file, op: e.op } : undefined;
  if (e instanceof IoError) return FULL_CODES.has(e.code ?? '') ? { file: e.path, op: e.op } : undefined;
  const err = e as { code?: unknown; path?: unknown; syscall?: unknown } | undefined;
  if (typeof err?.code !== 'string' || !FULL_CODES.has(err.code)) return undefined;
  return {
    file: typeof err.path === 'string' ? err.path : err.code === 'SQLITE_FULL' ? 'the catalog' : 'a file',
    op: typeof err.syscall === 'string' ? err.syscall : 'write',
  };
}

/** Below this many bytes free, an I/O error of SQLite's (it does not say ENOSPC) is taken for lack of space. */
const NEARLY_FULL_BYTES = 256 * 1024;

/**
 * Is SQLite's error `e`, met on the catalog file `file`, a lack of space?
 * SQLITE_FULL says so; growing the shared-memory file (`-shm`, made at the
 * first open of a WAL database) fails as SQLITE_IOERR_SHMSIZE; other I/O
 * errors count when the file system holding `file` is (nearly) full.
 */
export function sqliteSpaceError(e: unknown, file: string): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string') return false;
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_SHMSIZE') return true;
  if (!code.startsWith('SQLITE_IOERR')) return false;
  try {
    const s = statfsSync(dirname(file));
    return s.bavail * s.bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** "disk full while writing <file> (<op>)", or the error's own message when it is not a disk-full failure. */
export function describeFailure(e: unknown): string {
  const full = diskFull(e);
  const message = (e as Error)?.message ?? String(e);
  if (!full || message.startsWith('disk full while writing')) return message;
  return `disk full while writing ${full.file} (${full.op}): ${message}`;
}
