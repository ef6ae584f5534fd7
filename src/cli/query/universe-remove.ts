// `mimir universe remove NAME@VERSION [--force] [--dry-run]`: one universe
// crate version removed, as remove events in one run and one commit, state
// tables in step (src/ingest/universe-remove.ts). Refused (exit 1, nothing
// written) while live edges of a repo point into it, unless --force. Thin
// wrapper.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatUniverseRemoveReport, removeUniverseCrate } from '../../ingest/index.ts';
import { openLog, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: 'NAME@VERSION [--force] [--dry-run] [options]',
  description: 'The undo of a universe add. Removes are events (history keeps them); the version can be added again later. '
    + 'Refused while edges of a repo point into the crate (their count per repo is printed), unless --force; edges of other universe crates are reported, not a reason to refuse.',
  positionals: [{ name: 'NAME@VERSION', required: true, help: 'the crate version, as the universe names it (regex@1.10.2)' }],
  options: [
    { name: 'force', kind: 'flag', help: 'remove it even while repos\' edges point into it' },
    { name: 'dry-run', kind: 'flag', help: 'print what would be removed and what points into it; write nothing' },
  ],
  examples: ['mimir universe remove regex@1.10.2 --dry-run', 'mimir universe remove regex@1.10.2'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const krate = args.positionals[0]!;
  const opts = { force: args.flag('force'), dryRun: args.flag('dry-run') };
  const open = await openLog(ctx);
  try {
    const report = await withProgress(ctx.out, `universe remove ${krate}${opts.dryRun ? ' (dry run)' : ''}`, () => removeUniverseCrate(open.log, krate, opts));
    if (ctx.json) await ctx.out.json(report);
    else await ctx.out.line(formatUniverseRemoveReport(report));
  } finally {
    open.close();
  }
}
