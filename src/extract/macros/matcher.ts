// The `macro_rules!` matcher: one rule's matcher against an invocation's
// tokens -> the bindings of its `$name:kind` fragments, or why not.
//
// rustc's algorithm (an NFA over the flattened matcher, all positions
// advanced in lockstep, one input token at a time), so that the rules that
// match, and the ambiguities that are errors, are the compiler's:
// - positions waiting for a literal token that equals the input token move on;
// - a position at a fragment is a candidate when the fragment may begin with
//   the token; the fragment is then parsed whole (see fragments.ts), which is
//   only allowed when it is the one candidate and no literal matches
//   (otherwise: "local ambiguity", an error, as in rustc);
// - `$(…)*`/`?` may be skipped, `$(…)` repeats after its separator;
// - success = exactly one position at the end when the input ends.
// Repetitions bind nested sequences; a binding is extended per thread with
// persistent (shared-tail) lists, and a thread's array of bindings is copied
// only when a forked thread shares it, so forking is cheap and a lone thread
// binds in place.
//
// Invariant: pure, total, bounded: each input token is consumed once per
// thread, and threads are deduplicated per matcher position and bindings.
import { mayBegin, parseFragment, type Edition } from './fragments.ts';
import type { MatcherNode, RepOp } from './rules.ts';
import type { Delim, FragKind, Group, Leaf, Token } from './tokens.ts';

/** What a fragment bound: one capture, or one per repetition. */
export type Bound = { one: Token[]; kind: FragKind } | { seq: Bound[] };

export type MatchResult =
  | { ok: true; bindings: Map<string, Bound> }
  | { ok: false; ambiguous: boolean; message: string };

type Loc =
  | { k: 'tok'; tok: Leaf }
  | { k: 'open' | 'close'; delim: Delim }
  | { k: 'seq'; op: RepOp; after: number; vars: number[]; depth: number }
  | { k: 'endNoSep'; op: RepOp; first: number }
  | { k: 'sep'; sep: Leaf }
  | { k: 'afterSep'; first: number }
  | { k: 'frag'; kind: FragKind; v: number; depth: number }
  | { k: 'eof' };

/** A compiled matcher: flattened positions and the names of its fragments. */
export interface Compiled {
  locs: Loc[];
  vars: string[];
}

export function compile(matcher: MatcherNode[]): Compiled {
  const locs: Loc[] = [];
  const vars: string[] = [];
  const walk = (nodes: MatcherNode[], depth: number): number[] => {
    const mine: number[] = [];
    for (const n of nodes) {
      switch (n.t) {
        case 'tok': locs.push({ k: 'tok', tok: n.tok }); break;
        case 'frag': {
          const v = vars.length;
          vars.push(n.name);
          mine.push(v);
          locs.push({ k: 'frag', kind: n.kind, v, depth });
          break;
        }
        case 'group':
          locs.push({ k: 'open', delim: n.delim });
          mine.push(...walk(n.body, depth));
          locs.push({ k: 'close', delim: n.delim });
          break;
        case 'rep': {
          const at = locs.length;
          const seq: Loc & { k: 'seq' } = { k: 'seq', op: n.op, after: 0, vars: [], depth };
          locs.push(seq);
          const inner = walk(n.body, depth + 1);
          seq.vars = inner;
          mine.push(...inner);
          if (n.sep) {
            locs.push({ k: 'sep', sep: n.sep });
            locs.push({ k: 'afterSep', first: at + 1 });
          } else {
            locs.push({ k: 'endNoSep', op: n.op, first: at + 1 });
          }
          seq.after = locs.length;
          break;
        }
      }
    }
    return mine;
  };
  walk(matcher, 0);
  locs.push({ k: 'eof' });
  return { locs, vars };
}

// --- bindings while matching (persistent) ---------------------------------------

type Cons = { head: M; tail: Cons | null };
type M = { one: Token[]; kind: FragKind } | { items: Cons | null };

/**
 * Push `m` into variable `v`'s binding at repetition depth `depth`, in the
 * thread's own bindings: copied first when another thread shares them (the
 * nested sequences are persistent lists, so only the top array is copied).
 */
function bind(th: Thread, v: number, depth: number, m: M): void {
  if (!th.own) {
    th.b = th.b.slice();
    th.own = true;
  }
  th.b[v] = depth === 0 ? m : pushInto(th.b[v], depth, m);
}

