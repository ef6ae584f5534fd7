// An expansion's tokens -> the Items they declare, through the ordinary
// parser (so generated items are read exactly like written ones), with every
// position traced back to the source:
// - an item whose first and last tokens came from the invocation's arguments
//   keeps its own lines and column (a wrapper macro's `$item` passes written
//   items through, and rustc keeps their spans);
// - any other item sits at the invocation (line and column of the macro's
//   name, last line of the invocation), as rustc's spans of generated items;
// - refs and `use`s take the line of their token, or the invocation's when the
//   token was written in the macro definition (such a ref is `macro:<name>`);
// - every produced item is marked `origin` = `macro:<name>`.
// Macro calls inside the expansion (item position or in bodies) are mapped to
// Sites built from the expansion's own tokens (see render.ts), never from
// re-read text; their records get the positions of the source.
//
// Invariant: pure apart from the parser; never throws on any token sequence
// (the parser keeps what parses; the count of syntax errors is returned).
import type { RustParser } from '../parser.ts';
import type { Item, MacroCall, Ref, UseDecl } from '../types.ts';
import type { MacroDef } from './expand.ts';
import { render, type Rendered } from './render.ts';
import { isPunct, tokenize, type Group, type Token } from './tokens.ts';

/** Where generated things without a source position of their own are placed. */
export interface Anchor {
  line: number;
  col: number;
  lineEnd: number;
}

/** A macro invocation as tokens: from a source file, or found inside an expansion. */
export interface Site {
  /** Path tokens before the `!` (a `$crate` token knows its crate). */
  path: Token[];
  name: string;
  /** The tokens inside the invocation's delimiters. */
  input: Token[];
  anchor: Anchor;
  /** Offset of the outermost written invocation in its file (for the locals in scope of refs). */
  at: number;
  /** The definition whose expansion wrote this call (for `local_inner_macros`); null when written in the source. */
  parent: MacroDef | null;
  /** Nesting depth of expansion (0 = written in the source). */
  depth: number;
}

export type ScopeKind = 'module' | 'impl' | 'trait';

export interface Produced {
  items: Item[];
  uses: UseDecl[];
  /** Item-position invocations of the expansion (records whose Sites are in `sites`). */
  calls: MacroCall[];
  syntaxErrors: number;
  /** Length of the text handed to the parser (0: none was needed). */
  parsed: number;
}

const WRAP: Record<ScopeKind, [string, string]> = {
  module: ['', ''],
  impl: ['impl __MimirExpansion {\n', '}'],
  trait: ['trait __MimirExpansion {\n', '}'],
};

/** Sites of the invocation records found in expansions (item position and bodies). */
export const sites = new WeakMap<MacroCall, Site>();

/** A source file's invocation as a Site (its token tree tokenized at its own position). */
export function siteOf(call: MacroCall): Site {
  const known = sites.get(call);
  if (known) return known;
  const tt = tokenize(call.text, call.textLine, call.textCol)[0];
  const path = tokenize(call.path, 0);
  const group: Group | null = tt && tt.k === 'group' ? tt : null;
  const site: Site = {
    path, name: lastName(path), input: group ? group.tokens : [],
    anchor: { line: call.line, col: call.col, lineEnd: group && group.endLine > 0 ? group.endLine : call.line },
    at: call.startIndex, parent: null, depth: 0,
  };
  sites.set(call, site);
  return site;
}

export function lastName(path: Token[]): string {
  for (let i = path.length - 1; i >= 0; i--) {
    const t = path[i]!;
    if (t.k === 'ident') return t.text.startsWith('r#') ? t.text.slice(2) : t.text;
  }
  return '';
}

export interface ProduceOptions {
  parser: RustParser;
  crateRoot(krate: string | undefined): string;
  /** Test hook: every text handed to the parser, with its count of syntax errors. */
  onParsed?(site: Site, text: string, errors: number): void;
}

/**
 * Parse `tokens` (what `site` expanded to, nested calls inlined) as the
 * items of a `kind` scope; positions traced back (see the module comment).
 */
export function produceItems(
  tokens: Token[], kind: ScopeKind, site: Site, def: MacroDef | null, origin: string, opts: ProduceOptions,
  anchors: readonly { anchor: Anchor; origin: string }[] = [],
): Produced {
  if (tokens.length === 0) return { items: [], uses: [], calls: [], syntaxErrors: 0, parsed: 0 };
  const [prefix, suffix] = WRAP[kind];
  const r = render(tokens, { crateRoot: opts.crateRoot, prefix, suffix });
  const parsed = opts.parser.parse(r.text);
  opts.onParsed?.(site, r.text, parsed.status === 'errors' ? parsed.errorCount : 0);
  const tracer = new Tracer(r, site, def, origin, anchors);
  let items = parsed.items;
  let calls = parsed.macroCalls;
  if (kind !== 'module') {
    const holder = items.find((it) => it.kind === kind);
    items = holder ? holder.children : [];
    calls = holder?.macroCalls ?? [];
  }
  for (const it of items) tracer.item(it);
  return {
    items,
    uses: parsed.uses.map((u) => tracer.use(u)),
    calls: tracer.calls(calls),
    syntaxErrors: parsed.status === 'errors' ? parsed.errorCount : 0,
    parsed: r.text.length,
  };
}

