// The truth bench's comparison logic on real compiler output: rustdoc JSON and
// MIR of test/fixtures/truth/crate (a crate written for these tests, built
// with nightly by bench/truth/fixture.ts; the tests need no toolchain).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';
import { callOf, parseMir } from '../../bench/truth/mir.ts';
import { crateModel, oracleCalls, type CrateModel, type OracleCall } from '../../bench/truth/calls.ts';
import { parseCallee } from '../../bench/truth/callee.ts';
import { syntaxOf, writtenCall } from '../../bench/truth/classify.ts';
import { checkCalls, docTwin, matchItems, type CallContext } from '../../bench/truth/compare.ts';
import { CallersIndex, DefIndex, type MEdge, type MNode } from '../../bench/truth/mimir.ts';
import { offlineManifest } from '../../bench/truth/oracle.ts';
import { docModel, publicPaths, slimDoc, type OracleItem } from '../../bench/truth/rustdoc.ts';
import { blockEnd, CrateSource } from '../../bench/truth/source.ts';
import { fromMirType, fromRustdoc, renderType } from '../../bench/truth/types.ts';

const dir = path.join(repoRoot, 'test', 'fixtures', 'truth');
const mirText = readFileSync(path.join(dir, 'truthfix.mir'), 'utf8');

async function fixture(): Promise<{ model: CrateModel; src: CrateSource; calls: OracleCall[] }> {
  const doc = slimDoc(JSON.parse(readFileSync(path.join(dir, 'truthfix.rustdoc.json'), 'utf8')) as Record<string, unknown>);
  const src = await CrateSource.open(path.join(dir, 'crate'));
  const model = crateModel(doc.name, 'truthfix@0.1.0', docModel(doc, src));
  const calls = oracleCalls(parseMir(mirText), { local: model, crates: new Map([[model.name, model]]) }, src);
  return { model, src, calls };
}

function item(model: CrateModel, kind: string, name: string, line?: number): OracleItem {
  const hit = [...model.doc.items.values()].find((i) => i.kind === kind && i.name === name && (line === undefined || i.line === line));
  assert.ok(hit, `expected a rustdoc item ${kind} ${name}${line ? ` at line ${line}` : ''}`);
  return hit;
}

test('mir: each body keeps its def path, and each call its callee, call span and name-token span', () => {
  const bodies = parseMir(mirText);
  const grow = bodies.find((b) => b.path === 'shapes::<impl at src/shapes.rs:15:1: 15:12>::grow');
  assert.ok(grow, 'the body of Circle::grow');
  assert.deepEqual(grow.calls.map((c) => c.callee), ['shapes::Circle::new']);
  assert.deepEqual(grow.calls[0]!.fnSpan, { file: 'src/shapes.rs', line: 25, col: 9, endLine: 25, endCol: 18 });
  const chain = bodies.find((b) => b.path === 'inner::chain')!;
  // a chain written over four lines: the call spans start at `c`, the name tokens are on their own lines
  assert.deepEqual(chain.calls.map((c) => [c.span!.line, c.fnSpan!.line]), [[54, 55], [54, 56], [54, 57]]);
  assert.ok(bodies.some((b) => b.kind === 'static' && b.path === 'inner::NAME'));
  assert.ok(bodies.some((b) => b.path === 'total::{closure#0}'));
});

test('mir: a const fn\'s CTFE copy (after `// MIR FOR CTFE`) is dropped, so its calls count once', () => {
  const body = (path: string) => [
    `fn ${path}() -> bool {`,
    '    let mut _0: bool;                    // return place in scope 0 at src/a.rs:3:22: 3:26',
    '    bb0: {',
    '        _0 = can::<T>() -> [return: bb1, unwind continue]; // scope 0 at src/a.rs:4:5: 4:14',
    '                                         // + span: src/a.rs:4:5: 4:12',
    '    }',
    '}',
  ];
  const text = [...body('lock_free'), '', '// MIR FOR CTFE', ...body('lock_free'), '', ...body('other')].join('\n');
  const bodies = parseMir(text);
  assert.deepEqual(bodies.map((b) => [b.path, b.calls.length]), [['lock_free', 1], ['other', 1]]);
});

