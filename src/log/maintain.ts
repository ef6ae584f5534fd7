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
// Other tables join here as a `MaintenanceTask` in `TASKS` below: the serving
// state tables (log/state/maintain.ts: a table past 8 delete files, or 8 data
// files beyond its ideal count, is merged into sorted files). Without it each
// run leaves a data and a delete file in each state table, and every lookup
// opens them all. `mimir.maintain=false` on a state table skips it too.
//
// Last, the history task (history.ts): every table of the log's namespace
// holding more than K + slack snapshots (`mimir.history.keep-snapshots`, 32;
// `mimir.history.slack`, 8) is expired down to its newest K (and gc's default
// age bound), deleting the metadata files of the generations that went and
// the files only their snapshots reached — what compaction and merges
// replaced included. Without it every run's manifests, manifest lists and
// metadata files stay for gc's 7 days, and each metadata.json carries every
// earlier snapshot. It honours leases (pins, `mimir serve`, runs in flight in
// any process) like gc, and lists no directory. `mimir.history.keep-snapshots`
// = 0 turns it off for a table (gc's age bound still applies); `mimir.maintain`
// governs the rewrites only.
import type { Table } from '../lake/table/table.ts';
import { compact, RUNS_TARGET_FILE_ROWS, type CompactTableReport } from './compact.ts';
import type { EventLog } from './event-log.ts';
import { expireHistory, historySlack, keepSnapshots } from './history.ts';
import { maintainState } from './state/maintain.ts';
import { STATE_TABLES } from './state/schema.ts';
import {
  DEFAULT_MAINTAIN_SMALL_FILES, INGEST_RUNS, NAMESPACE, PROP_MAINTAIN, PROP_MAINTAIN_SMALL_FILES, SOURCE_KINDS, qualified, ringTableName, tableName,
} from './schema.ts';

export interface MaintainTableCheck {
  table: string;
  smallFiles: number;
  threshold: number;
  /** The compaction, when the table passed its threshold. */
  compacted?: CompactTableReport;
  /** A state table's rewrite (`minor` | `major`), data + delete files before and after. */
  rewritten?: { action: string; before: { dataFiles: number; deleteFiles: number }; after: { dataFiles: number; deleteFiles: number } };
  /** History expired (history task): snapshots, and files deleted with them (metadata files among them). */
  expired?: { snapshots: number; files: number; metadataFiles: number; protected: number };
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

/** The serving state tables (those the lake has, maintenance not off): merged past their own thresholds. */
const STATE_TASK: MaintenanceTask = {
  name: 'state',
  async run(log) {
    const checks: MaintainTableCheck[] = [];
    const tables: (typeof STATE_TABLES)[number][] = [];
    for (const name of STATE_TABLES) {
      const t = await log.table(name);
      if (!t) continue;
      if (t.properties[PROP_MAINTAIN] === 'false') checks.push({ table: qualified(name), smallFiles: 0, threshold: 0, skipped: `${PROP_MAINTAIN}=false` });
      else tables.push(name);
    }
    if (tables.length === 0) return checks;
    // an old lake's equality deletes convert at `state maintain` (or past a threshold), not on every run
    for (const r of (await maintainState(log, { tables, convert: false })).tables) {
      const check: MaintainTableCheck = { table: qualified(r.table), smallFiles: r.before.deleteFiles, threshold: 8 };
      if (r.action !== 'none') check.rewritten = { action: r.action, before: r.before, after: r.after };
      checks.push(check);
    }
    return checks;
  },
};

/**
 * Every table of the log's namespace past K + slack snapshots: expired down to
 * K (history.ts), and reported (`smallFiles` = snapshots before, `threshold` =
 * K + slack); tables within their limit are not listed.
 */
const HISTORY_TASK: MaintenanceTask = {
  name: 'history',
  async run(log) {
    const checks: MaintainTableCheck[] = [];
    const { lake } = log;
    for (const id of lake.catalog.listTables([NAMESPACE])) {
      let t;
      try {
        t = await lake.loadTable(id);
      } catch {
        continue; // dropped meanwhile, or unreadable: not this task's to report (gc and lake check say why)
      }
      const keep = keepSnapshots(lake, t.properties);
      if (keep === 0) continue;
      const limit = keep + historySlack(t.properties);
      const n = t.metadata.snapshots.length;
      if (n <= limit) continue; // reported only when past its limit
      const check: MaintainTableCheck = { table: qualified(id.name), smallFiles: n, threshold: limit };
      checks.push(check);
      const r = await expireHistory(log, id, { maxSnapshots: keep });
      if (r.skipped) check.skipped = r.skipped;
      else check.expired = { snapshots: r.expired.length, files: r.deleted.length, metadataFiles: r.metadataFiles, protected: r.protected.length };
    }
    return checks;
  },
};

/** Maintenance beyond the event tables and `ingest_runs`: each task checks its tables and rewrites those that need it; history last. */
const TASKS: MaintenanceTask[] = [STATE_TASK, HISTORY_TASK];

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
  const merged = r.tables.filter((t) => t.rewritten);
  const expired = r.tables.filter((t) => t.expired && t.expired.snapshots + t.expired.files > 0);
  if (done.length === 0 && merged.length === 0 && expired.length === 0) return '';
  const parts: string[] = [];
  if (done.length > 0) {
    parts.push(`compacted ${done.map((t) => {
      const c = t.compacted!;
      return c.skipped ? `${t.table} (skipped: ${c.skipped})` : `${t.table} (${t.smallFiles} small files; files ${c.before.files}->${c.after.files})`;
    }).join(', ')}`);
  }
  if (merged.length > 0) {
    parts.push(`merged ${merged.map((t) => {
      const w = t.rewritten!;
      return `${t.table} (${w.action}: ${w.before.dataFiles}+${w.before.deleteFiles} -> ${w.after.dataFiles}+${w.after.deleteFiles} data+delete files)`;
    }).join(', ')}`);
  }
  if (expired.length > 0) {
    const snaps = expired.reduce((a, t) => a + t.expired!.snapshots, 0);
    const files = expired.reduce((a, t) => a + t.expired!.files, 0);
    parts.push(`expired ${snaps} snapshot(s) of ${expired.length} table(s), ${files} file(s) deleted`);
  }
  return `maintenance: ${parts.join('; ')} in ${r.ms} ms`;
}
