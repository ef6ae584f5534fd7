import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { lockVersions, pickVersion, readCrateDir, readWorkspace } from '../../src/extract/index.ts';
import { escapeName } from '../../src/extract/cargo.ts';
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

test('readWorkspace: a member refused by the manifest check is a problem naming file and key; the others are still read', async () => {
  const s = scratch('mimir-cargo-');
  try {
    writeFileSync(path.join(s.dir, 'Cargo.toml'), '[workspace]\nmembers = ["good", "bad"]\n');
    for (const m of ['good', 'bad']) mkdirSync(path.join(s.dir, m, 'src'), { recursive: true });
    writeFileSync(path.join(s.dir, 'good', 'Cargo.toml'), '[package]\nname = "good"\nversion = "1.0.0"\n');
    writeFileSync(path.join(s.dir, 'bad', 'Cargo.toml'), '[package]\nname = "bad"\nversion = "1.0.0"\n[dependencies]\nx = { version = "1", default-features = "no", features = ["a", 2] }\n');
    const ws = await readWorkspace(s.dir);
    assert.deepEqual(ws.packages.map((p) => p.name), ['good']);
    assert.deepEqual(ws.problems.map((p) => p.message), [
      'bad/Cargo.toml: dependencies.x.default-features must be a boolean, found "no"',
      'bad/Cargo.toml: dependencies.x.features must be an array of strings, found an array ("a", integer 2)',
    ]);
  } finally {
    s.cleanup();
  }
});

test('readWorkspace of a member folder inherits from the workspace above it, as cargo; workspace dependency paths are relative to its root', async () => {
  const s = scratch('mimir-cargo-');
  try {
    writeFileSync(path.join(s.dir, 'Cargo.toml'), '[workspace]\nmembers = ["crates/*"]\n[workspace.package]\nversion = "2.3.4"\nedition = "2021"\n[workspace.dependencies]\nutil = { path = "crates/util" }\n');
    mkdirSync(path.join(s.dir, 'crates', 'app', 'src'), { recursive: true });
    writeFileSync(path.join(s.dir, 'crates', 'app', 'Cargo.toml'), '[package]\nname = "app"\nversion.workspace = true\nedition = { workspace = true }\n[dependencies]\nutil.workspace = true\n');
    const ws = await readWorkspace(path.join(s.dir, 'crates', 'app'));
    assert.deepEqual(ws.problems, []);
    assert.equal(ws.packages[0]?.version, '2.3.4');
    assert.equal(ws.packages[0]?.edition, '2021');
    assert.equal(ws.packages[0]?.deps[0]?.path, path.join(s.dir, 'crates', 'util'));
    // no workspace above: the inherited key is a mistake, not version ''
    const alone = scratch('mimir-cargo-');
    try {
      writeFileSync(path.join(alone.dir, 'Cargo.toml'), '[package]\nname = "app"\nversion.workspace = true\n');
      const r = await readWorkspace(alone.dir);
      assert.deepEqual(r.packages, []);
      assert.match(r.problems[0]?.message ?? '', /^Cargo.toml: package.version = \{ workspace = true \}, but workspace.package.version is not set \(no \[workspace\] found in this folder or above\)$/);
    } finally {
      alone.cleanup();
    }
  } finally {
    s.cleanup();
  }
});

test('readCrateDir: a registry crate whose manifest cargo refuses gives no package and says why; no version reads the folder name', async () => {
  const s = scratch('mimir-cargo-');
  try {
    const bad = path.join(s.dir, 'lib-1.0.0');
    mkdirSync(path.join(bad, 'src'), { recursive: true });
    writeFileSync(path.join(bad, 'Cargo.toml'), '[package]\nname = "lib"\nversion = "1.0.0"\n[lib]\nname = "my-lib"\n[[bin]]\npath = "src/main.rs"\n');
    const r = await readCrateDir(bad);
    assert.equal(r.pkg, null);
    assert.deepEqual(r.problems.map((p) => [p.kind, p.message]), [
      ['bad-manifest', 'Cargo.toml: lib.name must not contain "-" (a library name is a Rust identifier), found "my-lib"'],
      ['bad-manifest', 'Cargo.toml: bin[0].name is required, found none'],
    ]);
    const noVersion = path.join(s.dir, 'nov-0.4.2');
    mkdirSync(noVersion);
    writeFileSync(path.join(noVersion, 'Cargo.toml'), '[package]\nname = "nov"\n');
    assert.equal((await readCrateDir(noVersion)).pkg?.version, '0.4.2');
  } finally {
    s.cleanup();
  }
});

test('escapeName keeps valid UTF-8 and writes every other byte as \\xNN', () => {
  assert.equal(escapeName(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x72, 0x73])), 'caf\\xe9.rs');
  assert.equal(escapeName(Buffer.from('naïve.rs')), 'naïve.rs');
  assert.equal(escapeName(Buffer.from([0xc3, 0x28, 0xff])), '\\xc3(\\xff');
});
