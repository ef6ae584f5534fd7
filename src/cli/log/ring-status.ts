// `mimir ring status`: the ring mode of the event log, rows and data files
// per source and ring table (from the current snapshots' manifests), ring rows
// still sitting in the source tables (in a split lake: left for compaction to
// drop; in a unified lake: the whole ring), and the ring's crates (distinct
// krates of the merged ring read: count and the first few names). Read-only;
// every table is read at one lake generation.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatTable } from '../output.ts';
import { eq } from '../../lake/expr/expr.ts';
import type { EventLog } from '../../log/event-log.ts';
import { COL_KRATE, COL_REPO, INGEST_RUNS, SOURCE_KINDS, UNIVERSE_REPO, qualified, ringTableName, tableName, type Kind } from '../../log/schema.ts';
import { openLog, positiveCount, withProgress } from './common.ts';

const DEFAULT_CRATES_SHOWN = 5;

export const command: CommandSpec = {
  usage: '[options]',
  positionals: [],
  options: [{ name: 'crates', kind: 'value', arg: 'N', help: `ring crate names to show (default ${DEFAULT_CRATES_SHOWN})` }],
  examples: ['mimir ring status', 'mimir ring status --json'],
  run,
};

interface TableStatus {
  table: string;
  kind: Kind | null;
  role: 'source' | 'ring' | 'runs';
  files: number;
  rows: bigint;
}

async function tableStatus(log: EventLog, name: string, kind: Kind | null, role: TableStatus['role'], g: bigint): Promise<TableStatus> {
  const t = await log.table(name, g);
  let files = 0;
  let rows = 0n;
  if (t) {
    for (const f of await t.dataFiles()) {
      files++;
      rows += f.file.recordCount;
    }
  }
  return { table: qualified(name), kind, role, files, rows };
}

async function run(args: Args, ctx: Context): Promise<void> {
  const shown = positiveCount(args, 'crates') ?? DEFAULT_CRATES_SHOWN;
  const open = await openLog(ctx, { readOnly: 'auto' });
  try {
    const { log } = open;
    const g = log.readGeneration();
    const split = await log.ringSplit(g);
    const result = await withProgress(ctx.out, 'reading ring status', async () => {
      const tables: TableStatus[] = [];
      for (const k of SOURCE_KINDS) tables.push(await tableStatus(log, tableName(k), k, 'source', g));
      for (const k of SOURCE_KINDS) tables.push(await tableStatus(log, ringTableName(k), k, 'ring', g));
      tables.push(await tableStatus(log, INGEST_RUNS, null, 'runs', g));
      const inSource: Record<string, bigint> = {};
      let inSourceTotal = 0n;
      const crates = new Set<string>();
      let ringRows = 0n;
      for (const k of SOURCE_KINDS) {
        let n = 0n;
        const src = await log.table(tableName(k), g);
        if (src) for await (const b of src.scan({ filter: eq(COL_REPO, UNIVERSE_REPO), columns: [COL_REPO] }).batches()) n += BigInt(b.numRows);
        inSource[k] = n;
        inSourceTotal += n;
        // the merged ring read: ring table when split, the source's ring rows when unified
        for await (const b of log.scan(k, { filter: eq(COL_REPO, UNIVERSE_REPO), columns: [COL_KRATE], generation: g })) {
          ringRows += BigInt(b.numRows);
          const col = b.columns[b.fields.findIndex((f) => f.name === COL_KRATE)] ?? [];
          for (const v of col) if (typeof v === 'string') crates.add(v);
        }
      }
      return { tables, inSource, inSourceTotal, crates: [...crates].sort(), ringRows };
    });
    const mode = split ? 'split' : 'unified';
    if (ctx.json) {
      await ctx.out.json({
        lake: open.lake.root,
        generation: g,
        mode,
        tables: result.tables,
        ringRows: result.ringRows,
        ringRowsInSourceTables: { ...result.inSource, total: result.inSourceTotal },
        ringCrates: { count: result.crates.length, first: result.crates.slice(0, shown) },
      });
      return;
    }
    const stale = split
      ? result.inSourceTotal > 0n
        ? `${result.inSourceTotal} old ring row(s) still in the source tables (dropped by 'mimir compact')`
        : 'no ring rows left in the source tables'
      : `the ring lives in the source tables (${result.inSourceTotal} row(s))`;
    const more = result.crates.length > shown ? `, … (${result.crates.length - shown} more)` : '';
    const lines = [
      `event log at ${open.lake.root}: ${mode}, generation ${g}`,
      '',
      formatTable(
        ['table', 'role', 'files', 'rows', 'ring rows'],
        result.tables.map((t) => [t.table, t.role, String(t.files), String(t.rows), t.role === 'source' ? String(result.inSource[t.kind!]) : t.role === 'ring' ? String(t.rows) : '-']),
      ),
      '',
      `ring: ${result.ringRows} row(s) in ${result.crates.length} crate(s)${result.crates.length > 0 ? `: ${result.crates.slice(0, shown).join(', ')}${more}` : ''}`,
      stale,
    ];
    await ctx.out.line(lines.join('\n'));
  } finally {
    open.close();
  }
}
