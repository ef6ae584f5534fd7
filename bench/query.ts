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
// - warm server: `mimir serve` figures come from the serve bench (see
//   `serverFigures` below: the place to plug them in).
//
// Then grows the universe 10x (the same crates again as `name@x.y.z-copyN`,
// N = 1..9, one universe add each, then one state maintenance pass) and
// times the same mix; prints the ratios.
// Prints p50/p99 in ms and peak RSS in MB. A benchmark prints; it asserts
// nothing. Flags: --lake DIR (default .bench/query-lake; reused when its
// marker says it is complete), --runs N (cold runs per question, default 5),
// --warm N (in-process calls per question, default 20), --copies N (default
// 9), --skip-grow, --corpus DIR.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../src/log/event-log.ts';
import { expandCrateDirs, ingest, universeAdd } from '../src/ingest/index.ts';
import { maintainState, formatMaintainReport } from '../src/log/state/maintain.ts';
import { rebuildState, hasStateTables } from '../src/log/state/rebuild.ts';
import { callees, callers, def, find, history, refs, type QueryOptions } from '../src/query/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const lakeDir = path.resolve(flag('--lake') ?? path.join(root, '.bench', 'query-lake'));
const corpus = flag('--corpus') ?? '/usr/share/cargo/registry';
const coldRuns = Number(flag('--runs') ?? 5);
const warmRuns = Number(flag('--warm') ?? 20);
const copies = Number(flag('--copies') ?? 9);
const MIN_CRATES = 40;

/** The fixed mix: the questions and their CLI words. Answers do not grow with the universe's copies. */
interface Question {
  label: string;
  cli: string[];
  call: (log: EventLog, o: QueryOptions) => Promise<unknown>;
}
const MIX: Question[] = [
  { label: 'def tally::Tally::add', cli: ['def', 'tally::Tally::add'], call: (l, o) => def(l, 'tally::Tally::add', o) },
  { label: "find 'Tally*'", cli: ['find', 'Tally*'], call: (l, o) => find(l, 'Tally*', o) },
  { label: "find 'Regex*' --krate regex@1.7.1", cli: ['find', 'Regex*', '--krate', 'regex@1.7.1'], call: (l, o) => find(l, 'Regex*', { ...o, krate: 'regex@1.7.1' }) },
  { label: 'callers fnvish::hash_str', cli: ['callers', 'fnvish::hash_str'], call: (l, o) => callers(l, 'fnvish::hash_str', o) },
  { label: 'callees tally::Tally::add', cli: ['callees', 'tally::Tally::add'], call: (l, o) => callees(l, 'tally::Tally::add', o) },
  { label: 'refs tally::Tally', cli: ['refs', 'tally::Tally'], call: (l, o) => refs(l, 'tally::Tally', o) },
  { label: 'history tally::Tally::add', cli: ['history', 'tally::Tally::add'], call: (l, o) => history(l, 'tally::Tally::add', o) },
];

type From = 'state' | 'log';

