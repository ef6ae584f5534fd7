// The expansion phase as the module-tree walk drives it (modules.ts's
// ItemExpander): one expander per crate, called in textual order.
// - Textual scope: `define` pushes a `macro_rules!`; `leaveModule` drops the
//   module's definitions unless it is `#[macro_use]` (rustc's textual
//   scoping); a new crate target starts empty. `#[macro_export]` definitions
//   are also reachable by path (`crate::m!`, `$crate::m!`, `lib::m!`).
// - `expandItems`: an item-position invocation -> the items it produces: by
//   a `macro_rules!` of the crate or of a dependency (given as DepCrate nodes
//   whose type_info holds the definition text), by the known meaning of
//   `cfg_if!` and std's `thread_local!` without their definitions, or — for any other macro not at hand
//   whose tokens are all items — as a wrapper (its items as written).
// - `bodies`: the macro calls inside an item's bodies -> refs (a
//   `macro_rules!` call expanded and scanned as code, any other call's
//   arguments scanned; see args.ts), nested calls followed.
// Macro names resolve as rustc does within reason: `$crate` is the defining
// crate; a one-segment name looks in the textual scope, then the
// `#[macro_use] extern crate` imports, then the module's `use`s (named, then
// globs); longer paths name their crate by the first segment. A
// `local_inner_macros` definition's own one-segment calls were made
// `$crate::` paths when it was compiled (expand.ts), as rustc does.
//
// Limits: expansion depth (rustc's default recursion limit, 128) and tokens
// per written invocation (nested expansions included); a limit hit is a
// `macro` problem, its items not indexed — never a hang. Never throws for
// bad input: a failed expansion is counted (stats) and produces nothing.
import type { Expansion, ItemExpander } from '../modules.ts';
import type { RustParser } from '../parser.ts';
import type { DepCrate } from '../resolve/summary.ts';
import type { ExpansionStats, Item, MacroCall, Problem } from '../types.ts';
import { scanArgs, scanCode, type InnerMacro } from './args.ts';
import { expandMacro, type MacroDef } from './expand.ts';
import type { Edition } from './fragments.ts';
import { allItems, cfgIf, inlineCalls, threadLocal, type Nested } from './inline.ts';
import { callRecord, lastName, produceItems, siteOf, type ScopeKind, type Site } from './produce.ts';
import { render } from './render.ts';
import { isPunct, tokenize, type Token } from './tokens.ts';

export interface ExpanderOptions {
  /** `name@version` of the crate. */
  krate: string;
  /** Its name as paths write it. */
  ident: string;
  edition: Edition;
  parser: RustParser;
  /** Dependencies by the name the code uses (`-` as `_`) -> `name@version`. */
  deps: Map<string, string>;
  /** Dependency crates as loaded from the lake: their exported `macro_rules!` are used. */
  depCrates?: readonly DepCrate[];
  /** Nested expansion depth limit (default 128, rustc's recursion_limit). */
  maxDepth?: number;
  /** Tokens one written invocation may expand to, nested expansions included (default 2M). */
  maxTokens?: number;
  /** Test hook: every expansion text handed to the parser. */
  onParsed?(site: Site, text: string, errors: number): void;
}

const MAX_FAILURES = 20;
/** Tokens a type-position expansion may produce. */
const MAX_TYPE_TOKENS = 10_000;
/** Std macros in item position that produce no item we index. */
const NO_ITEMS = new Set(['compile_error', 'global_asm', 'include', 'assert', 'debug_assert', 'const_assert']);

interface Frame {
  module: Item;
  /** Length of the textual scope when the module was entered. */
  mark: number;
}

export class MacroExpander implements ItemExpander {
  readonly stats: ExpansionStats = {
    itemCalls: 0, expanded: 0, wrappers: 0, cfgIf: 0, unresolved: 0, failed: 0, producedItems: 0, parses: 0, parsedChars: 0,
    bodyCalls: 0, bodyExpanded: 0, argRefs: 0, failures: [],
  };
  readonly problems: Problem[] = [];
  /** Textual scope, oldest first. */
  private textual: MacroDef[] = [];
  private readonly frames: Frame[] = [];
  /** The crate's own definitions by name (first wins) and its exported ones. */
  private readonly own = new Map<string, MacroDef>();
  private readonly ownExported = new Map<string, MacroDef>();
  /** `#[macro_use] extern crate` imports. */
  private readonly prelude = new Map<string, MacroDef>();
  /** Dependencies' exported macros, by krate then name (read lazily from their nodes). */
  private readonly depMacros = new Map<string, Map<string, MacroDef>>();
  private readonly depNodes = new Map<string, DepCrate>();
  private readonly identOfKrate = new Map<string, string>();
  private readonly maxDepth: number;
  private readonly maxTokens: number;
  private file = '';