test('items: an item under #[cfg(doc)] (rustdoc\'s twin of a build item) is recognised through its attributes and docs', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'truth-doctwin-'));
  try {
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src', 'lib.rs'), [
      '/// Docs.', '#[cfg(doc)]', '#[macro_export]', 'macro_rules! q { () => {}; }', '',
      '#[cfg(not(doc))]', '#[macro_export]', 'macro_rules! q { () => {}; }', '', '#[cfg(doc)]', 'fn a() {}', 'fn b() {}',
    ].join('\n'));
    const src = await CrateSource.open(dir);
    assert.equal(docTwin(src, 'src/lib.rs', 4), true);
    assert.equal(docTwin(src, 'src/lib.rs', 8), false);
    assert.equal(docTwin(src, 'src/lib.rs', 11), true);
    assert.equal(docTwin(src, 'src/lib.rs', 12), false, 'the attribute of the item above is not this one\'s');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('mir: only call statements are calls; a call through a value has no callee', () => {
  assert.equal(callOf('_5 = const "x";'), null);
  assert.equal(callOf('switchInt(move _3) -> [0: bb1, otherwise: bb2];'), null);
  assert.equal(callOf('drop(_1) -> [return: bb2, unwind: bb5];'), null);
  assert.deepEqual(callOf('_2 = move _5(move _3) -> [return: bb1, unwind continue];'), { callee: null });
  assert.deepEqual(callOf('_0 = <F as std::ops::FnOnce<(u8,)>>::call_once(move _1, move _2) -> unwind continue;'),
    { callee: '<F as std::ops::FnOnce<(u8,)>>::call_once' });
});

test('types: a type printed by MIR and the same type in rustdoc JSON render alike', () => {
  assert.equal(renderType(fromMirType("&'a mut std::vec::Vec<u8>")), '&mut Vec<u8>');
  assert.equal(renderType(fromRustdoc({ borrowed_ref: { lifetime: "'a", is_mutable: true, type: { resolved_path: { path: 'Vec', id: 1, args: { angle_bracketed: { args: [{ type: { primitive: 'u8' } }], constraints: [] } } } } } })), '&mut Vec<u8>');
  assert.equal(renderType(fromMirType("std::option::Option<&'_ [u32; 4]>")), 'Option<&[u32; _]>');
  assert.equal(renderType(fromMirType("&(dyn std::fmt::Debug + 'c)")), '&dyn Debug');
  assert.equal(renderType(fromMirType('(u8, std::string::String)')), '(u8, String)');
});

test('calls: a callee splits into trait call, inherent path or impl member', () => {
  assert.deepEqual(parseCallee("<shapes::Circle as shapes::Shape>::area"),
    { k: 'trait', self: 'shapes::Circle', trait: [{ name: 'shapes', args: null }, { name: 'Shape', args: null }], name: 'area' });
  const from = parseCallee("<value::Ref<'_> as std::convert::From<&str>>::from");
  assert.ok(from.k === 'trait' && from.trait[2]!.name === 'From' && from.trait[2]!.args === '<&str>');
  assert.deepEqual(parseCallee("std::option::Option::<&u32>::copied::<T>"),
    { k: 'path', segs: [{ name: 'std', args: null }, { name: 'option', args: null }, { name: 'Option', args: '<&u32>' }, { name: 'copied', args: '<T>' }] });
  const at = parseCallee('de::<impl at src/de.rs:3:1: 3:20>::m');
  assert.ok(at.k === 'path' && at.segs[1]!.name === '<impl at src/de.rs:3:1: 3:20>');
});

