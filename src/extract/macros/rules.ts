// A `macro_rules!` body -> its rules: for each `(matcher) => {transcriber}`
// the matcher as a pattern tree (literal tokens, `$name:kind` fragments,
// groups, `$(…) sep op` repetitions) and the transcriber as a template tree
// (tokens, `$name`, `$crate`, groups, repetitions).
//
// Invariant: pure and total: a malformed rule is reported in `errors` and
// skipped, the others are kept in order (rustc would reject the whole macro;
// keeping the good rules loses nothing that compiles).
import { isGroup, isPunct, tokensText, type Delim, type FragKind, type Leaf, type Token } from './tokens.ts';

export type RepOp = '*' | '+' | '?';

export type MatcherNode =
  | { t: 'tok'; tok: Leaf }
  | { t: 'frag'; name: string; kind: FragKind }
  | { t: 'group'; delim: Delim; body: MatcherNode[] }
  | { t: 'rep'; body: MatcherNode[]; sep: Leaf | null; op: RepOp };

export type TemplateNode =
  | { t: 'tok'; tok: Leaf }
  | { t: 'var'; name: string; tok: Leaf }
  | { t: 'crate'; tok: Leaf }
  | { t: 'group'; delim: Delim; body: TemplateNode[] }
  | { t: 'rep'; body: TemplateNode[]; sep: Leaf | null; op: RepOp; vars: string[] };

export interface Rule {
  matcher: MatcherNode[];
  template: TemplateNode[];
}

export interface Rules {
  rules: Rule[];
  errors: string[];
}

const FRAG_KINDS = new Set<string>([
  'ident', 'ty', 'path', 'expr', 'expr_2021', 'tt', 'vis', 'literal', 'lifetime', 'block', 'item', 'pat', 'pat_param', 'meta', 'stmt',
]);

/** The rules of a `macro_rules! name { … }` body (the tokens inside its braces). */
export function parseRules(body: Token[]): Rules {
  const rules: Rule[] = [];
  const errors: string[] = [];
  let i = 0;
  while (i < body.length) {
    const m = body[i];
    const arrow = body[i + 1];
    const t = body[i + 2];
    if (!isGroup(m) || m.delim === '' || !isPunct(arrow, '=>') || !isGroup(t) || t.delim === '') {
      errors.push(`expected \`(matcher) => {transcriber}\` at rule ${rules.length + 1}, found \`${tokensText(body.slice(i, i + 3))}\``);
      // skip to the next `;`
      while (i < body.length && !isPunct(body[i], ';')) i++;
      i++;
      continue;
    }
    i += 3;
    if (isPunct(body[i], ';')) i++;
    try {
      rules.push({ matcher: parseMatcher(m.tokens), template: parseTemplate(t.tokens) });
    } catch (e) {
      errors.push(`rule ${rules.length + 1}: ${(e as Error).message}`);
    }
  }
  return { rules, errors };
}

function parseMatcher(tokens: Token[]): MatcherNode[] {
  const out: MatcherNode[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.k === 'group') {
      if (tok.delim === '') out.push(...parseMatcher(tok.tokens));
      else out.push({ t: 'group', delim: tok.delim, body: parseMatcher(tok.tokens) });
      continue;
    }
    if (!isPunct(tok, '$')) {
      out.push({ t: 'tok', tok });
      continue;
    }
    const next = tokens[i + 1];
    if (next && next.k === 'ident' && isPunct(tokens[i + 2], ':')) {
      const kind = tokens[i + 3];
      if (!kind || kind.k !== 'ident' || !FRAG_KINDS.has(kind.text)) {
        throw new Error(`\`$${next.text}:\` needs a fragment specifier, found \`${kind ? tokensText([kind]) : 'nothing'}\``);
      }
      const k = kind.text === 'expr_2021' ? 'expr' : kind.text as FragKind;
      out.push({ t: 'frag', name: next.text, kind: k });
      i += 3;
      continue;
    }
    if (isGroup(next, '(')) {
      const { sep, op, used } = repSuffix(tokens, i + 2);
      out.push({ t: 'rep', body: parseMatcher(next.tokens), sep, op });
      i += used;
      continue;
    }
    // `$crate` or a lone `$` in a matcher: matched literally
    out.push({ t: 'tok', tok });
  }
  return out;
}

/** After `$(…)`: `sep? op` starting at `at`; `used` counts the group too. */
function repSuffix(tokens: Token[], at: number): { sep: Leaf | null; op: RepOp; used: number } {
  const a = tokens[at];
  const isOp = (t: Token | undefined): t is Leaf => t !== undefined && t.k === 'punct' && (t.text === '*' || t.text === '+' || t.text === '?');
  if (isOp(a)) {
    // `$(…)?` takes no separator; `$(a)* +` is op `*`; `$(a),*`-style needs a separator first
    return { sep: null, op: a.text as RepOp, used: 2 };
  }
  const b = tokens[at + 1];
  if (a && a.k !== 'group' && isOp(b) && b.text !== '?') return { sep: a, op: b.text as RepOp, used: 3 };
  throw new Error(`expected \`*\`, \`+\` or \`?\` after \`$(…)\`${a ? `, found \`${tokensText([a])}\`` : ''}`);
}

function parseTemplate(tokens: Token[]): TemplateNode[] {
  const out: TemplateNode[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.k === 'group') {
      if (tok.delim === '') out.push(...parseTemplate(tok.tokens));
      else out.push({ t: 'group', delim: tok.delim, body: parseTemplate(tok.tokens) });
      continue;
    }
    if (tok.k === 'crate') {
      out.push({ t: 'crate', tok });
      continue;
    }
    if (!isPunct(tok, '$')) {
      out.push({ t: 'tok', tok });
      continue;
    }
    const next = tokens[i + 1];
    if (next && next.k === 'ident') {
      out.push({ t: 'var', name: next.text, tok: next });
      i++;
      continue;
    }
    if (isGroup(next, '(')) {
      const body = parseTemplate(next.tokens);
      let sep: Leaf | null = null;
      let op: RepOp;
      const a = tokens[i + 2];
      const b = tokens[i + 3];
      if (a && a.k === 'punct' && (a.text === '*' || a.text === '+' || a.text === '?')) {
        op = a.text as RepOp;
        i += 2;
      } else if (a && a.k !== 'group' && b && b.k === 'punct' && (b.text === '*' || b.text === '+' || b.text === '?')) {
        sep = a;
        op = b.text as RepOp;
        i += 3;
      } else {
        throw new Error('expected `*`, `+` or `?` after `$(…)` in the transcriber');
      }
      out.push({ t: 'rep', body, sep, op, vars: varsOf(body) });
      continue;
    }
    out.push({ t: 'tok', tok });
  }
  return out;
}

function varsOf(body: TemplateNode[]): string[] {
  const out = new Set<string>();
  const walk = (ns: TemplateNode[]) => {
    for (const n of ns) {
      if (n.t === 'var') out.add(n.name);
      else if (n.t === 'group' || n.t === 'rep') walk(n.body);
    }
  };
  walk(body);
  return [...out];
}
