// Shared pieces of the event-log commands (`mimir init`, `ring …`, `compact`,
// `gc`, `log …`): opening the log of an existing lake (never creating one),
// a progress line with elapsed seconds for long work on a terminal, and the
// option parsers (durations, positive counts). Read-only helpers; every write
// goes through the src/log functions the commands call.
import { existsSync } from 'node:fs';
import { UsageError, type Args } from '../args.ts';
import type { Context } from '../command.ts';
import type { Output } from '../output.ts';
import type { Lake } from '../../lake/lake.ts';
import { catalogPresent, lakeLocation, openLakeAt } from '../lake-location.ts';
import { nestedLakesHint } from '../lake/open.ts';
import { EventLog } from '../../log/event-log.ts';
import { CODE_NODE_EVENTS, ident, qualified } from '../../log/schema.ts';

/**
 * The lake at ctx.lakeDir, which must exist (no catalog.db there is an error,
 * not a new lake). `readOnly`: true writes nothing; 'auto' (reads) opens
 * read-only when this process cannot write the lake. `reader`: nothing
 * written at open, only the leases of pins after (Lake.open).
 */
export function openExistingLake(ctx: Context, opts: { readOnly?: boolean | 'auto'; reader?: boolean } = {}): Lake {
  if (!catalogPresent(lakeLocation(ctx))) {
    const hint = existsSync(ctx.lakeDir) ? nestedLakesHint(ctx.lakeDir) : '';
    throw new Error(`no lake at ${ctx.lakeDir} (no catalog.db there)${hint !== '' ? hint : "; give --lake DIR or set MIMIR_LAKE, or create one with 'mimir init'"}`);
  }
  return openLakeAt(ctx, { create: false, readOnly: opts.readOnly ?? false, reader: opts.reader === true });
}

/** An open event log and what to close when done. */
export interface OpenLog {
  log: EventLog;
  lake: Lake;
  close(): void;
}

/**
 * The event log of the existing lake at ctx.lakeDir. A lake without the event
 * tables (made by `mimir table` only) is refused: `mimir init` creates them.
 * `reader` (the questions): the catalog is opened as a reader and the log
 * read-only — no table created or evolved, nothing written but the leases of
 * pins — unless the catalog needed the writable open (an older layout).
 */
export async function openLog(ctx: Context, opts: { readOnly?: boolean | 'auto'; reader?: boolean } = {}): Promise<OpenLog> {
  const lake = openExistingLake(ctx, opts);
  try {
    if (!lake.tableExists(ident(CODE_NODE_EVENTS))) {
      throw new Error(`the lake at ${lake.root} has no event log (no table ${qualified(CODE_NODE_EVENTS)}); create it with 'mimir init'`);
    }
    const log = await EventLog.open(lake, lake.catalog.reader ? { readOnly: true } : {});
    return {
      log,
      lake,
      close: () => {
        log.close();
        lake.close();
      },
    };
  } catch (e) {
    lake.close();
    throw e;
  }
}

/**
 * Run `fn` while a terminal stderr shows `label… Ns` (the library gives no
 * progress callback, so elapsed time is what there is); off a terminal, a
 * line every few seconds (Output.status).
 */
export async function withProgress<T>(out: Output, label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const frames = ['|', '/', '-', '\\'];
  let i = 0;
  const secs = (): number => Math.floor((Date.now() - t0) / 1000);
  const tick = out.stderrIsTTY ? (): void => out.progress(`${frames[i++ % frames.length]} ${label}… ${secs()}s`, true) : (): void => out.status(`${label}… ${secs()}s`);
  tick();
  const timer = setInterval(tick, 250);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
    out.clearProgress();
  }
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** A duration: `30s`, `15m`, `12h`, `7d`, `2w`, `500ms`, or `0`. Milliseconds. */
export function parseDuration(text: string, option: string, commandPath: string): number {
  const m = /^(\d+)(ms|s|m|h|d|w)?$/.exec(text.trim());
  if (!m || (m[2] === undefined && Number(m[1]) !== 0)) {
    throw new UsageError(`--${option}: expected a duration such as 30s, 15m, 12h, 7d or 0, found "${text}"`, commandPath);
  }
  const ms = Number(m[1]) * UNIT_MS[m[2] ?? 'ms']!;
  if (!Number.isSafeInteger(ms)) throw new UsageError(`--${option}: duration "${text}" is too large`, commandPath);
  return ms;
}

/** A count option that must be at least 1 (`--chunk-rows 1000`); undefined when absent. */
export function positiveCount(args: Args, name: string): number | undefined {
  const n = args.count(name);
  if (n !== undefined && n < 1) throw new UsageError(`--${name}: expected an integer >= 1, found "${args.value(name)}"`, args.commandPath);
  return n;
}
