// The crate's definitions: one `Def` per active item of every target's
// module tree, and one `Scope` per module (its items by name, its `use`s,
// its `extern crate`s). What later phases resolve against.
//
// Invariant: built once from cfg-filtered, macro-expanded module trees, in
// module-tree order (so "first defined" means what rustc's textual order
// means). Plain data with links; `qpath` of impls and their members stays ''
// until impls.ts resolves their headers, `id` '' until ids are assigned.
import type { Item, NodeKind, UseDecl } from '../types.ts';

export type Namespace = 'type' | 'value' | 'macro' | 'impl';

export function namespaceOf(kind: NodeKind, signature = ''): Namespace {
  switch (kind) {
    case 'fn': case 'method': case 'const': case 'static': return 'value';
    case 'macro': return 'macro';
    case 'impl': return 'impl';
    case 'trait_item': return signature.startsWith('type ') ? 'type' : 'value';
    default: return 'type';
  }
}

export interface Def {
  item: Item;
  kind: NodeKind;
  ns: Namespace;
  name: string;
  qpath: string;
  id: string;
  parent: Def | null;
  /** The module scope the item's paths are resolved in (a module's own scope for modules). */
  scope: Scope;
  /** For members of an impl: the impl. */
  impl: Def | null;
  children: Def[];
  /** Public paths (names.ts). */
  publicPaths: string[];
}

export interface Scope {
  /** Dense number, for memo keys. */
  n: number;
  def: Def;
  parent: Scope | null;
  root: Scope;
  /** Own items by name (every namespace; impls are not named). */
  items: Map<string, Def[]>;
  uses: UseDecl[];
  /** `extern crate name as alias;`: alias -> crate name. */
  externs: Map<string, string>;
  /** The aliases of `pub extern crate`s (a facade re-exporting a crate whole). */
  pubExterns: Set<string>;
}

/** Every definition of a crate, and its module scopes (one root per target, lib first). */
export class DefTable {
  readonly defs: Def[] = [];
  readonly roots: Scope[] = [];
  readonly scopes = new Map<Def, Scope>();
  /** `macro_rules!` by name in tree order, and the exported ones. */
  readonly macros = new Map<string, Def>();
  readonly exportedMacros = new Map<string, Def>();

  /** Add one target's module tree (`root` as built by modules.ts) under the name `name`. */
  addTarget(root: Item, name: string): Scope {
    const def = this.make(root, 'module', name, name, null, null, null);
    const scope = this.makeScope(def, null);
    this.roots.push(scope);
    this.collect(root.children, scope, def);
    return scope;
  }

  private make(item: Item, kind: NodeKind, name: string, qpath: string, parent: Def | null, scope: Scope | null, impl: Def | null): Def {
    const def: Def = {
      item, kind, ns: namespaceOf(kind, item.signature), name, qpath, id: '', parent,
      scope: scope as Scope, impl, children: [], publicPaths: [],
    };
    this.defs.push(def);
    parent?.children.push(def);
    return def;
  }

  private makeScope(def: Def, parent: Scope | null): Scope {
    const scope: Scope = {
      n: this.scopes.size, def, parent, root: parent ? parent.root : (null as unknown as Scope),
      items: new Map(), uses: def.item.uses, externs: new Map(), pubExterns: new Set(),
    };
    if (!parent) scope.root = scope;
    for (const e of def.item.externCrates ?? []) {
      scope.externs.set(e.alias, e.name);
      if (e.visibility === 'pub') scope.pubExterns.add(e.alias);
    }
    def.scope = scope;
    this.scopes.set(def, scope);
    return scope;
  }

  private collect(items: Item[], scope: Scope, parent: Def) {
    for (const item of items) {
      // `const _: T = …;` names nothing (rustdoc leaves it out too)
      if (item.name === '_' && (item.kind === 'const' || item.kind === 'static')) {
        // but the impls of its initialiser are items (rustdoc lists them): in the module
        for (const c of item.children) if (c.kind === 'impl') this.impl(c, parent, scope);
        continue;
      }
      if (item.kind === 'impl') {
        this.impl(item, parent, scope);
        continue;
      }
      // `#[macro_export]` puts a macro at the crate root, wherever it is written.
      const qpath = item.macroExport ? `${scope.root.def.qpath}::${item.name}` : `${parent.qpath}::${item.name}`;
      const def = this.make(item, item.kind, item.name, qpath, parent, scope, null);
      if (item.kind === 'macro') {
        if (!this.macros.has(item.name)) this.macros.set(item.name, def);
        if (item.macroExport && !this.exportedMacros.has(item.name)) this.exportedMacros.set(item.name, def);
      }
      if (item.name !== '_') addName(scope.items, item.name, def);
      if (item.kind === 'module') {
        const child = this.makeScope(def, scope);
        this.collect(item.children, child, def);
      } else {
        for (const c of item.children) {
          if (c.kind === 'impl') this.impl(c, def, scope);
          else this.nested(this.make(c, c.kind, c.name, `${qpath}::${c.name}`, def, scope, null));
        }
      }
    }
  }

  /** An impl and its members; `parent` is a module, or the fn/const whose body holds it. */
  private impl(item: Item, parent: Def, scope: Scope): void {
    const def = this.make(item, 'impl', '', '', parent, scope, null);
    for (const c of item.children) this.nested(this.make(c, c.kind, c.name, '', def, scope, def));
  }

  /** Impls written in `def`'s body (parser.ts nestedImpl): children of `def`, resolved in its module. */
  private nested(def: Def): void {
    for (const c of def.item.children) if (c.kind === 'impl') this.impl(c, def, def.scope);
  }
}

export function addName<T>(map: Map<string, T[]>, name: string, v: T): void {
  const list = map.get(name);
  if (list) list.push(v);
  else map.set(name, [v]);
}

/** Is `inner` the module `outer` or inside it? */
export function within(inner: Scope, outer: Scope): boolean {
  for (let s: Scope | null = inner; s; s = s.parent) if (s === outer) return true;
  return false;
}
