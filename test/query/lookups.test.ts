// What a question reads from the serving state tables: the lookups it makes
// (table and filter, observed on StateView.rows — the real tables are read),
// so the work per question depends on its answer, not on the universe: a path
// looked up in code_keys once, a named crate checked by a range of code_files'
// krate column (not every crate of the lake), nodes by id read from their
// crate-keyed code_keys rows (not code_nodes); and a lake whose code_keys is
// in the former layout (main a715b8e's) answering alike, until `state
// rebuild` switches it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { StateView } from '../../src/log/state/view.ts';
import type { Expr } from '../../src/lake/expr/expr.ts';
import { callees, callers, def } from '../../src/query/index.ts';
import { answerCallees, answerDef, answerFind, answerHistory, answerRefs } from '../../src/query/answer.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { inScope, krateMatches, krateWhere } from '../../src/query/scope.ts';
import { A_MAIN, A_HELPER, REGEX, U_NEW, U_REGEX, edge, node, sampleLake, type Sample } from './sample.ts';
import { rebuildState } from '../../src/log/state/rebuild.ts';
import { verifyState, formatVerifyReport } from '../../src/log/state/verify.ts';
import { CODE_KEYS, PROP_KEYS } from '../../src/log/state/schema.ts';
import { stringifyJson } from '../../src/lake/spec/json.ts';
import { scratch } from '../helpers.ts';
import { UNIVERSE_REPO } from '../../src/log/schema.ts';

const work = scratch('mimir-lookups-');
let s: Sample;
after(async () => {
  s?.log.close();
  await work.cleanup();
});

/** The state-table lookups `fn` makes: [table, filter] in order. */
async function lookups(fn: () => Promise<unknown>): Promise<[string, Expr | undefined][]> {
  const seen: [string, Expr | undefined][] = [];
  const rows = StateView.prototype.rows;
  StateView.prototype.rows = function (this: StateView, name, filter, columns) {
    seen.push([name, filter]);
    return rows.call(this, name, filter, columns);
  };
  try {
    await fn();
  } finally {
    StateView.prototype.rows = rows;
  }
  return seen;
}

/** Column names an expression reads. */
function cols(e: Expr | undefined): string[] {
  if (e === undefined) return [];
  if (e.op === 'and' || e.op === 'or') return e.args.flatMap(cols);
  if (e.op === 'not') return cols(e.arg);
  return 'col' in e ? [String(e.col)] : [];
}

test('lookups: def and callers by path read code_keys once for the path (the key rows carry the name code_nodes is looked up by), and once for the callers\' nodes (their crate-keyed id rows: code_nodes read for the target only)', async () => {
  s = await sampleLake(work.dir);
  // the crates' file rows (code_files: what --krate is checked against)
  await s.log.append('file', [
    { repo: UNIVERSE_REPO, krate: REGEX, run: 'run-test', ts: 1n, op: 'add', id: 'f-regex', path: 'src/lib.rs', hash: 'h1', size: 1n, parse_status: 'ok' },
    { repo: 'alpha', krate: 'alpha@0.1.0', run: 'run-test', ts: 2n, op: 'add', id: 'f-alpha', path: 'src/main.rs', hash: 'h2', size: 1n, parse_status: 'ok' },
  ]);
  const d = await lookups(() => def(s.log, 'regex::regex::string::Regex::new'));
  assert.deepEqual(d.filter(([t]) => t === 'code_keys').length, 1, JSON.stringify(d.map(([t, f]) => [t, cols(f)])));
  const c = await lookups(async () => assert.ok((await callers(s.log, 'regex::regex::string::Regex::new')).refs.length > 0));
  // one for the path; the callers' own nodes are then found by (krate, id) (one more), with what is shown
  assert.deepEqual(c.filter(([t]) => t === 'code_keys').length, 2, JSON.stringify(c.map(([t, f]) => [t, cols(f)])));
  assert.deepEqual(c.filter(([t]) => t === 'code_nodes').length, 1, JSON.stringify(c.map(([t, f]) => [t, cols(f)])));
});

