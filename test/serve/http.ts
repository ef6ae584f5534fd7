// A plain HTTP client for the server tests (node:http, so the request target
// is sent exactly as written: no normalisation of `..` or percent-escapes).
import * as http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';

/** A `mimir serve` process: its URL once it listens, and its exit code. */
export interface Serving {
  child: ChildProcess;
  url: string;
  exit: Promise<number | null>;
}

/** Start `mimir serve --port 0 ARGS` as a process (with `env` over this one's) and wait for its URL line. */
export function serveProcess(args: string[], env: Record<string, string>): Promise<Serving> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), 'serve', '--port', '0', ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    const exit = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+) /.exec(out);
      if (m) resolve({ child, url: m[1]!, exit });
    });
    void exit.then((code) => reject(new Error(`mimir serve exited ${code} before listening: ${err}`)));
  });
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export function request(base: string, target: string, opts: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Reply> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}
