// `node --import tsx bench/state-deletes.ts`: how the serving state tables
// should delete rows so every engine reads them right (issue 26 item 3),
// three ways side by side in one process, on the same runs:
//
// - equality: the former shape, one equality delete file on `id` per run and
//   table (MIMIR_STATE_DELETES=equality; engines may not apply it);
// - position: each run resolves the rows it replaces to (file, position) by
//   reading the id column of the live files, and writes a position delete file;
// - deletion-free: position deletes, then after each run a state maintenance
//   that leaves no delete file (maxDeltaFiles 0: the files the run's deletes
//   name, and the run's own files, merged and rewritten).
//
// Each builds its own lake under --dir (default /tmp/mimir-bench-state-deletes):
// a few Debian corpus crates (/usr/share/cargo/registry) added to the
// universe, then repos made of copies of some of them, each ingested --runs
// times (default 6) with an edit between runs (a line inserted at the top of
// lib.rs: every position shifts; a function renamed). Per way: write CPU (user
// + system, ms, every run and its maintenance), bytes the state tables gained
// per run, live data and delete files at the end, and a lookup's latency
// (find of a name, and callers, median of --warm tries, default 15, with the
// read cache a server and a question's process enable).
// A benchmark prints; it asserts nothing.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import * as path from 'node:path';

import { EventLog } from '../src/log/event-log.ts';
import { ingest, universeAdd } from '../src/ingest/index.ts';
import { maintainState } from '../src/log/state/maintain.ts';
import { enableReadCache } from '../src/lake/io/read-cache.ts';
import { STATE_TABLES } from '../src/log/state/schema.ts';
import { callers, find } from '../src/query/index.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const dir = path.resolve(flag('--dir') ?? '/tmp/mimir-bench-state-deletes');
const runs = Number(flag('--runs') ?? 6);
const warm = Number(flag('--warm') ?? 15);
const corpus = flag('--corpus') ?? '/usr/share/cargo/registry';
const UNIVERSE = ['memchr-2', 'itoa-1', 'fnv-1', 'bitflags-1', 'either-1'];
const REPOS = ['regex-syntax-0', 'aho-corasick-0', 'bytes-1'];

type Way = 'equality' | 'position' | 'deletion-free';
const WAYS: Way[] = ['equality', 'position', 'deletion-free'];

interface Figures {
  cpuMs: number[];
  stateBytes: number[];
  dataFiles: number;
  deleteFiles: number;
  findMs: number;
  callersMs: number;
  rows: number;
}

function pick(want: string[]): string[] {
  const crates = readdirSync(corpus);
  return want.map((w) => crates.find((c) => c.startsWith(w))).filter((c): c is string => c !== undefined).map((c) => path.join(corpus, c));
}

function bytesUnder(p: string): number {
  if (!existsSync(p)) return 0;
  let n = 0;
  for (const e of readdirSync(p, { withFileTypes: true })) {
    const q = path.join(p, e.name);
    n += e.isDirectory() ? bytesUnder(q) : statSync(q).size;
  }
  return n;
}

/** Bytes of the state tables' folders (data and metadata): what a run adds to them. */
function stateBytes(lake: string): number {
  let n = 0;
  for (const t of STATE_TABLES) n += bytesUnder(path.join(lake, 'mimir', t));
  return n;
}

/** An edit of run n: a comment line on top of lib.rs (every line shifts) and the first `pub fn` renamed. */
function editRepo(ws: string, n: number): void {
  const lib = path.join(ws, 'src', 'lib.rs');
  let t = readFileSync(lib, 'utf8');
  t = `// edit ${n}\n${t}`;
  t = t.replace(/pub fn ([a-z_][a-z0-9_]*)/, (_m, name: string) => `pub fn ${name.replace(/_r\d+$/, '')}_r${n}`);
  writeFileSync(lib, t);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function measure(way: Way): Promise<Figures> {
  const base = path.join(dir, way);
  rmSync(base, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  const lake = path.join(base, 'lake');
  if (way === 'equality') process.env.MIMIR_STATE_DELETES = 'equality';
  else delete process.env.MIMIR_STATE_DELETES;
  const log = await EventLog.open(lake);
  const f: Figures = { cpuMs: [], stateBytes: [], dataFiles: 0, deleteFiles: 0, findMs: 0, callersMs: 0, rows: 0 };
  try {
    for (const c of pick(UNIVERSE)) await universeAdd(log, [c], { workers: 1, maintain: false });
    const repos = pick(REPOS).map((c) => {
      const ws = path.join(base, path.basename(c));
      cpSync(c, ws, { recursive: true });
      return ws;
    });
    for (let n = 0; n < runs; n++) {
      for (const ws of repos) {
        if (n > 0) editRepo(ws, n);
        const bytes0 = stateBytes(lake);
        const cpu0 = process.cpuUsage();
        await ingest(log, ws, { repo: path.basename(ws), rev: `r${n}`, workers: 1 });
        if (way === 'deletion-free') await maintainState(log, { maxDeltaFiles: 0 });
        const cpu = process.cpuUsage(cpu0);
        if (n > 0) {
          f.cpuMs.push((cpu.user + cpu.system) / 1000);
          f.stateBytes.push(stateBytes(lake) - bytes0);
        }
      }
    }
    for (const t of STATE_TABLES) {
      const table = await log.table(t);
      if (!table) continue;
      const live = await table.liveFiles();
      f.dataFiles += live.filter((x) => x.file.content === 0).length;
      f.deleteFiles += live.filter((x) => x.file.content !== 0).length;
      if (t === 'code_nodes') f.rows = Number(live.filter((x) => x.file.content === 0).reduce((s, x) => s + x.file.recordCount, 0n));
    }
    // as a server and a question's CLI process read: immutable files parsed once (lake/io/read-cache.ts)
    enableReadCache(log.lake.io);
    const fm: number[] = [];
    const cm: number[] = [];
    for (let i = 0; i < warm; i++) {
      let t0 = performance.now();
      await find(log, 'new');
      fm.push(performance.now() - t0);
      t0 = performance.now();
      await callers(log, 'memchr::memchr');
      cm.push(performance.now() - t0);
    }
    f.findMs = median(fm);
    f.callersMs = median(cm);
  } finally {
    log.close();
    delete process.env.MIMIR_STATE_DELETES;
  }
  return f;
}

const out = new Map<Way, Figures>();
for (const w of WAYS) out.set(w, await measure(w));
const sum = (xs: number[]): number => xs.reduce((s, x) => s + x, 0);
const row = (label: string, get: (f: Figures) => string): string => `${label.padEnd(34)}${WAYS.map((w) => get(out.get(w)!).padStart(16)).join('')}`;
console.log(`state deletes: ${runs} runs of ${REPOS.length} repos (edits between), universe of ${UNIVERSE.length} crates; load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(row('', (f) => WAYS[[...out.values()].indexOf(f)]!));
console.log(row('write CPU per edited run (ms, mean)', (f) => (sum(f.cpuMs) / f.cpuMs.length).toFixed(0)));
console.log(row('state bytes per edited run (KB)', (f) => (sum(f.stateBytes) / f.stateBytes.length / 1024).toFixed(1)));
console.log(row('live data files (state tables)', (f) => String(f.dataFiles)));
console.log(row('live delete files (state tables)', (f) => String(f.deleteFiles)));
console.log(row('find "new" (ms, median)', (f) => f.findMs.toFixed(1)));
console.log(row('callers memchr::memchr (ms, median)', (f) => f.callersMs.toFixed(1)));
console.log(row('code_nodes rows (data files)', (f) => String(f.rows)));
