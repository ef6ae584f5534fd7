// Figures -> tables and JSON. One row per crate and a totals row, each figure
// beside its target from issue 7 with a pass/fail mark; per-kind and
// per-syntax tables; misses on request. Pure formatting.
import type { CallFigures, CallOutcome, Matching, PathFigures, Ratio } from './compare.ts';
import { KINDS } from './compare.ts';

export interface CrateFigures {
  crate: string;
  krate: string;
  items: Matching;
  paths: PathFigures;
  calls: CallFigures;
}

/** Issue 7's targets. `max` marks an upper bound. */
export const TARGETS = {
  itemRecall: 0.99,
  itemPrecision: 0.99,
  defRight: 0.98,
  callsRight: 0.9,
  callsWrongMax: 0.01,
  callers: 0.9,
  intoLake: 0.8,
} as const;

export interface Summary {
  crate: string;
  recallWritten: Ratio;
  recallMacro: Ratio;
  recallDerive: Ratio;
  precisionWritten: Ratio;
  precisionMacro: Ratio;
  def: Ratio;
  callsRight: Ratio;
  /** Wrong targets among the call sites Mimir resolved to some node (wrong / (right + wrong)). */
  callsWrong: Ratio;
  callers: Ratio;
  callersFunctions: Ratio;
  intoLake: Ratio;
}

const r0 = (): Ratio => ({ n: 0, of: 0 });
const add = (a: Ratio, b: Ratio) => { a.n += b.n; a.of += b.of; };

function byOrigin(m: Map<string, Ratio>, origin: string): Ratio {
  const out = r0();
  for (const [k, v] of m) if (k.endsWith(`|${origin}`)) add(out, v);
  return out;
}

export function summarize(c: CrateFigures): Summary {
  const callsRight = r0();
  const callsWrong = r0();
  for (const m of c.calls.inCrate.values()) {
    const right = m.get('right') ?? 0;
    const wrong = m.get('wrong') ?? 0;
    callsRight.n += right;
    for (const v of m.values()) callsRight.of += v;
    callsWrong.n += wrong;
    callsWrong.of += right + wrong;
  }
  const intoLake = r0();
  for (const [o, v] of c.calls.intoLake) { intoLake.of += v; if (o === 'right') intoLake.n += v; }
  const def = r0();
  add(def, c.paths.defPaths);
  add(def, c.paths.reexports);
  return {
    crate: c.crate,
    recallWritten: byOrigin(c.items.recall, 'written'),
    recallMacro: byOrigin(c.items.recall, 'macro'),
    recallDerive: byOrigin(c.items.recall, 'derive'),
    precisionWritten: byOrigin(c.items.precision, 'written'),
    precisionMacro: byOrigin(c.items.precision, 'macro'),
    def,
    callsRight,
    callsWrong,
    callers: c.calls.callers.sites,
    callersFunctions: c.calls.callers.functions,
    intoLake,
  };
}

export function total(rows: Summary[]): Summary {
  const t: Summary = {
    crate: 'TOTAL', recallWritten: r0(), recallMacro: r0(), recallDerive: r0(), precisionWritten: r0(), precisionMacro: r0(),
    def: r0(), callsRight: r0(), callsWrong: r0(), callers: r0(), callersFunctions: r0(), intoLake: r0(),
  };
  for (const r of rows) {
    for (const k of Object.keys(t) as (keyof Summary)[]) if (k !== 'crate') add(t[k] as Ratio, r[k] as Ratio);
  }
  return t;
}

export function pct(r: Ratio): string {
  return r.of === 0 ? '-' : `${(100 * r.n / r.of).toFixed(1)}%`;
}

/** `97.5% ✗` against a minimum (or a maximum). */
function mark(r: Ratio, target: number, max = false): string {
  if (r.of === 0) return '-';
  const v = r.n / r.of;
  const ok = max ? v <= target : v >= target;
  return `${pct(r)} ${ok ? 'ok' : 'FAIL'}`;
}

function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ');
  return [line(head), line(w.map((n) => '-'.repeat(n))), ...rows.map(line)].join('\n');
}

export function summaryTable(rows: Summary[]): string {
  const head = ['crate', 'items W', 'items M', 'prec W', 'prec M', 'def', 'calls ok', 'wrong', 'callers', 'into lake', 'items W/M (n)', 'calls (n)'];
  const fmt = (s: Summary) => [
    s.crate,
    mark(s.recallWritten, TARGETS.itemRecall), mark(s.recallMacro, TARGETS.itemRecall),
    mark(s.precisionWritten, TARGETS.itemPrecision), mark(s.precisionMacro, TARGETS.itemPrecision),
    mark(s.def, TARGETS.defRight),
    mark(s.callsRight, TARGETS.callsRight), mark(s.callsWrong, TARGETS.callsWrongMax, true),
    mark(s.callers, TARGETS.callers), mark(s.intoLake, TARGETS.intoLake),
    `${s.recallWritten.of}/${s.recallMacro.of}`, `${s.callsRight.of}`,
  ];
  const targets = ['target', '>=99%', '>=99%', '>=99%', '>=99%', '>=98%', '>=90%', '<=1%', '>=90%', '>=80%', '', ''];
  return table(head, [targets, ...rows.map(fmt), fmt(total(rows))]);
}

