// `mimir table create lake:ns.t --schema FILE`: an empty table from an
// Iceberg schema JSON (field ids as the file gives them), optionally
// partitioned and with properties. One catalog commit: the table exists
// afterwards or not at all.
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { TABLE_ARG, openLake, parseTableRef } from './ref.ts';
import { parsePartitionBy, parseProperties, readSchemaFile } from './input.ts';
import { plural } from '../output.ts';

export const command: CommandSpec = {
  usage: 'lake:<namespace>.<table> --schema FILE [options]',
  positionals: [{ ...TABLE_ARG, help: 'lake:<namespace>.<table>' }],
  options: [
    { name: 'schema', kind: 'value', arg: 'FILE', help: 'Iceberg schema JSON (a describe --json output works too)' },
    { name: 'partition-by', kind: 'list', arg: 'SPEC', help: 'col, bucket[N](col), truncate[W](col), year|month|day|hour(col)' },
    { name: 'property', kind: 'list', arg: 'K=V', help: 'a table property' },
  ],
  examples: ["mimir table create lake:demo.crates --schema samples/table/schema.json --partition-by 'bucket[8](name)'"],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const ref = parseTableRef(args.positionals[0]!, args.commandPath);
  if (ref.kind !== 'lake') throw new UsageError(`${ref.path} is a metadata file; create makes a lake: table`, args.commandPath);
  const schemaFile = args.value('schema');
  if (schemaFile === undefined) throw new UsageError('missing --schema FILE', args.commandPath);
  const schema = readSchemaFile(schemaFile);
  const partitionBy = parsePartitionBy(args.list('partition-by'), schema, args.commandPath);
  const properties = parseProperties(args.list('property'), args.commandPath);
  const lake = openLake(ctx, { create: true });
  try {
    if (lake.tableExists(ref.ident)) throw new Error(`table ${ref.text} already exists in ${lake.root}; nothing created`);
    const t = await lake.createTable(ref.ident, schema, { partitionBy, properties });
    const generation = lake.catalog.pointerGeneration();
    if (ctx.json) {
      await ctx.out.json({ table: ref.text, location: t.metadata.location, metadataLocation: t.metadataLocation, generation });
      return;
    }
    const parts = partitionBy.length > 0 ? `, partitioned by ${partitionBy.map((p) => p.name).join(', ')}` : '';
    await ctx.out.line(`created ${ref.text} (${plural(schema.fields.length, 'column')}${parts}) at ${t.metadata.location}, lake generation ${generation}`);
  } finally {
    lake.close();
  }
}
