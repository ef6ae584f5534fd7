// `npm run test:loaded [-- --burners N] [-- --runs K] [-- FILE …]`: the
// concurrency, crash, serve and state tests run while N CPU-bound burner
// processes (default 4) compete for the cores, K times in a row (default 1) —
// the machine a race shows on. Not part of `npm test`; run it before a stop
// that touches those layers and quote its summary.
//
// Prints, per run: pass/fail counts and wall time, the load average seen, and
// the slowest tests beside the explicit time limit of their file (the largest
// `timeout:` written in it; none = Node's default, no limit), so every limit
// can be held against its worst measured case. Exit 1 when any run failed.
// The burners are killed however the run ends (they also stop by themselves
// after --burn-max seconds, default 3 h, should this process be killed).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The tests a loaded machine is hardest on: writers racing, processes killed, a server under requests, the state tables. */
const DEFAULT_FILES = (): string[] => {
  const pick = /(concurren|crash|state|steady|serve|server|ring-freeze|run\.test|runs\.test|catalog-reader|inflight|pinned|disk-full)/;
  const out: string[] = [];
  for (const dir of ['test/ingest', 'test/lake', 'test/log', 'test/query', 'test/serve', 'test/cli']) {
    for (const f of readdirSync(path.join(root, dir))) {
      if (!f.endsWith('.test.ts')) continue;
      if (dir === 'test/serve' || pick.test(f)) out.push(`${dir}/${f}`);
    }
  }
  return out.sort();
};

/** Every test file of the suite (what `npm test` runs). */
const ALL_FILES = (): string[] => {
  const out: string[] = [];
  for (const dir of readdirSync(path.join(root, 'test'), { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(path.join(root, 'test', dir.name))) if (f.endsWith('.test.ts')) out.push(`test/${dir.name}/${f}`);
  }
  return out.sort();
};

interface Args {
  burners: number;
  runs: number;
  burnMaxS: number;
  files: string[];
  /** Write every test's worst time beside its limit here (markdown). */
  table?: string;
  allFiles: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { burners: 4, runs: 1, burnMaxS: 3 * 3600, files: [], allFiles: false };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    const num = (name: string): number => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error(`${name} takes a whole number, found ${argv[i] ?? 'nothing'}`);
      return v;
    };
    if (x === '--burners') a.burners = num('--burners');
    else if (x === '--runs') a.runs = Math.max(1, num('--runs'));
    else if (x === '--burn-max') a.burnMaxS = num('--burn-max');
    else if (x === '--table') a.table = argv[++i] ?? '';
    else if (x === '--all-files') a.allFiles = true;
    else if (x === '--help' || x === '-h') {
      console.log('usage: npm run test:loaded [-- --burners N (default 4)] [--runs K (default 1)] [--burn-max SECONDS] [--all-files (the whole suite)] [--table FILE (every test: worst time, load, limit)] [FILE …]');
      process.exit(0);
    } else if (x.startsWith('-')) throw new Error(`unknown option ${x} (see --help)`);
    else a.files.push(x);
  }
  if (a.table === '') throw new Error('--table takes a file name');
  if (a.files.length === 0) a.files = a.allFiles ? ALL_FILES() : DEFAULT_FILES();
  return a;
}

