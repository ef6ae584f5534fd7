// Name resolution, public paths, impl paths and method calls (src/extract/resolve/)
// on the fixture workspace test/extract/fixtures/resolve: each construct with
// the graph the compiler would agree with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';
import { activeFeatures, extractCrate, readWorkspace, type CrateGraph, type DepCrate, type EdgeFact, type NodeFact } from '../../src/extract/index.ts';
import { summaryOf } from '../../src/ingest/deps.ts';

const fixture = path.join(repoRoot, 'test', 'extract', 'fixtures', 'resolve');

/** `parseErrors`: the files expected to report syntax errors (old2015's `try!`, which the grammar cannot read). */
async function extract(name: string, depCrates: DepCrate[] = [], parseErrors: string[] = [], dir = fixture): Promise<CrateGraph> {
  const ws = await readWorkspace(dir);
  const pkg = ws.packages.find((p) => p.name === name);
  assert.ok(pkg, `fixture package ${name}`);
  const g = await extractCrate({
    repo: 'r', krate: `${pkg.name}@${pkg.version}`, rootDir: pkg.dir, targets: pkg.targets.map((t) => t.path),
    deps: new Map(pkg.deps.map((d) => [d.localName, { krate: `${d.crateName}@1.0.0`, repo: 'r' }])), readFile: (p) => readFile(p),
    edition: pkg.edition, features: activeFeatures(pkg), buildScript: pkg.buildScript, depCrates,
  });
  assert.deepEqual(g.problems.map((p) => [p.kind, p.path]), parseErrors.map((f) => ['parse-errors', f]));
  return g;
}

function node(g: CrateGraph, qpath: string, kind?: string): NodeFact {
  const n = g.nodes.find((x) => x.qpath === qpath && (kind === undefined || x.kind === kind));
  assert.ok(n, `no node ${qpath}; have ${g.nodes.map((x) => x.qpath).join(', ')}`);
  return n;
}

/** The call edges from `from` on `line`, as `dstPath` (resolved) or `text` (not). */
function callsAt(g: CrateGraph, from: string, line: number): EdgeFact[] {
  const src = node(g, from).id;
  return g.edges.filter((e) => e.src === src && e.kind === 'calls' && e.line === line);
}

function callTo(g: CrateGraph, from: string, line: number, dstPath: string): EdgeFact {
  const hits = callsAt(g, from, line).filter((e) => e.dstPath === dstPath);
  assert.equal(hits.length, 1, `${from}:${line} -> ${dstPath}; have ${callsAt(g, from, line).map((e) => `${e.dstPath} (${e.unresolvedReason ?? 'ok'})`).join(', ')}`);
  return hits[0]!;
}

test('public paths: pub use chains, renames, globs (items and enum variants) and pub modules, as rustdoc names them', async () => {
  const g = await extract('names');
  assert.deepEqual(node(g, 'names::imp::Engine').publicPaths, ['names::Engine', 'names::Renamed']);
  assert.deepEqual(node(g, 'names::inner::deep::deep_fn').publicPaths, ['names::deep_fn', 'names::inner::deep::deep_fn']);
  assert.deepEqual(node(g, 'names::inner::Level::High').publicPaths, ['names::facade::Lvl::High', 'names::inner::High', 'names::inner::Level::High']);
  assert.deepEqual(node(g, 'names::imp::helper').publicPaths, ['names::facade::helper']);
  assert.deepEqual(node(g, 'names::shout').publicPaths, ['names::shout'], '#[macro_export] at the crate root');
  // a #[macro_export] macro written in a submodule is a crate-root item: `pub use whisper as murmur;` names it
  assert.deepEqual(node(g, 'names::whisper').publicPaths, ['names::murmur', 'names::whisper']);
  // private: not reachable, not re-exported
  assert.deepEqual(node(g, 'names::inner::deep::private_fn').publicPaths, []);
  assert.deepEqual(node(g, 'names::imp').publicPaths, []);
  // a function re-exported over its private module of the same name: the fn has the path, the module none
  assert.deepEqual(node(g, 'names::memchr::memchr').publicPaths, ['names::memchr']);
  assert.deepEqual(node(g, 'names::memchr', 'module').publicPaths, []);
});

test('names: type and value namespaces apart, body-local use, re-exported names, glob-imported variants', async () => {
  const g = await extract('names');
  const ids = (q: string, kind?: string) => node(g, q, kind).id;
  // `Thing()` is the function, not the struct of the same name
  assert.equal(callTo(g, 'names::entry', 26, 'names::Thing').dst, ids('names::Thing', 'fn'));
  assert.notEqual(ids('names::Thing', 'fn'), ids('names::Thing', 'struct'));
  assert.equal(callTo(g, 'names::entry', 25, 'names::memchr::memchr').dst, ids('names::memchr::memchr'));
  assert.equal(callTo(g, 'names::helper_user', 32, 'names::imp::helper').dst, ids('names::imp::helper'));
  assert.equal(callTo(g, 'names::entry', 27, 'names::inner::deep::deep_fn').dst, ids('names::inner::deep::deep_fn'));
  const pick = node(g, 'names::inner::pick');
  assert.equal(pick.typeInfo, '{"r":"names::inner::Level"}');
});

