// `mimir lake check [--footers] [--current]`: read every manifest list,
// manifest and data file the lake's tables name and check each against what
// the metadata says of it (src/lake/maintenance/check.ts). Prints one line per
// problem (`problem TABLE FILE: what`), then the one-line report; exit 1 when
// there is any problem. `--json`: the report. Read-only.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { checkLake, formatCheckReport } from '../../lake/maintenance/check.ts';
import { openExistingLake, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[--footers] [--current] [options]',
  description: [
    'Manifests are checked against their checksum (files Mimir wrote), their length and the file and row counts',
    'their manifest list records; data and delete files must exist with the size their entry records.',
    'Exit 1 when any problem is found; nothing is changed.',
  ].join('\n'),
  positionals: [],
  options: [
    { name: 'footers', kind: 'flag', help: "also open each data file's Parquet footer and compare its row count with the manifest entry" },
    { name: 'current', kind: 'flag', help: 'only the current snapshot of each table (default: every snapshot the metadata keeps)' },
  ],
  examples: ['mimir lake check', 'mimir lake check --footers --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const lake = openExistingLake(ctx, { readOnly: true });
  try {
    const report = await withProgress(ctx.out, 'lake check', () => checkLake(lake, { footers: args.flag('footers'), currentOnly: args.flag('current') }));
    if (ctx.json) await ctx.out.json(report);
    else {
      for (const p of report.problems) await ctx.out.line(`problem ${p.table} ${p.file}: ${p.problem}`);
      ctx.out.err(formatCheckReport(report));
    }
    return report.problems.length === 0 ? 0 : 1;
  } finally {
    lake.close();
  }
}