  constructor(private readonly opts: ExpanderOptions) {
    this.maxDepth = opts.maxDepth ?? 128;
    this.maxTokens = opts.maxTokens ?? 2_000_000;
    for (const c of opts.depCrates ?? []) this.depNodes.set(c.krate, c);
    for (const [ident, krate] of opts.deps) if (!this.identOfKrate.has(krate)) this.identOfKrate.set(krate, ident);
  }

  // --- the module tree's calls -----------------------------------------------------

  enterModule(module: Item, _modulePath: string, file: string): void {
    if (this.frames.length === 0) this.textual = []; // a new crate target
    this.frames.push({ module, mark: this.textual.length });
    this.file = file;
    for (const e of module.externCrates ?? []) {
      if (!e.macroUse) continue;
      const krate = this.opts.deps.get(e.name.replace(/-/g, '_'));
      if (!krate) continue;
      for (const d of this.exportedOf(krate).values()) if (!this.prelude.has(d.name)) this.prelude.set(d.name, d);
    }
  }

  leaveModule(module: Item): void {
    const f = this.frames.pop();
    if (f && !module.macroUse) this.textual.length = Math.min(this.textual.length, f.mark);
  }

  define(item: Item): void {
    if (item.kind !== 'macro' || !item.macroText) return;
    const toks = tokenize(item.macroText, 0);
    const g = toks.find((t) => t.k === 'group');
    const def: MacroDef = {
      name: item.name, krate: this.opts.krate, body: g && g.k === 'group' ? g.tokens : [], edition: this.opts.edition,
      exported: item.macroExport === true, ...(item.macroLocalInner ? { localInner: true } : {}),
    };
    this.textual.push(def);
    if (!this.own.has(def.name)) this.own.set(def.name, def);
    if (def.exported && !this.ownExported.has(def.name)) this.ownExported.set(def.name, def);
  }

  expandItems(call: MacroCall, _modulePath: string, context: ScopeKind): Expansion | null {
    const site = siteOf(call);
    const budget = this.budgetOf(site);
    const top = this.expandSite(site, budget, false);
    if (!('tokens' in top)) return null;
    const name = top.def?.name ?? site.name;
    const inlined = inlineCalls(top.tokens, site, top.def, (sub, definesMacros) => {
      budgets.set(sub, budget);
      const r = this.expandSite(sub, budget, definesMacros);
      return r;
    });
    const produced = produceItems(inlined.tokens, context, site, top.def, `macro:${name}`, {
      parser: this.opts.parser, crateRoot: (k) => this.crateRoot(k), ...(this.opts.onParsed ? { onParsed: this.opts.onParsed } : {}),
    }, inlined.anchors);
    if (produced.syntaxErrors > 0 && top.def) this.fail(site, `its expansion has ${produced.syntaxErrors} syntax error(s); kept the items that parsed`);
    this.stats.producedItems += produced.items.length;
    if (produced.parsed > 0) {
      this.stats.parses++;
      this.stats.parsedChars += produced.parsed;
    }
    const delegated = inlined.delegated.map((d) => callRecord(d.site, d.cfg));
    return { items: produced.items, uses: produced.uses, macroCalls: [...delegated, ...produced.calls] };
  }

  /**
   * One invocation's tokens: by its definition, as `cfg_if!`, or as a
   * wrapper; `unresolved` when none applies (or a limit is hit, reported);
   * `delegate` when its macro may be defined by the expansion it sits in.
   */
  private expandSite(site: Site, budget: { left: number }, definesMacros: boolean): Nested {
    this.stats.itemCalls++;
    if (site.depth >= this.maxDepth) {
      this.limit(site, `recursion limit ${this.maxDepth} reached`);
      return { unresolved: true };
    }
    const def = this.resolve(site);
    if (def) {
      const exp = expandMacro(def, site.input, budget.left);
      if (!exp.ok) {
        if (exp.limit) this.limit(site, exp.error);
        else this.fail(site, exp.error);
        return { unresolved: true };
      }
      budget.left -= countTokens(exp.tokens);
      this.stats.expanded++;
      return { tokens: exp.tokens, def };
    }
    if (definesMacros && site.depth > 0) return { delegate: true };
    if (site.name === 'cfg_if') {
      const tokens = cfgIf(site.input);
      if (tokens) {
        this.stats.cfgIf++;
        return { tokens, def: null };
      }
    } else if (site.name === 'thread_local') {
      const tokens = threadLocal(site.input, this.opts.edition);
      if (tokens) {
        this.stats.wrappers++;
        return { tokens, def: null };
      }
    } else if (!NO_ITEMS.has(site.name) && allItems(site.input, this.opts.edition)) {
      this.stats.wrappers++;
      return { tokens: site.input, def: null };
    }
    this.stats.unresolved++;
    return { unresolved: true };
  }

