// `mimir table append lake:ns.t --jsonl FILE`: append JSON Lines rows in one
// snapshot, creating the table from `--schema FILE` when it does not exist.
// Rows are parsed in batches of --batch-rows and streamed to the lake's
// writer (which buffers up to a file's row budget per partition); data files are
// written as they fill and committed once at the end, so a failure or a kill
// before the commit leaves the table as it was (the files written so far are
// orphans for gc). Ends with a one-line report (or --json).
import { existsSync } from 'node:fs';
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { formatBytes, plural } from '../output.ts';
import { TABLE_ARG, openLake, parseTableRef } from './ref.ts';
import { jsonlBatches, parsePartitionBy, parseProperties, readSchemaFile, type JsonlProgress } from './input.ts';
import type { Batch, PartitionField, Schema } from '../../lake/spec/types.ts';
import type { Table } from '../../lake/table/table.ts';

export const DEFAULT_BATCH_ROWS = 50_000;

export const command: CommandSpec = {
  usage: 'lake:<namespace>.<table> --jsonl FILE [options]',
  description: [
    'Each line is a JSON object keyed by column name; values are read as the column\'s',
    'type (longs exact at any size, dates as 2024-05-01, timestamps ISO 8601, bytes as hex).',
    'All rows land in one snapshot.',
  ].join('\n'),
  positionals: [{ ...TABLE_ARG, help: 'lake:<namespace>.<table> (a metadata file is read-only)' }],
  options: [
    { name: 'jsonl', kind: 'value', arg: 'FILE', help: 'rows to append, one JSON object a line ("-" for stdin)' },
    { name: 'schema', kind: 'value', arg: 'FILE', help: 'Iceberg schema JSON to create the table with when it does not exist' },
    { name: 'partition-by', kind: 'list', arg: 'SPEC', help: 'when creating: col, bucket[N](col), truncate[W](col), year|month|day|hour(col)' },
    { name: 'property', kind: 'list', arg: 'K=V', help: 'when creating: a table property' },
    { name: 'batch-rows', kind: 'value', arg: 'N', help: `rows parsed per batch (default ${DEFAULT_BATCH_ROWS}); the writer buffers up to mimir.write.file-rows per partition` },
  ],
  examples: [
    'mimir table append lake:demo.crates --schema samples/table/schema.json --jsonl samples/table/crates.jsonl',
    'some-tool | mimir table append lake:demo.crates --jsonl -',
  ],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const started = performance.now();
  const ref = parseTableRef(args.positionals[0]!, args.commandPath);
  if (ref.kind !== 'lake') throw new UsageError(`${ref.path} is a metadata file, read-only; append writes to a lake: table`, args.commandPath);
  const source = args.value('jsonl');
  if (source === undefined) throw new UsageError('missing --jsonl FILE (or --jsonl - for stdin)', args.commandPath);
  if (source !== '-' && !existsSync(source)) throw new Error(`--jsonl ${source}: no such file`);
  const batchRows = args.count('batch-rows') ?? DEFAULT_BATCH_ROWS;
  if (batchRows < 1) throw new UsageError('--batch-rows: expected at least 1', args.commandPath);
  const schemaFile = args.value('schema');

  const lake = openLake(ctx, { create: true });
  try {
    // Read the first batch before creating or committing anything: a bad first
    // line creates no table, and empty input appends nothing.
    const exists = lake.tableExists(ref.ident);
    let table: Table | undefined = exists ? await lake.loadTable(ref.ident) : undefined;
    let schema: Schema;
    let partitionBy: Omit<PartitionField, 'fieldId'>[] = [];
    if (table) schema = table.schema;
    else {
      if (schemaFile === undefined) {
        throw new Error(`table ${ref.text} does not exist in ${ctx.lakeDir}; give --schema FILE to create it`);
      }
      schema = readSchemaFile(schemaFile);
      partitionBy = parsePartitionBy(args.list('partition-by'), schema, args.commandPath);
    }
    const properties = parseProperties(args.list('property'), args.commandPath);
    const progress: JsonlProgress = { rows: 0, lines: 0 };
    const batches = jsonlBatches(source, schema.fields, batchRows, progress);
    const first = await batches.next();
    const created = !table;
    if (!table) table = await lake.createTable(ref.ident, schema, { partitionBy, properties });
    let snapshotId: bigint | undefined;
    let generation: bigint | undefined;
    let files = 0;
    let bytes = 0n;
    if (!first.done) {
      async function* all(): AsyncGenerator<Batch> {
        yield first.value as Batch;
        for await (const b of batches) {
          ctx.out.progress(`append ${ref.text}: ${plural(progress.rows, 'row')} read`);
          yield b;
        }
      }
      const res = await table.append(all());
      snapshotId = res.snapshotId;
      generation = res.generation;
      const snap = snapshotId === undefined ? undefined : table.snapshot({ snapshotId });
      files = Number(snap?.summary['added-data-files'] ?? 0);
      bytes = BigInt(snap?.summary['added-files-size'] ?? 0);
    }
    const ms = Math.round(performance.now() - started);
    if (ctx.json) {
      await ctx.out.json({
        table: ref.text,
        created,
        rows: progress.rows,
        files,
        bytes,
        snapshotId: snapshotId ?? null,
        generation: generation ?? null,
        metadataLocation: table.metadataLocation,
        ms,
      });
      return;
    }
    const what = created ? `created ${ref.text} from ${schemaFile}; ` : '';
    if (snapshotId === undefined) {
      await ctx.out.line(`${what}no rows in ${source === '-' ? 'stdin' : source}; nothing appended (${ms} ms)`);
      return;
    }
    await ctx.out.line(
      `${what}appended ${plural(progress.rows, 'row')} to ${ref.text}: ${plural(files, 'data file')} (${formatBytes(bytes)}), ` +
        `snapshot ${snapshotId}, lake generation ${generation}, ${ms} ms`,
    );
  } finally {
    ctx.out.clearProgress();
    lake.close();
  }
}
