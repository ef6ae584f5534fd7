import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { extractCrate, loadRust, readWorkspace } from '../../src/extract/index.ts';

test('bad input corpus: every bad file is a problem with a file status, nothing throws, good items are kept', async () => {
  const s = scratch('mimir-bad-');
  try {
    const crate = path.join(s.dir, 'bad');
    const src = path.join(crate, 'src');
    mkdirSync(src, { recursive: true });
    writeFileSync(path.join(s.dir, 'Cargo.toml'), '[workspace]\nmembers = ["bad", "broken"]\n');
    writeFileSync(path.join(crate, 'Cargo.toml'), '[package]\nname = "bad"\nversion = "0.1.0"\n');
    mkdirSync(path.join(s.dir, 'broken'));
    writeFileSync(path.join(s.dir, 'broken', 'Cargo.toml'), '[package]\nname = "broken\nversion = 1\n');
    writeFileSync(path.join(src, 'lib.rs'), [
      'mod latin1;', 'mod truncated;', 'mod huge;', 'mod binary;', 'mod looped;', 'mod absent;',
      '#[path = "lib.rs"] mod again;', 'pub fn fine() -> u32 { 1 }', '',
    ].join('\n'));
    writeFileSync(path.join(src, 'latin1.rs'), Buffer.from([0x2f, 0x2f, 0x20, 0xe9, 0x74, 0xe9, 0x0a])); // "// été" in Latin-1
    writeFileSync(path.join(src, 'truncated.rs'), 'pub fn whole() -> u32 { 2 }\npub struct Kept { a: u32 }\npub fn cut(x: u32) -> u32 {\n    let y = x +\n');
    const line = 'pub fn filler_0000000() -> u64 { 12345678 }\n';
    const huge = Buffer.alloc(20 * 1024 * 1024, ' ');
    for (let i = 0; i + line.length < huge.length; i += line.length) huge.write(line, i);
    writeFileSync(path.join(src, 'huge.rs'), huge);
    writeFileSync(path.join(src, 'binary.rs'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x13, 0x37]));
    symlinkSync('looped.rs', path.join(src, 'looped.rs')); // a link to itself

    const ws = await readWorkspace(s.dir);
    assert.deepEqual(ws.packages.map((p) => p.name), ['bad']);
    assert.deepEqual(ws.problems.map((p) => [p.path, p.kind]), [['broken/Cargo.toml', 'bad-manifest']]);

    const g = await extractCrate({
      repo: 'r', krate: 'bad@0.1.0', rootDir: crate, targets: ['src/lib.rs'], deps: new Map(),
      readFile: (p) => readFile(p),
    });
    const status = Object.fromEntries(g.files.map((f) => [f.path, f.parseStatus]));
    assert.deepEqual(status, {
      'src/lib.rs': 'ok',
      'src/latin1.rs': 'skipped-not-utf8',
      'src/truncated.rs': 'errors',
      'src/huge.rs': 'skipped-too-large',
      'src/binary.rs': 'skipped-binary',
      'src/looped.rs': 'loop',
      'src/absent.rs': 'missing',
    });
    assert.deepEqual(g.problems.map((p) => [p.path, p.kind]).sort(), [
      ['src/absent.rs', 'missing'], ['src/binary.rs', 'binary'], ['src/huge.rs', 'too-large'],
      ['src/latin1.rs', 'not-utf8'], ['src/lib.rs', 'loop'], ['src/looped.rs', 'loop'], ['src/truncated.rs', 'parse-errors'],
    ]);
    const huge20 = g.files.find((f) => f.path === 'src/huge.rs')!;
    assert.equal(huge20.size, 20 * 1024 * 1024);
    assert.match(huge20.hash, /^[0-9a-f]{64}$/);
    const q = g.nodes.map((n) => n.qpath);
    for (const kept of ['bad::fine', 'bad::truncated::whole', 'bad::truncated::Kept', 'bad::latin1', 'bad::huge']) {
      assert.ok(q.includes(kept), `${kept} kept; have ${q.join(', ')}`);
    }
    // the module of a skipped file stays, empty
    assert.equal(g.nodes.filter((n) => n.qpath.startsWith('bad::huge::')).length, 0);
  } finally {
    s.cleanup();
  }
});

test('bad input: an unreadable crate root is a problem, not a throw; a larger limit lets the file through', async () => {
  const s = scratch('mimir-bad2-');
  try {
    const g = await extractCrate({
      repo: 'r', krate: 'none@1.0.0', rootDir: s.dir, targets: ['src/lib.rs'], deps: new Map(), readFile: (p) => readFile(p),
    });
    assert.deepEqual(g.problems.map((p) => [p.path, p.kind]), [['src/lib.rs', 'missing']]);
    assert.deepEqual(g.nodes.map((n) => n.qpath), ['none']);
    mkdirSync(path.join(s.dir, 'src'));
    writeFileSync(path.join(s.dir, 'src', 'lib.rs'), 'pub fn a() {}\n'.repeat(100));
    const small = await extractCrate({
      repo: 'r', krate: 'none@1.0.0', rootDir: s.dir, targets: ['src/lib.rs'], deps: new Map(), readFile: (p) => readFile(p),
      limits: { maxFileBytes: 100 },
    });
    assert.equal(small.files[0]!.parseStatus, 'skipped-too-large');
  } finally {
    s.cleanup();
  }
});

test('parser: truncated text keeps what parsed; non-BMP text in chunks parses cleanly', async () => {
  const parser = await loadRust();
  const cut = parser.parse('pub fn a() {}\nfn b(');
  assert.equal(cut.status, 'errors');
  assert.ok(cut.errorCount >= 1);
  assert.ok(cut.items.some((i) => i.name === 'a'));
  // > 64 KiB of emoji strings so that chunk edges fall inside surrogate pairs
  const body = Array.from({ length: 3000 }, (_, i) => `pub const C${i}: &str = "😀😀😀😀😀😀😀😀";`).join('\n');
  const ok = parser.parse(body + '\npub fn last() {}\n');
  assert.equal(ok.status, 'ok');
  assert.equal(ok.items.length, 3001);
  assert.equal(ok.items[3000]!.name, 'last');
  assert.equal(ok.items[3000]!.lineStart, 3001);
  assert.equal(ok.items[2999]!.signature, 'pub const C2999: &str');
});

test('parser: use groups, globs, renames and self flatten to one entry each', async () => {
  const parser = await loadRust();
  const f = parser.parse('pub use a::{b, c::d as e, f::*, g::{self, h}};\nuse ::std::io;\n');
  assert.deepEqual(f.uses.map((u) => [u.path, u.alias, u.glob, u.visibility]), [
    ['a::b', 'b', false, 'pub'], ['a::c::d', 'e', false, 'pub'], ['a::f', null, true, 'pub'],
    ['a::g', 'g', false, 'pub'], ['a::g::h', 'h', false, 'pub'], ['std::io', 'io', false, ''],
  ]);
});