/** A second thread at `idx` sharing `th`'s bindings (neither may change them in place now). */
function fork(th: Thread, idx: number): Thread {
  th.own = false;
  return { idx, b: th.b, own: false };
}

/** `m` pushed at depth `d` into binding `cur` (a module-level function: no closure made per push). */
function pushInto(cur: M | undefined, d: number, m: M): M {
  const seq = cur && 'items' in cur ? cur : { items: null };
  if (d === 1) return { items: { head: m, tail: seq.items } };
  const last = seq.items ? seq.items.head : undefined;
  return { items: { head: pushInto(last, d - 1, m), tail: seq.items ? seq.items.tail : null } };
}

function freeze(m: M | undefined): Bound {
  if (!m) return { seq: [] };
  if ('one' in m) return m;
  const items: Bound[] = [];
  for (let c = m.items; c; c = c.tail) items.push(freeze(c.head));
  items.reverse();
  return { seq: items };
}

// --- the input, flattened -------------------------------------------------------

interface Flat {
  k: 'leaf' | 'open' | 'close' | 'eof';
  tok: Token | null;
  /** The token list this entry's token belongs to, and its index there (open: the group's own index). */
  list: Token[];
  idx: number;
}

/** An invocation's tokens, flattened once for all the rules tried on them. */
export interface Input {
  flat: Flat[];
  starts: Map<Token[], number[]>;
}

export function flatten(tokens: Token[]): Input {
  const flat: Flat[] = [];
  const starts = new Map<Token[], number[]>();
  const walk = (list: Token[]) => {
    const s: number[] = [];
    starts.set(list, s);
    for (let i = 0; i < list.length; i++) {
      s.push(flat.length);
      const t = list[i]!;
      if (t.k === 'group' && t.delim !== '') {
        flat.push({ k: 'open', tok: t, list, idx: i });
        walk(t.tokens);
        flat.push({ k: 'close', tok: t, list: t.tokens, idx: t.tokens.length });
      } else {
        flat.push({ k: 'leaf', tok: t, list, idx: i });
      }
    }
    s.push(flat.length); // the list's end: its closer (or the final eof)
  };
  walk(tokens);
  flat.push({ k: 'eof', tok: null, list: tokens, idx: tokens.length });
  return { flat, starts };
}

function tokEq(a: Leaf, b: Token | null): boolean {
  return b !== null && b.k === a.k && (b as Leaf).text === a.text;
}

interface Thread {
  idx: number;
  b: (M | undefined)[];
  /** `b` is this thread's alone (see bind). */
  own: boolean;
}

/** Threads above this are a runaway matcher (never seen on real macros): the match fails. */
const MAX_THREADS = 10_000;

/**
 * The thread lists of one match: the module's, reused for every token and
 * every call (matching never reenters itself). Each is filled up to a count
 * kept beside it, never emptied by `length = 0` (that drops the backing
 * store, and the next push allocates it again); matchRule clears the slots
 * it used before returning. A thread object is in one list at a time, so it
 * is moved on in place rather than copied.
 */
const lists: (Thread | undefined)[][] = [[], [], [], [], []];

/** Match `input` (an invocation's tokens, delimiters stripped, flattened) against a compiled matcher. */
export function matchRule(c: Compiled, input: Input, edition: Edition): MatchResult {
  const flat = input.flat;
  // a rule that starts with a literal token the input does not start with fails at once
  const first = c.locs[0]!;
  if (first.k === 'tok' && !(flat[0]!.k === 'leaf' && tokEq(first.tok, flat[0]!.tok))) {
    return { ok: false, ambiguous: false, message: `no rule expected \`${describe(flat[0]!)}\`` };
  }
  used = 0;
  try {
    return advance(c, input, edition);
  } finally {
    // let go of the threads (and the tokens their bindings hold)
    for (const l of lists) l.fill(undefined, 0, Math.min(used, l.length));
  }
}

/** The most slots any list used in the current call. */
let used = 0;

