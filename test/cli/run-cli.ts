// Runs the real `mimir` CLI as a child process (node bin/mimir.js) from the
// repository root (or `cwd`) and collects its exit code, stdout and stderr.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';

export interface CliResult {
  code: number | null;
  /** The signal that ended the process (code null), for failure messages. */
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], opts: { lake?: string; input?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
    delete env.MIMIR_DEBUG;
    if (opts.lake) env.MIMIR_LAKE = opts.lake;
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), ...args], { cwd: opts.cwd ?? repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** stdout JSON Lines as strings (exact text of each row). */
export const jsonLines = (stdout: string): string[] => stdout.split('\n').filter((l) => l.trim() !== '');
