// Rust source text -> token trees, the unit every other step of macro
// expansion works on (matcher, transcriber, fragment parsers, rendering).
//
// The token model is rustc's: identifiers (keywords and raw identifiers
// included), lifetimes, literals (suffix included), and punctuation glued
// greedily into rustc's compound operators (`::`, `=>`, `..=`, `<<=` …);
// comments dropped, doc comments turned into the `#[doc = "…"]` attribute
// tokens they stand for; `(…)`, `[…]`, `{…}` nested into groups.
//
// Positions: every token carries the 1-based line and column (UTF-16 code
// units, tree-sitter's unit) of its first character in the file it was read
// from; line 0 means "no position in the source" (a token written in a macro
// definition and copied by the transcriber). Invariant: `tokenize` never
// throws; an unclosed group is closed at the end, a stray closer is dropped,
// an unknown character becomes a one-character punct.

export type Delim = '(' | '[' | '{';

/** A fragment specifier of `macro_rules!` (`$x:kind`). */
export type FragKind =
  | 'ident' | 'ty' | 'path' | 'expr' | 'tt' | 'vis' | 'literal' | 'lifetime' | 'block' | 'item'
  | 'pat' | 'pat_param' | 'meta' | 'stmt';

export interface Leaf {
  k: 'ident' | 'lifetime' | 'literal' | 'punct' | 'crate';
  text: string;
  line: number;
  col: number;
  /** For `$crate` (k = 'crate'): the crate whose macro wrote it (`name@version`). */
  krate?: string;
}

export interface Group {
  k: 'group';
  /** '' = an invisible group: a fragment captured by `$x:kind` and transcribed (opaque to later matching). */
  delim: Delim | '';
  tokens: Token[];
  line: number;
  col: number;
  /** Position of the closing delimiter (0 when none). */
  endLine: number;
  endCol: number;
  /** For an invisible group: what it was captured as. */
  nt?: FragKind;
}

export type Token = Leaf | Group;

const CLOSE: Record<Delim, string> = { '(': ')', '[': ']', '{': '}' };
export function closer(d: Delim | ''): string {
  return d === '' ? '' : CLOSE[d];
}

/** Compound punctuation, longest first per leading character. */
const PUNCT3 = new Set(['...', '..=', '<<=', '>>=']);
const PUNCT2 = new Set([
  '::', '->', '=>', '==', '!=', '<=', '>=', '&&', '||', '+=', '-=', '*=', '/=', '%=', '^=', '&=', '|=', '<<', '>>', '..',
]);

/** Second characters of the compound operators above (char codes). */
const GLUES = new Set([...PUNCT2, ...PUNCT3].map((p) => p.charCodeAt(1)));

const ID_START = /[\p{XID_Start}_]/u;
const ID_CONT = /[\p{XID_Continue}]/u;

function isIdStart(c: number, s: string, i: number): boolean {
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95) return true;
  if (c < 128) return false;
  return ID_START.test(String.fromCodePoint(s.codePointAt(i)!));
}

function isIdCont(c: number, s: string, i: number): boolean {
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 48 && c <= 57)) return true;
  if (c < 128) return false;
  return ID_CONT.test(String.fromCodePoint(s.codePointAt(i)!));
}

/** Code units of the code point at `i` (2 for a surrogate pair). */
function width(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
}

/**
 * Tokenize `text`, whose first character sits at (`line`, `col`) of its file
 * (pass line 0 for text that has no source position, like a stored macro
 * definition). Returns the top-level token trees.
 */
export function tokenize(text: string, line = 1, col = 1): Token[] {
  return new Lexer(text, line, col).run();
}

class Lexer {
  private i = 0;
  /** Index in `text` where the current line starts (for columns). */
  private lineStart = 0;
  private line: number;
  private readonly col0: number;
  private readonly positioned: boolean;

  constructor(private readonly s: string, line: number, col: number) {
    this.line = line;
    this.col0 = col;
    this.positioned = line > 0;
  }

  private col(at: number): number {
    if (!this.positioned) return 0;
    // the first line starts at the given column, later ones at 1
    return at - this.lineStart + (this.lineStart === 0 ? this.col0 : 1);
  }

  private newline(at: number) {
    if (this.positioned) this.line++;
    this.lineStart = at + 1;
  }

