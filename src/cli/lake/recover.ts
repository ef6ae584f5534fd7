// `mimir lake recover [--dry-run] [--use TABLE=FILE …]`: a lake whose
// catalog.db was lost (deleted, emptied or otherwise damaged: the damaged file
// is moved aside as catalog.db.damaged-<time>) gets every table folder
// re-registered from its newest valid metadata file
// (src/lake/catalog/recover.ts). A lake inside the folder (its own catalog)
// is left alone and named. Prints one line per table — what was found,
// what was taken, what newer files were passed over and why — then the
// one-line report; exit 1 when some table folder could not be recovered.
// Nothing is deleted; commands that would have created a new catalog over the
// folders refuse and point here.
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { formatRecoverReport, recoverCatalog, type RecoveredTable } from '../../lake/catalog/recover.ts';
import { openExistingLake } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[--dry-run] [--use TABLE=FILE …] [options]',
  description: [
    'For each folder <namespace>/<table>/ with metadata files: the highest version whose file parses, names',
    'this folder as its location and whose current snapshot\'s manifest list exists is registered, as',
    "Iceberg's register_table does. Tables already in the catalog are left alone. Nothing is deleted.",
    'An empty or damaged catalog.db is moved aside (catalog.db.damaged-<time>) first. A folder below holding',
    "a lake of its own (its catalog.db or mimir.toml) is not searched: recover it with --lake at that folder.",
    'The lake\'s generation history starts again: --as-of older generations no longer reads.',
  ].join('\n'),
  positionals: [],
  options: [
    { name: 'dry-run', kind: 'flag', help: 'report what would be registered; write nothing' },
    { name: 'use', kind: 'list', arg: 'TABLE=FILE', help: 'register TABLE (ns.table) from this metadata file instead of the newest valid one' },
  ],
  examples: ['mimir lake recover --dry-run', 'mimir lake recover', 'mimir lake recover --use mimir.code_node_events=00012-….metadata.json'],
  run,
};

function tableLine(t: RecoveredTable, dryRun: boolean): string {
  const rejected = t.rejected.length > 0 ? `; passed over ${t.rejected.map((r) => `${r.file} (${r.reason})`).join(', ')}` : '';
  const same = t.sameVersion.length > 0 ? `; also valid at that version: ${t.sameVersion.join(', ')} (an attempt that never landed? --use picks another)` : '';
  switch (t.status) {
    case 'already':
      return `${t.table}: already in the catalog (${t.metadata})`;
    case 'registered':
      return (
        `${t.table}: ${dryRun ? 'would register' : 'registered'} ${t.metadata} (version ${t.version}, ` +
        `${t.snapshotId === undefined ? 'no snapshot' : `snapshot ${t.snapshotId}`}, of ${t.candidates} metadata file(s))${rejected}${same}`
      );
    case 'unrecoverable':
      return `${t.table}: not recovered — ${t.reason ?? 'no valid metadata file'}${rejected}`;
  }
}

async function run(args: Args, ctx: Context): Promise<number> {
  const use = new Map<string, string>();
  for (const u of args.list('use')) {
    const eq = u.indexOf('=');
    if (eq <= 0 || eq === u.length - 1) throw new UsageError(`--use: expected TABLE=FILE (e.g. mimir.code_node_events=00012-….metadata.json), found "${u}"`, args.commandPath);
    use.set(u.slice(0, eq), u.slice(eq + 1));
  }
  if (ctx.warehouse !== undefined) {
    throw new Error(`lake recover is not supported yet on a lake whose tables live in object storage (${ctx.warehouse}): it searches the lake folder ${ctx.lakeDir} on the local disk — nothing done`);
  }
  const report = await recoverCatalog(ctx.lakeDir, { dryRun: args.flag('dry-run'), use });
  if (!report.dryRun) {
    // the lake now opens as any other: say so if it lives elsewhere than it was made
    openExistingLake(ctx, { readOnly: true }).close();
  }
  if (ctx.json) await ctx.out.json(report);
  else {
    for (const t of report.tables) await ctx.out.line(tableLine(t, report.dryRun));
    ctx.out.err(formatRecoverReport(report));
  }
  return report.tables.some((t) => t.status === 'unrecoverable') ? 1 : 0;
}
