// How many answers the server computes at once, and how long a request may
// wait for its turn. Reading the lake is mostly CPU (Parquet decoding) on
// one thread: more concurrent reads than a few add memory, not throughput.
// A request past its deadline while still queued is dropped before it reads
// anything (`QueueTimeout`, the server's 503); a full queue refuses at once
// (`QueueFull`, also 503). Once closed (the server stopping) every waiting
// request is refused with the reason given and new ones at once: none starts.
export class QueueFull extends Error {}
export class QueueTimeout extends Error {}

interface Waiter {
  start: () => void;
  deadline: number;
  reject: (e: Error) => void;
}

export class Limiter {
  private running = 0;
  private readonly queue: Waiter[] = [];
  private closedBy: Error | undefined;

  constructor(
    readonly slots: number,
    readonly maxQueue: number,
  ) {}

  get active(): number {
    return this.running;
  }
  get waiting(): number {
    return this.queue.length;
  }

  /** Run `fn` when a slot is free and `deadline` (epoch ms) has not passed. */
  run<T>(fn: () => Promise<T>, deadline: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closedBy) return reject(this.closedBy);
      const start = (): void => {
        this.running++;
        fn().then(resolve, reject).finally(() => {
          this.running--;
          this.next();
        });
      };
      if (this.running < this.slots) return start();
      if (this.queue.length >= this.maxQueue) {
        return reject(new QueueFull(`${this.running} answers are being computed and ${this.queue.length} requests wait (the limit): nothing was read; retry later`));
      }
      this.queue.push({ start, deadline, reject });
    });
  }

  /** Refuse every waiting request and any new one with `reason`; those running go on. */
  close(reason: Error): void {
    this.closedBy = reason;
    for (const w of this.queue.splice(0)) w.reject(reason);
  }

  private next(): void {
    while (this.running < this.slots && this.queue.length > 0) {
      const w = this.queue.shift()!;
      if (Date.now() > w.deadline) {
        w.reject(new QueueTimeout('the request waited past its time limit for a free reader: nothing was read; retry later'));
        continue;
      }
      w.start();
    }
  }
}
