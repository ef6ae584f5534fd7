// Name resolution, as rustc's resolver does it for the cases that matter: a
// path is resolved from a module scope, segment by segment, in the type
// namespace for every segment but the last and in the wanted namespace
// (type, value or macro) for the last. A name in a module is, in order: an
// item of that namespace, an explicit `use` of it (items and explicit uses
// shadow globs), a glob import (`use m::*`, of names visible from here), the
// extern prelude (dependencies, `extern crate` aliases), the std prelude.
// `self`/`super`/`crate`/`$crate`/`::` heads, `extern crate … as …`
// renames and edition-2015 `use` paths (crate-relative) are honoured. Paths
// into a dependency loaded from the lake are walked through its qpaths and
// public paths (deps.ts); into std or a crate not in the lake they stay text.
//
// Public paths: from each crate root, every `pub` item and `pub use`
// re-export (explicit or glob, followed to a fixed point) reachable through
// `pub` modules names its target: the paths rustdoc would give it.
//
// Invariants: demand-driven and memoised per (module, namespace, name) and
// per (module, namespace, path); a lookup met again while being computed is a
// cycle (glob imports that import each other) and answers null, and results
// that depended on such a cut are not memoised (they depend on the way in).
// Never throws on odd input; never guesses a target across crates.
import type { UseDecl } from '../types.ts';
import { within, type Def, type DefTable, type Namespace, type Scope } from './defs.ts';
import { depNs, type DepItem, type DepWorld } from './deps.ts';
import { PRELUDE_TYPES, PRELUDE_VALUES, STD_CRATES, stdPath } from './std.ts';

/** What a path names: an item of this crate, of a loaded dependency, or a path in a crate not loaded (krate null: std or unknown). */
export type Res =
  | { def: Def }
  | { dep: DepItem }
  | { ext: string; krate: string | null; depName: string | null };

/** What a path in a body may also mean: `Self`, type parameters, the body's own `use`s. */
export interface PathCtx {
  self: Res | null;
  generics: readonly string[];
  locals: readonly UseDecl[];
}

export const NO_CTX: PathCtx = { self: null, generics: [], locals: [] };

export interface Dep {
  /** `name@version`. */
  krate: string;
  /** The ident its own paths start with. */
  ident: string;
  /** Where its ids live. */
  repo: string;
}

export interface NamesOptions {
  /** This crate's ident (`serde_json`). */
  ident: string;
  edition: string;
  /** Dependencies by the (underscored) name the code uses. */
  deps: ReadonlyMap<string, Dep>;
  world: DepWorld;
}

/** Depth limit of one resolution chain; cycles are cut long before (see memoised). */
const MAX_DEPTH = 32;
const DEPTH_CUT = -1;
/** lookup's memo tag of a name in a module's own names only (`outer` false). */
const LOCAL_ONLY: Readonly<Record<Namespace, string>> = { type: 'type/own', value: 'value/own', macro: 'macro/own', impl: 'impl/own' };
/** Public paths: at most this many per module (re-export webs), and this deep. */
const MAX_PATHS_PER_MODULE = 8;
const MAX_PUBLIC_DEPTH = 24;

export class Names {
  /**
   * Associated items of a type (`Type::new`), answered by impls.ts once
   * impls are placed; null before (paths in impl headers never end in one).
   */
  assoc: ((owner: Res, name: string, ns: Namespace) => Res | null) | null = null;

  /** resolvePath's answers: scope -> namespace -> path text (object and interned keys: no key string built on a hit). */
  private readonly pathMemo = new Map<Scope, Map<Namespace, Map<string, Res | null>>>();
  /** lookup's answers: scope -> namespace (outer) or LOCAL_ONLY's tag -> name. */
  private readonly nameMemo = new Map<Scope, Map<string, Map<string, Res | null>>>();
  /** Keys of the computations under way (built on a memo miss only). */
  private readonly active = new Map<string, number>();
  /** Path texts split at `::`, and back (segs): one array per text, never mutated. */
  private readonly splits = new Map<string, readonly string[]>();
  private readonly joined = new Map<readonly string[], string>();
  private frames = 0;
  private lowCut = Infinity;
  private readonly edition2015: boolean;

