// All targets (issue 9 part 5): a package's tests/, examples/, benches/, build.rs and its
// [[test]]/[[example]]/[[bench]] entries are crates of their own (`name@version/<kind>/<target>`),
// flagged (targetKindOf, file column target_kind), indexed by default, resolving into the
// package's lib; cargo's discovery rules (autotests, edition 2015) are followed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { readWorkspace } from '../../src/extract/index.ts';
import { ingest } from '../../src/ingest/index.ts';
import { callers } from '../../src/query/index.ts';
import { targetKindOf } from '../../src/log/schema.ts';
import { scratch } from '../helpers.ts';
import { freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

function write(root: string, files: Record<string, string>): string {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), text);
  }
  return root;
}

const PKG: Record<string, string> = {
  'Cargo.toml': '[package]\nname = "tgt"\nversion = "0.1.0"\nedition = "2021"\n\n[[test]]\nname = "custom"\npath = "checks/custom.rs"\n\n[[example]]\nname = "named"\n',
  'src/lib.rs': 'pub fn helper(x: u32) -> u32 { x + 1 }\n',
  'tests/it.rs': 'mod common;\nuse tgt::helper;\n#[test]\nfn it_works() { assert_eq!(helper(common::one()), 2); }\n#[cfg(test)]\nfn only_in_tests() {}\n',
  'tests/common/mod.rs': 'pub fn one() -> u32 { 1 }\n',
  'tests/two.rs': '#[test]\nfn two() { tgt::helper(2); }\n',
  'checks/custom.rs': '#[test]\nfn custom() { tgt::helper(3); }\n',
  'examples/demo.rs': 'fn main() { println!("{}", tgt::helper(4)); }\n',
  'examples/multi/main.rs': 'mod part;\nfn main() { part::go(); }\n',
  'examples/multi/part.rs': 'pub fn go() { tgt::helper(5); }\n',
  'examples/named.rs': 'fn main() {}\n',
  'benches/speed.rs': 'fn main() { tgt::helper(6); }\n',
  'build.rs': 'fn main() { println!("cargo:rerun-if-changed=build.rs"); }\n',
};

test('cargo target discovery: tests, examples, benches (explicit and discovered) and the build script, apart from lib and bins', async () => {
  const s = scratch('mimir-targets-');
  cleanups.push(s.cleanup);
  const ws = await readWorkspace(write(path.join(s.dir, 'tgt'), PKG));
  assert.deepEqual(ws.problems, []);
  const pkg = ws.packages[0]!;
  assert.deepEqual(pkg.targets.map((t) => `${t.kind}:${t.name}:${t.path}`), ['lib:tgt:src/lib.rs']);
  assert.deepEqual(pkg.otherTargets.map((t) => `${t.kind}:${t.name}:${t.path}`), [
    'test:custom:checks/custom.rs', 'test:it:tests/it.rs', 'test:two:tests/two.rs',
    'example:named:examples/named.rs', 'example:demo:examples/demo.rs', 'example:multi:examples/multi/main.rs',
    'bench:speed:benches/speed.rs', 'build:build-script-build:build.rs',
  ]);

  // autotests = false keeps only the explicit [[test]]; edition 2015 with an explicit entry does the same
  const off = write(path.join(s.dir, 'off'), { ...PKG, 'Cargo.toml': PKG['Cargo.toml']!.replace('edition = "2021"', 'edition = "2021"\nautotests = false\nautobenches = false\nbuild = false') });
  const o = (await readWorkspace(off)).packages[0]!;
  assert.deepEqual(o.otherTargets.map((t) => t.path), ['checks/custom.rs', 'examples/named.rs', 'examples/demo.rs', 'examples/multi/main.rs']);
  const old = write(path.join(s.dir, 'old'), { ...PKG, 'Cargo.toml': PKG['Cargo.toml']!.replace('edition = "2021"', 'edition = "2015"') });
  const e = (await readWorkspace(old)).packages[0]!;
  assert.deepEqual(e.otherTargets.filter((t) => t.kind === 'test').map((t) => t.path), ['checks/custom.rs']);
  assert.deepEqual(e.otherTargets.filter((t) => t.kind === 'bench').map((t) => t.path), ['benches/speed.rs']);
});

test('ingest indexes every target as its own flagged crate, resolving into the lib; a removed test file removes its crate', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const root = write(path.join(lake.dir, 'tgt'), PKG);
  const r = await ingest(lake.log, root, { repo: 'demo', workers: 0 });
  assert.equal(r.problems.length, 0, JSON.stringify(r.problems));
  assert.equal(r.crates, 9);
  const files = await lake.log.state('file', eq('repo', 'demo'));
  const krates = [...new Set([...files.values()].map((f) => f['krate'] as string))].sort();
  assert.deepEqual(krates, [
    'tgt@0.1.0', 'tgt@0.1.0/bench/speed', 'tgt@0.1.0/build/build-script-build', 'tgt@0.1.0/example/demo', 'tgt@0.1.0/example/multi',
    'tgt@0.1.0/example/named', 'tgt@0.1.0/test/custom', 'tgt@0.1.0/test/it', 'tgt@0.1.0/test/two',
  ]);
  assert.deepEqual(krates.map((k) => targetKindOf(k)), [null, 'bench', 'build', 'example', 'example', 'example', 'test', 'test', 'test']);
  // the flag is stored on the crate's Cargo.toml row
  const manifests = [...files.values()].filter((f) => f['path'] === 'Cargo.toml').map((f) => [f['krate'], f['target_kind'] ?? null]);
  assert.deepEqual(new Map(manifests as [string, string | null][]).get('tgt@0.1.0/test/it'), 'test');
  assert.equal(new Map(manifests as [string, string | null][]).get('tgt@0.1.0'), null);
  // a test's own module file belongs to it, paths relative to the package
  assert.ok([...files.values()].some((f) => f['krate'] === 'tgt@0.1.0/test/it' && f['path'] === 'tests/common/mod.rs'));
  assert.ok([...files.values()].some((f) => f['krate'] === 'tgt@0.1.0/example/multi' && f['path'] === 'examples/multi/part.rs'));
  // items of a test crate are named by the target (cfg(test) is on for tests)
  const its = await lake.log.state('node', and(eq('repo', 'demo'), eq('krate', 'tgt@0.1.0/test/it')));
  const qpaths = [...its.values()].map((n) => n['qpath']).sort();
  assert.ok(qpaths.includes('it::it_works') && qpaths.includes('it::only_in_tests') && qpaths.includes('it::common::one'), qpaths.join(', '));
  // calls from every target into the lib resolve to the lib's item
  const c = await callers(lake.log, 'tgt::helper');
  const from = [...new Set(c.refs.map((x) => x.krate))].sort();
  assert.deepEqual(from, ['tgt@0.1.0/bench/speed', 'tgt@0.1.0/example/demo', 'tgt@0.1.0/example/multi', 'tgt@0.1.0/test/custom', 'tgt@0.1.0/test/it', 'tgt@0.1.0/test/two']);

  // unchanged: nothing parsed again; a deleted test file takes its crate with it
  const again = await ingest(lake.log, root, { repo: 'demo', workers: 0 });
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
  assert.equal(again.unchangedCrates, 9);
  rmSync(path.join(root, 'tests', 'two.rs'));
  const gone = await ingest(lake.log, root, { repo: 'demo', workers: 0 });
  assert.equal(gone.removedCrates, 1);
  const left = await lake.log.state('node', and(eq('repo', 'demo'), eq('krate', 'tgt@0.1.0/test/two')));
  assert.equal(left.size, 0);
});
