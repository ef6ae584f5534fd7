// `mimir ring split [--chunk-rows N]`: copy the ring out of the source tables
// into the ring tables, verify per krate, switch the lake to split
// (src/log/ring-split.ts splitRing). Prints the report's one-line form, or
// with --json the report itself (bigints as JSON integers). Rerunning after a
// crash converges; on a split lake it is the no-op report.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatSplitReport, splitRing, type SplitOptions } from '../../log/ring-split.ts';
import { openLog, positiveCount, withProgress } from './common.ts';

export const command: CommandSpec = {
  usage: '[--chunk-rows N] [options]',
  description: 'Old ring rows stay in the source tables (split reads ignore them) until mimir compact drops them.',
  positionals: [],
  options: [{ name: 'chunk-rows', kind: 'value', arg: 'N', help: 'rows per append while copying (bounds memory; default 1048576)' }],
  examples: ['mimir ring split', 'mimir ring split --chunk-rows 100000 --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const chunkRows = positiveCount(args, 'chunk-rows');
  const opts: SplitOptions = chunkRows === undefined ? {} : { chunkRows };
  const open = await openLog(ctx);
  try {
    const report = await withProgress(ctx.out, 'splitting the ring', () => splitRing(open.log, opts));
    if (ctx.json) await ctx.out.json(report);
    else await ctx.out.line(formatSplitReport(report));
  } finally {
    open.close();
  }
}