test('edition 2015: use paths are crate-relative, ::path is the crate root', async () => {
  const g = await extract('old2015');
  const read = node(g, 'old2015::de::read').id;
  const calls = callsAt(g, 'old2015::ser::write', 5);
  assert.deepEqual(calls.map((e) => [e.dstPath, e.dst === read]), [['old2015::de::read', true], ['old2015::de::read', true], ['old2015::de::read', true]]);
  const uses = g.edges.filter((e) => e.kind === 'uses').map((e) => e.dstPath);
  assert.deepEqual(uses, ['old2015::de::read', 'old2015::de']);
});

test('impls: self types and traits resolved, trait generic arguments keep From<&str> and From<usize> apart', async () => {
  const g = await extract('calls');
  const a = node(g, '<calls::Ref as std::convert::From<&str>>::from');
  const b = node(g, '<calls::Ref as std::convert::From<usize>>::from');
  assert.notEqual(a.id, b.id);
  assert.ok(!g.nodes.some((n) => n.qpath.includes('crate::')), 'no crate:: left in a path');
  assert.equal(node(g, 'calls::<calls::Ref as std::convert::From<&str>>').typeInfo, '{"self":"calls::Ref","trait":"std::convert::From<&str>"}');
  // the argument's type picks the impl; a qualified path names it
  assert.equal(callTo(g, 'calls::conversions', 105, '<calls::Ref as std::convert::From<usize>>::from').dst, b.id);
  assert.equal(callTo(g, 'calls::conversions', 105, '<calls::Ref as std::convert::From<&str>>::from').dst, a.id);
});

test('method calls: self, Self::, parameters through &, &mut, Box, Rc, Arc; inherent before trait', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::Square::twice', 50, 'calls::Square::new').dispatch, 'static');
  assert.deepEqual(callsAt(g, 'calls::Square::twice', 50).filter((e) => e.dst === area).length, 2, 'self.area() and Self::new(1).area()');
  const params = callsAt(g, 'calls::by_param', 61);
  assert.deepEqual(params.map((e) => e.dst === area), [true, true, true, true, true]);
  // the edge sits on the method's name token
  assert.deepEqual(params.map((e) => e.col), [7, 18, 29, 40, 51]);
});

test('method calls: lets (typed, constructor, struct literal), fields, chains through ? and unwrap, closures and loops', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  const poke = node(g, 'calls::Inner::poke').id;
  assert.deepEqual(callsAt(g, 'calls::by_let', 68).map((e) => e.dst), [area, area, area, poke]);
  assert.equal(callTo(g, 'calls::by_chain', 72, 'calls::Square::area').dst, area);
  assert.equal(callTo(g, 'calls::by_chain', 73, 'calls::Inner::poke').dst, poke);
  assert.equal(callTo(g, 'calls::by_closure', 89, 'calls::Square::area').dst, area);
  assert.equal(callTo(g, 'calls::by_closure', 90, 'calls::Inner::poke').dst, poke);
  assert.deepEqual([96, 99].map((l) => callTo(g, 'calls::by_loop', l, 'calls::Square::area').dst), [area, area]);
  // std methods are named, not guessed: no target, the reason says where they are
  const sum = callTo(g, 'calls::by_closure', 89, 'std::slice::Iter::sum');
  assert.deepEqual([sum.dst, sum.unresolvedReason], [null, 'in the standard library']);
  // a chain over lines: each call on its own name token's line
  assert.equal(callTo(g, 'calls::chained', 113, 'calls::Inner::poke').col, 10);
});

test('closure parameters typed from the callee\'s Fn bound (a method\'s where clause, a function\'s impl Fn); std atomics\' values', async () => {
  const g = await extract('calls');
  assert.equal(callTo(g, 'calls::by_signature', 130, 'calls::Inner::poke').dst, node(g, 'calls::Inner::poke').id);
  assert.equal(callTo(g, 'calls::by_signature', 132, 'calls::Square::area').dst, node(g, 'calls::Square::area').id);
  // `AtomicUsize::load` gives a usize, whose methods are std's
  assert.equal(callTo(g, 'calls::atomics', 139, 'std::primitive::usize::count_ones').unresolvedReason, 'in the standard library');
});

test('method calls: trait default methods inherited (static), through a bound or dyn (dynamic)', async () => {
  const g = await extract('calls');
  const describe = node(g, 'calls::Shape::describe').id;
  const traitArea = node(g, 'calls::Shape::area').id;
  const byDefault = callTo(g, 'calls::by_default', 77, 'calls::Shape::describe');
  assert.deepEqual([byDefault.dst, byDefault.dispatch], [describe, 'static']);
  const bound = callTo(g, 'calls::by_bound', 81, 'calls::Shape::area');
  assert.deepEqual([bound.dst, bound.dispatch], [traitArea, 'dynamic']);
  const dyn = callTo(g, 'calls::by_dyn', 85, 'calls::Shape::describe');
  assert.deepEqual([dyn.dst, dyn.dispatch], [describe, 'dynamic']);
  // in the trait's own default method, `self` is bounded by the trait
  assert.equal(callTo(g, 'calls::Shape::describe', 22, 'calls::Shape::area').dispatch, 'dynamic');
});

