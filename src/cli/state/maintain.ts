// `mimir state maintain [--force]`: rewrite the state tables that gathered
// too many delta or delete files into sorted files — src/log/state/maintain.ts.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatMaintainReport, maintainState } from '../../log/state/maintain.ts';
import { openLog, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[--force] [options]',
  description: 'A table past the threshold is merged (its files are sorted already) with its deletes applied; appends made meanwhile are kept.',
  positionals: [],
  options: [{ name: 'force', kind: 'flag', help: 'rewrite every table into globally sorted files, whatever the thresholds, first giving a table made by an older version the current layout (sort order, properties)' }],
  examples: ['mimir state maintain', 'mimir state maintain --force --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const open = await openLog(ctx);
  try {
    const r = await withProgress(ctx.out, 'maintaining the state tables', () => maintainState(open.log, { force: args.flag('force') }));
    if (ctx.json) await ctx.out.json(r);
    else await ctx.out.line(formatMaintainReport(r));
  } finally {
    open.close();
  }
}