/** The values an expression compares with. */
const values = (e: Expr | undefined): unknown[] => (e === undefined ? [] : e.op === 'and' || e.op === 'or' ? e.args.flatMap(values) : e.op === 'in' ? e.values : e.op === 'eq' ? [e.value] : []);

test('lookups: callees find the called nodes by (dst_krate, id) in code_keys, whose id rows carry what is shown (code_nodes read for the target only)', async () => {
  const l = await lookups(async () => {
    const r = await callees(s.log, 'alpha::main');
    assert.deepEqual(r.callees.map((c) => c.to?.qpath ?? null), ['regex::regex::string::Regex::new']);
    assert.deepEqual(r.callees.map((c) => [c.to?.file, c.to?.line, c.to?.signature, c.to?.parent]), [['src/regex/string.rs', 180, 'fn new()', U_REGEX]]);
  });
  const shown = JSON.stringify(l.map(([t, f]) => [t, cols(f)]));
  assert.equal(l.filter(([t]) => t === 'code_nodes').length, 1, shown);
  const keys = l.filter(([t]) => t === 'code_keys');
  assert.equal(keys.length, 2, shown);
  assert.deepEqual(values(keys[1]![1]).filter((v) => v !== 'id'), [`${REGEX}\u0000${U_NEW}`], shown);
});

test('lookups: find --krate NAME@VERSION checks the crate by a range of code_files.krate, not by reading every crate', async () => {
  const l = await lookups(async () => assert.equal((await answerFind(s.log, 'Regex*', { krate: REGEX })).hits.length, 1));
  const files = l.filter(([t]) => t === 'code_files');
  assert.ok(files.length > 0);
  for (const [, f] of files) assert.ok(cols(f).includes('krate'), `every code_files lookup names the krate: ${JSON.stringify(files)}`);
  // a crate spelled with '_' for '-' or a version-less name still resolves (by the full list when the range misses)
  assert.equal((await answerFind(s.log, 'Regex*', { krate: 'regex' })).hits.length, 1);
  await assert.rejects(() => answerFind(s.log, 'Regex*', { krate: 'regex@9.9.9' }), /no such crate "regex@9.9.9"/);
});

/** An expression on string columns, evaluated on one row (eq, ge, lt, and, or: what krateWhere builds). */
function holdsOn(e: Expr, row: Record<string, string>): boolean {
  switch (e.op) {
    case 'and':
      return e.args.every((a) => holdsOn(a, row));
    case 'or':
      return e.args.some((a) => holdsOn(a, row));
    case 'eq':
      return row[String(e.col)] === e.value;
    case 'ge':
      return row[String(e.col)]! >= (e.value as string);
    case 'lt':
      return row[String(e.col)]! < (e.value as string);
    default:
      throw new Error(`unexpected op ${e.op}`);
  }
}

test('lookups: krateWhere holds for every krate --krate names (each spelling of - and _, target crates) and not for other versions or copies', () => {
  const krates = ['regex@1.7.1', 'regex@1.7.1/test/words', 'regex@1.7.1-copy1', 'regex@1.7.10', 'regex@1.7.0', 'regex', 'regex-syntax@0.6.28', 'regex_syntax@0.6.28', 'regex-syntax@0.6.28-copy2', 'regexp@1.0.0', 'rege@1.0.0'];
  for (const wanted of ['regex@1.7.1', 'regex', 'regex-syntax', 'regex_syntax@0.6.28', 'regex@1.7.1/test/words', 'regex-syntax@0.6.28-copy2']) {
    const where = krateWhere(wanted)!;
    for (const krate of krates) {
      if (krateMatches(wanted, krate)) assert.ok(holdsOn(where, { krate }), `${wanted} names ${krate}: the filter must hold`);
    }
    const held = krates.filter((krate) => holdsOn(where, { krate }));
    assert.deepEqual(held, krates.filter((krate) => krateMatches(wanted, krate)), `${wanted}: no other krate in the filter`);
  }
  // too many separators to spell out: nothing pushed down (the caller reads every crate)
  assert.equal(krateWhere('a-b-c-d-e@1.0.0'), undefined);
});

