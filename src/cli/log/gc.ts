// `mimir gc [--dry-run] [--retain 7d] [--keep-last N] [--keep-snapshots N]`:
// expire old snapshots of every table of the lake (both bounds: age and count,
// src/log/history.ts) and remove orphan files, keeping what live pins
// and commits in flight read (src/log/gc.ts). Prints the report's one-line
// form (a dry run also lists each file it would delete), or with --json the
// report (snapshot ids as JSON integers). A dry run writes nothing and works
// on a read-only lake.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { DEFAULT_RETAIN_MS, formatGcReport, gc, type GcOptions } from '../../log/gc.ts';
import { openLog, parseDuration, positiveCount, withProgress } from './common.ts';

export const command: CommandSpec = {
  usage: '[--dry-run] [--retain DURATION] [--keep-last N] [--keep-snapshots N] [options]',
  description: [
    'DURATION: 30s, 15m, 12h, 7d, 2w or 0. Orphans younger than min(retain, 1 min) are kept.',
    'History kept per table: its newest N snapshots (--keep-snapshots, else the table property',
    'mimir.history.keep-snapshots, else [history] keep-snapshots in mimir.toml, else 32; 0 = no count bound)',
    'that are also younger than --retain (the newest --keep-last always stay), plus what live pins and',
    'commits in flight read. Metadata files of generations whose snapshots went, or older than the',
    'retention, are deleted: --as-of reads the tables that far back. Only files named as Mimir names',
    'them are deleted; any other file found in a table folder is listed and kept.',
  ].join('\n'),
  positionals: [],
  options: [
    { name: 'dry-run', kind: 'flag', help: 'list what would be expired and deleted; change nothing' },
    { name: 'retain', kind: 'value', arg: 'DURATION', help: `expire snapshots older than this (default ${DEFAULT_RETAIN_MS / 86_400_000}d)` },
    { name: 'keep-last', kind: 'value', arg: 'N', help: 'the age bound keeps at least the newest N snapshots of each branch (default 1)' },
    { name: 'keep-snapshots', kind: 'value', arg: 'N', help: 'keep at most the newest N snapshots of each table (default: each table\'s mimir.history.keep-snapshots, 32; 0 = no count bound)' },
  ],
  examples: ['mimir gc --dry-run', 'mimir gc --retain 12h --keep-last 3', 'mimir gc --retain 0 --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const opts: GcOptions = { dryRun: args.flag('dry-run') };
  const retain = args.value('retain');
  if (retain !== undefined) opts.retainMs = parseDuration(retain, 'retain', args.commandPath);
  const keepLast = positiveCount(args, 'keep-last');
  if (keepLast !== undefined) opts.keepLast = keepLast;
  const keepSnapshots = args.count('keep-snapshots');
  if (keepSnapshots !== undefined) opts.keepSnapshots = keepSnapshots;
  // a dry run only reads: a lake this process cannot write is examined the same, nothing written
  const open = await openLog(ctx, opts.dryRun ? { readOnly: 'auto', reader: true } : {});
  try {
    const report = await withProgress(ctx.out, opts.dryRun ? 'gc (dry run)' : 'gc', () => gc(open.log, opts));
    if (ctx.json) {
      await ctx.out.json(report);
      return;
    }
    const lines = [formatGcReport(report)];
    if (report.dryRun) {
      for (const t of report.tables) {
        if (t.expired.length > 0) lines.push(`would expire ${t.table}: snapshot(s) ${t.expired.join(', ')}`);
        for (const f of t.deleted) lines.push(`would delete ${f}`);
      }
      for (const f of report.orphans) lines.push(`would delete orphan ${f}`);
    }
    for (const f of report.strangers) lines.push(`kept ${f}: nothing references it, and Mimir does not write files of that name — remove it yourself if it is not needed`);
    await ctx.out.line(lines.join('\n'));
  } finally {
    open.close();
  }
}
