// Impls bound to what they are for: each impl's self type and trait are
// resolved (aliases expanded), its path and its members' paths are written
// from them (`<crate::Ref as std::convert::From<&str>>::from`,
// `crate::Regex::new`), and member tables let paths (`Type::new`) and method
// calls find members by the type they belong to — in this crate and in the
// loaded dependencies (through their impl nodes' type_info).
//
// Invariants: runs after names (paths in impl headers resolve without
// associated items) and before ids. Paths never keep `crate::`: an
// unresolved type keeps its written text with `crate`/`self`/`super` heads
// made absolute. Generic arguments are kept on traits always and on self
// types only where two impls' members would otherwise share a path.
import type { TypeRef } from '../types.ts';
import { typeText } from '../syntax.ts';
import type { Def, DefTable, Namespace } from './defs.ts';
import { depNs, type DepItem, type DepWorld } from './deps.ts';
import type { Names, PathCtx, Res } from './names.ts';
import type { DepNode } from './summary.ts';
import { UNKNOWN, headOf, renderTy, resKey, resPath, tyKey, type Ty, type TypeLowering } from './types.ts';

export interface ImplInfo {
  def: Def;
  self: Ty;
  trait: (Ty & { k: 'adt' }) | null;
  /** Members by name. */
  members: Map<string, Def[]>;
}

/** An impl of a loaded dependency. */
export interface DepImpl {
  node: DepNode;
  item: DepItem;
  trait: Res | null;
  traitArgs: string | null;
}

export class Impls {
  /** Impls of this crate by their self type's item (resKey). */
  private readonly byType = new Map<object | string, ImplInfo[]>();
  readonly byDef = new Map<Def, ImplInfo>();
  /** Blanket impls: of a trait for a type parameter (`impl<T: Iterator> Itertools for T`, `impl<T: Buf> Buf for &mut T`). */
  readonly blanket: ImplInfo[] = [];

  constructor(
    private readonly table: DefTable, private readonly names: Names, private readonly lowering: TypeLowering,
    private readonly ident: string, private readonly world: DepWorld,
  ) {}

  /** Resolve every impl header, write impl and member paths, and answer `Type::name` paths from now on. */
  place(): void {
    const impls: ImplInfo[] = [];
    for (const def of this.table.defs) {
      if (def.kind !== 'impl' || !def.item.impl) continue;
      const ctx: PathCtx = { self: null, generics: def.item.generics, locals: [] };
      // a self type declared in the same body is not the module's (and not resolvable from it)
      const self = def.item.impl.local ? UNKNOWN('a type local to a body') : this.lowering.lower(def.item.impl.selfTy, def.scope, ctx, null);
      const selfCtx: PathCtx = { ...ctx, self: headOf(self)?.res ?? null };
      const traitTy = def.item.impl.traitTy ? this.lowering.lower(def.item.impl.traitTy, def.scope, selfCtx, self) : null;
      const info: ImplInfo = { def, self, trait: traitTy && traitTy.k === 'adt' ? traitTy : null, members: new Map() };
      for (const m of def.children) {
        const list = info.members.get(m.name);
        if (list) list.push(m);
        else info.members.set(m.name, [m]);
      }
      impls.push(info);
      this.byDef.set(def, info);
      const key = tyKey(self);
      if (key !== null) {
        const list = this.byType.get(key);
        if (list) list.push(info);
        else this.byType.set(key, [info]);
      } else if (info.trait && stripRefs(self).k === 'param') {
        this.blanket.push(info);
      }
    }
    this.writePaths(impls);
    this.names.assoc = (owner, name, ns) => this.assoc(owner, name, ns);
  }

  /** Impl and member qpaths; self type arguments only where members would collide without them. */
  private writePaths(impls: ImplInfo[]): void {
    const paths = (info: ImplInfo, withArgs: boolean) => {
      const def = info.def;
      const self = this.typeText(info.self, def.item.impl!.selfTy, def, withArgs);
      const trait = def.item.impl!.traitTy ? this.typeText(info.trait, def.item.impl!.traitTy, def, true) : null;
      const mod = def.parent ? def.parent.qpath : this.ident;
      const impl = trait ? `${mod}::<${self} as ${trait}>` : `${mod}::impl ${self}`;
      // an impl in a body: its members under the body's item, so two bodies' `impl Visitor for V` stay apart
      if (def.parent && def.parent.kind !== 'module') return { impl, member: impl };
      return { impl, member: trait ? `<${self} as ${trait}>` : self };
    };
    // impls in bodies last: their paths start with the path of the member holding them
    const depth = (d: Def) => { let n = 0; for (let p = d.parent; p && p.kind !== 'module'; p = p.parent) n++; return n; };
    for (const group of [impls.filter((i) => depth(i.def) === 0), impls.filter((i) => depth(i.def) > 0)]) this.writeGroup(group, paths);
  }

