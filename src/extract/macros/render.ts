// An expansion's tokens -> Rust text for the ordinary parser, laid out so that
// what the parser reports can be traced back to the source:
// - every rendered line holds tokens of one origin: tokens that came from one
//   source line (an invocation's arguments), or tokens written in a macro
//   definition; `rows[r]` is the source line of rendered line r, 0 for a
//   definition line;
// - `at(offset)` gives back the token rendered at a UTF-16 offset, with the
//   list that holds it, and `source(row, col)` the source position of the
//   token at a rendered position, so the parser's columns (and a macro call
//   inside the expansion) are traced to real tokens, never re-read.
// Tokens are separated by one space: the text depends on which tokens sit on
// which source lines, never on absolute line numbers or columns, so a line
// shift of the invocation renders the same text (and generated items keep
// their body hashes).
//
// Invariant: pure; the text tokenizes back to the same token sequence
// (`$crate` aside, which becomes `crate` or the crate's name).
import { closer, type Token } from './tokens.ts';

export interface Rendered {
  text: string;
  /** Source line of each rendered line (0 = written in a macro definition). */
  rows: number[];
  /** The token whose text starts at a UTF-16 offset, with its list and index there. */
  at(offset: number): { list: Token[]; idx: number } | undefined;
  /** Source line and column of the token at a rendered line and column (1-based), if it has a position. */
  source(line: number, col: number): { line: number; col: number; text: string } | null;
}

export interface RenderOptions {
  /** How `$crate` of crate `krate` is written (the own crate: `crate`; a dependency: its name). */
  crateRoot(krate: string | undefined): string;
  /** Lines of text before the tokens (a wrapper such as `impl X {`), each ending in a newline. */
  prefix?: string;
  suffix?: string;
}

export function render(tokens: Token[], opts: RenderOptions): Rendered {
  const r = new Renderer(opts);
  r.list(tokens);
  return r.done();
}

class Renderer {
  private readonly parts: string[] = [];
  private offset = 0;
  /** Source line of the current rendered line (-1: none yet). */
  private line = -1;
  private readonly rows: number[] = [];
  private readonly rowStarts: number[] = [];
  /** The tokens written, by offset (ascending): parallel lists, no object per token. */
  private readonly offs: number[] = [];
  private readonly lists: Token[][] = [];
  private readonly idxs: number[] = [];
  /** Source positions of rendered closing delimiters (they are in no list). */
  private readonly closers = new Map<number, { line: number; col: number; text: string }>();
  private fresh = true;
  private lineEmpty = true;
  /** The last token written (for the pairs the parser wants glued: `macro_rules!`, `$name`). */
  private last = '';

  constructor(private readonly opts: RenderOptions) {
    if (opts.prefix) {
      let at = 0;
      for (const l of opts.prefix.split('\n').slice(0, -1)) {
        this.rows.push(0);
        this.rowStarts.push(at);
        at += l.length + 1;
      }
      this.write(opts.prefix);
    }
  }

  list(tokens: Token[]) {
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t.k === 'group') {
        if (t.delim === '') { this.list(t.tokens); continue; }
        this.token(t.delim, t.line, tokens, i);
        this.list(t.tokens);
        const at = this.token(closer(t.delim), t.endLine, null, 0);
        if (t.endLine > 0) this.closers.set(at, { line: t.endLine, col: t.endCol, text: closer(t.delim) });
        continue;
      }
      // `try` is reserved from 2018 on: the parser reads `try!(…)` of 2015 code only as `r#try!(…)`
      const text = t.k === 'crate' ? this.opts.crateRoot(t.krate) : t.k === 'ident' && t.text === 'try' ? 'r#try' : t.text;
      this.token(text, t.line, tokens, i);
    }
  }

  /** Write one token (on a new rendered line when its source line differs); its offset. */
  private token(text: string, line: number, list: Token[] | null, idx: number): number {
    const glued = (this.last === 'macro_rules' && text === '!') || (this.last === '$' && /^[A-Za-z_]/.test(text));
    this.last = text;
    if (glued && !this.fresh) {
      // stays on the line of the token it is glued to
    } else if (this.fresh || this.line !== line) this.newline(line);
    else if (!this.lineEmpty) this.write(' ');
    const base = this.offset;
    if (list) this.indexed(base, list, idx);
    this.write(text);
    this.lineEmpty = false;
    // a multi-line literal: its later lines are the following source lines
    let n = 0;
    for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) {
      n++;
      this.rows.push(line > 0 ? line + n : 0);
      this.rowStarts.push(base + k + 1);
    }
    if (n > 0) this.line = line > 0 ? line + n : 0;
    return base;
  }

  /** Record the token at `base` (a later one at the same offset replaces it, as a map would). */
  private indexed(base: number, list: Token[], idx: number) {
    const n = this.offs.length;
    if (n > 0 && this.offs[n - 1] === base) {
      this.lists[n - 1] = list;
      this.idxs[n - 1] = idx;
      return;
    }
    this.offs.push(base);
    this.lists.push(list);
    this.idxs.push(idx);
  }

  private newline(line: number) {
    if (!this.fresh) this.write('\n');
    this.fresh = false;
    this.rows.push(line);
    this.rowStarts.push(this.offset);
    this.line = line;
    this.lineEmpty = true;
  }

  private write(s: string) {
    this.parts.push(s);
    this.offset += s.length;
  }

  done(): Rendered {
    if (this.rows.length === 0) { this.rows.push(0); this.rowStarts.push(0); }
    let text = this.parts.join('');
    if (this.opts.suffix) {
      text += '\n' + this.opts.suffix;
      let at = this.offset + 1;
      for (const l of this.opts.suffix.split('\n')) {
        this.rows.push(0);
        this.rowStarts.push(at);
        at += l.length + 1;
      }
    }
    const { offs, lists, idxs, rows, rowStarts, closers } = this;
    const find = (o: number): number => {
      let lo = 0;
      let hi = offs.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const v = offs[mid]!;
        if (v === o) return mid;
        if (v < o) lo = mid + 1;
        else hi = mid - 1;
      }
      return -1;
    };
    return {
      text, rows,
      at: (o) => {
        const k = find(o);
        return k < 0 ? undefined : { list: lists[k]!, idx: idxs[k]! };
      },
      source: (line, col) => {
        const start = rowStarts[line - 1];
        if (start === undefined || !(rows[line - 1]! > 0)) return null;
        const o = start + col - 1;
        const k = find(o);
        if (k >= 0) {
          const t = lists[k]![idxs[k]!]!;
          return t.line > 0 ? { line: t.line, col: t.col, text: t.k === 'group' ? t.delim : t.text } : null;
        }
        return closers.get(o) ?? null;
      },
    };
  }
}
