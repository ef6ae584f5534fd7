// Bad source files never abort an ingest: invalid UTF-8, a truncated file, a
// 20 MB file, a binary file named .rs and a link loop each end up in the
// report's problems while the rest is ingested; strict mode fails with every
// problem listed and writes nothing (generation unchanged). (A manifest that
// does not parse is another matter: the whole ingest is refused, see
// mistakes.test.ts.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { StrictIngestError, formatIngestReport, ingest } from '../../src/ingest/index.ts';
import { freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

/** A workspace with a good crate and a crate full of bad files. */
function badCorpus(dir: string): string {
  const ws = path.join(dir, 'badws');
  const write = (rel: string, data: string | Buffer) => {
    const p = path.join(ws, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, data);
  };
  write('Cargo.toml', '[workspace]\nmembers = ["good", "messy"]\n');
  write('good/Cargo.toml', '[package]\nname = "good"\nversion = "1.0.0"\n');
  write('good/src/lib.rs', 'pub fn fine() -> u8 { 7 }\n');
  write('messy/Cargo.toml', '[package]\nname = "messy"\nversion = "0.3.0"\n');
  write('messy/src/lib.rs', [
    'pub mod latin1;', 'pub mod truncated;', 'pub mod huge;', 'pub mod blob;', 'pub mod looped;',
    'pub fn survivor() -> u32 { 1 }', '',
  ].join('\n'));
  write('messy/src/latin1.rs', Buffer.concat([Buffer.from('pub fn caf'), Buffer.from([0xe9]), Buffer.from('() {}\n')]));
  write('messy/src/truncated.rs', 'pub fn whole() -> u32 { 2 }\n\npub fn cut(x: u32) -> u32 {\n    if x > 1 {\n        x');
  // 20 MB of valid Rust, generated here (never stored in the repo)
  const line = 'pub fn generated_function_with_a_long_name() -> u32 { 42 }\n';
  write('messy/src/huge.rs', line.repeat(Math.ceil((20 * 1024 * 1024) / line.length)));
  write('messy/src/blob.rs', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0xff, 0x10]));
  symlinkSync('looped.rs', path.join(ws, 'messy/src/looped.rs'));
  return ws;
}

const wantKinds = ['not-utf8', 'parse-errors', 'too-large', 'binary', 'loop'];

test('a bad-input corpus ingests to completion with every problem listed', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = badCorpus(lake.dir);
  const r = await ingest(lake.log, ws, { repo: 'bad' });
  const kinds = new Set(r.problems.map((p) => p.kind));
  for (const k of wantKinds) assert.ok(kinds.has(k as never), `problem kind ${k} listed: ${formatIngestReport(r)}\n${r.problems.map((p) => p.message).join('\n')}`);
  const byFile = new Map(r.problems.map((p) => [p.path, p]));
  assert.equal(byFile.get('src/latin1.rs')?.kind, 'not-utf8');
  assert.equal(byFile.get('src/truncated.rs')?.kind, 'parse-errors');
  assert.equal(byFile.get('src/huge.rs')?.kind, 'too-large');
  assert.equal(byFile.get('src/blob.rs')?.kind, 'binary');
  assert.equal(byFile.get('src/looped.rs')?.kind, 'loop');
  assert.match(formatIngestReport(r), /2 crates.*events \+\d+.*\d+ problems/);

  // what could be read is in the lake: the good crate, the messy crate's good items, the truncated file's whole fn
  const nodes = [...(await lake.log.state('node', eq('repo', 'bad'))).values()].map((n) => n['qpath']);
  for (const q of ['good::fine', 'messy::survivor', 'messy::truncated::whole']) assert.ok(nodes.includes(q), `${q} ingested`);
  const files = await lake.log.state('file', and(eq('repo', 'bad'), eq('krate', 'messy@0.3.0')));
  const status = new Map([...files.values()].map((f) => [f['path'], f['parse_status']]));
  assert.equal(status.get('src/huge.rs'), 'skipped-too-large');
  assert.equal(status.get('src/truncated.rs'), 'errors');
  assert.equal(status.get('src/latin1.rs'), 'skipped-not-utf8');

  // the run row says there were problems; a rerun writes nothing and lists them again
  const again = await ingest(lake.log, ws, { repo: 'bad' });
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
  assert.equal(again.parsed, 0);
  const againKinds = new Set(again.problems.map((p) => p.kind));
  for (const k of wantKinds) assert.ok(againKinds.has(k as never), `rerun lists ${k}`);
});

test('strict mode fails on the bad corpus with every problem listed and nothing written', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = badCorpus(lake.dir);
  const g = lake.log.lake.catalog.pointerGeneration();
  await assert.rejects(ingest(lake.log, ws, { repo: 'bad', strict: true }), (e: unknown) => {
    assert.ok(e instanceof StrictIngestError);
    const kinds = new Set(e.problems.map((p) => p.kind));
    for (const k of wantKinds) assert.ok(kinds.has(k as never), `strict lists ${k}`);
    return true;
  });
  assert.equal(lake.log.lake.catalog.pointerGeneration(), g, 'lake generation unchanged');
  assert.equal((await lake.log.rows('node')).length, 0);
});

test('strict mode on clean input writes the same as a normal run', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = badCorpus(lake.dir);
  writeFileSync(path.join(ws, 'Cargo.toml'), '[workspace]\nmembers = ["good"]\n');
  const r = await ingest(lake.log, ws, { repo: 'clean', strict: true });
  assert.equal(r.problems.length, 0);
  assert.ok(r.events.add > 0);
  assert.ok((await lake.log.state('node', eq('qpath', 'good::fine'))).size === 1);
});
