import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { extractCrate, readCrateDir, type CrateGraph, type EdgeFact, type NodeFact } from '../../src/extract/index.ts';
import type { DepCrate } from '../../src/extract/resolve/summary.ts';

const fixtures = path.join(repoRoot, 'test', 'extract', 'fixtures', 'macros');

async function extract(dir: string, opts: { features?: string[]; depCrates?: DepCrate[] } = {}): Promise<CrateGraph> {
  const { pkg } = await readCrateDir(dir);
  assert.ok(pkg, `no package in ${dir}`);
  return extractCrate({
    repo: 'r', krate: `${pkg.name}@${pkg.version}`, rootDir: pkg.dir, targets: pkg.targets.map((t) => t.path),
    deps: new Map(pkg.deps.map((d) => [d.localName, { krate: `${d.crateName}@1.0.0` }])), readFile: (p) => readFile(p),
    edition: pkg.edition, features: opts.features ?? [], ...(opts.depCrates ? { depCrates: opts.depCrates } : {}),
  });
}

function nodes(g: CrateGraph, qpath: string): NodeFact[] {
  return g.nodes.filter((n) => n.qpath === qpath);
}

function node(g: CrateGraph, qpath: string): NodeFact {
  const found = nodes(g, qpath);
  assert.equal(found.length, 1, `want one node ${qpath}; have ${g.nodes.map((n) => n.qpath).join(', ')}`);
  return found[0]!;
}

/** A node as [file, line, col, origin]. */
function where(n: NodeFact): [string, number, number, string | null] {
  return [n.file, n.lineStart, n.col, n.origin];
}

/** Call edges as `dstPath@line:col origin` (origin `-` when written). */
function calls(g: CrateGraph, from: string): string[] {
  const src = node(g, from).id;
  return g.edges
    .filter((e: EdgeFact) => e.src === src && e.kind === 'calls' && !e.dstPath.endsWith('!') && !/^std::(assert|vec|format|write|matches|stringify|debug_assert|panic|assert_eq)$/.test(e.dstPath))
    .map((e) => `${e.dstPath}@${e.line}:${e.col} ${e.origin ?? '-'}`)
    .sort();
}

test('macros: a wrapper macro defined in the crate is expanded; the `mod` inside it is followed, its items keep their lines', async () => {
  const g = await extract(path.join(fixtures, 'wrappers'), { features: ['rt'] });
  assert.deepEqual(g.problems, []);
  const files = g.files.map((f) => f.path).sort();
  assert.ok(files.includes('src/runtime.rs'), `src/runtime.rs reached through cfg_rt!; files: ${files.join(', ')}`);
  assert.ok(!files.includes('src/net.rs'), 'cfg_net! items are under feature net, which is off');
  assert.deepEqual(where(node(g, 'wrappers::runtime')), ['src/runtime.rs', 1, 1, 'macro:cfg_rt']);
  assert.deepEqual(where(node(g, 'wrappers::runtime::Runtime')), ['src/runtime.rs', 1, 12, null]);
  assert.ok(nodes(g, 'wrappers::runtime::Runtime::new').length === 1, 'the module file is read whole');
  const uses = g.edges.filter((e) => e.kind === 'uses' && e.dstPath === 'wrappers::runtime::Runtime');
  assert.equal(uses.length, 1, 'the `pub use` inside the wrapper is a use of the module');
});

test('macros: cfg_if! without its definition keeps the branch the target selects', async () => {
  const g = await extract(path.join(fixtures, 'wrappers'), { features: ['rt'] });
  const files = g.files.map((f) => f.path);
  assert.ok(files.includes('src/unix/mod.rs'), 'the unix branch is followed');
  assert.ok(!files.includes('src/other.rs'), 'the else branch is not (x86_64-unknown-linux-gnu is unix)');
  assert.deepEqual(where(node(g, 'wrappers::unix::Fd')), ['src/unix/mod.rs', 1, 12, null]);
  assert.equal(g.expansion?.cfgIf, 1);
});

test('macros: an unknown macro whose tokens are items is taken as a wrapper, its items at their own lines', async () => {
  const g = await extract(path.join(fixtures, 'wrappers'), { features: ['rt'] });
  assert.deepEqual(where(node(g, 'wrappers::Wrapped')), ['src/lib.rs', 25, 16, 'macro:wrap']);
  assert.equal(g.expansion?.wrappers, 1);
});

