// Calls inside macro calls' tokens, for macros whose arguments are code: the
// arguments of `format!`, `assert_eq!`, `vec!` and the other std macros (and
// of macros whose definition is not at hand), and the expansion of a
// `macro_rules!` called inside a body (`tri!`).
//
// A call is a path followed by a `(…)` group (`f(x)`, `a::B::new(x)`,
// `Vec::<u8>::new()`, tuple-variant constructors like `Some(x)` included, as
// the parser counts them in written code, but not a pattern: `Ok(v) =>`,
// `let Some(x) =`), or `.name(…)` / `.name::<T>(…)`, a method call whose
// receiver is built as the parser builds it (`Expr`: paths, calls, method
// calls, fields, `?`, indexing, literals) so type inference can resolve it.
// Each ref carries the line and column of the call's name token and the
// invocation's offset (`at`, for the locals in scope). A `let x = <expr>;`
// in the tokens (a `macro_rules!` expansion, a block argument) is a binding
// visible at that offset only (`at`..`at + 1`: to the calls of this
// invocation, which all share it), so `let g = lock.write(); g.abort()`
// inside `atomic!{…}` types `g`. Macro calls met inside are handed back (the
// caller expands or scans them in turn).
//
// Which arguments of an unexpanded macro: std macros whose arguments are not
// code (`stringify!`, `concat!`, `env!` …) have none; `matches!` has its
// first (the second is a pattern); any other has its arguments split at
// top-level `,` and `;`, each scanned when it parses as an expression whole,
// so a macro with a syntax of its own (`quote!`, `json!`) yields nothing
// rather than false calls.
//
// Invariant: pure, linear in the tokens.
import type { Binding, Expr, Ref } from '../types.ts';
import { Cursor, type Edition } from './fragments.ts';
import type { Anchor } from './produce.ts';
import { groupOf, isGroup, isIdent, isPunct, KEYWORDS, type Group, type Token } from './tokens.ts';

/** std macros whose arguments are never code. */
const NOT_CODE = new Set([
  'stringify', 'concat', 'concat_idents', 'env', 'option_env', 'include', 'include_str', 'include_bytes', 'line', 'column',
  'file', 'module_path', 'cfg', 'compile_error', 'macro_rules', 'asm', 'global_asm', 'quote', 'quote_spanned', 'parse_quote',
  'parse_macro_input', 'format_ident', 'unreachable_unchecked',
]);
/** Callees that are type sugar, not calls: `Box<dyn Fn(u8)>`. */
const NOT_CALLEES = new Set(['Fn', 'FnMut', 'FnOnce']);

/** A macro call met inside the scanned tokens. */
export interface InnerMacro {
  path: Token[];
  name: string;
  input: Token[];
  anchor: Anchor;
}

export interface Scan {
  refs: Ref[];
  macros: InnerMacro[];
  /** `let` bindings of the scanned code, visible to its refs only. */
  bindings: Binding[];
}

export interface ScanPlace {
  /** Where refs without a source position of their own go (the invocation). */
  anchor: Anchor;
  /** Origin of a ref whose name token has a position (`macro-arg`), and of one written in a definition. */
  defOrigin: string;
  /** The invocation's offset in its file. */
  at: number;
}

/** The calls in the arguments of an unexpanded macro `name` (`input`: the tokens inside its delimiters). */
export function scanArgs(name: string, input: Token[], place: ScanPlace, edition: Edition): Scan {
  const out: Scan = { refs: [], macros: [], bindings: [] };
  if (NOT_CODE.has(name)) return out;
  const parts = splitArgs(input);
  const scanned = name === 'matches' || name === 'assert_matches' || name === 'debug_assert_matches' ? parts.slice(0, 1) : parts;
  const s = new Scanner(place, out);
  for (const part of scanned) {
    if (part.length === 0 || !isExpr(part, edition)) continue;
    s.list(part);
  }
  return out;
}

/** The calls in any code (an expansion's tokens). */
export function scanCode(tokens: Token[], place: ScanPlace): Scan {
  const out: Scan = { refs: [], macros: [], bindings: [] };
  new Scanner(place, out, true).list(tokens);
  return out;
}

function splitArgs(tokens: Token[]): Token[][] {
  const out: Token[][] = [[]];
  for (const t of tokens) {
    if (isPunct(t, ',') || isPunct(t, ';')) out.push([]);
    else out[out.length - 1]!.push(t);
  }
  return out;
}

function isExpr(tokens: Token[], edition: Edition): boolean {
  const c = new Cursor(tokens, 0, edition);
  // `name = expr` (format's named arguments) is an assignment: an expression too
  return c.expr(false) && !c.half && c.i === tokens.length;
}

