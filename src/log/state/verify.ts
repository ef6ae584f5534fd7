// `mimir state verify`: the state tables compared with a fold of the event
// log at one generation, per table and per (repo, krate): row counts and an
// order-independent content digest (log/digest.ts: a row's 64-bit hash of its
// non-null columns by field id, summed mod 2^64). Equal means the tables hold
// exactly the fold's rows, whatever their files, order or deletes. Memory: the
// fold's group budget plus one counter per (repo, krate). code_keys is
// folded in the layout its PROP_KEYS names at the generation (keys and
// display columns of the id rows are compared). Read-only.
import type { Batch } from '../../lake/spec/types.ts';
import type { EventLog } from '../event-log.ts';
import { rowDigest, fieldOrder } from '../digest.ts';
import { CORE_STATE_TABLES, STATE_TABLES, type StateTable } from './schema.ts';
import { crateCounts, crateKey, foldGroup, groupCrates } from './fold.ts';
import { toBatch } from './delta.ts';
import { StateView } from './view.ts';

const MASK64 = (1n << 64n) - 1n;

interface Stat {
  rows: number;
  digest: bigint;
}

/** Per (repo, krate) counts and digests of a table's rows. */
class Digests {
  readonly by = new Map<string, Stat>();
  add(b: Batch): void {
    const order = fieldOrder(b);
    const rc = b.fields.findIndex((f) => f.name === 'repo');
    const kc = b.fields.findIndex((f) => f.name === 'krate');
    for (let i = 0; i < b.numRows; i++) {
      const k = crateKey(b.columns[rc]![i] as string, b.columns[kc]![i] as string);
      const s = this.by.get(k) ?? { rows: 0, digest: 0n };
      s.rows++;
      s.digest = (s.digest + rowDigest(b, i, order)) & MASK64;
      this.by.set(k, s);
    }
  }
}

export interface TableDifference {
  table: StateTable;
  repo: string;
  krate: string;
  expected: { rows: number; digest: string };
  found: { rows: number; digest: string };
}

export interface VerifyReport {
  generation: bigint;
  equal: boolean;
  crates: number;
  /** Rows per table: expected by the fold, found in the table. */
  tables: { table: StateTable; expected: number; found: number }[];
  /** Every (table, repo, krate) that differs, sorted. */
  differences: TableDifference[];
  ms: number;
}

export async function verifyState(log: EventLog, opts: { generation?: bigint; groupEvents?: number } = {}): Promise<VerifyReport> {
  const t0 = Date.now();
  const g = opts.generation ?? log.readGeneration();
  const pin = log.pin({ generation: g });
  try {
    const view = await StateView.open(pin, g);
    if (!view) throw new Error(`the lake at ${log.lake.root} has no state tables at generation ${g}; build them with 'mimir state rebuild'`);
    // code_paths when the lake has it at g (a lake made before it: the core tables)
    const which = (await view.hasPaths()) ? STATE_TABLES : CORE_STATE_TABLES;
    // code_keys' rows as its layout at g lays them out (the crate-keyed id rows and their display columns, or not)
    const keys = await view.keysLayout();
    const expected = new Map<StateTable, Digests>(which.map((t) => [t, new Digests()]));
    const found = new Map<StateTable, Digests>(which.map((t) => [t, new Digests()]));
    const counts = await crateCounts(pin, g);
    for (const group of groupCrates(counts, opts.groupEvents ?? 400_000)) {
      for (const [t, rows] of await foldGroup(pin, g, group, which, keys)) if (rows.length > 0) expected.get(t)!.add(toBatch(t, rows));
    }
    for (const t of which) for await (const b of (await view.table(t)).scan().batches()) found.get(t)!.add(b);
    const differences: TableDifference[] = [];
    const tables: VerifyReport['tables'] = [];
    for (const t of which) {
      const e = expected.get(t)!.by;
      const f = found.get(t)!.by;
      let en = 0;
      let fn = 0;
      for (const s of e.values()) en += s.rows;
      for (const s of f.values()) fn += s.rows;
      tables.push({ table: t, expected: en, found: fn });
      for (const k of new Set([...e.keys(), ...f.keys()])) {
        const a = e.get(k) ?? { rows: 0, digest: 0n };
        const b = f.get(k) ?? { rows: 0, digest: 0n };
        if (a.rows === b.rows && a.digest === b.digest) continue;
        const [repo, krate] = k.split('\u0000') as [string, string];
        differences.push({ table: t, repo, krate, expected: { rows: a.rows, digest: hex(a.digest) }, found: { rows: b.rows, digest: hex(b.digest) } });
      }
    }
    differences.sort((a, b) => cmp(a.table, b.table) || cmp(a.repo, b.repo) || cmp(a.krate, b.krate));
    return { generation: g, equal: differences.length === 0, crates: counts.size, tables, differences, ms: Date.now() - t0 };
  } finally {
    pin.close();
  }
}

const hex = (d: bigint): string => d.toString(16).padStart(16, '0');
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One line per difference, or the all-equal line. */
export function formatVerifyReport(r: VerifyReport): string[] {
  const totals = r.tables.map((t) => `${t.table} ${t.found}`).join(', ');
  if (r.equal) return [`state verify: equal to the log at generation ${r.generation} (${r.crates} crates; rows: ${totals}) in ${r.ms} ms`];
  const lines = r.differences.map(
    (d) => `differs: ${d.table} ${d.repo} ${d.krate}: the log folds to ${d.expected.rows} row(s) (digest ${d.expected.digest}), the table holds ${d.found.rows} (digest ${d.found.digest})`,
  );
  lines.push(`state verify: ${r.differences.length} difference(s) with the log at generation ${r.generation} (${r.crates} crates; rows: ${totals}); run 'mimir state rebuild' to refold`);
  return lines;
}