test('macros: textual scope — #[macro_use] keeps a module\'s macros after it, a plain module drops them', async () => {
  const g = await extract(path.join(fixtures, 'wrappers'), { features: ['rt'] });
  // `later!` comes from `#[macro_use] mod macros;`; generated items sit at the invocation
  assert.deepEqual(where(node(g, 'wrappers::Late')), ['src/lib.rs', 30, 1, 'macro:later']);
  // `hidden!` is used inside `mod private` (expanded) and after it (not in scope: nothing produced)
  assert.deepEqual(where(node(g, 'wrappers::private::FromHidden')), ['src/lib.rs', 37, 5, 'macro:hidden']);
  assert.deepEqual(nodes(g, 'wrappers::FromHidden'), []);
  assert.equal(g.expansion?.unresolved, 1, 'hidden!() after the module is the one invocation left unexpanded');
});

test('macros: generated items sit at the invocation (line, col of the macro name), passed-through items at their own lines', async () => {
  const g = await extract(path.join(fixtures, 'generate'));
  // syn's ast_struct! -> strip_attrs_pub! -> ast_struct!: first and last tokens are the invocation's
  assert.deepEqual(where(node(g, 'generate::Attribute')), ['src/lib.rs', 32, 16, 'macro:ast_struct']);
  // serde's one impl per type: everything but the type name written in the definition
  const impls = g.nodes.filter((n) => n.kind === 'impl' && n.origin === 'macro:impl_num');
  assert.equal(impls.length, 2);
  for (const i of impls) assert.deepEqual([i.lineStart, i.col], [54, 1]);
  const makes = g.nodes.filter((n) => n.name === 'make' && n.kind === 'method');
  assert.deepEqual(makes.map((n) => [n.lineStart, n.col, n.origin]), [[54, 1, 'macro:impl_num'], [54, 1, 'macro:impl_num']]);
  // nested repetitions with separators: one struct per group
  assert.deepEqual(where(node(g, 'generate::Point')), ['src/lib.rs', 116, 1, 'macro:table']);
  assert.deepEqual(where(node(g, 'generate::Empty')), ['src/lib.rs', 116, 1, 'macro:table']);
  // a call written in the source inside another macro's tokens: its items sit at that call
  assert.deepEqual(where(node(g, 'generate::Nested')), ['src/lib.rs', 128, 5, 'macro:unit']);
  // and a call that call's own definition writes places its items there too (not at the outer `pass!`)
  assert.deepEqual(where(node(g, 'generate::Deep')), ['src/lib.rs', 166, 5, 'macro:with_clone']);
  assert.deepEqual(where(node(g, 'generate::<generate::Deep as std::clone::Clone>')), ['src/lib.rs', 166, 5, 'macro:with_clone']);
  assert.deepEqual(where(node(g, '<generate::Deep as std::clone::Clone>::clone')), ['src/lib.rs', 166, 5, 'macro:with_clone']);
});

test('macros: methods generated inside an impl through a helper macro are members of the impl', async () => {
  const g = await extract(path.join(fixtures, 'generate'));
  const impl = g.nodes.find((n) => n.kind === 'impl' && n.signature.includes('Visit for Forwarder'));
  assert.ok(impl);
  const members = g.nodes.filter((n) => n.parent === impl.id).map((n) => [n.name, n.lineStart, n.col, n.origin]);
  assert.deepEqual(members, [
    ['visit_bool', 83, 5, 'macro:forward_to_any'], ['visit_u8', 83, 5, 'macro:forward_to_any'], ['visit_str', 83, 5, 'macro:forward_to_any'],
  ]);
  const forwarded = g.edges.filter((e) => e.kind === 'calls' && e.dstPath === 'generate::Forwarder::forwarded');
  assert.equal(forwarded.length, 3, 'each generated method calls forwarded()');
  for (const e of forwarded) assert.deepEqual([e.line, e.origin], [83, 'macro:forward_to_any']);
});

test('macros: two invocations generating one path are numbered like cfg twins: distinct, stable ids', async () => {
  const g = await extract(path.join(fixtures, 'generate'));
  const twins = nodes(g, 'generate::Twice');
  assert.equal(twins.length, 2);
  assert.notEqual(twins[0]!.id, twins[1]!.id);
  assert.deepEqual(twins.map((n) => n.lineStart), [93, 94]);
  const again = await extract(path.join(fixtures, 'generate'));
  assert.deepEqual(nodes(again, 'generate::Twice').map((n) => n.id), twins.map((n) => n.id));
});

test('macros: a macro that expands forever stops at the recursion limit with a problem, never a hang', async () => {
  const g = await extract(path.join(fixtures, 'generate'));
  const p = g.problems.filter((x) => x.kind === 'macro');
  assert.equal(p.length, 1);
  assert.match(p[0]!.message, /src\/lib\.rs:103: expanding forever! stopped: recursion limit 128 reached/);
});

