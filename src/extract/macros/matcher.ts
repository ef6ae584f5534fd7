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
  /** What the input must hold for the matcher's lone-thread prefix to pass (see `rejects`). */
  pre: Pre[];
}

/**
 * One condition of a matcher's prefix up to its first repetition: the token
 * here equals a literal, is a group of a delimiter (entered), ends its group
 * (left), is any one token (a `tt` or `ident` fragment: one token when it
 * matches), or the input ends.
 */
type Pre =
  | { k: 'tok'; tok: Leaf }
  | { k: 'open'; delim: Delim }
  | { k: 'close' }
  | { k: 'one' }
  | { k: 'eof' };

/**
 * The prefix of `locs` before anything that forks a thread or has no fixed
 * width: up to it the matcher runs one thread, which passes one position
 * per token, so each condition is one its match needs.
 */
function prefix(locs: Loc[]): Pre[] {
  const pre: Pre[] = [];
  for (const loc of locs) {
    switch (loc.k) {
      case 'tok': pre.push({ k: 'tok', tok: loc.tok }); break;
      case 'open': pre.push({ k: 'open', delim: loc.delim }); break;
      case 'close': pre.push({ k: 'close' }); break;
      case 'eof': pre.push({ k: 'eof' }); return pre;
      case 'frag':
        if (loc.kind !== 'tt' && loc.kind !== 'ident') return pre;
        pre.push({ k: 'one' });
        break;
      default: return pre;
    }
  }
  return pre;
}

/** The lists `rejects` is inside (innermost last) and the group's index in each; reused. */
const preList: (Token[] | undefined)[] = [];
const preIdx: number[] = [];

/**
 * Whether `input` fails a condition of `c`'s prefix: then matchRule fails
 * on it without an ambiguity (one thread, which dies there or before), and
 * only its message is not known. A few reads per rule instead of a match:
 * munching macros (quote's `quote_token_with_context`, a dozen rules tried
 * on every token) fail most of their rules at a literal a few tokens in.
 */