  /**
   * A call left unexpanded that names this crate by path (`crate::m!`,
   * `$crate::m!`, `krate::m!`) and whose macro is not defined yet: rustc
   * finds a `#[macro_export]` macro from anywhere in the crate, the walk
   * only has those met so far — try it again after the walk.
   */
  later(call: MacroCall): boolean {
    const segs = siteOf(call).path.filter((t) => !isPunct(t, '::'));
    if (segs.length < 2) return false;
    const first = segs[0]!;
    const own = first.k === 'crate' ? (first.krate ?? this.opts.krate) === this.opts.krate
      : first.k === 'ident' && (first.text === 'crate' || first.text === this.opts.ident);
    const name = lastName(siteOf(call).path);
    if (!own || this.ownExported.has(name)) return false;
    this.stats.unresolved--; // counted again when retried
    this.stats.itemCalls--;
    return true;
  }

  /** The macro calls inside `item`'s bodies (and its members') -> refs of those items. */
  bodies(item: Item): void {
    if (item.kind === 'module') return;
    if (item.bodyMacros) {
      const calls = item.bodyMacros;
      item.bodyMacros = undefined;
      for (const c of calls) {
        this.stats.bodyCalls++;
        const before = item.refs.length;
        this.callRefs(siteOf(c), item, 'macro-arg', 0);
        this.stats.argRefs += item.refs.length - before;
      }
    }
    for (const c of item.children) this.bodies(c);
  }

  // --- calls inside bodies --------------------------------------------------------

  private callRefs(site: Site, into: Item, defOrigin: string, depth: number): void {
    if (depth >= this.maxDepth) return;
    const def = this.resolve(site);
    const place = { anchor: site.anchor, at: site.at, defOrigin };
    let inner: InnerMacro[];
    let parent: MacroDef | null = site.parent;
    let origin = defOrigin;
    const exp = def ? expandMacro(def, site.input, this.maxTokens) : null;
    if (def && exp && exp.ok) {
      this.stats.bodyExpanded++;
      origin = `macro:${def.name}`;
      parent = def;
      const scan = scanCode(exp.tokens, { ...place, defOrigin: origin });
      into.refs.push(...scan.refs);
      if (scan.bindings.length > 0) (into.bindings ??= []).push(...scan.bindings);
      inner = scan.macros;
    } else {
      const scan = scanArgs(site.name, site.input, place, this.opts.edition);
      into.refs.push(...scan.refs);
      if (scan.bindings.length > 0) (into.bindings ??= []).push(...scan.bindings);
      inner = scan.macros;
    }
    for (const m of inner) {
      this.callRefs({ path: m.path, name: m.name, input: m.input, anchor: m.anchor, at: site.at, parent, depth: site.depth + 1 }, into, origin, depth + 1);
    }
  }

  // --- names ----------------------------------------------------------------------

  /** The definition an invocation names, or null (a std macro, or one not at hand). */
  private resolve(site: Site): MacroDef | null {
    const segs = site.path.filter((t) => !isPunct(t, '::'));
    const name = lastName(site.path);
    if (segs.length === 0 || !name) return null;
    if (segs.length === 1 && segs[0]!.k === 'ident' && !isPunct(site.path[0], '::')) {
      for (let i = this.textual.length - 1; i >= 0; i--) if (this.textual[i]!.name === name) return this.textual[i]!;
      const pre = this.prelude.get(name);
      if (pre) return pre;
      const module = this.frames[this.frames.length - 1]?.module;
      for (const u of module?.uses ?? []) {
        if (u.glob || u.alias !== name) continue;
        const d = this.byPath(u.path.split('::'), null);
        if (d) return d;
      }
      for (const u of module?.uses ?? []) {
        if (!u.glob) continue;
        const d = this.byPath([...u.path.split('::'), name], null);
        if (d) return d;
      }
      return null;
    }
    const first = segs[0]!;
    return this.byPath(segs.map((t) => (t.k === 'crate' ? '$crate' : t.k === 'group' ? '' : t.text)), first.k === 'crate' ? first.krate ?? this.opts.krate : null);
  }