test('macros: moving an invocation down a line moves its generated items, ids and body hashes unchanged', async (t) => {
  const { dir, cleanup } = scratch('macros-move-');
  t.after(cleanup);
  cpSync(path.join(fixtures, 'generate'), dir, { recursive: true });
  const before = await extract(dir);
  const lib = path.join(dir, 'src', 'lib.rs');
  writeFileSync(lib, `// one more line\n${readFileSync(lib, 'utf8')}`);
  const after = await extract(dir);
  const gen = (g: CrateGraph) => g.nodes.filter((n) => n.origin).map((n) => [n.id, n.bodyHash, n.lineStart]);
  const b = gen(before);
  assert.ok(b.length > 10);
  assert.deepEqual(gen(after), b.map(([id, h, l]) => [id, h, (l as number) + 1]));
});

test('macros: calls in format!/assert!/vec!/write! arguments are edges at the call\'s name token, origin macro-arg', async () => {
  const g = await extract(path.join(fixtures, 'bodies'));
  assert.deepEqual(calls(g, 'bodies::run'), [
    'bodies::Parser::offset@40:48 macro-arg', // format!("{} at {}", describe(b), p.offset())
    'bodies::Parser::offset@42:18 macro-arg', // assert_eq!(p.offset(), …
    'bodies::Parser::peek@39:20 macro-arg', // tri!(p.peek())
    'bodies::Parser::peek@46:25 macro-arg', // matches!(p.peek(), Ok(n) if n > 0): the pattern is no call
    'bodies::check@41:13 macro-arg',
    'bodies::check@48:19 macro-arg', // debug_assert!
    'bodies::describe@40:33 macro-arg',
    'bodies::describe@41:33 macro-arg',
    'bodies::describe@43:16 macro-arg', // the second line of a multi-line assert_eq!
    'bodies::describe@44:18 macro-arg', // vec![…, …]
    'bodies::describe@44:31 macro-arg',
    'bodies::describe@45:31 macro-arg', // write!(out, …)
    'bodies::describe@50:25 macro-arg', // panic!
    'bodies::tri@39:13 -', // the call of the macro itself
    'std::convert::From::from@39:13 macro:tri', // written in tri!'s definition: at the invocation
    'std::result::Result::Err@39:13 macro:tri',
    'std::result::Result::Ok@52:5 -',
    'std::string::String::len@43:28 macro-arg', // a method call in an argument, its receiver's type inferred (`describe(2)`)
    'std::vec::Vec::is_empty@49:10 -', // written outside any macro
  ]);
});

/** A dependency as the lake gives it: its nodes, two exported macros among them (bitflags' shape). */
function flagz(): DepCrate {
  const flags = `macro_rules! flags {
    ($(#[$outer:meta])* $vis:vis struct $Name:ident: $T:ty { $(const $Flag:ident = $value:expr;)* }) => {
        $(#[$outer])* $vis struct $Name { bits: $T }
        __impl_flags! { $Name: $T { $($Flag = $value;)* } }
    };
}`;
  const impl = `macro_rules! __impl_flags {
    ($Name:ident: $T:ty { $($Flag:ident = $value:expr;)* }) => {
        impl $Name {
            $(pub const $Flag: $Name = $Name { bits: $value };)*
            pub fn empty() -> $Name { $crate::__private::empty() }
        }
    };
}`;
  const macro = (name: string, m: string) => ({
    id: name, kind: 'macro' as const, name, qpath: `flagz::${name}`, parent: 'root', publicPaths: [`flagz::${name}`], typeInfo: { m, li: 1 as const },
  });
  return {
    krate: 'flagz@1.0.0', repo: '@universe',
    nodes: [
      { id: 'root', kind: 'module', name: 'flagz', qpath: 'flagz', parent: null, publicPaths: ['flagz'], typeInfo: null },
      macro('flags', flags), macro('__impl_flags', impl),
    ],
  };
}

