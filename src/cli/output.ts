// Output of the CLI: results on stdout (streamed with back-pressure; a closed
// pipe such as `| head` ends the command quietly), messages, progress and the
// final one-line reports on stderr. Progress is shown only when stderr is a
// terminal and is erased before anything else is printed there.
import { stringifyJson } from '../lake/spec/json.ts';

/** Thrown by Output.write once the reader of stdout has gone; main exits 0. */
export class OutputClosed extends Error {
  constructor() {
    super('stdout closed');
  }
}

export class Output {
  private closed = false;
  private progressShown = false;
  private lastProgress = 0;
  readonly stderrIsTTY: boolean;
  readonly stdoutIsTTY: boolean;

  constructor(
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {
    this.stderrIsTTY = stderr.isTTY === true;
    this.stdoutIsTTY = stdout.isTTY === true;
    stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') this.closed = true;
      else throw e;
    });
  }

  /** Write text to stdout, waiting while the reader is behind. */
  async write(text: string): Promise<void> {
    if (this.closed) throw new OutputClosed();
    if (!this.stdout.write(text)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.stdout.off('drain', done);
          this.stdout.off('error', done);
          resolve();
        };
        this.stdout.on('drain', done);
        this.stdout.on('error', done);
      });
      if (this.closed) throw new OutputClosed();
    }
  }

  async line(text = ''): Promise<void> {
    await this.write(`${text}\n`);
  }

  /** A value as indented JSON (64-bit integers exact) on stdout. */
  async json(value: unknown): Promise<void> {
    await this.write(`${stringifyJson(value, 2)}\n`);
  }

  /** A line on stderr (reports, notes, errors). */
  err(text: string): void {
    this.clearProgress();
    this.stderr.write(`${text}\n`);
  }

  /** Replace the progress line on a terminal (at most 5 times a second); no-op otherwise. */
  progress(text: string, force = false): void {
    if (!this.stderrIsTTY) return;
    const now = Date.now();
    if (!force && now - this.lastProgress < 200) return;
    this.lastProgress = now;
    this.stderr.write(`\r\x1b[K${text}`);
    this.progressShown = true;
  }

  clearProgress(): void {
    if (!this.progressShown) return;
    this.stderr.write('\r\x1b[K');
    this.progressShown = false;
  }
}

/** Rows of cells as aligned columns (the last column is not padded). */
export function formatTable(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_h, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Epoch milliseconds as ISO 8601 UTC. */
export function isoTime(ms: bigint | number): string {
  const d = new Date(Number(ms));
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

/** Bytes as a short human figure (`1.4 MB`). */
export function formatBytes(n: bigint | number): string {
  const x = Number(n);
  if (x < 1024) return `${x} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = x / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** `1 row`, `2 rows`. */
export function plural(n: number | bigint, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 || n === 1n ? word : many}`;
}
