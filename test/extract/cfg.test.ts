// cfg evaluation (src/extract/resolve/cfg.ts) on a fixture crate: twins
// under `feature = "std"` and its negation, cfg_attr(path), target
// predicates, features expanded through [features] and optional deps,
// build-script cfgs, inactive members and statements.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';
import { Cfg, activeFeatures, buildScriptCfgs, extractCrate, readCrateDir, type CrateGraph, type FeatureSelection } from '../../src/extract/index.ts';

const fixture = path.join(repoRoot, 'test', 'extract', 'fixtures', 'cfg');

async function extract(sel: FeatureSelection = {}, release = false): Promise<CrateGraph> {
  const { pkg } = await readCrateDir(fixture);
  assert.ok(pkg);
  return extractCrate({
    repo: 'r', krate: `${pkg.name}@${pkg.version}`, rootDir: pkg.dir, targets: pkg.targets.map((t) => t.path), deps: new Map(),
    readFile: (p) => readFile(p), edition: pkg.edition, features: activeFeatures(pkg, sel), buildScript: pkg.buildScript,
    ...release ? { release } : {},
  });
}

const qpaths = (g: CrateGraph) => g.nodes.map((n) => n.qpath).sort();

test('cfg: predicates for x86_64-unknown-linux-gnu, features and build-script names', () => {
  const cfg = new Cfg({ features: ['std'], names: ['has_atomics'] });
  assert.equal(cfg.holds('unix'), true);
  assert.equal(cfg.holds('windows'), false);
  assert.equal(cfg.holds('all(target_os = "linux", target_pointer_width = "64", target_arch = "x86_64", target_env = "gnu")'), true);
  assert.equal(cfg.holds('any(target_os = "macos", target_family = "wasm")'), false);
  assert.equal(cfg.holds('not(any(test, doc, miri))'), true);
  // the dev profile by default (as cargo build/check and rust-analyzer), the release profile when asked
  assert.equal(cfg.holds('debug_assertions'), true);
  assert.equal(new Cfg({ features: [], release: true }).holds('debug_assertions'), false);
  assert.equal(cfg.holds('all(feature = "std", not(feature = "alloc"))'), true);
  assert.equal(cfg.holds('target_has_atomic = "64"'), true);
  assert.equal(cfg.holds('has_atomics'), true);
  assert.equal(cfg.holds('accessible(::std::x)'), false);
  assert.deepEqual(cfg.attrs(['cfg_attr(feature = "std", path = "a.rs", macro_export)', 'cfg_attr(test, path = "b.rs")']).added, ['path = "a.rs"', 'macro_export']);
  assert.equal(cfg.attrs(['cfg_attr(unix, cfg(windows))']).active, false);
  assert.deepEqual(buildScriptCfgs('println!("cargo:rustc-cfg=has_x"); println!("cargo:rustc-cfg=no_y"); println!("cargo:rustc-cfg=crate_no_z");'), ['has_x']);
  // a cfg set when a probe enabling unstable features compiles is off (a stable compiler rejects `#![feature]`);
  // the build script's other cfgs are unaffected
  const unstable = `const PROBE: &str = r#"
        #![feature(provide_any)]
        use std::any::Provider;
    "#;
    fn main() {
        match compile_probe() {
            Some(status) if status.success() => println!("cargo:rustc-cfg=provide_any"),
            _ => {}
        }
        println!("cargo:rustc-cfg=has_z");
    }`;
  assert.deepEqual(buildScriptCfgs(unstable), ['has_z']);
  assert.deepEqual(buildScriptCfgs(unstable.replace('#![feature(provide_any)]', '')), ['has_z', 'provide_any']);
  // autocfg's probes are taken as succeeding, under the names autocfg emits
  const autocfg = `let ac = autocfg::new();
    if ac.probe_type("i128") { autocfg::emit("has_i128"); }
    ac.emit_expression_cfg("1u32.reverse_bits()", "has_reverse_bits");
    ac.emit_sysroot_crate("std");
    ac.emit_has_path("std::ptr::addr_of");
    ac.emit_rustc_version(1, 36);`;
  assert.deepEqual(buildScriptCfgs(autocfg), ['has_i128', 'has_reverse_bits', 'has_std', 'has_std__ptr__addr_of', 'rustc_1_36']);
});

test('features: default expanded through [features]; dep: and dep/feat enable optional deps; selections as cargo', async () => {
  const { pkg } = await readCrateDir(fixture);
  assert.ok(pkg);
  assert.deepEqual(activeFeatures(pkg), ['alloc', 'default', 'std']);
  assert.deepEqual(activeFeatures(pkg, { noDefaultFeatures: true }), []);
  // `dep:helper` enables the dependency without a feature of that name; `fancy/x` enables fancy's implicit feature
  assert.deepEqual(activeFeatures(pkg, { noDefaultFeatures: true, features: ['extra'] }), ['extra', 'fancy']);
  assert.deepEqual(activeFeatures(pkg, { allFeatures: true }), ['alloc', 'default', 'extra', 'fancy', 'nightly', 'std']);
});

