// The dependency crates a crate resolves into, as loaded from the lake
// (their nodes' qpaths, public paths and type_info — never their sources):
// paths to items, items to their members, types to their methods.
//
// Invariant: read-only over the DepCrate data it is given; each crate is
// indexed on first use, so a dependency the code never names costs nothing,
// and once per DepCrate object (a run hands the same summary to every crate
// that depends on it; an index is never changed after it is built).
// A crate that is not loaded (not in the lake) answers nothing: callers fall
// back to the path text.
import { namespaceOf, type Namespace } from './defs.ts';
import { stdPath } from './std.ts';
import { parseType, type DepCrate, type DepNode } from './summary.ts';
import type { TypeRef } from '../types.ts';

/** An item of a dependency crate. */
export interface DepItem {
  crate: DepIndex;
  node: DepNode;
}

export class DepIndex {
  /** Public paths -> nodes. */
  private readonly byPath = new Map<string, DepNode[]>();
  /** Definition paths (qpaths) of items that are not impl members -> nodes (for the canonical types crates store). */
  private readonly byQpath = new Map<string, DepNode[]>();
  private readonly byId = new Map<string, DepNode>();
  private readonly children = new Map<string, DepNode[]>();
  readonly ident: string;
  /** This crate's impls by their self type's key, and its blanket impls (DepWorld.index), built on first use. */
  private implsByKey: { keyed: [string, DepItem][]; blanket: DepItem[] } | null = null;

  /** The index of `crate`: built on the first call for that object, the same one after. */
  static of(crate: DepCrate): DepIndex {
    let ix = built.get(crate);
    if (!ix) built.set(crate, ix = new DepIndex(crate));
    return ix;
  }

  private constructor(readonly crate: DepCrate) {
    this.ident = crateIdent(crate.krate);
    for (const n of crate.nodes) this.byId.set(n.id, n);
    for (const n of crate.nodes) {
      if (n.parent) push(this.children, n.parent, n);
      if (n.kind === 'impl') continue;
      if (!(n.parent && this.byId.get(n.parent)?.kind === 'impl')) push(this.byQpath, n.qpath, n);
      // another crate sees an item only through its public paths (the crate root aside)
      for (const p of n.publicPaths) push(this.byPath, p, n);
      if (n.kind === 'module' && n.parent === null && !n.publicPaths.includes(n.qpath)) push(this.byPath, n.qpath, n);
    }
  }

  get root(): DepNode | null {
    return this.byPath.get(this.ident)?.find((n) => n.kind === 'module') ?? null;
  }

  node(id: string): DepNode | null {
    return this.byId.get(id) ?? null;
  }

  /** Items named by `path` (a public path of this crate, first segment = its ident). */
  at(path: string, ns: Namespace | null): DepNode[] {
    const all = this.byPath.get(path) ?? [];
    return ns ? all.filter((n) => depNs(n) === ns || (ns === 'value' && isValueStruct(n))) : all;
  }

  /** The items defined at `qpath` (a canonical type's path). */
  atQpath(qpath: string, ns: Namespace): DepNode[] {
    return (this.byQpath.get(qpath) ?? []).filter((n) => depNs(n) === ns);
  }

  childrenOf(n: DepNode): DepNode[] {
    return this.children.get(n.id) ?? [];
  }

  /** The impls of this crate with a typed self type: by implKey, and the blanket ones (`impl<T: Bound> Trait for T`). */
  impls(): { keyed: readonly [string, DepItem][]; blanket: readonly DepItem[] } {
    if (!this.implsByKey) {
      const keyed: [string, DepItem][] = [];
      const blanket: DepItem[] = [];
      for (const n of this.crate.nodes) {
        if (n.kind !== 'impl' || !n.typeInfo?.self) continue;
        const self = parseType(n.typeInfo.self);
        const k = implKey(self);
        if (k !== null) keyed.push([k, { crate: this, node: n }]);
        else if (n.typeInfo.trait && self.k === 'path' && !self.path.includes('::') && self.args.length === 0) blanket.push({ crate: this, node: n });
      }
      this.implsByKey = { keyed, blanket };
    }
    return this.implsByKey;
  }
}

