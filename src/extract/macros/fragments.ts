// Fragment parsers: where a `$x:kind` capture ends. Each parser consumes one
// fragment of its kind (an expression, a type, a pattern, an item …) from a
// token list at one nesting level, where groups (`(…)`, `[…]`, `{…}`) are
// single tokens, and answers the index after it, or null when the tokens do
// not start such a fragment.
//
// These are recognisers, not parsers that build trees: only the extent
// matters, so operator precedence is irrelevant (a binary expression is
// operands separated by operators) and a group is never looked into except
// where Rust's grammar needs it (`pub(crate)`). They follow rustc's parser
// where the extent depends on it: no struct literals in `if`/`match`/`while`/
// `for` heads, `>>` closing two generic lists, `||` as an empty closure
// parameter list, top-level `|` in `pat` from edition 2021 on.
//
// Invariant: never throws, never loops (every loop consumes a token or stops).
import { isGroup, isIdent, isPunct, KEYWORDS, type FragKind, type Leaf, type Token } from './tokens.ts';

export type Edition = 2015 | 2018 | 2021 | 2024;

/** Keywords that may start an expression (rustc's `ident_can_begin_expr`). */
const EXPR_KEYWORDS = new Set([
  'async', 'do', 'box', 'break', 'const', 'continue', 'false', 'for', 'if', 'let', 'loop', 'match', 'move',
  'return', 'true', 'try', 'unsafe', 'while', 'yield', 'static', 'become', 'self', 'Self', 'super', 'crate',
]);
const TYPE_KEYWORDS = new Set(['_', 'dyn', 'fn', 'for', 'impl', 'unsafe', 'extern', 'self', 'Self', 'super', 'crate']);
const BINOPS = new Set([
  '+', '-', '*', '/', '%', '^', '&', '|', '&&', '||', '<<', '>>', '==', '!=', '<', '>', '<=', '>=', '=', '+=', '-=',
  '*=', '/=', '%=', '^=', '&=', '|=', '<<=', '>>=', '..', '..=',
]);
const EXPR_PUNCT_START = new Set(['!', '-', '*', '&', '&&', '|', '||', '..', '..=', '<', '<<', '::', '#']);
const PAT_PUNCT_START = new Set(['&', '-', '&&', '..', '...', '::', '<', '<<', '..=']);

/** Can a token start an expression? */
export function canBeginExpr(t: Token | undefined): boolean {
  if (!t) return false;
  switch (t.k) {
    case 'literal': case 'lifetime': case 'group': case 'crate': return true;
    case 'ident': return !KEYWORDS.has(t.text) || EXPR_KEYWORDS.has(t.text);
    case 'punct': return EXPR_PUNCT_START.has(t.text);
  }
}

export function canBeginType(t: Token | undefined): boolean {
  if (!t) return false;
  switch (t.k) {
    case 'ident': return !KEYWORDS.has(t.text) || TYPE_KEYWORDS.has(t.text);
    case 'group': return t.delim !== '{';
    case 'crate': case 'lifetime': return true;
    case 'literal': return false;
    case 'punct': return ['!', '*', '&', '&&', '?', '<', '<<', '::'].includes(t.text);
  }
}

/** rustc's `nonterminal_may_begin_with`: may a fragment of `kind` start with `t`? */
export function mayBegin(kind: FragKind, t: Token | undefined, edition: Edition): boolean {
  if (!t) return false;
  const nt = t.k === 'group' && t.delim === '' ? t.nt : undefined;
  switch (kind) {
    case 'expr':
      return canBeginExpr(t) && !isIdent(t, 'let') && !(isIdent(t, 'const') && edition < 2024);
    case 'ty': return canBeginType(t);
    case 'ident': return (t.k === 'ident' && t.text !== '_') || nt === 'ident';
    case 'literal': return t.k === 'literal' || isPunct(t, '-') || isIdent(t, 'true') || isIdent(t, 'false') || nt === 'literal';
    case 'vis': return isPunct(t, ',') || t.k === 'ident' || t.k === 'group' && t.delim === '' || canBeginType(t);
    case 'block': return isGroup(t, '{') || (nt !== undefined && !['item', 'pat', 'ty', 'ident', 'meta', 'path', 'vis'].includes(nt));
    case 'path': case 'meta':
      return isPunct(t, '::') || t.k === 'ident' || t.k === 'crate' || nt === 'path' || nt === 'ident' || nt === 'meta' || nt === 'ty';
    case 'pat': case 'pat_param':
      if (t.k === 'ident' || t.k === 'literal' || t.k === 'crate') return true;
      if (t.k === 'group') return t.delim === '(' || t.delim === '[' || (t.delim === '' && ['pat', 'ident', 'literal', 'path', 'expr'].includes(nt ?? ''));
      if (t.k === 'punct') return PAT_PUNCT_START.has(t.text) || (t.text === '|' && kind === 'pat' && edition >= 2021);
      return false;
    case 'lifetime': return t.k === 'lifetime' || nt === 'lifetime';
    case 'tt': case 'item': case 'stmt': return true;
  }
}

