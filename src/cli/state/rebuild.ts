// `mimir state rebuild`: refold the serving state tables from the event log
// (creating them when the lake has none) — src/log/state/rebuild.ts. Prints
// the one-line report, or with --json the report.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { rebuildState } from '../../log/state/rebuild.ts';
import { openLog, positiveCount, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[--group-events N] [options]',
  description: [
    'Folds the log at the current generation, crate by crate, and replaces the state tables\' files in one commit;',
    'ingests committed meanwhile are kept. Memory is bounded by --group-events.',
    'A lake made before the crate-keyed code_keys (nodes by id read from one page of it) gets that layout here.',
  ].join('\n'),
  positionals: [],
  options: [{ name: 'group-events', kind: 'value', arg: 'N', help: 'events folded at a time (default 400000)' }],
  examples: ['mimir state rebuild', 'mimir state rebuild --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const groupEvents = positiveCount(args, 'group-events');
  const open = await openLog(ctx);
  try {
    const r = await withProgress(ctx.out, 'rebuilding the state tables', () => rebuildState(open.log, groupEvents === undefined ? {} : { groupEvents }));
    if (ctx.json) await ctx.out.json(r);
    else {
      const rows = Object.entries(r.rows).map(([t, n]) => `${t} ${n}`).join(', ');
      await ctx.out.line(`state rebuild: folded generation ${r.generation} (${r.crates} crates in ${r.groups} group(s)), committed generation ${r.committed}; rows: ${rows}${r.created ? '; tables created' : ''}${r.merged ? '; merged into sorted files' : ''} in ${r.ms} ms`);
    }
  } finally {
    open.close();
  }
}
