// `mimir ring unsplit`: copy ring rows added since the split back to the
// source tables and switch the lake back to unified (src/log/ring-split.ts
// unsplitRing). Prints the report's one-line form, or with --json the report
// (bigints as JSON integers). On a unified lake it is the no-op report.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatUnsplitReport, unsplitRing } from '../../log/ring-split.ts';
import { openLog, positiveCount, withProgress } from './common.ts';

export const command: CommandSpec = {
  usage: '[--chunk-rows N] [options]',
  positionals: [],
  options: [{ name: 'chunk-rows', kind: 'value', arg: 'N', help: 'rows per append while copying back (bounds memory; default 1048576)' }],
  examples: ['mimir ring unsplit', 'mimir ring unsplit --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const chunkRows = positiveCount(args, 'chunk-rows');
  const open = await openLog(ctx);
  try {
    const report = await withProgress(ctx.out, 'unsplitting the ring', () => unsplitRing(open.log, chunkRows === undefined ? {} : { chunkRows }));
    if (ctx.json) await ctx.out.json(report);
    else await ctx.out.line(formatUnsplitReport(report));
  } finally {
    open.close();
  }
}