/**
 * Parse one fragment of `kind` at `tokens[i]`; the index after it, or null.
 * (`tt`: one token tree; `vis` may be empty.)
 */
export function parseFragment(kind: FragKind, tokens: Token[], i: number, edition: Edition): number | null {
  if (kind === 'tt') return i < tokens.length ? i + 1 : null; // the commonest kind: no cursor
  const p = new Cursor(tokens, i, edition);
  let ok: boolean;
  switch (kind) {
    case 'ident': ok = p.identFrag(); break;
    case 'lifetime': ok = p.nt('lifetime') || p.lifetime(); break;
    case 'literal': ok = p.literalFrag(); break;
    case 'vis': p.vis(); ok = true; break;
    case 'block': ok = p.nt('block') || p.eatGroup('{'); break;
    case 'ty': ok = p.ty(true); break;
    case 'path': ok = p.nt('path') || p.path('type'); break;
    case 'meta': ok = p.meta(); break;
    case 'expr': ok = !isIdent(tokens[i], 'let') && p.expr(false); break;
    case 'pat': ok = p.pat(edition >= 2021); break;
    case 'pat_param': ok = p.pat(false); break;
    case 'item': ok = p.item(); break;
    case 'stmt': ok = p.stmt(); break;
  }
  if (!ok || p.half) return null;
  return p.i > i || kind === 'vis' ? p.i : null;
}

/** A recogniser over one token list. `half`: the current `>>`/`<<` has had its first half consumed. */
export class Cursor {
  half = false;
  constructor(readonly t: Token[], public i: number, readonly edition: Edition) {}

  /** The token `k` ahead; while `half`, the current one is the second half of a split `>>`/`<<`. */
  peek(k = 0): Token | undefined {
    const t = this.t[this.i + k];
    if (k === 0 && this.half && t && t.k === 'punct') return { ...t, text: t.text[1]! };
    return t;
  }

  bump(): void {
    this.half = false;
    this.i++;
  }

  atEnd(): boolean {
    return this.i >= this.t.length;
  }

  punct(text: string, k = 0): boolean {
    return isPunct(this.peek(k), text);
  }

  kw(text: string, k = 0): boolean {
    return isIdent(this.peek(k), text);
  }

  eat(text: string): boolean {
    if (!this.punct(text)) return false;
    this.bump();
    return true;
  }

  eatKw(text: string): boolean {
    if (!this.kw(text)) return false;
    this.bump();
    return true;
  }

  eatGroup(delim: '(' | '[' | '{'): boolean {
    if (!isGroup(this.peek(), delim)) return false;
    this.bump();
    return true;
  }

  /** An invisible group captured as one of the kinds given (up to three: no array made per call). */
  nt(a: FragKind, b?: FragKind, c?: FragKind): boolean {
    const t = this.peek();
    if (!t || t.k !== 'group' || t.delim !== '' || !t.nt || (t.nt !== a && t.nt !== b && t.nt !== c)) return false;
    this.bump();
    return true;
  }

  /** `>` (or the first/second half of `>>`). */
  eatGt(): boolean {
    const t = this.peek();
    if (isPunct(t, '>')) { this.bump(); return true; }
    if (isPunct(t, '>>')) { this.half = true; return true; }
    return false;
  }

  /** `<` (or the first half of `<<`). */
  eatLt(): boolean {
    const t = this.peek();
    if (isPunct(t, '<')) { this.bump(); return true; }
    if (isPunct(t, '<<')) { this.half = true; return true; }
    return false;
  }

  /** At `<` (or `<<`, whose second `<` starts a nested one). */
  atLt(): boolean {
    return isPunct(this.peek(), '<') || isPunct(this.peek(), '<<');
  }

  lifetime(): boolean {
    const t = this.peek();
    if (!t || t.k !== 'lifetime') return false;
    this.bump();
    return true;
  }

  identFrag(): boolean {
    if (this.nt('ident')) return true;
    const t = this.peek();
    if (!t || t.k !== 'ident' || t.text === '_') return false;
    this.bump();
    return true;
  }

  literalFrag(): boolean {
    if (this.nt('literal')) return true;
    if (this.kw('true') || this.kw('false')) { this.bump(); return true; }
    if (this.punct('-')) {
      const n = this.peek(1);
      if (n?.k !== 'literal' && !isIdent(n, 'true') && !isIdent(n, 'false')) return false;
      this.bump();
      this.bump();
      return true;
    }
    if (this.peek()?.k !== 'literal') return false;
    this.bump();
    return true;
  }

