// `mimir state maintain [--force]`: rewrite the state tables that gathered
// too many delta or delete files into sorted files — src/log/state/maintain.ts.
// A lake made before `code_paths` (history's index by qualified path) gets it
// first: created and folded from the log (state rebuild of that table alone;
// a build cut short, still marked PROP_BUILDING, is done again). A code_keys
// of the former layout is named (maintenance keeps it; `state rebuild` switches it).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatMaintainReport, maintainState } from '../../log/state/maintain.ts';
import { openLog, withProgress } from '../log/common.ts';
import { hasStateTables, rebuildState } from '../../log/state/rebuild.ts';
import { CODE_KEYS, CODE_PATHS, PROP_BUILDING, keysLayout } from '../../log/state/schema.ts';
import { ident } from '../../log/schema.ts';

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
    const log = open.log;
    let built: { rows: number; ms: number } | undefined;
    const paths = log.lake.tableExists(ident(CODE_PATHS)) ? await log.lake.loadTable(ident(CODE_PATHS)) : undefined;
    // missing (a lake made before it), or a build that did not land (PROP_BUILDING still set)
    if (hasStateTables(log) && (!paths || paths.properties[PROP_BUILDING] !== undefined)) {
      const b = await withProgress(ctx.out, `building ${CODE_PATHS} from the log`, () => rebuildState(log, { tables: [CODE_PATHS] }));
      built = { rows: b.rows[CODE_PATHS] ?? 0, ms: b.ms };
    }
    const r = await withProgress(ctx.out, 'maintaining the state tables', () => maintainState(log, { force: args.flag('force') }));
    if (ctx.json) await ctx.out.json(built ? { ...r, built: { table: CODE_PATHS, ...built } } : r);
    else {
      if (built) await ctx.out.line(`state maintain: built ${CODE_PATHS} (${built.rows} rows, folded from the log) in ${built.ms} ms`);
      await ctx.out.line(formatMaintainReport(r));
      // a merge keeps code_keys' layout: only a rebuild refolds it crate-keyed
      if (hasStateTables(log) && keysLayout((await log.lake.loadTable(ident(CODE_KEYS))).properties) !== 'krate') {
        await ctx.out.line(`state maintain: ${CODE_KEYS} has the former layout (nodes by id read through code_nodes); 'mimir state rebuild' refolds it crate-keyed`);
      }
    }
  } finally {
    open.close();
  }
}
