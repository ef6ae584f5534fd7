// `mimir graph PATH --svg FILE` on a lake of the sample workspace: the file is
// written, is a well-formed standalone SVG (its tags nest, its root is an
// <svg> in the SVG namespace carrying its own <style>), and holds a box per
// item of the graph — fnvish::hash_str and its callers tally::Tally::add and
// tally::Tally::count above it. Without --svg it prints a DOT digraph of the
// same items.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from './run-cli.ts';
import { xmlElements } from '../web/xml.ts';

let work: ReturnType<typeof scratch>;
let lake: string;

before(async () => {
  work = scratch('mimir-graph-svg-');
  lake = path.join(work.dir, 'lake');
  const ws = path.join(work.dir, 'ws');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const r = await runCli(['--lake', lake, 'ingest', ws, '--repo', 'sample', '--with-deps']);
  assert.equal(r.code, 0, r.stderr);
});
after(() => work.cleanup());

test('graph --svg: a standalone SVG with a box per caller of fnvish::hash_str', { timeout: 180_000 }, async () => {
  const out = path.join(work.dir, 'hash_str.svg');
  const r = await runCli(['--lake', lake, 'graph', 'fnvish::hash_str', '--svg', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(out), `${out} written`);
  const svg = xmlElements(readFileSync(out, 'utf8'));
  assert.match(svg.root, /^svg\s.*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.ok(svg.names.includes('style'), 'the styles are inside');
  for (const item of ['fnvish::hash_str', 'tally::Tally::add', 'tally::Tally::count']) assert.ok(svg.texts.includes(item), `a box labelled ${item}: ${svg.texts.join(', ')}`);
  assert.equal(svg.names.filter((n) => n === 'rect').length - 1, svg.texts.length, 'one box per label (and the background)');
  assert.match(r.stderr, /items?, \d+ edges? within 2 levels of callers and callees of fnvish::hash_str/);
});

test('graph without --svg prints a DOT digraph of the same items', { timeout: 120_000 }, async () => {
  const r = await runCli(['--lake', lake, 'graph', 'fnvish::hash_str', '--depth', '1']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^digraph both \{/);
  for (const item of ['fnvish::hash_str', 'tally::Tally::add', 'tally::Tally::count']) assert.ok(r.stdout.includes(`"${item}"`), `${item} in ${r.stdout}`);
  assert.match(r.stdout, /n\d+ -> n\d+;/);
});
