// Maintenance after a run: what keeps a lake that is ingested often small and
// fast without anyone running `mimir compact`. Each run appends a few small
// files to each table it touches; once a table holds more *small files* than
// its threshold, this compacts it (compact.ts: one replace commit that keeps
// whatever was appended meanwhile, by any process).
//
// Small files: for an event table, live data files that compaction did not
// write (they lack the table's compaction sort order); for `ingest_runs`,
// files of fewer rows than its compaction target. Threshold: the table
// property `mimir.maintain.small-files` (default 16); `mimir.maintain` =
// `false` turns it off for that table; ingest's `--no-maintain` skips it for
// one run.
//
// Invariant: maintenance changes no row any reader sees (compaction's
// invariant), so running it after any run, in any process, at any time, is
// safe; two processes compacting the same table at once land one rewrite and
// the other finds its files replaced and skips. Cost: a table is compacted
// about once every `threshold` runs that touch it. Crash story: compaction's.
//
// Other tables join here: the serving state tables (log/state) add their own
// check-and-rewrite as a `MaintenanceTask` in `TASKS` below.
import type { Table } from '../lake/table/table.ts';
import { compact, RUNS_TARGET_FILE_ROWS, type CompactTableReport } from './compact.ts';
import type { EventLog } from './event-log.ts';
import {
  DEFAULT_MAINTAIN_SMALL_FILES, INGEST_RUNS, PROP_MAINTAIN, PROP_MAINTAIN_SMALL_FILES, SOURCE_KINDS, qualified, ringTableName, tableName,
} from './schema.ts';

export interface MaintainTableCheck {
  table: string;
  smallFiles: number;
  threshold: number;
  /** The compaction, when the table passed its threshold. */
  compacted?: CompactTableReport;
  /** Why the table was not looked at (maintenance off for it). */
  skipped?: string;
}

export interface MaintainReport {
  tables: MaintainTableCheck[];
  ms: number;
}

/** A table family's own maintenance (the state tables'): checks its tables and rewrites those that need it. */
export interface MaintenanceTask {
  name: string;
  run(log: EventLog): Promise<MaintainTableCheck[]>;
}

/**
 * Maintenance beyond the event tables and `ingest_runs`. The state layer adds
 * its task here (one entry), so every ingest maintains its tables too.
 */
const TASKS: MaintenanceTask[] = [];

/** Live data files of `t` that count as small for table `name` (see the module comment). */
export async function smallFiles(t: Table, name: string): Promise<number> {
  const live = await t.dataFiles();
  if (name === INGEST_RUNS) return live.filter((f) => f.file.recordCount < BigInt(RUNS_TARGET_FILE_ROWS)).length;
  const order = t.metadata.defaultSortOrderId;
  return live.filter((f) => order === 0 || f.file.sortOrderId !== order).length;
}

/** The threshold of a table (its property, else the default); Infinity when maintenance is off for it. */
function threshold(t: Table): number {
  if (t.properties[PROP_MAINTAIN] === 'false') return Infinity;
  const v = Number(t.properties[PROP_MAINTAIN_SMALL_FILES]);
  return Number.isSafeInteger(v) && v >= 1 ? v : DEFAULT_MAINTAIN_SMALL_FILES;
}

/** Check every event table and `ingest_runs` (or only `tables`), compact those past their threshold, then run the other tasks. */
export async function maintain(log: EventLog, opts: { tables?: string[] } = {}): Promise<MaintainReport> {
  const t0 = Date.now();
  const names = [...SOURCE_KINDS.map(ringTableName), ...SOURCE_KINDS.map(tableName), INGEST_RUNS].filter((n) => opts.tables === undefined || opts.tables.includes(n));
  const checks: MaintainTableCheck[] = [];
  const due: string[] = [];
  for (const name of names) {
    const t = await log.table(name);
    if (!t) continue;
    const limit = threshold(t);
    if (limit === Infinity) {
      checks.push({ table: qualified(name), smallFiles: 0, threshold: 0, skipped: `${PROP_MAINTAIN}=false` });
      continue;
    }
    const small = await smallFiles(t, name);
    checks.push({ table: qualified(name), smallFiles: small, threshold: limit });
    if (small > limit) due.push(name);
  }
  if (due.length > 0) {
    const report = await compact(log, { only: due });
    for (const r of report.tables) {
      const c = checks.find((x) => x.table === r.table);
      if (c) c.compacted = r;
    }
  }
  for (const task of TASKS) checks.push(...(await task.run(log)));
  return { tables: checks, ms: Date.now() - t0 };
}

/** `maintenance: compacted mimir.code_node_events (17 small files -> 1)`, or '' when nothing was done. */
export function formatMaintainReport(r: MaintainReport): string {
  const done = r.tables.filter((t) => t.compacted);
  if (done.length === 0) return '';
  return `maintenance: compacted ${done.map((t) => {
    const c = t.compacted!;
    return c.skipped ? `${t.table} (skipped: ${c.skipped})` : `${t.table} (${t.smallFiles} small files; files ${c.before.files}->${c.after.files})`;
  }).join(', ')} in ${r.ms} ms`;
}
