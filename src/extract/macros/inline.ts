// Item-position macro calls inside an expansion, expanded in place before
// anything is parsed: the tokens of a written invocation's whole expansion
// tree become one token sequence, parsed once (a macro that forwards to other
// macros — `s!` -> `s!(it: …)` -> `__item!`, `strip_attrs_pub!` ->
// `ast_struct!` — costs one parse, not one per level).
//
// A call's `cfg`/`cfg_attr` attributes are carried onto every item it
// produces (rustc removes an inactive invocation before expanding it; an
// item under the same attributes is removed the same way by the cfg phase).
// A call that cannot be expanded here is handed back to the module-tree walk:
// one whose macro is not known yet while the expansion defines macros of its
// own (the walk defines them first), one that hits the depth limit (reported
// by the caller). Also here: the two ways to take a macro's tokens without
// its definition — `cfg_if!` by its meaning, a wrapper whose tokens are all
// items as written.
//
// Invariant: pure apart from the `expand` callback; every loop consumes tokens.
import { Cursor, type Edition } from './fragments.ts';
import type { Anchor, Site } from './produce.ts';
import { lastName } from './produce.ts';
import { isGroup, isIdent, isPunct, KEYWORDS, tokenize, tokensText, type Group, type Token } from './tokens.ts';
import type { MacroDef } from './expand.ts';

/** What expanding one nested call gave: its tokens, or why not. */
export type Nested =
  | { tokens: Token[]; def: MacroDef | null }
  | { unresolved: true }
  | { delegate: true };

export interface Inlined {
  /**
   * The item tokens, nested calls replaced by their expansions. A nested
   * call written in the source (its path has a position) has its own place:
   * the tokens its definition wrote carry line `-k`, `anchors[k]` says where
   * that is and which macro it was (rustc places generated items at the
   * innermost invocation written in the source).
   */
  tokens: Token[];
  anchors: { anchor: Anchor; origin: string }[];
  /** Calls handed back to the walk, with the cfg attribute texts that apply to them. */
  delegated: { site: Site; cfg: string[] }[];
  /** Whether the tokens define a `macro_rules!` (its later calls may need the walk). */
  definesMacros: boolean;
}

/**
 * Expand the item-position calls in `tokens` (produced by `def` at `site`)
 * through `expand`, recursively; `cfg` are attribute tokens (`#`, `[…]`)
 * to put before every item; `mark` is where `tokens`' definition-written
 * tokens are placed (0: at `site`, -k: at `anchors[k]`).
 */
export function inlineCalls(
  tokens: Token[], site: Site, def: MacroDef | null, expand: (site: Site, definesMacros: boolean) => Nested, cfg: Token[] = [],
  out: Inlined = { tokens: [], anchors: [{ anchor: site.anchor, origin: '' }], delegated: [], definesMacros: false },
  mark = 0,
): Inlined {
  const c = new Cursor(tokens, 0, 2021);
  while (!c.atEnd()) {
    const start = c.i;
    c.attrs();
    const call = callAt(tokens, c.i);
    if (call) {
      const attrs = [...cfg, ...cfgAttrTokens(tokens.slice(start, c.i))];
      const path = tokens.slice(c.i, call.bang);
      const name = path[path.length - 1];
      const anchor: Anchor = name && name.line > 0
        ? { line: name.line, col: name.col, lineEnd: call.group.endLine > 0 ? call.group.endLine : name.line }
        : site.anchor;
      const sub: Site = { path, name: lastName(path), input: call.group.tokens, anchor, at: site.at, parent: def, depth: site.depth + 1 };
      const r = expand(sub, out.definesMacros);
      if ('tokens' in r) {
        let toks = r.tokens;
        let at = mark;
        if (name && name.line > 0) {
          out.anchors.push({ anchor, origin: `macro:${r.def?.name ?? sub.name}` });
          at = -(out.anchors.length - 1);
        }
        // a call its enclosing definition wrote (not in the source) places what it makes where that one is placed:
        // `impl_copy_clone!($name)` inside `primitive_deserializer!(i128, …)` written inside a wrapper's braces
        if (at !== 0) toks = placed(toks, at);
        inlineCalls(toks, sub, r.def, expand, attrs, out, at);
      }
      else if ('delegate' in r) out.delegated.push({ site: sub, cfg: cfgTexts(attrs) });
      c.i = call.end;
      continue;
    }
    c.i = start;
    const ok = c.item() && !c.half;
    const end = ok ? c.i : tokens.length;
    if (isIdent(tokens[c.i - 1], 'macro_rules') || tokens.slice(start, end).some((t) => isIdent(t, 'macro_rules'))) out.definesMacros = true;
    out.tokens.push(...cfg, ...tokens.slice(start, end));
    if (!ok) break;
  }
  return out;
}

/** Tokens with the definition's tokens (line 0) marked as placed at anchor line `mark` (< 0). */
function placed(tokens: Token[], mark: number): Token[] {
  return tokens.map((t): Token => {
    if (t.k === 'group') {
      const inner = placed(t.tokens, mark);
      return t.line === 0 ? { ...t, tokens: inner, line: mark, endLine: t.endLine === 0 ? mark : t.endLine } : { ...t, tokens: inner };
    }
    return t.line === 0 ? { ...t, line: mark } : t;
  });
}