test('calls: written or not, and the syntax of a written call, from the text around the name token', () => {
  const text = 'let a = self.radius() + x.grow (1) + Circle::new::<u8>(2) + for_each;';
  assert.equal(writtenCall(text, text.indexOf('radius') + 6), true);
  assert.equal(writtenCall(text, text.indexOf('grow') + 4), true);
  assert.equal(writtenCall(text, text.indexOf('Circle::new') + 11), true);
  assert.equal(writtenCall(text, text.indexOf('for_each') + 8), false);
  assert.equal(syntaxOf(text, text.indexOf('radius')), 'self-method');
  assert.equal(syntaxOf(text, text.indexOf('grow')), 'method');
  assert.equal(syntaxOf(text, text.indexOf('Circle')), 'path');
  assert.equal(syntaxOf('myself.m()', 'myself.m()'.indexOf('m(')), 'method');
});

test('rustdoc: items are keyed by module, kind, file and line; derive and macro_rules output are told apart', async () => {
  const { model } = await fixture();
  const four = item(model, 'fn', 'four');
  assert.deepEqual([four.origin, four.file, four.line, four.modPath], ['macro', 'src/lib.rs', 40, 'truthfix']);
  // an item macro_rules! builds from its own tokens has the invocation's span, and so do its members;
  // an `$item:item` passed through keeps its own span: written
  const one = item(model, 'variant', 'One');
  assert.deepEqual([one.origin, one.line, one.endLine], ['macro', 78, 81]);
  assert.deepEqual([item(model, 'enum', 'Wrapped').origin, item(model, 'enum', 'Wrapped').line], ['written', 66]);
  const derived = [...model.doc.items.values()].filter((i) => i.origin === 'derive');
  assert.deepEqual(derived.map((i) => `${i.kind} ${i.name} ${i.line}`).sort(), ['impl  10', 'impl  10', 'method clone 10', 'method fmt 10']);
  // a file module starts after the file's leading comments, or at line 1
  const shapes = item(model, 'module', 'shapes');
  assert.deepEqual([shapes.file, shapes.line, shapes.altLine], ['src/shapes.rs', 3, 1]);
  assert.equal(item(model, 'module', 'inner').line, 42);
  // an impl's module comes from where it is written (rustdoc does not list impls in modules)
  assert.equal(item(model, 'method', 'grow').modPath, 'truthfix::shapes');
  assert.equal(item(model, 'trait_item', 'sides').modPath, 'truthfix::shapes');
  assert.equal(item(model, 'const', 'LIMIT').modPath, 'truthfix::inner');
  // inactive cfg (a feature off, cfg(test)) is not in the compiler's view
  assert.ok(![...model.doc.items.values()].some((i) => i.name === 'only_with_extra' || i.name === 'doubles'));
  assert.equal(model.doc.skipped.get('struct_field'), 2);
});

test('rustdoc: public paths are the def paths and every path a pub use (single or glob) makes', async () => {
  const { model } = await fixture();
  const p = publicPaths(model.doc);
  assert.ok(p.defPaths.has('truthfix::inner::describe'));
  assert.ok(p.defPaths.has('truthfix::shapes::Kind::Round'));
  assert.deepEqual([...p.reexports.keys()].sort(), ['truthfix::Circle', 'truthfix::Kind', 'truthfix::Kind::Flat', 'truthfix::Kind::Round', 'truthfix::Shape']);
  assert.deepEqual(p.reexports.get('truthfix::Circle'), [item(model, 'struct', 'Circle').id]);
});

