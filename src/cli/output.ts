// Output of the CLI: results on stdout (streamed with back-pressure; a closed
// pipe such as `| head` ends the command quietly), messages, progress and the
// final one-line reports on stderr. Progress is shown only when stderr is a
// terminal and is erased before anything else is printed there; `status` is
// progress that off a terminal (a CI log, a redirect) becomes a line every few
// seconds instead, the first one only once that much time has passed.
//
// On a terminal (main.ts decides, `configure`): colour (`paint`: places and
// item kinds, nothing else) and a pager as git has one. With a pager set, the
// first screenful of stdout is held; once it outgrows the terminal the pager
// is started and gets what was held and everything after, stderr lines
// included (so a summary reads at the end of the page); when the command ends
// first, what was held is written as it came, stdout and stderr in their
// order. Stderr lines before any stdout are never held. `finish` must be
// awaited before exit: it writes what is held, or ends the pager's input and
// waits for the person to quit it. The pager quitting early is a closed pipe
// (OutputClosed: exit 0).
import { spawn, type ChildProcess } from 'node:child_process';
import { stringifyJson } from '../lake/spec/json.ts';

/** Thrown by Output.write once the reader of stdout has gone; main exits 0. */
export class OutputClosed extends Error {
  constructor() {
    super('stdout closed');
  }
}

/** How answers mark their parts on a terminal; identity when colour is off. */
export interface Paint {
  /** `path:line:col`. */
  place(text: string): string;
  /** An item's kind (`fn`, `struct`) or an edge's (`calls`). */
  kind(text: string): string;
}

export const PLAIN: Paint = { place: (t) => t, kind: (t) => t };
const COLOUR: Paint = { place: (t) => `\x1b[36m${t}\x1b[39m`, kind: (t) => `\x1b[33m${t}\x1b[39m` };

/** What main.ts decided for this run (see configure). */
export interface OutputSettings {
  color: boolean;
  /** A shell command to page stdout through, or null for none. */
  pager: string | null;
  /** Off a terminal, a `status` line at most this often (default 5000; test hook MIMIR_PROGRESS_EVERY_MS). */
  statusEveryMs?: number;
  env?: NodeJS.ProcessEnv;
}

const ignore = (): void => {};

