// `npm run bench:query`: how fast questions are answered, and how that holds
// as the universe grows. Builds (or reuses) a lake with Debian's crate corpus
// (/usr/share/cargo/registry, installed by scripts/install-debian-crates.sh)
// in the universe plus the sample workspace as repo `sample`, then times a
// fixed mix of questions (def, find by prefix, callers, callees, refs,
// history):
//
// - cold CLI: a new `node bin/mimir.js …` process per question (compiled JS
//   from dist/, built first when stale), wall time and peak RSS per run;
// - in process: each question called on one open log, warm;
// - each twice: answered from the serving state tables, and by folding the
//   event log (`MIMIR_ANSWER_FROM=log`: how every question was answered
//   before the state tables, the "before" figures);
// - warm server: a `mimir serve` process over the lake, 32 concurrent
//   loopback clients asking the same mix for --seconds (10): once with its
//   answer cache (after one round to fill it), once with --cache-mb 0 (every
//   answer read from the lake); p50/p99 and the server's peak RSS. The
//   server answers from the state tables (the "before" server figures are
//   bench:serve's, measured when every question folded the log).
//
// Then grows the universe 10x (the same crates again as `name@x.y.z-copyN`,
// N = 1..9, one universe add each, then one state maintenance pass) and
// times the same mix; prints the ratios.
// Prints p50/p99 in ms and peak RSS in MB. A benchmark prints; it asserts
// nothing. Flags: --lake DIR (default .bench/query-lake; reused when its
// marker says it is complete), --runs N (cold runs per question, default 5),
// --warm N (in-process calls per question, default 20), --copies N (default
// 9), --skip-grow, --corpus DIR, --clients N (32), --seconds S (10, per
// server phase), --log-runs N / --log-warm N (2 / 3: the log fold's cold and
// in-process runs, slow at 10x), --build-only (build the lakes, time nothing),
// --only-10x (time the grown lake only), --skip-log-10x (no log fold at 10x).
//
// The 10x universe is built by real ingests by default (each copy a
// `universe add` of the corpus with its versions rewritten: parsed, resolved
// and written like any crate), which takes about as long per copy as the 1x
// build; `--grow events` copies the 1x universe's rows instead (copyEvents).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../src/log/event-log.ts';
import { eq } from '../src/lake/expr/expr.ts';
import { UNIVERSE_REPO, ident, type Kind } from '../src/log/schema.ts';
import type { Value } from '../src/lake/spec/types.ts';
import { expandCrateDirs, ingest, universeAdd } from '../src/ingest/index.ts';
import { maintainState, formatMaintainReport } from '../src/log/state/maintain.ts';
import { rebuildState, hasStateTables } from '../src/log/state/rebuild.ts';
import { CODE_PATHS, PROP_BUILDING } from '../src/log/state/schema.ts';
import { callees, callers, def, find, history, refs, type QueryOptions } from '../src/query/index.ts';
import { load, type LoadResult } from './load.ts';
import { readStats } from '../src/lake/parquet/read.ts';
import { startServeProcess } from './serve-process.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const lake1 = path.resolve(flag('--lake') ?? path.join(root, '.bench', 'query-lake'));
/** The grown lake: a copy of the 1x lake plus the copies (the 1x lake stays as it is, reusable). */
const lake10 = path.resolve(flag('--lake-10x') ?? `${lake1}-10x`);
/** The lake being measured. */
let lakeDir = lake1;
const corpus = flag('--corpus') ?? '/usr/share/cargo/registry';
const coldRuns = Number(flag('--runs') ?? 5);
const warmRuns = Number(flag('--warm') ?? 20);
const copies = Number(flag('--copies') ?? 9);
/** How the 10x universe is made: `ingest` (each copy parsed like any crate) or `events` (the 1x rows copied, renamed). */
const growBy = flag('--grow') ?? 'ingest';
if (growBy !== 'ingest' && growBy !== 'events') throw new Error(`--grow: expected ingest or events, found ${growBy}`);
const MIN_CRATES = 40;
type Row = Record<string, Value>;
const clients = Number(flag('--clients') ?? 32);
const serveSeconds = Number(flag('--seconds') ?? 10);
/** Cold runs and in-process calls per question when folding the log (slow at 10x: the "before" figures). */
const logRuns = Number(flag('--log-runs') ?? 2);
const logWarm = Number(flag('--log-warm') ?? 3);

