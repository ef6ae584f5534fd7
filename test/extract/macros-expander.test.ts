import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandMacro, type MacroDef } from '../../src/extract/macros/expand.ts';
import { parseFragment, type Edition } from '../../src/extract/macros/fragments.ts';
import { tokenize, tokensText, type FragKind, type Group, type Token } from '../../src/extract/macros/tokens.ts';

/** A macro from the text of its body (what sits between `macro_rules! name {` and `}`). */
function def(body: string, opts: Partial<MacroDef> = {}): MacroDef {
  return { name: 'm', krate: 'k@1.0.0', body: tokenize(body, 0), edition: 2021, exported: false, ...opts };
}

/** Expand and show the result as spaced text (invisible groups shown as «…»). */
function expand(d: MacroDef, input: string, budget = 100_000): string {
  const r = expandMacro(d, tokenize(input), budget);
  if (!r.ok) return `ERROR: ${r.error}`;
  return show(r.tokens);
}

function show(tokens: Token[]): string {
  return tokens.map((t) => {
    if (t.k !== 'group') return t.k === 'crate' ? `$crate[${t.krate}]` : t.text;
    if (t.delim === '') return `«${show(t.tokens)}»`;
    const close = t.delim === '(' ? ')' : t.delim === '[' ? ']' : '}';
    return [t.delim, show(t.tokens), close].filter((x) => x !== '').join(' ');
  }).join(' ');
}

/** How many tokens of `text` one `kind` fragment takes (null: none). */
function frag(kind: FragKind, text: string, edition: Edition = 2021): string | null {
  const toks = tokenize(text);
  const end = parseFragment(kind, toks, 0, edition);
  return end === null ? null : tokensText(toks.slice(0, end));
}

test('tokenize: compound punctuation, literals, lifetimes and chars, positions in UTF-16 columns', () => {
  const toks = tokenize("a::b => 'x' 'a ..= 1..2 1.5 x.0 r#\"q\"# b'c' r#type <<= é '\\n'", 3, 5);
  assert.deepEqual(toks.map((t) => [t.k, t.k === 'group' ? '' : t.text]), [
    ['ident', 'a'], ['punct', '::'], ['ident', 'b'], ['punct', '=>'], ['literal', "'x'"], ['lifetime', "'a"],
    ['punct', '..='], ['literal', '1'], ['punct', '..'], ['literal', '2'], ['literal', '1.5'], ['ident', 'x'],
    ['punct', '.'], ['literal', '0'], ['literal', 'r#"q"#'], ['literal', "b'c'"], ['ident', 'r#type'], ['punct', '<<='],
    ['ident', 'é'], ['literal', "'\\n'"],
  ]);
  assert.deepEqual([toks[0]!.line, toks[0]!.col], [3, 5]);
  const later = tokenize('x\n  /* c /* nested */ */ yé z', 10, 4);
  assert.deepEqual(later.map((t) => [t.line, t.col]), [[10, 4], [11, 24], [11, 27]]);
});

test('tokenize: doc comments become #[doc] attribute tokens; plain comments vanish; groups nest', () => {
  const toks = tokenize('/// hi "there"\n//! inner\n// plain\n/** block */ f(a, [b]) {}');
  assert.equal(tokensText(toks), '# [ doc = " hi \\"there\\"" ] # ! [ doc = " inner" ] # [ doc = " block " ] f ( a , [ b ] ) { }');
  const g = toks[toks.length - 2] as Group;
  assert.equal(g.k, 'group');
  assert.equal(g.delim, '(');
  assert.equal(g.tokens.length, 3);
});