/** Recall (written / macro / derive) and precision (written / macro) per kind, over the given crates. */
export function kindTable(crates: CrateFigures[]): string {
  const rows: string[][] = [];
  for (const k of KINDS) {
    const get = (m: 'recall' | 'precision', o: string) => {
      const r = r0();
      for (const c of crates) { const v = c.items[m].get(`${k}|${o}`); if (v) add(r, v); }
      return r;
    };
    const cells = [get('recall', 'written'), get('recall', 'macro'), get('recall', 'derive'), get('precision', 'written'), get('precision', 'macro')];
    if (cells.every((c) => c.of === 0)) continue;
    rows.push([k, ...cells.map((c) => (c.of === 0 ? '-' : `${pct(c)} of ${c.of}`))]);
  }
  return table(['kind', 'recall written', 'recall macro', 'recall derive', 'precision written', 'precision macro'], rows);
}

const OUTCOMES: CallOutcome[] = ['right', 'wrong', 'unresolved', 'missing', 'no-caller'];

/** Written in-crate call sites by syntax class and outcome; then the into-lake row and what was not scored. */
export function callTable(crates: CrateFigures[]): string {
  const classes = ['path', 'self-method', 'method', 'macro-arg'];
  const rows: string[][] = [];
  const sum = (m: Map<CallOutcome, number> | undefined) => [...(m?.values() ?? [])].reduce((a, b) => a + b, 0);
  const merged = (get: (c: CrateFigures) => Map<CallOutcome, number> | undefined) => {
    const m = new Map<CallOutcome, number>();
    for (const c of crates) for (const [o, v] of get(c) ?? []) m.set(o, (m.get(o) ?? 0) + v);
    return m;
  };
  const row = (label: string, m: Map<CallOutcome, number>) => {
    const n = sum(m);
    rows.push([label, String(n), ...OUTCOMES.map((o) => (n === 0 ? '-' : `${pct({ n: m.get(o) ?? 0, of: n })}`))]);
  };
  for (const cls of classes) row(cls, merged((c) => c.calls.inCrate.get(cls)));
  const all = new Map<CallOutcome, number>();
  for (const cls of classes) for (const [o, v] of merged((c) => c.calls.inCrate.get(cls))) all.set(o, (all.get(o) ?? 0) + v);
  row('in-crate', all);
  row('into lake', merged((c) => c.calls.intoLake));
  row('macro-body*', merged((c) => c.calls.generated));
  const t = table(['written calls', 'sites', ...OUTCOMES], rows);
  const count = (get: (c: CrateFigures) => Map<string, number>) => {
    const m = new Map<string, number>();
    for (const c of crates) for (const [k, v] of get(c)) m.set(k, (m.get(k) ?? 0) + v);
    return [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  };
  return [
    t,
    '* calls in bodies a macro invocation generated, the edge anywhere in the invocation (not in the in-crate figure)',
    `not scored: written calls into std/core/alloc or unmeasured crates: ${count((c) => c.calls.outside)}`,
    `            calls not written: ${count((c) => c.calls.notWritten)}`,
    `            excluded: ${count((c) => c.calls.excluded)}`,
    `            nodes of impls in fn bodies rustdoc does not list (no precision extra): ${crates.reduce((a, c) => a + c.items.bodyUnlisted, 0)}`,
  ].join('\n');
}

/** JSON of everything (ratios as {n, of}). */
export function toJson(crates: CrateFigures[], extra: Record<string, unknown>): unknown {
  const obj = (m: Map<string, unknown>) => Object.fromEntries(m);
  return {
    ...extra,
    targets: TARGETS,
    total: total(crates.map(summarize)),
    crates: crates.map((c) => ({
      summary: summarize(c),
      items: { recall: obj(c.items.recall), precision: obj(c.items.precision), nodes: c.items.nodes, bodyUnlisted: c.items.bodyUnlisted },
      paths: { defPaths: c.paths.defPaths, reexports: c.paths.reexports },
      calls: {
        inCrate: Object.fromEntries([...c.calls.inCrate].map(([k, v]) => [k, obj(v)])),
        intoLake: obj(c.calls.intoLake), generated: obj(c.calls.generated), outside: obj(c.calls.outside), notWritten: obj(c.calls.notWritten),
        excluded: obj(c.calls.excluded), callers: c.calls.callers,
      },
    })),
  };
}
