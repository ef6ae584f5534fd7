import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { readCrateDir, universeNodeId, type CrateGraph, type EdgeFact, type NodeFact } from '../../src/extract/index.ts';
import { extractPackage, samplePackage, sampleWorkspace } from './helpers.ts';

function node(g: CrateGraph, qpath: string): NodeFact {
  const n = g.nodes.find((x) => x.qpath === qpath);
  assert.ok(n, `no node ${qpath}; have ${g.nodes.map((x) => x.qpath).join(', ')}`);
  return n;
}

function edgesFrom(g: CrateGraph, qpath: string, kind: EdgeFact['kind']): EdgeFact[] {
  const src = node(g, qpath).id;
  return g.edges.filter((e) => e.src === src && e.kind === kind);
}

/** The edge to `dstPath` (the resolved path when resolution succeeded, else the text). */
function edgeTo(g: CrateGraph, from: string, kind: EdgeFact['kind'], dstPath: string): EdgeFact {
  const e = edgesFrom(g, from, kind).find((x) => x.dstPath === dstPath);
  assert.ok(e, `no ${kind} edge ${from} -> ${dstPath}; have ${edgesFrom(g, from, kind).map((x) => x.dstPath).join(', ')}`);
  return e;
}

test('extractCrate: every item kind with its qpath, file, lines, visibility and signature', async () => {
  const g = await extractPackage(await samplePackage('shapes'));
  assert.deepEqual(g.problems, []);
  assert.deepEqual(g.files.map((f) => [f.path, f.parseStatus]), [
    ['src/lib.rs', 'ok'], ['src/geometry.rs', 'ok'], ['src/geometry/angle.rs', 'ok'], ['src/util/mod.rs', 'ok'],
    ['src/extra/special.rs', 'ok'], ['src/inner/nested.rs', 'ok'],
  ]);
  const kinds = Object.fromEntries(g.nodes.map((n) => [n.qpath, n.kind]));
  assert.deepEqual(kinds, {
    'shapes': 'module',
    'shapes::geometry': 'module', // geometry.rs, its child in geometry/angle.rs
    'shapes::geometry::angle': 'module',
    'shapes::geometry::angle::Angle': 'struct',
    'shapes::geometry::angle::<shapes::geometry::angle::Angle as std::fmt::Debug>': 'impl',
    '<shapes::geometry::angle::Angle as std::fmt::Debug>::fmt': 'method',
    'shapes::geometry::Point': 'struct',
    'shapes::geometry::impl shapes::geometry::Point': 'impl',
    'shapes::geometry::Point::origin': 'method',
    'shapes::geometry::distance': 'fn',
    'shapes::util': 'module', // util/mod.rs
    'shapes::util::twice': 'fn',
    'shapes::util::Bits': 'union',
    'shapes::special': 'module', // #[path = "extra/special.rs"]
    'shapes::special::special': 'fn',
    'shapes::inner': 'module', // inline
    'shapes::inner::deep': 'fn',
    'shapes::inner::nested': 'module', // inline module's file child: src/inner/nested.rs
    'shapes::inner::nested::nested_fn': 'fn',
    'shapes::Shape': 'trait',
    'shapes::Shape::area': 'trait_item',
    'shapes::Shape::describe': 'trait_item',
    'shapes::Circle': 'struct',
    'shapes::Kind': 'enum',
    'shapes::Kind::Round': 'variant',
    'shapes::Kind::Flat': 'variant',
    'shapes::impl shapes::Circle': 'impl',
    'shapes::Circle::new': 'method',
    'shapes::<shapes::Circle as shapes::Shape>': 'impl',
    '<shapes::Circle as shapes::Shape>::area': 'method',
    'shapes::largest': 'fn',
    'shapes::square': 'macro',
    'shapes::uses_everything': 'fn',
    'shapes::LIMIT': 'const',
    'shapes::NAME': 'static',
    'shapes::Pair': 'type',
  });
  const nested = node(g, 'shapes::inner::nested::nested_fn');
  assert.equal(nested.file, 'src/inner/nested.rs');
  const newFn = node(g, 'shapes::Circle::new');
  assert.deepEqual([newFn.file, newFn.lineStart, newFn.lineEnd, newFn.visibility], ['src/lib.rs', 37, 39, 'pub']);
  assert.equal(newFn.signature, 'pub fn new(center: P, radius: f64) -> Circle');
  assert.equal(newFn.parent, node(g, 'shapes::impl shapes::Circle').id);
  assert.equal(node(g, 'shapes::largest').signature, 'pub fn largest<T: Shape>(items: &[T]) -> Option<&T>');
  assert.equal(node(g, 'shapes::util').visibility, '');
  assert.equal(new Set(g.nodes.map((n) => n.id)).size, g.nodes.length, 'ids unique');
  assert.ok(g.nodes.every((n) => /^[0-9a-f]{32}$/.test(n.id)));
  assert.equal(new Set(g.edges.map((e) => e.id)).size, g.edges.length, 'edge ids unique');
});