/** `path ! (…)` (or `[…]`, `{…}`) at `i`, with its optional `;`: where the `!` is, the group, the end. */
function callAt(tokens: Token[], i: number): { bang: number; group: Group; end: number } | null {
  let j = i;
  if (isPunct(tokens[j], '::')) j++;
  for (;;) {
    const t = tokens[j];
    if (!t || (t.k !== 'ident' && t.k !== 'crate')) return null;
    if (t.k === 'ident' && (t.text === 'macro_rules' || (KEYWORDS.has(t.text) && !['self', 'super', 'crate'].includes(t.text)))) return null;
    j++;
    if (isPunct(tokens[j], '::')) { j++; continue; }
    break;
  }
  const g = tokens[j + 1];
  if (!isPunct(tokens[j], '!') || !g || g.k !== 'group' || g.delim === '') return null;
  let end = j + 2;
  if (isPunct(tokens[end], ';')) end++;
  return { bang: j, group: g, end };
}

/** The `#[cfg(…)]` / `#[cfg_attr(…)]` attributes among attribute tokens, as tokens. */
function cfgAttrTokens(attrs: Token[]): Token[] {
  const out: Token[] = [];
  for (let i = 0; i + 1 < attrs.length; i++) {
    const g = attrs[i + 1];
    if (!isPunct(attrs[i], '#') || !isGroup(g, '[')) continue;
    const first = g.tokens[0];
    if (first && first.k === 'ident' && (first.text === 'cfg' || first.text === 'cfg_attr')) out.push(attrs[i]!, g);
  }
  return out;
}

/** Attribute tokens -> the texts inside their `#[…]`, as the cfg phase reads them. */
export function cfgTexts(attrs: Token[]): string[] {
  const out: string[] = [];
  for (const t of attrs) if (t.k === 'group' && t.delim === '[') out.push(tokensText(t.tokens));
  return out;
}

/** Are `tokens` a sequence of items (a wrapper macro's body)? */
export function allItems(tokens: Token[], edition: Edition): boolean {
  if (tokens.length === 0) return false;
  const c = new Cursor(tokens, 0, edition);
  while (!c.atEnd()) {
    if (!c.item() || c.half) return false;
  }
  return true;
}

/**
 * `thread_local! { static K: T = e; … }` as std expands it: each key is a
 * `const K: LocalKey<T>` (rustdoc lists a const). The tokens become
 * `const` items with the written type wrapped; null when they are not that.
 */
export function threadLocal(tokens: Token[], edition: Edition): Token[] | null {
  const out: Token[] = [];
  const c = new Cursor(tokens, 0, edition);
  while (!c.atEnd()) {
    const start = c.i;
    c.attrs();
    c.vis();
    const kw = c.i;
    if (!c.kw('static') || !isIdent(c.peek(1)) || !c.punct(':', 2)) return null;
    c.i += 3;
    const ty = c.i;
    if (!c.ty(true) || c.half || !c.punct('=')) return null;
    const tyEnd = c.i;
    c.bump();
    if (!c.expr(false) || c.half) return null;
    const exprEnd = c.i;
    c.eat(';');
    const key = tokens[kw]!;
    const at = (text: string): Token => ({ k: 'ident', text, line: key.line, col: key.col });
    const p = (text: string): Token => ({ k: 'punct', text, line: key.line, col: key.col });
    out.push(
      ...tokens.slice(start, kw), at('const'), tokens[kw + 1]!, p(':'),
      p('::'), at('std'), p('::'), at('thread'), p('::'), at('LocalKey'), p('<'), ...tokens.slice(ty, tyEnd), p('>'),
      ...tokens.slice(tyEnd, exprEnd), p(';'),
    );
  }
  return out.length > 0 ? out : null;
}

/**
 * `cfg_if! { if #[cfg(a)] { … } else if #[cfg(b)] { … } else { … } }` as the
 * items of each branch under the cfg that selects it: `a`,
 * `all(b, not(any(a)))`, `not(any(a, b))`. Null when the tokens are not that.
 */
export function cfgIf(tokens: Token[]): Token[] | null {
  const branches: { cond: Token[] | null; body: Token[] }[] = [];
  let i = 0;
  for (;;) {
    if (!isIdent(tokens[i], 'if')) return null;
    const attr = tokens[i + 2];
    const body = tokens[i + 3];
    if (!isPunct(tokens[i + 1], '#') || !isGroup(attr, '[') || !isGroup(body, '{')) return null;
    const inner = attr.tokens;
    if (!isIdent(inner[0], 'cfg') || !isGroup(inner[1], '(')) return null;
    branches.push({ cond: inner[1].tokens, body: body.tokens });
    i += 4;
    if (i >= tokens.length) break;
    if (!isIdent(tokens[i], 'else')) return null;
    i++;
    const last = tokens[i];
    if (isGroup(last, '{')) {
      if (i + 1 !== tokens.length) return null;
      branches.push({ cond: null, body: last.tokens });
      break;
    }
  }
  const conds = branches.flatMap((b) => (b.cond ? [tokensText(b.cond)] : []));
  const out: Token[] = [];
  branches.forEach((b, k) => {
    const prior = conds.slice(0, b.cond ? k : conds.length);
    const pred = b.cond
      ? prior.length ? `all(${tokensText(b.cond)}, not(any(${prior.join(', ')})))` : tokensText(b.cond)
      : `not(any(${prior.join(', ')}))`;
    const attr = tokenize(`#[cfg(${pred})]`, 0);
    // each item of the branch under the branch's cfg
    const c = new Cursor(b.body, 0, 2021);
    let start = 0;
    while (!c.atEnd()) {
      if (!c.item() || c.half) {
        out.push(...attr, ...b.body.slice(start));
        return;
      }
      out.push(...attr, ...b.body.slice(start, c.i));
      start = c.i;
    }
  });
  return out;
}