  constructor(private readonly table: DefTable, private readonly opts: NamesOptions) {
    this.edition2015 = opts.edition === '2015' || opts.edition === '';
  }

  // --- paths ---------------------------------------------------------------

  /** `text.split('::')`, one shared (frozen in use: never mutate it) array per text; resolvePath knows its text back. */
  segs(text: string): readonly string[] {
    let s = this.splits.get(text);
    if (s === undefined) {
      s = text.split('::');
      this.splits.set(text, s);
      this.joined.set(s, text);
    }
    return s;
  }

  /** Resolve a path written in `scope` (and, in a body, with `ctx`). */
  resolve(segs: readonly string[], scope: Scope, ns: Namespace, ctx: PathCtx = NO_CTX, depth = 0): Res | null {
    if (depth > MAX_DEPTH) return this.depthCut();
    if (segs.length === 0) return null;
    const first = segs[0]!;
    if (first === 'Self') return this.walk(ctx.self, segs, 1, ns, depth);
    if (ctx.generics.includes(first)) return null;
    for (const u of ctx.locals) {
      if (u.glob || u.alias !== first) continue;
      const firstNs: Namespace = segs.length === 1 ? ns : 'type';
      const cur = this.resolveUse(u, scope, firstNs, depth + 1) ?? this.lookup(scope, first, firstNs, depth + 1);
      return this.walk(cur, segs, 1, ns, depth);
    }
    for (const u of ctx.locals) {
      if (!u.glob) continue;
      const from = this.resolveUse(u, scope, 'type', depth + 1);
      const hit = from ? this.globMember(from, scope, first, segs.length === 1 ? ns : 'type', depth + 1) : null;
      if (hit) return this.walk(hit, segs, 1, ns, depth);
    }
    return this.resolvePath(segs, scope, ns, depth);
  }

  /** A `use` declaration's path (edition 2015: relative to the crate root unless it says otherwise). */
  resolveUse(u: UseDecl, scope: Scope, ns: Namespace, depth = 0): Res | null {
    const segs = this.segs(u.path);
    if (this.edition2015 && !['crate', 'self', 'super', '$crate', ''].includes(segs[0]!)) {
      return this.resolvePath(segs, scope.root, ns, depth) ?? this.resolvePath(segs, scope, ns, depth);
    }
    return this.resolvePath(segs, scope, ns, depth);
  }

  /** A path without `Self`, generics or body-local imports: memoised per (module, namespace, path). */
  private resolvePath(segs: readonly string[], scope: Scope, ns: Namespace, depth: number): Res | null {
    if (depth > MAX_DEPTH) return this.depthCut();
    let byNs = this.pathMemo.get(scope);
    if (byNs === undefined) this.pathMemo.set(scope, byNs = new Map());
    let table = byNs.get(ns);
    if (table === undefined) byNs.set(ns, table = new Map());
    const text = this.joined.get(segs) ?? segs.join('::');
    const known = table.get(text);
    if (known !== undefined) return known; // a hit makes no closures
    return this.memoised(table, text, () => `r|${scope.n}|${ns}|${text}`, () => {
      const first = segs[0]!;
      const firstNs: Namespace = segs.length === 1 ? ns : 'type';
      let cur: Res | null = null;
      let i = 1;
      if (first === '') {
        // `::x`: an extern crate (2018), the crate root (2015)
        if (segs.length < 2) return null;
        cur = this.edition2015 ? this.lookup(scope.root, segs[1]!, segs.length === 2 ? ns : 'type', depth + 1) : null;
        cur ??= this.externRoot(segs[1]!, scope);
        i = 2;
      } else if (first === 'crate' || first === '$crate') cur = { def: scope.root.def };
      else if (first === 'self') cur = { def: scope.def };
      else if (first === 'super') {
        let m: Scope | null = scope.parent;
        while (m && segs[i] === 'super') { m = m.parent; i++; }
        if (!m) return null;
        cur = { def: m.def };
      } else {
        // a name in scope, else a crate (`use memchr::memchr;` inside the module it defines `memchr` in)
        cur = this.lookup(scope, first, firstNs, depth + 1) ?? (segs.length > 1 ? this.externRoot(first, scope) : null);
      }
      return this.walk(cur, segs, i, ns, depth);
    }, false);
  }

