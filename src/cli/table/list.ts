// `mimir table list`: the namespaces and tables of the lake at --lake, with
// each table's current metadata file. `--json`: the lake folder, its current
// generation and the namespaces with their tables.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { LAKE_PREFIX, openLake } from './ref.ts';
import { identToString } from '../../lake/catalog/sql-catalog.ts';

export const command: CommandSpec = {
  usage: '[options]',
  positionals: [],
  options: [],
  examples: ['mimir table list', 'mimir table list --lake /data/lake --json'],
  run,
};

async function run(_args: Args, ctx: Context): Promise<void> {
  const lake = openLake(ctx, { create: false });
  try {
    const cat = lake.catalog;
    const namespaces = cat.listNamespaces().map((ns) => ({
      namespace: ns.join('.'),
      tables: cat.listTables(ns).map((ident) => ({
        table: `${LAKE_PREFIX}${identToString(ident)}`,
        name: ident.name,
        metadataLocation: cat.loadTable(ident)?.metadataLocation ?? null,
      })),
    }));
    const generation = cat.pointerGeneration();
    if (ctx.json) {
      await ctx.out.json({ lake: lake.root, generation, namespaces });
      return;
    }
    const tables = namespaces.reduce((n, ns) => n + ns.tables.length, 0);
    const lines: string[] = [`lake ${lake.root}: ${plural(namespaces.length, 'namespace')}, ${plural(tables, 'table')}, generation ${generation}`];
    for (const ns of namespaces) {
      lines.push(`${ns.namespace}${ns.tables.length === 0 ? '  (no tables)' : ''}`);
      for (const t of ns.tables) lines.push(`  ${t.table}`);
    }
    await ctx.out.line(lines.join('\n'));
  } finally {
    lake.close();
  }
}