test('calls: each call of the fixture gets its class, its caller and its target', async () => {
  const { model, calls } = await fixture();
  const at = (line: number, name: string, file = 'src/lib.rs') => {
    const c = calls.find((x) => x.file === file && x.line === line && x.name === name);
    assert.ok(c, `a call of ${name} at ${file}:${line}`);
    return c;
  };
  const ids = (c: OracleCall) => (c.target.k === 'item' ? [...c.target.ids, ...(c.target.also?.ids ?? [])] : []);
  const areaImpl = item(model, 'method', 'area', 34).id;
  const areaDecl = item(model, 'trait_item', 'area').id;
  assert.equal(at(25, 'new', 'src/shapes.rs').cls, 'path');
  assert.deepEqual(ids(at(25, 'new', 'src/shapes.rs')), [item(model, 'method', 'new').id]);
  assert.equal(at(29, 'radius', 'src/shapes.rs').cls, 'self-method');
  const ufcs = at(29, 'area', 'src/shapes.rs');
  assert.deepEqual([ufcs.cls, ids(ufcs)], ['path', [areaImpl, areaDecl]]);
  assert.equal(ufcs.caller, item(model, 'method', 'twice').id);
  // a receiver bounded by the trait: the trait's declaration
  assert.deepEqual([at(50, 'area').cls, ids(at(50, 'area'))], ['method', [areaDecl]]);
  assert.deepEqual([at(50, 'sides').cls, ids(at(50, 'sides'))], ['method', [item(model, 'trait_item', 'sides').id]]);
  // inside assert!'s arguments; the panic its expansion makes is not written
  assert.deepEqual([at(23, 'double').cls, at(23, 'double').macro], ['macro-arg', 'assert']);
  assert.equal(at(23, 'panic').cls, 'macro-expansion');
  assert.equal(at(19, 'into_iter').cls, 'desugar');
  assert.equal(at(19, 'next').cls, 'desugar');
  assert.equal(at(22, 'branch').cls, 'desugar');
  assert.equal(at(25, 'call').cls, 'indirect');
  // the body make_getter! generates: the call is written in the macro, the caller is the generated fn
  assert.deepEqual([at(35, 'double').cls, at(35, 'double').caller], ['macro-body', item(model, 'fn', 'four').id]);
  assert.ok(calls.filter((c) => c.file === 'src/shapes.rs' && c.line === 10).every((c) => c.cls === 'macro-body'));
  // a chain over lines: each call on its name token's line
  assert.deepEqual([55, 56, 57].map((l) => calls.find((c) => c.line === l)!.name), ['clone', 'grow', 'radius']);
  assert.equal(at(29, 'first').target.k, 'outside');
  // no trait arguments printed means the default (Self): `<[u8] as PartialEq>::eq` is core's, not the crate's
  // `impl PartialEq<Bytes> for [u8]`
  assert.deepEqual(at(63, 'eq', 'src/shapes.rs').target, { k: 'outside', krate: 'std' });
});

function node(id: string, kind: string, name: string, qpath: string, file: string, line: number, parent: string | null): MNode {
  return { id, repo: '@universe', krate: 'truthfix@0.1.0', kind, name, qpath, file, line, endLine: line, parent, origin: null, publicPaths: [] };
}

/** A small graph as Mimir might extract the fixture: a cfg'd-out fn kept, the macro's fn at its invocation. */
function graph(): MNode[] {
  return [
    node('root', 'module', 'truthfix', 'truthfix', 'src/lib.rs', 1, null),
    node('shapes', 'module', 'shapes', 'truthfix::shapes', 'src/shapes.rs', 1, 'root'),
    node('circle', 'struct', 'Circle', 'truthfix::shapes::Circle', 'src/shapes.rs', 11, 'shapes'),
    node('impl', 'impl', '', 'truthfix::shapes::impl Circle', 'src/shapes.rs', 15, 'shapes'),
    node('new', 'method', 'new', 'truthfix::shapes::Circle::new', 'src/shapes.rs', 16, 'impl'),
    node('grow', 'method', 'grow', 'truthfix::shapes::Circle::grow', 'src/shapes.rs', 24, 'impl'),
    node('double', 'fn', 'double', 'truthfix::double', 'src/lib.rs', 10, 'root'),
    node('extra', 'fn', 'only_with_extra', 'truthfix::only_with_extra', 'src/lib.rs', 15, 'root'),
    node('four', 'fn', 'four', 'truthfix::four', 'src/lib.rs', 40, 'root'),
    node('total', 'fn', 'total', 'truthfix::total', 'src/lib.rs', 17, 'root'),
    node('made', 'enum', 'Made', 'truthfix::Made', 'src/lib.rs', 78, 'root'),
    node('one', 'variant', 'One', 'truthfix::Made::One', 'src/lib.rs', 79, 'made'),
  ];
}

