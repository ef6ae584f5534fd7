// `mimir gc [--dry-run] [--retain 7d] [--keep-last N]`: expire old snapshots
// of every table of the lake and remove orphan files, keeping what live pins
// and commits in flight read (src/log/gc.ts). Prints the report's one-line
// form (a dry run also lists each file it would delete), or with --json the
// report (snapshot ids as JSON integers).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { DEFAULT_RETAIN_MS, formatGcReport, gc, type GcOptions } from '../../log/gc.ts';
import { openLog, parseDuration, positiveCount, withProgress } from './common.ts';

export const command: CommandSpec = {
  usage: '[--dry-run] [--retain DURATION] [--keep-last N] [options]',
  description: [
    'DURATION: 30s, 15m, 12h, 7d, 2w or 0. Orphans younger than min(retain, 1 min) are kept.',
    'The retention is also the history kept: metadata files of generations older than it (and read by no pin)',
    'are deleted, so --as-of reaches back that far. Only files named as Mimir names them are deleted;',
    'any other file found in a table folder is listed and kept.',
  ].join('\n'),
  positionals: [],
  options: [
    { name: 'dry-run', kind: 'flag', help: 'list what would be expired and deleted; change nothing' },
    { name: 'retain', kind: 'value', arg: 'DURATION', help: `expire snapshots older than this (default ${DEFAULT_RETAIN_MS / 86_400_000}d)` },
    { name: 'keep-last', kind: 'value', arg: 'N', help: 'keep at least the newest N snapshots of each branch (default 1)' },
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
  const open = await openLog(ctx);
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
