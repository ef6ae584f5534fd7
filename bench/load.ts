// HTTP load generators for the serve benchmarks, loopback only (the target
// must be a loopback URL), bounded in time:
//
// - `load`: a small JS generator in this process: `clients` concurrent loops
//   on keep-alive connections, each taking the next request target of a fixed
//   mix (a shared cursor, so every target is asked in turn), until `seconds`
//   have passed. Every request's latency is recorded (client side: from the
//   request's start to its last byte). It shares this process's core with
//   whatever else the bench does, and on a 2-core box it competes with the
//   server for CPU and can set the pace: its figures are conservative.
// - `wrkLoad`: Debian's wrk (C, epoll; `apt-get install wrk`) when installed,
//   one thread and `clients` connections walking the same mix in turn (a Lua
//   request() with a cursor), optionally pinned to cores with taskset. wrk
//   keeps every latency in a histogram but its Lua API hands out only
//   percentiles, so a run returns 1000 quantiles (0.1 % .. 100 %), each
//   standing for a thousandth of the requests: runs merge (mergeLoads) to
//   within 0.1 % of rank. Returns undefined when wrk is not installed.
//
// Percentiles are over all samples of a run (or the merged runs). No crash
// story: a generator holds nothing but its samples.
import * as http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export type Generator = 'wrk' | 'js';

export interface LoadResult {
  generator: Generator;
  requests: number;
  seconds: number;
  perSecond: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses by HTTP status (connection errors under -1; wrk: 200 = 2xx/3xx, 500 = any other status). */
  statuses: Record<number, number>;
  /** Latencies (ms, ascending) and the share of the requests each stands for: all of them (js), or 1000 quantiles (wrk). */
  samples: { values: number[]; weight: number };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function assertLoopback(url: string): URL {
  const base = new URL(url);
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(base.hostname)) throw new Error(`load: expected a loopback URL, found ${url}`);
  return base;
}

/** `requests`, when given, ends the run after that many requests (or `seconds`, whichever comes first). */
export async function load(opts: { url: string; targets: string[]; clients: number; seconds: number; requests?: number }): Promise<LoadResult> {
  const base = assertLoopback(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.clients });
  const lat: number[] = [];
  const statuses: Record<number, number> = {};
  let cursor = 0;
  const t0 = performance.now();
  const end = t0 + opts.seconds * 1000;
  const one = (target: string): Promise<number> =>
    new Promise((resolve) => {
      const req = http.request({ agent, host: base.hostname.replace(/^\[|\]$/g, ''), port: base.port, path: target, method: 'GET' }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(-1));
      });
      req.on('error', () => resolve(-1));
      req.end();
    });
  const client = async (): Promise<void> => {
    while (performance.now() < end && (opts.requests === undefined || cursor < opts.requests)) {
      const target = opts.targets[cursor++ % opts.targets.length]!;
      const s = performance.now();
      const status = await one(target);
      lat.push(performance.now() - s);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: opts.clients }, client));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return summarize('js', lat.length, seconds, statuses, { values: lat, weight: 1 });
}

function summarize(generator: Generator, requests: number, seconds: number, statuses: Record<number, number>, samples: LoadResult['samples'][]): LoadResult;
function summarize(generator: Generator, requests: number, seconds: number, statuses: Record<number, number>, samples: LoadResult['samples']): LoadResult;
function summarize(generator: Generator, requests: number, seconds: number, statuses: Record<number, number>, s: LoadResult['samples'] | LoadResult['samples'][]): LoadResult {
  const sets = Array.isArray(s) ? s : [s];
  // weighted percentile over the pooled samples: the value below which p % of the requests' weight lies
  const pairs: [number, number][] = [];
  for (const set of sets) for (const v of set.values) pairs.push([v, set.weight]);
  pairs.sort((a, b) => a[0] - b[0]);
  const total = pairs.reduce((n, [, w]) => n + w, 0);
  const at = (p: number): number => {
    if (pairs.length === 0) return NaN;
    const want = (p / 100) * total;
    let acc = 0;
    for (const [v, w] of pairs) {
      acc += w;
      if (acc >= want - 1e-9) return v;
    }
    return pairs[pairs.length - 1]![0];
  };
  const samples = sets.length === 1 ? sets[0]! : { values: pairs.map(([v]) => v), weight: NaN };
  return { generator, requests, seconds, perSecond: requests / seconds, p50: at(50), p90: at(90), p99: at(99), max: pairs.length ? pairs[pairs.length - 1]![0] : NaN, statuses, samples };
}