test('lookups: find --krate NAME@VERSION pushes the crate into the code_nodes lookup (other versions\' rows of a name are not placed)', async () => {
  const l = await lookups(async () => assert.equal((await answerFind(s.log, 'Regex*', { krate: REGEX })).hits.length, 1));
  const nodes = l.filter(([t]) => t === 'code_nodes');
  assert.ok(nodes.length > 0);
  for (const [, f] of nodes) assert.ok(cols(f).includes('krate') && cols(f).includes('name'), `the code_nodes lookup names the crate: ${JSON.stringify(nodes)}`);
  // spelled with '_' for '-' or without a version: the same hit
  assert.equal((await answerFind(s.log, 'Regex*', { krate: 'regex' })).hits.length, 1);
});

const copy = `${REGEX}-copy1`;

/** The sample lake plus a second version of the regex crate sharing every path (a 10x universe's copies), called from alpha too. */
async function scopedLake(dir: string, opts: { formerKeys?: boolean } = {}): Promise<Sample> {
  const t = await sampleLake(dir, opts);
  await t.log.append('node', [
      node(UNIVERSE_REPO, copy, 'c-regex-struct', 'regex::regex::string::Regex', { kind: 'struct', file: 'src/regex/string.rs', line: 100 }),
      { ...node(UNIVERSE_REPO, copy, 'c-regex-new', 'regex::regex::string::Regex::new', { kind: 'method', file: 'src/regex/string.rs', line: 180, parent: 'c-regex-struct' }), public_paths: 'regex::Regex::new' },
      { ...node(UNIVERSE_REPO, REGEX, U_NEW, 'regex::regex::string::Regex::new', { op: 'change', kind: 'method', file: 'src/regex/string.rs', line: 180, parent: U_REGEX }), public_paths: 'regex::Regex::new' },
    ]);
    await t.log.append('edge', [
      edge(UNIVERSE_REPO, copy, 'c-contains', 'c-regex-struct', 'c-regex-new', 'regex::regex::string::Regex::new', 'contains', 'src/regex/string.rs', 180),
      edge(UNIVERSE_REPO, copy, 'c-call', 'c-regex-new', 'c-regex-struct', 'regex::regex::string::Regex', 'calls', 'src/regex/string.rs', 181),
      edge(UNIVERSE_REPO, REGEX, 'u-call', U_NEW, U_REGEX, 'regex::regex::string::Regex', 'calls', 'src/regex/string.rs', 181),
      edge('alpha', 'alpha@0.1.0', 'a-call-copy', A_MAIN, 'c-regex-new', 'regex::regex::string::Regex::new', 'calls', 'src/main.rs', 6, { dstKrate: copy }),
  ]);
  return t;
}

const paths = ['regex::Regex::new', 'regex::regex::string::Regex::new', 'regex::regex::string::Regex', 'Regex::new', 'alpha::main', 'alpha::helper', 'beta::util::check'];
const scopes = [{ krate: REGEX }, { krate: 'regex' }, { krate: copy }, { repo: 'alpha' }, { repo: UNIVERSE_REPO }, { krate: 'alpha@0.1.0' }, { repo: 'beta', krate: 'beta' }];