test('compare: items match on their key as a multiset; what the compiler does not have is a precision miss', async () => {
  const { model, src } = await fixture();
  const nodes = graph();
  const m = matchItems(model, nodes, new Map(nodes.map((n) => [n.id, n])), src);
  assert.equal(m.toNode.get(item(model, 'struct', 'Circle').id), 'circle');
  assert.equal(m.toNode.get(item(model, 'module', 'shapes').id), 'shapes', 'a file module at line 1 matches rustdoc\'s line 3');
  assert.equal(m.toNode.get(item(model, 'fn', 'four').id), 'four');
  assert.equal(m.toNode.get(item(model, 'method', 'grow').id), 'grow');
  assert.deepEqual(m.extra.map((e) => e.name), ['truthfix::only_with_extra']);
  assert.deepEqual(m.precision.get('fn|written'), { n: 2, of: 3 });
  assert.deepEqual(m.recall.get('fn|macro'), { n: 1, of: 1 });
  // a generated variant found on its own line, inside the invocation
  assert.deepEqual(m.recall.get('variant|macro'), { n: 1, of: 2 });
  assert.equal(m.toNode.get(item(model, 'variant', 'One').id), 'one');
  assert.equal(m.recall.get('method|derive')!.n, 0);
});

test('compare: a call site is right, wrong, unresolved or missing by the edge at its line from its caller', async () => {
  const { model, src, calls } = await fixture();
  const nodes = graph();
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const m = matchItems(model, nodes, byId, src);
  const edge = (id: string, srcId: string, dst: string | null, dstPath: string, file: string, line: number): MEdge =>
    ({ id, krate: 'truthfix@0.1.0', src: srcId, dst, dstPath, dstKrate: null, file, line });
  const edges = [
    edge('e1', 'grow', 'new', 'truthfix::shapes::Circle::new', 'src/shapes.rs', 25), // right
    edge('e2', 'total', 'four', 'truthfix::four', 'src/lib.rs', 20), // `double(*x)` resolved to another node: wrong
    edge('e3', 'total', null, 'parse_first', 'src/lib.rs', 22), // unresolved
    edge('e4', 'four', 'double', 'truthfix::double', 'src/lib.rs', 40), // in make_getter!'s body, at the invocation
  ];
  const edgesAt = new Map<string, MEdge[]>();
  const edgesFrom = new Map<string, MEdge[]>();
  for (const e of edges) {
    edgesAt.set(`${e.file}:${e.line}`, [e]);
    edgesFrom.set(e.src, [...(edgesFrom.get(e.src) ?? []), e]);
  }
  const defs = new DefIndex(nodes);
  const ctx: CallContext = {
    local: model, models: new Map([[model.name, model]]), matching: new Map([[model.name, m]]), krateOf: new Map([[model.name, model.krate]]),
    nodes: byId, edgesAt, edgesFrom, callers: new CallersIndex(edges, defs), callersMemo: new Map(),
  };
  const pick = calls.filter((c) => (c.file === 'src/shapes.rs' && c.line === 25) || (c.file === 'src/lib.rs' && [20, 22, 35].includes(c.line)));
  // double at 20 is misnamed by e2 (four): name differs, so it is missing, not wrong
  const f = checkCalls(pick, ctx);
  const path = f.inCrate.get('path')!;
  assert.deepEqual([path.get('right'), path.get('unresolved'), path.get('missing')], [1, 1, 1]);
  const e2named = edge('e2', 'total', 'four', 'truthfix::double', 'src/lib.rs', 20);
  edgesAt.set('src/lib.rs:20', [e2named]);
  const g = checkCalls(pick, ctx);
  assert.equal(g.inCrate.get('path')!.get('wrong'), 1);
  // the call make_getter! writes in `four`'s body: the compiler's line is in the macro, the edge at the invocation
  assert.deepEqual([...f.generated], [['right', 1]]);
  // `callers` lists Circle::new's one site (e1); double's site has no edge into it; parse_first has no node
  assert.deepEqual([f.callers.sites, f.callers.functions], [{ n: 1, of: 3 }, { n: 1, of: 3 }]);
});

