// The crate's source files as the bench needs them: text by crate-relative
// path (read once, from the registry folder the oracle was built from), the
// character offset of a (line, column), and the ranges of macro invocations
// and `macro_rules!` definitions (outermost ones, from tree-sitter-rust — a
// syntax fact, independent of Mimir's extraction), where an inline module's
// braces close. Read-only.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Language, Parser } from 'web-tree-sitter';
import { offsetOf } from './rustdoc.ts';

export interface MacroRange {
  /** Character offsets of the invocation's delimited arguments, or of the whole definition. */
  start: number;
  end: number;
  /** Where the invocation itself starts (its macro name). */
  from: number;
  /** The macro's name (`assert_eq`, `tri`), or `macro_rules` for a definition. */
  name: string;
}

export interface SourceFile {
  text: string;
  /** Offsets where each line starts (index 0 = line 1). */
  lineStarts: number[];
  invocations: MacroRange[];
  definitions: MacroRange[];
}

let parserPromise: Promise<Parser> | null = null;

async function rustParser(): Promise<Parser> {
  if (!parserPromise) {
    parserPromise = (async () => {
      await Parser.init();
      const require = createRequire(import.meta.url);
      const dir = path.dirname(require.resolve('tree-sitter-rust/package.json'));
      const lang = await Language.load(path.join(dir, 'tree-sitter-rust.wasm'));
      const p = new Parser();
      p.setLanguage(lang);
      return p;
    })();
  }
  return parserPromise;
}

/** Source files of one crate folder: read on first use, parsed on first use of their syntax ranges. */
export class CrateSource {
  private readonly texts = new Map<string, { text: string; lineStarts: number[] } | null>();
  private readonly files = new Map<string, SourceFile | null>();
  private constructor(readonly dir: string, private readonly parser: Parser) {}

  static async open(dir: string): Promise<CrateSource> {
    return new CrateSource(dir, await rustParser());
  }

  text(file: string): string | null {
    return this.read(file)?.text ?? null;
  }

  private read(file: string): { text: string; lineStarts: number[] } | null {
    if (this.texts.has(file)) return this.texts.get(file)!;
    let t: { text: string; lineStarts: number[] } | null = null;
    if (!file.startsWith('/') && !file.startsWith('<')) {
      try {
        const text = readFileSync(path.join(this.dir, file), 'utf8');
        t = { text, lineStarts: lineStarts(text) };
      } catch {
        t = null;
      }
    }
    this.texts.set(file, t);
    return t;
  }

  file(file: string): SourceFile | null {
    if (this.files.has(file)) return this.files.get(file)!;
    const t = this.read(file);
    const sf = t === null ? null : { ...t, ...syntaxRanges(this.parser, t.text) };
    this.files.set(file, sf);
    return sf;
  }

  /** The text of a 1-based line (no newline), or null. */
  line(file: string, line: number): string | null {
    const f = this.read(file);
    const start = f?.lineStarts[line - 1];
    if (!f || start === undefined) return null;
    const end = f.text.indexOf('\n', start);
    return f.text.slice(start, end < 0 ? undefined : end);
  }

  /** Last line of the inline module whose `mod` starts at `line`: where its braces close. Null when unreadable. */
  moduleEnd(file: string, line: number): number | null {
    const f = this.read(file);
    const start = f?.lineStarts[line - 1];
    if (!f || start === undefined) return null;
    const end = blockEnd(f.text, start);
    return end < 0 ? null : lineOf(f.lineStarts, end);
  }

  /** Offset of (line, col), 1-based, columns in characters. */
  offset(file: string, line: number, col: number): number | null {
    const f = this.read(file);
    if (!f) return null;
    const start = f.lineStarts[line - 1];
    if (start === undefined) return null;
    return start + offsetOf(f.text.slice(start, start + 4096), 1, col);
  }
}

/** 1-based line of an offset. */
export function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/**
 * Offset of the `}` that closes the first `{` at or after `from`, skipping
 * comments, string, byte-string, raw-string and char literals; -1 if none.
 */
export function blockEnd(text: string, from: number): number {
  let depth = 0;
  let i = from;
  while (i < text.length) {
    const c = text[i]!;
    const n = text[i + 1];
    if (c === '/' && n === '/') { const nl = text.indexOf('\n', i); i = nl < 0 ? text.length : nl; continue; }
    if (c === '/' && n === '*') {
      let d = 1;
      i += 2;
      while (i < text.length && d > 0) {
        if (text[i] === '/' && text[i + 1] === '*') { d++; i += 2; } else if (text[i] === '*' && text[i + 1] === '/') { d--; i += 2; } else i++;
      }
      continue;
    }
    const raw = /^b?r(#*)"/.exec(text.slice(i, i + 260));
    if (raw && (i === 0 || !/[A-Za-z0-9_]/.test(text[i - 1]!))) {
      const close = `"${raw[1]}`;
      const e = text.indexOf(close, i + raw[0].length);
      i = e < 0 ? text.length : e + close.length;
      continue;
    }
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === "'") {
      const m = /^'(?:\\(?:u\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|.)|[^'\\])'/u.exec(text.slice(i, i + 12));
      i += m ? m[0].length : 1;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
    i++;
  }
  return -1;
}

export function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

/** Outermost macro invocations (their argument token trees) and macro_rules! definitions. */
export function syntaxRanges(parser: Parser, text: string): Pick<SourceFile, 'invocations' | 'definitions'> {
  const invocations: MacroRange[] = [];
  const definitions: MacroRange[] = [];
  const tree = parser.parse(text);
  if (!tree) return { invocations, definitions };
  try {
    // tree-sitter indices are UTF-16 units, as JS string offsets are
    const cursor = tree.walk();
    try {
      let descend = true;
      for (;;) {
        const type = cursor.nodeType;
        let enter = descend;
        if (type === 'macro_invocation') {
          const node = cursor.currentNode;
          const tt = node.namedChildren.find((c) => c?.type === 'token_tree');
          const m = node.childForFieldName('macro');
          const name = m ? text.slice(m.startIndex, m.endIndex).split('::').pop()!.trim() : '?';
          if (tt) invocations.push({ start: tt.startIndex, end: tt.endIndex, from: node.startIndex, name });
          enter = false;
        } else if (type === 'macro_definition') {
          definitions.push({ start: cursor.startIndex, end: cursor.endIndex, from: cursor.startIndex, name: 'macro_rules' });
          enter = false;
        }
        if (enter && cursor.gotoFirstChild()) continue;
        descend = true;
        while (!cursor.gotoNextSibling()) {
          if (!cursor.gotoParent()) return { invocations, definitions };
        }
      }
    } finally {
      cursor.delete();
    }
  } finally {
    tree.delete();
  }
}

/** The range among `ranges` (outermost ones: disjoint, in order) that contains `offset`, if any. */
export function rangeAt(ranges: MacroRange[], offset: number, whole = false): MacroRange | null {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid]!;
    const start = whole ? r.from : r.start;
    if (offset < start) hi = mid - 1;
    else if (offset >= r.end) lo = mid + 1;
    else return r;
  }
  return null;
}