test('lookups: --repo/--krate of def, refs, callers, callees and history narrow the lookups and give the unscoped answer narrowed', async () => {
  const t = await scopedLake(`${work.dir}/scoped`);
  try {
    const keep = (sc: { repo?: string; krate?: string }) => (h: { repo: string; krate: string }) => inScope(sc, h.repo, h.krate);
    const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();
    let narrowed = 0;
    for (const p of paths) {
      const all = { def: await answerDef(t.log, p), refs: await answerRefs(t.log, p), callers: await answerRefs(t.log, p, { edgeKind: 'calls' }, 'callers'), callees: await answerCallees(t.log, p) };
      for (const sc of scopes) {
        const what = `${p} ${JSON.stringify(sc)}`;
        const d = await answerDef(t.log, p, sc);
        assert.deepEqual(ids(d.hits), ids(all.def.hits.filter(keep(sc))), `def ${what}`);
        assert.equal(d.match, all.def.match, `def ${what}`);
        const r = await answerRefs(t.log, p, sc);
        assert.deepEqual(ids(r.refs), ids(all.refs.refs.filter(keep(sc))), `refs ${what}`);
        const c = await answerRefs(t.log, p, { ...sc, edgeKind: 'calls' }, 'callers');
        assert.deepEqual(ids(c.refs), ids(all.callers.refs.filter(keep(sc))), `callers ${what}`);
        const e = await answerCallees(t.log, p, sc);
        assert.deepEqual(ids(e.callees), ids(all.callees.callees.filter(keep(sc))), `callees ${what}`);
        assert.deepEqual(ids(e.targets), ids(all.callees.targets), `callees' targets are not narrowed: ${what}`);
        narrowed += all.refs.refs.length - r.refs.length + all.def.hits.length - d.hits.length;
        const h = await answerHistory(t.log, p, sc).catch((e: Error) => e.message);
        const hAll = await answerHistory(t.log, p).catch((e: Error) => e.message);
        if (typeof hAll === 'string') assert.equal(h, hAll, `history ${what}`);
        else {
          assert.ok(typeof h !== 'string', `history ${what}: ${String(h)}`);
          assert.deepEqual(h.ids, hAll.ids, `history ${what}: ids are every id the path named`);
          assert.deepEqual(h.events, hAll.events.filter(keep(sc)), `history ${what}`);
        }
      }
    }
    assert.ok(narrowed > 0, 'some scope left hits out');
    // what is read: the other version's node and edges are not looked up
    const d = await lookups(async () => assert.equal((await answerDef(t.log, 'regex::Regex::new', { krate: REGEX })).hits.length, 1));
    for (const [table, f] of d.filter(([x]) => x === 'code_nodes')) assert.ok(!values(f).includes('c-regex-new'), `${table}: ${JSON.stringify(f)}`);
    const e = await lookups(async () => assert.equal((await answerCallees(t.log, 'regex::Regex::new', { krate: REGEX })).callees.length, 1));
    const out = e.filter(([x]) => x === 'code_edges_out');
    assert.equal(out.length, 1);
    assert.deepEqual(values(out[0]![1]).filter((v) => typeof v === 'string' && v.includes('regex')), [U_NEW], JSON.stringify(out));
    // history reads the events of the ids in scope only
    const scans: unknown[] = [];
    const scan = EventLog.prototype.scan;
    EventLog.prototype.scan = function (this: EventLog, kind, opts) {
      scans.push(values(opts?.filter));
      return scan.call(this, kind, opts);
    };
    try {
      const hist = await answerHistory(t.log, 'regex::regex::string::Regex::new', { krate: REGEX });
      assert.deepEqual(hist.ids, ['c-regex-new', U_NEW].sort());
      assert.ok(hist.events.length > 0 && hist.events.every((e) => e.krate === REGEX));
    } finally {
      EventLog.prototype.scan = scan;
    }
    assert.ok(scans.length > 0 && scans.every((v) => !(v as unknown[]).includes('c-regex-new') && !(v as unknown[]).includes(copy)), JSON.stringify(scans));
    const c = await lookups(async () => assert.equal((await answerRefs(t.log, 'regex::Regex::new', { repo: 'alpha', edgeKind: 'calls' }, 'callers')).refs.length, 2));
    for (const [, f] of c.filter(([x]) => x === 'code_edges_in')) assert.ok(cols(f).includes('repo'), JSON.stringify(f));
  } finally {
    t.log.close();
  }
});

