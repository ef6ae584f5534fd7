// The lake's FileIO: a root-rebasing, root-confined view of the local file
// system, so that a copied or moved lake folder is an independent lake.
//
// Why rebasing and not relative locations: Iceberg metadata holds absolute
// URIs (`file:///lake/mimir/t/data/…`), and every other engine (Spark, Trino,
// DuckDB, PyIceberg) resolves them as such. Writing relative locations would
// make our tables unreadable to them; rewriting every location on each move
// would make a `cp -a` unsafe until someone remembers to run it. So the
// metadata stays standard and absolute, the catalog records the root the lake
// was created at (catalog property `lake.root`), and this FileIO maps every
// path under that recorded root (or under a former root, after a relocation)
// onto the root the lake was opened at — for reads, writes and deletes alike.
// New files keep being named under the recorded root, so a lake's metadata
// never mixes two roots; `relocateLake` (maintenance/relocate.ts) rewrites it for
// other engines when a move is meant to last.
//
// Invariant: a write or delete whose mapped local path is not inside the
// opened root is refused (`OutsideLakeError`, naming the path) before any
// file-system call — Mimir never writes or deletes a file outside the lake it
// was opened at, whatever the metadata says. Containment of writes is lexical
// (normalised absolute paths): a symlink inside the lake that points out of it
// is followed, as the file system does.
//
// Reads: by default a path outside the root (no recorded root covers it) is
// read where it says, as any Iceberg reader would (a foreign table registered
// in the catalog may live elsewhere). With reads confined (`confineReads`,
// what `mimir serve` uses: a server must never hand out a file outside the
// lake, whatever a crafted metadata file names), every read — open, readAll,
// exists, list, and the decoded-name fallback of old lakes — is refused
// unless its local path is inside the root both lexically and after
// resolving symlinks (realpath, at the time of the read), and relative
// locations resolve against the root only (never the working directory).
//
// Object storage: `s3://` paths go to an S3FileIO (io/s3.ts; the SDK is
// loaded at the first such path). A lake with a warehouse (`s3://bucket/
// prefix`, Lake.open) writes and deletes only below it — the same
// confinement, one prefix instead of one folder — and with reads confined
// reads only below it too. Without a warehouse every s3:// write or delete
// is refused; reads of a foreign table's s3:// files go where they say.
import { realpathSync, promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { LocalFileIO, RefusedPathError, defaultResolver, relativeResolver, type FileIO, type FileInfo, type InputFile, type PathResolver } from './fileio.ts';
import { isRelativePath } from './paths.ts';
import { S3FileIO, isS3Path, isWithinS3 } from './s3.ts';

/** A write or delete that would leave the lake root, or a confined read outside it: refused, nothing done. */
export class OutsideLakeError extends RefusedPathError {
  constructor(
    readonly op: 'write' | 'delete' | 'read',
    readonly path: string,
    readonly local: string,
    readonly root: string,
  ) {
    super(
      `refusing to ${op} ${path}${local !== path ? ` (${local})` : ''}: it is outside the lake root ${root}, ` +
        (op === 'read'
          ? 'and this lake was opened with reads confined to it (mimir serve reads only files inside the lake it serves) — nothing read'
          : `and Mimir writes and deletes only inside the lake it opened — nothing ${op === 'delete' ? 'deleted' : 'written'}`),
    );
    this.name = 'OutsideLakeError';
  }
}

export interface LakeFileIOOptions {
  /** Refuse every read outside the opened root (see above); `confineReads()` turns it on later. */
  confineReads?: boolean;
  /** The object-storage prefix (`s3://bucket/prefix`) the lake's tables live under: writes and deletes there are the lake's. */
  warehouse?: string;
}

/** `a` equals `b` or lies under it (normalised absolute paths). */
export function isWithin(a: string, b: string): boolean {
  if (a === b) return true;
  const base = b.endsWith(nodePath.sep) ? b : b + nodePath.sep;
  return a.startsWith(base);
}

/** A local absolute path, normalised, without a trailing separator. */
function norm(p: string): string {
  const n = nodePath.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

export class LakeFileIO implements FileIO {
  /** The folder the lake was opened at (absolute, normalised). */
  readonly root: string;
  /** Roots whose paths map onto `root`: the recorded root first, then former ones. */
  readonly mapped: readonly string[];
  private readonly inner: LocalFileIO;
  private readonly relative: PathResolver;
  private readonly relativeInRoot: PathResolver;
  /** The root with symlinks resolved, once reads are confined. */
  private realRoot: string | undefined;
  /** Where the lake's tables live in object storage, if they do. */
  readonly warehouse: string | undefined;
  private objects: S3FileIO | undefined;

  /** `relativeBases`: folders relative locations (foreign tables) resolve against, first that holds the file. */
  constructor(openedRoot: string, recordedRoots: readonly string[] = [], relativeBases: string[] = [openedRoot], opts: LakeFileIOOptions = {}) {
    this.root = norm(nodePath.resolve(openedRoot));
    this.warehouse = opts.warehouse;
    this.mapped = recordedRoots.map((r) => norm(r)).filter((r) => r !== this.root);
    this.relative = relativeResolver(relativeBases);
    this.relativeInRoot = relativeResolver([this.root]);
    this.inner = new LocalFileIO(
      (p) => this.local(p),
      (local, path) => this.checkRead(local, path),
    );
    if (opts.confineReads) this.confineReads();
  }

  /** Reads through synchronous calls from now on (see fileio.ts#enableSyncReads: CLI questions only). */
  enableSyncReads(): void {
    this.inner.syncReads = true;
  }

  /** From now on, refuse every read outside the opened root (one way: there is no undoing it). */
  confineReads(): void {
    if (this.realRoot !== undefined) return;
    try {
      this.realRoot = norm(realpathSync(this.root));
    } catch {
      this.realRoot = this.root; // not there (yet): every read below it fails anyway
    }
  }

  /** Reads outside the opened root are refused. */
  get readsConfined(): boolean {
    return this.realRoot !== undefined;
  }

  /** The IO of s3:// paths (made at the first one). */
  private s3(): S3FileIO {
    return (this.objects ??= new S3FileIO());
  }

  /** An s3:// path the lake may write, delete or (reads confined) read: below its warehouse. */
  private s3Allowed(path: string): boolean {
    return this.warehouse !== undefined && isWithinS3(path, this.warehouse);
  }

  private confineS3(op: 'write' | 'delete' | 'read', path: string): void {
    if (!this.s3Allowed(path)) throw new OutsideLakeError(op, path, path, this.warehouse ?? this.root);
  }

  /** The s3:// IO for a read of `path` (checked when reads are confined), or undefined for a local path. */
  private s3Read(path: string): S3FileIO | undefined {
    if (!isS3Path(path)) return undefined;
    if (this.readsConfined) this.confineS3('read', path);
    return this.s3();
  }

  /** The local path a metadata path names here: rebased onto the opened root when under a recorded root (an s3:// path is itself). */
  local(path: string): string {
    if (isS3Path(path)) return path;
    if (isRelativePath(path)) return this.readsConfined ? this.relativeInRoot(path) : this.relative(path);
    const plain = defaultResolver(path);
    if (!nodePath.isAbsolute(plain)) return plain;
    const p = norm(plain);
    for (const r of this.mapped) {
      if (isWithin(p, r)) return p === r ? this.root : nodePath.join(this.root, p.slice(r.length + 1));
    }
    return p;
  }

  /** Whether a metadata path lands inside the opened root. */
  inside(path: string): boolean {
    if (isS3Path(path)) return this.s3Allowed(path);
    const l = this.local(path);
    return nodePath.isAbsolute(l) && isWithin(norm(l), this.root);
  }

  private confine(op: 'write' | 'delete', path: string): void {
    if (isS3Path(path)) return this.confineS3(op, path);
    const l = this.local(path);
    if (!nodePath.isAbsolute(l) || !isWithin(norm(l), this.root)) throw new OutsideLakeError(op, path, l, this.root);
  }

  /** With reads confined: `local` must lie inside the root, lexically and once its symlinks are resolved. */
  private async checkRead(local: string, path: string): Promise<void> {
    const realRoot = this.realRoot;
    if (realRoot === undefined) return;
    if (!nodePath.isAbsolute(local) || !isWithin(norm(local), this.root)) throw new OutsideLakeError('read', path, local, this.root);
    let real: string;
    try {
      real = norm(await fs.realpath(local));
    } catch {
      return; // absent (or unreadable): the read itself fails and says so
    }
    if (!isWithin(real, realRoot)) throw new OutsideLakeError('read', path, `${local} -> ${real}`, this.root);
  }

  async open(path: string): Promise<InputFile> {
    return (this.s3Read(path) ?? this.inner).open(path);
  }
  async readAll(path: string): Promise<Uint8Array> {
    return (this.s3Read(path) ?? this.inner).readAll(path);
  }
  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    this.confine('write', path);
    await (isS3Path(path) ? this.s3() : this.inner).writeAtomic(path, data);
  }
  async writeNew(path: string, data: Uint8Array | string): Promise<void> {
    this.confine('write', path);
    await (isS3Path(path) ? this.s3() : this.inner).writeNew(path, data);
  }
  async exists(path: string): Promise<boolean> {
    return (this.s3Read(path) ?? this.inner).exists(path);
  }
  async delete(path: string): Promise<void> {
    this.confine('delete', path);
    await (isS3Path(path) ? this.s3() : this.inner).delete(path);
  }

  /**
   * Every file below a folder, named as the metadata names them: under the
   * folder as given (a recorded-root path stays one, even though the files
   * read are those under the opened root).
   */
  async list(dir: string): Promise<FileInfo[]> {
    const objects = this.s3Read(dir);
    if (objects) return objects.list(dir);
    const shown = dir.replace(/\/+$/, '');
    const local = this.local(dir);
    const found = await this.inner.list(local);
    return found.map((f) => {
      const rel = f.path.slice(local.length).replace(/^\/+/, '');
      return { ...f, path: rel === '' ? shown : `${shown}/${rel}` };
    });
  }
}