  /** The remaining segments from `i` on, inside `cur`. */
  private walk(cur: Res | null, segs: readonly string[], i: number, ns: Namespace, depth: number): Res | null {
    for (; cur && i < segs.length; i++) cur = this.member(cur, segs[i]!, i === segs.length - 1 ? ns : 'type', depth + 1);
    return cur;
  }

  /** `seg` inside an already resolved item. */
  member(cur: Res, seg: string, ns: Namespace, depth = 0): Res | null {
    if ('ext' in cur) return { ext: `${cur.ext}::${seg}`, krate: cur.krate, depName: cur.depName };
    if ('dep' in cur) return this.depMember(cur.dep, seg, ns);
    const def = cur.def;
    const scope = this.table.scopes.get(def);
    if (scope) return this.lookup(scope, seg, ns, depth, false);
    if (def.kind === 'enum' || def.kind === 'trait') {
      const child = def.children.find((c) => c.name === seg && (def.kind === 'enum' || c.ns === ns)) ?? def.children.find((c) => c.name === seg);
      if (child) return { def: child };
    }
    return this.assoc ? this.assoc(cur, seg, ns) : null;
  }

  private depMember(item: DepItem, seg: string, ns: Namespace): Res | null {
    const { crate, node } = item;
    if (node.kind === 'module') {
      for (const base of [node.qpath, ...node.publicPaths]) {
        const hits = crate.at(`${base}::${seg}`, ns);
        if (hits.length > 0) return { dep: { crate, node: hits[0]! } };
      }
      // its `pub use` of another crate's item (syn::Ident is proc_macro2::Ident)
      const x = node.typeInfo?.x?.[seg];
      if (x !== undefined) {
        const ix = this.opts.world.crate(x.split('::')[0]!);
        const hit = ix?.atQpath(x, ns)[0];
        if (ix && hit) return { dep: { crate: ix, node: hit } };
      }
      return { ext: `${node.publicPaths[0] ?? node.qpath}::${seg}`, krate: crate.crate.krate, depName: crate.ident };
    }
    if (node.kind === 'enum' || node.kind === 'trait') {
      const child = crate.childrenOf(node).find((c) => c.name === seg);
      if (child) return { dep: { crate, node: child } };
    }
    const viaAssoc = this.assoc ? this.assoc({ dep: item }, seg, ns) : null;
    return viaAssoc ?? { ext: `${node.qpath}::${seg}`, krate: crate.crate.krate, depName: crate.ident };
  }

  // --- names in a module ---------------------------------------------------

  /** A name in a module (memoised, cycles cut). `outer` false: only the module's own names (a path `m::x`), no preludes. */
  lookup(scope: Scope, name: string, ns: Namespace, depth = 0, outer = true): Res | null {
    if (depth > MAX_DEPTH) return this.depthCut();
    let byNs = this.nameMemo.get(scope);
    if (byNs === undefined) this.nameMemo.set(scope, byNs = new Map());
    const tag = outer ? ns : LOCAL_ONLY[ns];
    let table = byNs.get(tag);
    if (table === undefined) byNs.set(tag, table = new Map());
    const known = table.get(name);
    if (known !== undefined) return known; // a hit makes no closures
    return this.memoised(table, name, () => `l|${scope.n}|${ns}|${outer ? 1 : 0}|${name}`, () => this.lookupIn(scope, name, ns, depth, outer), true);
  }