test('extractCrate: contains and impl edges', async () => {
  const g = await extractPackage(await samplePackage('shapes'));
  const contains = edgesFrom(g, 'shapes::Kind', 'contains').map((e) => e.dstPath);
  assert.deepEqual(contains, ['shapes::Kind::Round', 'shapes::Kind::Flat']);
  const implOf = edgeTo(g, 'shapes::<shapes::Circle as shapes::Shape>', 'impl_of_trait', 'shapes::Shape');
  assert.equal(implOf.dst, node(g, 'shapes::Shape').id);
  const implFor = edgeTo(g, 'shapes::<shapes::Circle as shapes::Shape>', 'impl_for_type', 'shapes::Circle');
  assert.equal(implFor.dst, node(g, 'shapes::Circle').id);
  assert.equal(implFor.dstKrate, 'shapes@0.2.0');
  const debug = edgeTo(g, 'shapes::geometry::angle::<shapes::geometry::angle::Angle as std::fmt::Debug>', 'impl_of_trait', 'std::fmt::Debug');
  assert.deepEqual([debug.dst, debug.dstKrate], [null, null]);
});

test('extractCrate: calls resolve through the module tree, use groups, globs and renames', async () => {
  const g = await extractPackage(await samplePackage('shapes'));
  const id = (q: string) => node(g, q).id;
  const from = 'shapes::uses_everything';
  // `use geometry::{angle::Angle, Point as P}`: a group with a rename
  assert.equal(edgeTo(g, from, 'calls', 'shapes::geometry::Point::origin').dst, id('shapes::geometry::Point::origin'));
  assert.equal(edgeTo(g, from, 'type_ref', 'shapes::geometry::angle::Angle').dst, id('shapes::geometry::angle::Angle'));
  // `use util::*`: a glob into this crate
  assert.equal(edgeTo(g, from, 'calls', 'shapes::util::twice').dst, id('shapes::util::twice'));
  // Type::method, crate::, inline module, macro
  assert.equal(edgeTo(g, from, 'calls', 'shapes::Circle::new').dst, id('shapes::Circle::new'));
  assert.equal(edgeTo(g, from, 'calls', 'shapes::geometry::distance').dst, id('shapes::geometry::distance'));
  assert.equal(edgeTo(g, from, 'calls', 'shapes::inner::deep').dst, id('shapes::inner::deep'));
  assert.equal(edgeTo(g, from, 'calls', 'shapes::square').dst, id('shapes::square'));
  // super:: from an inline module and from a file below it; #[path] file using crate::
  assert.equal(edgeTo(g, 'shapes::inner::deep', 'calls', 'shapes::util::twice').dst, id('shapes::util::twice'));
  assert.equal(edgeTo(g, 'shapes::inner::nested::nested_fn', 'calls', 'shapes::inner::deep').dst, id('shapes::inner::deep'));
  assert.equal(edgeTo(g, 'shapes::special::special', 'calls', 'shapes::util::twice').dst, id('shapes::util::twice'));
  // a method call on a local whose type follows from its initialiser: the trait impl's method
  const m = edgeTo(g, from, 'calls', '<shapes::Circle as shapes::Shape>::area');
  assert.deepEqual([m.dst, m.dstKrate, m.dispatch], [id('<shapes::Circle as shapes::Shape>::area'), 'shapes@0.2.0', 'static']);
  // the same target twice from one item: distinct edges, ordered occurrences
  assert.equal(edgesFrom(g, from, 'calls').filter((e) => e.dstPath === 'shapes::geometry::Point::origin').length, 2);
  // uses edges: one per leaf of the group, the glob as module::*
  const uses = edgesFrom(g, 'shapes', 'uses').map((e) => [e.dstPath, e.dst !== null]);
  assert.deepEqual(uses, [
    ['shapes::geometry::angle::Angle', true], ['shapes::geometry::Point', true], ['shapes::util', true], ['minidep::Thing', false],
  ]);
  // type refs in struct fields and signatures, generics skipped
  assert.equal(edgeTo(g, 'shapes::Circle', 'type_ref', 'shapes::geometry::Point').dst, id('shapes::geometry::Point'));
  assert.deepEqual(edgesFrom(g, 'shapes::largest', 'type_ref').map((e) => e.dstPath), ['std::option::Option']);
});