test('method probe: at each autoderef step by value, & then &mut, with this crate\'s blanket impls and inherited default methods; a trait argument that is not the method\'s', async () => {
  const g = await extract('calls');
  const id = (q: string) => node(g, q).id;
  // b: &mut Bytes0 — `remaining(&self)` first fits `&(&mut Bytes0)`: the blanket impl for &mut T (rustc's pick)
  assert.equal(callTo(g, 'calls::autoref', 314, '<&mut T as calls::Buf0>::remaining').dst, id('<&mut T as calls::Buf0>::remaining'));
  // `chunk_len(&mut self)` fits `&mut Bytes0` by value: Bytes0's impl inherits the trait's default, before the blanket's
  assert.equal(callTo(g, 'calls::autoref', 314, 'calls::Buf0::chunk_len').dst, id('calls::Buf0::chunk_len'));
  // Dist<usize>'s usize is the result, not the argument's type: Weighted's own impl, not the blanket one for &D
  assert.equal(callTo(g, 'calls::pick', 337, '<calls::Weighted as calls::Dist<usize>>::sample').dst, id('<calls::Weighted as calls::Dist<usize>>::sample'));
  // a type a where predicate names is that type, not a parameter: in an impl's self type and as a value in a body
  node(g, '<calls::Wrap0 as calls::Dist<std::option::Option<T>>>::sample');
  assert.equal(callTo(g, 'calls::gen_one', 364, '<calls::Std0 as calls::Dist<u8>>::sample').dst, id('<calls::Std0 as calls::Dist<u8>>::sample'));
  // a receiver of type `X::Sampler` (X bounded by a trait declaring `type Sampler: Sampler0`): Sampler0's method
  const draw = callTo(g, 'calls::Uni::once', 381, 'calls::Sampler0::draw');
  assert.deepEqual([draw.dst, draw.dispatch], [id('calls::Sampler0::draw'), 'dynamic']);
});

test('method calls into dependencies: a trait of one dependency implemented for another\'s type, for Option<T> and Box<T>; its default methods', async () => {
  const dep = await extract('dep');
  const depSummary = summaryOf('dep@1.0.0', 'r', dep);
  const ext = await extract('ext', [depSummary]);
  const extSummary = summaryOf('ext@1.0.0', 'r', ext);
  const g = await extract('user', [depSummary, extSummary]);
  const id = (graph: CrateGraph, qpath: string) => node(graph, qpath).id;
  const into = (line: number, qpath: string) => {
    const e = callTo(g, 'user::run', line, qpath);
    assert.equal(e.dst, id(ext, qpath));
    assert.equal(e.dstKrate, 'ext@1.0.0');
  };
  into(5, '<dep::engine::Engine as ext::Show>::show'); // ext's impl for dep's type, found though neither crate is the caller's
  into(6, '<std::option::Option as ext::Show>::show'); // a dependency's impl for a std type
  into(7, '<std::boxed::Box as ext::Show>::show'); // Box<Engine>: the impl for Box at the first autoderef step, not Engine's
  into(8, 'ext::Show::shout'); // a default method the impl inherits
  // path calls through type aliases (this crate's, of a dependency's type; an alias of it; the dependency's own)
  const depNew = id(dep, 'dep::engine::Engine::new');
  for (const [line, text] of [[17, 'Eng::new'], [18, 'dep::Alias::new'], [19, 'Eng2::new']] as const) {
    assert.deepEqual(callsAt(g, 'user::aliased', line).filter((e) => e.dstPath.endsWith('::new')).map((e) => e.dst), [depNew], `${text} at ${line}`);
  }
  // a dependency's blanket impl of a trait in scope, over a same-named method of a trait the module does not import
  const blanketSpan = id(ext, '<T as ext::Spanned>::span');
  assert.deepEqual(callsAt(g, 'user::spans::at', 27).map((e) => [e.dst, e.dstKrate]), [[blanketSpan, 'ext@1.0.0'], [blanketSpan, 'ext@1.0.0']]);
  const isMatch = id(dep, 'dep::engine::Engine::is_match');
  // a type of a crate not loaded (its impls unknown): a trait in scope that merely declares the method is no
  // answer (ripgrep's regex::bytes::Regex::find_at was credited to grep_matcher's Matcher::find_at): the method
  // call is left unresolved with the reason, the path call keeps its path in that crate
  const unloaded = callsAt(g, 'user::unloaded::via_trait', 41).filter((e) => !e.dstPath.startsWith('std'));
  assert.ok(!unloaded.some((e) => e.dstKrate === 'ext@1.0.0'), `no edge into ext's Show; have ${unloaded.map((e) => e.dstPath).join(', ')}`);
  const show = unloaded.find((e) => e.dstPath === '.show');
  assert.deepEqual([show?.dst, show?.unresolvedReason],
    [null, 'names::Engine is of names@1.0.0, which is not in the lake: its methods are unknown; ext::Show in scope declares show, no impl of it for the type is known']);
  assert.deepEqual(unloaded.filter((e) => e.dstPath !== '.show').map((e) => [e.dstPath, e.dstKrate]), [['names::Engine::shout', 'names@1.0.0']]);
  // a dependency's `pub use` of another crate's item: stored on its module (type_info x), followed by dependants
  assert.equal(JSON.parse(node(ext, 'ext').typeInfo ?? '{}').x.Machine, 'dep::engine::Engine');
  assert.deepEqual(callsAt(g, 'user::through_reexport', 32).filter((e) => e.dstPath.endsWith('::new')).map((e) => [e.dstPath, e.dst]), [['dep::engine::Engine::new', depNew]]);
  assert.deepEqual(callsAt(g, 'user::through_reexport', 33).map((e) => e.dst), [isMatch, isMatch]);
  assert.deepEqual(callsAt(g, 'user::aliased', 19).filter((e) => e.dstPath.endsWith('is_match')).map((e) => e.dst), [isMatch, isMatch]);
});

