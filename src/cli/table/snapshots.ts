// `mimir table snapshots TABLE`: one line per snapshot, oldest first (by
// sequence number): id, parent, sequence number, time, operation, records
// added and total, and the refs pointing at it. `--json`: an array with exact
// 64-bit ids and the full summary.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatTable, isoTime } from '../output.ts';
import { GENERATION_OPTION, LOCATION_ROOT_OPTION, TABLE_ARG, openTable } from './ref.ts';

export const command: CommandSpec = {
  usage: 'TABLE [options]',
  positionals: [TABLE_ARG],
  options: [LOCATION_ROOT_OPTION, GENERATION_OPTION],
  examples: ['mimir table snapshots lake:demo.crates', 'mimir table snapshots lake:demo.crates --json'],
  run,
};

/** A summary count as an exact integer (null when absent or not a count). */
const count = (v: string | undefined): bigint | null => (v !== undefined && /^\d+$/.test(v) ? BigInt(v) : null);

async function run(args: Args, ctx: Context): Promise<void> {
  const open = await openTable(ctx, args);
  try {
    const m = open.table.metadata;
    const snaps = [...m.snapshots].sort((a, b) => (a.sequenceNumber < b.sequenceNumber ? -1 : a.sequenceNumber > b.sequenceNumber ? 1 : a.timestampMs < b.timestampMs ? -1 : 1));
    const refsOf = (id: bigint): string[] => Object.entries(m.refs).filter(([, r]) => r.snapshotId === id).map(([name]) => name);
    if (ctx.json) {
      await ctx.out.json(
        snaps.map((s) => ({
          snapshotId: s.snapshotId,
          parentSnapshotId: s.parentSnapshotId ?? null,
          sequenceNumber: s.sequenceNumber,
          timestampMs: s.timestampMs,
          time: isoTime(s.timestampMs),
          operation: s.summary.operation,
          addedRecords: count(s.summary['added-records']),
          totalRecords: count(s.summary['total-records']),
          schemaId: s.schemaId ?? null,
          manifestList: s.manifestList,
          current: s.snapshotId === m.currentSnapshotId,
          refs: refsOf(s.snapshotId),
          summary: s.summary,
        })),
      );
      return;
    }
    if (snaps.length === 0) {
      await ctx.out.line(`${open.label}: no snapshots (empty table)`);
      return;
    }
    const rows = snaps.map((s) => [
      String(s.snapshotId),
      s.parentSnapshotId === undefined ? '-' : String(s.parentSnapshotId),
      String(s.sequenceNumber),
      isoTime(s.timestampMs),
      s.summary.operation,
      s.summary['added-records'] ?? '-',
      s.summary['total-records'] ?? '-',
      [s.snapshotId === m.currentSnapshotId ? 'current' : '', ...refsOf(s.snapshotId)].filter((x) => x).join(' '),
    ]);
    await ctx.out.line(formatTable(['snapshot', 'parent', 'seq', 'time', 'operation', 'added', 'total', 'refs'], rows));
  } finally {
    open.close();
  }
}