/** Several runs of one generator as one: requests and seconds summed, percentiles over the pooled samples (each weighted by its run's share). */
export function mergeLoads(rs: LoadResult[]): LoadResult {
  if (rs.length === 0) throw new Error('mergeLoads: expected at least one run, found none');
  const statuses: Record<number, number> = {};
  for (const r of rs) for (const [k, v] of Object.entries(r.statuses)) statuses[Number(k)] = (statuses[Number(k)] ?? 0) + v;
  const sets = rs.map((r) => (Number.isNaN(r.samples.weight) ? { values: r.samples.values, weight: r.requests / r.samples.values.length } : r.samples));
  return summarize(rs[0]!.generator, rs.reduce((n, r) => n + r.requests, 0), rs.reduce((n, r) => n + r.seconds, 0), statuses, sets);
}

let wrkPath: string | null | undefined;
/** The wrk binary on PATH, or null. */
export function findWrk(): string | null {
  if (wrkPath !== undefined) return wrkPath;
  const r = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  wrkPath = r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  return wrkPath;
}

let tasksetPath: string | null | undefined;
/** taskset on PATH (util-linux), or null. */
export function findTaskset(): string | null {
  if (tasksetPath !== undefined) return tasksetPath;
  const r = spawnSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' });
  tasksetPath = r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  return tasksetPath;
}

const luaString = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** The Lua script: requests walk the mix in turn; done() prints one line a parser finds. */
function wrkScript(targets: string[]): string {
  return `-- bench/load.ts: walk the mix in turn; print the totals and 1000 quantiles (µs)
local targets = { ${targets.map(luaString).join(', ')} }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", targets[((i - 1) % #targets) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  local q = {}
  for k = 1, 1000 do q[k] = latency:percentile(k / 10) end
  io.write(string.format("MIMIR_WRK %d %d %d %d %d %d %d %d ", summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, latency.max))
  io.write(table.concat(q, ","), "\\n")
end
`;
}

/**
 * One wrk run: `clients` connections on one thread for `seconds` (whole
 * seconds, at least 1), pinned to `cpus` (a taskset list) when given and
 * taskset exists. Undefined when wrk is not installed.
 */
export async function wrkLoad(opts: { url: string; targets: string[]; clients: number; seconds: number; cpus?: string }): Promise<LoadResult | undefined> {
  const wrk = findWrk();
  if (!wrk) return undefined;
  assertLoopback(opts.url);
  const dir = mkdtempSync(path.join(tmpdir(), 'mimir-wrk-'));
  try {
    const script = path.join(dir, 'mix.lua');
    writeFileSync(script, wrkScript(opts.targets));
    const secs = Math.max(1, Math.round(opts.seconds));
    const argv = ['-t1', `-c${opts.clients}`, `-d${secs}s`, '--timeout', '30s', '-s', script, opts.url.replace(/\/$/, '') + '/'];
    const taskset = opts.cpus ? findTaskset() : null;
    const [cmd, args] = taskset && opts.cpus ? [taskset, ['-c', opts.cpus, wrk, ...argv]] : [wrk, argv];
    // asynchronous: the server may be a child of this process, and its pipes must keep flowing
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let so = '';
      let se = '';
      child.stdout.on('data', (d: Buffer) => (so += d.toString()));
      child.stderr.on('data', (d: Buffer) => (se += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(so) : reject(new Error(`wrk exited ${code}: ${se.trim() || so.trim()}`))));
    });
    const line = out.split('\n').find((l) => l.startsWith('MIMIR_WRK '));
    if (!line) throw new Error(`wrk: expected a MIMIR_WRK line from the Lua done(), found none in: ${out.slice(0, 500)}`);
    const [head, qs] = [line.split(' ').slice(1, 9).map(Number), line.split(' ')[9] ?? ''];
    const [requests, durationUs, connect, read, write, status, timeout] = head as [number, number, number, number, number, number, number, number];
    const values = qs
      .split(',')
      .filter((x) => x !== '')
      .map((x) => Number(x) / 1000)
      .sort((a, b) => a - b);
    const statuses: Record<number, number> = { 200: requests - status };
    if (status) statuses[500] = status;
    if (connect + read + write + timeout) statuses[-1] = connect + read + write + timeout;
    // the 1000 quantiles stand for a thousandth of the requests each; the max is wrk's own
    const r = summarize('wrk', requests, durationUs / 1e6, statuses, { values, weight: requests / Math.max(1, values.length) });
    return { ...r, max: Math.max(r.max, Number(head[7]) / 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
