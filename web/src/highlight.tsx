// A small Rust highlighter for source views: keywords, strings, chars,
// lifetimes, comments, numbers, attributes, macros and capitalised names,
// each a token class the stylesheet colours. Not a parser: it only has to
// be right for reading, and it keeps every character of the text (the
// tokens, joined, are the input). Lines are highlighted together, so a block
// comment or string spanning lines keeps its colour.
import type { JSX } from 'preact';

const KEYWORDS = new Set(
  'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type union unsafe use where while yield'.split(' '),
);

const TOKEN = new RegExp(
  [
    String.raw`(?<com>\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))`,
    String.raw`(?<str>b?r(?<h>#*)"[\s\S]*?"\k<h>|b?"(?:\\[\s\S]|[^"\\])*"?)`,
    String.raw`(?<chr>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^'\\\n])')`,
    String.raw`(?<life>'[A-Za-z_]\w*)`,
    String.raw`(?<attr>#!?\[[^\]\n]*\]?)`,
    String.raw`(?<num>\b(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)(?:[iuf](?:8|16|32|64|128|size))?\b)`,
    String.raw`(?<id>[A-Za-z_]\w*!?)`,
    String.raw`(?<ws>\s+)`,
    String.raw`(?<other>.)`,
  ].join('|'),
  'gsy',
);

export interface Token {
  cls: string | null;
  text: string;
}

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (TOKEN.lastIndex < text.length && (m = TOKEN.exec(text)) !== null) {
    const g = m.groups!;
    const t = m[0];
    let cls: string | null = null;
    if (g.com !== undefined) cls = 'com';
    else if (g.str !== undefined || g.chr !== undefined) cls = 'str';
    else if (g.life !== undefined) cls = 'life';
    else if (g.attr !== undefined) cls = 'attr';
    else if (g.num !== undefined) cls = 'num';
    else if (g.id !== undefined) cls = t.endsWith('!') ? 'mac' : KEYWORDS.has(t) ? 'kw' : /^[A-Z]/.test(t) ? 'ty' : null;
    const last = out[out.length - 1];
    if (last && last.cls === cls) last.text += t;
    else out.push({ cls, text: t });
  }
  return out;
}

/** The lines of `text` as highlighted spans, one array per line. */
export function highlightLines(lines: string[]): JSX.Element[][] {
  const rows: JSX.Element[][] = [[]];
  let key = 0;
  for (const tok of tokenize(lines.join('\n'))) {
    const parts = tok.text.split('\n');
    parts.forEach((p, i) => {
      if (i > 0) rows.push([]);
      if (p !== '') rows[rows.length - 1]!.push(tok.cls === null ? <span key={key++}>{p}</span> : <span key={key++} class={`t-${tok.cls}`}>{p}</span>);
    });
  }
  while (rows.length < lines.length) rows.push([]);
  return rows;
}
