// MIR's callee and body paths as text: split at top-level `::`, turbofish
// segments folded into the segment before, `<Self as Trait<A>>::m` apart,
// `<impl at FILE:L:C: …>` kept whole. Pure string functions; nothing here
// knows a crate (see calls.ts for what the paths name).
import { topLevelIndex } from './mir.ts';

export interface Seg {
  name: string;
  /** Generic arguments as printed (`<'_, T>`), or null. */
  args: string | null;
}

export type Callee =
  | { k: 'trait'; self: string; trait: Seg[]; name: string }
  | { k: 'path'; segs: Seg[] };

/** Split at `::` on bracket depth 0. */
export function splitPath(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  for (;;) {
    let i = at;
    let found = -1;
    while (i < text.length) {
      const j = topLevelIndex(text, ':', i);
      if (j < 0) break;
      if (text[j + 1] === ':') { found = j; break; }
      i = j + 1;
    }
    if (found < 0) { out.push(text.slice(at)); return out; }
    out.push(text.slice(at, found));
    at = found + 2;
  }
}

/** `Option<usize>` -> name `Option`, args `<usize>`. */
function seg(s: string): Seg {
  const lt = s.startsWith('<') ? -1 : s.indexOf('<');
  return lt > 0 ? { name: s.slice(0, lt), args: s.slice(lt) } : { name: s, args: null };
}

/** Path segments with `::<…>` turbofish segments folded into the segment before. */
export function segsOf(text: string): Seg[] {
  const out: Seg[] = [];
  for (const part of splitPath(text)) {
    if (part.startsWith('<') && !part.startsWith('<impl ') && out.length > 0) {
      out[out.length - 1]!.args = part;
      continue;
    }
    out.push(seg(part));
  }
  return out;
}

export function parseCallee(text: string): Callee {
  const parts = splitPath(text);
  const first = parts[0] ?? '';
  if (first.startsWith('<') && !first.startsWith('<impl ')) {
    const inner = first.slice(1, -1);
    const as = topLevelIndex(inner, ' ');
    let self = inner;
    let trait: Seg[] = [];
    if (as >= 0 && inner.slice(as, as + 4) === ' as ') {
      self = inner.slice(0, as);
      trait = segsOf(inner.slice(as + 4));
    } else {
      // ` as ` may follow a type with spaces (`&'a mut T as Tr`): scan for it at depth 0
      const k = findTopLevelWord(inner, ' as ');
      if (k >= 0) {
        self = inner.slice(0, k);
        trait = segsOf(inner.slice(k + 4));
      }
    }
    const rest = segsOf(parts.slice(1).join('::'));
    const name = rest[0]?.name ?? '';
    if (trait.length === 0) return { k: 'path', segs: [{ name: `<${self}>`, args: null }, ...rest] };
    return { k: 'trait', self, trait, name };
  }
  return { k: 'path', segs: segsOf(text) };
}

export function calleeName(c: Callee): string {
  if (c.k === 'trait') return c.name;
  return c.segs[c.segs.length - 1]?.name ?? '';
}

/** `<impl at src/a.rs:3:1: 3:20>` -> `src/a.rs:3:1`. */
export function implAtKey(s: string): string | null {
  const m = /^<impl at (.+):(\d+):(\d+): \d+:\d+>$/.exec(s);
  return m ? `${m[1]}:${m[2]}:${m[3]}` : null;
}

export function findTopLevelWord(s: string, word: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '<' || c === '(' || c === '[' || c === '{') depth++;
    else if ((c === '>' && s[i - 1] !== '-') || c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && s.startsWith(word, i)) return i;
  }
  return -1;
}
