#!/usr/bin/env node
// The `mimir` command. Runs the compiled CLI in dist/ (built by `npm run
// build`, which `npm ci` and `npm install` run through `prepare`): no
// TypeScript compiler at start. dist/ is used only while it is fresh: its
// stamp (dist/BUILD, holding the time the build started) exists and no file under
// src/ is newer (a stat of each, about 2 ms). Otherwise — a checkout edited or
// pulled since the last build, or never built — the TypeScript sources run
// through tsx, for development only: correct but slower to start (a note says
// so on a terminal, or always with MIMIR_DEBUG=1).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);

/** Why dist/ cannot be used (undefined when it is fresh). */
function staleReason() {
  let built;
  try {
    built = JSON.parse(readFileSync(new URL('dist/BUILD', root), 'utf8')).startedMs;
  } catch {
    return 'no build (dist/BUILD is missing or unreadable)';
  }
  if (typeof built !== 'number') return 'dist/BUILD has no start time';
  let newer;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (newer) return;
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (statSync(p).mtimeMs > built) newer = p;
    }
  };
  const src = fileURLToPath(new URL('src', root));
  if (!existsSync(src)) return undefined; // no sources beside the build: nothing it could be stale against
  try {
    walk(src);
  } catch (e) {
    return `src/ could not be checked (${e.message})`;
  }
  return newer ? `${newer.slice(src.length - 3)} is newer than the build` : undefined;
}

const reason = staleReason();
if (reason === undefined) {
  await import('../dist/cli/main.js');
} else {
  if (process.stderr.isTTY || process.env.MIMIR_DEBUG === '1') {
    process.stderr.write(`mimir: running the TypeScript sources through tsx (${reason}; 'npm run build' makes start fast)\n`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