test('impls written in bodies are items: children of their fn (or of the module for `const _`), members apart per body, calls from their own methods', async () => {
  const g = await extract('calls');
  const local = node(g, 'calls::local_impls::<Visitor as calls::Visit>', 'impl');
  assert.equal(local.parent, node(g, 'calls::local_impls').id);
  assert.equal(local.lineStart, 151);
  const visit = node(g, 'calls::local_impls::<Visitor as calls::Visit>::visit', 'method');
  assert.equal(visit.parent, local.id);
  // a second body's impl of the same header is another item; a cfg(test) one is not there
  node(g, 'calls::other_local_impls::<Visitor as calls::Visit>::visit', 'method');
  assert.ok(!g.nodes.some((n) => n.name === 'never'), 'cfg(test) impl in a body dropped');
  // the local type is not the module's `Visitor`: no member of the module's type
  assert.ok(!g.nodes.some((n) => n.qpath.includes('<calls::Visitor as')), 'local self type not resolved from the module');
  // the call inside the nested method is its own, not the enclosing fn's
  assert.equal(callTo(g, 'calls::local_impls::<Visitor as calls::Visit>::visit', 153, 'calls::helper').dst, node(g, 'calls::helper').id);
  assert.equal(callsAt(g, 'calls::local_impls', 153).length, 0);
  // `const _: () = { impl … };` puts its impl in the module
  const anon = node(g, 'calls::<calls::Square as calls::Visit>', 'impl');
  assert.equal(anon.parent, node(g, 'calls').id);
  assert.equal(callTo(g, '<calls::Square as calls::Visit>::visit', 180, 'calls::Square::area').dst, node(g, 'calls::Square::area').id);
});

test('edition 2015: `try!(e)` unwraps e\'s Result for the method called on it (the grammar reads try as a keyword)', async () => {
  // its own workspace: the grammar reports `try!` as a syntax error, which the resolve workspace's tests do not expect
  const g = await extract('try2015', [], ['src/lib.rs'], path.join(repoRoot, 'test', 'extract', 'fixtures', 'try2015'));
  assert.equal(callTo(g, 'try2015::by_try_macro', 14, 'try2015::Cell::get').dst, node(g, 'try2015::Cell::get').id);
  assert.equal(callTo(g, 'try2015::by_try_macro', 14, 'try2015::make').dst, node(g, 'try2015::make').id);
});

test('method calls: receivers typed from if/else branches, match arms (a diverging arm skipped) and unsafe blocks', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  const at = callsAt(g, 'calls::by_branches', 192).filter((e) => e.dstPath.endsWith('::area'));
  assert.deepEqual(at.map((e) => e.dst), [area, area, area, area]);
});

test('method calls: std wrappers\' field 0 (Wrapping<T>.0 is T) and the operand of ! and - as receivers', async () => {
  const g = await extract('calls');
  assert.equal(callTo(g, 'calls::by_operators', 211, 'calls::Square::area').dst, node(g, 'calls::Square::area').id);
  assert.equal(callTo(g, 'calls::by_operators', 211, 'calls::Flag::get').dst, node(g, 'calls::Flag::get').id);
});

test('path calls: a std trait\'s method called by path on a crate type (Display::fmt(&self.0, f)) is that type\'s impl member', async () => {
  const g = await extract('calls');
  const e = callTo(g, '<calls::Shown as std::fmt::Display>::fmt', 224, '<calls::Square as std::fmt::Display>::fmt');
  assert.equal(e.dst, node(g, '<calls::Square as std::fmt::Display>::fmt').id);
});

test('closure parameters typed from a `&mut dyn FnMut(A)` parameter when the closure is passed as `&mut |a| …`', async () => {
  const g = await extract('calls');
  assert.equal(callTo(g, 'calls::by_dyn_closure', 236, 'calls::Square::area').dst, node(g, 'calls::Square::area').id);
});

test('method calls: a trait method\'s `Self::X` result on a bounded receiver is bounded by `type X: Bound` (dynamic)', async () => {
  const g = await extract('calls');
  const e = callTo(g, 'calls::by_projection', 251, 'calls::Sink::done');
  assert.deepEqual([e.dst, e.dispatch], [node(g, 'calls::Sink::done').id, 'dynamic']);
});

