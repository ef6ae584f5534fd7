// Storage behind a small interface, so object storage can follow the local
// file system. Paths are the strings the metadata holds (`file:/…`, plain
// absolute paths, or foreign URIs such as `s3a://…`); a `PathResolver` maps
// them to local files (used to read fixtures written elsewhere) and the
// original strings are never rewritten. A `file:` path is taken literally
// (paths.ts): the scheme is stripped, nothing is percent-decoded, so a file
// is written exactly where its manifest says. Reads fall back to the decoded
// name only for lakes written before that rule (their files sit there).
//
// Crash story: `writeAtomic` writes a temporary sibling, fsyncs it and renames
// it into place, so a reader sees the whole file or none; `writeNew` does the
// same but refuses to replace an existing file.
//
// Errors: every failure of the file system is an `IoError` naming the
// operation and the local path (ENOSPC says which file could not be written),
// with the errno `code` kept for callers that test it (ENOENT, EEXIST).
import { closeSync, existsSync, fstatSync, openSync, promises as fs, constants as fsc, readFileSync, readSync } from 'node:fs';
import * as nodePath from 'node:path';
import { randomUUID } from 'node:crypto';
import { decodedLocalPath, isRelativePath, localPath } from './paths.ts';

/** A file-system failure: the operation, the local path and the errno code. */
export class IoError extends Error {
  readonly code: string | undefined;
  constructor(
    readonly op: string,
    readonly path: string,
    cause: unknown,
    detail?: string,
  ) {
    const e = cause as NodeJS.ErrnoException | undefined;
    const code = e?.code;
    // node's own message repeats the code and sometimes the path: keep its reason only
    const reason = (e?.message ?? String(cause)).replace(/^[A-Z]+: /, '').replace(/, \w+( '[^']*'( -> '[^']*')?)?$/, '');
    super(`cannot ${op} ${path}${detail ? ` (${detail})` : ''}: ${code ? `${code} (${reason})` : reason}`);
    this.name = 'IoError';
    this.code = code;
  }
}

/**
 * A path a FileIO refuses to touch (outside what it may read or write):
 * raised before any file-system call, never turned into an IoError, and never
 * taken by `exists` for an absent file.
 */
export class RefusedPathError extends Error {}

/**
 * Called with the local path of every read (`open`, `readAll`, `exists`,
 * `list`), and again with the decoded name when a read falls back to it,
 * before the file system is asked; it throws a RefusedPathError to refuse.
 */
export type ReadCheck = (local: string, path: string) => Promise<void>;

/** Run a file-system call, turning its failure into an IoError naming `op` and `path`. */
export async function io<T>(op: string, path: string, fn: () => Promise<T>, detail?: string): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof IoError || e instanceof RefusedPathError) throw e;
    throw new IoError(op, path, e, detail);
  }
}

export interface FileInfo {
  /** The path as given back by `list` (same form as the prefix given). */
  path: string;
  size: number;
  mtimeMs: number;
}

