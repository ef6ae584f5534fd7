// `mimir table scan TABLE`: rows as JSON Lines on stdout, one object per row
// keyed by column name, values rendered per type (longs exact, dates and
// timestamps ISO, bytes hex). Streams batch by batch: memory is bounded by a
// row group, never by the table. A one-line report goes to stderr at the end
// when stderr is a terminal or with --stats (as JSON with --json).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { LOCATION_ROOT_OPTION, SNAPSHOT_OPTIONS, TABLE_ARG, openTable, snapshotSelector } from './ref.ts';
import { and, parseWhere, type Expr } from '../../lake/expr/expr.ts';
import { displayValue } from '../../lake/spec/values.ts';
import { stringifyJson } from '../../lake/spec/json.ts';
import { UsageError } from '../args.ts';

export const command: CommandSpec = {
  usage: 'TABLE [options]',
  description: [
    'Filters: col=value, col!=value, col<value, col<=value, col>value, col>=value,',
    'col=[a,b,c] (any of), col~null (is null), col!~null (is not null). Several --where are ANDed. Values are',
    'read as the column\'s type (e.g. a date as 2024-05-01, a long with every digit).',
  ].join('\n'),
  positionals: [TABLE_ARG],
  options: [
    { name: 'columns', short: 'c', kind: 'list', arg: 'A,B', help: 'output only these columns, in this order' },
    { name: 'where', short: 'w', kind: 'list', arg: 'FILTER', help: 'keep rows matching FILTER (see above)' },
    { name: 'limit', short: 'n', kind: 'value', arg: 'N', help: 'stop after N rows' },
    ...SNAPSHOT_OPTIONS,
    LOCATION_ROOT_OPTION,
    { name: 'stats', kind: 'flag', help: 'print the one-line report on stderr even when it is not a terminal' },
  ],
  examples: [
    "mimir table scan lake:demo.crates --where 'edition=2021' --where 'downloads>=1000000' --columns name,version,downloads",
    'mimir table scan path/to/bunnies/metadata/v5.metadata.json --location-root path/to/bunnies --limit 5',
    'mimir table scan lake:demo.crates --as-of 2024-05-01T12:00:00Z --stats',
  ],
  run,
};

const FLUSH_BYTES = 64 * 1024;

async function run(args: Args, ctx: Context): Promise<void> {
  const started = performance.now();
  const sel = snapshotSelector(args);
  const limit = args.count('limit');
  let filter: Expr | undefined;
  const wheres = args.list('where');
  try {
    const parts = wheres.map((w) => parseWhere(w));
    if (parts.length > 0) filter = parts.length === 1 ? parts[0] : and(...parts);
  } catch (e) {
    throw new UsageError((e as Error).message, args.commandPath);
  }
  const columns = args.commaList('columns');
  const open = await openTable(ctx, args);
  let rows = 0;
  try {
    const t = open.table;
    const scan = t.scan({ ...sel, ...(filter ? { filter } : {}), ...(columns.length > 0 ? { columns } : {}) });
    if (!scan.snapshot && (sel.asOfMs !== undefined || sel.ref !== undefined)) {
      ctx.out.err(`note: ${open.label} had no snapshot then; no rows`);
    }
    const showProgress = ctx.out.stderrIsTTY && !ctx.out.stdoutIsTTY;
    let buf = '';
    if (limit !== 0) {
      outer: for await (const b of scan.batches()) {
        const types = b.fields.map((f) => f.type);
        const names = b.fields.map((f) => f.name);
        for (let i = 0; i < b.numRows; i++) {
          const o: Record<string, unknown> = {};
          for (let c = 0; c < names.length; c++) o[names[c]!] = displayValue(types[c]!, b.columns[c]![i] ?? null);
          buf += `${stringifyJson(o)}\n`;
          rows++;
          if (buf.length >= FLUSH_BYTES) {
            await ctx.out.write(buf);
            buf = '';
          }
          if (limit !== undefined && rows >= limit) break outer;
        }
        if (showProgress) ctx.out.progress(`scan: ${plural(rows, 'row')}, ${scan.metrics.filesOpened} of ${scan.metrics.dataFiles - scan.metrics.dataFilesSkipped} files read`);
      }
    }
    if (buf) await ctx.out.write(buf);
    if (ctx.out.stderrIsTTY || args.flag('stats')) {
      const m = scan.metrics;
      const ms = Math.round(performance.now() - started);
      if (ctx.json) {
        ctx.out.err(stringifyJson({ table: open.label, snapshotId: scan.snapshot?.snapshotId ?? null, rows, ms, ...m }));
      } else {
        const snapText = scan.snapshot ? `snapshot ${scan.snapshot.snapshotId}` : 'no snapshot';
        ctx.out.err(
          `scan ${open.label} (${snapText}): ${plural(rows, 'row')}${limit !== undefined && rows >= limit ? ' (limit)' : ''}; ` +
            `data files ${m.filesOpened - m.filesMetricsSkipped} read, ${m.dataFilesSkipped + m.filesMetricsSkipped} skipped of ${m.dataFiles}` +
            `${m.filesMetricsSkipped > 0 ? ` (${m.filesMetricsSkipped} after a footer check: name-mapped table)` : ''}` +
            `${m.manifestsSkipped > 0 ? ` (+${plural(m.manifestsSkipped, 'manifest')} skipped)` : ''}` +
            `${m.deleteFiles > 0 ? `, ${plural(m.deleteFiles, 'delete file')} (${plural(m.rowsDeleted, 'row')} deleted)` : ''}; ` +
            `row groups ${m.rowGroups} read, ${m.rowGroupsSkipped} skipped; ${ms} ms`,
        );
      }
    }
  } finally {
    open.close();
  }
}