test('method calls: through RefCell::borrow_mut\'s guard and a slice\'s split_first_mut', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.deepEqual(callsAt(g, 'calls::by_cell', 256).filter((e) => e.dstPath === 'calls::Square::area').map((e) => e.dst), [area, area]);
});

test('method calls: a local declared without a value (or as None) is typed by a later assignment', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::by_assignment', 268, 'calls::Square::area').dst, area);
  assert.equal(callTo(g, 'calls::by_assignment', 270, 'calls::Square::area').dst, area);
});

test('path calls: `T::X::f()` with T: Trait declaring `type X: Bound` names Bound\'s f (dynamic)', async () => {
  const g = await extract('calls');
  const e = callTo(g, 'calls::by_assoc_path', 284, 'calls::Maker::make');
  assert.deepEqual([e.dst, e.dispatch], [node(g, 'calls::Maker::make').id, 'dynamic']);
});

test('calls of values: a fn pointer field\'s, a fn pointer\'s and an `Fn() -> T` closure\'s result types the method called on it; the value call is no item\'s edge', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::by_fn_pointer', 397, 'calls::Square::area').dst, area);
  assert.equal(callTo(g, 'calls::by_fn_pointer', 397, 'calls::vtable').dst, node(g, 'calls::vtable').id);
  assert.equal(callTo(g, 'calls::by_fn_pointer', 399, 'calls::Square::area').dst, area, 'Some(s) of an Option<Square> a fn pointer returns');
  assert.equal(callTo(g, 'calls::by_fn_pointer', 402, 'calls::Inner::poke').dst, node(g, 'calls::Inner::poke').id);
  assert.equal(callTo(g, 'calls::by_fn_pointer', 402, 'calls::Square::area').dst, area);
  // `f()` / `g(4)` call locals: no target, even though the crate has no item of that name to confuse them with
  for (const local of ['f', 'g']) {
    const e = callTo(g, 'calls::by_fn_pointer', 402, local);
    assert.deepEqual([e.dst, e.unresolvedReason], [null, 'a local value called (fn pointer or closure)']);
  }
  // the fn pointer type is a type of its own in what dependants read (type_info), written back as it reads
  assert.equal(node(g, 'calls::VTable').typeInfo, '{"f":[["make","fn(u32) -> calls::Square"],["pick","fn(&calls::Square, u8) -> std::option::Option<calls::Square>"]]}');
});

test('patterns: `Err(e)` binds the error type of the scrutinee\'s Result; a `let` under an inactive cfg shadows nothing', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::by_err_arm', 409, 'calls::Square::area').dst, area);
  assert.equal(callTo(g, 'calls::by_cfg_let', 419, 'calls::Square::area').dst, area);
});

test('bindings: a match arm\'s value sees its pattern\'s names; a `let` is visible to the end of its block only', async () => {
  const g = await extract('calls');
  assert.equal(callTo(g, 'calls::by_arm_value', 431, 'calls::Inner::poke').dst, node(g, 'calls::Inner::poke').id);
  assert.equal(callTo(g, 'calls::by_arm_value', 433, 'calls::Square::area').dst, node(g, 'calls::Square::area').id);
});

test('patterns: positions count `_` (tuples, tuple structs, closure parameters) and, after `..`, from the end', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::by_positions', 444, 'calls::Square::area').dst, area, '|&(_, sq)| over enumerate()');
  const at = callsAt(g, 'calls::by_positions', 448).filter((e) => e.dstPath.endsWith('::area'));
  assert.deepEqual(at.map((e) => [e.col, e.dst]), [[11, area], [22, area], [33, area], [60, area]]);
});

test('iterating: a Result yields its Ok value, flatten the items\' items, an IntoIterator-bounded parameter its Item; <T as Trait>::Name through T\'s impl', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::by_iterating', 496, 'calls::Square::area').dst, area, 'flat_map to Result<Vec<Square>>, then flatten');
  assert.equal(callTo(g, 'calls::by_iterating', 499, 'calls::Square::area').dst, area, 'I: IntoIterator<Item = Square>');
  assert.equal(callTo(g, 'calls::by_iterating', 501, 'calls::BagIter::peek_area').dst, node(g, 'calls::BagIter::peek_area').id, 'the impl for Bag, not for &Bag');
});

test('method calls: Extend<A>::extend picks the impl whose A the argument iterates (a fn path passed to map gives its result)', async () => {
  const g = await extract('calls');
  const sq = '<calls::Sink2 as std::iter::Extend<calls::Square>>::extend';
  const inner = '<calls::Sink2 as std::iter::Extend<calls::Inner>>::extend';
  assert.equal(callTo(g, 'calls::by_extend', 520, sq).dst, node(g, sq).id);
  assert.equal(callTo(g, 'calls::by_extend', 521, inner).dst, node(g, inner).id);
});

