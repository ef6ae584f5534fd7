// `npm run bench:query`: how fast questions are answered, and how that holds
// as the universe grows. Builds (or reuses) a lake with Debian's crate corpus
// (/usr/share/cargo/registry, installed by scripts/install-debian-crates.sh)
// in the universe plus the sample workspace as repo `sample`, then times a
// fixed mix of questions (def, find by prefix, callers, callees, refs,
// history):
//
// - cold CLI: a new `node bin/mimir.js …` process per question (compiled JS
//   from dist/, built first when stale), wall time, CPU time and peak RSS per
//   run. With both lakes, runs are interleaved (per question: 1x, 10x, 10x,
//   1x, …) so load drift on a shared box hits both alike; --runs (20) per
//   question and lake, so the whole-mix p99 (of 140) is not just the max; per
//   question p50 and p95 (p99 of 20 runs would be their max), the 10x/1x
//   ratio per question, and the median of the paired run-by-run ratios;
// - what one answer reads, in process on a fresh handle: Parquet files
//   opened, row groups, bytes read, rows decoded, CPU and GC time — what
//   grows at 10x shows there;
// - in process: each question asked as the server asks it (`ask`: the query
//   and the answer layer) on one open log, warm, with the read cache on (as
//   the CLI and the server read: each metadata file, manifest and footer
//   parsed once);
// - each twice: answered from the serving state tables, and by folding the
//   event log (`MIMIR_ANSWER_FROM=log`: how every question was answered
//   before the state tables, the "before" figures);
// - warm server: a `mimir serve` process per lake, 32 concurrent loopback
//   connections asking the same mix, bounded in time: once with its answer
//   cache (after one round to fill it), once with --cache-mb 0 (every answer
//   read from the lake); p50/p90/p99, requests/s, the server's CPU per request
//   and peak RSS. The generator is Debian's wrk when installed (one C thread;
//   `apt-get install wrk`), else a JS generator in this process (which shares
//   the cores with the server and can set the pace); the output says which.
//   Each lake's server is loaded alone in --rounds (8) rounds alternating the
//   lakes (its absolute figures), then both at once for as many rounds (the
//   10x/1x A/B: on a loaded box only servers loaded at the same time see the
//   same machine). The servers are pinned to core 0 and wrk to core 1 when
//   taskset is there (measured steadier; --no-pin lets them float).
//
// Then grows the universe 10x (the same crates again as `name@x.y.z-copyN`,
// N = 1..9, one universe add each, then one state maintenance pass) and
// times the same mix on both lakes side by side; prints the ratios.
// Prints p50/p99 in ms and peak RSS in MB, and the load average at the start
// and the end. A benchmark prints; it asserts nothing. Flags: --lake DIR
// (default .bench/query-lake; reused when its marker says it is complete),
// --runs N (cold runs per question and lake, default 20), --warm N
// (in-process calls per question, default 20), --copies N (default 9),
// --skip-grow, --corpus DIR, --clients N (32), --seconds S (10, per lake and
// server phase, split in rounds), --rounds N (8), --load auto|wrk|js|both
// (the server's load generator; both = wrk, and the JS generator alone for
// comparison), --no-pin, --log-runs N / --log-warm N (2 / 3: the log fold's
// cold and in-process runs, slow at 10x), --build-only (build the lakes, time
// nothing), --only-10x (time the grown lake only), --skip-log-10x (no log
// fold at 10x).
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
import { stringifyJson } from '../src/lake/spec/json.ts';
import { eq } from '../src/lake/expr/expr.ts';
import { UNIVERSE_REPO, ident, type Kind } from '../src/log/schema.ts';
import type { Value } from '../src/lake/spec/types.ts';
import { expandCrateDirs, universeAdd } from '../src/ingest/index.ts';
import { maintainState, formatMaintainReport } from '../src/log/state/maintain.ts';
import { rebuildState, hasStateTables } from '../src/log/state/rebuild.ts';
import { CODE_PATHS, PROP_BUILDING } from '../src/log/state/schema.ts';
import type { QueryOptions } from '../src/query/index.ts';
import { ask, type Question as Asked } from '../src/serve/questions.ts';
import { enableReadCache } from '../src/lake/io/read-cache.ts';
import { findTaskset, findWrk, load, mergeLoads, wrkLoad, type Generator, type LoadResult } from './load.ts';
import { readStats } from '../src/lake/parquet/read.ts';
import { startServeProcess, type ServeProcess } from './serve-process.ts';
import { benchLakeMarker, ensureBenchLake } from './query-lake.ts';
import { availableParallelism, loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';

const uptimeLine = (): string => `load average ${loadavg().map((x) => x.toFixed(2)).join(', ')} at ${new Date().toISOString().slice(11, 19)} UTC`;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const lake1 = path.resolve(flag('--lake') ?? path.join(root, '.bench', 'query-lake'));
/** The grown lake: a copy of the 1x lake plus the copies (the 1x lake stays as it is, reusable). */
const lake10 = path.resolve(flag('--lake-10x') ?? `${lake1}-10x`);
const corpus = flag('--corpus') ?? '/usr/share/cargo/registry';
const coldRuns = Number(flag('--runs') ?? 20);
/** Server phases: rounds per lake, alternating lakes (each round --seconds / --rounds long). */
const rounds = Number(flag('--rounds') ?? 8);
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

/**
 * The fixed mix: the questions and their CLI words. Their answers do not grow
 * with the universe's copies, but for one: fnvish is a universe crate, so at
 * 10x `callers fnvish::hash_str` has 10 targets (fnvish@0.2.1 and its 9
 * copies; the call sites are the same): its answer is 1.7 kB at 1x, 4.6 kB at
 * 10x (each answer's size is printed).
 */
interface Question {
  label: string;
  cli: string[];
  /** The same question as a `mimir serve` request target. */
  http: string;
  call: (log: EventLog, o: QueryOptions) => Promise<unknown>;
}
const q = (route: string, params: Record<string, string>): string => `/api/${route}?${new URLSearchParams(params)}`;
/**
 * A question of the mix: in process it is asked through `ask`, the answer the
 * CLI prints and the server sends (the query, then the answer layer: ranking,
 * file paths placed from code_files, …), not the bare query function.
 */
const mix = (label: string, cli: string[], question: Asked, http: string): Question => ({ label, cli, http, call: (l, o) => ask(l, question, o.from) });
const MIX: Question[] = [
  mix('def tally::Tally::add', ['def', 'tally::Tally::add'], { q: 'def', path: 'tally::Tally::add' }, q('def', { path: 'tally::Tally::add' })),
  mix("find 'Tally*'", ['find', 'Tally*'], { q: 'find', name: 'Tally*' }, q('find', { name: 'Tally*' })),
  mix("find 'Regex*' --krate regex@1.7.1", ['find', 'Regex*', '--krate', 'regex@1.7.1'], { q: 'find', name: 'Regex*', krate: 'regex@1.7.1' }, q('find', { name: 'Regex*', krate: 'regex@1.7.1' })),
  mix('callers fnvish::hash_str', ['callers', 'fnvish::hash_str'], { q: 'callers', path: 'fnvish::hash_str' }, q('callers', { path: 'fnvish::hash_str' })),
  mix('callees tally::Tally::add', ['callees', 'tally::Tally::add'], { q: 'callees', path: 'tally::Tally::add' }, q('callees', { path: 'tally::Tally::add' })),
  mix('refs tally::Tally', ['refs', 'tally::Tally'], { q: 'refs', path: 'tally::Tally' }, q('refs', { path: 'tally::Tally' })),
  mix('history tally::Tally::add', ['history', 'tally::Tally::add'], { q: 'history', path: 'tally::Tally::add' }, q('history', { path: 'tally::Tally::add' })),
];

type From = 'state' | 'log';

/** What one answer reads in a fresh handle (an in-process call), and its CPU and GC time. */
interface Reads {
  files: number;
  rowGroups: number;
  bytes: number;
  rows: number;
  cpuMs: number;
  gcMs: number;
  /** The answer's size as JSON: a question whose answer grows with the universe shows here. */
  answerBytes: number;
}

/** The raw samples of one lake: cold wall and CPU ms (all questions), warm in-process ms, and per question. */
interface Figures {
  cold: number[];
  /** CPU time (user + system) of the cold processes: what a quiet machine's wall time would be, about. */
  cpu: number[];
  coldRssMb: number;
  warm: number[];
  perQuestion: { label: string; cold: number[]; coldCpu: number[]; warm: number[]; reads: Reads }[];
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

const marker = (n: number): string => benchLakeMarker(n === 1 ? lake1 : lake10, n);

const ensureLake = (): Promise<void> => ensureBenchLake(lake1, corpus, log);

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
function coldRun(q: Question, from: From, lake: string): { ms: number; cpuMs: number; rssMb: number } {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', process.execPath, path.join(root, 'bin', 'mimir.js'), ...q.cli, '--lake', lake, '--json'], {
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

/** What one answer reads in a handle that has read nothing yet: files, row groups, bytes, rows decoded, and its CPU and GC time. */
async function readsOf(q: Question, from: From, lake: string): Promise<Reads> {
  const fresh = await EventLog.open(lake, { readOnly: true });
  for (const k of Object.keys(readStats) as (keyof typeof readStats)[]) readStats[k] = 0;
  let gcMs = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  obs.observe({ entryTypes: ['gc'] });
  const cpu0 = process.cpuUsage();
  let answer: unknown;
  try {
    answer = await q.call(fresh, { from });
  } finally {
    fresh.close();
  }
  const cpu = process.cpuUsage(cpu0);
  await new Promise((r) => setImmediate(r)); // gc entries are delivered asynchronously
  obs.disconnect();
  const json = answer === undefined ? '' : stringifyJson(answer);
  return { files: readStats.filesOpened, rowGroups: readStats.rowGroupsRead, bytes: readStats.bytesRead, rows: readStats.rowsDecoded, cpuMs: (cpu.user + cpu.system) / 1000, gcMs, answerBytes: Buffer.byteLength(json) };
}

/**
 * Times the mix on every lake of `lakes`. Cold CLI runs are interleaved (per
 * question: lake A, lake B, lake A, …) so that load drift on a shared box hits
 * every lake alike; then, per lake, the reads of one answer in a fresh handle
 * and the warm in-process calls.
 */
async function measure(from: From, lakes: string[]): Promise<Figures[]> {
  const out: Figures[] = lakes.map(() => ({ cold: [], cpu: [], coldRssMb: 0, warm: [], perQuestion: [] }));
  const runs = from === 'log' ? logRuns : coldRuns;
  for (const q of MIX) {
    const c: number[][] = lakes.map(() => []);
    const cc: number[][] = lakes.map(() => []);
    for (let i = 0; i < runs; i++) {
      // alternate which lake goes first, so neither always follows the other's page-cache traffic
      const order = lakes.map((_, j) => j);
      if (i % 2 === 1) order.reverse();
      for (const j of order) {
        const r = coldRun(q, from, lakes[j]!);
        c[j]!.push(r.ms);
        cc[j]!.push(r.cpuMs);
        out[j]!.coldRssMb = Math.max(out[j]!.coldRssMb, r.rssMb);
      }
    }
    const reads: Reads[] = [];
    for (const lake of lakes) reads.push(await readsOf(q, from, lake));
    // warm calls interleaved too: one open log per lake, each call alternating the lakes
    const logs: EventLog[] = [];
    const w: number[][] = lakes.map(() => []);
    try {
      for (const lake of lakes) {
        const l = await EventLog.open(lake, { readOnly: true });
        // as the CLI and the server read: each metadata file, manifest and footer parsed once per handle
        enableReadCache(l.lake.io);
        logs.push(l);
      }
      for (const l of logs) await q.call(l, { from }); // first call loads what a warm process has loaded
      for (let i = 0; i < (from === 'log' ? logWarm : warmRuns); i++) {
        const order = lakes.map((_, j) => j);
        if (i % 2 === 1) order.reverse();
        for (const j of order) {
          const t0 = performance.now();
          await q.call(logs[j]!, { from });
          w[j]!.push(performance.now() - t0);
        }
      }
    } finally {
      for (const l of logs) l.close();
    }
    for (let j = 0; j < lakes.length; j++) {
      const f = out[j]!;
      f.cold.push(...c[j]!);
      f.cpu.push(...cc[j]!);
      f.warm.push(...w[j]!);
      f.perQuestion.push({ label: q.label, cold: [...c[j]!], coldCpu: [...cc[j]!], warm: w[j]!, reads: reads[j]! });
    }
  }
  return out;
}

interface ServerFigures {
  /** This lake's server loaded alone (the other lakes' servers idle), over all its rounds: the absolute figures. */
  cached: LoadResult;
  uncached: LoadResult;
  /** Every lake's server loaded at once, one generator each, over all rounds: the A/B (only with two lakes). */
  cachedTogether?: LoadResult;
  uncachedTogether?: LoadResult;
  /** Per round p50 when loaded at once (cached, no cache). */
  together: { cached: number; uncached: number }[];
  /** The JS generator's figures, alone, when --load both. */
  cachedJs?: LoadResult;
  uncachedJs?: LoadResult;
  /** Peak RSS of each server process, MB. */
  cachedRssMb: number;
  uncachedRssMb: number;
  /** Server CPU per request while loaded alone, ms (cached, no cache): from /proc, less sensitive to load than latency. */
  cachedCpuMs: number;
  uncachedCpuMs: number;
  /** The same while every lake's server is loaded at once (0 with one lake): both see the same machine. */
  cachedCpuTogetherMs: number;
  uncachedCpuTogetherMs: number;
}

/** How the server phase is loaded: which generator, and the cores of server and generator (or none). */
interface LoadPlan {
  generator: Generator;
  both: boolean;
  pin?: { taskset: string; server: string; generator: string };
}

function loadPlan(): LoadPlan {
  const want = flag('--load') ?? 'auto';
  if (!['auto', 'wrk', 'js', 'both'].includes(want)) throw new Error(`--load: expected auto, wrk, js or both, found ${want}`);
  const wrk = findWrk();
  if ((want === 'wrk' || want === 'both') && !wrk) throw new Error(`--load ${want}: wrk is not on PATH (apt-get install wrk); nothing was timed`);
  const generator: Generator = want === 'js' || !wrk ? 'js' : 'wrk';
  const taskset = findTaskset();
  // pinned by default when it can be: measured steadier (cached server, both lakes at once, 6 rounds of 1 s,
  // load 12-13: per-round 10x/1x p50 0.85-1.46 and 0.81-1.19 pinned vs 0.81-1.88 and 0.66-2.34 not)
  const pin = taskset && generator === 'wrk' && availableParallelism() >= 2 && !args.includes('--no-pin') ? { taskset, server: '0', generator: '1' } : undefined;
  return { generator, both: want === 'both', pin };
}

function describePlan(p: LoadPlan): string {
  const gen = p.generator === 'wrk' ? `wrk (${findWrk()}, 1 thread, ${clients} connections)` : `the JS generator in this process, ${clients} clients (${findWrk() ? '--load js' : 'wrk is not installed: apt-get install wrk'})`;
  const pin = p.pin ? `; servers pinned to core ${p.pin.server}, wrk to core ${p.pin.generator} (taskset; --no-pin lets them float)` : p.generator === 'wrk' ? `; not pinned (${args.includes('--no-pin') ? '--no-pin' : 'no taskset or fewer than 2 cores'})` : '';
  return `${gen}${pin}${p.both ? '; the JS generator too, alone, in the same rounds (--load both)' : ''}`;
}

/**
 * 32 clients on loopback against `mimir serve` over each lake: with its answer
 * cache (filled by one round of the mix first), then with --cache-mb 0 (every
 * answer read from the lake). The servers of all lakes run at once. First each
 * is loaded alone, in `rounds` rounds alternating the lakes (order flipped
 * each round): its absolute figures. Then, with two lakes, both are loaded at
 * the same time (one generator each) for `rounds` more rounds: the 10x/1x
 * A/B. On a shared 2-core box the load of other processes swings a server's
 * throughput by 2-5x within seconds, which alternating rounds cannot pair
 * away (measured: per-round 10x/1x p50 0.36-1.03 alternating vs 0.90-1.46 at
 * once, the same minute); two servers loaded at once get the same share of
 * the machine, so their ratio is what differs between the lakes.
 */
async function serverFigures(lakes: string[], plan: LoadPlan): Promise<ServerFigures[]> {
  const targets = MIX.map((x) => x.http);
  const per = Math.max(1, Math.round(serveSeconds / rounds));
  const gen = async (url: string): Promise<LoadResult> =>
    (plan.generator === 'wrk' ? await wrkLoad({ url, targets, clients, seconds: per, cpus: plan.pin?.generator }) : undefined) ?? (await load({ url, targets, clients, seconds: per }));
  /** Per lake: alone, together (per round), the JS generator's rounds (--load both), peak RSS, server CPU ms per request alone. */
  interface Phase {
    alone: LoadResult[];
    together: LoadResult[][];
    js: LoadResult[][];
    rss: number[];
    cpu: number[];
    /** Server CPU ms per request while all lakes' servers are loaded at once (the fair A/B of the work per answer). */
    cpuTogether: number[];
  }
  const phase = async (extra: string[], fill: boolean): Promise<Phase> => {
    const pin = plan.pin ? { taskset: plan.pin.taskset, cpus: plan.pin.server } : undefined;
    const servers: ServeProcess[] = [];
    try {
      for (const lake of lakes) servers.push(await startServeProcess(lake, ['--timeout', '30s', ...extra], pin));
      if (fill) for (const s of servers) await load({ url: s.url, targets, clients: 1, seconds: 600, requests: targets.length });
      const alone: LoadResult[][] = lakes.map(() => []);
      const js: LoadResult[][] = lakes.map(() => []);
      const cpu = lakes.map(() => 0);
      for (let round = 0; round < rounds; round++) {
        const order = lakes.map((_, j) => j);
        if (round % 2 === 1) order.reverse();
        for (const j of order) {
          const c0 = servers[j]!.cpuMs();
          alone[j]!.push(await gen(servers[j]!.url));
          cpu[j]! += servers[j]!.cpuMs() - c0;
          if (plan.both && plan.generator === 'wrk') js[j]!.push(await load({ url: servers[j]!.url, targets, clients, seconds: per }));
        }
      }
      const together: LoadResult[][] = lakes.map(() => []);
      const cpuTogether = lakes.map(() => 0);
      if (lakes.length > 1) {
        for (let round = 0; round < rounds; round++) {
          const c0 = servers.map((s) => s.cpuMs());
          const rs = await Promise.all(servers.map((s) => gen(s.url)));
          rs.forEach((r, j) => {
            together[j]!.push(r);
            cpuTogether[j]! += servers[j]!.cpuMs() - c0[j]!;
          });
        }
      }
      return {
        alone: alone.map((g) => mergeLoads(g)),
        together,
        js,
        rss: servers.map((s) => s.rss().peakMb),
        cpu: cpu.map((c, j) => c / alone[j]!.reduce((n, r) => n + r.requests, 0)),
        cpuTogether: cpuTogether.map((c, j) => c / Math.max(1, together[j]!.reduce((n, r) => n + r.requests, 0))),
      };
    } finally {
      for (const s of servers) await s.stop();
    }
  };
  const cached = await phase([], true);
  const uncached = await phase(['--cache-mb', '0'], false);
  return lakes.map((_, j) => ({
    cached: cached.alone[j]!,
    uncached: uncached.alone[j]!,
    cachedTogether: cached.together[j]!.length ? mergeLoads(cached.together[j]!) : undefined,
    uncachedTogether: uncached.together[j]!.length ? mergeLoads(uncached.together[j]!) : undefined,
    together: cached.together[j]!.map((r, k) => ({ cached: r.p50, uncached: uncached.together[j]![k]!.p50 })),
    cachedJs: cached.js[j]!.length ? mergeLoads(cached.js[j]!) : undefined,
    uncachedJs: uncached.js[j]!.length ? mergeLoads(uncached.js[j]!) : undefined,
    cachedRssMb: cached.rss[j]!,
    uncachedRssMb: uncached.rss[j]!,
    cachedCpuMs: cached.cpu[j]!,
    uncachedCpuMs: uncached.cpu[j]!,
    cachedCpuTogetherMs: cached.cpuTogether[j]!,
    uncachedCpuTogetherMs: uncached.cpuTogether[j]!,
  }));
}

const ms1 = (x: number): string => `${x.toFixed(1)} ms`;
const kb = (x: number): string => (x >= 1 << 20 ? `${(x / (1 << 20)).toFixed(1)} MB` : `${(x / 1024).toFixed(1)} kB`);

function print(size: string, from: From, f: Figures, server?: ServerFigures): void {
  log(
    `${size} ${from === 'state' ? 'state tables (after)' : 'log fold (before)'}: cold CLI p50 ${ms(pct(f.cold, 50))} p95 ${ms(pct(f.cold, 95))} p99 ${ms(pct(f.cold, 99))} max ${ms(pct(f.cold, 100))} of ${f.cold.length} runs (CPU p50 ${ms(pct(f.cpu, 50))} p99 ${ms(pct(f.cpu, 99))}) peak RSS ${f.coldRssMb.toFixed(0)} MB; in-process p50 ${ms(pct(f.warm, 50))} p99 ${ms(pct(f.warm, 99))}`,
  );
  for (const q of f.perQuestion) {
    const r = q.reads;
    log(
      `    ${q.label.padEnd(36)} cold p50 ${ms(pct(q.cold, 50)).padStart(7)} p95 ${ms(pct(q.cold, 95)).padStart(7)} (CPU p50 ${ms(pct(q.coldCpu, 50)).padStart(7)})  in-process p50 ${ms(pct(q.warm, 50)).padStart(6)}  | one answer: files ${String(r.files).padStart(3)} row groups ${String(r.rowGroups).padStart(4)} read ${kb(r.bytes).padStart(8)} rows ${String(r.rows).padStart(7)} CPU ${ms(r.cpuMs).padStart(6)} GC ${ms(r.gcMs).padStart(5)} answer ${kb(r.answerBytes)}`,
    );
  }
  if (!server) return;
  const st = (r: LoadResult): string => `${r.requests} req in ${r.seconds.toFixed(0)} s (${r.perSecond.toFixed(0)}/s), p50 ${ms1(r.p50)} p90 ${ms1(r.p90)} p99 ${ms1(r.p99)} max ${ms(r.max)}, statuses ${JSON.stringify(r.statuses)}`;
  log(`    server, ${clients} clients (${server.cached.generator}), cached answers: ${st(server.cached)}; server CPU ${server.cachedCpuMs.toFixed(2)} ms/req; peak RSS ${server.cachedRssMb.toFixed(0)} MB`);
  if (server.cachedJs) log(`    server, ${clients} clients (js),  cached answers: ${st(server.cachedJs)}`);
  log(`    server, ${clients} clients (${server.uncached.generator}), no cache:       ${st(server.uncached)}; server CPU ${server.uncachedCpuMs.toFixed(2)} ms/req; peak RSS ${server.uncachedRssMb.toFixed(0)} MB`);
  if (server.uncachedJs) log(`    server, ${clients} clients (js),  no cache:       ${st(server.uncachedJs)}`);
}

/** 10x / 1x of every figure, and per question, from runs interleaved in time. */
function printRatios(from: From, a: Figures, b: Figures): void {
  const r = (x: number, y: number): string => `${(y / x).toFixed(2)}x`;
  const p = (xs: number[], n: number): number => pct(xs, n);
  log(
    `10x / 1x (${from}): cold p50 ${r(p(a.cold, 50), p(b.cold, 50))}, p95 ${r(p(a.cold, 95), p(b.cold, 95))}, p99 ${r(p(a.cold, 99), p(b.cold, 99))}, cold CPU p50 ${r(p(a.cpu, 50), p(b.cpu, 50))} p99 ${r(p(a.cpu, 99), p(b.cpu, 99))}, in-process p50 ${r(p(a.warm, 50), p(b.warm, 50))} p99 ${r(p(a.warm, 99), p(b.warm, 99))}, peak RSS ${r(a.coldRssMb, b.coldRssMb)}`,
  );
  for (let i = 0; i < a.perQuestion.length; i++) {
    const x = a.perQuestion[i]!;
    const y = b.perQuestion[i]!;
    // the median of the paired ratios: run k at 10x over run k at 1x, timed next to each other
    const paired = y.cold.map((v, k) => v / x.cold[k]!);
    log(
      `    ${x.label.padEnd(36)} cold p50 ${r(p(x.cold, 50), p(y.cold, 50)).padStart(6)} p95 ${r(p(x.cold, 95), p(y.cold, 95)).padStart(6)} paired ${r(1, p(paired, 50)).padStart(6)}  CPU p50 ${r(p(x.coldCpu, 50), p(y.coldCpu, 50)).padStart(6)}  in-process ${r(p(x.warm, 50), p(y.warm, 50)).padStart(6)}  | one answer: files ${x.reads.files}->${y.reads.files} row groups ${x.reads.rowGroups}->${y.reads.rowGroups} read ${kb(x.reads.bytes)}->${kb(y.reads.bytes)} rows ${x.reads.rows}->${y.reads.rows} answer ${kb(x.reads.answerBytes)}->${kb(y.reads.answerBytes)}`,
    );
  }
}

function printServerRatios(a: ServerFigures, b: ServerFigures): void {
  const r = (x: number, y: number): string => `${(y / x).toFixed(2)}x`;
  const gen = a.cached.generator;
  if (a.cachedTogether && b.cachedTogether && a.uncachedTogether && b.uncachedTogether) {
    const st = (x: LoadResult): string => `p50 ${ms1(x.p50)} p99 ${ms1(x.p99)} ${x.perSecond.toFixed(0)}/s`;
    const rounds = a.together.map((x, k) => `${r(x.cached, b.together[k]!.cached)}/${r(x.uncached, b.together[k]!.uncached)}`).join(' ');
    const med = (xs: number[]): string => `${pct(xs, 50).toFixed(2)}x (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`;
    const perRound = (k: 'cached' | 'uncached'): string => med(a.together.map((x, i) => b.together[i]![k] / x[k]));
    log(`    server, both lakes loaded at once (${gen}, ${clients} clients each): cached 1x ${st(a.cachedTogether)}, 10x ${st(b.cachedTogether)}; no cache 1x ${st(a.uncachedTogether)}, 10x ${st(b.uncachedTogether)}`);
    log(
      `10x / 1x (server, both loaded at once: the A/B): cached p50 ${r(a.cachedTogether.p50, b.cachedTogether.p50)} p99 ${r(a.cachedTogether.p99, b.cachedTogether.p99)} req/s ${r(a.cachedTogether.perSecond, b.cachedTogether.perSecond)}; no cache p50 ${r(a.uncachedTogether.p50, b.uncachedTogether.p50)} p99 ${r(a.uncachedTogether.p99, b.uncachedTogether.p99)} req/s ${r(a.uncachedTogether.perSecond, b.uncachedTogether.perSecond)}; per round p50 cached/no cache: ${rounds}; median of the rounds' p50 ratios (range): cached ${perRound('cached')}, no cache ${perRound('uncached')}; server CPU/req at once cached ${a.cachedCpuTogetherMs.toFixed(2)} -> ${b.cachedCpuTogetherMs.toFixed(2)} ms (${r(a.cachedCpuTogetherMs, b.cachedCpuTogetherMs)}), no cache ${a.uncachedCpuTogetherMs.toFixed(2)} -> ${b.uncachedCpuTogetherMs.toFixed(2)} ms (${r(a.uncachedCpuTogetherMs, b.uncachedCpuTogetherMs)})`,
    );
  }
  log(
    `10x / 1x (server, each alone in alternating rounds, ${gen}): cached p50 ${r(a.cached.p50, b.cached.p50)} p99 ${r(a.cached.p99, b.cached.p99)} req/s ${r(a.cached.perSecond, b.cached.perSecond)}; no cache p50 ${r(a.uncached.p50, b.uncached.p50)} p99 ${r(a.uncached.p99, b.uncached.p99)} req/s ${r(a.uncached.perSecond, b.uncached.perSecond)}; server CPU/req cached ${r(a.cachedCpuMs, b.cachedCpuMs)} no cache ${r(a.uncachedCpuMs, b.uncachedCpuMs)}; peak RSS ${r(a.uncachedRssMb, b.uncachedRssMb)}`,
  );
  if (a.cachedJs && b.cachedJs && a.uncachedJs && b.uncachedJs) log(`10x / 1x (server, js, alone): cached p50 ${r(a.cachedJs.p50, b.cachedJs.p50)} p99 ${r(a.cachedJs.p99, b.cachedJs.p99)}; no cache p50 ${r(a.uncachedJs.p50, b.uncachedJs.p50)} p99 ${r(a.uncachedJs.p99, b.uncachedJs.p99)}`);
}

async function eventCount(lake: string): Promise<number> {
  const l = await EventLog.open(lake);
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
  log(`1x: ${await eventCount(lake1)} events`);
  if (!args.includes('--skip-grow')) {
    await grow();
    log(`10x: ${await eventCount(lake10)} events`);
  }
  process.exit(0);
}
const only10x = args.includes('--only-10x');
const grown = !args.includes('--skip-grow');
if (grown) await grow();
/** The lakes timed, side by side: 1x, 10x or both. */
const sizes: { size: string; dir: string }[] = [...(only10x ? [] : [{ size: '1x', dir: lake1 }]), ...(grown ? [{ size: '10x', dir: lake10 }] : [])];
for (const s of sizes) log(`${s.size}: ${await eventCount(s.dir)} events (${s.dir})`);
const plan = loadPlan();
log(`load: ${uptimeLine()}`);
log(
  `method: cold CLI runs interleaved across ${sizes.map((s) => s.size).join(' and ')} (${coldRuns} per question each, ${coldRuns * MIX.length} per lake; per question p95 is printed since p99 of ${coldRuns} runs is their max); server phases: ${describePlan(plan)}, ${rounds} rounds of ${Math.max(1, Math.round(serveSeconds / rounds))} s per lake alone (alternating lakes), then as many with all lakes loaded at once`,
);
const state = await measure('state', sizes.map((s) => s.dir));
const servers = await serverFigures(sizes.map((s) => s.dir), plan);
sizes.forEach((s, j) => print(s.size, 'state', state[j]!, servers[j]));
const logSizes = sizes.filter((s) => s.size === '1x' || !args.includes('--skip-log-10x'));
const folded = logSizes.length ? await measure('log', logSizes.map((s) => s.dir)) : [];
logSizes.forEach((s, j) => print(s.size, 'log', folded[j]!));
if (sizes.length === 2) {
  printRatios('state', state[0]!, state[1]!);
  if (folded.length === 2) printRatios('log', folded[0]!, folded[1]!);
  printServerRatios(servers[0]!, servers[1]!);
}
log(`load: ${uptimeLine()}`);
