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
import { existsSync, promises as fs, constants as fsc } from 'node:fs';
import * as nodePath from 'node:path';
import { randomUUID } from 'node:crypto';
import { decodedLocalPath, isRelativePath, localPath } from './paths.ts';

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
async function readLocal<T>(path: string, local: string, read: (local: string) => Promise<T>): Promise<T> {
  try {
    return await read(local);
  } catch (e) {
    const decoded = (e as NodeJS.ErrnoException).code === 'ENOENT' && local === localPath(path) ? decodedLocalPath(path) : undefined;
    if (decoded === undefined) throw e;
    return read(decoded);
  }
}

class LocalInputFile implements InputFile {
  private handle: fs.FileHandle | undefined;
  private sizeCache: number | undefined;
  constructor(
    readonly path: string,
    private readonly local: string,
  ) {}
  private async fh(): Promise<fs.FileHandle> {
    if (!this.handle) this.handle = await readLocal(this.path, this.local, (l) => fs.open(l, 'r'));
    return this.handle;
  }
  async size(): Promise<number> {
    if (this.sizeCache === undefined) this.sizeCache = (await (await this.fh()).stat()).size;
    return this.sizeCache;
  }
  async read(start: number, end: number): Promise<Uint8Array> {
    const len = Math.max(0, end - start);
    const buf = new Uint8Array(len);
    let off = 0;
    const h = await this.fh();
    while (off < len) {
      const { bytesRead } = await h.read(buf, off, len - off, start + off);
      if (bytesRead === 0) throw new Error(`${this.path}: short read at ${start + off} (wanted ${len} bytes from ${start})`);
      off += bytesRead;
    }
    return buf;
  }
  async close(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    if (h) await h.close();
  }
}

export class LocalFileIO implements FileIO {
  constructor(private readonly resolve: PathResolver = defaultResolver) {}

  local(path: string): string {
    return this.resolve(path);
  }
  async open(path: string): Promise<InputFile> {
    return new LocalInputFile(path, this.resolve(path));
  }
  async readAll(path: string): Promise<Uint8Array> {
    return new Uint8Array(await readLocal(path, this.resolve(path), (l) => fs.readFile(l)));
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
    await fs.mkdir(dir, { recursive: true });
    const tmp = nodePath.join(dir, `.${nodePath.basename(target)}.${randomUUID()}.tmp`);
    const h = await fs.open(tmp, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, 0o644);
    try {
      await h.writeFile(data);
      await h.sync();
    } finally {
      await h.close();
    }
    try {
      if (exclusive) {
        // link fails with EEXIST if the target exists: an atomic create-if-absent
        await fs.link(tmp, target);
        await fs.unlink(tmp);
      } else {
        await fs.rename(tmp, target);
      }
    } catch (e) {
      await fs.unlink(tmp).catch(() => undefined);
      throw e;
    }
  }
  async exists(path: string): Promise<boolean> {
    try {
      await readLocal(path, this.resolve(path), (l) => fs.access(l));
      return true;
    } catch {
      return false;
    }
  }
  async list(dir: string): Promise<FileInfo[]> {
    const root = this.resolve(dir);
    const out: FileInfo[] = [];
    // entries are shown in the form of `dir` (a `file:` URL stays one), names taken literally
    const walk = async (local: string, shown: string): Promise<void> => {
      let ents;
      try {
        ents = await fs.readdir(local, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
      for (const ent of ents) {
        const l = nodePath.join(local, ent.name);
        const s = shown.endsWith('/') ? shown + ent.name : `${shown}/${ent.name}`;
        if (ent.isDirectory()) await walk(l, s);
        else if (ent.isFile()) {
          const st = await fs.stat(l);
          out.push({ path: s, size: st.size, mtimeMs: st.mtimeMs });
        }
      }
    };
    await walk(root, dir);
    return out;
  }
  async delete(path: string): Promise<void> {
    try {
      await fs.unlink(this.resolve(path));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}