/** A CPU-bound process that spins until killed, or until `maxS` seconds have passed. */
function burner(maxS: number): ChildProcess {
  const code = `const end = Date.now() + ${maxS * 1000}; let x = 0; while (Date.now() < end) { for (let i = 0; i < 1e6; i++) x = (x * 31 + i) | 0; }`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

/** The largest explicit `timeout:` in a test file (ms), or undefined. */
function fileLimit(file: string): number | undefined {
  let best: number | undefined;
  for (const m of readFileSync(path.join(root, file), 'utf8').matchAll(/timeout:\s*([0-9_]+(?:\s*\*\s*[0-9_]+)*)/g)) {
    const v = m[1]!.split('*').reduce((p, s) => p * Number(s.trim().replace(/_/g, '')), 1);
    if (Number.isFinite(v)) best = Math.max(best ?? 0, v);
  }
  return best;
}

interface Result {
  file: string;
  name: string;
  ms: number;
  ok: boolean;
  skipped: boolean;
}

async function runOnce(files: string[], k: number): Promise<{ code: number; results: Result[]; wallMs: number; loads: number[] }> {
  const out = path.join(tmpdir(), `mimir-test-loaded-${process.pid}-${k}.jsonl`);
  writeFileSync(out, '');
  const reporter = path.join(root, 'scripts', 'test-loaded-reporter.mjs');
  const t0 = Date.now();
  const loads: number[] = [];
  const sampler = setInterval(() => loads.push(loadavg()[0]!), 5000);
  const code = await new Promise<number>((resolve) => {
    const p = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${reporter}`, `--test-reporter-destination=${out}`, ...files],
      { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    p.on('close', (c, s) => resolve(c ?? (s ? 1 : 0)));
  });
  clearInterval(sampler);
  const results = readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Result);
  return { code, results, wallMs: Date.now() - t0, loads };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  console.log(`test:loaded: ${args.files.length} files, ${args.burners} burners, ${args.runs} run(s)`);
  const burners = Array.from({ length: args.burners }, () => burner(args.burnMaxS));
  const stop = (): void => {
    for (const b of burners) b.kill('SIGKILL');
  };
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));
  let failedRuns = 0;
  const worst = new Map<string, Result & { load: number }>();
  const summaries: string[] = [];
  try {
    for (let k = 1; k <= args.runs; k++) {
      const r = await runOnce(args.files, k);
      const pass = r.results.filter((x) => x.ok && !x.skipped).length;
      const skipped = r.results.filter((x) => x.skipped);
      const fail = r.results.filter((x) => !x.ok);
      if (r.code !== 0 || fail.length > 0) failedRuns++;
      for (const x of r.results) {
        const key = `${x.file}\u0000${x.name}`;
        const w = worst.get(key);
        if (!w || x.ms > w.ms) worst.set(key, { ...x, load: r.loads.length ? Math.max(...r.loads) : loadavg()[0]! });
      }
      const load = r.loads.length ? `load avg (1 min) ${Math.min(...r.loads).toFixed(1)}–${Math.max(...r.loads).toFixed(1)}` : 'load not sampled';
      summaries.push(`run ${k}: ${pass} passed, ${fail.length} failed, ${skipped.length} skipped, ${(r.wallMs / 60000).toFixed(1)} min, ${load}${fail.length ? ` — failed: ${fail.map((f) => `${f.file}: ${f.name}`).join('; ')}` : ''}`);
      console.log(`test:loaded: ${summaries[summaries.length - 1]}`);
    }
  } finally {
    stop();
  }
  console.log('\ntest:loaded: the slowest tests (worst of the runs) beside their file\'s explicit limit');
  const slow = [...worst.values()].sort((a, b) => b.ms - a.ms).slice(0, 20);
  for (const x of slow) {
    const limit = fileLimit(x.file);
    const ratio = limit ? ` (${((100 * x.ms) / limit).toFixed(0)}% of it)` : '';
    console.log(`  ${(x.ms / 1000).toFixed(1).padStart(7)} s  limit ${limit ? `${(limit / 1000).toFixed(0)} s` : 'none'}${ratio}  ${x.file}: ${x.name}`);
  }
  if (args.table) {
    const rows = [...worst.values()].sort((a, b) => a.file.localeCompare(b.file) || b.ms - a.ms);
    const lines = [
      `Every test's worst time over ${args.runs} run(s) with ${args.burners} burner(s), the highest 1-minute load average seen in that run, and its file's explicit limit (the largest \`timeout:\` in the file; "none": Node's default, no limit). "x load 16": the worst time scaled linearly from the load seen to load 16, as a share of the limit.`,
      '',
      '| file | test | worst s | load | limit s | % of limit | x load 16 |',
      '|---|---|---:|---:|---:|---:|---:|',
    ];
    for (const x of rows) {
      const limit = fileLimit(x.file);
      const at16 = (x.ms * Math.max(1, 16 / Math.max(1, x.load))) / (limit ?? Infinity);
      lines.push(`| ${x.file} | ${x.name.replace(/\|/g, '\\|')} | ${(x.ms / 1000).toFixed(1)} | ${x.load.toFixed(1)} | ${limit ? (limit / 1000).toFixed(0) : 'none'} | ${limit ? ((100 * x.ms) / limit).toFixed(0) : '-'} | ${limit ? (100 * at16).toFixed(0) + '%' : '-'} |`);
    }
    writeFileSync(args.table, `${lines.join('\n')}\n`);
    console.log(`test:loaded: every test's time beside its limit: ${args.table}`);
  }
  console.log(`\ntest:loaded: ${summaries.join('\n             ')}`);
  return failedRuns === 0 ? 0 : 1;
}

process.exitCode = await main();