  private pos(): { line: number; col: number } {
    return { line: this.positioned ? this.line : 0, col: this.col(this.i) };
  }

  run(): Token[] {
    const root: Token[] = [];
    const stack: { group: Group; out: Token[] }[] = [];
    let out = root;
    const s = this.s;
    const n = s.length;
    while (this.i < n) {
      const c = s.charCodeAt(this.i);
      if (c === 10) { this.newline(this.i); this.i++; continue; }
      if (c === 32 || c === 9 || c === 13 || c === 12 || c === 11) { this.i++; continue; }
      if (c === 47 && this.i + 1 < n) { // '/'
        const d = s.charCodeAt(this.i + 1);
        if (d === 47) { this.lineComment(out); continue; }
        if (d === 42) { this.blockComment(out); continue; }
      }
      if (c === 40 || c === 91 || c === 123) { // ( [ {
        const p = this.pos();
        const g: Group = { k: 'group', delim: s[this.i] as Delim, tokens: [], line: p.line, col: p.col, endLine: 0, endCol: 0 };
        out.push(g);
        stack.push({ group: g, out });
        out = g.tokens;
        this.i++;
        continue;
      }
      if (c === 41 || c === 93 || c === 125) { // ) ] }
        const ch = s[this.i]!;
        // close the innermost group this closes; a stray closer is dropped
        let at = stack.length - 1;
        while (at >= 0 && CLOSE[stack[at]!.group.delim as Delim] !== ch) at--;
        if (at >= 0) {
          const p = this.pos();
          while (stack.length > at + 1) stack.pop();
          const f = stack.pop()!;
          f.group.endLine = p.line;
          f.group.endCol = p.col;
          out = f.out;
        }
        this.i++;
        continue;
      }
      out.push(this.leaf(c));
    }
    return root;
  }

  private leaf(c: number): Leaf {
    const s = this.s;
    const start = this.i;
    const p = this.pos();
    // raw identifiers, raw / byte / c strings
    if (c === 114 /* r */ || c === 98 /* b */ || c === 99 /* c */) {
      const lit = this.prefixedLiteral();
      if (lit !== null) return { k: 'literal', text: lit, line: p.line, col: p.col };
      if (c === 114 && s.charCodeAt(this.i + 1) === 35 && this.i + 2 < s.length && isIdStart(s.charCodeAt(this.i + 2), s, this.i + 2)) {
        this.i += 2;
        this.identTail();
        return { k: 'ident', text: s.slice(start, this.i), line: p.line, col: p.col };
      }
    }
    if (isIdStart(c, s, this.i)) {
      this.identTail();
      return { k: 'ident', text: s.slice(start, this.i), line: p.line, col: p.col };
    }
    if (c >= 48 && c <= 57) {
      this.number();
      return { k: 'literal', text: s.slice(start, this.i), line: p.line, col: p.col };
    }
    if (c === 34) { // "
      this.quoted(34);
      this.suffix();
      return { k: 'literal', text: s.slice(start, this.i), line: p.line, col: p.col };
    }
    if (c === 39) return this.quote(p);
    if (c === 36 && s.startsWith('$crate', this.i) && !isIdContAt(s, this.i + 6)) {
      this.i += 6;
      return { k: 'crate', text: '$crate', line: p.line, col: p.col };
    }
    if (GLUES.has(s.charCodeAt(this.i + 1))) { // a compound operator's second character
      const three = s.slice(this.i, this.i + 3);
      if (PUNCT3.has(three)) { this.i += 3; return { k: 'punct', text: three, line: p.line, col: p.col }; }
      const two = s.slice(this.i, this.i + 2);
      if (PUNCT2.has(two)) { this.i += 2; return { k: 'punct', text: two, line: p.line, col: p.col }; }
    }
    const w = width(s, this.i);
    this.i += w;
    return { k: 'punct', text: s.slice(start, this.i), line: p.line, col: p.col };
  }

  private identTail() {
    const s = this.s;
    this.i += width(s, this.i);
    while (this.i < s.length && isIdCont(s.charCodeAt(this.i), s, this.i)) this.i += width(s, this.i);
  }

