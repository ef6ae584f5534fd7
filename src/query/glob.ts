// `find`'s globs: `*` any run of characters (none included), `?` exactly one
// character (a code point), anything else itself; case-sensitive, over the
// whole value. No escapes, no classes.
//
// Invariant: matching never backtracks more than once per position. A run of
// `*` is one star; the match is the two-pointer wildcard walk with a single
// resume point (the last star seen): when a literal fails after a star, the
// star takes one more character and the walk resumes from there. Everything
// between two stars matches at its leftmost place — taking a later place
// could only leave less of the value to the rest — so the earlier stars never
// need revisiting. That is at most len(glob) × len(value) steps, whatever the
// glob: `****…QQQQ` against a long name costs microseconds (a glob compiled
// to a RegExp, `.*.*…`, backtracks exponentially and froze the server).
// Pure: no I/O.

/** A compiled glob: `test` answers whether a whole value matches. */
export interface Glob {
  /** The glob with each run of `*` made one star. */
  readonly source: string;
  test(value: string): boolean;
}

export const hasGlob = (s: string): boolean => s.includes('*') || s.includes('?');

/** Compile a glob (runs of `*` collapsed). */
export function compileGlob(glob: string): Glob {
  const source = glob.replace(/\*{2,}/g, '*');
  return { source, test: (value) => globMatch(source, value) };
}

const STAR = 42; // '*'
const QUESTION = 63; // '?'

/** Index after the character (code point) at `i` of `s`. */
function next(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return i + 2;
  }
  return i + 1;
}

/** Does the whole of `value` match `glob`? O(len(glob) × len(value)) at worst, never exponential. */
export function globMatch(glob: string, value: string): boolean {
  let g = 0;
  let v = 0;
  let starG = -1; // glob index just after the last star seen
  let starV = 0; // value index that star's match ends at
  while (v < value.length) {
    const c = g < glob.length ? glob.charCodeAt(g) : -1;
    if (c === STAR) {
      while (g < glob.length && glob.charCodeAt(g) === STAR) g++;
      starG = g;
      starV = v;
    } else if (c === QUESTION) {
      g++;
      v = next(value, v);
    } else if (c !== -1 && c === value.charCodeAt(v)) {
      g++;
      v++;
    } else if (starG >= 0) {
      // the last star takes one more character; the walk resumes after it
      starV = next(value, starV);
      v = starV;
      g = starG;
    } else return false;
  }
  while (g < glob.length && glob.charCodeAt(g) === STAR) g++;
  return g === glob.length;
}
