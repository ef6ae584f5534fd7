// `npm run build` (also run by `npm ci` / `npm install` through `prepare`):
// compiles src/ to dist/ with tsc (tsconfig.build.json: `.ts` import
// specifiers rewritten to `.js`), removes compiled files whose source is gone,
// bundles the CLI into one CommonJS file (dist/cli.bundle.cjs, esbuild: see
// bundleCli) and writes dist/BUILD, stamped with the time the build *started*
// and the size and crc32 of every file under src/ it read: bin/mimir.js runs
// dist/ only while src/ holds those same files (a file newer than the start is
// read and compared; a file edited during the build counts as changed).
// `--out DIR` builds elsewhere (tests). The web UI (web/, see
// scripts/build-web.ts) is built into <out>/web/, which the pruning here
// leaves alone.
//
// The bundle is what bin/mimir.js runs for the questions read from a lake
// (find, def, refs, callers, callees, history, diff): one file instead of
// ~100 modules to resolve and link, compiled through node:vm so that V8's code
// cache can be kept between runs (bin/mimir.js). Every module keeps the
// `import.meta.url` of its compiled twin under dist/ (so paths computed from
// it — package.json, worker scripts, wasm files — are the same as dist/'s);
// packages with native or wasm parts are left outside and loaded by require.
//
// Crash story: the stamp is written last and removed first, so an interrupted
// build leaves no stamp and bin/mimir.js runs the TypeScript sources until the
// next build completes.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { buildWeb, type WebBuild } from './build-web.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argOut = process.argv.indexOf('--out');
const out = argOut >= 0 ? path.resolve(process.argv[argOut + 1] ?? '') : path.join(root, 'dist');
const stamp = path.join(out, 'BUILD');

/** File name of the bundle inside the output folder (bin/mimir.js reads it from dist/BUILD). */
const BUNDLE = 'cli.bundle.cjs';
/** Folder of the web UI inside the output folder (src/serve/web.ts serves it). */
const WEB = 'web';
/**
 * Packages loaded by require at run time, not bundled: native code, wasm files found next to their module, tsx,
 * and the AWS SDK (about 1 MB, imported only when a path is s3://: every question would otherwise parse it).
 */
const EXTERNAL = ['@aws-sdk/client-s3', 'better-sqlite3', '@duckdb/node-api', '@duckdb/node-bindings', '@bokuweb/zstd-wasm', 'web-tree-sitter', 'tree-sitter-rust', 'tsx', 'tsx/*'];

const started = Date.now();
mkdirSync(out, { recursive: true });
rmSync(stamp, { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', out, '--tsBuildInfoFile', path.join(out, '.tsbuildinfo')], {
  stdio: 'inherit',
});
if (r.status !== 0) {
  console.error(`build: tsc exited with ${r.status ?? r.signal}; no stamp written, so bin/mimir.js keeps running the TypeScript sources`);
  process.exit(1);
}

// compiled files whose source was deleted or renamed
let pruned = 0;
const prune = (dir: string): void => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && dir === out && (e.name === WEB || e.name.startsWith(`${WEB}.tmp-`))) continue;
    if (e.isDirectory()) {
      prune(p);
      if (readdirSync(p).length === 0) rmSync(p, { recursive: true });
    } else if (e.name.endsWith('.js')) {
      const src = path.join(root, 'src', path.relative(out, p)).replace(/\.js$/, '.ts');
      if (!existsSync(src)) {
        rmSync(p);
        pruned++;
      }
    }
  }
};
prune(out);

// without a bundle (esbuild failed: reported) bin/mimir.js runs dist/'s modules: slower to start, same answers
const bundle = await bundleCli().catch((e: unknown) => {
  console.error(`build: the CLI bundle was not made (${(e as Error).message}); bin/mimir.js will run dist/'s modules, which start slower`);
  return undefined;
});
// without the web UI (reported) `mimir serve` answers the JSON API and says on / how to build the UI
const web = await buildWeb(path.join(out, WEB)).catch((e: unknown): WebBuild | undefined => {
  console.error(`build: the web UI was not made (${(e as Error).message}); mimir serve answers the JSON API and says so on /`);
  return undefined;
});
writeFileSync(stamp, `${JSON.stringify({ startedMs: started, node: process.version, bundle, sources: sourceDigests() })}\n`);
const files = (dir: string): number => readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? (dir === out && e.name === WEB ? 0 : files(path.join(dir, e.name))) : e.name.endsWith('.js') ? 1 : 0), 0);
const webNote = web ? `, the web UI (first load ${(web.brotliBytes / 1e3).toFixed(1)} kB brotli, ${(web.gzipBytes / 1e3).toFixed(1)} kB gzip; ${(web.lazyBrotliBytes / 1e3).toFixed(1)} kB brotli loaded on demand; bundled in ${web.ms.toFixed(0)} ms)` : '';
console.log(`build: ${files(out)} modules in ${path.relative(root, out) || out}${bundle ? ` and the CLI bundle (${(bundle.bytes / 1e6).toFixed(1)} MB)` : ''}${webNote} (${((Date.now() - started) / 1000).toFixed(1)} s${pruned ? `, ${pruned} stale removed` : ''})`);


