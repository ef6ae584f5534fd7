// `mimir compact [--target-file-rows N]`: rewrite every source and ring table
// of the event log (partitioned by repo, sorted by krate and id; in a split
// lake the source tables' verified ring rows are dropped) — src/log/compact.ts.
// Prints the report's one-line form, or with --json the report (bigints as
// JSON integers). A refused table (verification failed) fails the command.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { DEFAULT_TARGET_FILE_ROWS, compact, formatCompactReport } from '../../log/compact.ts';
import { openLog, positiveCount, withProgress } from './common.ts';

export const command: CommandSpec = {
  usage: '[--target-file-rows N] [options]',
  description: 'One replace commit per table; appends made meanwhile (by any process) are kept.',
  positionals: [],
  options: [{ name: 'target-file-rows', kind: 'value', arg: 'N', help: `rows per output file at most (default ${DEFAULT_TARGET_FILE_ROWS})` }],
  examples: ['mimir compact', 'mimir compact --target-file-rows 200000 --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const targetFileRows = positiveCount(args, 'target-file-rows');
  const open = await openLog(ctx);
  try {
    const report = await withProgress(ctx.out, 'compacting', () => compact(open.log, targetFileRows === undefined ? {} : { targetFileRows }));
    if (ctx.json) await ctx.out.json(report);
    else await ctx.out.line(formatCompactReport(report));
  } finally {
    open.close();
  }
}