  private writeGroup(impls: ImplInfo[], paths: (info: ImplInfo, withArgs: boolean) => { impl: string; member: string }): void {
    const count = new Map<string, ImplInfo[]>();
    for (const info of impls) {
      const p = paths(info, false);
      info.def.qpath = p.impl;
      for (const m of info.def.children) {
        m.qpath = `${p.member}::${m.name}`;
        const key = `${m.ns}\u0000${m.qpath}`;
        const list = count.get(key) ?? [];
        if (!list.includes(info)) list.push(info);
        count.set(key, list);
      }
    }
    const redo = new Set<ImplInfo>();
    for (const list of count.values()) if (list.length > 1) for (const info of list) redo.add(info);
    for (const info of redo) {
      const p = paths(info, true);
      info.def.qpath = p.impl;
      for (const m of info.def.children) m.qpath = `${p.member}::${m.name}`;
    }
  }

  /** A type's text in an impl path: resolved when possible, else as written with absolute heads. */
  private typeText(ty: Ty | null, written: TypeRef, def: Def, withArgs: boolean): string {
    if (ty && !hasUnknown(ty)) return renderTy(ty, withArgs);
    const mod = def.scope.def.qpath;
    const parentMod = def.scope.parent?.def.qpath ?? mod;
    const absolute = (p: string) => {
      if (p.startsWith('crate::')) return `${this.ident}${p.slice(5)}`;
      if (p.startsWith('self::')) return `${mod}${p.slice(4)}`;
      if (p.startsWith('super::')) return `${parentMod}${p.slice(5)}`;
      return p;
    };
    const t = withArgs ? written : stripArgs(written);
    return typeText(t, absolute);
  }

  /** `Type::name`: an inherent member, else a member of a trait impl, else a trait's own item. */
  assoc(owner: Res, name: string, ns: Namespace, depth = 0): Res | null {
    // `type Mutex<T> = lock_api::Mutex<RawMutex, T>;` then `Mutex::const_new(..)`: the aliased type's members
    const aliased = depth < 8 ? this.aliasTarget(owner) : null;
    if (aliased) return this.assoc(aliased, name, ns, depth + 1);
    for (const info of this.implsOf(owner)) {
      if (info.trait) continue;
      const hit = pick(info.members.get(name), ns);
      if (hit) return { def: hit };
    }
    if ('dep' in owner) {
      const hit = this.depAssoc(owner.dep, name, ns, false);
      if (hit) return hit;
    }
    for (const info of this.implsOf(owner)) {
      if (!info.trait) continue;
      const hit = pick(info.members.get(name), ns);
      if (hit) return { def: hit };
    }
    if ('dep' in owner) {
      const hit = this.depAssoc(owner.dep, name, ns, true);
      if (hit) return hit;
    }
    // a trait's default method, inherited by the impl that does not define it
    for (const info of this.implsOf(owner)) {
      const t = info.trait?.res;
      const hit = t && 'def' in t ? t.def.children.find((c) => c.name === name) : undefined;
      if (hit) return { def: hit };
    }
    if ('def' in owner && owner.def.kind === 'trait') {
      const item = owner.def.children.find((c) => c.name === name);
      if (item) return { def: item };
    }
    return null;
  }

  /** The item a type alias (of this crate or a dependency; not a trait's associated type) names, else null. */
  private aliasTarget(owner: Res): Res | null {
    let ty: Ty | null = null;
    if ('def' in owner) {
      const d = owner.def;
      if (d.kind !== 'type' || !d.item.ty || d.parent?.kind === 'trait' || d.impl) return null;
      ty = this.lowering.lower(d.item.ty, d.scope, { self: null, generics: d.item.generics, locals: [] }, null);
    } else if ('dep' in owner) {
      const n = owner.dep.node;
      const a = n.typeInfo?.a;
      if (n.kind !== 'type' || !a || a === '_') return null;
      const parent = n.parent ? owner.dep.crate.node(n.parent) : null;
      if (parent && parent.kind !== 'module') return null;
      ty = this.lowering.lowerCanonical(a);
    }
    return ty && ty.k === 'adt' && resKey(ty.res) !== resKey(owner) ? ty.res : null;
  }

