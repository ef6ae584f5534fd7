// Pinned read handles for the server, shared by every request at the same
// lake generation. A request reads through one handle fixed to one
// generation for its whole length, so an ingest committing meanwhile never
// shows it half a run (a run is one generation), and the handle's catalog
// lease (EventLog.pin: `releaseBase` = that generation) keeps gc, in any
// process, from deleting a file the request may still open.
//
// A generation whose snapshots gc expired is read from the current log by
// runs (EventLog.pin's `history`): such a handle holds a second lease, on
// the generation it reads.
//
// Invariants: one handle (one lease) per generation in use, however many
// requests share it; a handle is closed only when no request holds it and it
// has been idle for `idleMs` (so a busy server does not take a lease per
// request, and a server left idle holds at most one lease per generation it
// served in the last `idleMs`). Leases are the only thing the server writes.
// Crash story: a killed server leaves leases that expire on their own (TTL,
// or at once when their pid is seen dead on this host).
import type { EventLog } from '../log/event-log.ts';

interface Entry {
  handle: EventLog;
  users: number;
  idle: NodeJS.Timeout | undefined;
}

export class Pins {
  private readonly open = new Map<bigint, Entry>();
  private closed = false;

  /** `log` is the server's own (unpinned) handle; pins are taken from it. */
  constructor(
    private readonly log: EventLog,
    private readonly idleMs = 10_000,
  ) {}

  /** Run `fn` with a handle pinned to generation `g`, held for the length of `fn`. */
  async with<T>(g: bigint, fn: (pinned: EventLog) => Promise<T>): Promise<T> {
    const e = this.acquire(g);
    try {
      return await fn(e.handle);
    } finally {
      this.release(g, e);
    }
  }

  /** Generations with a pinned handle now (for /api/lake and tests). */
  generations(): bigint[] {
    return [...this.open.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private acquire(g: bigint): Entry {
    if (this.closed) throw new Error('the server is stopping: no new reads');
    let e = this.open.get(g);
    if (!e) {
      e = { handle: this.log.pin({ generation: g }, { history: true }), users: 0, idle: undefined };
      this.open.set(g, e);
    }
    if (e.idle) clearTimeout(e.idle);
    e.idle = undefined;
    e.users++;
    return e;
  }

  private release(g: bigint, e: Entry): void {
    e.users--;
    if (e.users > 0) return;
    if (this.closed) return this.drop(g, e);
    e.idle = setTimeout(() => this.drop(g, e), this.idleMs);
    e.idle.unref();
  }

  private drop(g: bigint, e: Entry): void {
    if (e.users > 0 || this.open.get(g) !== e) return;
    if (e.idle) clearTimeout(e.idle);
    this.open.delete(g);
    e.handle.close();
  }

  /** Close idle handles now; handles in use close when their last request ends. */
  close(): void {
    this.closed = true;
    for (const [g, e] of [...this.open]) if (e.users === 0) this.drop(g, e);
  }
}
