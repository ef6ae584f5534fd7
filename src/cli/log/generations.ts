// `mimir log generations [--limit N]`: the lake's generations (catalog
// commits), newest first: number, time (ISO 8601 UTC), note and the tables
// each one touched (a dropped table is marked). Read-only; works on any lake
// made by Mimir, with or without the event log.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatTable, isoTime } from '../output.ts';
import { identToString } from '../../lake/catalog/sql-catalog.ts';
import { openExistingLake } from './common.ts';

const DEFAULT_LIMIT = 20;

export const command: CommandSpec = {
  usage: '[--limit N] [options]',
  positionals: [],
  options: [{ name: 'limit', kind: 'value', arg: 'N', help: `show the newest N generations (default ${DEFAULT_LIMIT}; 0 = all)` }],
  examples: ['mimir log generations', 'mimir log generations --limit 5 --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const n = args.count('limit') ?? DEFAULT_LIMIT;
  const lake = openExistingLake(ctx, { write: false });
  try {
    const gens = lake.catalog.generations({ limit: n === 0 ? Number.MAX_SAFE_INTEGER : n });
    const rows = gens.map((g) => ({
      generation: g.generation,
      timeMs: g.timeMs,
      time: isoTime(g.timeMs),
      note: g.note,
      tables: g.tables.map((t) => ({ table: identToString(t.ident), dropped: t.metadataLocation === null })),
    }));
    if (ctx.json) {
      await ctx.out.json(rows);
      return;
    }
    if (rows.length === 0) {
      await ctx.out.line(`lake ${lake.root}: no generations recorded`);
      return;
    }
    await ctx.out.line(
      formatTable(
        ['generation', 'time', 'note', 'tables'],
        rows.map((r) => [String(r.generation), r.time, r.note ?? '-', r.tables.map((t) => (t.dropped ? `${t.table} (dropped)` : t.table)).join(', ') || '-']),
      ),
    );
  } finally {
    lake.close();
  }
}