function advance(c: Compiled, input: Input, edition: Edition): MatchResult {
  const { flat, starts } = input;
  let cur = lists[0]!;
  let next = lists[1]!;
  const bb = lists[2]!;
  const eof = lists[3]!;
  const stack = lists[4]!;
  cur[0] = { idx: 0, b: [], own: true };
  let nCur = 1;
  let p = 0;
  for (;;) {
    const entry = flat[p]!;
    let nNext = 0;
    let nBb = 0;
    let nEof = 0;
    let sp = 0;
    for (let i = 0; i < nCur; i++) stack[sp++] = cur[i];
    let steps = 0;
    while (sp > 0) {
      if (sp > used) used = sp;
      if (++steps > MAX_THREADS) return { ok: false, ambiguous: false, message: `matcher ran over ${MAX_THREADS} positions at one token` };
      const th = stack[--sp]!;
      const loc = c.locs[th.idx]!;
      switch (loc.k) {
        case 'tok':
          if (entry.k === 'leaf' && tokEq(loc.tok, entry.tok)) next[nNext++] = th;
          break;
        case 'open':
          if (entry.k === 'open' && (entry.tok as Group).delim === loc.delim) next[nNext++] = th;
          break;
        case 'close':
          if (entry.k === 'close' && (entry.tok as Group).delim === loc.delim) next[nNext++] = th;
          break;
        case 'seq':
          for (const v of loc.vars) bind(th, v, loc.depth, { items: null });
          if (loc.op !== '+') stack[sp++] = fork(th, loc.after);
          th.idx++;
          stack[sp++] = th;
          break;
        case 'endNoSep':
          // a body that matches nothing would loop here forever: rustc rejects such
          // macros, the step limit above stops them
          if (loc.op !== '?') {
            stack[sp++] = fork(th, th.idx + 1);
            th.idx = loc.first;
          } else {
            th.idx++;
          }
          stack[sp++] = th;
          break;
        case 'sep':
          if (entry.k === 'leaf' && tokEq(loc.sep, entry.tok)) {
            stack[sp++] = fork(th, th.idx + 2);
            next[nNext++] = th;
          } else {
            th.idx += 2;
            stack[sp++] = th;
          }
          break;
        case 'afterSep':
          th.idx = loc.first;
          stack[sp++] = th;
          break;
        case 'frag':
          if ((entry.k === 'leaf' || entry.k === 'open') && mayBegin(loc.kind, entry.tok!, edition)) bb[nBb++] = th;
          break;
        case 'eof':
          if (entry.k === 'eof') eof[nEof++] = th;
          break;
      }
    }
    if (nNext > used) used = nNext;
    if (nBb > used) used = nBb;
    if (nEof > used) used = nEof;
    if (entry.k === 'eof') {
      if (nEof === 1) {
        const b = eof[0]!.b;
        const bindings = new Map<string, Bound>();
        for (let v = 0; v < c.vars.length; v++) bindings.set(c.vars[v]!, freeze(b[v]));
        return { ok: true, bindings };
      }
      if (nEof > 1) return { ok: false, ambiguous: true, message: 'ambiguous: the input ends in several ways' };
      return { ok: false, ambiguous: false, message: 'unexpected end of input' };
    }
    if (nBb > 1 || (nBb > 0 && nNext > 0)) {
      return { ok: false, ambiguous: true, message: `local ambiguity at \`${describe(entry)}\`` };
    }
    if (nNext > 0) {
      for (let i = 0; i < nNext; i++) next[i]!.idx++;
      const t = cur;
      cur = next;
      next = t;
      nCur = nNext;
      p++;
      continue;
    }
    if (nBb === 1) {
      const th = bb[0]!;
      const loc = c.locs[th.idx] as Loc & { k: 'frag' };
      const end = entry.k === 'leaf' || entry.k === 'open' ? parseFragment(loc.kind, entry.list, entry.idx, edition) : null;
      if (end === null) {
        if (loc.kind === 'vis') {
          bind(th, loc.v, loc.depth, { one: [], kind: 'vis' });
          th.idx++;
          cur[0] = th;
          nCur = 1;
          continue;
        }
        return { ok: false, ambiguous: false, message: `no \`${loc.kind}\` fragment at \`${describe(entry)}\`` };
      }
      const captured = entry.list.slice(entry.idx, end);
      bind(th, loc.v, loc.depth, { one: captured, kind: loc.kind });
      th.idx++;
      cur[0] = th;
      nCur = 1;
      p = starts.get(entry.list)![end]!;
      continue;
    }
    return { ok: false, ambiguous: false, message: `no rule expected \`${describe(entry)}\`` };
  }
}

function describe(e: Flat): string {
  if (e.k === 'eof') return 'end of input';
  const t = e.tok!;
  if (t.k !== 'group') return t.text;
  if (e.k === 'close') return t.delim === '(' ? ')' : t.delim === '[' ? ']' : '}';
  return t.delim || '<fragment>';
}
