// The syntax class of a MIR call, read from the crate's source text at the
// callee operand's span. Pure over the sources (source.ts).
//
// A written call has its callee operand followed by `(` (after an optional
// turbofish) in a file of the crate; it is `macro-body` when written inside a
// macro_rules! definition or in a body a macro generated (the caller is a
// derive's, an item of a macro invocation, or an impl rustc names by a span in
// a macro definition), `macro-arg` inside a macro invocation's arguments, else
// `method` / `self-method` (operand after a `.`, receiver `self`) or `path`. A call that is not written is `indirect` (closure, fn pointer, `dyn
// Fn`), `macro-expansion` (produced by expanding an expression macro:
// format!, assert!, vec!, a local macro), `macro-body` (a derive's or a
// macro_rules! impl's body) or `desugar` (compiler-inserted: for loops, `?`,
// operators, index, deref).
import { parseCallee, splitPath } from './callee.ts';
import type { MirCall } from './mir.ts';
import type { OracleItem } from './rustdoc.ts';
import { rangeAt, type CrateSource } from './source.ts';

export type CallClass =
  | 'path' | 'self-method' | 'method' | 'macro-arg'
  | 'macro-body' | 'macro-expansion' | 'desugar' | 'indirect';

export const WRITTEN_CLASSES: readonly CallClass[] = ['path', 'self-method', 'method', 'macro-arg'];

/** Calls of these traits' methods are calls through a closure or `dyn Fn` value. */
export const FN_TRAITS = new Set(['Fn', 'FnMut', 'FnOnce', 'AsyncFn', 'AsyncFnMut', 'AsyncFnOnce']);

function isRelative(file: string): boolean {
  return !file.startsWith('/') && !file.startsWith('<');
}

/** The syntax class of one call (see the module comment). */
export function classify(call: MirCall, caller: Caller, src: CrateSource): { cls: CallClass; macro?: string } {
  if (call.callee === null) return { cls: 'indirect' };
  const c = parseCallee(call.callee);
  if (c.k === 'trait' && FN_TRAITS.has(c.trait[c.trait.length - 1]?.name ?? '')) return { cls: 'indirect' };
  // a body a macro made: an impl named by its span in a macro definition, a derive's, or an item of a macro invocation
  const generatedBody = caller.generated || caller.item?.origin === 'derive' || caller.item?.origin === 'macro';
  const span = call.fnSpan ?? call.span;
  if (!span || !isRelative(span.file)) return { cls: generatedBody ? 'macro-body' : 'macro-expansion' };
  const f = src.file(span.file);
  const start = src.offset(span.file, span.line, span.col);
  const end = src.offset(span.file, span.endLine, span.endCol);
  if (!f || start === null || end === null) return { cls: generatedBody ? 'macro-body' : 'macro-expansion' };
  const inDef = rangeAt(f.definitions, start) !== null;
  if (!writtenCall(f.text, end)) {
    if (generatedBody) return { cls: 'macro-body' };
    if (inDef || rangeAt(f.invocations, start, true)) return { cls: 'macro-expansion' };
    return { cls: 'desugar' };
  }
  if (inDef || generatedBody) return { cls: 'macro-body' };
  const inv = rangeAt(f.invocations, start);
  if (inv) return { cls: 'macro-arg', macro: inv.name };
  return { cls: syntaxOf(f.text, start) };
}

/** The caller of a body: its rustdoc item, or none — then `generated` says whether a macro made the body. */
export interface Caller {
  item: OracleItem | null;
  generated: boolean;
}

/** Does the body's path name an impl by a span inside a macro_rules! definition (an impl a macro generated)? */
export function generatedImpl(bodyPath: string, src: CrateSource): boolean {
  for (const seg of splitPath(bodyPath)) {
    const m = /^<impl at (.+):(\d+):(\d+): \d+:\d+>$/.exec(seg);
    if (!m) continue;
    const f = src.file(m[1]!);
    const at = src.offset(m[1]!, Number(m[2]), Number(m[3]));
    if (f && at !== null && rangeAt(f.definitions, at) !== null) return true;
  }
  return false;
}

/** After the operand (and an optional turbofish) comes `(`. */
export function writtenCall(text: string, end: number): boolean {
  let i = skipWs(text, end);
  if (text.startsWith('::<', i)) {
    let depth = 0;
    for (i += 2; i < text.length; i++) {
      if (text[i] === '<') depth++;
      else if (text[i] === '>' && text[i - 1] !== '-' && --depth === 0) { i++; break; }
    }
    i = skipWs(text, i);
  }
  return text[i] === '(';
}

function skipWs(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/** `method` when a `.` precedes the operand (`self-method` when the receiver is `self`), else `path`. */
export function syntaxOf(text: string, start: number): 'path' | 'self-method' | 'method' {
  let i = start - 1;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  if (text[i] !== '.' || text[i - 1] === '.') return 'path';
  i--;
  while (i >= 0 && /\s/.test(text[i]!)) i--;
  const recv = /([A-Za-z_][A-Za-z0-9_]*)$/.exec(text.slice(Math.max(0, i - 63), i + 1));
  if (recv && recv[1] === 'self') {
    const before = text[i - 4];
    if (before === undefined || !/[A-Za-z0-9_.:]/.test(before)) return 'self-method';
  }
  return 'method';
}