export function rejects(c: Compiled, input: Input): boolean {
  const pre = c.pre;
  let list = input.tokens;
  let idx = 0;
  let depth = 0;
  let deepest = 0;
  let out = false;
  for (let i = 0; i < pre.length && !out; i++) {
    const p = pre[i]!;
    if (p.k === 'close') {
      if (idx !== list.length) out = true;
      else {
        depth--;
        list = preList[depth]!;
        idx = preIdx[depth]! + 1;
      }
      continue;
    }
    if (p.k === 'eof') {
      out = idx !== list.length;
      continue;
    }
    const t = list[idx];
    if (t === undefined) out = true;
    else if (p.k === 'tok') {
      if (tokEq(p.tok, t)) idx++;
      else out = true;
    } else if (p.k === 'open') {
      if (t.k === 'group' && t.delim !== '' && t.delim === p.delim) {
        preList[depth] = list;
        preIdx[depth] = idx;
        if (++depth > deepest) deepest = depth;
        list = t.tokens;
        idx = 0;
      } else out = true;
    } else idx++;
  }
  preList.fill(undefined, 0, deepest); // let go of the input's lists
  return out;
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
  return { locs, vars, pre: prefix(locs) };
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

// --- the input -----------------------------------------------------------------

/**
 * An invocation's tokens, as every rule tried on them reads them: the nested
 * lists as they are (matching walks into and out of groups itself; an
 * earlier flattened copy cost an object per token per invocation).
 */
export interface Input {
  tokens: Token[];
}

/** The Input of `tokens` (expand.ts makes one per invocation; the name is from the flattened copy it once built). */
export function flatten(tokens: Token[]): Input {
  return { tokens };
}

/** What the input offers at a position: a token, a group's opening or closing delimiter, or its end. */
type Entry = 'leaf' | 'open' | 'close' | 'eof';

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

/** Match `input` (an invocation's tokens, delimiters stripped) against a compiled matcher. */
export function matchRule(c: Compiled, input: Input, edition: Edition): MatchResult {
  const tokens = input.tokens;
  // a rule that starts with a literal token the input does not start with fails at once
  const first = c.locs[0]!;
  if (first.k === 'tok' && !(tokens.length > 0 && tokEq(first.tok, tokens[0]!))) {
    const t = tokens[0];
    return { ok: false, ambiguous: false, message: `no rule expected \`${t ? describe(entryOf(t), t) : 'end of input'}\`` };
  }
  used = 0;
  usedDepth = 0;
  try {
    return advance(c, tokens, edition);
  } finally {
    // let go of the threads (and the tokens their bindings hold)
    for (const l of lists) l.fill(undefined, 0, Math.min(used, l.length));
    upList.fill(undefined, 0, Math.min(usedDepth, upList.length));
  }
}

/** The most slots any list used in the current call. */
let used = 0;
/** The lists enclosing the current position (innermost last) and the group's index in each; reused like `lists`. */
const upList: (Token[] | undefined)[] = [];
const upIdx: number[] = [];
let usedDepth = 0;

function entryOf(t: Token): Entry {
  return t.k === 'group' && t.delim !== '' ? 'open' : 'leaf';
}

function advance(c: Compiled, tokens: Token[], edition: Edition): MatchResult {
  // the position: `idx` in `list`, `depth` groups deep (upList/upIdx hold the way back out)
  let list = tokens;
  let idx = 0;
  let depth = 0;
  let cur = lists[0]!;
  let next = lists[1]!;
  const bb = lists[2]!;
  const eof = lists[3]!;
  const stack = lists[4]!;
  cur[0] = { idx: 0, b: [], own: true };
  let nCur = 1;
  for (;;) {
    let tok: Token | null;
    let entry: Entry;
    if (idx < list.length) {
      tok = list[idx]!;
      entry = entryOf(tok);
    } else if (depth > 0) {
      tok = upList[depth - 1]![upIdx[depth - 1]!]!;
      entry = 'close';
    } else {
      tok = null;
      entry = 'eof';
    }
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
          if (entry === 'leaf' && tokEq(loc.tok, tok!)) next[nNext++] = th;
          break;
        case 'open':
          if (entry === 'open' && (tok as Group).delim === loc.delim) next[nNext++] = th;
          break;
        case 'close':
          if (entry === 'close' && (tok as Group).delim === loc.delim) next[nNext++] = th;
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
          if (entry === 'leaf' && tokEq(loc.sep, tok!)) {
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
          if ((entry === 'leaf' || entry === 'open') && mayBegin(loc.kind, tok!, edition)) bb[nBb++] = th;
          break;
        case 'eof':
          if (entry === 'eof') eof[nEof++] = th;
          break;
      }
    }
    if (nNext > used) used = nNext;
    if (nBb > used) used = nBb;
    if (nEof > used) used = nEof;
    if (entry === 'eof') {
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
      return { ok: false, ambiguous: true, message: `local ambiguity at \`${describe(entry, tok)}\`` };
    }
    if (nNext > 0) {
      for (let i = 0; i < nNext; i++) next[i]!.idx++;
      const t = cur;
      cur = next;
      next = t;
      nCur = nNext;
      if (entry === 'leaf') {
        idx++;
      } else if (entry === 'open') {
        upList[depth] = list;
        upIdx[depth] = idx;
        if (++depth > usedDepth) usedDepth = depth;
        list = (tok as Group).tokens;
        idx = 0;
      } else { // close
        depth--;
        list = upList[depth]!;
        idx = upIdx[depth]! + 1;
      }
      continue;
    }
    if (nBb === 1) {
      const th = bb[0]!;
      const loc = c.locs[th.idx] as Loc & { k: 'frag' };
      const end = entry === 'leaf' || entry === 'open' ? parseFragment(loc.kind, list, idx, edition) : null;
      if (end === null) {
        if (loc.kind === 'vis') {
          bind(th, loc.v, loc.depth, { one: [], kind: 'vis' });
          th.idx++;
          cur[0] = th;
          nCur = 1;
          continue;
        }
        return { ok: false, ambiguous: false, message: `no \`${loc.kind}\` fragment at \`${describe(entry, tok)}\`` };
      }
      const captured = list.slice(idx, end);
      bind(th, loc.v, loc.depth, { one: captured, kind: loc.kind });
      th.idx++;
      cur[0] = th;
      nCur = 1;
      idx = end;
      continue;
    }
    return { ok: false, ambiguous: false, message: `no rule expected \`${describe(entry, tok)}\`` };
  }
}

function describe(e: Entry, t: Token | null): string {
  if (e === 'eof' || !t) return 'end of input';
  if (t.k !== 'group') return t.text;
  if (e === 'close') return t.delim === '(' ? ')' : t.delim === '[' ? ']' : '}';
  return t.delim || '<fragment>';
}
