// `mimir universe list [--as-of WHEN]`: the universe crates, one line
// each — name@version, live items, the repos whose live edges point into it
// (with their edge counts) — read by src/query/inventory.ts. Read-only.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatTable, plural } from '../output.ts';
import { AS_OF, parseAsOf } from './common.ts';
import { openLog } from '../log/common.ts';
import { universeList } from '../../query/inventory.ts';

export const command: CommandSpec = {
  usage: '[--as-of WHEN] [options]',
  positionals: [],
  options: [AS_OF],
  examples: ['mimir universe list', 'mimir universe list --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const asOf = parseAsOf(args);
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  try {
    const a = await universeList(open.log, { asOf });
    if (ctx.json) {
      await ctx.out.json(a);
      return;
    }
    const from = (p: Record<string, number>): string => Object.entries(p).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([repo, n]) => `${repo} (${n})`).join(', ') || '-';
    if (a.crates.length > 0) await ctx.out.line(formatTable(['CRATE', 'ITEMS', 'USED BY'], a.crates.map((c) => [c.krate, String(c.items), from(c.pointedFrom)])));
    ctx.out.err(`${plural(a.crates.length, 'universe crate')} at generation ${a.generation}`);
  } finally {
    open.close();
  }
}
