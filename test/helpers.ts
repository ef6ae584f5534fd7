// Shared test helpers: where the shared fixtures live, and scratch folders.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * `shared/fixtures/iceberg` beside the checkout (or beside a folder holding it,
 * for a worktree under `wt/`), `$MIMIR_ICEBERG_FIXTURES` first; undefined when absent.
 */
export const icebergFixtures: string | undefined = (() => {
  const env = process.env.MIMIR_ICEBERG_FIXTURES;
  if (env) return existsSync(env) ? path.resolve(env) : undefined;
  for (let dir = path.dirname(repoRoot); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', 'fixtures', 'iceberg');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
})();

/** The `skip` option for tests that need the shared fixtures. */
export const needsFixtures: string | false = icebergFixtures
  ? false
  : 'skipped: ../shared/fixtures/iceberg is absent (the shared folder beside the checkout)';

/** A fresh scratch folder, removed when `cleanup` runs (call it in `after`). */
export function scratch(prefix = 'mimir-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What a child process did. */
export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run a TypeScript script of the repo in a child node process (tsx loader), collecting its output. */
export function runTsx(args: string[], opts: { env?: Record<string, string>; node?: string[] } = {}): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...(opts.node ?? []), '--import', 'tsx', ...args], { cwd: repoRoot, env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
