// A throwaway S3-compatible server for tests: s3rver in a child process (so
// a test can kill it), on a free loopback port, its objects in a temp folder,
// the bucket `mimir-test` made at start; `env` is what a client (this process
// or a `mimir` child) needs to reach it; `stop()` kills it and removes the
// folder. Where it cannot start, `startS3` returns the reason: under CI=true
// the test fails with it, elsewhere it is skipped loudly (`needS3`).
//
// `faultProxy` puts a fault-injecting HTTP proxy in front of it: a share of
// requests is answered 500 or 503, held without an answer (past the client's
// timeout), or has its connection dropped, chosen by a seeded generator (the
// same seed and the same request order give the same faults). It never fails
// more than `maxRun` requests in a row, so a client that tries `maxRun + 1`
// times always gets through. It counts requests and the body bytes served.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer as createNetServer } from 'node:net';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const BUCKET = 'mimir-test';

export interface S3Server {
  port: number;
  endpoint: string;
  /** Environment for an SDK client talking to this server (merge into process.env or a child's env). */
  env: Record<string, string>;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Whether something answers HTTP on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET', timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

export function clientEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    // no shared profile of the machine's user may leak into a test
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
  };
}

/** Start a server, or say why not (waits up to 60 s for it to answer: a loaded machine is slow to start node). */
export async function startS3(): Promise<S3Server | { reason: string }> {
  let bin: string;
  try {
    bin = path.join(path.dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin', 's3rver.js');
  } catch (e) {
    return { reason: `the dev dependency s3rver is not installed (${(e as Error).message})` };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'mimir-s3-'));
  const port = await freePort();
  // s3rver's ListObjectsV2 continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent', '--configure-bucket', BUCKET], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  let exited: string | undefined;
  child.on('exit', (code, sig) => (exited = `exited with ${code ?? sig}`));
  const until = Date.now() + 60_000;
  while (!(await answers(port))) {
    if (exited !== undefined || Date.now() > until) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      return { reason: `s3rver did not answer on 127.0.0.1:${port} (${exited ?? 'no answer within 60 s'}): ${err.trim().slice(-500)}` };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    port,
    endpoint,
    env: clientEnv(endpoint),
    stop(): void {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The server for a test file, or undefined after saying loudly why the S3
 * cases are skipped; under CI=true a server that cannot start is an error.
 */
export async function needS3(): Promise<S3Server | undefined> {
  const s = await startS3();
  if ('port' in s) return s;
  if (process.env.CI === 'true') throw new Error(`an S3 server (s3rver) is needed by this test (CI=true) and could not be started: ${s.reason}`);
  console.error(`\n*** S3 cases SKIPPED: ${s.reason} ***\n`);
  return undefined;
}

export type Fault = '500' | '503' | 'hold' | 'drop';

export interface FaultProxy {
  endpoint: string;
  /** Requests seen, and those answered with a fault. */
  requests: number;
  faults: Record<Fault, number>;
  /** Body bytes of GET answers passed through (what clients downloaded). */
  bytesServed: number;
  /** GETs passed through: the object's path and its Range header ('' for a whole-object GET). */
  gets: { path: string; range: string }[];
  /** Share of requests to fail from now on (0 passes everything). */
  rate: number;
  close(): Promise<void>;
}

/** mulberry32: a small seeded generator, so a seed replays the same faults. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A proxy to `target` (host:port on 127.0.0.1) failing a share `rate` of requests; see the header. */
export async function faultProxy(targetPort: number, opts: { rate: number; seed: number; maxRun?: number; kinds?: Fault[] }): Promise<FaultProxy> {
  const rand = seeded(opts.seed);
  const kinds = opts.kinds ?? ['500', '503', 'hold', 'drop'];
  const maxRun = opts.maxRun ?? 3;
  let run = 0;
  const held = new Set<ServerResponse>();
  const state = {
    endpoint: '',
    requests: 0,
    faults: { '500': 0, '503': 0, hold: 0, drop: 0 } as Record<Fault, number>,
    bytesServed: 0,
    gets: [] as { path: string; range: string }[],
    rate: opts.rate,
    close: async (): Promise<void> => undefined,
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    state.requests++;
    const r = rand();
    const k = rand();
    const fault = r < state.rate && run < maxRun ? kinds[Math.floor(k * kinds.length)]! : undefined;
    run = fault ? run + 1 : 0;
    if (fault) {
      state.faults[fault]++;
      // the body is read (and dropped) first: a client must not see its upload refused half-way
      req.resume();
      req.on('end', () => {
        if (fault === 'drop') res.socket?.destroy();
        else if (fault === 'hold') held.add(res);
        else {
          const code = fault === '500' ? 'InternalError' : 'SlowDown';
          res.writeHead(Number(fault), { 'content-type': 'application/xml' });
          res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by the test proxy</Message></Error>`);
        }
      });
      return;
    }
    if (req.method === 'GET') state.gets.push({ path: (req.url ?? '').split('?')[0]!, range: String(req.headers.range ?? '') });
    const up = request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.on('data', (d: Buffer) => {
        if (req.method === 'GET') state.bytesServed += d.length;
      });
      ures.pipe(res);
    });
    up.on('error', () => res.socket?.destroy());
    req.pipe(up);
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve(typeof a === 'object' && a !== null ? a.port : 0);
    });
  });
  state.endpoint = `http://127.0.0.1:${port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const r of held) r.socket?.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