/** Every answer of def, refs, callers and callees for the paths under each scope (and none), as JSON without generations. */
async function answers(log: EventLog): Promise<string[]> {
  const out: string[] = [];
  const strip = (x: unknown): string => stringifyJson(x).replace(/"generation":"?\d+"?,?/g, '');
  for (const p of paths) {
    for (const sc of [{}, ...scopes]) {
      const what = `${p} ${JSON.stringify(sc)}`;
      const ask = async (q: string, fn: () => Promise<unknown>): Promise<void> => {
        out.push(`${q} ${what}: ${await fn().then(strip, (e: Error) => `error ${e.message}`)}`);
      };
      await ask('def', () => answerDef(log, p, sc));
      await ask('refs', () => answerRefs(log, p, sc));
      await ask('callers', () => answerRefs(log, p, { ...sc, edgeKind: 'calls' }, 'callers'));
      await ask('callees', () => answerCallees(log, p, sc));
    }
  }
  return out;
}

test('lookups: a lake whose code_keys has the former layout (keyed by id, no display columns: main a715b8e\'s) answers alike and stays so through appends; state rebuild switches it to the crate-keyed layout, answers unchanged and verify equal throughout', async () => {
  const now = await scopedLake(`${work.dir}/keys-now`);
  const old = await scopedLake(`${work.dir}/keys-former`, { formerKeys: true });
  try {
    const keysOf = async (l: EventLog) => {
      const table = await l.lake.loadTable({ namespace: ['mimir'], name: CODE_KEYS });
      return { prop: table.properties[PROP_KEYS], columns: table.schema.fields.length };
    };
    assert.deepEqual(await keysOf(now.log), { prop: 'krate', columns: 15 });
    assert.deepEqual(await keysOf(old.log), { prop: undefined, columns: 7 });
    // more commits on both: a move (pos rows: the delta looks the current rows up by id) and a change
    for (const l of [now.log, old.log]) {
      await l.append('pos', [
        { repo: 'alpha', krate: 'alpha@0.1.0', run: 'run-test', ts: 9n, op: 'add', id: A_MAIN, entity: 'node', file: 'src/main.rs', line: 40, col: 1, line_end: 44, col_end: 2 },
        { repo: UNIVERSE_REPO, krate: copy, run: 'run-test', ts: 9n, op: 'add', id: 'c-regex-new', entity: 'node', file: 'src/regex/string.rs', line: 190, col: 5, line_end: 199, col_end: 6 },
      ]);
      await l.append('node', [node('alpha', 'alpha@0.1.0', A_HELPER, 'alpha::helper', { file: 'src/main.rs', line: 50, signature: 'fn helper(y: u16)' })]);
    }
    const want = await answers(now.log);
    assert.deepEqual(await answers(old.log), want);
    for (const l of [now.log, old.log]) {
      const v = await verifyState(l);
      assert.ok(v.equal, formatVerifyReport(v).join('\n'));
    }
    // the former layout's reads: the called node by its name on code_nodes, the callers' nodes by id then (name, id)
    const e = await lookups(() => callees(old.log, 'alpha::main'));
    assert.deepEqual(e.filter(([t]) => t === 'code_keys').length, 1, JSON.stringify(e.map(([t, f]) => [t, cols(f)])));
    assert.deepEqual(await keysOf(old.log), { prop: undefined, columns: 7 });
    await rebuildState(old.log);
    assert.deepEqual(await keysOf(old.log), { prop: 'krate', columns: 15 });
    const v = await verifyState(old.log);
    assert.ok(v.equal, formatVerifyReport(v).join('\n'));
    assert.deepEqual(await answers(old.log), want);
    const k = await lookups(() => callees(old.log, 'alpha::main'));
    assert.deepEqual(k.filter(([t]) => t === 'code_nodes').length, 1, JSON.stringify(k.map(([t, f]) => [t, cols(f)])));
    // and appends after the switch write the crate-keyed layout
    await old.log.append('node', [node('alpha', 'alpha@0.1.0', A_HELPER, 'alpha::helper', { op: 'change', file: 'src/main.rs', line: 60 })]);
    const after = await verifyState(old.log);
    assert.ok(after.equal, formatVerifyReport(after).join('\n'));
    assert.equal((await answerCallees(old.log, 'alpha::helper')).targets[0]?.line, 60);
  } finally {
    now.log.close();
    old.log.close();
  }
});
