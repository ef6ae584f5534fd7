// The compiled CLI (what `npm ci` builds through `prepare`): built here into a
// scratch folder laid out like a checkout (package.json, node_modules, bin/,
// dist/ and no src/), so the test never touches the repo's own dist/ that
// other tests may be running. Pins: `--version` and `--help` load only the
// CLI's own small modules (no SQLite, wasm, Parquet, Avro, tree-sitter);
// ingest runs its worker threads from the compiled output; a query answers
// the same as the TypeScript sources; a question read from the lake runs the
// one-file bundle with a V8 code cache (written after the first answer, used
// after it, rebuilt when corrupt or rejected, falling back to dist/'s modules
// without a bundle); a question sent to a server loads no lake code either;
// bin/mimir.js runs dist/ only while the build is fresh and falls back to the
// sources otherwise.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { crc32 } from 'node:zlib';
import { repoRoot, runTsx, scratch, type ChildRun } from '../helpers.ts';
import { startServer } from '../../src/serve/server.ts';

const work = scratch('mimir-build-');
after(work.cleanup);
const pkg = path.join(work.dir, 'pkg');
const lake = path.join(work.dir, 'lake');
const ws = path.join(repoRoot, 'test', 'extract', 'fixtures', 'ws');

function run(args: string[], env: Record<string, string> = {}): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: work.dir, env: { ...process.env, MIMIR_LAKE: lake, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

before(async () => {
  mkdirSync(path.join(pkg, 'bin'), { recursive: true });
  const b = await runTsx([path.join(repoRoot, 'scripts', 'build.ts'), '--out', path.join(pkg, 'dist')]);
  assert.equal(b.code, 0, `build failed: ${b.stdout}${b.stderr}`);
  // e.g. a top-level await somewhere in src/, which the one-file bundle (CommonJS) cannot hold
  assert.doesNotMatch(b.stderr, /bundle was not made/, b.stderr);
  copyFileSync(path.join(repoRoot, 'package.json'), path.join(pkg, 'package.json'));
  copyFileSync(path.join(repoRoot, 'bin', 'mimir.js'), path.join(pkg, 'bin', 'mimir.js'));
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(pkg, 'node_modules'));
});

