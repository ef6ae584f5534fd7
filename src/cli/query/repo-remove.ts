// `mimir repo remove NAME [--dry-run]`: every live item, edge and file of a
// repo removed, as remove events in one run and one commit (src/ingest/
// remove.ts) — the only way a whole repo leaves the lake. `--dry-run` prints
// what would be removed and writes nothing. The universe is refused. A repo
// removed already (a rerun after a crash) says so with exit 0; a name no run
// ever gave is an error with did-you-mean. Thin wrapper.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { NoSuchRepoError, formatRemoveReport, removeRepo } from '../../ingest/index.ts';
import { didYouMeanText } from '../../query/suggest.ts';
import { openLog, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: 'NAME [--dry-run] [options]',
  description: 'Removes are events (history keeps them); the repo can be ingested again later. @universe cannot be removed.',
  positionals: [{ name: 'NAME', required: true, help: 'the repo name (as given to mimir ingest --repo)' }],
  options: [{ name: 'dry-run', kind: 'flag', help: 'print what would be removed per crate; write nothing' }],
  examples: ['mimir repo remove old-service --dry-run', 'mimir repo remove old-service'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const repo = args.positionals[0]!;
  const dryRun = args.flag('dry-run');
  const open = await openLog(ctx);
  try {
    const report = await withProgress(ctx.out, `repo remove ${repo}${dryRun ? ' (dry run)' : ''}`, () => removeRepo(open.log, repo, { dryRun })).catch((e: unknown) => {
      if (!(e instanceof NoSuchRepoError)) throw e;
      const hint = didYouMeanText(repo, e.known);
      throw new Error(hint ? e.message.replace(/ \u2014 nothing removed$/, ` (${hint}) — nothing removed`) : e.message);
    });
    if (ctx.json) await ctx.out.json(report);
    else await ctx.out.line(formatRemoveReport(report));
  } finally {
    open.close();
  }
}
