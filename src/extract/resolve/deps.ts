// The dependency crates a crate resolves into, as loaded from the lake
// (their nodes' qpaths, public paths and type_info — never their sources):
// paths to items, items to their members, types to their methods.
//
// Invariant: read-only over the DepCrate data it is given; each crate is
// indexed on first use, so a dependency the code never names costs nothing.
// A crate that is not loaded (not in the lake) answers nothing: callers fall
// back to the path text.
import { namespaceOf, type Namespace } from './defs.ts';
import { parseType, type DepCrate, type DepNode } from './summary.ts';

/** An item of a dependency crate. */
export interface DepItem {
  crate: DepIndex;
  node: DepNode;
}

export class DepIndex {
  /** Qpaths (of non-member items) and public paths -> nodes. */
  private readonly byPath = new Map<string, DepNode[]>();
  private readonly byId = new Map<string, DepNode>();
  private readonly children = new Map<string, DepNode[]>();
  /** Self type's definition qpath -> impls of it. */
  private readonly implsOf = new Map<string, DepNode[]>();
  readonly ident: string;

  constructor(readonly crate: DepCrate) {
    this.ident = crateIdent(crate.krate);
    for (const n of crate.nodes) {
      this.byId.set(n.id, n);
      if (n.parent) push(this.children, n.parent, n);
      if (n.kind === 'impl') {
        const self = n.typeInfo?.self;
        if (self) {
          const t = parseType(self);
          const key = t.k === 'path' ? t.path : t.k === 'ref' && t.of.k === 'path' ? t.of.path : null;
          if (key) push(this.implsOf, key, n);
        }
        continue;
      }
      const parent = n.parent ? this.byId.get(n.parent) : undefined;
      if (parent?.kind === 'impl') continue;
      push(this.byPath, n.qpath, n);
      for (const p of n.publicPaths) if (p !== n.qpath) push(this.byPath, p, n);
    }
  }

  get root(): DepNode | null {
    return this.byPath.get(this.ident)?.find((n) => n.kind === 'module') ?? null;
  }

  node(id: string): DepNode | null {
    return this.byId.get(id) ?? null;
  }

  /** Items named by `path` (a qpath or public path of this crate, first segment = its ident). */
  at(path: string, ns: Namespace | null): DepNode[] {
    const all = this.byPath.get(path) ?? [];
    return ns ? all.filter((n) => depNs(n) === ns || (ns === 'value' && isValueStruct(n))) : all;
  }

  childrenOf(n: DepNode): DepNode[] {
    return this.children.get(n.id) ?? [];
  }

  /** Impls whose self type is the item at `qpath`. */
  impls(qpath: string): DepNode[] {
    return this.implsOf.get(qpath) ?? [];
  }
}

/** All loaded dependency crates, by the ident their own qpaths start with. */
export class DepWorld {
  private readonly byIdent = new Map<string, DepCrate>();
  private readonly indexes = new Map<string, DepIndex>();

  constructor(crates: readonly DepCrate[]) {
    for (const c of crates) if (!this.byIdent.has(crateIdent(c.krate))) this.byIdent.set(crateIdent(c.krate), c);
  }

  /** The index of the crate whose ident is `ident` (`regex_syntax`), if loaded. */
  crate(ident: string): DepIndex | null {
    let ix = this.indexes.get(ident);
    if (ix) return ix;
    const c = this.byIdent.get(ident);
    if (!c) return null;
    ix = new DepIndex(c);
    this.indexes.set(ident, ix);
    return ix;
  }

  /** The crate of `krate` (`name@version`), if loaded. */
  byKrate(krate: string): DepIndex | null {
    const ix = this.crate(crateIdent(krate));
    return ix && ix.crate.krate === krate ? ix : null;
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