  /** `r"…"`, `r#"…"#`, `b"…"`, `b'…'`, `br"…"`, `c"…"`, `cr"…"`; null (nothing consumed) when not one. */
  private prefixedLiteral(): string | null {
    const s = this.s;
    const start = this.i;
    let j = this.i;
    if (s[j] === 'b' || s[j] === 'c') {
      j++;
      if (s[j] === '"') { this.i = j; this.quoted(34); this.suffix(); return s.slice(start, this.i); }
      if (s[start] === 'b' && s[j] === '\'') { this.i = j; this.quoted(39); this.suffix(); return s.slice(start, this.i); }
    }
    if (s[j] !== 'r') return null;
    j++;
    let hashes = 0;
    while (s[j] === '#') { hashes++; j++; }
    if (s[j] !== '"') return null;
    j++;
    const close = '"' + '#'.repeat(hashes);
    const end = s.indexOf(close, j);
    const stop = end < 0 ? s.length : end + close.length;
    this.countNewlines(this.i, stop);
    this.i = stop;
    this.suffix();
    return s.slice(start, this.i);
  }

  /** A quoted literal body from the opening quote at `i`, escapes honoured. */
  private quoted(q: number) {
    const s = this.s;
    let j = this.i + 1;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if (c === 92) { // backslash
        if (s.charCodeAt(j + 1) === 10) this.newline(j + 1);
        j += 2;
        continue;
      }
      if (c === 10) this.newline(j);
      j++;
      if (c === q) break;
    }
    this.i = Math.min(j, s.length);
  }

  private countNewlines(from: number, to: number) {
    for (let j = from; j < to; j++) if (this.s.charCodeAt(j) === 10) this.newline(j);
  }

  private suffix() {
    const s = this.s;
    if (this.i < s.length && isIdStart(s.charCodeAt(this.i), s, this.i)) this.identTail();
  }

  private number() {
    const s = this.s;
    let j = this.i;
    if (s[j] === '0' && (s[j + 1] === 'x' || s[j + 1] === 'o' || s[j + 1] === 'b')) {
      j += 2;
      while (j < s.length && /[0-9a-fA-F_]/.test(s[j]!)) j++;
      this.i = j;
      this.suffix();
      return;
    }
    while (j < s.length && /[0-9_]/.test(s[j]!)) j++;
    // fraction: `1.5`, `1.` — but not `1..2`, `1.foo`, `1.0.1` handled as tokens
    if (s[j] === '.' && s[j + 1] !== '.' && !(j + 1 < s.length && isIdStart(s.charCodeAt(j + 1), s, j + 1))) {
      j++;
      while (j < s.length && /[0-9_]/.test(s[j]!)) j++;
    }
    if ((s[j] === 'e' || s[j] === 'E') && /[0-9+-]/.test(s[j + 1] ?? '')) {
      const k = s[j + 1] === '+' || s[j + 1] === '-' ? j + 2 : j + 1;
      if (/[0-9]/.test(s[k] ?? '')) {
        j = k;
        while (j < s.length && /[0-9_]/.test(s[j]!)) j++;
      }
    }
    this.i = j;
    this.suffix();
  }

  /** `'a` lifetime or `'x'` char literal. */
  private quote(p: { line: number; col: number }): Leaf {
    const s = this.s;
    const start = this.i;
    const c1 = s.charCodeAt(this.i + 1);
    if (this.i + 1 < s.length && (isIdStart(c1, s, this.i + 1) || (c1 === 114 && s[this.i + 2] === '#'))) {
      // lifetime unless a closing quote follows the identifier's first character
      let j = this.i + 1 + width(s, this.i + 1);
      if (s[j] === '\'') {
        this.i = j + 1;
        this.suffix();
        return { k: 'literal', text: s.slice(start, this.i), line: p.line, col: p.col };
      }
      if (c1 === 114 && s[this.i + 2] === '#') j = this.i + 3;
      while (j < s.length && isIdCont(s.charCodeAt(j), s, j)) j += width(s, j);
      this.i = j;
      return { k: 'lifetime', text: s.slice(start, this.i), line: p.line, col: p.col };
    }
    this.quoted(39);
    this.suffix();
    return { k: 'literal', text: s.slice(start, this.i), line: p.line, col: p.col };
  }

  private lineComment(out: Token[]) {
    const s = this.s;
    const start = this.i;
    let end = s.indexOf('\n', this.i);
    if (end < 0) end = s.length;
    const body = s.slice(start, end);
    const p = this.pos();
    this.i = end;
    if (body.startsWith('///') && !body.startsWith('////')) this.doc(out, body.slice(3), false, p);
    else if (body.startsWith('//!')) this.doc(out, body.slice(3), true, p);
  }

  private blockComment(out: Token[]) {
    const s = this.s;
    const start = this.i;
    const p = this.pos();
    let depth = 0;
    let j = this.i;
    while (j < s.length) {
      if (s.startsWith('/*', j)) { depth++; j += 2; continue; }
      if (s.startsWith('*/', j)) { depth--; j += 2; if (depth === 0) break; continue; }
      if (s.charCodeAt(j) === 10) this.newline(j);
      j++;
    }
    this.i = j;
    const body = s.slice(start, j);
    if (body.length < 5) return; // `/**/`
    if (body.startsWith('/**') && !body.startsWith('/***')) this.doc(out, body.slice(3, -2), false, p);
    else if (body.startsWith('/*!')) this.doc(out, body.slice(3, -2), true, p);
  }

  /** A doc comment as the tokens of `#[doc = "…"]` (or `#![doc = "…"]`). */
  private doc(out: Token[], text: string, inner: boolean, p: { line: number; col: number }) {
    const at = (k: Leaf['k'], t: string): Leaf => ({ k, text: t, line: p.line, col: p.col });
    out.push(at('punct', '#'));
    if (inner) out.push(at('punct', '!'));
    out.push({
      k: 'group', delim: '[', line: p.line, col: p.col, endLine: p.line, endCol: p.col,
      tokens: [at('ident', 'doc'), at('punct', '='), at('literal', rustString(text))],
    });
  }
}