/** The fixed mix: the questions and their CLI words. Answers do not grow with the universe's copies. */
interface Question {
  label: string;
  cli: string[];
  /** The same question as a `mimir serve` request target. */
  http: string;
  call: (log: EventLog, o: QueryOptions) => Promise<unknown>;
}
const q = (route: string, params: Record<string, string>): string => `/api/${route}?${new URLSearchParams(params)}`;
const MIX: Question[] = [
  { label: 'def tally::Tally::add', cli: ['def', 'tally::Tally::add'], http: q('def', { path: 'tally::Tally::add' }), call: (l, o) => def(l, 'tally::Tally::add', o) },
  { label: "find 'Tally*'", cli: ['find', 'Tally*'], http: q('find', { name: 'Tally*' }), call: (l, o) => find(l, 'Tally*', o) },
  { label: "find 'Regex*' --krate regex@1.7.1", cli: ['find', 'Regex*', '--krate', 'regex@1.7.1'], http: q('find', { name: 'Regex*', krate: 'regex@1.7.1' }), call: (l, o) => find(l, 'Regex*', { ...o, krate: 'regex@1.7.1' }) },
  { label: 'callers fnvish::hash_str', cli: ['callers', 'fnvish::hash_str'], http: q('callers', { path: 'fnvish::hash_str' }), call: (l, o) => callers(l, 'fnvish::hash_str', o) },
  { label: 'callees tally::Tally::add', cli: ['callees', 'tally::Tally::add'], http: q('callees', { path: 'tally::Tally::add' }), call: (l, o) => callees(l, 'tally::Tally::add', o) },
  { label: 'refs tally::Tally', cli: ['refs', 'tally::Tally'], http: q('refs', { path: 'tally::Tally' }), call: (l, o) => refs(l, 'tally::Tally', o) },
  { label: 'history tally::Tally::add', cli: ['history', 'tally::Tally::add'], http: q('history', { path: 'tally::Tally::add' }), call: (l, o) => history(l, 'tally::Tally::add', o) },
];

type From = 'state' | 'log';

interface Figures {
  coldP50: number;
  coldP99: number;
  /** CPU time (user + system) of the cold processes: what a quiet machine's wall time would be, about. */
  coldCpuP50: number;
  coldCpuP99: number;
  coldRssMb: number;
  warmP50: number;
  warmP99: number;
  /** Per question: cold and in-process p50, and the Parquet files opened / row groups read by one answer in a fresh handle. */
  perQuestion: { label: string; cold: number; coldCpu: number; warm: number; files: number; rowGroups: number }[];
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (x: number): string => `${x.toFixed(0)} ms`;

function log(line: string): void {
  console.log(line);
}

// ---- the lake ------------------------------------------------------------------

const marker = (n: number): string => path.join(n === 1 ? lake1 : lake10, `.bench-complete-${n}x`);

async function ensureLake(): Promise<void> {
  if (existsSync(marker(1))) {
    log(`lake: reusing ${lakeDir}`);
    return;
  }
  rmSync(lakeDir, { recursive: true, force: true });
  mkdirSync(lakeDir, { recursive: true });
  const l = await EventLog.open(lakeDir);
  try {
    const t0 = Date.now();
    const u = await universeAdd(l, [corpus]);
    const s = await ingest(l, path.join(root, 'samples', 'workspace'), { repo: 'sample', withDeps: true });
    const m = await maintainState(l, { force: true });
    log(`lake: built ${lakeDir} in ${((Date.now() - t0) / 1000).toFixed(0)} s: universe +${u.events.add} events (${u.crates} crates), sample +${s.events.add}; ${formatMaintainReport(m)}`);
  } finally {
    l.close();
  }
  writeFileSync(marker(1), new Date().toISOString());
}

/** A copy of each corpus crate as version `x.y.z-copyN` (its Cargo.toml's version rewritten). */
function copyCorpus(n: number, into: string): string {
  const dst = path.join(into, `copy${n}`);
  rmSync(dst, { recursive: true, force: true });
  mkdirSync(dst, { recursive: true });
  for (const name of readdirSync(corpus)) {
    const src = path.join(corpus, name);
    const toml = path.join(src, 'Cargo.toml');
    if (!existsSync(toml)) continue;
    const text = readFileSync(toml, 'utf8');
    const m = /^version\s*=\s*"([^"]+)"/m.exec(text);
    if (!m) continue;
    const version = `${m[1]}-copy${n}`;
    const crateName = /^name\s*=\s*"([^"]+)"/m.exec(text)?.[1] ?? name.replace(/-[^-]+$/, '');
    const out = path.join(dst, `${crateName}-${version}`);
    cpSync(src, out, { recursive: true, dereference: true });
    writeFileSync(path.join(out, 'Cargo.toml'), text.replace(m[0], `version = "${version}"`));
  }
  return dst;
}

