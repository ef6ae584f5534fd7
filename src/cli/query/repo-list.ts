// `mimir repo list [--as-of WHEN]`: the repos of the lake, one line each —
// name, crates and live items, the last run (id, generation and its time, rev
// when the run recorded one) — read by src/query/inventory.ts. Read-only.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatTable, plural } from '../output.ts';
import { AS_OF, parseAsOf } from './common.ts';
import { openLog } from '../log/common.ts';
import { repoList, type LastRun } from '../../query/inventory.ts';

export const command: CommandSpec = {
  usage: '[--as-of WHEN] [options]',
  positionals: [],
  options: [AS_OF],
  examples: ['mimir repo list', 'mimir repo list --json', 'mimir repo list --as-of 2024-05-01T00:00:00Z'],
  run,
};

/** `run 2026… (ingest, ok) at generation 12, 2026-12-07T…Z, rev 4649aa97c1d2`, or `-`. */
export function runText(r: LastRun | null): string {
  if (r === null) return '-';
  const at = r.generation === null ? '' : ` g${r.generation} ${r.time}`;
  return `${r.run}${at}${r.rev ? ` rev ${r.rev.slice(0, 12)}` : ''}`;
}

async function run(args: Args, ctx: Context): Promise<void> {
  const asOf = parseAsOf(args);
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  try {
    const a = await repoList(open.log, { asOf });
    if (ctx.json) {
      await ctx.out.json(a);
      return;
    }
    if (a.repos.length > 0) {
      await ctx.out.line(formatTable(['REPO', 'CRATES', 'ITEMS', 'LAST RUN'], a.repos.map((r) => [r.repo, String(r.crates), String(r.items), runText(r.lastRun)])));
    }
    ctx.out.err(`${plural(a.repos.length, 'repo')} at generation ${a.generation}`);
  } finally {
    open.close();
  }
}
