// The web UI's build (scripts/build.ts runs it into dist/web/; the browser
// test into a folder of its own): web/src/app.tsx and everything it imports
// (Preact included) bundled by esbuild into one minified ES module, and
// web/src/app.css into ONE stylesheet, each named by a hash of its content
// (`app-<hash>.js`, `app-<hash>.css`, so `mimir serve` can send them as
// immutable), plus `manifest.json` naming them (src/serve/web.ts reads it).
// Code a page imports with `import()` (the call-graph picture and dagre) is
// split into `chunk-<hash>.js` files, loaded only when that page opens; code
// the lazy parts share with app.js goes into chunks app.js imports, which the
// first load counts (`firstLoad`). Nothing is fetched at run time: no CDN, no
// web fonts.
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
  /** Every other JS file: chunks app.js imports, and the ones pages load on demand. */
  chunks: string[];
  /** The files a first page load fetches: app.js, the chunks it imports (statically) and the stylesheet. */
  firstLoad: string[];
  /** Raw, gzip (level 9) and brotli sizes of the first load's files together (beside the small HTML shell). */
  bytes: number;
  gzipBytes: number;
  brotliBytes: number;
  /** Brotli size of the chunks loaded on demand only. */
  lazyBrotliBytes: number;
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
    chunkNames: 'chunk-[hash]',
    splitting: true,
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
  const outputs = r.metafile.outputs;
  const outs = Object.keys(outputs).map((o) => path.basename(o));
  const jsOut = Object.keys(outputs).find((o) => outputs[o]!.entryPoint !== undefined && /app\.tsx$/.test(outputs[o]!.entryPoint!));
  const css = outs.find((o) => o.endsWith('.css'));
  const cssCount = outs.filter((o) => o.endsWith('.css')).length;
  if (jsOut === undefined || css === undefined || cssCount !== 1 || outs.some((o) => !/\.(js|css)$/.test(o))) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`bundling the web UI: expected app.js, chunks and one .css file, found ${outs.join(', ') || 'nothing'}`);
  }
  const js = path.basename(jsOut);
  const chunks = outs.filter((o) => o.endsWith('.js') && o !== js).sort();
  // app.js and what it imports statically, transitively: what the first page load fetches
  const first = new Set<string>();
  const walk = (o: string): void => {
    if (first.has(o)) return;
    first.add(o);
    for (const i of outputs[o]?.imports ?? []) if (i.kind === 'import-statement' && !i.external) walk(i.path);
  };
  walk(jsOut);
  const firstLoad = [...[...first].map((o) => path.basename(o)), css];
  let bytes = 0;
  let gzipBytes = 0;
  let brotliBytes = 0;
  let lazyBrotliBytes = 0;
  for (const f of [js, css, ...chunks]) {
    const b = readFileSync(path.join(tmp, f));
    if (!firstLoad.includes(f)) {
      lazyBrotliBytes += brotliCompressSync(b).length;
      continue;
    }
    bytes += b.length;
    gzipBytes += gzipSync(b, { level: 9 }).length;
    brotliBytes += brotliCompressSync(b).length;
  }
  writeFileSync(path.join(tmp, 'manifest.json'), `${JSON.stringify({ js, css, chunks })}\n`);
  if (existsSync(outDir)) rmSync(outDir, { recursive: true, force: true });
  renameSync(tmp, outDir);
  return { dir: outDir, js, css, chunks, firstLoad, bytes, gzipBytes, brotliBytes, lazyBrotliBytes, ms: performance.now() - t0 };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argOut = process.argv.indexOf('--out');
  const out = argOut >= 0 ? path.resolve(process.argv[argOut + 1] ?? '') : path.join(root, 'dist', 'web');
  const b = await buildWeb(out);
  console.log(`build-web: ${b.js}, ${b.css} and ${b.chunks.length} chunk(s) in ${path.relative(root, out) || out}: first load ${b.firstLoad.join(' + ')} = ${b.bytes} bytes, ${b.gzipBytes} gzip, ${b.brotliBytes} brotli; on demand ${b.lazyBrotliBytes} brotli (${b.ms.toFixed(0)} ms)`);
}