/**
 * The cheap way to 10x (`--grow events`): each copy is the 1x universe's live
 * rows (node, edge, file, pos) appended again with every krate renamed
 * `name@x.y.z-copyN` and every id (and every column naming one: parent, src,
 * dst, …) replaced by a hash of it and N — the rows a `universe add` of the
 * renamed crates would write (ids differ only in how they are derived), at the
 * cost of Parquet writes instead of parsing. The state tables follow through
 * EventLog.append's own state delta, as for any writer.
 */
async function copyEvents(l: EventLog, n: number, base: Map<Kind, Row[]>, ids: Set<string>, krates: Set<string>): Promise<number> {
  const newId = (id: string): string => createHash('sha256').update(`${id}#copy${n}`).digest('hex').slice(0, 32);
  const ts = BigInt(Date.now()) * 1000n;
  let total = 0;
  for (const [kind, rows] of base) {
    const out = rows.map((r) => {
      const o: Row = {};
      for (const [k, v] of Object.entries(r)) {
        if (typeof v !== 'string') o[k] = v;
        else if (ids.has(v)) o[k] = newId(v);
        else if (krates.has(v)) o[k] = `${v}-copy${n}`;
        else o[k] = v;
      }
      o.op = 'add';
      o.run = `bench-copy-${n}`;
      o.ts = ts;
      return o;
    });
    await l.append(kind, out);
    total += out.length;
  }
  return total;
}