export interface InputFile {
  readonly path: string;
  size(): Promise<number>;
  /** Bytes [start, end). */
  read(start: number, end: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

export interface FileIO {
  open(path: string): Promise<InputFile>;
  readAll(path: string): Promise<Uint8Array>;
  /** Write whole-or-nothing, replacing any existing file. */
  writeAtomic(path: string, data: Uint8Array | string): Promise<void>;
  /** Write whole-or-nothing; fails with code EEXIST if the file exists. */
  writeNew(path: string, data: Uint8Array | string): Promise<void>;
  exists(path: string): Promise<boolean>;
  /** Every file below a directory, recursively. */
  list(dir: string): Promise<FileInfo[]>;
  /** Delete a file; a missing file is not an error. */
  delete(path: string): Promise<void>;
}

/** Maps metadata path strings to local paths. */
export type PathResolver = (path: string) => string;

/** `file:///x`, `file:/x` and `/x` to `/x`, literally (never percent-decoded); anything else unchanged. */
export function defaultResolver(path: string): string {
  return localPath(path);
}

/**
 * Relative paths (`data/…`, `file://data/…`) resolved against the first of
 * `bases` under which the file exists (the first base when none has it);
 * every other path through `inner`.
 */
export function relativeResolver(bases: string[], inner: PathResolver = defaultResolver): PathResolver {
  if (bases.length === 0) throw new Error('relativeResolver: expected at least one base folder');
  return (path: string) => {
    if (!isRelativePath(path)) return inner(path);
    const rel = localPath(path);
    for (const b of bases) {
      const p = nodePath.resolve(b, rel);
      if (existsSync(p)) return p;
    }
    return nodePath.resolve(bases[0]!, rel);
  };
}

/**
 * A resolver that maps every path starting with `fromPrefix` (a table location
 * written elsewhere) to `toDir`. Scheme variants s3/s3a/s3n are treated alike.
 */
export function prefixResolver(fromPrefix: string, toDir: string): PathResolver {
  const norm = (p: string): string => p.replace(/^s3[an]?:\/\//, 's3://').replace(/\/+$/, '');
  const from = norm(fromPrefix);
  return (path: string) => {
    const p = norm(path);
    if (p === from) return toDir;
    if (p.startsWith(from + '/')) return nodePath.join(toDir, p.slice(from.length + 1));
    return defaultResolver(path);
  };
}

/** Run a read on the literal local path, then (lakes written before paths were literal) on the decoded one. */
async function readLocal<T>(path: string, local: string, read: (local: string) => Promise<T>, check?: ReadCheck): Promise<T> {
  try {
    if (check) await check(local, path);
    return await read(local);
  } catch (e) {
    const decoded = (e as NodeJS.ErrnoException).code === 'ENOENT' && local === localPath(path) ? decodedLocalPath(path) : undefined;
    if (decoded === undefined) throw e;
    if (check) await check(decoded, path);
    return read(decoded);
  }
}

class LocalInputFile implements InputFile {
  /** The open handle, shared by reads that start together (a second open would leak a handle). */
  private handle: Promise<fs.FileHandle> | undefined;
  private sizeCache: number | undefined;
  constructor(
    readonly path: string,
    private readonly local: string,
    private readonly check: ReadCheck | undefined,
  ) {}
  private fh(): Promise<fs.FileHandle> {
    if (!this.handle) {
      const opening = io('open for reading', this.local, () => readLocal(this.path, this.local, (l) => fs.open(l, 'r'), this.check));
      this.handle = opening;
      // a failed open is not kept: the next read tries again (and reports its own error)
      opening.catch(() => {
        if (this.handle === opening) this.handle = undefined;
      });
    }
    return this.handle;
  }
  async size(): Promise<number> {
    if (this.sizeCache === undefined) {
      const h = await this.fh();
      this.sizeCache = (await io('stat', this.local, () => h.stat())).size;
    }
    return this.sizeCache;
  }
  async read(start: number, end: number): Promise<Uint8Array> {
    const len = Math.max(0, end - start);
    const buf = new Uint8Array(len);
    let off = 0;
    const h = await this.fh();
    while (off < len) {
      const { bytesRead } = await io('read', this.local, () => h.read(buf, off, len - off, start + off));
      if (bytesRead === 0) throw new Error(`${this.path}: short read at ${start + off} (wanted ${len} bytes from ${start}; the file ends before)`);
      off += bytesRead;
    }
    return buf;
  }
  async close(): Promise<void> {
    const opening = this.handle;
    this.handle = undefined;
    const h = opening && (await opening.catch(() => undefined));
    if (h) await io('close', this.local, () => h.close());
  }
}

/**
 * The same reads made with synchronous calls (see enableSyncReads): no trip
 * through libuv's thread pool per open, stat, read and close, and node's
 * promise-based file module is not loaded. Same results and errors.
 */
class SyncInputFile implements InputFile {
  /** The descriptor, shared by reads that start together (one open). */
  private fd: Promise<number> | undefined;
  private sizeCache: number | undefined;
  constructor(
    readonly path: string,
    private readonly local: string,
    private readonly check: ReadCheck | undefined,
  ) {}
  private descriptor(): Promise<number> {
    if (!this.fd) {
      const opening = io('open for reading', this.local, () => readLocal(this.path, this.local, async (l) => openSync(l, 'r'), this.check));
      this.fd = opening;
      opening.catch(() => {
        if (this.fd === opening) this.fd = undefined;
      });
    }
    return this.fd;
  }
  async size(): Promise<number> {
    if (this.sizeCache === undefined) {
      const fd = await this.descriptor();
      this.sizeCache = await io('stat', this.local, async () => fstatSync(fd).size);
    }
    return this.sizeCache;
  }
  async read(start: number, end: number): Promise<Uint8Array> {
    const len = Math.max(0, end - start);
    const buf = new Uint8Array(len);
    let off = 0;
    const fd = await this.descriptor();
    while (off < len) {
      const bytesRead = await io('read', this.local, async () => readSync(fd, buf, off, len - off, start + off));
      if (bytesRead === 0) throw new Error(`${this.path}: short read at ${start + off} (wanted ${len} bytes from ${start}; the file ends before)`);
      off += bytesRead;
    }
    return buf;
  }
  async close(): Promise<void> {
    const opening = this.fd;
    this.fd = undefined;
    const fd = opening && (await opening.catch(() => undefined));
    if (fd !== undefined) await io('close', this.local, async () => closeSync(fd));
  }
}

export class LocalFileIO implements FileIO {
  /** Reads with synchronous calls (enableSyncReads): for a process that answers one question and exits. */
  syncReads = false;
  /** `check`: asked before every read (see ReadCheck); writes and deletes are the caller's to confine. */
  constructor(
    private readonly resolve: PathResolver = defaultResolver,
    private readonly check?: ReadCheck,
  ) {}

  local(path: string): string {
    return this.resolve(path);
  }
  async open(path: string): Promise<InputFile> {
    return this.syncReads ? new SyncInputFile(path, this.resolve(path), this.check) : new LocalInputFile(path, this.resolve(path), this.check);
  }
  async readAll(path: string): Promise<Uint8Array> {
    const local = this.resolve(path);
    const read = this.syncReads ? async (l: string) => readFileSync(l) : (l: string) => fs.readFile(l);
    return new Uint8Array(await io('read', local, () => readLocal(path, local, read, this.check)));
  }
  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    await this.write(path, data, false);
  }
  async writeNew(path: string, data: Uint8Array | string): Promise<void> {
    await this.write(path, data, true);
  }
  private async write(path: string, data: Uint8Array | string, exclusive: boolean): Promise<void> {
    const target = this.resolve(path);
    const dir = nodePath.dirname(target);
    await io('create the folder', dir, () => fs.mkdir(dir, { recursive: true }));
    const tmp = nodePath.join(dir, `.${nodePath.basename(target)}.${randomUUID()}.tmp`);
    const via = `through its temporary file ${nodePath.basename(tmp)}`;
    const h = await io('write', target, () => fs.open(tmp, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, 0o644), via);
    try {
      try {
        const n = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
        await io('write', target, () => h.writeFile(data), `${n} bytes, ${via}`);
        await io('write', target, () => h.sync(), `fsync of ${via}`);
      } finally {
        await io('write', target, () => h.close(), `close of ${via}`);
      }
      if (exclusive) {
        // link fails with EEXIST if the target exists: an atomic create-if-absent
        await io('create', target, () => fs.link(tmp, target));
        await fs.unlink(tmp).catch(() => undefined);
      } else {
        await io('replace', target, () => fs.rename(tmp, target));
      }
    } catch (e) {
      await fs.unlink(tmp).catch(() => undefined);
      throw e;
    }
  }
  async exists(path: string): Promise<boolean> {
    try {
      await readLocal(path, this.resolve(path), (l) => fs.access(l), this.check);
      return true;
    } catch (e) {
      if (e instanceof RefusedPathError) throw e;
      return false;
    }
  }
  async list(dir: string): Promise<FileInfo[]> {
    const root = this.resolve(dir);
    if (this.check) await this.check(root, dir);
    const out: FileInfo[] = [];
    // entries are shown in the form of `dir` (a `file:` URL stays one), names taken literally
    const walk = async (local: string, shown: string): Promise<void> => {
      let ents;
      try {
        ents = await io('list', local, () => fs.readdir(local, { withFileTypes: true }));
      } catch (e) {
        if ((e as IoError).code === 'ENOENT') return;
        throw e;
      }
      for (const ent of ents) {
        const l = nodePath.join(local, ent.name);
        const s = shown.endsWith('/') ? shown + ent.name : `${shown}/${ent.name}`;
        if (ent.isDirectory()) await walk(l, s);
        else if (ent.isFile()) {
          // a file that vanished between the listing and its stat (another writer's
          // temporary file renamed into place) is simply not listed
          let st;
          try {
            st = await io('stat', l, () => fs.stat(l));
          } catch (e) {
            if ((e as IoError).code === 'ENOENT') continue;
            throw e;
          }
          out.push({ path: s, size: st.size, mtimeMs: st.mtimeMs });
        }
      }
    };
    await walk(root, dir);
    return out;
  }
  async delete(path: string): Promise<void> {
    const local = this.resolve(path);
    try {
      await io('delete', local, () => fs.unlink(local));
    } catch (e) {
      if ((e as IoError).code !== 'ENOENT') throw e;
    }
  }
}

/**
 * Make the reads of `io` (a LocalFileIO, or an IO that reads through one and
 * offers `enableSyncReads`) synchronous calls wrapped in the same promises.
 * For a process that does one thing and exits — a CLI question: every open,
 * stat, read and close otherwise waits for a libuv pool thread and a wake-up
 * of the main thread (on a loaded machine, each a scheduling delay). Never
 * for a server, whose requests must not block each other. One way.
 */
export function enableSyncReads(io: FileIO): void {
  if (io instanceof LocalFileIO) io.syncReads = true;
  else (io as { enableSyncReads?: () => void }).enableSyncReads?.();
}
