// Item-position expansion, one construct per invocation, on small fixture
// crates with the expected graph: every fragment specifier in a real
// expansion, std's thread_local!, and the token budget of one invocation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';
import { extractCrate, loadRust, readCrateDir, type CrateGraph, type ExtractInput } from '../../src/extract/index.ts';
import { MacroExpander } from '../../src/extract/macros/expander.ts';
import type { DepCrate } from '../../src/extract/resolve/summary.ts';

const fixtures = path.join(repoRoot, 'test', 'extract', 'fixtures', 'macros');

async function input(dir: string): Promise<ExtractInput> {
  const { pkg } = await readCrateDir(dir);
  assert.ok(pkg, `no package in ${dir}`);
  return {
    repo: 'r', krate: `${pkg.name}@${pkg.version}`, rootDir: pkg.dir, targets: pkg.targets.map((t) => t.path),
    deps: new Map(), readFile: (p) => readFile(p), edition: pkg.edition, features: [],
  };
}

/** Nodes as `kind qpath line:col origin`, in graph order, the macro_rules! definitions left out. */
function graphOf(g: CrateGraph): string[] {
  return g.nodes.filter((n) => n.kind !== 'macro').map((n) => `${n.kind} ${n.qpath} ${n.lineStart}:${n.col} ${n.origin ?? '-'}`);
}

test('macros: every fragment specifier in a real expansion gives the items rustc would, at the invocation or at their own tokens', async () => {
  const g = await extractCrate(await input(path.join(fixtures, 'fragments')));
  assert.deepEqual(g.problems, []);
  assert.deepEqual(graphOf(g), [
    'module fragments 1:1 -',
    'trait fragments::Named 2:11 -',
    'trait_item fragments::Named::name 3:8 -',
    'struct fragments::After 58:12 -',
    // first token written in the definition: at the invocation (line and column of the macro's name)
    'struct fragments::ByIdent 7:1 macro:frag_ident', // $n:ident
    'type fragments::ByTy 10:1 macro:frag_ty', // $t:ty with nested generics and a lifetime
    'impl fragments::<fragments::ByIdent as fragments::Named> 13:1 macro:frag_path', // $p:path resolves like a written path
    'method <fragments::ByIdent as fragments::Named>::name 13:1 macro:frag_path',
    'const fragments::BY_EXPR 16:1 macro:frag_expr', // $e:expr
    // every token from the arguments ($($t:tt)*): the item keeps its own line and the column of its name
    'fn fragments::by_tt 20:12 macro:frag_tt',
    'fn fragments::by_vis 26:1 macro:frag_vis', // $v:vis = pub(crate)
    'fn fragments::by_empty_vis 27:1 macro:frag_vis', // $v:vis matching nothing
    'static fragments::BY_LITERAL 30:1 macro:frag_literal', // $l:literal
    'struct fragments::ByLifetime 33:1 macro:frag_lifetime', // $l:lifetime
    'fn fragments::by_block 36:1 macro:frag_block', // $b:block
    'enum fragments::ByItem 42:14 macro:frag_item', // $($i:item)*: written items pass through at their own place
    'variant fragments::ByItem::A 42:23 macro:frag_item',
    'variant fragments::ByItem::B 42:26 macro:frag_item',
    'union fragments::ByUnion 43:15 macro:frag_item',
    'fn fragments::by_pat 47:1 macro:frag_pat', // $p:pat with an or-pattern
    'struct fragments::ByMeta 50:1 macro:frag_meta', // #[$m:meta]; the #[cfg(feature = "off")] one is dropped
    // std's thread_local!: one const per key, as std expands it
    'const fragments::KEY 54:12 macro:thread_local',
    'const fragments::OTHER 55:16 macro:thread_local',
  ]);
  // a call written in a $b:block argument is an edge at its own token, written (origin null)
  const byBlock = g.nodes.find((n) => n.qpath === 'fragments::by_block')!;
  const calls = g.edges.filter((e) => e.kind === 'calls' && e.src === byBlock.id).map((e) => `${e.dstPath}@${e.line}:${e.col} ${e.origin ?? '-'}`);
  assert.deepEqual(calls, ['fragments::by_tt@37:5 -']);
  assert.equal(g.expansion?.failed, 0);
  assert.equal(g.expansion?.wrappers, 1, 'thread_local! is read by its meaning');
});