  private lookupIn(scope: Scope, name: string, ns: Namespace, depth: number, outer: boolean): Res | null {
    const own = this.ownItem(scope, name, ns);
    if (own) return { def: own };
    // `extern crate dep as name;` puts `name` in its module, like an item (`crate::name::X`, `self::name::X`)
    if (ns === 'type' && scope.externs.has(name)) {
      const krate = this.externRoot(name, scope);
      if (krate) return krate;
    }
    // a `#[macro_export]` macro is an item of the crate root, wherever it is written (`pub use anyhow as format_err;`)
    if (ns === 'macro' && scope === scope.root) {
      const exported = this.table.exportedMacros.get(name);
      if (exported) return { def: exported };
    }
    for (const u of scope.uses) {
      if (u.glob || u.alias !== name) continue;
      const t = this.resolveUse(u, scope, ns, depth + 1);
      if (t) return t;
    }
    for (const u of scope.uses) {
      if (!u.glob) continue;
      const from = this.resolveUse(u, scope, 'type', depth + 1);
      const hit = from ? this.globMember(from, scope, name, ns, depth + 1) : null;
      if (hit) return hit;
    }
    if (!outer) return null;
    // a name the module imports but that does not resolve (std, a crate not in the lake): keep its text
    for (const u of scope.uses) {
      if (u.glob || u.alias !== name) continue;
      const head = u.path.split('::')[0]!;
      if (head === 'crate' || head === 'self' || head === 'super') return null;
      const root = this.externRoot(head, scope);
      if (root && 'ext' in root) return { ext: stdPath([root.ext, ...u.path.split('::').slice(1)].join('::')), krate: root.krate, depName: root.depName };
      return null;
    }
    if (ns === 'type') {
      const ext = this.externRoot(name, scope);
      if (ext) return ext;
      const p = PRELUDE_TYPES.get(name);
      if (p) return { ext: p, krate: null, depName: null };
    } else if (ns === 'value') {
      const p = PRELUDE_VALUES.get(name);
      if (p) return { ext: p, krate: null, depName: null };
    }
    return null;
  }

  /** An item of `scope` named `name` in `ns` (a tuple/unit struct is a value too). */
  private ownItem(scope: Scope, name: string, ns: Namespace): Def | null {
    const defs = scope.items.get(name);
    if (!defs) return null;
    return defs.find((d) => d.ns === ns) ?? (ns === 'value' ? defs.find((d) => d.kind === 'struct' && isValueStruct(d)) : undefined) ?? null;
  }

  /** `name` through a glob import of `from` into `into`: what `from` makes visible there. */
  private globMember(from: Res, into: Scope, name: string, ns: Namespace, depth: number): Res | null {
    if ('def' in from) {
      const src = this.table.scopes.get(from.def);
      if (src) {
        if (src === into) return null;
        const hit = this.lookup(src, name, ns, depth, false);
        if (!hit) return null;
        // private items of `src` are visible only inside it
        if ('def' in hit && hit.def.scope === src && hit.def.item.visibility === '' && !within(into, src)) return null;
        return hit;
      }
      if (from.def.kind === 'enum') {
        const v = from.def.children.find((c) => c.name === name);
        return v ? { def: v } : null;
      }
      return null;
    }
    if ('dep' in from) {
      const hit = this.depMember(from.dep, name, ns);
      return hit && !('ext' in hit) ? hit : null;
    }
    return null;
  }

  /** A name as the first segment of a path that names another crate. */
  externRoot(name: string, scope: Scope): Res | null {
    const alias = scope.externs.get(name) ?? scope.root.externs.get(name);
    const real = (alias ?? name).replace(/-/g, '_');
    if (alias === 'self') return { def: scope.root.def }; // `extern crate self as name;`
    const dep = this.opts.deps.get(real);
    if (dep) {
      const ix = this.opts.world.byKrate(dep.krate);
      const root = ix?.root;
      if (ix && root) return { dep: { crate: ix, node: root } };
      return { ext: dep.ident, krate: dep.krate, depName: dep.ident };
    }
    if (real === this.opts.ident && this.table.roots[0] && scope.root !== this.table.roots[0]) return { def: this.table.roots[0].def };
    if (STD_CRATES.has(real)) return { ext: real === 'core' || real === 'alloc' ? 'std' : real, krate: null, depName: null };
    return null;
  }

  // --- macros --------------------------------------------------------------