  /** Impls of this crate whose self type is `owner`. */
  implsOf(owner: Res): ImplInfo[] {
    return this.byType.get(resKey(owner)) ?? [];
  }

  /** Impls of this crate for a type (its item, or a primitive, slice, `str`). */
  implsOfTy(t: Ty): ImplInfo[] {
    const k = tyKey(t);
    return k === null ? [] : this.byType.get(k) ?? [];
  }

  /** The impls the loaded dependencies have for their item (in its own crate or any other loaded one). */
  depImpls(item: DepItem): DepImpl[] {
    return this.depImplsByKey(item.node.qpath);
  }

  /** The impls the loaded dependencies have for a type (a dependency's item, a std type, a primitive, a slice). */
  depImplsOfTy(t: Ty): DepImpl[] {
    const k = implKeyOfTy(t);
    return k === null ? [] : this.depImplsByKey(k);
  }

  private readonly depImplMemo = new Map<string, DepImpl[]>();

  private depImplsByKey(key: string): DepImpl[] {
    const memo = this.depImplMemo.get(key);
    if (memo) return memo;
    const out: DepImpl[] = [];
    for (const item of this.world.implsFor(key)) {
      const node = item.node;
      const traitText = node.typeInfo?.trait ?? null;
      let trait: Res | null = null;
      let traitArgs: string | null = null;
      if (traitText) {
        const t = this.lowering.lowerCanonical(traitText);
        if (t.k === 'adt') {
          trait = t.res;
          traitArgs = t.args.length > 0 ? traitText : null;
        }
      }
      out.push({ node, item, trait, traitArgs });
    }
    this.depImplMemo.set(key, out);
    return out;
  }

  private depAssoc(item: DepItem, name: string, ns: Namespace, traits: boolean): Res | null {
    for (const impl of this.depImpls(item)) {
      if ((impl.trait !== null) !== traits) continue;
      const members = impl.item.crate.childrenOf(impl.node);
      const hit = members.find((c) => c.name === name && depNs(c) === ns) ?? members.find((c) => c.name === name);
      if (hit) return { dep: { crate: impl.item.crate, node: hit } };
    }
    if (item.node.kind === 'trait') {
      const hit = item.crate.childrenOf(item.node).find((c) => c.name === name);
      if (hit) return { dep: { crate: item.crate, node: hit } };
    }
    return null;
  }
}

/** A type's key among the dependencies' impls (deps.ts implKey): canonical path, `prim:x`, `slice`. */
export function implKeyOfTy(t: Ty): string | null {
  const s = stripRefs(t);
  switch (s.k) {
    case 'adt': return resPath(s.res);
    case 'prim': return `prim:${s.name}`;
    case 'slice': return 'slice';
    case 'tuple': return s.of.length === 0 ? 'prim:()' : null;
    default: return null;
  }
}

function stripRefs(t: Ty): Ty {
  let cur = t;
  while (cur.k === 'ref' || cur.k === 'ptr') cur = cur.of;
  return cur;
}

function pick(defs: Def[] | undefined, ns: Namespace): Def | null {
  if (!defs || defs.length === 0) return null;
  return defs.find((d) => d.ns === ns) ?? defs[0]!;
}

function hasUnknown(t: Ty): boolean {
  switch (t.k) {
    case 'unknown': return true;
    case 'adt': return t.args.some(hasUnknown) || (t.assoc ?? []).some((a) => hasUnknown(a.ty));
    case 'ref': case 'ptr': case 'slice': return hasUnknown(t.of);
    case 'tuple': return t.of.some(hasUnknown);
    case 'dyn': return t.bounds.some(hasUnknown);
    // a fn pointer's path text stays as written (unsafe, extern "C", lifetimes), as before fn types were lowered
    case 'fn': return true;
    default: return false;
  }
}

function stripArgs(t: TypeRef): TypeRef {
  switch (t.k) {
    case 'path': return { k: 'path', path: t.path, args: [] };
    case 'ref': return { k: 'ref', mut: t.mut, of: stripArgs(t.of) };
    case 'ptr': return { k: 'ptr', of: stripArgs(t.of) };
    default: return t;
  }
}