test('macros: an invocation whose expansion outgrows the token budget stops with a macro problem; the rest of the crate is indexed', async () => {
  const inp = await input(path.join(fixtures, 'limits'));
  const expander = new MacroExpander({ krate: inp.krate, ident: 'limits', edition: 2021, parser: await loadRust(), deps: new Map(), maxTokens: 20_000 });
  const g = await extractCrate({ ...inp, expander });
  assert.deepEqual(graphOf(g), ['module limits 1:1 -', 'struct limits::Before 7:12 -', 'struct limits::After 11:12 -']);
  assert.equal(expander.problems.length, 1);
  const p = expander.problems[0]!;
  assert.equal(p.kind, 'macro');
  assert.match(p.message, /^src\/lib\.rs:9: expanding double! stopped: `double!` rule 1: expansion over \d+ tokens; the items it would produce are not indexed$/);
  assert.equal(expander.stats.failed, 1);
});

/** serde's shape: forward! and helper! are `local_inner_macros`; `if128!` is not and forwards its tokens. */
function serdeish(): DepCrate {
  const defs: [string, string, boolean][] = [
    ['forward', 'macro_rules! forward { ($($f:ident)*) => { $(helper!{$f})* }; }', true],
    ['helper', 'macro_rules! helper { (i128) => { if128! { method!{deserialize_i128} } }; ($f:ident) => { method!{deserialize_bool} }; }', true],
    ['if128', 'macro_rules! if128 { ($($tt:tt)*) => { $($tt)* }; }', false],
    ['method', 'macro_rules! method { ($f:ident) => { fn $f(&self) {} }; }', false],
  ];
  return {
    krate: 'serdeish@1.0.0', repo: '@universe',
    nodes: [
      { id: 'root', kind: 'module', name: 'serdeish', qpath: 'serdeish', parent: null, publicPaths: ['serdeish'], typeInfo: null },
      ...defs.map(([name, m, li]) => ({
        id: name, kind: 'macro' as const, name, qpath: `serdeish::${name}`, parent: 'root', publicPaths: [`serdeish::${name}`],
        typeInfo: li ? { m, li: 1 as const } : { m },
      })),
    ],
  };
}

test('macros: local_inner_macros rewrites the definition\'s own calls to $crate paths, so a call forwarded through another macro still finds its crate', async () => {
  const inp = await input(path.join(fixtures, 'forward'));
  const g = await extractCrate({ ...inp, deps: new Map([['serdeish', { krate: 'serdeish@1.0.0' }]]), depCrates: [serdeish()] });
  assert.deepEqual(g.problems, []);
  const members = g.nodes.filter((n) => n.kind === 'method').map((n) => `${n.qpath} ${n.lineStart}:${n.col} ${n.origin}`);
  assert.deepEqual(members, [
    '<forward::S as forward::De>::deserialize_bool 11:15 macro:forward',
    '<forward::S as forward::De>::deserialize_i128 11:15 macro:forward',
  ]);
  assert.equal(g.expansion?.unresolved, 0);
});

test('macros: a path to an exported macro whose module comes later in the walk is expanded after the walk, in its own module', async () => {
  const g = await extractCrate(await input(path.join(fixtures, 'laterdef')));
  assert.deepEqual(g.problems, []);
  assert.deepEqual(graphOf(g), [
    'module laterdef 1:1 -',
    'module laterdef::parsing 3:5 -',
    'fn laterdef::parsing::uses 6:12 -',
    'struct laterdef::parsing::Raw 4:12 macro:keyword',
    'module laterdef::keyword 1:1 -',
  ]);
  assert.equal(g.expansion?.unresolved, 0);
  assert.equal(g.expansion?.expanded, 1);
});
