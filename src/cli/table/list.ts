// `mimir table list`: the namespaces and tables of the lake at --lake (a
// folder, or a SQLite catalog file) in the catalog --catalog-name names, with
// each table's current metadata file; other catalog names the file holds are
// pointed out. `--json`: the lake folder, the catalog, its current generation
// and the namespaces with their tables. Opens the catalog read-only.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { LAKE_PREFIX, openLake } from './ref.ts';
import { identToString } from '../../lake/catalog/catalog.ts';

export const command: CommandSpec = {
  usage: '[options]',
  positionals: [],
  options: [],
  examples: ['mimir table list', 'mimir table list --lake /data/lake --json', 'mimir table list --lake warehouse/pyiceberg_catalog.db --catalog-name default'],
  run,
};

async function run(_args: Args, ctx: Context): Promise<void> {
  const lake = openLake(ctx, { create: false, readOnly: true });
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
    const others = cat.catalogNames().filter((n) => n !== cat.name);
    if (ctx.json) {
      await ctx.out.json({ lake: lake.root, catalog: cat.name, catalogFile: cat.path, otherCatalogs: others, generation, namespaces });
      return;
    }
    const tables = namespaces.reduce((n, ns) => n + ns.tables.length, 0);
    const lines: string[] = [
      `lake ${lake.root} (catalog '${cat.name}'): ${plural(namespaces.length, 'namespace')}, ${plural(tables, 'table')}, generation ${generation}`,
    ];
    if (others.length > 0) {
      lines.push(`${cat.path} also holds catalog${others.length > 1 ? 's' : ''} ${others.map((n) => `'${n}'`).join(', ')} (choose with --catalog-name)`);
    }
    for (const ns of namespaces) {
      lines.push(`${ns.namespace}${ns.tables.length === 0 ? '  (no tables)' : ''}`);
      for (const t of ns.tables) lines.push(`  ${t.table}`);
    }
    await ctx.out.line(lines.join('\n'));
  } finally {
    lake.close();
  }
}