interface Figures {
  coldP50: number;
  coldP99: number;
  coldRssMb: number;
  warmP50: number;
  warmP99: number;
  perQuestion: { label: string; cold: number; warm: number }[];
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

const marker = (n: number): string => path.join(lakeDir, `.bench-complete-${n}x`);

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

async function grow(): Promise<void> {
  if (existsSync(marker(10))) {
    log('lake: reusing the 10x universe');
    return;
  }
  const scratch = path.join(path.dirname(lakeDir), 'query-copies');
  const l = await EventLog.open(lakeDir);
  try {
    for (let n = 1; n <= copies; n++) {
      if (existsSync(path.join(lakeDir, `.bench-copy-${n}`))) continue;
      const t0 = Date.now();
      const dir = copyCorpus(n, scratch);
      const u = await universeAdd(l, [dir]);
      rmSync(dir, { recursive: true, force: true });
      writeFileSync(path.join(lakeDir, `.bench-copy-${n}`), '');
      log(`grow: copy ${n}: +${u.events.add} events in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
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

// ---- timing ----------------------------------------------------------------------

function buildDist(): void {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) log(`build failed (cold runs use tsx, slower to start): ${r.stderr.split('\n')[0]}`);
}

/** One cold CLI run: wall ms and peak RSS (MB) of the whole process, via GNU time. */
function coldRun(q: Question, from: From): { ms: number; rssMb: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, path.join(root, 'bin', 'mimir.js'), ...q.cli, '--lake', lakeDir, '--json'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, MIMIR_ANSWER_FROM: from, MIMIR_SERVER: '' },
    maxBuffer: 1 << 28,
  });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${q.cli.join(' ')} failed (${r.status}): ${r.stderr}`);
  const rssKb = Number(r.stderr.trim().split('\n').pop());
  return { ms: wall, rssMb: rssKb / 1024 };
}

async function measure(from: From): Promise<Figures> {
  const cold: number[] = [];
  let rss = 0;
  const perQuestion: Figures['perQuestion'] = [];
  const l = await EventLog.open(lakeDir);
  const warm: number[] = [];
  try {
    for (const q of MIX) {
      const c: number[] = [];
      for (let i = 0; i < coldRuns; i++) {
        const r = coldRun(q, from);
        c.push(r.ms);
        rss = Math.max(rss, r.rssMb);
      }
      cold.push(...c);
      const w: number[] = [];
      await q.call(l, { from }); // first call loads what a warm process has loaded
      for (let i = 0; i < warmRuns; i++) {
        const t0 = performance.now();
        await q.call(l, { from });
        w.push(performance.now() - t0);
      }
      warm.push(...w);
      perQuestion.push({ label: q.label, cold: pct(c, 50), warm: pct(w, 50) });
    }
  } finally {
    l.close();
  }
  return { coldP50: pct(cold, 50), coldP99: pct(cold, 99), coldRssMb: rss, warmP50: pct(warm, 50), warmP99: pct(warm, 99), perQuestion };
}

/**
 * Warm-server figures (p50/p99 with 32 concurrent clients, server RSS) for
 * the same lake and mix: `mimir serve` is benchmarked by the serve bench;
 * plug its figures in here when it runs against `lakeDir`. Undefined: not
 * measured by this script.
 */
function serverFigures(_lake: string): { p50: number; p99: number; rssMb: number } | undefined {
  return undefined;
}

function print(size: string, from: From, f: Figures): void {
  log(`${size} ${from === 'state' ? 'state tables (after)' : 'log fold (before)'}: cold CLI p50 ${ms(f.coldP50)} p99 ${ms(f.coldP99)} peak RSS ${f.coldRssMb.toFixed(0)} MB; in-process p50 ${ms(f.warmP50)} p99 ${ms(f.warmP99)}`);
  for (const q of f.perQuestion) log(`    ${q.label.padEnd(38)} cold p50 ${ms(q.cold).padStart(8)}   in-process p50 ${ms(q.warm).padStart(8)}`);
  const s = serverFigures(lakeDir);
  log(s ? `    warm server: p50 ${ms(s.p50)} p99 ${ms(s.p99)} RSS ${s.rssMb.toFixed(0)} MB` : '    warm server: (measured by the serve bench; see serverFigures in bench/query.ts)');
}

async function eventCount(): Promise<number> {
  const l = await EventLog.open(lakeDir);
  try {
    let n = 0;
    for (const k of ['node', 'edge', 'file', 'pos'] as const) for await (const b of l.scan(k, { columns: ['id'] })) n += b.numRows;
    if (!hasStateTables(l)) await rebuildState(l);
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
    log(`10x: ${await eventCount()} events`);
  }
  process.exit(0);
}
const results: Record<string, Partial<Record<From, Figures>>> = { '1x': {}, '10x': {} };
log(`1x: ${await eventCount()} events`);
for (const from of ['state', 'log'] as From[]) print('1x', from, (results['1x']![from] = await measure(from)));
if (!args.includes('--skip-grow')) {
  await grow();
  log(`10x: ${await eventCount()} events`);
  for (const from of ['state', 'log'] as From[]) print('10x', from, (results['10x']![from] = await measure(from)));
  for (const from of ['state', 'log'] as From[]) {
    const a = results['1x']![from]!;
    const b = results['10x']![from]!;
    const r = (x: number, y: number): string => `${(y / x).toFixed(2)}x`;
    log(`10x / 1x (${from}): cold p50 ${r(a.coldP50, b.coldP50)}, cold p99 ${r(a.coldP99, b.coldP99)}, in-process p50 ${r(a.warmP50, b.warmP50)}, p99 ${r(a.warmP99, b.warmP99)}, peak RSS ${r(a.coldRssMb, b.coldRssMb)}`);
  }
}