/** A path's segment: an identifier that is not a keyword (self/Self/super/crate are), or `$crate`. */
function isSegment(t: Token | undefined): boolean {
  if (!t) return false;
  if (t.k === 'crate') return true;
  if (t.k !== 'ident') return false;
  return !KEYWORDS.has(t.text) || t.text === 'self' || t.text === 'Self' || t.text === 'super' || t.text === 'crate';
}

function segText(t: Token): string {
  return t.k === 'crate' ? '$crate' : (t as { text: string }).text;
}

const UNKNOWN = (what: string): Expr => ({ k: 'unknown', what });

class Scanner {
  /** `code`: the tokens are an expansion (statements), not a macro's arguments (where `x = e` names an argument). */
  constructor(private readonly place: ScanPlace, private readonly out: Scan, private readonly code = false) {}

  /** Every call in a token list. */
  list(toks: Token[]): void {
    let i = 0;
    while (i < toks.length) {
      if (isIdent(toks[i], 'let')) {
        const l = this.let(toks, i);
        if (l > i) { i = l; continue; }
      }
      if (this.code && isIdent(toks[i], 'match')) {
        const m = this.match(toks, i);
        if (m > i) { i = m; continue; }
      }
      if (this.code && (i === 0 || isPunct(toks[i - 1], ';'))) {
        const a = this.assign(toks, i);
        if (a > i) { i = a; continue; }
      }
      const r = this.chain(toks, i);
      if (r) { i = r.j; continue; }
      const t = toks[i]!;
      if (t.k === 'group') this.list(t.tokens);
      i++;
    }
  }

  /**
   * `let [mut] x [: T] = <chain>` at `i` (`let`): the binding recorded, the
   * index after the chain; `i` when it is not that (a pattern, `let … else`).
   */
  private let(toks: Token[], i: number): number {
    let j = i + 1;
    if (isIdent(toks[j], 'mut')) j++;
    const name = toks[j];
    if (!name || name.k !== 'ident' || KEYWORDS.has(name.text)) return i;
    j++;
    if (isPunct(toks[j], ':')) {
      // skip the type to the `=` outside its generic arguments
      let depth = 0;
      for (j++; j < toks.length; j++) {
        const t = toks[j]!;
        if (isPunct(t, '<')) depth++;
        else if (isPunct(t, '>') && depth > 0) depth--;
        else if (isPunct(t, '=') && depth === 0) break;
        else if (isPunct(t, ';')) return i;
      }
    }
    if (!isPunct(toks[j], '=')) return i;
    const r = this.chain(toks, j + 1);
    if (!r) return i;
    const end = toks[r.j];
    if (end && !isPunct(end, ';')) return r.j; // more follows (an operator, `else`): the calls are scanned, no binding
    const at = this.place.at;
    this.out.bindings.push({ name: name.text, at, until: at + 1, from: at, init: r.expr });
    return r.j;
  }

  /**
   * `x = <chain>;` at `i`: a local declared without a value (`let content;`
   * before syn's `braced!(content in input)`) gets its type here — a binding
   * from the invocation on, its value read at the invocation (where the
   * expansion's own bindings are visible). The index after the chain; `i` when
   * it is not that.
   */
  private assign(toks: Token[], i: number): number {
    const name = toks[i];
    if (!name || name.k !== 'ident' || KEYWORDS.has(name.text) || !isPunct(toks[i + 1], '=')) return i;
    const r = this.chain(toks, i + 2);
    if (!r || (r.j < toks.length && !isPunct(toks[r.j], ';'))) return i;
    const at = this.place.at;
    this.out.bindings.push({ name: name.text, at, from: at, init: r.expr });
    return r.j;
  }

  /**
   * `match <chain> { … }` at `i`: arms `Ok(x) =>` / `Some(x) =>` (any path to
   * them) bind x to the payload of the scrutinee, for the calls of this
   * invocation; the arms are scanned. The index after the arms; `i` when it is
   * not that.
   */
  private match(toks: Token[], i: number): number {
    const r = this.chain(toks, i + 1);
    const arms = r ? groupOf(toks[r.j], '{') : null;
    if (!r || !arms) return i;
    const at = this.place.at;
    const a = arms.tokens;
    for (let k = 1; k + 1 < a.length; k++) {
      const head = a[k - 1]!;
      const g = groupOf(a[k], '(');
      if (!g || !isPunct(a[k + 1], '=>') || !(isIdent(head, 'Ok') || isIdent(head, 'Some'))) continue;
      const inner = isIdent(g.tokens[0], 'mut') ? g.tokens.slice(1) : g.tokens;
      const v = inner[0];
      if (inner.length === 1 && v && v.k === 'ident' && !KEYWORDS.has(v.text)) {
        this.out.bindings.push({ name: v.text, at, until: at + 1, from: at, init: r.expr, via: 'some' });
      }
    }
    this.list(a);
    return r.j + 1;
  }

