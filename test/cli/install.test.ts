// Installable like a real CLI: `npm pack` makes a tarball holding the built
// dist/ (the package's `prepack` builds it; here the suite's own fresh build
// is packed with --ignore-scripts, so no test rewrites dist/ under the
// others), `npm install -g` of it into a temporary prefix gives a `mimir` that
// answers as the checkout does, through the compiled bundle.
//
// The install runs with --ignore-scripts and the checkout's own compiled
// better-sqlite3 binding copied in: better-sqlite3's install script compiles
// SQLite from source here (no prebuilt binaries can be fetched), 2-6 minutes
// on 2 cores — the same binary for the same Node, and npm's business, not
// the package's. Everything else is the real npm, offline from its cache.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from './run-cli.ts';

const work = scratch('mimir-install-');
after(work.cleanup);

const npm = (args: string[], cwd: string): ReturnType<typeof spawnSync> =>
  spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });

test('install: npm pack holds dist/ and bin/, npm install -g of the tarball gives a mimir that runs the compiled bundle and answers as the checkout does', { timeout: 900_000 }, async () => {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string; scripts: Record<string, string>; bin: Record<string, string> };
  assert.equal(pkg.name, 'mimir-codegraph', 'a package name of our own (npm\'s "mimir" is an unrelated package)');
  assert.match(pkg.scripts['prepack'] ?? '', /npm run build/, 'npm pack builds dist/ first');
  assert.equal(pkg.bin['mimir'], 'bin/mimir.js');
  assert.ok(existsSync(path.join(repoRoot, 'dist', 'BUILD')), 'the suite built dist/ (npm test runs the build first)');

  const packDir = path.join(work.dir, 'pack');
  mkdirSync(packDir);
  const packed = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], repoRoot);
  assert.equal(packed.status, 0, String(packed.stderr));
  const files = (JSON.parse(String(packed.stdout)) as { filename: string; files: { path: string }[] }[])[0]!;
  const paths = new Set(files.files.map((f) => f.path));
  for (const must of ['bin/mimir.js', 'dist/BUILD', 'dist/cli.bundle.cjs', 'dist/cli/main.js', 'dist/ingest/worker.js', 'package.json', 'README.md']) assert.ok(paths.has(must), `the tarball holds ${must}`);
  for (const p of paths) assert.ok(!p.startsWith('src/') && !p.startsWith('test/') && !p.startsWith('dist/.code-cache'), `the tarball leaves ${p} out`);

  const prefix = path.join(work.dir, 'prefix');
  const inst = npm(['install', '-g', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', path.join(packDir, files.filename)], work.dir);
  assert.equal(inst.status, 0, String(inst.stderr));
  const installed = path.join(prefix, 'lib', 'node_modules', pkg.name);
  // the native binding better-sqlite3's install script would have compiled (see the module comment)
  cpSync(path.join(repoRoot, 'node_modules', 'better-sqlite3', 'build'), path.join(installed, 'node_modules', 'better-sqlite3', 'build'), { recursive: true });
  assert.ok(!existsSync(path.join(installed, 'src')), 'no TypeScript sources installed: nothing to fall back to');
  const mimir = path.join(prefix, 'bin', 'mimir');
  assert.ok(readdirSync(path.join(prefix, 'bin')).includes('mimir'));

  const version = spawnSync(mimir, ['--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), pkg.version);

  // the demo: the sample workspace ingested, then a question asked of it by both CLIs
  const lake = path.join(work.dir, 'lake');
  const ws = path.join(work.dir, 'workspace');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const ing = spawnSync(mimir, ['ingest', ws, '--repo', 'sample', '--with-deps'], { encoding: 'utf8', env: { ...process.env, MIMIR_LAKE: lake } });
  assert.equal(ing.status, 0, ing.stderr);
  const asked = spawnSync(mimir, ['callers', 'fnvish::hash_str'], { encoding: 'utf8', env: { ...process.env, MIMIR_LAKE: lake, MIMIR_DEBUG: '1' } });
  assert.equal(asked.status, 0, asked.stderr);
  assert.match(asked.stderr, /^mimir: ran the CLI bundle/m, 'the installed CLI runs the compiled bundle');
  assert.match(asked.stdout, /tally::Tally::add/);
  const checkout = await runCli(['callers', 'fnvish::hash_str'], { lake });
  assert.equal(asked.stdout, checkout.stdout, 'the same answer as the checkout\'s CLI');
});