  /** A macro invocation's path (`foo`, `crate::foo`, `dep::foo`). */
  resolveMacro(path: string, scope: Scope): Res | null {
    const segs = this.segs(path);
    const name = segs[segs.length - 1]!;
    if (segs.length > 1) {
      const first = segs[0]!;
      if (first === 'crate' || first === '$crate' || first === 'self' || first === 'super') {
        const hit = this.table.exportedMacros.get(name) ?? this.table.macros.get(name);
        return hit ? { def: hit } : null;
      }
      const root = this.externRoot(first === '' ? segs[1]! : first, scope) ?? this.lookup(scope, first, 'type');
      if (!root) return null;
      if ('dep' in root) {
        const hit = root.dep.crate.at(`${root.dep.crate.ident}::${name}`, 'macro')[0];
        return hit ? { dep: { crate: root.dep.crate, node: hit } } : { ext: `${root.dep.crate.ident}::${name}`, krate: root.dep.crate.crate.krate, depName: root.dep.crate.ident };
      }
      if ('ext' in root) return { ext: `${root.ext}::${segs.slice(1).join('::')}`, krate: root.krate, depName: root.depName };
      return null;
    }
    for (let m: Scope | null = scope; m; m = m.parent) {
      const hit = (m.items.get(name) ?? []).find((d) => d.kind === 'macro');
      if (hit) return { def: hit };
    }
    const anywhere = this.table.macros.get(name);
    if (anywhere) return { def: anywhere };
    const imported = this.lookup(scope, name, 'macro');
    if (imported) return imported;
    // `#[macro_use] extern crate dep;` (and 2015 habits): a dependency's exported macro
    for (const dep of this.opts.deps.values()) {
      const ix = this.opts.world.byKrate(dep.krate);
      const hit = ix?.at(`${dep.ident}::${name}`, 'macro')[0];
      if (ix && hit) return { dep: { crate: ix, node: hit } };
    }
    return { ext: `std::${name}`, krate: null, depName: null };
  }

  // --- public paths --------------------------------------------------------

  /**
   * A module's `pub use`s and `pub extern crate`s that name another crate's
   * item or root (loaded from the lake): name -> that item's definition path, for the dependants that
   * reach the item through this crate (`syn::Ident` is `proc_macro2::Ident`).
   */
  foreignReexports(def: Def): Record<string, string> | null {
    const scope = this.table.scopes.get(def);
    if (!scope) return null;
    let out: Record<string, string> | null = null;
    for (const u of scope.uses) {
      if (u.visibility !== 'pub' || u.glob || u.alias === null || u.alias === '_') continue;
      for (const ns of ['type', 'value', 'macro'] as const) {
        const t = this.resolveUse(u, scope, ns);
        if (t && 'dep' in t && depNs(t.dep.node) === ns) {
          (out ??= {})[u.alias] ??= t.dep.node.qpath;
          break;
        }
      }
    }
    // `pub extern crate dep as name;`: the crate root, reached through this module
    for (const alias of scope.pubExterns) {
      const t = this.externRoot(alias, scope);
      if (t && 'dep' in t) (out ??= {})[alias] ??= t.dep.node.qpath;
    }
    return out;
  }

  /**
   * Set `publicPaths` on every item reachable from a crate root (lib target
   * only) through `pub` names: its own path where every module on the way is
   * `pub`, and every `pub use` path that re-exports it.
   */
  computePublicPaths(): void {
    const root = this.table.roots[0];
    if (!root) return;
    const seen = new Map<Scope, number>();
    const add = (d: Def, p: string) => {
      if (!d.publicPaths.includes(p)) d.publicPaths.push(p);
    };
    add(root.def, root.def.qpath);
    for (const [name, m] of this.table.exportedMacros) add(m, `${root.def.qpath}::${name}`);
    const queue: [Scope, string, number][] = [[root, root.def.qpath, 0]];
    while (queue.length > 0) {
      const [scope, base, depth] = queue.shift()!;
      const n = seen.get(scope) ?? 0;
      if (n >= MAX_PATHS_PER_MODULE || depth > MAX_PUBLIC_DEPTH) continue;
      seen.set(scope, n + 1);
      for (const [name, targets] of this.publicNames(scope, new Set())) {
        for (const t of targets) {
          if (!('def' in t)) continue;
          const d = t.def;
          const p = `${base}::${name}`;
          add(d, p);
          const inner = this.table.scopes.get(d);
          if (inner) queue.push([inner, p, depth + 1]);
          else if (d.kind === 'enum') for (const v of d.children) add(v, `${p}::${v.name}`);
        }
      }
    }
    for (const d of this.table.defs) d.publicPaths.sort();
  }

