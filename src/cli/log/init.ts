// `mimir init [--ring split|unified]`: create the event-log tables (source,
// ring and ingest_runs tables of namespace `mimir`) on the lake at --lake,
// creating the lake folder when absent. Split by default. A lake that already
// has the event log in the asked mode is left as it is (exit 0, "already");
// in the other mode it is refused (exit 1: use `mimir ring split/unsplit`).
// Crash story: EventLog.open creates the node table (which carries the mode)
// last, so rerunning init after a crash finishes the job.
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { openLakeAt } from '../lake-location.ts';
import { identToString } from '../../lake/catalog/catalog.ts';
import { EventLog, type RingMode } from '../../log/event-log.ts';
import { CODE_NODE_EVENTS, NAMESPACE, ident } from '../../log/schema.ts';

export const command: CommandSpec = {
  usage: '[--ring split|unified] [options]',
  description: [
    'Creates the lake folder when absent. split (default): ring rows (repo @universe) live in',
    'their own ring tables; unified: in the source tables. An existing event log in the other',
    "mode is refused; switch modes with 'mimir ring split' / 'mimir ring unsplit'.",
  ].join('\n'),
  positionals: [],
  options: [{ name: 'ring', kind: 'value', arg: 'MODE', help: 'ring mode of the new log: split (default) or unified' }],
  examples: ['mimir init --lake /data/lake', 'mimir init --ring unified --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const ring = args.value('ring') ?? 'split';
  if (ring !== 'split' && ring !== 'unified') throw new UsageError(`--ring: expected split or unified, found "${ring}"`, args.commandPath);
  const mode: RingMode = ring;
  const lake = openLakeAt(ctx, { create: true });
  try {
    const existed = lake.tableExists(ident(CODE_NODE_EVENTS));
    const log = await EventLog.open(lake, { init: mode });
    log.close();
    const tables = lake.catalog.listTables([NAMESPACE]).map((t) => identToString(t)).sort();
    const generation = lake.catalog.pointerGeneration();
    if (ctx.json) {
      await ctx.out.json({ lake: lake.root, mode, created: !existed, tables, generation });
      return;
    }
    await ctx.out.line(
      existed
        ? `event log at ${lake.root} already initialised (${mode}); ${tables.length} tables, generation ${generation}`
        : `initialised event log at ${lake.root} (${mode}): ${tables.join(', ')}; generation ${generation}`,
    );
  } finally {
    lake.close();
  }
}