/** Every module URL the process resolved, through a module-resolution hook that appends to a file. */
async function loadedModules(args: string[]): Promise<{ run: ChildRun; urls: string[] }> {
  const trace = path.join(work.dir, `trace-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(trace, '');
  const hooks = path.join(work.dir, 'trace-hooks.mjs');
  writeFileSync(
    hooks,
    [
      "import { appendFileSync } from 'node:fs';",
      'let file;',
      'export function initialize(data) { file = data.file; }',
      'export async function resolve(spec, ctx, next) { const r = await next(spec, ctx); appendFileSync(file, r.url + "\\n"); return r; }',
    ].join('\n'),
  );
  const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { file: ${JSON.stringify(trace)} } });`;
  const r = await run(['--import', `data:text/javascript,${encodeURIComponent(register)}`, path.join(pkg, 'bin', 'mimir.js'), ...args]);
  const urls = readFileSync(trace, 'utf8').split('\n').filter((l) => l !== '');
  return { run: r, urls };
}

/** The modules of the build (dist/…) and of packages (node_modules/…) among the URLs. */
function ours(urls: string[]): { dist: string[]; packages: string[] } {
  const dist = new Set<string>();
  const packages = new Set<string>();
  for (const u of urls) {
    const m = /\/dist\/(.+\.js)$/.exec(u);
    if (m && u.includes(pkg)) dist.add(m[1]!);
    const n = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    if (n) packages.add(n[1]!);
  }
  return { dist: [...dist].sort(), packages: [...packages].sort() };
}

// query/suggest.js: did-you-mean for mistyped commands and options (pure, no imports)
const SMALL = ['cli/args.js', 'cli/command.js', 'cli/commands.js', 'cli/main.js', 'cli/output.js', 'lake/spec/json.js', 'query/suggest.js'];

test('build: mimir --version and --help load only the CLI\'s own small modules (no SQLite, wasm, Parquet)', async () => {
  const version = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version as string;
  const v = await loadedModules(['--version']);
  assert.equal(v.run.code, 0, v.run.stderr);
  assert.equal(v.run.stdout, `${version}\n`);
  assert.deepEqual(ours(v.urls), { dist: SMALL, packages: [] });
  const h = await loadedModules(['--help']);
  assert.equal(h.run.code, 0, h.run.stderr);
  assert.match(h.run.stdout, /^mimir — /);
  assert.deepEqual(ours(h.urls), { dist: SMALL, packages: [] });
});

test('build: the compiled CLI ingests with worker threads and answers as the TypeScript sources do', async () => {
  const bin = path.join(pkg, 'bin', 'mimir.js');
  const ing = await loadedModules(['ingest', ws, '--repo', 'demo', '--with-deps']);
  assert.equal(ing.run.code, 0, ing.run.stderr);
  assert.match(ing.run.stdout, /^ingest demo run \S+: 2 crates, .* 0 problems/m);
  const { dist } = ours(ing.urls);
  assert.ok(dist.includes('ingest/worker.js'), `the worker thread ran dist/ingest/worker.js (loaded: ${dist.join(', ')})`);
  assert.ok(!ing.urls.some((u) => u.includes('/tsx/')), 'tsx is not loaded by the compiled CLI');
  const compiled = await run([bin, 'callers', 'minidep::helper']);
  const sources = await runTsx([path.join(repoRoot, 'src', 'cli', 'main.ts'), 'callers', 'minidep::helper'], { env: { MIMIR_LAKE: lake } });
  assert.equal(compiled.code, 0, compiled.stderr);
  assert.equal(compiled.stdout.split('\n').filter((l) => l !== '').length, 3);
  assert.equal(compiled.stdout, sources.stdout);
  assert.equal(compiled.stderr, sources.stderr);
});

test('build: a question read from the lake runs the one-file bundle, with a V8 code cache kept in dist/.code-cache', async () => {
  const bin = path.join(pkg, 'bin', 'mimir.js');
  const dist = path.join(pkg, 'dist');
  const cacheDir = path.join(dist, '.code-cache');
  const stamp = JSON.parse(readFileSync(path.join(dist, 'BUILD'), 'utf8')) as { bundle?: { file: string; sha256: string } };
  assert.equal(stamp.bundle?.file, 'cli.bundle.cjs', 'the build names its bundle in dist/BUILD');
  assert.ok(existsSync(path.join(dist, stamp.bundle.file)));
  const sources = await runTsx([path.join(repoRoot, 'src', 'cli', 'main.ts'), 'callers', 'minidep::helper'], { env: { MIMIR_LAKE: lake } });
  assert.equal(sources.code, 0, sources.stderr);
  const debug = { MIMIR_DEBUG: '1' };
  /** One question through bin/mimir.js: the same answer as the sources, and what the bundle's cache did. */
  const ask = async (env: Record<string, string> = debug): Promise<string> => {
    const r = await run([bin, 'callers', 'minidep::helper'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, sources.stdout);
    const line = r.stderr.split('\n').find((l) => l.startsWith('mimir: '));
    return line ?? '';
  };
  rmSync(cacheDir, { recursive: true, force: true });
  // no dist/ module is loaded: the bundle holds them
  const traced = await loadedModules(['callers', 'minidep::helper']);
  assert.equal(traced.run.code, 0, traced.run.stderr);
  assert.equal(traced.run.stdout, sources.stdout);
  assert.deepEqual(ours(traced.urls), { dist: [], packages: [] });
  const files = readdirSync(cacheDir);
  assert.equal(files.length, 1, `one cache file after the first answer (found ${files.join(', ')})`);
  const key = files[0]!;
  const cacheFile = path.join(cacheDir, key);
  assert.match(await ask(), new RegExp(`^mimir: ran the CLI bundle \\(code cache ${key}: used\\)$`));
  // corrupt (its checksum no longer matches): not given to V8, written anew; a file of another key is removed then
  const stranger = path.join(cacheDir, '0'.repeat(32));
  writeFileSync(stranger, 'a cache of another node or bundle');
  const good = readFileSync(cacheFile);
  const bad = Buffer.from(good);
  bad[bad.length - 10] ^= 0xff;
  writeFileSync(cacheFile, bad);
  assert.match(await ask(), /code cache \w+: corrupt, written\)$/);
  assert.deepEqual(readdirSync(cacheDir), [key]);
  assert.match(await ask(), /code cache \w+: used\)$/);
  // intact but not V8's (another V8 would reject its own data so too): rejected, written anew
  const foreign = Buffer.from('not a V8 code cache '.repeat(50));
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc32(foreign) >>> 0);
  writeFileSync(cacheFile, Buffer.concat([sum, foreign]));
  assert.match(await ask(), /code cache \w+: rejected, written\)$/);
  assert.match(await ask(), /code cache \w+: used\)$/);
  // MIMIR_CODE_CACHE=0: the bundle without a cache, nothing written
  const before = readFileSync(cacheFile);
  assert.match(await ask({ ...debug, MIMIR_CODE_CACHE: '0' }), /code cache \w+: off\)$/);
  assert.deepEqual(readFileSync(cacheFile), before);
  // no bundle file, or a stamp naming none: dist/'s modules answer the same
  const bundleFile = path.join(dist, stamp.bundle.file);
  renameSync(bundleFile, `${bundleFile}.away`);
  try {
    assert.match(await ask(), /^mimir: the CLI bundle cannot be read .*; running dist\/'s modules$/);
  } finally {
    renameSync(`${bundleFile}.away`, bundleFile);
  }
  const stampText = readFileSync(path.join(dist, 'BUILD'), 'utf8');
  const { bundle: _bundle, ...rest } = JSON.parse(stampText) as Record<string, unknown>;
  writeFileSync(path.join(dist, 'BUILD'), JSON.stringify(rest));
  try {
    assert.match(await ask(), /^mimir: dist\/BUILD names no CLI bundle; running dist\/'s modules$/);
  } finally {
    writeFileSync(path.join(dist, 'BUILD'), stampText);
  }
});