  /** Names a module makes public: `pub` items, `pub use`s, `pub use …::*` (recursively; `visiting` cuts cycles). */
  private publicNames(scope: Scope, visiting: Set<Scope>): Map<string, Res[]> {
    const out = new Map<string, Res[]>();
    const put = (name: string, r: Res) => {
      const list = out.get(name);
      if (!list) out.set(name, [r]);
      else if (!list.some((x) => sameRes(x, r))) list.push(r);
    };
    if (visiting.has(scope)) return out;
    visiting.add(scope);
    for (const [name, defs] of scope.items) {
      for (const d of defs) if (d.item.visibility === 'pub' && !(d.kind === 'macro' && !d.item.macroExport)) put(name, { def: d });
    }
    for (const u of scope.uses) {
      if (u.visibility !== 'pub' || u.glob || u.alias === null || u.alias === '_') continue;
      for (const ns of ['type', 'value', 'macro'] as const) {
        const t = this.resolveUse(u, scope, ns);
        if (t && (!('def' in t) || t.def.ns === ns || (ns === 'value' && isValueStruct(t.def)))) put(u.alias, t);
      }
    }
    for (const u of scope.uses) {
      if (u.visibility !== 'pub' || !u.glob) continue;
      const from = this.resolveUse(u, scope, 'type');
      if (!from || !('def' in from)) continue;
      const src = this.table.scopes.get(from.def);
      if (src) {
        for (const [name, rs] of this.publicNames(src, visiting)) {
          if (scope.items.has(name) || out.has(name)) continue; // shadowed by explicit names
          for (const r of rs) put(name, r);
        }
      } else if (from.def.kind === 'enum') {
        for (const v of from.def.children) if (!out.has(v.name)) put(v.name, { def: v });
      }
    }
    visiting.delete(scope);
    return out;
  }

  // --- memo ----------------------------------------------------------------

  /**
   * Run `compute` once per key. A lookup key met again while it is being
   * computed is a cycle and answers null; a resolve key met again is simply
   * computed again (it reaches the lookup that closes the cycle at once).
   * Results that do not depend on a cut above them are memoised.
   */
  private memoised(memo: Map<string, Res | null>, text: string, keyOf: () => string, compute: () => Res | null, cut: boolean): Res | null {
    const known = memo.get(text);
    if (known !== undefined) return known;
    const key = keyOf();
    const at = this.active.get(key);
    if (at !== undefined) {
      if (!cut) return compute();
      if (at < this.lowCut) this.lowCut = at;
      return null;
    }
    const frame = this.frames++;
    this.active.set(key, frame);
    const outer = this.lowCut;
    this.lowCut = Infinity;
    let result: Res | null;
    try {
      result = compute();
    } finally {
      this.active.delete(key);
      this.frames--;
    }
    if (this.lowCut >= frame) memo.set(text, result);
    this.lowCut = Math.min(outer, this.lowCut);
    return result;
  }

  private depthCut(): null {
    this.lowCut = DEPTH_CUT;
    return null;
  }
}

/** A tuple or unit struct: also a value (its constructor). */
export function isValueStruct(d: Def): boolean {
  if (d.kind !== 'struct' && d.kind !== 'variant') return false;
  const f = d.item.fields;
  return !f || f.length === 0 || f[0]!.name === '0';
}

export function sameRes(a: Res, b: Res): boolean {
  if ('def' in a) return 'def' in b && a.def === b.def;
  if ('dep' in a) return 'dep' in b && a.dep.node === b.dep.node;
  return 'ext' in b && a.ext === b.ext && a.krate === b.krate;
}

/** The namespace of a resolved item (null for a text path). */
export function resNs(r: Res): Namespace | null {
  if ('def' in r) return r.def.ns;
  if ('dep' in r) return depNs(r.dep.node);
  return null;
}