test('patterns: `&pat` binds through the reference (the tuple a closure returns then picks Extend<(&A, &B)> or Extend<(A, B)>)', async () => {
  const g = await extract('calls');
  const refs = '<calls::Sink3 as std::iter::Extend<(&calls::Square, &u8)>>::extend';
  const owned = '<calls::Sink3 as std::iter::Extend<(calls::Square, u8)>>::extend';
  assert.equal(callTo(g, 'calls::by_ref_pattern', 536, refs).dst, node(g, refs).id);
  assert.equal(callTo(g, 'calls::by_ref_pattern', 537, owned).dst, node(g, owned).id);
});

test('method calls into dependencies: a dependency trait\'s `Self::X` result on a bounded receiver has the bounds of its `type X: Bound;` (type_info b)', async () => {
  const dep = await extract('dep');
  assert.equal(node(dep, 'dep::Writer::Map').typeInfo, '{"a":"_","b":["dep::MapWriter"]}');
  const depSummary = summaryOf('dep@1.0.0', 'r', dep);
  const ext = await extract('ext', [depSummary]);
  const g = await extract('user', [depSummary, summaryOf('ext@1.0.0', 'r', ext)]);
  for (const [line, m] of [[48, 'entry'], [49, 'end']] as const) {
    const e = callTo(g, 'user::write_all', line, `dep::MapWriter::${m}`);
    assert.deepEqual([e.dst, e.dispatch, e.dstKrate], [node(dep, `dep::MapWriter::${m}`).id, 'dynamic', 'dep@1.0.0']);
  }
});

test('method calls: std\'s iterator adapters on a crate type implementing Iterator yield its Item', async () => {
  const g = await extract('calls');
  const area = node(g, 'calls::Square::area').id;
  assert.equal(callTo(g, 'calls::by_user_iterator', 553, 'calls::Square::area').dst, area);
  assert.equal(callTo(g, 'calls::by_user_iterator', 555, 'calls::Square::area').dst, area);
});

test('path calls: among several From/FromIterator impls, the argument\'s type with references stripped, or the item it iterates', async () => {
  const g = await extract('calls');
  const at = (from: string, line: number, q: string) => assert.equal(callTo(g, from, line, q).dst, node(g, q).id);
  at('<calls::Blob as std::iter::FromIterator<&u8>>::from_iter', 582, '<calls::Blob as std::iter::FromIterator<u8>>::from_iter');
  at('calls::by_from', 587, '<calls::Blob as std::convert::From<&[u8]>>::from');
  at('calls::by_from', 588, '<calls::Blob as std::convert::From<std::vec::Vec<u8>>>::from');
});

test('method calls: Extend<(K, V)> of a generic type takes an iterator of (T, ()), Extend<(&K, &V)> does not', async () => {
  const g = await extract('calls');
  const q = '<calls::Map2 as std::iter::Extend<(K, V)>>::extend';
  assert.equal(callTo(g, 'calls::by_generic_extend', 603, q).dst, node(g, q).id);
});

test('method calls: std lock guards deref to the value; Arc::clone, mem::replace, get_unchecked and a raw pointer\'s as_ref keep the pointee', async () => {
  const g = await extract('calls');
  const notify = node(g, 'calls::Waiters::notify').id;
  const count = node(g, 'calls::Waiters::count').id;
  assert.equal(callTo(g, 'calls::Hub::wake', 630, 'calls::Waiters::notify').dst, notify);
  assert.equal(callTo(g, 'calls::Hub::wake', 631, 'calls::Waiters::count').dst, count);
  assert.equal(callTo(g, 'calls::Hub::wake', 631, 'calls::Waiters::notify').dst, notify);
  const counts = callsAt(g, 'calls::Hub::pointers', 637).filter((e) => e.dstPath === 'calls::Waiters::count');
  assert.deepEqual(counts.map((e) => e.dst), [count, count, count]);
  assert.equal(callTo(g, 'calls::Hub::unchecked', 641, 'calls::Waiters::count').dst, count); // a slice's get_unchecked
});

test('method calls into dependencies: fields and methods through a dependency\'s Deref impl of its generic wrapper (Target = T)', async () => {
  const dep = await extract('dep');
  const depSummary = summaryOf('dep@1.0.0', 'r', dep);
  const ext = await extract('ext', [depSummary]);
  const g = await extract('user', [depSummary, summaryOf('ext@1.0.0', 'r', ext)]);
  const wait = node(g, 'user::Slot::wait').id;
  assert.deepEqual(callsAt(g, 'user::through_deref', 73).map((e) => [e.dstPath, e.dst]), [['user::Slot::wait', wait], ['user::Slot::wait', wait]]);
});

test('method calls: a trait impl for exactly the receiver\'s type over a blanket impl of the same trait for &G; a bound\'s Id = T binding', async () => {
  const g = await extract('calls');
  const source = node(g, 'calls::Edge2::source').id;
  const edges = node(g, "<&calls::Graph2 as calls::IntoEdges2>::edges2").id;
  assert.equal(callTo(g, 'calls::weighted', 711, 'calls::Edge2::source').dst, source);
  assert.deepEqual(callsAt(g, 'calls::Graph2::sources', 696).map((e) => e.dst), [edges]);
  assert.equal(callTo(g, 'calls::Graph2::sources', 697, 'calls::Edge2::source').dst, source);
  assert.equal(callTo(g, 'calls::Graph2::sources', 699, 'calls::Edge2::source').dst, source);
});