test('extractCrate: paths into a renamed dependency name the real crate and its locked version', async () => {
  const g = await extractPackage(await samplePackage('shapes'));
  const call = edgeTo(g, 'shapes::uses_everything', 'calls', 'minidep::helper');
  assert.equal(call.dstKrate, 'minidep@0.1.0');
  assert.equal(call.dst, universeNodeId('minidep@0.1.0', 'value', 'minidep::helper'));
  const ty = edgeTo(g, 'shapes::uses_everything', 'type_ref', 'minidep::Thing'); // `use mdep::Thing as DepThing`
  assert.equal(ty.dst, universeNodeId('minidep@0.1.0', 'type', 'minidep::Thing'));

  // ...and the ids match what extracting the dependency into the universe gives.
  const vendored = await readCrateDir(path.join(sampleWorkspace, 'vendor', 'minidep-0.1.0'));
  const dep = await extractPackage(vendored.pkg!, '@universe');
  assert.equal(node(dep, 'minidep::helper').id, call.dst);
  assert.equal(node(dep, 'minidep::Thing').id, ty.dst);
  assert.equal(node(dep, 'minidep::mini').kind, 'macro');
});

test('extractCrate: a workspace member calling a sibling gets the sibling ids; bin targets are separate roots', async () => {
  const shapes = await extractPackage(await samplePackage('shapes'));
  const app = await extractPackage(await samplePackage('app'), 'sample', ['shapes']);
  assert.deepEqual(app.nodes.map((n) => n.qpath), ['app', 'app::main', 'app[bin tool]', 'app[bin tool]::main']);
  const newCall = edgeTo(app, 'app::main', 'calls', 'shapes::Circle::new');
  assert.deepEqual([newCall.dstPath, newCall.dstKrate], ['shapes::Circle::new', 'shapes@0.2.0']);
  assert.equal(newCall.dst, node(shapes, 'shapes::Circle::new').id);
  assert.equal(edgeTo(app, 'app::main', 'calls', 'shapes::geometry::distance').dst, node(shapes, 'shapes::geometry::distance').id);
  assert.equal(edgeTo(app, 'app[bin tool]::main', 'calls', 'minidep::helper').dstKrate, 'minidep@0.1.0');
});

test('ids: moving a function to another line or file of the same module keeps ids; renaming changes one', async () => {
  const s = scratch('mimir-ids-');
  try {
    const dir = path.join(s.dir, 'ws');
    cpSync(sampleWorkspace, dir, { recursive: true });
    const before = await extractPackage(await samplePackage('shapes', dir));
    const lib = path.join(dir, 'crates', 'shapes', 'src', 'lib.rs');
    const text = readFileSync(lib, 'utf8');
    // move `largest` to the end of the file, after blank lines
    const start = text.indexOf('pub fn largest');
    const end = text.indexOf('}\n', start) + 2;
    writeFileSync(lib, text.slice(0, start) + text.slice(end) + '\n\n\n' + text.slice(start, end));
    // util/mod.rs -> util.rs: another file, same module path
    renameSync(path.join(dir, 'crates', 'shapes', 'src', 'util', 'mod.rs'), path.join(dir, 'crates', 'shapes', 'src', 'util.rs'));
    const moved = await extractPackage(await samplePackage('shapes', dir));
    assert.deepEqual(moved.problems, []);
    const key = (g: CrateGraph) => g.nodes.map((n) => `${n.id} ${n.qpath}`).sort();
    assert.deepEqual(key(moved), key(before));
    const largest = node(moved, 'shapes::largest');
    assert.ok(largest.lineStart > node(before, 'shapes::largest').lineStart);
    assert.equal(node(moved, 'shapes::util::twice').file, 'src/util.rs');
    assert.deepEqual(moved.edges.map((e) => e.id).sort(), before.edges.map((e) => e.id).sort());

    writeFileSync(lib, readFileSync(lib, 'utf8').replace('pub fn largest', 'pub fn biggest'));
    const renamed = await extractPackage(await samplePackage('shapes', dir));
    const gone = before.nodes.filter((n) => !renamed.nodes.some((m) => m.id === n.id)).map((n) => n.qpath);
    const added = renamed.nodes.filter((n) => !before.nodes.some((m) => m.id === n.id)).map((n) => n.qpath);
    assert.deepEqual([gone, added], [['shapes::largest'], ['shapes::biggest']]);
  } finally {
    s.cleanup();
  }
});
