// `mimir lake relocate`: a lake moved or copied to another folder is used by
// Mimir as is (paths map onto the folder it is opened at); this makes the move
// visible to other engines too — the folder becomes the lake's recorded root
// and every table's current metadata is rewritten to name paths under it
// (src/lake/maintenance/relocate.ts). Prints one line per table, then the
// one-line report; exit 1 when a table was refused. No data file is moved,
// rewritten or deleted.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatRelocateReport, relocateLake } from '../../lake/maintenance/relocate.ts';
import { openExistingLake, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[options]',
  description: [
    'Run it in the new folder once a move or copy is meant to last, so that Spark, Trino, DuckDB or PyIceberg,',
    'which read the absolute paths in the metadata, read this folder rather than the old one. Mimir does not',
    'need it. Older generations keep naming the old root, which Mimir still maps onto this folder.',
  ].join('\n'),
  positionals: [],
  options: [],
  examples: ['cp -a /data/lake /backup/lake && mimir lake relocate --lake /backup/lake'],
  run,
};

async function run(_args: Args, ctx: Context): Promise<number> {
  const lake = openExistingLake(ctx);
  try {
    const report = await withProgress(ctx.out, 'lake relocate', () => relocateLake(lake));
    if (ctx.json) await ctx.out.json(report);
    else {
      for (const t of report.tables) {
        await ctx.out.line(`${t.table}: ${t.status === 'relocated' ? `relocated (${t.manifests} manifest(s) rewritten)` : t.status === 'already' ? `already under ${report.to}` : `refused — ${t.reason}`}`);
      }
      ctx.out.err(formatRelocateReport(report));
    }
    return report.tables.some((t) => t.status === 'refused') ? 1 : 0;
  } finally {
    lake.close();
  }
}
