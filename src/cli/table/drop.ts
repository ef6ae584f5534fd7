// `mimir table drop lake:ns.t`: remove the table from the lake catalog in one
// commit. Its files stay on disk until `gc` removes what nothing reaches;
// older lake generations still read it.
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { TABLE_ARG, openLake, parseTableRef } from './ref.ts';

export const command: CommandSpec = {
  usage: 'lake:<namespace>.<table> [options]',
  positionals: [{ ...TABLE_ARG, help: 'lake:<namespace>.<table>' }],
  options: [{ name: 'if-exists', kind: 'flag', help: 'succeed quietly when there is no such table' }],
  examples: ['mimir table drop lake:demo.crates --if-exists'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const ref = parseTableRef(args.positionals[0]!, args.commandPath);
  if (ref.kind !== 'lake') throw new UsageError(`${ref.path} is a metadata file; drop removes a lake: table`, args.commandPath);
  const ifExists = args.flag('if-exists');
  const lake = openLake(ctx, { create: ifExists });
  try {
    const exists = lake.tableExists(ref.ident);
    if (!exists && !ifExists) throw new Error(`table ${ref.text} does not exist in ${lake.root}`);
    if (exists) await lake.dropTable(ref.ident);
    const generation = lake.catalog.pointerGeneration();
    if (ctx.json) {
      await ctx.out.json({ table: ref.text, dropped: exists, generation });
      return;
    }
    await ctx.out.line(exists ? `dropped ${ref.text} (lake generation ${generation}; its files stay until gc)` : `${ref.text} does not exist; nothing dropped`);
  } finally {
    lake.close();
  }
}
