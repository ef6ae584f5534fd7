// Lint: layers import downward only (DESIGN.md). cli/serve -> query -> ingest
// -> extract, log -> lake; lake imports no other layer; extract never imports
// lake. cli may import serve (the `mimir serve` command, the questions both
// share and the client of a running server); serve never imports cli. The
// web UI (web/) is a front end that talks to the server only over HTTP/JSON:
// it imports nothing outside web/ but its packages (preact, and dagre for the
// call-graph picture) and the pure modules of src/ listed in WEB_SHARED (which
// import no other module of the project: graph-layout.ts draws both the web
// picture and `mimir graph --svg`), and nothing in src/ imports web/. Prints
// each offending import and exits 1.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
const src = path.join(root, 'src');
const web = path.join(root, 'web');
/** Modules of src/ the web UI may import: pure, with no import of another project module (checked below). */
const WEB_SHARED = ['src/query/graph-layout.ts'];
/** Packages the web UI may import. */
const WEB_PACKAGES = /^(preact(\/|$)|@dagrejs\/dagre$)/;
const allowed: Record<string, string[]> = {
  lake: ['lake'],
  log: ['log', 'lake'],
  extract: ['extract'],
  ingest: ['ingest', 'extract', 'log', 'lake'],
  query: ['query', 'ingest', 'extract', 'log', 'lake'],
  cli: ['cli', 'serve', 'query', 'ingest', 'extract', 'log', 'lake'],
  serve: ['serve', 'query', 'ingest', 'extract', 'log', 'lake'],
};

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (/\.tsx?$/.test(p)) yield p;
  }
}

/** Every import specifier of a file: static, re-exports and dynamic import('…'). */
const specifiers = (text: string): string[] => [...text.matchAll(/(?:(?:import|export)[^'"]*?from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]!);

let bad = 0;
for (const file of files(src)) {
  for (const spec of specifiers(readFileSync(file, 'utf8'))) {
    if (spec.startsWith('.') && !path.relative(web, path.resolve(path.dirname(file), spec)).startsWith('..')) {
      console.error(`${path.relative(root, file)}: imports ${spec} (src/ may not import the web UI: it is a front end over HTTP)`);
      bad++;
    }
  }
}
for (const file of files(web)) {
  for (const spec of specifiers(readFileSync(file, 'utf8'))) {
    const target = path.resolve(path.dirname(file), spec);
    const shared = spec.startsWith('.') && WEB_SHARED.includes(path.relative(root, target).split(path.sep).join('/'));
    const outside = spec.startsWith('.') ? path.relative(web, target).startsWith('..') && !shared : !WEB_PACKAGES.test(spec);
    if (outside) {
      console.error(`${path.relative(root, file)}: imports ${spec} (web/ talks to the server over HTTP/JSON: it imports only web/, preact, dagre and ${WEB_SHARED.join(', ')})`);
      bad++;
    }
  }
}
for (const shared of WEB_SHARED) {
  for (const spec of specifiers(readFileSync(path.join(root, shared), 'utf8'))) {
    if (spec.startsWith('.') || !WEB_PACKAGES.test(spec)) {
      console.error(`${shared}: imports ${spec} (the web UI bundles this module: it may import only ${WEB_PACKAGES.source})`);
      bad++;
    }
  }
}
for (const file of files(src)) {
  const layer = path.relative(src, file).split(path.sep)[0]!;
  const ok = allowed[layer];
  if (!ok) continue;
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/g)) {
    const target = path.resolve(path.dirname(file), m[1]!);
    const rel = path.relative(src, target);
    if (rel.startsWith('..')) continue;
    const to = rel.split(path.sep)[0]!;
    if (!ok.includes(to)) {
      console.error(`${path.relative(src, file)}: imports ${m[1]} (layer ${layer} may not import ${to})`);
      bad++;
    }
  }
}
if (bad > 0) {
  console.error(`check-layers: ${bad} upward or sideways import(s)`);
  process.exit(1);
}
console.log('check-layers: ok');