test('fragments: each specifier takes exactly its fragment', () => {
  assert.equal(frag('ident', 'foo bar'), 'foo');
  assert.equal(frag('ident', '_ x'), null);
  assert.equal(frag('lifetime', "'a b"), "'a");
  assert.equal(frag('literal', '-1.5 x'), '- 1.5');
  assert.equal(frag('literal', 'true,'), 'true');
  assert.equal(frag('vis', 'pub(crate) fn'), 'pub ( crate )');
  assert.equal(frag('vis', 'pub (u8)'), 'pub');
  assert.equal(frag('vis', 'fn'), '');
  assert.equal(frag('block', '{ a } b'), '{ a }');
  assert.equal(frag('ty', 'Vec<Vec<u8>>, x'), 'Vec < Vec < u8 >>');
  assert.equal(frag('ty', "&'a mut dyn Fn(u8) -> bool + Send = 3"), "& 'a mut dyn Fn ( u8 ) -> bool + Send");
  assert.equal(frag('ty', '<T as Trait>::Assoc<X>; z'), '< T as Trait > :: Assoc < X >');
  assert.equal(frag('ty', 'fn(u8) -> u8 ;'), 'fn ( u8 ) -> u8');
  assert.equal(frag('ty', '[u8; 4] x'), '[ u8 ; 4 ]');
  assert.equal(frag('path', 'a::b<T>::c d'), 'a :: b < T > :: c');
  assert.equal(frag('path', '::std::vec::Vec<u8> ,'), ':: std :: vec :: Vec < u8 >');
  assert.equal(frag('expr', 'a + b * f(c), d'), 'a + b * f ( c )');
  assert.equal(frag('expr', 'x.iter().map(|v| v + 1).collect::<Vec<_>>() ; y'), 'x . iter ( ) . map ( | v | v + 1 ) . collect :: < Vec < _ >> ( )');
  assert.equal(frag('expr', 'if a { b } else { c } => z'), 'if a { b } else { c }');
  assert.equal(frag('expr', 'match x { _ => 1 }.y , q'), 'match x { _ => 1 } . y');
  assert.equal(frag('expr', 'Foo { a: 1 } as u8, x'), 'Foo { a : 1 } as u8');
  assert.equal(frag('expr', 'a?.b.await, c'), 'a ? . b . await');
  assert.equal(frag('expr', 'move || x + 1; z'), 'move || x + 1');
  assert.equal(frag('expr', '0.. ;'), '0 ..');
  assert.equal(frag('expr', '&mut v[..n] => z'), '& mut v [ .. n ]');
  assert.equal(frag('expr', 'let x = 3'), null);
  assert.equal(frag('pat', 'Some(x) | None => 1'), 'Some ( x ) | None');
  assert.equal(frag('pat', 'Some(x) | None', 2018), 'Some ( x )');
  assert.equal(frag('pat_param', 'a | b'), 'a');
  assert.equal(frag('pat', 'ref mut x @ 1..=5 if'), 'ref mut x @ 1 ..= 5');
  assert.equal(frag('pat', 'E::V { a, .. } =>'), 'E :: V { a , .. }');
  assert.equal(frag('meta', 'derive(Debug, Clone)] x'), 'derive ( Debug , Clone )');
  assert.equal(frag('meta', 'doc = "x" ,'), 'doc = "x"');
  assert.equal(frag('item', '#[derive(Debug)] pub struct S { a: u8 } fn f() {}'), '# [ derive ( Debug ) ] pub struct S { a : u8 }');
  assert.equal(frag('item', 'pub(crate) const X: T = T { a: 1 }; next'), 'pub ( crate ) const X : T = T { a : 1 } ;');
  assert.equal(frag('item', 'impl<T: A> B for C<T> where T: D { fn f() {} } x'), 'impl < T : A > B for C < T > where T : D { fn f ( ) { } }');
  assert.equal(frag('item', 'struct P(u8); x'), 'struct P ( u8 ) ;');
  assert.equal(frag('item', 'mod a; b'), 'mod a ;');
  assert.equal(frag('item', 'foo! { x } y'), 'foo ! { x }');
  assert.equal(frag('item', 'macro_rules! m { () => {} } y'), 'macro_rules ! m { ( ) => { } }');
  assert.equal(frag('item', 'x + 1'), null);
  assert.equal(frag('stmt', 'let x: u8 = 1; y'), 'let x : u8 = 1');
  assert.equal(frag('stmt', 'f(x); y'), 'f ( x )');
  assert.equal(frag('stmt', 'fn g() {} y'), 'fn g ( ) { }');
  assert.equal(frag('tt', '(a b) c'), '( a b )');
});

test('expand: fragments are bound and transcribed; opaque fragments stay one token', () => {
  const d = def('($name:ident, $t:ty, $e:expr) => { const $name: $t = $e; };');
  assert.equal(expand(d, 'A, Vec<u8>, 1 + 2'), 'const A : «Vec < u8 >» = «1 + 2» ;');
  const lit = def('($l:literal $i:lifetime $v:vis) => { $v fn f<$i>() -> u8 { $l } };');
  assert.equal(expand(lit, "5 'a pub(crate)"), "pub ( crate ) fn f < 'a > ( ) -> u8 { 5 }");
});

