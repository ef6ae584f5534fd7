// A small HTTP load generator for the serve benchmarks: `clients` concurrent
// loops on keep-alive connections, each taking the next request target of a
// fixed mix (a shared cursor, so every target is asked in turn), until
// `seconds` have passed. Every request's latency is recorded (client side:
// from the request's start to its last byte, so the figures include the
// client's own overhead and are conservative) and percentiles are exact over
// all samples. Loopback only: the target must be a loopback URL.
import * as http from 'node:http';

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses by HTTP status (connection errors under 0). */
  statuses: Record<number, number>;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** `requests`, when given, ends the run after that many requests (or `seconds`, whichever comes first). */
export async function load(opts: { url: string; targets: string[]; clients: number; seconds: number; requests?: number }): Promise<LoadResult> {
  const base = new URL(opts.url);
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(base.hostname)) throw new Error(`load: expected a loopback URL, found ${opts.url}`);
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
  return { requests: lat.length, seconds, perSecond: lat.length / seconds, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), max: lat[lat.length - 1] ?? NaN, statuses };
}