/**
 * Every file under src/ as the build read it: path (relative to src/, with
 * `/`) -> [size, crc32 of its bytes as 8 hex digits]. bin/mimir.js holds
 * src/ against it: a file whose mtime is after the build's start is read and
 * compared, so a checkout whose files are newer but the same (a fresh clone
 * beside a copied dist/) still runs the build, and one that differs says so.
 */
function sourceDigests(): Record<string, [number, string]> {
  const outMap: Record<string, [number, string]> = {};
  const srcRoot = path.join(root, 'src');
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const bytes = readFileSync(p);
        outMap[path.relative(srcRoot, p).split(path.sep).join('/')] = [bytes.length, (crc32(bytes) >>> 0).toString(16).padStart(8, '0')];
      }
    }
  };
  walk(srcRoot);
  return outMap;
}

/**
 * src/cli/main.ts and everything it imports (its lazily imported commands
 * too: esbuild turns a dynamic import of a bundled module into a call) as one
 * CommonJS file exporting `main`. Returns the file name and its content hash
 * (bin/mimir.js keys the code cache by it).
 */
async function bundleCli(): Promise<{ file: string; sha256: string; bytes: number }> {
  const esbuild = await import('esbuild');
  const src = path.join(root, 'src');
  const file = path.join(out, BUNDLE);
  const tmp = `${file}.tmp`;
  // each module's import.meta.url is its compiled twin's: dist/<same path>.js
  const meta: import('esbuild').Plugin = {
    name: 'import-meta-of-dist',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const rel = path.relative(src, args.path);
        if (rel.startsWith('..')) return undefined;
        const text = readFileSync(args.path, 'utf8');
        const js = JSON.stringify(rel.split(path.sep).join('/').replace(/\.ts$/, '.js'));
        return {
          contents: text.replaceAll('import.meta.url', `__mimirModuleUrl(${js})`).replaceAll('import.meta.resolve', '__mimirNoResolve'),
          loader: 'ts',
        };
      });
    },
  };
  const r = await esbuild.build({
    entryPoints: [path.join(src, 'cli', 'main.ts')],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: EXTERNAL,
    // no comments or indentation: a smaller file, and ASCII only (see below)
    minifyWhitespace: true,
    charset: 'ascii',
    banner: {
      js: [
        '// Built by scripts/build.ts from src/ (do not edit): the CLI as one file, run by bin/mimir.js.',
        "const __mimirModuleUrl = (rel) => require('node:url').pathToFileURL(require('node:path').join(__dirname, rel)).href;",
        "const __mimirNoResolve = (spec) => { throw new Error(`import.meta.resolve(${spec}) is not available in the bundled CLI`); };",
      ].join('\n'),
    },
    plugins: [meta],
    logLevel: 'silent',
    write: true,
  });
  const warnings = r.warnings.map((w) => `${w.location?.file ?? '?'}:${w.location?.line ?? '?'}: ${w.text}`);
  if (warnings.length > 0) {
    rmSync(tmp, { force: true });
    throw new Error(`build: bundling the CLI gave ${warnings.length} warning(s), which the bundle must not have:\n${warnings.join('\n')}`);
  }
  const text = readFileSync(tmp);
  // ASCII only: bin/mimir.js reads it as Latin-1, which V8 keeps as a one-byte string (a UTF-8 decode of the same file made two-byte text, 10 ms slower)
  const wide = text.findIndex((b) => b > 0x7f);
  if (wide >= 0) {
    rmSync(tmp, { force: true });
    throw new Error(`the bundle holds a non-ASCII byte at offset ${wide} (…${text.subarray(Math.max(0, wide - 40), wide + 10).toString('utf8')}…)`);
  }
  renameSync(tmp, file);
  return { file: BUNDLE, sha256: createHash('sha256').update(text).digest('hex'), bytes: text.length };
}