function isIdContAt(s: string, i: number): boolean {
  return i < s.length && isIdCont(s.charCodeAt(i), s, i);
}

/** `text` as a one-line Rust string literal. */
export function rustString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

// --- small predicates the other steps share ----------------------------------

export function isPunct(t: Token | undefined, text: string): boolean {
  return t !== undefined && t.k === 'punct' && t.text === text;
}

export function isIdent(t: Token | undefined, text?: string): t is Leaf {
  return t !== undefined && t.k === 'ident' && (text === undefined || t.text === text);
}

export function isGroup(t: Token | undefined, delim?: Delim | ''): t is Group {
  return t !== undefined && t.k === 'group' && (delim === undefined || t.delim === delim);
}

/** `t` when it is a group with that delimiter (not a type guard: a failed test narrows nothing). */
export function groupOf(t: Token | undefined, delim: Delim | ''): Group | null {
  return t !== undefined && t.k === 'group' && t.delim === delim ? t : null;
}

/** Keywords that are never an expression or type name by themselves (strict keywords, 2018+). */
export const KEYWORDS = new Set([
  'as', 'break', 'const', 'continue', 'crate', 'else', 'enum', 'extern', 'false', 'fn', 'for', 'if', 'impl', 'in',
  'let', 'loop', 'match', 'mod', 'move', 'mut', 'pub', 'ref', 'return', 'self', 'Self', 'static', 'struct', 'super',
  'trait', 'true', 'type', 'unsafe', 'use', 'where', 'while', 'async', 'await', 'dyn', 'abstract', 'become', 'box',
  'do', 'final', 'macro', 'override', 'priv', 'typeof', 'unsized', 'virtual', 'yield', 'try',
]);

/** Count of tokens in a tree list, groups counted with their contents (for the size limit). */
export function treeSize(tokens: Token[]): number {
  let n = 0;
  for (const t of tokens) n += t.k === 'group' ? 1 + treeSize(t.tokens) : 1;
  return n;
}

/** The source text of tokens, spaced (for messages and stored definitions; not position-preserving). */
export function tokensText(tokens: Token[]): string {
  const parts: string[] = [];
  const walk = (ts: Token[]) => {
    for (const t of ts) {
      if (t.k !== 'group') { parts.push(t.text); continue; }
      if (t.delim) parts.push(t.delim);
      walk(t.tokens);
      if (t.delim) parts.push(CLOSE[t.delim]);
    }
  };
  walk(tokens);
  return parts.join(' ');
}
