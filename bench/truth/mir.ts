// The compiler's calls: MIR text (`-Zunpretty=mir -Zmir-include-spans=yes`)
// -> bodies and the call terminators in them, with both spans rustc prints:
// the call expression's (`// scope N at FILE:L:C: L:C`) and the callee
// operand's (`// + span: …` of the first `mir::ConstOperand` block after the
// call; for a method call that is the method name token, for a path call the
// path). Pure text processing, line by line, so a crate's MIR (hundreds of MB
// for a large crate) is never held whole.
//
// Invariants: a body is a line at column 0 starting `fn `, `const ` or
// `static ` and ends at the next line that is exactly `}` (one-line bodies
// such as `const X: T = const 8_usize;` have no calls). A call is a statement
// `PLACE = CALLEE(ARGS) -> …;` whose CALLEE is not a `const` or `move`/`copy`
// operand (those are calls through a value: fn pointers, `dyn Fn`); the
// callee's generic arguments are kept as printed. Nothing here interprets
// paths: see calls.ts. A `const fn` is printed twice — its runtime MIR, then
// after a line `// MIR FOR CTFE` the body the compiler evaluates at compile
// time, with the same calls at the same spans — so a body right after that
// marker is read and dropped: each written call site counts once.

/** A span as rustc prints it: FILE:L:C: L:C (1-based lines and columns). */
export interface Span {
  file: string;
  line: number;
  col: number;
  endLine: number;
  endCol: number;
}

export interface MirCall {
  /** The callee as printed (`<a::B<'_> as c::D>::m::<T>`), or null for a call through a value. */
  callee: string | null;
  /** Span of the whole call expression. */
  span: Span | null;
  /** Span of the callee operand (the name token of a method call), when printed. */
  fnSpan: Span | null;
}

export interface MirBody {
  /** `fn`, `const` or `static`. */
  kind: 'fn' | 'const' | 'static';
  /** The body's def path as printed, crate-relative (`a::<impl at src/x.rs:3:1: 3:20>::m::{closure#0}`). */
  path: string;
  calls: MirCall[];
}

const SPAN_RE = /^(.*):(\d+):(\d+): (\d+):(\d+)$/;

export function parseSpan(text: string): Span | null {
  const m = SPAN_RE.exec(text.trim());
  if (!m) return null;
  return { file: m[1]!, line: Number(m[2]), col: Number(m[3]), endLine: Number(m[4]), endCol: Number(m[5]) };
}

/**
 * Index of the first `stop` character at bracket depth 0 in `s` from `from`
 * (`<>`, `()`, `[]`, `{}` nest; the `>` of `->` does not close), or -1.
 */
export function topLevelIndex(s: string, stop: string, from = 0): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    const c = s[i]!;
    if (depth === 0 && stop.includes(c)) return i;
    if (c === '<' || c === '(' || c === '[' || c === '{') depth++;
    else if (c === '>' && s[i - 1] !== '-') depth--;
    else if (c === ')' || c === ']' || c === '}') depth--;
  }
  return -1;
}

/** The def path of a body header line, or null when the line starts no body. */
export function bodyHeader(line: string): { kind: MirBody['kind']; path: string } | null {
  let kind: MirBody['kind'];
  let rest: string;
  if (line.startsWith('fn ')) { kind = 'fn'; rest = line.slice(3); }
  else if (line.startsWith('const ')) { kind = 'const'; rest = line.slice(6); }
  else if (line.startsWith('static mut ')) { kind = 'static'; rest = line.slice(11); }
  else if (line.startsWith('static ')) { kind = 'static'; rest = line.slice(7); }
  else return null;
  // fn PATH(…; const PATH: T = …  (`:` of `::` is not an end: look for `: ` or `(`)
  let end = -1;
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (depth === 0 && (c === '(' || (c === ':' && rest[i + 1] === ' '))) { end = i; break; }
    if (c === '<' || c === '[' || c === '{') depth++;
    else if (c === '>' && rest[i - 1] !== '-') depth--;
    else if (c === ']' || c === '}') depth--;
  }
  if (end < 0) return null;
  return { kind, path: rest.slice(0, end) };
}

/** A call statement (`_3 = f(move _1) -> [return: bb1, unwind continue]`) -> its callee text; null when not a call. */
export function callOf(statement: string): { callee: string | null } | null {
  if (!statement.endsWith(';')) return null;
  const arrow = statement.lastIndexOf(') -> ');
  if (arrow < 0) return null;
  const eq = statement.indexOf(' = ');
  if (eq < 0) return null;
  const lhs = statement.slice(0, eq).trim();
  if (!/^(_\d+|\(.*\))$/.test(lhs)) return null;
  const rhs = statement.slice(eq + 3);
  if (/^(const |&|\[|\(|\*)/.test(rhs)) return null;
  if (/^(move|copy) /.test(rhs)) return { callee: null };
  const open = topLevelIndex(rhs, '(');
  if (open <= 0) return null;
  const callee = rhs.slice(0, open);
  // rvalues that look like calls but are not: casts, aggregates print `Foo::<T> { … }` / `Foo(…)` without `->`
  if (rhs.slice(open).indexOf(') -> ') < 0) return null;
  return { callee };
}

/**
 * Parses MIR text fed line by line. `push` each line, then `finish`; bodies
 * are handed to `onBody` as they close (so memory holds one body at a time).
 */
export class MirReader {
  private body: MirBody | null = null;
  /** The last call of the open body still waiting for its callee operand span. */
  private pending: MirCall | null = null;
  private inOperand = false;
  /** The next body is a const fn's CTFE copy (after `// MIR FOR CTFE`): dropped. */
  private ctfe = false;
  private dropBody = false;

  constructor(private readonly onBody: (b: MirBody) => void) {}

  push(line: string): void {
    if (this.body === null) {
      if (line === '// MIR FOR CTFE') { this.ctfe = true; return; }
      const h = bodyHeader(line);
      if (h) {
        this.dropBody = this.ctfe;
        this.ctfe = false;
        this.body = { kind: h.kind, path: h.path, calls: [] };
        if (!line.trimEnd().endsWith('{')) this.close();
      }
      return;
    }
    if (line === '}') {
      this.close();
      return;
    }
    const t = line.trim();
    if (t.startsWith('//')) {
      if (!this.pending) return;
      if (t === '// mir::ConstOperand') {
        this.inOperand = true;
      } else if (this.inOperand && t.startsWith('// + span: ')) {
        this.pending.fnSpan = parseSpan(t.slice('// + span: '.length));
        this.pending = null;
        this.inOperand = false;
      }
      return;
    }
    this.pending = null;
    this.inOperand = false;
    const c = t.lastIndexOf('; // scope ');
    if (c < 0) return;
    const statement = t.slice(0, c + 1);
    const call = callOf(statement);
    if (!call) return;
    const at = t.indexOf(' at ', c);
    const mc: MirCall = { callee: call.callee, span: at >= 0 ? parseSpan(t.slice(at + 4)) : null, fnSpan: null };
    this.body.calls.push(mc);
    if (mc.callee !== null) this.pending = mc;
  }

  finish(): void {
    if (this.body) this.close();
  }

  private close(): void {
    const b = this.body!;
    this.body = null;
    this.pending = null;
    this.inOperand = false;
    if (this.dropBody) { this.dropBody = false; return; }
    this.onBody(b);
  }
}

/** All bodies of a MIR text (for tests and small inputs). */
export function parseMir(text: string): MirBody[] {
  const out: MirBody[] = [];
  const r = new MirReader((b) => out.push(b));
  for (const line of text.split('\n')) r.push(line);
  r.finish();
  return out;
}
