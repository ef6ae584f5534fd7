// The web UI's build (scripts/build.ts runs it into dist/web/; the browser
// test into a folder of its own): web/src/app.tsx and everything it imports
// (Preact included) bundled by esbuild into ONE minified ES module, and
// web/src/app.css into ONE stylesheet, each named by a hash of its content
// (`app-<hash>.js`, `app-<hash>.css`, so `mimir serve` can send them as
// immutable), plus `manifest.json` naming the two (src/serve/web.ts reads
// it). Nothing is fetched at run time: no CDN, no web fonts.
//
// Crash story: the files are written into a fresh sibling folder, the
// manifest last, and that folder then replaces the old one by a rename; an
// interrupted build leaves the old UI (or none) and a stray `.tmp-*` folder
// the next build removes.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface WebBuild {
  dir: string;
  js: string;
  css: string;
  /** Raw, gzip (level 9) and brotli sizes of the two assets together: what a first page load transfers, beside the small HTML shell. */
  bytes: number;
  gzipBytes: number;
  brotliBytes: number;
  ms: number;
}

/** Build the UI into `outDir` (replaced whole). */
export async function buildWeb(outDir: string): Promise<WebBuild> {
  const t0 = performance.now();
  const esbuild = await import('esbuild');
  const parent = path.dirname(outDir);
  mkdirSync(parent, { recursive: true });
  const base = path.basename(outDir);
  for (const e of readdirSync(parent)) if (e.startsWith(`${base}.tmp-`)) rmSync(path.join(parent, e), { recursive: true, force: true });
  const tmp = path.join(parent, `${base}.tmp-${process.pid}`);
  const src = path.join(root, 'web', 'src');
  const r = await esbuild.build({
    entryPoints: [path.join(src, 'app.tsx'), path.join(src, 'app.css')],
    outdir: tmp,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    metafile: true,
    logLevel: 'silent',
    write: true,
  });
  const warnings = r.warnings.map((w) => `${w.location?.file ?? '?'}:${w.location?.line ?? '?'}: ${w.text}`);
  if (warnings.length > 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`bundling the web UI gave ${warnings.length} warning(s), which it must not have:\n${warnings.join('\n')}`);
  }
  const outs = Object.keys(r.metafile.outputs).map((o) => path.basename(o));
  const js = outs.find((o) => o.endsWith('.js'));
  const css = outs.find((o) => o.endsWith('.css'));
  if (js === undefined || css === undefined || outs.length !== 2) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`bundling the web UI: expected one .js and one .css file, found ${outs.join(', ') || 'nothing'}`);
  }
  let bytes = 0;
  let gzipBytes = 0;
  let brotliBytes = 0;
  for (const f of [js, css]) {
    const b = readFileSync(path.join(tmp, f));
    bytes += b.length;
    gzipBytes += gzipSync(b, { level: 9 }).length;
    brotliBytes += brotliCompressSync(b).length;
  }
  writeFileSync(path.join(tmp, 'manifest.json'), `${JSON.stringify({ js, css })}\n`);
  if (existsSync(outDir)) rmSync(outDir, { recursive: true, force: true });
  renameSync(tmp, outDir);
  return { dir: outDir, js, css, bytes, gzipBytes, brotliBytes, ms: performance.now() - t0 };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argOut = process.argv.indexOf('--out');
  const out = argOut >= 0 ? path.resolve(process.argv[argOut + 1] ?? '') : path.join(root, 'dist', 'web');
  const b = await buildWeb(out);
  console.log(`build-web: ${b.js} and ${b.css} in ${path.relative(root, out) || out}: ${b.bytes} bytes, ${b.gzipBytes} gzip, ${b.brotliBytes} brotli (${b.ms.toFixed(0)} ms)`);
}
