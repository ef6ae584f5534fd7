// `mimir table files TABLE`: the live data and delete files of the current
// snapshot (or the one picked by --snapshot/--ref/--as-of/--generation):
// path as recorded, content, records, size, partition. `--json`: an array,
// partition values rendered per type (exact longs).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatBytes, formatTable, plural } from '../output.ts';
import { LOCATION_ROOT_OPTION, SNAPSHOT_OPTIONS, TABLE_ARG, openTable, snapshotSelector } from './ref.ts';
import { partitionPath, partitionType } from '../../lake/spec/partition.ts';
import { specById } from '../../lake/spec/metadata.ts';
import { displayValue } from '../../lake/spec/values.ts';
import type { Schema } from '../../lake/spec/types.ts';

export const command: CommandSpec = {
  usage: 'TABLE [options]',
  positionals: [TABLE_ARG],
  options: [LOCATION_ROOT_OPTION, ...SNAPSHOT_OPTIONS],
  examples: ['mimir table files lake:demo.crates', 'mimir table files lake:demo.crates --snapshot 4215371287374362436 --json'],
  run,
};

const CONTENT = ['data', 'position-deletes', 'equality-deletes'] as const;

async function run(args: Args, ctx: Context): Promise<void> {
  const sel = snapshotSelector(args);
  const open = await openTable(ctx, args);
  try {
    const t = open.table;
    const snap = t.snapshot(sel);
    const files = await t.dataFiles(sel);
    // partition values are typed by the schema the snapshot was written with
    const schema: Schema = (snap?.schemaId !== undefined && t.metadata.schemas.find((s) => s.schemaId === snap.schemaId)) || t.schema;
    const described = files.map(({ file, specId, sequenceNumber }) => {
      const spec = specById(t.metadata, specId);
      const ptype = spec ? partitionType(spec, schema) : undefined;
      const partition: Record<string, unknown> = {};
      ptype?.fields.forEach((f, i) => (partition[f.name] = displayValue(f.type, file.partition[i] ?? null)));
      return {
        path: file.filePath,
        content: CONTENT[file.content] ?? String(file.content),
        format: file.fileFormat,
        records: file.recordCount,
        sizeBytes: file.fileSizeInBytes,
        specId,
        partition,
        partitionPath: spec && spec.fields.length > 0 ? partitionPath(spec, schema, file.partition) : '',
        sequenceNumber,
        ...(file.equalityIds ? { equalityIds: file.equalityIds } : {}),
      };
    });
    if (ctx.json) {
      await ctx.out.json(described.map(({ partitionPath: _p, ...rest }) => rest));
      return;
    }
    if (!snap) {
      await ctx.out.line(`${open.label}: no snapshot, no files`);
      return;
    }
    const rows = described.map((d) => [d.path, d.content, String(d.records), formatBytes(d.sizeBytes), d.partitionPath || '-']);
    await ctx.out.line(formatTable(['path', 'content', 'records', 'size', 'partition'], rows));
    if (!ctx.out.stderrIsTTY) return;
    const data = described.filter((d) => d.content === 'data');
    const records = data.reduce((n, d) => n + d.records, 0n);
    const bytes = described.reduce((n, d) => n + d.sizeBytes, 0n);
    ctx.out.err(
      `${plural(data.length, 'data file')} (${plural(records, 'record')}), ${plural(described.length - data.length, 'delete file')}, ${formatBytes(bytes)} in snapshot ${snap.snapshotId}`,
    );
  } finally {
    open.close();
  }
}
