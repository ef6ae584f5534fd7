// A `mimir serve` child process for benchmarks (bench:serve, and bench:query's
// server part): started on a free loopback port over a lake, with its URL,
// its CPU time and RSS read from /proc, and a SIGTERM stop. Runs bin/mimir.js,
// so the compiled server when dist/ is fresh (a note says when it is not).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Resident memory now and at its peak (VmHWM), MiB. */
  rss: () => { rssMb: number; peakMb: number };
  /** The server process's CPU time so far (user + system), ms. */
  cpuMs: () => number;
  stop: () => Promise<void>;
}

/**
 * Start `mimir serve --lake LAKE --port 0 --json ARGS` and wait until it
 * listens; `taskset` (a path) and `cpus` (a list such as "0") pin it to those
 * cores (taskset execs node, so the pid is the server's).
 */
export async function startServeProcess(lakeDir: string, args: string[] = [], pin?: { taskset: string; cpus: string }): Promise<ServeProcess> {
  const argv = [path.join(root, 'bin', 'mimir.js'), 'serve', '--lake', lakeDir, '--port', '0', '--json', ...args];
  const [cmd, cmdArgs] = pin ? [pin.taskset, ['-c', pin.cpus, process.execPath, ...argv]] : [process.execPath, argv];
  const child = spawn(cmd, cmdArgs, {
    env: { ...process.env, MIMIR_DEBUG: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":\s*"([^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('close', (code) => reject(new Error(`mimir serve exited ${code}: ${err}`)));
  });
  if (/running the TypeScript sources/.test(err)) console.log(`note: ${err.trim()} — run 'npm run build' for figures of the compiled server`);
  const status = (): string => readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const mb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status())?.[1] ?? NaN) / 1024;
  return {
    child,
    url,
    rss: () => ({ rssMb: mb('VmRSS'), peakMb: mb('VmHWM') }),
    cpuMs: () => {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