test('method calls: items of a bounded parameter\'s associated type (`type Edges: Iterator<Item = Self::EdgeRef>`, EdgeRef of a supertrait), where G::Id: Idx, G::Edges as a type', async () => {
  const g = await extract('calls');
  const target = node(g, 'calls::EdgeRefT::target').id;
  const index = node(g, 'calls::Idx::index').id;
  for (const [from, line] of [['calls::walk', 742], ['calls::walk', 744], ['calls::walk2', 751]] as const) {
    const t = callTo(g, from, line, 'calls::EdgeRefT::target');
    assert.deepEqual([t.dst, t.dispatch], [target, 'dynamic'], `${from}:${line}`);
    assert.equal(callTo(g, from, line, 'calls::Idx::index').dst, index, `${from}:${line}`);
  }
});

test('path calls into dependencies: a dependency type\'s provided trait method its impl does not write (through a renaming use) is the trait\'s', async () => {
  const dep = await extract('dep');
  const depSummary = summaryOf('dep@1.0.0', 'r', dep);
  const ext = await extract('ext', [depSummary]);
  const g = await extract('user', [depSummary, summaryOf('ext@1.0.0', 'r', ext)]);
  const e = callTo(g, 'user::provided', 82, 'dep::Seeded::from_other');
  assert.equal(e.dst, node(dep, 'dep::Seeded::from_other').id);
  assert.equal(e.dstKrate, 'dep@1.0.0');
});

test('method calls: `<P::X as Trait>::Y` is the trait\'s projection bounded as declared; a closure of a trait method on a bounded receiver gets `Self::Item` as its projection', async () => {
  const g = await extract('calls');
  const next = node(g, 'calls::Fallible::next').id;
  const tryFold = node(g, 'calls::Fallible::try_fold').id;
  const into = node(g, 'calls::IntoFallible::into_fallible').id;
  const flatten = '<calls::FFlatten as calls::Fallible>';
  // `it` from `&mut self.cur`, a field of type Option<<I::Item as IntoFallible>::IntoIter>: its bound Fallible's next
  const e = callTo(g, `${flatten}::next`, 856, 'calls::Fallible::next');
  assert.deepEqual([e.dst, e.dispatch], [next, 'dynamic']);
  // `self.it.try_fold(acc, |acc, v| …)` with I: Fallible: v is I::Item, which `where I::Item: IntoFallible` bounds
  assert.deepEqual([callTo(g, `${flatten}::try_fold`, 873, 'calls::IntoFallible::into_fallible').dst, callTo(g, `${flatten}::try_fold`, 874, 'calls::Fallible::try_fold').dst], [into, tryFold]);
});

test('method calls: a typed receiver `self: &Self` probes like `&self`: on `&&Csr` the blanket impl for `&G` is found before the inherent method of Csr', async () => {
  const g = await extract('calls');
  const blanket = "<&G as calls::Counted>::count";
  assert.equal(callTo(g, '<&calls::Csr2 as calls::Adjacent>::adjacent', 914, blanket).dst, node(g, blanket).id);
  // inside Csr2's own impl, the path call names the inherent method
  assert.equal(callTo(g, '<calls::Csr2 as calls::Counted>::count', 895, 'calls::Csr2::count').dst, node(g, 'calls::Csr2::count', 'method').id);
});

test('method calls: a trait the body cannot see (not imported, not the impl\'s own trait) gives no method at a probe step; the impl\'s own trait does', async () => {
  const g = await extract('calls');
  // `self.weight()` on &mut Stable: Weights' `impl for &mut G` fits the autoref step, but Weights is not in scope
  assert.equal(callTo(g, 'calls::Stable::retain', 940, 'calls::Stable::weight').dst, node(g, 'calls::Stable::weight', 'method').id);
  // inside `impl weights::Weights for Tree`, Weights is in scope (rustc's current trait) without a `use`
  const leaf = '<calls::Leaf as calls::weights::Weights>::weight';
  assert.equal(callTo(g, '<calls::Tree as calls::weights::Weights>::weight', 964, leaf).dst, node(g, leaf).id);
});

test('macro arguments: `<T as Trait>::f()` is a qualified call (T\'s bound), and a chain on its value types through it', async () => {
  const g = await extract('calls');
  const max = callTo(g, 'calls::at_most', 975, 'calls::IndexLike::max');
  assert.deepEqual([max.dst, max.dispatch, max.origin], [node(g, 'calls::IndexLike::max').id, 'dynamic', 'macro-arg']);
  assert.equal(callTo(g, 'calls::at_most', 975, 'calls::IndexLike::index').dst, node(g, 'calls::IndexLike::index').id);
});