/** Visible rows `text` takes on a terminal `columns` wide (escapes not counted, long lines wrapped). */
export function rowsOf(text: string, columns: number): number {
  let rows = 0;
  for (const l of text.replace(/\x1b\[[0-9;]*m/g, '').split('\n')) rows += Math.max(1, Math.ceil(l.length / Math.max(1, columns)));
  return rows;
}

export class Output {
  private closed = false;
  private progressShown = false;
  private lastProgress = 0;
  readonly stderrIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  /** Colour of answers (configure). */
  paint: Paint = PLAIN;
  private pagerCommand: string | null = null;
  private env: NodeJS.ProcessEnv = process.env;
  /** Held while deciding whether to page: stdout text and the stderr lines after it, in order. */
  private held: { err: boolean; text: string }[] | null = null;
  private heldRows = 0;
  private sink: NodeJS.WritableStream;
  private pager: ChildProcess | null = null;
  private statusEveryMs = 5000;
  private statusSince: number | null = null;

  constructor(
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {
    this.stderrIsTTY = stderr.isTTY === true;
    this.stdoutIsTTY = stdout.isTTY === true;
    this.sink = stdout;
    stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') this.closed = true;
      else throw e;
    });
  }

  /** Colour and pager for this run (main.ts: only for a terminal, never with --json). */
  configure(s: OutputSettings): void {
    this.paint = s.color ? COLOUR : PLAIN;
    this.pagerCommand = s.pager;
    if (s.env) this.env = s.env;
    if (s.statusEveryMs !== undefined) this.statusEveryMs = s.statusEveryMs;
    if (s.pager !== null && this.held === null && this.pager === null) this.held = [];
  }

  /** Write text to stdout (or the pager), waiting while the reader is behind. */
  async write(text: string): Promise<void> {
    if (this.closed) throw new OutputClosed();
    if (this.held !== null) {
      this.held.push({ err: false, text });
      this.heldRows += rowsOf(text.endsWith('\n') ? text.slice(0, -1) : text, this.stdout.columns || 80);
      // one row stays for the shell's prompt
      if (this.heldRows < (this.stdout.rows || 24)) return;
      this.startPager();
      return;
    }
    await this.send(text);
  }

  private async send(text: string): Promise<void> {
    const sink = this.sink;
    if (!sink.write(text)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          sink.off('drain', done);
          sink.off('error', done);
          resolve();
        };
        sink.on('drain', done);
        sink.on('error', done);
      });
    }
    if (this.closed) throw new OutputClosed();
  }

  /** The pager gets what was held; stdout and stderr lines go to it from now on. */
  private startPager(): void {
    const held = this.held ?? [];
    this.held = null;
    this.clearProgress();
    // as git: less quits on one screen (F), keeps colour (R) and the screen (X) unless the person set LESS
    const env = { ...this.env, LESS: this.env.LESS ?? 'FRX', LV: this.env.LV ?? '-c' };
    const child = spawn(this.pagerCommand!, { shell: true, stdio: ['pipe', 'inherit', 'inherit'], env });
    child.stdin!.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') this.closed = true;
      else throw e;
    });
    child.on('error', () => (this.closed = true));
    // as git: Ctrl-C is the pager's while it runs (less scrolls back, then the person quits it); mimir ends with it
    process.on('SIGINT', ignore);
    this.pager = child;
    this.sink = child.stdin!;
    for (const h of held) this.sink.write(h.text);
  }

  /** Write what is held, or end the pager's input and wait until it exits. Call once, at the end. */
  async finish(): Promise<void> {
    if (this.held !== null) {
      const held = this.held;
      this.held = null;
      for (const h of held) {
        if (h.err) this.stderr.write(h.text);
        else if (!this.closed) await this.send(h.text).catch((e: unknown) => {
          if (!(e instanceof OutputClosed)) throw e;
        });
      }
    }
    const pager = this.pager;
    if (pager === null) return;
    this.pager = null;
    await new Promise<void>((resolve) => {
      if (pager.exitCode !== null || pager.signalCode !== null) return resolve();
      pager.on('close', () => resolve());
      pager.stdin!.end();
    });
    process.off('SIGINT', ignore);
    this.sink = this.stdout;
    // the shell could not run it: say so, or the answer vanishes without a word
    if (pager.exitCode === 126 || pager.exitCode === 127) {
      this.stderr.write(`mimir: the pager "${this.pagerCommand}" could not be run (exit ${pager.exitCode}); the answer was not shown — set MIMIR_PAGER=cat or pass --no-pager\n`);
    }
  }

  async line(text = ''): Promise<void> {
    await this.write(`${text}\n`);
  }

  /** A value as indented JSON (64-bit integers exact) on stdout. */
  async json(value: unknown): Promise<void> {
    await this.write(`${stringifyJson(value, 2)}\n`);
  }

  /** The width stderr's lines are wrapped at: the terminal's; off a terminal $COLUMNS (as git and less honour it), else 100. */
  errWidth(): number {
    if (this.stderrIsTTY && this.stderr.columns > 0) return this.stderr.columns;
    const c = Number(this.env.COLUMNS);
    return Number.isSafeInteger(c) && c >= 20 ? c : 100;
  }

  /** A line on stderr (reports, notes, errors). */
  err(text: string): void {
    this.clearProgress();
    if (this.held !== null && this.held.length > 0) this.held.push({ err: true, text: `${text}\n` });
    else if (this.pager !== null && !this.closed) this.sink.write(`${text}\n`);
    else this.stderr.write(`${text}\n`);
  }

  /** Replace the progress line on a terminal (at most 5 times a second); no-op otherwise. */
  progress(text: string, force = false): void {
    if (!this.stderrIsTTY || this.pager !== null) return;
    const now = Date.now();
    if (!force && now - this.lastProgress < 200) return;
    this.lastProgress = now;
    this.stderr.write(`\r\x1b[K${text}`);
    this.progressShown = true;
  }

  /**
   * Progress of long work: the progress line on a terminal; elsewhere a line
   * `… text` on stderr once `statusEveryMs` passed since the first status or
   * the last such line.
   */
  status(text: string): void {
    if (this.stderrIsTTY) {
      this.progress(text);
      return;
    }
    const now = Date.now();
    this.statusSince ??= now;
    if (now - this.statusSince < this.statusEveryMs) return;
    this.statusSince = now;
    this.err(`… ${text}`);
  }

  clearProgress(): void {
    if (!this.progressShown) return;
    this.stderr.write('\r\x1b[K');
    this.progressShown = false;
  }
}

/** `1h02m`, `3m05s`, `42s`. */
export function formatSeconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * `, ~3m05s left` after `done` of `total` steps took `elapsedMs` (at the same
 * pace for the rest), or '' while nothing is done or the total is unknown.
 */
export function etaText(done: number, total: number, elapsedMs: number): string {
  if (done <= 0 || total <= 0 || done >= total) return '';
  return `, ~${formatSeconds((elapsedMs / done) * (total - done))} left`;
}

/**
 * `text` wrapped at spaces to lines of at most `width` columns (a word longer
 * than that stands alone on its line), the lines after the first prefixed by
 * `indent`.
 */
export function wrap(text: string, width: number, indent = ''): string {
  const lead = /^ */.exec(text)![0];
  const lines: string[] = [];
  let line = lead;
  for (const word of text.slice(lead.length).split(' ')) {
    const bare = line === '' || line === lead;
    const next = bare ? line + word : `${line} ${word}`;
    const room = lines.length === 0 ? width : width - indent.length;
    if (!bare && next.length > room) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : indent + l)).join('\n');
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
