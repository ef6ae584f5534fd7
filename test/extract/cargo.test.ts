import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { lockVersions, pickVersion, readCrateDir, readWorkspace } from '../../src/extract/index.ts';
import { sampleWorkspace } from './helpers.ts';

test('readWorkspace: glob members minus exclude, targets, inherited edition', async () => {
  const ws = await readWorkspace(sampleWorkspace);
  assert.deepEqual(ws.problems, []);
  assert.deepEqual(ws.packages.map((p) => p.name).sort(), ['app', 'shapes']);
  const shapes = ws.packages.find((p) => p.name === 'shapes')!;
  assert.equal(shapes.version, '0.2.0');
  assert.equal(shapes.edition, '2021');
  assert.deepEqual(shapes.targets, [{ kind: 'lib', name: 'shapes', path: 'src/lib.rs' }]);
  const app = ws.packages.find((p) => p.name === 'app')!;
  assert.deepEqual(app.targets.map((t) => `${t.kind}:${t.name}:${t.path}`), ['bin:app:src/main.rs', 'bin:tool:src/bin/tool.rs']);
});

test('readWorkspace: a renamed dependency keeps its local name and resolves its version from Cargo.lock', async () => {
  const ws = await readWorkspace(sampleWorkspace);
  const shapes = ws.packages.find((p) => p.name === 'shapes')!;
  assert.deepEqual(shapes.deps.map((d) => [d.localName, d.crateName, d.req, d.resolved]), [['mdep', 'minidep', '0.1', '0.1.0']]);
  const app = ws.packages.find((p) => p.name === 'app')!;
  assert.deepEqual(app.deps.map((d) => [d.localName, d.resolved]), [['shapes', '0.2.0'], ['minidep', '0.1.0']]);
});

test('lockVersions lists every locked version; pickVersion takes the best match of the requirement', async () => {
  const lock = await lockVersions(sampleWorkspace);
  assert.deepEqual(lock.get('minidep'), ['0.1.0', '0.3.1']);
  assert.equal(pickVersion(['0.1.0', '0.3.1'], '0.1'), '0.1.0');
  assert.equal(pickVersion(['0.1.0', '0.3.1'], '^0.3'), '0.3.1');
  assert.equal(pickVersion(['1.2.0', '1.9.3', '2.0.0'], '1.2'), '1.9.3');
  assert.equal(pickVersion(['1.2.0', '1.9.3', '2.0.0'], '~1.2'), '1.2.0');
  assert.equal(pickVersion(['1.2.0', '1.9.3', '2.0.0'], '>=1.5, <2'), '1.9.3');
  assert.equal(pickVersion(['1.2.0', '2.0.0'], null), '2.0.0');
  assert.equal(pickVersion([], '1'), null);
});

test('readCrateDir: a vendored name-version/ folder is a package', async () => {
  const { pkg, problems } = await readCrateDir(path.join(sampleWorkspace, 'vendor', 'minidep-0.1.0'));
  assert.deepEqual(problems, []);
  assert.equal(pkg?.name, 'minidep');
  assert.equal(pkg?.version, '0.1.0');
  assert.deepEqual(pkg?.targets.map((t) => t.path), ['src/lib.rs']);
});

test('readWorkspace: a malformed member Cargo.toml is a problem, the other members are still read', async () => {
  const s = scratch('mimir-cargo-');
  try {
    writeFileSync(path.join(s.dir, 'Cargo.toml'), '[workspace]\nmembers = ["good", "bad", "gone"]\n');
    mkdirSync(path.join(s.dir, 'good', 'src'), { recursive: true });
    writeFileSync(path.join(s.dir, 'good', 'Cargo.toml'), '[package]\nname = "good"\nversion = "1.0.0"\n[lib]\npath = "src/g.rs"\n');
    writeFileSync(path.join(s.dir, 'good', 'src', 'g.rs'), 'pub fn g() {}\n');
    mkdirSync(path.join(s.dir, 'bad'));
    writeFileSync(path.join(s.dir, 'bad', 'Cargo.toml'), '[package\nname = "bad"\n');
    const ws = await readWorkspace(s.dir);
    assert.deepEqual(ws.packages.map((p) => p.name), ['good']);
    assert.deepEqual(ws.packages[0]!.targets, [{ kind: 'lib', name: 'good', path: 'src/g.rs' }]);
    assert.deepEqual(ws.problems.map((p) => [p.path, p.kind]), [['gone', 'missing'], ['bad/Cargo.toml', 'bad-manifest']]);
    // a malformed top manifest: a problem, no throw
    writeFileSync(path.join(s.dir, 'Cargo.toml'), 'this is = = not toml');
    const broken = await readWorkspace(s.dir);
    assert.deepEqual(broken.packages, []);
    assert.equal(broken.problems[0]?.kind, 'bad-manifest');
  } finally {
    s.cleanup();
  }
});