test('cfg twins: one module per path, the inactive twin never read; cfg_attr(path) picks the file; inactive items dropped', async () => {
  const g = await extract();
  assert.deepEqual(g.problems, []);
  assert.deepEqual(g.files.map((f) => f.path).sort(), ['src/lib.rs', 'src/ser.rs', 'src/with_std.rs']);
  const q = qpaths(g);
  assert.equal(q.filter((p) => p === 'cfgs::ser').length, 1, 'ser twin once');
  assert.equal(q.filter((p) => p === 'cfgs::ser::to_string').length, 1);
  for (const present of ['cfgs::imp::chosen', 'cfgs::nightly_or_debug', 'cfgs::on_unix', 'cfgs::linux64', 'cfgs::atomics', 'cfgs::Mode::Plain', 'cfgs::Engine::base']) {
    assert.ok(q.includes(present), `${present} active`);
  }
  for (const absent of ['cfgs::imp::other', 'cfgs::on_windows', 'cfgs::fallback', 'cfgs::Mode::Extra', 'cfgs::Engine::extra', 'cfgs::helper_call', 'cfgs::tests', 'cfgs::unit_test']) {
    assert.ok(!q.includes(absent), `${absent} inactive`);
  }
  assert.equal(new Set(g.nodes.map((n) => n.id)).size, g.nodes.length, 'ids unique');
  // the call inside a `#[cfg(feature = "extra")]` statement is gone with it
  const run = g.nodes.find((n) => n.qpath === 'cfgs::Engine::run')!;
  assert.deepEqual(g.edges.filter((e) => e.src === run.id && e.kind === 'calls').map((e) => e.dstPath), ['cfgs::Engine::base']);
  // the re-export under cfg(feature = "std") gives the twin's function its public path
  assert.deepEqual(g.nodes.find((n) => n.qpath === 'cfgs::ser::to_string')!.publicPaths, ['cfgs::ser::to_string', 'cfgs::to_string']);
});

test('cfg: other feature selections switch the twins and the members', async () => {
  const bare = await extract({ noDefaultFeatures: true });
  assert.deepEqual(bare.files.map((f) => f.path).sort(), ['src/lib.rs', 'src/ser.rs', 'src/without_std.rs']);
  const q = qpaths(bare);
  assert.ok(q.includes('cfgs::imp::other') && !q.includes('cfgs::imp::chosen'));
  assert.equal(bare.nodes.find((n) => n.qpath === 'cfgs::ser')!.visibility, '', 'the private twin');
  assert.deepEqual(bare.nodes.find((n) => n.qpath === 'cfgs::ser::to_string')!.publicPaths, []);

  const extra = qpaths(await extract({ features: ['extra'] }));
  for (const p of ['cfgs::Mode::Extra', 'cfgs::Engine::extra', 'cfgs::helper_call']) assert.ok(extra.includes(p), `${p} with extra`);
});

test('cfg: the dev profile by default (debug_assertions on: the debug twin), the release profile on request', async () => {
  const calls = (g: CrateGraph, from: string) => {
    const src = g.nodes.find((n) => n.qpath === from);
    assert.ok(src, `${from} present`);
    return g.edges.filter((e) => e.src === src.id && e.kind === 'calls').map((e) => `${e.dstPath}:${e.line}`).sort();
  };
  const lines = (await readFile(path.join(fixture, 'src', 'lib.rs'), 'utf8')).split('\n');
  const lineOf = (text: string, from = 0) => lines.findIndex((l, i) => i >= from && l.includes(text)) + 1;
  const debugTwin = lineOf('#[cfg(debug_assertions)]') + 1;
  const releaseTwin = lineOf('#[cfg(not(debug_assertions))]') + 1;
  const dev = await extract();
  const checks = dev.nodes.filter((n) => n.qpath === 'cfgs::Engine::check');
  assert.deepEqual(checks.map((n) => n.lineStart), [debugTwin], 'one check, the debug_assertions twin');
  assert.deepEqual(calls(dev, 'cfgs::Engine::check'), [`cfgs::Engine::base:${debugTwin + 1}`]);
  assert.ok(qpaths(dev).includes('cfgs::nightly_or_debug'));

  const release = await extract({}, true);
  assert.deepEqual(release.nodes.filter((n) => n.qpath === 'cfgs::Engine::check').map((n) => n.lineStart), [releaseTwin], 'one check, the release twin');
  assert.deepEqual(calls(release, 'cfgs::Engine::check'), []);
  assert.ok(!qpaths(release).includes('cfgs::nightly_or_debug'));
  // the caller's edge names the same path either way
  assert.deepEqual(calls(release, 'cfgs::Engine::checked').map((c) => c.split(':').slice(0, -1).join(':')), ['cfgs::Engine::base', 'cfgs::Engine::check']);
});
