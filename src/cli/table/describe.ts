// `mimir table describe TABLE`: what a table is — location, format version,
// uuid, current snapshot, schema, partition spec, sort order, properties,
// refs. `--json` prints the schema, spec and sort order in Iceberg's own JSON
// shape, so `describe --json` output can feed `create --schema`.
import type { CommandSpec } from '../command.ts';
import { formatPairs, type Args } from '../args.ts';
import type { Context } from '../command.ts';
import { formatTable, isoTime } from '../output.ts';
import { GENERATION_OPTION, LOCATION_ROOT_OPTION, TABLE_ARG, openTable } from './ref.ts';
import { schemaToJson, typeToString } from '../../lake/spec/schema.ts';
import { partitionSpecToJson, sortOrderToJson } from '../../lake/spec/partition.ts';
import { transformToString } from '../../lake/spec/transforms.ts';
import { fieldsById } from '../../lake/spec/schema.ts';
import type { NestedField, PartitionSpec, Schema, SortOrder } from '../../lake/spec/types.ts';

export const command: CommandSpec = {
  usage: 'TABLE [options]',
  positionals: [TABLE_ARG],
  options: [LOCATION_ROOT_OPTION, GENERATION_OPTION],
  examples: [
    'mimir table describe lake:demo.crates',
    'mimir table describe path/to/bunnies/metadata/v5.metadata.json --location-root path/to/bunnies --json',
  ],
  run,
};

/** Field lines of a schema, nested fields indented under their parent. */
function fieldRows(fields: NestedField[], depth = 0, out: string[][] = []): string[][] {
  for (const f of fields) {
    out.push([String(f.id), `${'  '.repeat(depth)}${f.name}`, typeToString(f.type), f.required ? 'required' : 'optional', f.doc ?? '']);
    if (f.type.type === 'struct') fieldRows(f.type.fields, depth + 1, out);
  }
  return out;
}

function specText(spec: PartitionSpec, schema: Schema): string {
  if (spec.fields.length === 0) return `spec ${spec.specId}: unpartitioned`;
  const byId = fieldsById(schema);
  const parts = spec.fields.map((f) => {
    const src = byId.get(f.sourceId)?.name ?? `#${f.sourceId}`;
    return `${transformToString(f.transform)}(${src}) as ${f.name} [${f.fieldId}]`;
  });
  return `spec ${spec.specId}: ${parts.join(', ')}`;
}

function sortText(order: SortOrder | undefined, schema: Schema): string {
  if (!order || order.fields.length === 0) return 'unsorted';
  const byId = fieldsById(schema);
  return order.fields
    .map((f) => `${transformToString(f.transform)}(${byId.get(f.sourceId)?.name ?? `#${f.sourceId}`}) ${f.direction} ${f.nullOrder}`)
    .join(', ');
}

async function run(args: Args, ctx: Context): Promise<void> {
  const open = await openTable(ctx, args);
  try {
    const t = open.table;
    const m = t.metadata;
    const schema = t.schema;
    const spec = t.spec;
    const order = m.sortOrders.find((o) => o.orderId === m.defaultSortOrderId);
    const snap = t.currentSnapshot();
    if (ctx.json) {
      await ctx.out.json({
        table: open.label,
        metadataLocation: t.metadataLocation,
        location: m.location,
        formatVersion: m.formatVersion,
        uuid: m.tableUuid,
        lastUpdatedMs: m.lastUpdatedMs,
        lastSequenceNumber: m.lastSequenceNumber,
        currentSnapshotId: snap?.snapshotId ?? null,
        currentSnapshot: snap
          ? { snapshotId: snap.snapshotId, sequenceNumber: snap.sequenceNumber, timestampMs: snap.timestampMs, operation: snap.summary.operation, summary: snap.summary }
          : null,
        snapshotCount: m.snapshots.length,
        schema: schemaToJson(schema),
        partitionSpec: partitionSpecToJson(spec),
        sortOrder: order ? sortOrderToJson(order) : null,
        properties: m.properties,
        refs: Object.fromEntries(Object.entries(m.refs).map(([name, r]) => [name, { type: r.type, snapshotId: r.snapshotId }])),
      });
      return;
    }
    const snapText = snap
      ? `${snap.snapshotId} (seq ${snap.sequenceNumber}, ${isoTime(snap.timestampMs)}, ${snap.summary.operation}${snap.summary['total-records'] !== undefined ? `, ${snap.summary['total-records']} records` : ''})`
      : 'none (empty table)';
    const refs = Object.entries(m.refs).map(([name, r]) => `${name} (${r.type} -> ${r.snapshotId})`);
    const lines = [
      formatPairs(
        [
          ['table', open.label],
          ['metadata', t.metadataLocation],
          ['location', m.location],
          ['format', `v${m.formatVersion}`],
          ['uuid', m.tableUuid],
          ['updated', isoTime(m.lastUpdatedMs)],
          ['snapshot', snapText],
          ['snapshots', String(m.snapshots.length)],
          ['partition', specText(spec, schema)],
          ['sort order', sortText(order, schema)],
          ['refs', refs.length > 0 ? refs.join(', ') : 'none'],
        ],
        0,
      ),
      '',
      `schema ${schema.schemaId}:`,
      formatTable(['id', 'name', 'type', 'required', 'doc'], fieldRows(schema.fields))
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    ];
    const props = Object.entries(m.properties).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    lines.push('', props.length > 0 ? 'properties:' : 'properties: none');
    if (props.length > 0) lines.push(props.map(([k, v]) => `  ${k} = ${v}`).join('\n'));
    await ctx.out.line(lines.join('\n'));
  } finally {
    open.close();
  }
}