  /**
   * A primary expression at `i` and its postfix operators, with refs pushed
   * for the calls in it: its expression and the index after it, or null when
   * no primary starts here.
   */
  chain(toks: Token[], i: number): { expr: Expr; j: number } | null {
    const r = this.primary(toks, i);
    if (!r) return null;
    let { expr, j } = r;
    for (;;) {
      const t = toks[j];
      if (isPunct(t, '?')) { expr = { k: 'try', of: expr }; j++; continue; }
      const index = groupOf(t, '[');
      if (index) { this.list(index.tokens); expr = { k: 'index', of: expr }; j++; continue; }
      const args = groupOf(t, '(');
      if (args) { this.list(args.tokens); expr = UNKNOWN('call of an expression'); j++; continue; }
      const n = toks[j + 1];
      if (!isPunct(t, '.') || !n || n.k === 'group' || n.k === 'crate') return { expr, j };
      if (n.k === 'literal') { expr = { k: 'field', recv: expr, name: n.text }; j += 2; continue; }
      if (n.k !== 'ident') return { expr, j };
      if (n.text === 'await') { expr = UNKNOWN('await'); j += 2; continue; }
      let k = j + 2;
      if (isPunct(toks[k], '::') && (isPunct(toks[k + 1], '<') || isPunct(toks[k + 1], '<<'))) k = skipGenerics(toks, k + 1);
      const g = groupOf(toks[k], '(');
      if (g) {
        this.ref(`.${n.text}`, n, { recv: expr });
        this.list(g.tokens);
        expr = { k: 'mcall', recv: expr, name: n.text };
        j = k + 1;
        continue;
      }
      expr = { k: 'field', recv: expr, name: n.text };
      j += 2;
    }
  }

  private primary(toks: Token[], i: number): { expr: Expr; j: number } | null {
    const t = toks[i];
    if (!t) return null;
    if (t.k === 'literal') return { expr: { k: 'lit', prim: litPrim(t.text) }, j: i + 1 };
    if (t.k === 'group') {
      this.list(t.tokens);
      if (t.delim === '' || t.delim === '(') {
        // `(x)` / a captured fragment: the expression inside when it is one chain
        const inner = this.single(t);
        return { expr: inner ?? UNKNOWN('parenthesized'), j: i + 1 };
      }
      return { expr: UNKNOWN(t.delim === '[' ? 'array' : 'block'), j: i + 1 };
    }
    if (isPunct(t, '<')) return this.qualified(toks, i);
    if (!(isSegment(t) || (isPunct(t, '::') && isSegment(toks[i + 1])))) return null;
    // a path: segments joined by `::`, generic arguments after `::` skipped
    const prev = toks[i - 1];
    const segs: Token[] = [];
    let j = i;
    if (isPunct(toks[j], '::')) j++;
    while (isSegment(toks[j])) {
      segs.push(toks[j]!);
      j++;
      if (isPunct(toks[j], '::') && (isPunct(toks[j + 1], '<') || isPunct(toks[j + 1], '<<'))) j = skipGenerics(toks, j + 1);
      if (isPunct(toks[j], '::') && isSegment(toks[j + 1])) { j++; continue; }
      break;
    }
    const last = segs[segs.length - 1]!;
    const path = (isPunct(toks[i], '::') ? '::' : '') + segs.map(segText).join('::');
    const next = toks[j];
    const call = groupOf(next, '(');
    if (isPunct(next, '!') && isGroup(toks[j + 1]) && (toks[j + 1] as Group).delim !== '') {
      const g = toks[j + 1] as Group;
      const first = toks[i]!;
      const anchor: Anchor = first.line > 0 ? { line: first.line, col: first.col, lineEnd: g.endLine > 0 ? g.endLine : first.line } : this.place.anchor;
      this.ref(`${path}!`, segs[segs.length - 1]!, {});
      this.out.macros.push({ path: toks.slice(i, j), name: segText(last), input: g.tokens, anchor });
      return { expr: { k: 'macro', name: path }, j: j + 2 };
    }
    if (call) {
      const after = toks[j + 1];
      const isDef = isIdent(prev, 'fn') || isIdent(prev, 'struct') || isIdent(prev, 'enum') || isIdent(prev, 'union');
      // `let Some(x) =`, `Ok(v) =>`, `Some(a) | None`, `Err(e) if …`: patterns, not calls
      const isPattern = isIdent(prev, 'let') || isPunct(after, '=>') || isPunct(after, '|') || isIdent(after, 'if');
      if (isDef || isPattern || NOT_CALLEES.has(segText(last))) {
        this.list(call.tokens);
        return { expr: UNKNOWN('not a call'), j: j + 1 };
      }
      this.ref(path, last, {});
      const a0 = this.firstArg(call);
      this.list(call.tokens);
      const e: Expr = { k: 'call', f: path };
      if (a0) e.a0 = a0;
      return { expr: e, j: j + 1 };
    }
    const lit = groupOf(next, '{');
    if (lit && /^[A-Z]/.test(segText(last))) {
      this.list(lit.tokens);
      return { expr: { k: 'struct', path }, j: j + 1 };
    }
    return { expr: { k: 'path', path }, j };
  }