test('expand: repetitions with separators, `?`, `+`, and nesting', () => {
  const d = def('($($k:ident => [$($v:expr),*]);* $(;)?) => { $( fn $k() { $( g($v); )* } )* };');
  assert.equal(
    expand(d, 'a => [1, 2]; b => []; c => [x];'),
    'fn a ( ) { g ( «1» ) ; g ( «2» ) ; } fn b ( ) { } fn c ( ) { g ( «x» ) ; }',
  );
  const plus = def('($($x:ident)+) => { $($x)|+ };');
  assert.equal(expand(plus, 'a b c'), 'a | b | c');
  assert.match(expand(plus, ''), /^ERROR: no rule/);
  const opt = def('($(pub)? struct $n:ident) => { struct $n; };');
  assert.equal(expand(opt, 'pub struct S'), 'struct S ;');
  assert.equal(expand(opt, 'struct S'), 'struct S ;');
  // a fragment bound outside a repetition may be used inside it
  const outer = def('($t:ident: $($f:ident)*) => { $( impl $t { fn $f() {} } )* };');
  assert.equal(expand(outer, 'T: a b'), 'impl T { fn a ( ) { } } impl T { fn b ( ) { } }');
});

test('expand: rules are tried in order; the first that matches wins', () => {
  const d = def(`
    (@inner $x:ident) => { inner $x };
    ($x:ident) => { plain $x };
    ($($t:tt)*) => { any };
  `);
  assert.equal(expand(d, '@inner q'), 'inner q');
  assert.equal(expand(d, 'q'), 'plain q');
  assert.equal(expand(d, '1 2 3'), 'any');
});

test('expand: rules whose fixed prefix the input fails are passed over as failures (a muncher); the error still names the first rule', () => {
  // quote's quote_token_with_context: every rule starts with single-token fragments, then a literal or a group
  const d = def(`
    ($t:ident $b:tt @ $a:tt) => { at };
    ($t:ident $b:tt (#) ($($inner:tt)*) *) => { rep $($inner)* };
    ($t:ident $b:tt (#) $v:ident) => { var $v };
    ($t:ident $b:tt ($c:tt) $a:tt) => { tok $c };
  `);
  assert.equal(expand(d, 'ts x @ y'), 'at');
  assert.equal(expand(d, 'ts x (#) (a b) *'), 'rep a b');
  assert.equal(expand(d, 'ts x (#) v'), 'var v');
  assert.equal(expand(d, 'ts x (+) y'), 'tok +');
  // no rule matches: the message is the first rule's, as a full match of it gives
  assert.equal(expand(d, 'ts x [+] y'), 'ERROR: no rule of `m!` matched (rule 1: no rule expected `[`)');
  assert.equal(expand(d, 'ts x'), 'ERROR: no rule of `m!` matched (rule 1: unexpected end of input)');
  // a rule after rejected ones that is ambiguous stops the expansion
  const amb = def(`
    (# $x:tt) => { hash };
    ($($a:ident)* $b:ident) => {};
  `);
  assert.match(expand(amb, 'x y'), /^ERROR: `m!` rule 2: local ambiguity/);
});

test('expand: a local ambiguity is an error, as in rustc; mismatched repetitions are errors', () => {
  const amb = def('($($a:ident)* $b:ident) => {};');
  assert.match(expand(amb, 'x y'), /^ERROR: .*local ambiguity/);
  const mismatch = def('($($a:ident)*; $($b:ident)*) => { $( $a $b )* };');
  assert.match(expand(mismatch, 'x y; z'), /^ERROR: .*repeats 1 times, but another repeats 2 times/);
  assert.equal(expand(mismatch, 'x y; z w'), 'x z y w');
});

test('expand: $crate names the defining crate; a captured $crate keeps its own', () => {
  const d = def('($p:path) => { $crate::f($p) };', { krate: 'dep@2.0.0' });
  assert.equal(expand(d, 'a::b'), '$crate[dep@2.0.0] :: f ( «a :: b» )');
});

test('expand: the token budget stops a runaway expansion with an error', () => {
  const d = def('($($t:tt)*) => { $($t $t $t $t)* };');
  const r = expandMacro(d, tokenize('a '.repeat(100)), 50);
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.limit, 'the budget is reported as a limit');
});

test('expand: interpolated fragments are matched only by their kind or tt', () => {
  const inner = def('($e:expr) => { e }; ($i:ident) => { i }; ($($t:tt)*) => { tt };');
  // feed an opaque expr fragment, as an outer macro's transcription would
  const outer = def('($e:expr) => { $e };');
  const r = expandMacro(outer, tokenize('a'), 1000);
  assert.ok(r.ok);
  assert.equal(expand(inner, 'a'), 'e');
  const again = expandMacro(inner, r.ok ? r.tokens : [], 1000);
  assert.ok(again.ok);
  assert.equal(show(again.ok ? again.tokens : []), 'e');
});