test('build: a question sent to a server loads the client and the question\'s printers only (no lake code)', async () => {
  const server = await startServer({ lake: lake, port: 0 });
  try {
    const q = await loadedModules(['callers', 'minidep::helper', '--server', server.url]);
    assert.equal(q.run.code, 0, q.run.stderr);
    const local = await run([path.join(pkg, 'bin', 'mimir.js'), 'callers', 'minidep::helper']);
    assert.equal(q.run.stdout, local.stdout);
    assert.deepEqual(ours(q.urls), {
      dist: [...SMALL, 'cli/query/callers.js', 'cli/query/common.js', 'cli/query/picture.js', 'cli/query/refs-lines.js', 'serve/client.js', 'serve/questions.js'].sort(),
      packages: [],
    });
  } finally {
    await server.close();
  }
});

/** A checkout of its own in work.dir/`name`: bin/mimir.js and package.json copied, src/ and node_modules the repo's, dist/ the test build's (links). */
function checkout(name: string): string {
  const co = path.join(work.dir, name);
  mkdirSync(path.join(co, 'bin'), { recursive: true });
  copyFileSync(path.join(repoRoot, 'bin', 'mimir.js'), path.join(co, 'bin', 'mimir.js'));
  copyFileSync(path.join(repoRoot, 'package.json'), path.join(co, 'package.json'));
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(co, 'node_modules'));
  symlinkSync(path.join(repoRoot, 'src'), path.join(co, 'src'));
  symlinkSync(path.join(pkg, 'dist'), path.join(co, 'dist'));
  return co;
}

test('build: bin/mimir.js runs the sources when a file under src/ is newer than the build, dist/ otherwise', async () => {
  // a checkout whose src/ is the repo's (a symlink) and whose build stamp is moved around
  const co = checkout('checkout');
  const stamp = path.join(pkg, 'dist', 'BUILD');
  const saved = readFileSync(stamp, 'utf8');
  const debug = { MIMIR_DEBUG: '1' };
  try {
    writeFileSync(stamp, JSON.stringify({ startedMs: Date.now() + 3_600_000 }));
    const fresh = await run([path.join(co, 'bin', 'mimir.js'), '--version'], debug);
    assert.equal(fresh.code, 0);
    assert.equal(fresh.stderr, '', 'a fresh build runs quietly');
    writeFileSync(stamp, JSON.stringify({ startedMs: 0 }));
    utimesSync(stamp, new Date(0), new Date(0));
    const stale = await run([path.join(co, 'bin', 'mimir.js'), '--version'], debug);
    assert.equal(stale.code, 0);
    assert.match(stale.stderr, /^mimir: running the TypeScript sources through tsx \(src\/\S+\.ts is newer than the build;/);
    assert.equal(stale.stdout, fresh.stdout);
  } finally {
    writeFileSync(stamp, saved);
  }
});

test('build: bin/mimir.js holds src/ against the sizes and crc32s in dist/BUILD: newer files with the same bytes run dist/ quietly, a changed one is announced (no MIMIR_DEBUG needed)', async () => {
  const co = checkout('checkout-digests');
  const stamp = path.join(pkg, 'dist', 'BUILD');
  const saved = readFileSync(stamp, 'utf8');
  const built = JSON.parse(saved) as { sources?: Record<string, [number, string]> };
  assert.ok(built.sources && Object.keys(built.sources).length > 100, 'the build lists the sources it read');
  assert.deepEqual(built.sources['cli/main.ts'], [statSync(path.join(repoRoot, 'src', 'cli', 'main.ts')).size, (crc32(readFileSync(path.join(repoRoot, 'src', 'cli', 'main.ts'))) >>> 0).toString(16).padStart(8, '0')]);
  try {
    // every source newer than the build (as in a fresh clone beside a copied dist/), the same bytes
    writeFileSync(stamp, JSON.stringify({ ...built, startedMs: 0 }));
    const same = await run([path.join(co, 'bin', 'mimir.js'), '--version']);
    assert.equal(same.code, 0);
    assert.equal(same.stderr, '', 'the same sources run the build quietly');
    // one file's bytes differ from what the build read: announced, and the sources run
    writeFileSync(stamp, JSON.stringify({ ...built, startedMs: 0, sources: { ...built.sources, 'cli/main.ts': [built.sources['cli/main.ts']![0], '00000000'] } }));
    const changed = await run([path.join(co, 'bin', 'mimir.js'), '--version']);
    assert.equal(changed.code, 0);
    assert.match(changed.stderr, /^mimir: running the TypeScript sources through tsx \(src\/cli\/main\.ts changed since the build;/);
    assert.equal(changed.stdout, same.stdout);
    // a source the build never read
    const { ['cli/main.ts']: _dropped, ...fewer } = built.sources;
    writeFileSync(stamp, JSON.stringify({ ...built, sources: fewer }));
    assert.match((await run([path.join(co, 'bin', 'mimir.js'), '--version'])).stderr, /src\/cli\/main\.ts was added since the build/);
  } finally {
    writeFileSync(stamp, saved);
  }
});
