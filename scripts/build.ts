// `npm run build` (also run by `npm ci` / `npm install` through `prepare`):
// compiles src/ to dist/ with tsc (tsconfig.build.json: `.ts` import
// specifiers rewritten to `.js`), removes compiled files whose source is gone,
// and writes dist/BUILD, stamped with the time the build *started*: bin/mimir.js
// runs dist/ only while no file under src/ is newer than that stamp (a file
// edited during the build counts as newer). `--out DIR` builds elsewhere (tests).
//
// Crash story: the stamp is written last and removed first, so an interrupted
// build leaves no stamp and bin/mimir.js runs the TypeScript sources until the
// next build completes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argOut = process.argv.indexOf('--out');
const out = argOut >= 0 ? path.resolve(process.argv[argOut + 1] ?? '') : path.join(root, 'dist');
const stamp = path.join(out, 'BUILD');

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

writeFileSync(stamp, `${JSON.stringify({ startedMs: started, node: process.version })}\n`);
const files = (dir: string): number => readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.js') ? 1 : 0), 0);
console.log(`build: ${files(out)} modules in ${path.relative(root, out) || out} (${((Date.now() - started) / 1000).toFixed(1)} s${pruned ? `, ${pruned} stale removed` : ''})`);