/** A record for a call found in tokens (handed to the walk), with its Site. */
export function callRecord(site: Site, cfg: string[]): MacroCall {
  const rec: MacroCall = {
    path: site.path.map((t) => (t.k === 'crate' ? '$crate' : t.k === 'group' ? '' : t.text)).join(''),
    text: '', textLine: 0, textCol: 0, line: site.anchor.line, col: site.anchor.col, startIndex: site.at,
  };
  if (cfg.length > 0) rec.cfg = cfg;
  sites.set(rec, site);
  return rec;
}

class Tracer {
  constructor(
    private readonly r: Rendered, private readonly site: Site, private readonly def: MacroDef | null, private readonly origin: string,
    private readonly anchors: readonly { anchor: Anchor; origin: string }[],
  ) {}

  /** Source line of a rendered line: > 0 a source line; 0 or -k: written in a definition (see `placeOf`). */
  private line(row1: number): number {
    return this.r.rows[row1 - 1] ?? 0;
  }

  /** Where a definition-written rendered line sits: the anchor it is marked with, else the invocation. */
  private placeOf(row1: number): { anchor: Anchor; origin: string } {
    const v = this.line(row1);
    const a = v < 0 ? this.anchors[-v] : undefined;
    return a ?? { anchor: this.site.anchor, origin: this.origin };
  }

  item(it: Item) {
    const s = this.line(it.lineStart);
    const e = this.line(it.lineEnd);
    if (s > 0 && e > 0) {
      it.col = this.nameCol(it) ?? this.site.anchor.col;
      it.lineStart = s;
      it.lineEnd = e;
      it.origin = this.origin;
    } else {
      const p = this.placeOf(s > 0 ? it.lineEnd : it.lineStart);
      it.lineStart = p.anchor.line;
      it.lineEnd = p.anchor.lineEnd;
      it.col = p.anchor.col;
      it.origin = p.origin;
    }
    it.refs = it.refs.map((x) => this.ref(x));
    it.uses = it.uses.map((u) => this.use(u));
    if (it.bodyMacros) it.bodyMacros = this.calls(it.bodyMacros);
    if (it.macroCalls) it.macroCalls = this.calls(it.macroCalls);
    for (const c of it.children) this.item(c);
  }

  /** The source column of an item's name token (searched from its first rendered line on). */
  private nameCol(it: Item): number | null {
    for (let row = it.lineStart; row <= it.lineEnd; row++) {
      const p = this.r.source(row, it.col);
      if (p && (p.text === it.name || p.text === `r#${it.name}` || it.name === '')) return p.col;
    }
    return null;
  }

  /** A ref of a produced item (its `at` stays in the expansion's text, like its bindings'). */
  ref(x: Ref): Ref {
    const p = this.r.source(x.line, x.col);
    if (p) return { ...x, line: p.line, col: p.col, origin: x.origin ?? null };
    const at = this.placeOf(x.line);
    return { ...x, line: at.anchor.line, col: at.anchor.col, origin: at.origin };
  }

  /** A use of a produced item: at its name's source position when the name came from the source, else on its line (or the anchor's), no column. */
  use(u: UseDecl): UseDecl {
    if (u.col !== undefined) {
      const p = this.r.source(u.line, u.col);
      if (p) return { ...u, line: p.line, col: p.col };
    }
    const { col: _col, ...rest } = u;
    const l = this.line(u.line);
    return { ...rest, line: l > 0 ? l : this.placeOf(u.line).anchor.line };
  }

  /** Invocation records of the rendered text -> records at source positions, each with its Site. */
  calls(calls: MacroCall[]): MacroCall[] {
    const out: MacroCall[] = [];
    for (const c of calls) {
      const site = this.siteAt(c);
      if (!site) continue;
      const rec: MacroCall = { ...c, line: site.anchor.line, col: site.anchor.col, startIndex: this.site.at };
      sites.set(rec, site);
      out.push(rec);
    }
    return out;
  }

  /** The invocation at a rendered call record, from the expansion's own tokens. */
  private siteAt(c: MacroCall): Site | null {
    const at = this.r.at(c.startIndex);
    if (!at) return null;
    const { list, idx } = at;
    let bang = idx;
    while (bang < list.length && !isPunct(list[bang], '!')) bang++;
    const g = list[bang + 1];
    if (!g || g.k !== 'group' || g.delim === '') return null;
    const path = list.slice(idx, bang);
    const name = path[path.length - 1];
    const anchor: Anchor = name && name.line > 0
      ? { line: name.line, col: name.col, lineEnd: g.endLine > 0 ? g.endLine : name.line }
      : this.placeOf(c.line).anchor;
    return { path, name: lastName(path), input: g.tokens, anchor, at: this.site.at, parent: this.def, depth: this.site.depth + 1 };
  }
}