/** Indexes by the summary they index (see DepIndex.of). */
const built = new WeakMap<DepCrate, DepIndex>();

/** All loaded dependency crates, by the ident their own qpaths start with. */
export class DepWorld {
  private readonly byIdent = new Map<string, DepCrate>();
  private readonly indexes = new Map<string, DepIndex>();
  /** Impls of every loaded crate by their self type's key (implKey), built on first use. */
  private implIndex: Map<string, DepItem[]> | null = null;
  /** Trait impls of every loaded crate for a bare type parameter (`impl<T: ToTokens> Spanned for T`), with implIndex. */
  private blanketList: DepItem[] = [];

  constructor(crates: readonly DepCrate[]) {
    for (const c of crates) if (!this.byIdent.has(crateIdent(c.krate))) this.byIdent.set(crateIdent(c.krate), c);
  }

  /** The index of the crate whose ident is `ident` (`regex_syntax`), if loaded. */
  crate(ident: string): DepIndex | null {
    let ix = this.indexes.get(ident);
    if (ix) return ix;
    const c = this.byIdent.get(ident);
    if (!c) return null;
    ix = DepIndex.of(c);
    this.indexes.set(ident, ix);
    return ix;
  }

  /**
   * The impls, in any loaded crate, whose self type has key `key` (implKey):
   * a dependency's trait implemented for another dependency's type or a std
   * type (`impl ToTokens for proc_macro2::Ident` in quote, `for Option<T>`)
   * is found as well as the type's own crate's impls.
   */
  implsFor(key: string): DepItem[] {
    return this.index().get(key) ?? [];
  }

  /** Trait impls for a bare type parameter (blanket impls) in the loaded crates; their bounds are not stored. */
  blanketImpls(): readonly DepItem[] {
    this.index();
    return this.blanketList;
  }

  private index(): Map<string, DepItem[]> {
    if (!this.implIndex) {
      const index = new Map<string, DepItem[]>();
      for (const ident of this.byIdent.keys()) {
        const { keyed, blanket } = this.crate(ident)!.impls();
        for (const [k, item] of keyed) push(index, k, item);
        for (const item of blanket) this.blanketList.push(item);
      }
      this.implIndex = index;
    }
    return this.implIndex;
  }

  /** The crate of `krate` (`name@version`), if loaded. */
  byKrate(krate: string): DepIndex | null {
    const ix = this.crate(crateIdent(krate));
    return ix && ix.crate.krate === krate ? ix : null;
  }
}

/**
 * The key impls are found by: a path type's canonical path (std spelled
 * `std::`), `prim:NAME`, `slice`; references and pointers stripped. Null for a
 * type parameter (a blanket impl) and anything else.
 */
export function implKey(t: TypeRef): string | null {
  let cur = t;
  while (cur.k === 'ref' || cur.k === 'ptr') cur = cur.of;
  switch (cur.k) {
    case 'path': return cur.path.includes('::') ? stdPath(cur.path) : null;
    case 'prim': return `prim:${cur.name}`;
    case 'slice': return 'slice';
    case 'tuple': return cur.of.length === 0 ? 'prim:()' : null;
    default: return null;
  }
}

export function depNs(n: DepNode): Namespace {
  if (n.kind === 'trait_item') return n.typeInfo && 'a' in n.typeInfo ? 'type' : 'value';
  return namespaceOf(n.kind);
}

/** A tuple or unit struct (or variant) is also a value (its constructor). */
function isValueStruct(n: DepNode): boolean {
  return (n.kind === 'struct' || n.kind === 'variant') && n.typeInfo?.v === 1;
}

export function crateIdent(krate: string): string {
  const at = krate.lastIndexOf('@');
  return (at > 0 ? krate.slice(0, at) : krate).replace(/-/g, '_');
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