test('mimir: def answers as src/query/def.ts does: exact qpath, then crate plus the longest tail, then a suffix', () => {
  const nodes = graph();
  const d = new DefIndex(nodes);
  assert.deepEqual(d.def('truthfix::shapes::Circle').hits.map((h) => h.id), ['circle']);
  assert.equal(d.def('truthfix::shapes::Circle').match, 'exact');
  const re = d.def('truthfix::Circle');
  assert.deepEqual([re.match, re.hits.map((h) => h.id)], ['suffix', ['circle']]);
  assert.deepEqual(d.def('Circle::new').hits.map((h) => h.id), ['new']);
  assert.equal(d.def('other::Circle').match, 'none');
  assert.deepEqual(d.def('a::b::new').hits, []);
});

test('oracle: the manifest loses dev-dependencies, test targets and optional dependencies that are not packaged', () => {
  const toml = [
    '[package]', 'name = "x"', 'version = "1.0.0"',
    '[dependencies]', 'a = "1"', 'gone = { version = "1", optional = true }',
    '[dev-dependencies]', 'b = "1"', '[[test]]', 'name = "t"',
    '[features]', 'default = ["gone"]', 'extra = ["dep:gone", "gone/std", "a/x"]',
    '[target."cfg(unix)".dev-dependencies]', 'c = "1"',
  ].join('\n');
  const out = offlineManifest(toml, (c) => c !== 'gone');
  assert.match(out, /\[workspace\]/);
  assert.doesNotMatch(out, /dev-dependencies|\[\[test\]\]|gone/);
  assert.match(out, /a\/x/);
});

test('source: a block ends at its closing brace, whatever strings, chars and comments hold', () => {
  const text = 'mod m {\n  const S: &str = "}{";\n  // }\n  /* } /* } */ */\n  let c = \'}\'; let l: &\'a u8;\n  let r = r#"}"#;\n}\nfn after() {}';
  assert.equal(blockEnd(text, 0), text.indexOf('}\nfn after'));
});

test('compare: an impl written in a fn body that rustdoc does not list is no precision extra, and its methods\' edges count for the fn', async () => {
  const { model, src, calls } = await fixture();
  const nodes = [
    ...graph(),
    node('bimpl', 'impl', '', 'truthfix::total::<V as Tr>', 'src/lib.rs', 18, 'total'),
    node('bm', 'method', 'visit', 'truthfix::total::<V as Tr>::visit', 'src/lib.rs', 19, 'bimpl'),
  ];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const m = matchItems(model, nodes, byId, src);
  assert.deepEqual(m.extra.map((e) => e.name), ['truthfix::only_with_extra']);
  assert.equal(m.bodyUnlisted, 2);
  // the compiler folds the nested body into `total`; the graph's edge is from the nested method
  const e: MEdge = { id: 'e3', krate: 'truthfix@0.1.0', src: 'bm', dst: null, dstPath: 'parse_first', dstKrate: null, file: 'src/lib.rs', line: 22 };
  const defs = new DefIndex(nodes);
  const ctx: CallContext = {
    local: model, models: new Map([[model.name, model]]), matching: new Map([[model.name, m]]), krateOf: new Map([[model.name, model.krate]]),
    nodes: byId, edgesAt: new Map([['src/lib.rs:22', [e]]]), edgesFrom: new Map([['bm', [e]]]), callers: new CallersIndex([e], defs), callersMemo: new Map(),
  };
  const f = checkCalls(calls.filter((c) => c.file === 'src/lib.rs' && c.line === 22), ctx);
  assert.deepEqual([...f.inCrate.get('path')!], [['unresolved', 1]]);
});
