// The server's answer cache: response bodies by key, least recently used
// first out, bounded in bytes (so the server's memory is bounded by its
// caches, not by the lake). Keys start with the lake generations the answer
// was read at (see server.ts), so an entry never needs invalidating: an
// answer at a generation never changes, and a new generation makes new keys
// while the old ones age out. Concurrent misses of one key share one
// computation (the first caller's), so a burst of the same question costs
// one read of the lake.
export class AnswerCache {
  private readonly entries = new Map<string, Buffer>();
  private readonly pending = new Map<string, Promise<Buffer>>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get size(): number {
    return this.entries.size;
  }
  get usedBytes(): number {
    return this.bytes;
  }

  /** The cached body of `key`, or the one `compute` makes (stored when it fits; a failure is not stored). */
  async get(key: string, compute: () => Promise<Buffer>): Promise<{ body: Buffer; hit: boolean }> {
    const have = this.entries.get(key);
    if (have) {
      this.entries.delete(key);
      this.entries.set(key, have);
      this.hits++;
      return { body: have, hit: true };
    }
    const running = this.pending.get(key);
    if (running) {
      this.hits++;
      return { body: await running, hit: true };
    }
    this.misses++;
    const p = compute();
    this.pending.set(key, p);
    try {
      const body = await p;
      this.put(key, body);
      return { body, hit: false };
    } finally {
      this.pending.delete(key);
    }
  }

  private put(key: string, body: Buffer): void {
    const cost = body.length + key.length * 2 + 64;
    if (cost > this.maxBytes) return;
    this.entries.set(key, body);
    this.bytes += cost;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.length + k.length * 2 + 64;
    }
  }
}