  vis(): void {
    if (this.nt('vis')) return;
    if (!this.eatKw('pub')) return;
    const g = this.peek();
    if (isGroup(g, '(')) {
      const first = g.tokens[0];
      if (isIdent(first, 'in') || (g.tokens.length === 1 && (isIdent(first, 'crate') || isIdent(first, 'self') || isIdent(first, 'super')))) this.bump();
    }
  }

  meta(): boolean {
    if (this.nt('meta', 'path')) return true;
    this.eatKw('unsafe');
    if (!this.path('mod')) return false;
    const t = this.peek();
    if (isGroup(t) && t.delim !== '') { this.bump(); return true; }
    if (this.eat('=')) return this.expr(false);
    return true;
  }

  // --- paths ------------------------------------------------------------------

  private segment(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'crate') { this.bump(); return true; }
    if (t.k === 'ident' && (!KEYWORDS.has(t.text) || ['self', 'Self', 'super', 'crate'].includes(t.text))) { this.bump(); return true; }
    if (t.k === 'group' && t.delim === '' && (t.nt === 'ident' || t.nt === 'path')) { this.bump(); return true; }
    return false;
  }

  /**
   * A path. `type` style: generic arguments with or without `::`, `Fn(A) -> B`
   * sugar; `expr` style: generic arguments only after `::`; `mod` style: none.
   */
  path(style: 'type' | 'expr' | 'mod'): boolean {
    if (this.atLt() && style !== 'mod') {
      // qualified: `<T as Trait>::x`
      if (!this.eatLt()) return false;
      if (!this.ty(false)) return false;
      if (this.eatKw('as') && !this.path('type')) return false;
      if (!this.eatGt()) return false;
      if (!this.punct('::')) return false;
    } else {
      const lead = this.eat('::');
      if (!this.segment()) return false;
      void lead;
    }
    for (;;) {
      if (style === 'type' && this.atLtGenerics()) {
        if (!this.genericArgs()) return false;
        continue;
      }
      if (style === 'type' && isGroup(this.peek(), '(')) {
        this.bump();
        if (this.eat('->') && !this.ty(false)) return false;
        continue;
      }
      if (this.punct('::')) {
        if (style !== 'mod' && (isPunct(this.peek(1), '<') || isPunct(this.peek(1), '<<'))) {
          this.bump();
          if (!this.genericArgs()) return false;
          continue;
        }
        const next = this.peek(1);
        if (next && (next.k === 'ident' || next.k === 'crate' || (next.k === 'group' && next.delim === '' && next.nt === 'ident'))) {
          this.bump();
          this.bump();
          continue;
        }
        if (style === 'type' && isGroup(next, '(')) {
          this.bump(); // `Fn::(A)` is not Rust, but `::` before a paren group is harmless to accept
          continue;
        }
      }
      return true;
    }
  }

  private atLtGenerics(): boolean {
    return this.atLt();
  }

  /** `<` args `>` with the cursor at the `<`. */
  genericArgs(): boolean {
    if (!this.eatLt()) return false;
    for (let guard = 0; guard < 10_000; guard++) {
      if (this.eatGt()) return true;
      if (this.atEnd()) return false;
      if (!this.genericArg()) return false;
      if (this.eat(',')) continue;
      if (this.eatGt()) return true;
      return false;
    }
    return false;
  }

  private genericArg(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'lifetime') { this.bump(); return true; }
    if (t.k === 'literal') { this.bump(); return true; }
    if (this.punct('-') && this.peek(1)?.k === 'literal') { this.bump(); this.bump(); return true; }
    if (isGroup(t, '{')) { this.bump(); return true; }
    if (t.k === 'ident') {
      // associated item constraints: `Item = T`, `Item: Bound`, `Item<'a> = T`
      const n = this.peek(1);
      if (isPunct(n, '=') || isPunct(n, ':') && !isPunct(this.peek(2), ':')) {
        this.bump();
        if (this.eat('=')) return this.ty(false) || this.expr(false);
        this.bump();
        return this.bounds();
      }
      if (isPunct(n, '<') || isPunct(n, '<<')) {
        const save = this.i;
        this.bump();
        if (this.genericArgs() && (this.punct('=') || this.punct(':'))) {
          if (this.eat('=')) return this.ty(false);
          this.bump();
          return this.bounds();
        }
        this.i = save;
        this.half = false;
      }
    }
    return this.ty(false);
  }

  // --- types ------------------------------------------------------------------

  ty(allowPlus: boolean): boolean {
    const t = this.peek();
    if (!t) return false;
    if (this.nt('ty', 'path', 'ident')) return this.plus(allowPlus);
    if (t.k === 'group') {
      if (t.delim === '(' || t.delim === '[') { this.bump(); return this.plus(allowPlus && t.delim === '('); }
      return false;
    }
    if (t.k === 'lifetime') return allowPlus && this.bounds();
    if (t.k === 'punct') {
      switch (t.text) {
        case '!': this.bump(); return true;
        case '&': case '&&':
          this.bump();
          this.lifetime();
          this.eatKw('mut');
          return this.ty(false);
        case '*':
          this.bump();
          if (!this.eatKw('const')) this.eatKw('mut');
          return this.ty(false);
        case '?': return this.bounds();
        case '<': case '<<': case '::': return this.pathType(allowPlus);
        default: return false;
      }
    }
    if (t.k === 'crate') return this.pathType(allowPlus);
    if (t.k !== 'ident') return false;
    switch (t.text) {
      case '_': this.bump(); return true;
      case 'fn': case 'unsafe': case 'extern': return this.fnPtr();
      case 'for': {
        this.bump();
        if (!this.genericParams()) return false;
        if (this.kw('fn') || this.kw('unsafe') || this.kw('extern')) return this.fnPtr();
        return this.path('type') && this.plus(allowPlus);
      }
      case 'impl': case 'dyn':
        this.bump();
        return this.bounds();
      default:
        if (KEYWORDS.has(t.text) && !['self', 'Self', 'super', 'crate'].includes(t.text)) return false;
        return this.pathType(allowPlus);
    }
  }

  private pathType(allowPlus: boolean): boolean {
    if (!this.path('type')) return false;
    if (this.punct('!') && isGroup(this.peek(1)) && (this.peek(1) as { delim: string }).delim !== '') {
      this.bump();
      this.bump();
      return true;
    }
    return this.plus(allowPlus);
  }

  /** After a type that may be a bound: `+ Bound …`. */
  private plus(allowPlus: boolean): boolean {
    if (allowPlus && this.punct('+')) {
      this.bump();
      return this.bounds();
    }
    return true;
  }

  /** `Bound + Bound …` (lifetimes, `?Sized`, `~const`, `for<'a>`, parenthesised). */
  bounds(): boolean {
    for (let guard = 0; guard < 10_000; guard++) {
      if (!this.bound()) return false;
      if (!this.punct('+')) return true;
      this.bump();
      // a trailing `+` is allowed
      const n = this.peek();
      if (!n || !(n.k === 'lifetime' || n.k === 'ident' || n.k === 'crate' || isPunct(n, '?') || isPunct(n, '~') || isPunct(n, '::') || isPunct(n, '<') || isGroup(n, '('))) return true;
    }
    return false;
  }

  private bound(): boolean {
    if (this.lifetime()) return true;
    if (this.eatGroup('(')) return true;
    this.eat('?');
    if (this.eat('~')) this.eatKw('const');
    this.eatKw('const');
    this.eatKw('async');
    if (this.kw('for')) {
      this.bump();
      if (!this.genericParams()) return false;
    }
    if (this.nt('ty', 'path')) return true;
    return this.path('type');
  }

  /** `<'a, T: Bound, const N: usize = 3>` (generic parameters: enough to skip them). */
  genericParams(): boolean {
    if (!this.eatLt()) return false;
    let depth = 1;
    for (let guard = 0; guard < 100_000 && !this.atEnd(); guard++) {
      const t = this.peek()!;
      if (isPunct(t, '<')) depth++;
      else if (isPunct(t, '<<')) depth += 2;
      else if (isPunct(t, '>')) depth--;
      else if (isPunct(t, '>>')) {
        if (depth === 1) { this.half = true; return true; }
        depth -= 2;
      } else if (isPunct(t, '->')) { /* not a closer */ }
      this.bump();
      if (depth === 0) return true;
    }
    return false;
  }

  private fnPtr(): boolean {
    this.eatKw('unsafe');
    if (this.eatKw('extern') && this.peek()?.k === 'literal') this.bump();
    if (!this.eatKw('fn')) return false;
    if (!this.eatGroup('(')) return false;
    if (this.eat('->')) return this.ty(false);
    return true;
  }

  // --- expressions ------------------------------------------------------------

  /** An expression; `noStruct`: no struct literal at the top (an `if`/`match`/`while`/`for` head). */
  expr(noStruct: boolean): boolean {
    while (this.eat('#')) { // attributes on expressions
      this.eat('!');
      if (!this.eatGroup('[')) return false;
    }
    if (!this.operand(noStruct)) return false;
    for (let guard = 0; guard < 1_000_000; guard++) {
      const t = this.peek();
      if (!t) return true;
      if (t.k === 'punct' && BINOPS.has(t.text)) {
        this.bump();
        if (t.text === '..' || t.text === '..=') {
          if (this.startsOperand(noStruct)) { if (!this.operand(noStruct)) return false; }
          continue;
        }
        if (!this.operand(noStruct)) return false;
        continue;
      }
      if (isIdent(t, 'as')) {
        this.bump();
        if (!this.ty(false)) return false;
        continue;
      }
      return true;
    }
    return false;
  }

  private startsOperand(noStruct: boolean): boolean {
    const t = this.peek();
    if (!canBeginExpr(t)) return false;
    if (noStruct && isGroup(t, '{')) return false;
    return true;
  }

  /** Prefix operators, a primary expression, postfix operators. */
  private operand(noStruct: boolean): boolean {
    for (let guard = 0; guard < 100_000; guard++) {
      const t = this.peek();
      if (!t) return false;
      if (t.k === 'punct') {
        if (t.text === '-' || t.text === '!' || t.text === '*') { this.bump(); continue; }
        if (t.text === '&' || t.text === '&&') {
          this.bump();
          if (this.kw('raw') && (this.kw('const', 1) || this.kw('mut', 1))) { this.bump(); this.bump(); continue; }
          this.eatKw('mut');
          continue;
        }
        if (t.text === '..' || t.text === '..=') {
          this.bump();
          if (this.startsOperand(noStruct)) return this.operand(noStruct);
          return true;
        }
      }
      if (isIdent(t, 'box') && canBeginExpr(this.peek(1))) { this.bump(); continue; }
      break;
    }
    return this.primary(noStruct) && this.postfix();
  }

  private postfix(): boolean {
    for (let guard = 0; guard < 1_000_000; guard++) {
      const t = this.peek();
      if (!t) return true;
      if (isPunct(t, '?')) { this.bump(); continue; }
      if (isPunct(t, '.')) {
        const n = this.peek(1);
        if (!n) return false;
        if (n.k === 'literal') { this.bump(); this.bump(); continue; }
        if (n.k === 'ident' || (n.k === 'group' && n.delim === '' && n.nt === 'ident')) {
          this.bump();
          this.bump();
          if (this.punct('::') && (isPunct(this.peek(1), '<') || isPunct(this.peek(1), '<<'))) {
            this.bump();
            if (!this.genericArgs()) return false;
          }
          continue;
        }
        return false;
      }
      if (t.k === 'group' && (t.delim === '(' || t.delim === '[')) { this.bump(); continue; }
      return true;
    }
    return false;
  }

  private primary(noStruct: boolean): boolean {
    const t = this.peek();
    if (!t) return false;
    switch (t.k) {
      case 'literal': this.bump(); return true;
      case 'group':
        if (t.delim === '') {
          if (t.nt === 'path' || t.nt === 'ident') return this.afterPath(noStruct, true);
          this.bump();
          return true;
        }
        this.bump();
        return true;
      case 'lifetime':
        // a label: `'a: loop { … }`
        if (!isPunct(this.peek(1), ':')) return false;
        this.bump();
        this.bump();
        return this.primary(noStruct);
      case 'crate': return this.pathExpr(noStruct);
      case 'punct':
        if (t.text === '|' || t.text === '||') return this.closure(noStruct);
        if (t.text === '<' || t.text === '<<' || t.text === '::') return this.pathExpr(noStruct);
        return false;
      case 'ident': break;
    }
    switch (t.text) {
      case 'true': case 'false': case '_': this.bump(); return true;
      case 'if': return this.ifExpr();
      case 'match':
        this.bump();
        return this.expr(true) && this.eatGroup('{');
      case 'while':
        this.bump();
        return this.expr(true) && this.eatGroup('{');
      case 'loop':
        this.bump();
        return this.eatGroup('{');
      case 'for':
        if (isPunct(this.peek(1), '<')) break; // `for<'a> |x| …`
        this.bump();
        return this.pat(true) && this.eatKw('in') && this.expr(true) && this.eatGroup('{');
      case 'unsafe':
        this.bump();
        return this.eatGroup('{');
      case 'const':
        if (isGroup(this.peek(1), '{')) { this.bump(); this.bump(); return true; }
        break;
      case 'try':
        if (isGroup(this.peek(1), '{')) { this.bump(); this.bump(); return true; }
        return this.pathExpr(noStruct);
      case 'async': case 'gen':
        if (isGroup(this.peek(1), '{')) { this.bump(); this.bump(); return true; }
        if (this.kw('move', 1) && isGroup(this.peek(2), '{')) { this.bump(); this.bump(); this.bump(); return true; }
        if (t.text === 'gen') return this.pathExpr(noStruct);
        return this.closure(noStruct);
      case 'move': case 'static':
        return this.closure(noStruct);
      case 'return': case 'yield': case 'become':
        this.bump();
        if (this.startsOperand(noStruct)) return this.expr(noStruct);
        return true;
      case 'break':
        this.bump();
        this.lifetime();
        if (this.startsOperand(noStruct)) return this.expr(noStruct);
        return true;
      case 'continue':
        this.bump();
        this.lifetime();
        return true;
      case 'let':
        this.bump();
        return this.pat(true) && this.eat('=') && this.operandChain(true);
      default:
        break;
    }
    if (KEYWORDS.has(t.text) && !['self', 'Self', 'super', 'crate', 'for'].includes(t.text)) return false;
    if (t.text === 'for') { // `for<'a> |x| body`
      this.bump();
      return this.genericParams() && this.closure(noStruct);
    }
    return this.pathExpr(noStruct);
  }

  /**
   * The scrutinee of `let` in a condition: operands joined by operators that
   * bind tighter than `&&` (a `let` chain continues after `&&`, which the
   * caller's loop consumes).
   */
  private operandChain(noStruct: boolean): boolean {
    if (!this.operand(noStruct)) return false;
    for (let guard = 0; guard < 100_000; guard++) {
      const t = this.peek();
      if (!t || t.k !== 'punct' || !BINOPS.has(t.text) || t.text === '&&' || t.text === '||' || t.text.endsWith('=') && !['==', '!=', '<=', '>='].includes(t.text)) {
        if (isIdent(t, 'as')) { this.bump(); if (!this.ty(false)) return false; continue; }
        return true;
      }
      this.bump();
      if (!this.operand(noStruct)) return false;
    }
    return false;
  }

  private pathExpr(noStruct: boolean): boolean {
    if (!this.path('expr')) return false;
    return this.afterPath(noStruct, false);
  }

  /** After a path: a macro call `!(…)`, a struct literal `{…}`, or nothing. */
  private afterPath(noStruct: boolean, bumpNt: boolean): boolean {
    if (bumpNt) this.bump();
    if (this.punct('!') && isGroup(this.peek(1)) && (this.peek(1) as { delim: string }).delim !== '') {
      this.bump();
      this.bump();
      return true;
    }
    if (!noStruct && isGroup(this.peek(), '{')) this.bump();
    return true;
  }

  private ifExpr(): boolean {
    for (let guard = 0; guard < 100_000; guard++) {
      if (!this.eatKw('if')) return false;
      if (!this.expr(true) || !this.eatGroup('{')) return false;
      if (!this.eatKw('else')) return true;
      if (this.eatGroup('{')) return true;
    }
    return false;
  }

  private closure(noStruct: boolean): boolean {
    while (this.eatKw('static') || this.eatKw('async') || this.eatKw('move')) { /* qualifiers */ }
    if (this.eat('||')) {
      // no parameters
    } else if (this.eat('|')) {
      // parameters: patterns with optional types; a `|` inside them sits in a group
      let found = false;
      for (let guard = 0; guard < 100_000 && !this.atEnd(); guard++) {
        if (this.eat('|')) { found = true; break; }
        if (this.punct('||')) return false;
        this.bump();
      }
      if (!found) return false;
    } else {
      return false;
    }
    if (this.eat('->')) return this.ty(false) && this.eatGroup('{');
    return this.expr(noStruct);
  }

  // --- patterns ---------------------------------------------------------------

  /** A pattern; `topAlt`: `a | b` at the top (edition 2021 `pat`, `let`, `for`). */
  pat(topAlt: boolean): boolean {
    if (topAlt) this.eat('|');
    if (!this.patNoAlt()) return false;
    while (topAlt && this.punct('|')) {
      this.bump();
      if (!this.patNoAlt()) return false;
    }
    return true;
  }

  private patNoAlt(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'group') {
      if (t.delim === '') {
        this.bump();
        return this.rangeTail();
      }
      if (t.delim === '{') return false;
      this.bump();
      return true;
    }
    if (t.k === 'literal') { this.bump(); return this.rangeTail(); }
    if (t.k === 'lifetime') return false;
    if (t.k === 'punct') {
      switch (t.text) {
        case '-':
          if (this.peek(1)?.k !== 'literal') return false;
          this.bump();
          this.bump();
          return this.rangeTail();
        case '&': case '&&':
          this.bump();
          this.eatKw('mut');
          return this.patNoAlt();
        case '..':
          this.bump();
          this.rangeEnd();
          return true;
        case '..=': case '...':
          this.bump();
          return this.rangeEnd();
        case '<': case '<<': case '::':
          return this.pathPat();
        default:
          return false;
      }
    }
    if (t.k === 'crate') return this.pathPat();
    switch (t.text) {
      case '_': this.bump(); return true;
      case 'true': case 'false': this.bump(); return true;
      case 'box':
        this.bump();
        return this.patNoAlt();
      case 'const':
        if (isGroup(this.peek(1), '{')) { this.bump(); this.bump(); return true; }
        return false;
      case 'ref': case 'mut': {
        this.eatKw('ref');
        this.eatKw('mut');
        if (!this.identFrag()) return false;
        if (this.eat('@')) return this.patNoAlt();
        return true;
      }
      default:
        break;
    }
    if (KEYWORDS.has(t.text) && !['self', 'Self', 'super', 'crate'].includes(t.text)) return false;
    const n = this.peek(1);
    if (isPunct(n, '@')) {
      this.bump();
      this.bump();
      return this.patNoAlt();
    }
    return this.pathPat();
  }

  private pathPat(): boolean {
    if (!this.path('expr')) return false;
    if (this.punct('!') && isGroup(this.peek(1))) { this.bump(); this.bump(); return true; }
    if (this.eatGroup('(') || this.eatGroup('{')) return true;
    return this.rangeTail();
  }

  private rangeTail(): boolean {
    if (this.punct('..=') || this.punct('...')) {
      this.bump();
      return this.rangeEnd();
    }
    if (this.punct('..')) {
      this.bump();
      this.rangeEnd();
    }
    return true;
  }

  private rangeEnd(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'literal') { this.bump(); return true; }
    if (isPunct(t, '-') && this.peek(1)?.k === 'literal') { this.bump(); this.bump(); return true; }
    if (t.k === 'group' && t.delim === '' ) { this.bump(); return true; }
    if (t.k === 'ident' && !KEYWORDS.has(t.text) || t.k === 'crate' || isPunct(t, '::') || isPunct(t, '<')) return this.path('expr');
    return false;
  }

  // --- items and statements ---------------------------------------------------

  /** Outer attributes (`#[…]`), possibly none. */
  attrs(): void {
    for (;;) {
      if (this.punct('#') && isGroup(this.peek(1), '[')) { this.bump(); this.bump(); continue; }
      if (this.punct('#') && isPunct(this.peek(1), '!') && isGroup(this.peek(2), '[')) { this.bump(); this.bump(); this.bump(); continue; }
      return;
    }
  }

  item(): boolean {
    this.attrs();
    if (this.nt('item')) return true;
    this.vis();
    const t = this.peek();
    if (!t) return false;
    if (isIdent(t, 'macro_rules') && isPunct(this.peek(1), '!')) {
      this.bump();
      this.bump();
      if (!this.identFrag()) return false;
      const g = this.peek();
      if (!isGroup(g) || g.delim === '') return false;
      this.bump();
      if (g.delim !== '{') return this.eat(';');
      return true;
    }
    if (this.atMacroCall()) return this.macroCall(true);
    const kind = this.itemKind();
    if (!kind) return false;
    return this.itemRest(kind);
  }

  /** At `path ! (…)` (a macro invocation). */
  private atMacroCall(): boolean {
    let k = 0;
    if (isPunct(this.peek(k), '::')) k++;
    for (;;) {
      const t = this.peek(k);
      if (!t || !(t.k === 'ident' || t.k === 'crate')) return false;
      if (t.k === 'ident' && KEYWORDS.has(t.text) && !['self', 'super', 'crate'].includes(t.text)) return false;
      k++;
      if (isPunct(this.peek(k), '::')) { k++; continue; }
      return isPunct(this.peek(k), '!') && (isGroup(this.peek(k + 1)) || isIdent(this.peek(k + 1)));
    }
  }

  private macroCall(item: boolean): boolean {
    if (!this.path('mod')) return false;
    if (!this.eat('!')) return false;
    this.identFrag(); // `macro_rules! name` style of old user macros
    const g = this.peek();
    if (!isGroup(g) || g.delim === '') return false;
    this.bump();
    if (item && g.delim !== '{') return this.eat(';');
    return true;
  }

  /** The item's keyword after its qualifiers: `fn`, `struct` … (the cursor stops after it). */
  private itemKind(): string | null {
    for (let guard = 0; guard < 16; guard++) {
      const t = this.peek();
      if (!t || t.k !== 'ident') return null;
      switch (t.text) {
        case 'default': case 'async': case 'auto': case 'safe':
          this.bump();
          continue;
        case 'unsafe':
          this.bump();
          if (isGroup(this.peek(), '{')) return null;
          continue;
        case 'const':
          this.bump();
          if (this.kw('fn') || this.kw('unsafe') || this.kw('async') || this.kw('extern')) continue;
          return 'const';
        case 'extern':
          this.bump();
          if (this.peek()?.k === 'literal') this.bump();
          if (this.eatKw('crate')) return 'use';
          if (isGroup(this.peek(), '{')) return 'extern';
          continue;
        case 'union':
          if (this.peek(1)?.k !== 'ident') return null;
          this.bump();
          return 'struct';
        case 'fn': case 'struct': case 'enum': case 'trait': case 'impl': case 'mod': case 'macro':
        case 'type': case 'use': case 'static':
          this.bump();
          return t.text;
        default:
          return null;
      }
    }
    return null;
  }

  /**
   * The rest of an item after its keyword, as strict as the extent needs to
   * be to tell items from other token soup (a wrapper macro's body must be
   * items): the shapes of headers are checked, values and bodies skipped.
   */
  private itemRest(kind: string): boolean {
    switch (kind) {
      case 'struct':
        if (!this.identFrag()) return false;
        this.optGenerics();
        if (this.eatGroup('(')) return this.whereClause() && this.eat(';');
        if (this.kw('where') && !this.whereClause()) return false;
        return this.eatGroup('{') || this.eat(';');
      case 'enum':
        return this.identFrag() && this.optGenerics() && this.whereClause() && this.eatGroup('{');
      case 'fn':
        if (!this.identFrag() || !this.optGenerics() || !this.eatGroup('(')) return false;
        if (this.eat('->') && !this.ty(true)) return false;
        return this.whereClause() && (this.eatGroup('{') || this.eat(';'));
      case 'mod':
        return this.identFrag() && (this.eat(';') || this.eatGroup('{'));
      case 'trait':
        if (!this.identFrag() || !this.optGenerics()) return false;
        if (this.eat('=')) return this.skipTo(';');
        if (this.eat(':') && !this.bounds()) return false;
        return this.whereClause() && this.eatGroup('{');
      case 'extern':
        return this.eatGroup('{');
      case 'impl': case 'macro':
        return this.skipTo('{');
      default: // const, static, type, use, extern crate: up to their `;`
        return this.skipTo(';');
    }
  }

  /** Generic parameters if any (always true unless they are malformed). */
  private optGenerics(): boolean {
    return !this.atLt() || this.genericParams();
  }

  /** `where …` up to (not including) the `{` or `;` that follows it; true when absent. */
  private whereClause(): boolean {
    if (!this.eatKw('where')) return true;
    for (let guard = 0; guard < 1_000_000 && !this.atEnd(); guard++) {
      if (this.punct(';') || isGroup(this.peek(), '{')) return true;
      this.bump();
    }
    return false;
  }

  /** Tokens up to and including the next `;` (or `{…}` group) at this level. */
  private skipTo(end: ';' | '{'): boolean {
    for (let guard = 0; guard < 1_000_000 && !this.atEnd(); guard++) {
      const t = this.peek()!;
      if (end === ';' && isPunct(t, ';')) { this.bump(); return true; }
      if (end === '{' && isGroup(t, '{')) { this.bump(); return true; }
      this.bump();
    }
    return false;
  }

  /** A statement without its trailing `;`: `let`, an item, or an expression. */
  stmt(): boolean {
    if (this.nt('stmt', 'item', 'expr')) return true;
    const save = this.i;
    this.attrs();
    if (this.eatKw('let')) {
      if (!this.pat(true)) return false;
      if (this.eat(':') && !this.ty(true)) return false;
      if (this.eat('=')) {
        if (!this.expr(false)) return false;
        if (this.eatKw('else') && !this.eatGroup('{')) return false;
      }
      return true;
    }
    if (this.atItemStart()) {
      this.i = save;
      return this.item();
    }
    return this.expr(false);
  }

  private atItemStart(): boolean {
    const t = this.peek();
    if (!t || t.k !== 'ident') return false;
    if (isIdent(t, 'macro_rules') && isPunct(this.peek(1), '!')) return true;
    switch (t.text) {
      case 'pub': case 'fn': case 'struct': case 'enum': case 'trait': case 'impl': case 'mod': case 'use': case 'static':
      case 'extern': case 'type':
        return true;
      case 'const': return !isGroup(this.peek(1), '{');
      case 'unsafe': return !isGroup(this.peek(1), '{');
      case 'async': return this.kw('fn', 1) || this.kw('unsafe', 1);
      case 'union': return this.peek(1)?.k === 'ident';
      default: return false;
    }
  }
}

/** Split `tokens` at top-level `sep` punctuation (for macro arguments). */
export function splitTop(tokens: Token[], sep: string): Token[][] {
  const out: Token[][] = [[]];
  for (const t of tokens) {
    if (isPunct(t, sep)) out.push([]);
    else out[out.length - 1]!.push(t);
  }
  return out;
}

export type { Leaf };