  /**
   * `<T as Trait>::f(…)` at `i` with T and Trait plain paths (petgraph's `assert!(<Ix as IndexType>::max()…)`):
   * a call with its qualified self, as the parser gives it; its value types as `T::f(…)` (T's bounds). Else null.
   */
  private qualified(toks: Token[], i: number): { expr: Expr; j: number } | null {
    const plain = (from: number): { path: string; j: number } | null => {
      const segs: string[] = [];
      let j = from;
      while (isSegment(toks[j])) {
        segs.push(segText(toks[j]!));
        j++;
        if (isPunct(toks[j], '::') && isSegment(toks[j + 1])) { j++; continue; }
        break;
      }
      return segs.length > 0 ? { path: segs.join('::'), j } : null;
    };
    const self = plain(i + 1);
    if (!self || !isIdent(toks[self.j], 'as')) return null;
    const trait = plain(self.j + 1);
    if (!trait || !isPunct(toks[trait.j], '>') || !isPunct(toks[trait.j + 1], '::')) return null;
    const name = toks[trait.j + 2];
    const call = groupOf(toks[trait.j + 3], '(');
    if (!name || !isSegment(name) || !call) return null;
    const target = `<${self.path} as ${trait.path}>::${segText(name)}`;
    this.ref(target, name, {});
    const r = this.out.refs[this.out.refs.length - 1]!;
    r.qself = { self: { k: 'path', path: self.path, args: [] }, trait: { k: 'path', path: trait.path, args: [] } };
    this.list(call.tokens);
    return { expr: { k: 'call', f: `${self.path}::${segText(name)}` }, j: trait.j + 4 };
  }

  /** The expression a group holds when it is one chain (`(x.y())`, a captured `$e`), scanning nothing. */
  private single(g: Group): Expr | null {
    const toks = g.tokens[0] && (isPunct(g.tokens[0], '&') || isPunct(g.tokens[0], '&&')) ? g.tokens.slice(isIdent(g.tokens[1], 'mut') ? 2 : 1) : g.tokens;
    const quiet = new Scanner(this.place, { refs: [], macros: [], bindings: [] });
    const r = quiet.chain(toks, 0);
    return r && r.j === toks.length ? r.expr : null;
  }

  /** The first argument's expression (`&x` counted as `x`, as the parser does). */
  private firstArg(g: Group): Expr | undefined {
    let toks = g.tokens;
    const comma = toks.findIndex((t) => isPunct(t, ','));
    if (comma >= 0) toks = toks.slice(0, comma);
    if (toks.length === 0) return undefined;
    return this.single({ ...g, tokens: toks }) ?? undefined;
  }

  private ref(target: string, tok: Token, extra: { recv?: Expr }) {
    const p = this.place;
    const r: Ref = tok.line > 0
      ? { kind: 'calls', target, line: tok.line, col: tok.col, at: p.at, origin: 'macro-arg' }
      : { kind: 'calls', target, line: p.anchor.line, col: p.anchor.col, at: p.at, origin: p.defOrigin };
    if (extra.recv) r.recv = extra.recv;
    this.out.refs.push(r);
  }
}

/** The primitive type of a literal token, as the parser names it. */
function litPrim(text: string): string {
  if (text.startsWith('"') || /^[rbc]+#*"/.test(text)) return 'str';
  if (text.startsWith("'") || text.startsWith("b'")) return 'char';
  const suffix = /(u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize|f32|f64)$/.exec(text)?.[1];
  if (suffix) return suffix;
  return /^\d[\d_]*(\.\d|[eE])/.test(text) ? 'f64' : 'i32';
}

/** Index after the generic arguments starting at `list[at]` (`<` or `<<`). */
function skipGenerics(list: Token[], at: number): number {
  let depth = 0;
  let j = at;
  for (; j < list.length; j++) {
    const t = list[j]!;
    if (isPunct(t, '<')) depth++;
    else if (isPunct(t, '<<')) depth += 2;
    else if (isPunct(t, '>')) depth--;
    else if (isPunct(t, '>>')) depth -= 2;
    else if (isPunct(t, '->')) continue;
    if (depth <= 0) return j + 1;
  }
  return j;
}
