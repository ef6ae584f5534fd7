// An opt-in cache of parsed immutable lake files, per FileIO: table metadata
// (metadata.json), manifest lists, manifests and Parquet footers, keyed by
// path. Iceberg never rewrites such a file in place (a new version is a new
// file with a new name), so a parse stays right for as long as the FileIO
// lives; a long-lived reader (`mimir serve`, or one question that scans a
// table several times) then parses each once instead of once per scan.
//
// Invariants: only readers enable it (a question's CLI process, the server);
// writers, maintenance and integrity checks never do — a check must see the
// bytes on disk now, not a parse from earlier. Values handed out are shared:
// callers treat them as read-only. Memory is bounded by `maxBytes`, estimated
// from the files' sizes (a parse takes a few times its file's bytes); least
// recently used entries go first. A failed load is not kept (the next read
// tries again). Nothing here writes.
import type { FileIO } from './fileio.ts';

interface Entry {
  value: Promise<unknown>;
  bytes: number;
}

/** A parse takes about this many times its file's bytes in memory (objects, strings). */
const PARSE_FACTOR = 4;

export class ReadCache {
  private readonly entries = new Map<string, Entry>();
  private used = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get usedBytes(): number {
    return this.used;
  }

  /**
   * The value parsed from the file at `key` (a path, plus anything else the
   * parse depends on): cached, or `load`ed — which returns the value and the
   * file's size in bytes. Concurrent gets of one key share one load.
   */
  async get<T>(key: string, load: () => Promise<{ value: T; fileBytes: number }>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit) {
      this.hits++;
      // most recently used last
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value as Promise<T>;
    }
    this.misses++;
    const entry: Entry = { value: Promise.resolve(undefined), bytes: 0 };
    const loaded = load();
    entry.value = loaded.then((r) => r.value);
    entry.value.catch(() => undefined); // each caller awaits it; its failure is theirs, not an unhandled rejection
    this.entries.set(key, entry);
    try {
      const { fileBytes } = await loaded;
      if (this.entries.get(key) === entry) {
        entry.bytes = fileBytes * PARSE_FACTOR;
        this.used += entry.bytes;
        this.evict();
      }
    } catch (e) {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw e;
    }
    return entry.value as Promise<T>;
  }

  private evict(): void {
    for (const [key, e] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.entries.delete(key);
      this.used -= e.bytes;
    }
  }
}

const caches = new WeakMap<FileIO, ReadCache>();

/** Parse each immutable lake file read through `io` once (see the module comment); default bound 64 MiB. */
export function enableReadCache(io: FileIO, maxBytes = 64 * 1024 * 1024): ReadCache {
  let c = caches.get(io);
  if (!c) caches.set(io, (c = new ReadCache(maxBytes)));
  return c;
}

/** The read cache of `io`, if a reader enabled one. */
export function readCacheOf(io: FileIO): ReadCache | undefined {
  return caches.get(io);
}

/** `load` through the read cache of `io` when it has one, else directly. */
export function cachedRead<T>(io: FileIO, key: string, load: () => Promise<{ value: T; fileBytes: number }>): Promise<T> {
  const c = caches.get(io);
  return c ? c.get(key, load) : load().then((r) => r.value);
}
