// Shared pieces of `mimir ingest` and `mimir universe add`: opening the lake's
// event log (created, split, when absent — ingesting into a new folder is the
// first thing a user does), progress from ingest's callback (with the time
// left; off a terminal a line every few seconds), and
// printing a report: one line per problem, then the report's one-line form
// (src/ingest/ingest.ts formatIngestReport), or the report as JSON. A strict
// run that met problems, and an ingest of something that is not a valid
// workspace (a file, no Cargo.toml, a manifest that does not parse), list them
// on stderr and fail (exit 1), nothing written.
import { existsSync } from 'node:fs';
import type { Args, OptionSpec } from '../args.ts';
import type { Context } from '../command.ts';
import { openLakeAt } from '../lake-location.ts';
import { etaText } from '../output.ts';
import { EventLog } from '../../log/event-log.ts';
import { IngestInputError, StrictIngestError, formatIngestReport, type IngestProblem, type IngestProgress, type IngestReport } from '../../ingest/index.ts';

export const problemLine = (p: IngestProblem): string => `problem ${p.kind} ${p.krate || '-'} ${p.path}: ${p.message}`;

/**
 * Ingest's progress: phase, crate, crates done of the total, and, once one is
 * done, the time left at the phase's pace so far (a terminal's progress line;
 * elsewhere a line every few seconds: Output.status).
 */
export function progress(ctx: Context): (p: IngestProgress) => void {
  let phase = '';
  let since = Date.now();
  return (p) => {
    const now = Date.now();
    if (p.phase !== phase) {
      phase = p.phase;
      since = now;
    }
    ctx.out.status(`${p.phase} ${p.krate}${p.total > 0 ? ` ${p.done}/${p.total}${etaText(p.done, p.total, now - since)}` : ''}`);
  };
}

/** Cargo's feature selection, for the crates a command indexes (cfg evaluation, src/extract/resolve/cfg.ts). */
export const FEATURE_OPTIONS: OptionSpec[] = [
  { name: 'features', kind: 'list', arg: 'F,…', help: 'features to enable (repeatable, comma-separated), as cargo --features' },
  { name: 'all-features', kind: 'flag', help: 'enable every feature' },
  { name: 'no-default-features', kind: 'flag', help: 'do not enable the default feature' },
  { name: 'release', kind: 'flag', help: 'evaluate cfg as a release build (debug_assertions off); default: the dev profile, as cargo build/check' },
];

export function featureOptions(args: Args): { features: string[]; allFeatures: boolean; noDefaultFeatures: boolean; release: boolean } {
  const features = args.list('features').flatMap((v) => v.split(/[,\s]+/)).filter((f) => f !== '');
  return { features, allFeatures: args.flag('all-features'), noDefaultFeatures: args.flag('no-default-features'), release: args.flag('release') };
}

/** Every PATH must exist: a typo is a failure, not an empty run. */
export function requireFolders(paths: string[]): void {
  for (const p of paths) if (!existsSync(p)) throw new Error(`no such file or folder: ${p}`);
}

/** Run `fn` on the lake's event log (created when absent) and print its report. */
export async function runIngest(ctx: Context, fn: (log: EventLog) => Promise<IngestReport>): Promise<number> {
  return withIngestLog(ctx, fn, printReport);
}

/** One report's problems, missing dependencies and one-line form. */
export async function printReport(ctx: Context, report: IngestReport): Promise<void> {
  const all = [...report.problems, ...(report.deps?.report.problems ?? [])];
  for (const p of all) await ctx.out.line(problemLine(p));
  if (report.deps && report.deps.missing.length > 0) await ctx.out.line(`dependencies looked for in: ${report.deps.searched.join(', ')}`);
  for (const m of report.deps?.missing ?? []) {
    const others = [m.local.length ? `locally ${m.local.join(', ')}` : '', m.lake.length ? `in the lake ${m.lake.join(', ')}` : ''].filter((x) => x).join('; ');
    await ctx.out.line(`dependency not found locally: ${m.krate} (other versions present: ${others || 'none'})`);
  }
  for (const s of report.substitutions ?? []) {
    await ctx.out.line(`warning: ${s.wanted} is not in the lake; its paths resolve into ${s.used} instead (--deps nearest: nearest semver-compatible version, ${s.from === 'lake' ? 'already in the lake' : 'found locally'})`);
  }
  await ctx.out.line(formatIngestReport(report));
  // the run landed; what failed after it goes to stderr (exit 0: the run's contract — its events in one generation — holds)
  for (const w of [...(report.deps?.report.afterCommit ?? []), ...(report.afterCommit ?? [])]) ctx.out.err(`warning: ${w}`);
}

/** Run `fn` on the lake's event log (created when absent); print its result as JSON, or by `print`. */
export async function withIngestLog<T>(ctx: Context, fn: (log: EventLog) => Promise<T>, print: (ctx: Context, r: T) => Promise<void>): Promise<number> {
  const lake = openLakeAt(ctx, { create: true });
  try {
    const log = await EventLog.open(lake);
    let report: T;
    try {
      report = await fn(log);
    } catch (e) {
      if (e instanceof StrictIngestError || e instanceof IngestInputError) for (const p of e.problems) ctx.out.err(problemLine(p));
      throw e;
    } finally {
      ctx.out.clearProgress();
      log.close();
    }
    if (ctx.json) await ctx.out.json(report);
    else await print(ctx, report);
    return 0;
  } finally {
    lake.close();
  }
}
