// One `macro_rules!` expansion step: a macro definition and an invocation's
// tokens -> the tokens of the first rule that matches, transcribed.
//
// As rustc: rules are tried in order; a rule that fails to match passes to the
// next one, a rule whose matcher is ambiguous stops the expansion with an
// error; no rule matching is an error naming the first failure.
//
// Invariant: pure (the compiled rules are cached per definition); the output
// is bounded by `budget` tokens.
import type { Edition } from './fragments.ts';
import { compile, flatten, matchRule, rejects, type Compiled } from './matcher.ts';
import { parseRules, type TemplateNode } from './rules.ts';
import type { Token } from './tokens.ts';
import { TranscribeError, transcribe } from './transcriber.ts';

export interface MacroDef {
  name: string;
  /** `name@version` of the defining crate (what `$crate` means in its expansions). */
  krate: string;
  /** The tokens between the braces (or parens) of `macro_rules! name { … }`. */
  body: Token[];
  /** The edition of the defining crate (`pat` takes top-level `|` from 2021). */
  edition: Edition;
  /** `#[macro_export]`: reachable as `krate::name!` from anywhere. */
  exported: boolean;
  /** `#[macro_export(local_inner_macros)]`: a one-segment macro call written in it means `$crate::name!`. */
  localInner?: boolean;
}

interface CompiledMacro {
  rules: { matcher: Compiled; template: TemplateNode[] }[];
  errors: string[];
}

export type Expansion =
  | { ok: true; tokens: Token[]; rule: number }
  | { ok: false; error: string; limit?: boolean };

const compiled = new WeakMap<MacroDef, CompiledMacro>();

function compiledOf(def: MacroDef): CompiledMacro {
  let c = compiled.get(def);
  if (!c) {
    const { rules, errors } = parseRules(def.body);
    c = { rules: rules.map((r) => ({ matcher: compile(r.matcher), template: def.localInner ? localInner(r.template) : r.template })), errors };
    compiled.set(def, c);
  }
  return c;
}

/**
 * `#[macro_export(local_inner_macros)]`, as rustc applies it to the
 * definition: every one-segment macro call its templates write (`m!(…)`,
 * not `a::m!`, not `$m!`) becomes `$crate::m!(…)` — so it keeps naming the
 * defining crate's macro wherever the tokens are forwarded to.
 */
function localInner(nodes: TemplateNode[]): TemplateNode[] {
  const out: TemplateNode[] = [];
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    const prev = out[out.length - 1];
    const next = nodes[i + 1];
    const after = nodes[i + 2];
    if (n.t === 'tok' && n.tok.k === 'ident' && n.tok.text !== 'macro_rules'
      && next?.t === 'tok' && next.tok.k === 'punct' && next.tok.text === '!' && after?.t === 'group'
      && !(prev?.t === 'tok' && prev.tok.k === 'punct' && prev.tok.text === '::')) {
      out.push({ t: 'crate', tok: { k: 'crate', text: '$crate', line: 0, col: 0 } }, { t: 'tok', tok: { k: 'punct', text: '::', line: 0, col: 0 } }, n);
      continue;
    }
    if (n.t === 'group') out.push({ ...n, body: localInner(n.body) });
    else if (n.t === 'rep') out.push({ ...n, body: localInner(n.body) });
    else out.push(n);
  }
  return out;
}

/** Expand `def` on `input` (the invocation's tokens inside its delimiters). */
export function expandMacro(def: MacroDef, input: Token[], budget: number): Expansion {
  const c = compiledOf(def);
  if (c.rules.length === 0) return { ok: false, error: `macro \`${def.name}\` has no usable rule${c.errors[0] ? ` (${c.errors[0]})` : ''}` };
  // the first rule that failed, and its message unless its prefix rejected it (then made if no rule matches)
  let first = -1;
  let message: string | null = null;
  const flat = flatten(input);
  for (let i = 0; i < c.rules.length; i++) {
    const r = c.rules[i]!;
    // a rule its prefix rejects fails without an ambiguity (see matcher.ts rejects): not matched
    if (rejects(r.matcher, flat)) {
      if (first < 0) first = i;
      continue;
    }
    const m = matchRule(r.matcher, flat, def.edition);
    if (!m.ok) {
      if (m.ambiguous) return { ok: false, error: `\`${def.name}!\` rule ${i + 1}: ${m.message}` };
      if (first < 0) {
        first = i;
        message = m.message;
      }
      continue;
    }
    try {
      return { ok: true, tokens: transcribe(r.template, m.bindings, { krate: def.krate, budget }), rule: i };
    } catch (e) {
      if (e instanceof TranscribeError) {
        return { ok: false, error: `\`${def.name}!\` rule ${i + 1}: ${e.message}`, limit: e.constructor.name === 'SizeLimit' };
      }
      throw e;
    }
  }
  if (message === null) {
    const m = matchRule(c.rules[first]!.matcher, flat, def.edition);
    message = m.ok ? '' : m.message;
  }
  return { ok: false, error: `no rule of \`${def.name}!\` matched (rule ${first + 1}: ${message})` };
}
