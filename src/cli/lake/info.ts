// `mimir lake info`: where the lake is and where it was made — the folder it
// is opened at, the root its catalog records (and whether the lake was moved
// or copied from there), read-only or not, the catalog's generation, and per
// table its current metadata file, where that file is read from here and
// whether it lies inside the lake. `--json`: the same as one object. Read-only.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { identToString } from '../../lake/catalog/catalog.ts';
import { openExistingLake } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[options]',
  description: [
    'A lake copied or moved to another folder is an independent lake: its catalog records the root',
    'it was created at, and Mimir maps that root onto the folder it is opened at (never writing or',
    'deleting outside it). This shows both roots.',
  ].join('\n'),
  positionals: [],
  options: [],
  examples: ['mimir lake info', 'mimir lake info --lake /data/copy --json'],
  run,
};

async function run(_args: Args, ctx: Context): Promise<void> {
  const lake = openExistingLake(ctx, { readOnly: true });
  try {
    const tables = lake.catalog.listAllTables().map((ident) => {
      const pointer = lake.catalog.loadTable(ident)?.metadataLocation ?? null;
      return {
        table: identToString(ident),
        metadataLocation: pointer,
        readFrom: pointer === null ? null : lake.io.local(pointer),
        insideLake: pointer === null ? null : lake.io.inside(pointer),
      };
    });
    const info = {
      root: lake.root,
      recordedRoot: lake.recordedRoot,
      rootSource: lake.rootSource,
      moved: lake.moved,
      formerRoots: lake.formerRoots,
      readOnly: lake.readOnly,
      catalog: lake.catalog.path,
      generation: lake.catalog.pointerGeneration(),
      tables,
    };
    if (ctx.json) {
      await ctx.out.json(info);
      return;
    }
    const lines = [
      `lake ${lake.root}${lake.moved ? ` (moved or copied: created at ${lake.recordedRoot}, whose paths Mimir maps here)` : ''}`,
      `catalog ${lake.catalog.path}: generation ${info.generation}, ${plural(tables.length, 'table')}, ${lake.readOnly ? 'read-only' : 'read-write'}` +
        (lake.formerRoots.length > 0 ? `; former roots ${lake.formerRoots.join(', ')}` : ''),
    ];
    for (const t of tables) lines.push(`  ${t.table}  ${t.readFrom ?? '(no pointer)'}${t.insideLake === false ? '  (outside the lake: read only, never written)' : ''}`);
    await ctx.out.line(lines.join('\n'));
  } finally {
    lake.close();
  }
}