async function grow(): Promise<void> {
  if (existsSync(marker(10))) {
    log('lake: reusing the 10x universe');
    return;
  }
  if (!existsSync(path.join(lake10, 'catalog.db'))) {
    rmSync(lake10, { recursive: true, force: true });
    cpSync(lake1, lake10, { recursive: true });
    log(`grow: copied ${lake1} to ${lake10}`);
  }
  const scratch = path.join(path.dirname(lake10), 'query-copies');
  const l = await EventLog.open(lake10);
  try {
    let base: { rows: Map<Kind, Row[]>; ids: Set<string>; krates: Set<string> } | undefined;
    for (let n = 1; n <= copies; n++) {
      if (existsSync(path.join(lake10, `.bench-copy-${n}`))) continue;
      const t0 = Date.now();
      let added: number;
      if (growBy === 'events') {
        base ??= await baseUniverse(l);
        added = await copyEvents(l, n, base.rows, base.ids, base.krates);
      } else {
        const dir = copyCorpus(n, scratch);
        added = (await universeAdd(l, [dir])).events.add;
        rmSync(dir, { recursive: true, force: true });
      }
      writeFileSync(path.join(lake10, `.bench-copy-${n}`), growBy);
      log(`grow: copy ${n} (${growBy === 'events' ? 'events copied' : 'ingested'}): +${added} events in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
    // one maintenance pass after the growth (as a periodic maintenance would): sorted files again
    const t0 = Date.now();
    const m = await maintainState(l);
    log(`grow: ${formatMaintainReport(m)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  } finally {
    l.close();
  }
  writeFileSync(marker(10), new Date().toISOString());
}

/** The live rows of the universe's original crates (no `-copyN`), their ids and krates. */
async function baseUniverse(l: EventLog): Promise<{ rows: Map<Kind, Row[]>; ids: Set<string>; krates: Set<string> }> {
  const rows = new Map<Kind, Row[]>();
  const ids = new Set<string>();
  const krates = new Set<string>();
  const original = (k: unknown): boolean => typeof k === 'string' && !/-copy\d+$/.test(k);
  for (const kind of ['file', 'node', 'edge', 'pos'] as Kind[]) {
    const live = [...(await l.state(kind, eq('repo', UNIVERSE_REPO))).values()].filter((r) => original(r.krate));
    rows.set(kind, live);
    for (const r of live) {
      krates.add(r.krate as string);
      if (kind !== 'pos') ids.add(r.id as string);
    }
  }
  return { rows, ids, krates };
}

// ---- timing ----------------------------------------------------------------------

function buildDist(): void {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) log(`build failed (cold runs use tsx, slower to start): ${r.stderr.split('\n')[0]}`);
}

/** One cold CLI run: wall ms, CPU ms (user + system) and peak RSS (MB) of the whole process, via GNU time. */
function coldRun(q: Question, from: From): { ms: number; cpuMs: number; rssMb: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', process.execPath, path.join(root, 'bin', 'mimir.js'), ...q.cli, '--lake', lakeDir, '--json'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, MIMIR_ANSWER_FROM: from, MIMIR_SERVER: '' },
    maxBuffer: 1 << 28,
  });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${q.cli.join(' ')} failed (${r.status}): ${r.stderr}`);
  const [rssKb, user, sys] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number) as [number, number, number];
  return { ms: wall, cpuMs: (user + sys) * 1000, rssMb: rssKb / 1024 };
}

async function measure(from: From): Promise<Figures> {
  const cold: number[] = [];
  const cpu: number[] = [];
  let rss = 0;
  const perQuestion: Figures['perQuestion'] = [];
  const l = await EventLog.open(lakeDir);
  const warm: number[] = [];
  try {
    for (const q of MIX) {
      const c: number[] = [];
      const cc: number[] = [];
      for (let i = 0; i < (from === 'log' ? logRuns : coldRuns); i++) {
        const r = coldRun(q, from);
        c.push(r.ms);
        cpu.push(r.cpuMs);
        cc.push(r.cpuMs);
        rss = Math.max(rss, r.rssMb);
      }
      cold.push(...c);
      // what one answer reads, in a handle that has read nothing yet
      const fresh = await EventLog.open(lakeDir, { readOnly: true });
      readStats.filesOpened = 0;
      readStats.rowGroupsRead = 0;
      try {
        await q.call(fresh, { from });
      } finally {
        fresh.close();
      }
      const files = readStats.filesOpened;
      const rowGroups = readStats.rowGroupsRead;
      const w: number[] = [];
      await q.call(l, { from }); // first call loads what a warm process has loaded
      for (let i = 0; i < (from === 'log' ? logWarm : warmRuns); i++) {
        const t0 = performance.now();
        await q.call(l, { from });
        w.push(performance.now() - t0);
      }
      warm.push(...w);
      perQuestion.push({ label: q.label, cold: pct(c, 50), coldCpu: pct(cc, 50), warm: pct(w, 50), files, rowGroups });
    }
  } finally {
    l.close();
  }
  return { coldP50: pct(cold, 50), coldP99: pct(cold, 99), coldCpuP50: pct(cpu, 50), coldCpuP99: pct(cpu, 99), coldRssMb: rss, warmP50: pct(warm, 50), warmP99: pct(warm, 99), perQuestion };
}

interface ServerFigures {
  cached: LoadResult;
  uncached: LoadResult;
  /** Peak RSS of each server process, MB. */
  cachedRssMb: number;
  uncachedRssMb: number;
}

/** 32 clients on loopback against `mimir serve` over the lake: with its cache (filled by one round first), then with none. */
async function serverFigures(): Promise<ServerFigures> {
  const targets = MIX.map((x) => x.http);
  const run = async (extra: string[], fill: boolean): Promise<{ r: LoadResult; rssMb: number }> => {
    const server = await startServeProcess(lakeDir, ['--timeout', '30s', ...extra]);
    try {
      if (fill) await load({ url: server.url, targets, clients: 1, seconds: 600, requests: targets.length });
      const r = await load({ url: server.url, targets, clients, seconds: serveSeconds });
      return { r, rssMb: server.rss().peakMb };
    } finally {
      await server.stop();
    }
  };
  const cached = await run([], true);
  const uncached = await run(['--cache-mb', '0'], false);
  return { cached: cached.r, uncached: uncached.r, cachedRssMb: cached.rssMb, uncachedRssMb: uncached.rssMb };
}

function print(size: string, from: From, f: Figures, server?: ServerFigures): void {
  log(`${size} ${from === 'state' ? 'state tables (after)' : 'log fold (before)'}: cold CLI p50 ${ms(f.coldP50)} p99 ${ms(f.coldP99)} (CPU p50 ${ms(f.coldCpuP50)} p99 ${ms(f.coldCpuP99)}) peak RSS ${f.coldRssMb.toFixed(0)} MB; in-process p50 ${ms(f.warmP50)} p99 ${ms(f.warmP99)}`);
  for (const q of f.perQuestion) log(`    ${q.label.padEnd(38)} cold p50 ${ms(q.cold).padStart(8)} (CPU ${ms(q.coldCpu).padStart(8)})   in-process p50 ${ms(q.warm).padStart(8)}   files ${String(q.files).padStart(4)}  row groups ${String(q.rowGroups).padStart(5)}`);
  if (!server) return;
  // server latencies are a few ms: a tenth of a ms, so a 10x/1x ratio of them is not whole-ms rounding
  const ms1 = (x: number): string => `${x.toFixed(1)} ms`;
  const st = (r: LoadResult): string => `${r.requests} req in ${r.seconds.toFixed(0)} s, p50 ${ms1(r.p50)} p99 ${ms1(r.p99)} max ${ms(r.max)}, statuses ${JSON.stringify(r.statuses)}`;
  log(`    server, ${clients} clients, cached answers: ${st(server.cached)}; peak RSS ${server.cachedRssMb.toFixed(0)} MB`);
  log(`    server, ${clients} clients, no cache:       ${st(server.uncached)}; peak RSS ${server.uncachedRssMb.toFixed(0)} MB`);
}

async function eventCount(): Promise<number> {
  const l = await EventLog.open(lakeDir);
  try {
    let n = 0;
    for (const k of ['node', 'edge', 'file', 'pos'] as const) for await (const b of l.scan(k, { columns: ['id'] })) n += b.numRows;
    if (!hasStateTables(l)) await rebuildState(l);
    else {
      // a lake built before code_paths (history's index by path): built as `mimir state maintain` would
      const t = l.lake.tableExists(ident(CODE_PATHS)) ? await l.lake.loadTable(ident(CODE_PATHS)) : undefined;
      if (!t || t.properties[PROP_BUILDING] !== undefined) await rebuildState(l, { tables: [CODE_PATHS] });
    }
    return n;
  } finally {
    l.close();
  }
}

// ---- main ----------------------------------------------------------------------

const { dirs } = await expandCrateDirs([corpus]);
if (dirs.length < MIN_CRATES) {
  log(`bench:query skipped: ${corpus} holds ${dirs.length} crate folders, fewer than ${MIN_CRATES}; run scripts/install-debian-crates.sh (as root, with apt) first`);
  process.exit(0);
}
if (!args.includes('--build-only')) buildDist();
await ensureLake();
if (args.includes('--build-only')) {
  log(`1x: ${await eventCount()} events`);
  if (!args.includes('--skip-grow')) {
    await grow();
    lakeDir = lake10;
    log(`10x: ${await eventCount()} events`);
  }
  process.exit(0);
}
const results: Record<string, Partial<Record<From, Figures>>> = { '1x': {}, '10x': {} };
log(`1x: ${await eventCount()} events`);
const servers: Record<string, ServerFigures> = {};
const only10x = args.includes('--only-10x');
for (const from of (only10x ? [] : ['state', 'log']) as From[]) {
  results['1x']![from] = await measure(from);
  if (from === 'state') servers['1x'] = await serverFigures();
  print('1x', from, results['1x']![from]!, servers['1x']);
}
if (!args.includes('--skip-grow')) {
  await grow();
  lakeDir = lake10;
  log(`10x: ${await eventCount()} events`);
  for (const from of (args.includes('--skip-log-10x') ? ['state'] : ['state', 'log']) as From[]) {
    results['10x']![from] = await measure(from);
    if (from === 'state') servers['10x'] = await serverFigures();
    print('10x', from, results['10x']![from]!, servers['10x']);
  }
  for (const from of ['state', 'log'] as From[]) {
    const a = results['1x']![from];
    const b = results['10x']![from];
    if (!a || !b) continue;
    const r = (x: number, y: number): string => `${(y / x).toFixed(2)}x`;
    log(`10x / 1x (${from}): cold p50 ${r(a.coldP50, b.coldP50)}, cold p99 ${r(a.coldP99, b.coldP99)}, cold CPU p50 ${r(a.coldCpuP50, b.coldCpuP50)}, in-process p50 ${r(a.warmP50, b.warmP50)}, p99 ${r(a.warmP99, b.warmP99)}, peak RSS ${r(a.coldRssMb, b.coldRssMb)}`);
  }
  const a = servers['1x'];
  const b = servers['10x'];
  const r = (x: number, y: number): string => `${(y / x).toFixed(2)}x`;
  if (a && b) log(`10x / 1x (server): cached p50 ${r(a.cached.p50, b.cached.p50)} p99 ${r(a.cached.p99, b.cached.p99)}; no cache p50 ${r(a.uncached.p50, b.uncached.p50)} p99 ${r(a.uncached.p99, b.uncached.p99)}; peak RSS ${r(a.uncachedRssMb, b.uncachedRssMb)}`);
}
