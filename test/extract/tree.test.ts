import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Language, Parser, type Node } from 'web-tree-sitter';
import { fastWalk, flatten, initParser, type SyntaxNode } from '../../src/extract/tree.ts';

const SOURCES = [
  'pub fn f(x: u32) -> u32 { let (a, _, b) = (1, 2, 3); let g = |_, y| y; vec![a, b]; g(0, x) } // tail\n',
  '/// doc\n#[cfg(feature = "std")]\nmod m { pub struct S<T: Clone> where T: Default { pub a: T } impl<T> S<T> { fn new() -> Self { todo!() } } }\n',
  'fn é() { let s = "ünïcödé 🦀"; println!("{}", s); /* block 🦀 */ s.len(); }\r\nfn crlf() {}\r\n',
  'macro_rules! m { ($x:expr) => { $x + 1 }; }\nm! { struct Inside; }\nuse a::{b, c::{self, *}, d as e};\n',
  'pub fn broken(x: u32) -> u32 {\n    let y = x +\n', // errors: a MISSING node and an ERROR
  'struct A { a: u32, b: }\nfn g() { match x { Some(1) => , _ => 2 } }\nimpl X for { }\n',
  '',
];

/** Every node the Node API gives, in pre-order (a token tree's or comment's children only when the tree has errors). */
function nodes(n: Node, errors: boolean, out: Node[] = []): Node[] {
  out.push(n);
  if (!errors && (n.type === 'token_tree' || n.type.endsWith('_comment')) && n.isNamed) return out;
  for (const c of n.children) if (c) nodes(c, errors, out);
  return out;
}

function flat(n: SyntaxNode, out: SyntaxNode[] = []): SyntaxNode[] {
  out.push(n);
  for (const c of n.children) flat(c, out);
  return out;
}

test('flat tree: every node answers as web-tree-sitter\'s Node does (both walks, fixtures and odd text)', async () => {
  await initParser();
  assert.ok(fastWalk(), 'initParser was the first to initialise web-tree-sitter in this process: the fast walk is on');
  const require = createRequire(import.meta.url);
  const lang = await Language.load(path.join(path.dirname(require.resolve('tree-sitter-rust/package.json')), 'tree-sitter-rust.wasm'));
  const parser = new Parser();
  parser.setLanguage(lang);
  const fixtures: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.rs')) fixtures.push(readFileSync(p, 'utf8'));
    }
  };
  walk(path.join(import.meta.dirname, 'fixtures'));
  const fields = lang.fields.filter((f): f is string => !!f);
  let checked = 0;
  for (const text of [...SOURCES, ...fixtures]) {
    const tree = parser.parse(text)!;
    const errors = tree.rootNode.hasError;
    const want = nodes(tree.rootNode, errors);
    for (const viaPublic of [false, true]) {
      const ft = flatten(tree, text, viaPublic);
      const got = flat(ft.root);
      assert.equal(got.length, want.length, `node count of ${JSON.stringify(text.slice(0, 40))}`);
      const index = new Map(want.map((n, i) => [n.id, i]));
      for (let i = 0; i < want.length; i++) {
        const w = want[i]!;
        const g = got[i]!;
        const at = `node ${i} (${w.type}) of ${JSON.stringify(text.slice(0, 40))}, ${viaPublic ? 'public' : 'fast'} walk`;
        assert.equal(g.type, w.type, at);
        assert.equal(g.isNamed, w.isNamed, at);
        if (!w.isNamed && !errors) continue; // anonymous nodes keep their type only
        assert.equal(g.startIndex, w.startIndex, at);
        assert.equal(g.endIndex, w.endIndex, at);
        assert.deepEqual(g.startPosition, w.startPosition, at);
        assert.deepEqual(g.endPosition, w.endPosition, at);
        if (errors) {
          assert.equal(g.hasError, w.hasError, at);
          assert.equal(g.isMissing, w.isMissing, at);
        }
        assert.equal(g.parent === null ? -1 : got.indexOf(g.parent), w.parent ? index.get(w.parent.id) ?? -2 : -1, at);
        const named = w.namedChildren.filter((c): c is Node => c !== null);
        if (g.namedChildren.length > 0 || errors || !(w.type === 'token_tree' || w.type.endsWith('_comment'))) {
          assert.deepEqual(g.namedChildren.map((c) => got.indexOf(c)), named.map((c) => index.get(c.id)), at);
          assert.equal(g.namedChild(1) ? got.indexOf(g.namedChild(1)!) : -1, named[1] ? index.get(named[1].id) : -1, at);
          for (const f of fields) {
            const wc = w.childForFieldName(f);
            if (wc && !wc.isNamed && wc.type !== '_') continue; // (`operator`: a field naming a token is not kept)
            const gc = g.childForFieldName(f);
            assert.equal(gc ? got.indexOf(gc) : -1, wc ? index.get(wc.id) ?? -2 : -1, `${at}: field ${f}`);
          }
          const types = ['call_expression', 'macro_invocation', 'let_declaration', 'closure_expression', 'ERROR']; // (none occurs inside a token tree)
          assert.deepEqual(g.descendantsOfType(types).map((c) => got.indexOf(c)), w.descendantsOfType(types).map((c) => index.get(c.id)), at);
        }
        if (errors) { checked++; continue; } // (tree-sitter finds siblings by position: next to a zero-width MISSING node it may answer none)
        const wn = w.nextNamedSibling, wp = w.previousNamedSibling;
        assert.equal(g.nextNamedSibling ? got.indexOf(g.nextNamedSibling) : -1, wn ? index.get(wn.id) ?? -2 : -1, at);
        assert.equal(g.previousNamedSibling ? got.indexOf(g.previousNamedSibling) : -1, wp ? index.get(wp.id) ?? -2 : -1, at);
        checked++;
      }
    }
    tree.delete();
  }
  assert.ok(checked > 1000, `${checked} nodes checked`);
});