test('macros: a dependency\'s exported macro expands from its stored definition; local_inner_macros and $crate name the dependency', async () => {
  const without = await extract(path.join(fixtures, 'usedep'));
  assert.deepEqual(nodes(without, 'usedep::Mode'), [], 'without the dependency in the lake, flags! is not expanded');
  const g = await extract(path.join(fixtures, 'usedep'), { depCrates: [flagz()] });
  assert.deepEqual(g.problems, []);
  assert.deepEqual(where(node(g, 'usedep::Mode')), ['src/lib.rs', 4, 1, 'macro:flags']);
  assert.deepEqual(where(node(g, 'usedep::Other')), ['src/lib.rs', 11, 8, 'macro:flags']);
  const consts = g.nodes.filter((n) => n.kind === 'const' && n.origin === 'macro:flags').map((n) => n.qpath).sort();
  assert.deepEqual(consts, ['usedep::Mode::READ', 'usedep::Mode::WRITE', 'usedep::Other::ONE']);
  // `$crate::__private::empty()` is a call into the dependency
  const empty = g.edges.filter((e) => e.kind === 'calls' && e.dstPath === 'flagz::__private::empty');
  assert.equal(empty.length, 2);
  assert.ok(empty.every((e) => e.dstKrate === 'flagz@1.0.0' && e.origin === 'macro:flags'));
});

test('macros: a `let` inside a macro\'s tokens types the method calls after it in the same invocation', async () => {
  const g = await extract(path.join(fixtures, 'bodies'));
  assert.deepEqual(calls(g, 'bodies::locked'), [
    'bodies::Parser::offset@71:26 macro-arg', // let n: usize = l.offset();
    'bodies::Parser::offset@72:11 macro-arg', // l.offset() + n
    'bodies::lock@70:17 macro-arg',
    'bodies::with_lock@69:5 -',
  ]);
});

test('macros: an impl inside a generated fn body is the fn\'s child, its item-position helper calls expanded into members', async () => {
  const g = await extract(path.join(fixtures, 'generate'));
  const fn = node(g, 'generate::make_local');
  const impl = g.nodes.find((n) => n.kind === 'impl' && n.parent === fn.id);
  assert.ok(impl, 'the impl in make_local\'s body');
  assert.deepEqual([impl.lineStart, impl.origin], [144, 'macro:local_visitor']);
  const members = g.nodes.filter((n) => n.parent === impl.id).map((n) => [n.name, n.lineStart, n.origin]);
  assert.deepEqual(members, [['visit_bool', 144, 'macro:forward_to_any'], ['visit_u8', 144, 'macro:forward_to_any'], ['visit_str', 144, 'macro:forward_to_any']]);
});

test('macros: a local declared without a value and assigned in a match arm of an expansion (syn\'s braced!) types the calls after it', async () => {
  const g = await extract(path.join(fixtures, 'bodies'));
  assert.deepEqual(calls(g, 'bodies::deferred'), [
    'bodies::Parser::offset@100:16 -', // content.offset(): content = braces.content, braces from Ok(braces) of parse_braces()
    'bodies::braced@99:13 -',
    'bodies::parse_braces@99:13 macro:braced',
    'std::result::Result::Err@99:13 macro:braced',
    'std::result::Result::Ok@100:5 -',
  ]);
});

test('macros: a type-position invocation (syn\'s Token![…]) is expanded to the type it names, so method calls on it resolve', async () => {
  const g = await extract(path.join(fixtures, 'bodies'));
  assert.deepEqual(calls(g, 'bodies::typed_by_macro'), ['bodies::Parser::offset@109:7 -']);
});

test('macros: identical expansions each get their own members, lines and edges', async (t) => {
  const { dir, cleanup } = scratch('macros-same-');
  t.after(cleanup);
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'Cargo.toml'), '[package]\nname = "memo"\nversion = "0.1.0"\nedition = "2021"\n');
  const impls = ['A', 'B', 'C', 'D'].map((n) => `pub struct ${n};\nimpl T for ${n} {\n    forward! {}\n}\n`).join('');
  writeFileSync(path.join(dir, 'src', 'lib.rs'), [
    'pub fn helper() -> u32 { 1 }',
    'pub trait T { fn f(&self) -> u32; fn g(&self) -> u32; }',
    'macro_rules! forward { () => { fn f(&self) -> u32 { helper() } fn g(&self) -> u32 { $crate::helper() } }; }',
    impls,
  ].join('\n'));
  const g = await extract(dir);
  for (const [k, name] of ['A', 'B', 'C', 'D'].entries()) {
    const impl = g.nodes.find((n) => n.kind === 'impl' && n.signature === `impl T for ${name}`);
    assert.ok(impl, `impl T for ${name}`);
    const line = 4 + 4 * k + 2;
    const members = g.nodes.filter((n) => n.parent === impl.id).map((n) => [n.name, n.lineStart, n.col, n.origin]);
    assert.deepEqual(members, [['f', line, 5, 'macro:forward'], ['g', line, 5, 'macro:forward']]);
    for (const m of g.nodes.filter((n) => n.parent === impl.id)) {
      assert.deepEqual(calls(g, m.qpath), [`memo::helper@${line}:5 macro:forward`], `${name}::${m.name}`);
    }
  }
});