test('facades: `pub extern crate dep as x;` and `pub use dep as y;` are names of their module (a path through them resolves there and in dependants, stored as type_info x)', async () => {
  const dep = await extract('dep');
  const depSummary = summaryOf('dep@1.0.0', 'r', dep);
  const ext = await extract('ext', [depSummary]);
  const start = node(dep, 'dep::start').id;
  // in the facade crate itself: `crate::engine_crate::start` (the extern crate alias is an item of its module) and `self::depx::start`
  assert.deepEqual(callsAt(ext, 'ext::through_own_facade', 59).filter((e) => e.dstPath.endsWith('start')).map((e) => e.dst), [start, start]);
  assert.deepEqual(JSON.parse(node(ext, 'ext').typeInfo ?? '{}').x, { Machine: 'dep::engine::Engine', depx: 'dep', engine_crate: 'dep' });
  // in a dependant, through the facade loaded from the lake; the compiler's callees (MIR of a copy of dep, ext and user,
  // `cargo +nightly rustc --lib -- -Zunpretty=mir`, read by hand): 87 dep::Engine::new, 88 dep::start and dep::Engine::is_match
  const g = await extract('user', [depSummary, summaryOf('ext@1.0.0', 'r', ext)]);
  assert.equal(callTo(g, 'user::through_facade', 87, 'dep::engine::Engine::new').dst, node(dep, 'dep::engine::Engine::new').id);
  assert.equal(callTo(g, 'user::through_facade', 88, 'dep::start').dst, start);
  assert.equal(callTo(g, 'user::through_facade', 88, 'dep::engine::Engine::is_match').dst, node(dep, 'dep::engine::Engine::is_match').id);
});

test('type aliases with generics: `?` on a dependency\'s `type Outcome<T, E = Failure> = Result<T, E>` keeps T; a defaulted parameter is its default, here and in dependants', async () => {
  const dep = await extract('dep');
  const depSummary = summaryOf('dep@1.0.0', 'r', dep);
  const ext = await extract('ext', [depSummary]);
  const g = await extract('user', [depSummary, summaryOf('ext@1.0.0', 'r', ext)]);
  // the compiler's callees (MIR of a copy of dep, ext and user, `cargo +nightly rustc --lib -- -Zunpretty=mir`, read by hand):
  // 95 dep::Engine::is_match twice (after `?` on dep::Outcome<Engine>), ext 74 and user 104 ext::Oops::code
  const isMatch = node(dep, 'dep::engine::Engine::is_match').id;
  assert.deepEqual(callsAt(g, 'user::through_alias', 95).filter((e) => e.dstPath.endsWith('is_match')).map((e) => e.dst), [isMatch, isMatch]);
  const code = node(ext, 'ext::Oops::code').id;
  assert.equal(callTo(ext, 'ext::own_alias', 74, 'ext::Oops::code').dst, code);
  assert.equal(callTo(g, 'user::alias_default', 104, 'ext::Oops::code').dst, code);
  // a summary stored before type_info g: the parameters in the order the aliased type names them
  const old = summaryOf('dep@1.0.0', 'r', dep);
  for (const n of old.nodes) if (n.typeInfo) { delete n.typeInfo.g; delete n.typeInfo.gd; }
  const g2 = await extract('user', [old, summaryOf('ext@1.0.0', 'r', ext)]);
  assert.deepEqual(callsAt(g2, 'user::through_alias', 95).filter((e) => e.dstPath.endsWith('is_match')).map((e) => e.dst), [isMatch, isMatch]);
});

test('value references: enum variants, unit structs and consts named by path in expressions and patterns are value_ref edges to them', async () => {
  const dep = await extract('dep');
  const ext = await extract('ext', [summaryOf('dep@1.0.0', 'r', dep)]);
  const src = node(ext, 'ext::walk').id;
  const refs = ext.edges.filter((e) => e.src === src && e.kind === 'value_ref').map((e) => `${e.line}:${e.col} ${e.dstPath} ${e.dst === null ? 'unresolved' : 'ok'}`);
  // the compiler's uses (read by hand from the nightly MIR of ext: each is a constant or a discriminant test at that span)
  assert.deepEqual(refs, [
    '100:15 ext::Walk::Quit ok', '100:29 ext::Walk::Quit ok', // the pattern and the value
    '101:15 ext::Walk::Skip ok', '101:36 ext::LIMIT ok', '101:51 ext::Walk::Continue ok',
    '103:28 ext::Unit ok',
    '104:31 ext::Walk::Quit ok',
  ]);
  // `Walk::Skip(1)` stays a call of the constructor; no value_ref besides it
  assert.equal(callTo(ext, 'ext::walk', 104, 'ext::Walk::Skip').dst, node(ext, 'ext::Walk::Skip').id);
  // bare names in patterns: a path pattern when they name a variant or const (through the body's `use Walk::*`), else a binding (no edge);
  // nightly builds ext with no warning (were LIMIT or Quit a binding, the arms after it would be unreachable)
  const bare = (fn: string) => ext.edges.filter((e) => e.src === node(ext, fn).id && e.kind === 'value_ref').map((e) => `${e.line}:${e.col} ${e.dstPath}`);
  assert.deepEqual(bare('ext::walk_glob'), ['113:9 ext::Walk::Quit', '113:16 ext::Walk::Continue', '114:9 ext::Walk::Skip']);
  assert.deepEqual(bare('ext::limit'), ['120:9 ext::LIMIT']);
});