  /**
   * A type-position invocation (`Token![:]`, `syn::Token![=]`) -> the type it
   * expands to, as written text (`$crate` as the crate's name or `crate`), or
   * null. After the walk (resolution time): a one-segment name is the crate's
   * own macro, then a `#[macro_use]` import, then the one dependency exporting
   * it (a `use` of it is assumed). Memoized by text.
   */
  expandType(text: string): string | null {
    const known = this.typeMemo.get(text);
    if (known !== undefined) return known;
    let out: string | null = null;
    const toks = tokenize(text, 0);
    const bang = toks.findIndex((t) => isPunct(t, '!'));
    const g = toks[bang + 1];
    if (bang > 0 && g && g.k === 'group' && bang + 2 === toks.length) {
      const segs = toks.slice(0, bang).filter((t) => !isPunct(t, '::')).map((t) => (t.k === 'group' ? '' : t.text));
      const name = segs[segs.length - 1]!;
      let def = segs.length > 1 ? this.byPath(segs, null) : this.own.get(name) ?? this.prelude.get(name) ?? null;
      if (!def && segs.length === 1) {
        for (const krate of new Set(this.opts.deps.values())) {
          def = this.exportedOf(krate).get(name) ?? null;
          if (def) break;
        }
      }
      const exp = def ? expandMacro(def, g.tokens, MAX_TYPE_TOKENS) : null;
      if (exp?.ok) out = render(exp.tokens, { crateRoot: (k) => this.crateRoot(k) }).text.trim() || null;
    }
    this.typeMemo.set(text, out);
    return out;
  }

  private readonly typeMemo = new Map<string, string | null>();

  /** A macro by path: the first segment names the crate, the last the macro. */
  private byPath(segs: string[], dollarCrate: string | null): MacroDef | null {
    if (segs[0] === '') segs = segs.slice(1);
    const first = segs[0];
    const name = segs[segs.length - 1];
    if (!first || !name || segs.length < 2) return null;
    if (first === '$crate') return this.inKrate(dollarCrate ?? this.opts.krate, name);
    if (first === 'crate' || first === 'self' || first === 'super' || first === this.opts.ident) {
      return this.ownExported.get(name) ?? this.own.get(name) ?? null;
    }
    const krate = this.opts.deps.get(first);
    return krate ? this.exportedOf(krate).get(name) ?? null : null;
  }

  private inKrate(krate: string, name: string): MacroDef | null {
    if (krate === this.opts.krate) return this.ownExported.get(name) ?? this.own.get(name) ?? null;
    return this.exportedOf(krate).get(name) ?? null;
  }

  /** A dependency's exported macros, read from its nodes' type_info on first use. */
  private exportedOf(krate: string): Map<string, MacroDef> {
    let m = this.depMacros.get(krate);
    if (m) return m;
    m = new Map();
    this.depMacros.set(krate, m);
    for (const n of this.depNodes.get(krate)?.nodes ?? []) {
      const text = n.kind === 'macro' ? n.typeInfo?.m : undefined;
      if (!text || m.has(n.name)) continue;
      const toks = tokenize(text, 0);
      const g = toks.find((t) => t.k === 'group');
      m.set(n.name, {
        name: n.name, krate, body: g && g.k === 'group' ? g.tokens : [], edition: 2021, exported: true,
        ...(n.typeInfo?.li ? { localInner: true } : {}),
      });
    }
    return m;
  }

  /** How `$crate` of `krate` is written in a rendered expansion. */
  private crateRoot(krate: string | undefined): string {
    if (!krate || krate === this.opts.krate) return 'crate';
    const local = this.identOfKrate.get(krate);
    if (local) return local;
    const at = krate.lastIndexOf('@');
    return (at > 0 ? krate.slice(0, at) : krate).replace(/-/g, '_');
  }

  // --- limits and reports -------------------------------------------------------

  private budgetOf(site: Site): { left: number } {
    let b = budgets.get(site);
    if (!b) {
      b = { left: this.maxTokens };
      budgets.set(site, b);
    }
    return b;
  }

  private fail(site: Site, why: string) {
    this.stats.failed++;
    if (this.stats.failures.length < MAX_FAILURES) this.stats.failures.push(`${this.file}:${site.anchor.line} ${site.name}!: ${why}`);
  }

  private limit(site: Site, why: string) {
    this.fail(site, why);
    this.problems.push({
      path: this.file, kind: 'macro',
      message: `${this.file}:${site.anchor.line}: expanding ${site.name}! stopped: ${why}; the items it would produce are not indexed`,
    });
  }
}

/** The token budget shared by a written invocation and the expansions nested in it. */
const budgets = new WeakMap<Site, { left: number }>();

function countTokens(tokens: Token[]): number {
  let n = 0;
  for (const t of tokens) n += t.k === 'group' ? 1 + countTokens(t.tokens) : 1;
  return n;
}
