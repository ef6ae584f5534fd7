// Types with their paths resolved (`Ty`), from written types (`TypeRef`, in
// a scope) or from the canonical type texts dependencies store (summary.ts),
// and their canonical text: crate-qualified definition paths, std through
// `std::`, generic parameters by name, lifetimes dropped.
//
// Invariants: lowering never throws; what it cannot resolve is `unknown`
// with a reason (or an `adt` of a text path, which keeps the spelling).
// Type aliases are expanded (with their parameters substituted), so an impl
// for an alias is an impl for the aliased type, as in rustc.
import type { TypeRef } from '../types.ts';
import type { Scope } from './defs.ts';
import type { DepWorld } from './deps.ts';
import type { Names, PathCtx, Res } from './names.ts';
import { stdPath } from './std.ts';
import { parseType } from './summary.ts';

export type Ty =
  | { k: 'adt'; res: Res; args: Ty[]; assoc?: { name: string; ty: Ty }[] }
  | { k: 'param'; name: string }
  | { k: 'ref'; mut: boolean; of: Ty }
  | { k: 'ptr'; of: Ty }
  | { k: 'slice'; of: Ty }
  | { k: 'tuple'; of: Ty[] }
  | { k: 'dyn'; bounds: Ty[] }
  | { k: 'prim'; name: string }
  /** A fn pointer (`fn(A) -> R`): what calling the value gives. */
  | { k: 'fn'; params: Ty[]; ret: Ty }
  | { k: 'unknown'; why: string };

export const UNKNOWN = (why: string): Ty => ({ k: 'unknown', why });

/** Alias expansion stops this deep (an alias of itself through a cycle). */
const MAX_ALIAS_DEPTH = 8;

export class TypeLowering {
  /** A type-position macro call's text -> the type it expands to (macros/ sets it), or null. */
  macroType: ((text: string) => TypeRef | null) | null = null;
  /** `<T as Trait>::Name` for a concrete T: the associated type of T's impl of Trait (infer.ts sets it, once impls are known), or null. */
  projection: ((self: Ty, trait: Ty & { k: 'adt' }, name: string) => Ty | null) | null = null;

  constructor(private readonly names: Names, readonly world: DepWorld) {}

  /** A written type, resolved in `scope` (with `Self` = `self` and `ctx.generics` as parameters). */
  lower(t: TypeRef, scope: Scope, ctx: PathCtx, self: Ty | null, depth = 0): Ty {
    switch (t.k) {
      case 'path': {
        if (t.path === 'Self' && self) return self;
        const segs = this.names.segs(t.path);
        if (segs.length === 1 && ctx.generics.includes(t.path)) return { k: 'param', name: t.path };
        const args = t.args.map((a) => this.lower(a, scope, ctx, self, depth));
        const res = segs[0] === 'Self' && self && self.k === 'adt'
          ? this.names.resolve(segs, scope, 'type', { ...ctx, self: self.res })
          : this.names.resolve(segs, scope, 'type', ctx);
        if (!res) return { k: 'adt', res: { ext: absolutePath(t.path, scope), krate: null, depName: null }, args };
        const ty: Ty = { k: 'adt', res, args };
        if (t.assoc) ty.assoc = t.assoc.map((a) => ({ name: a.name, ty: this.lower(a.ty, scope, ctx, self, depth) }));
        return this.expandAlias(ty, depth);
      }
      case 'ref': return { k: 'ref', mut: t.mut, of: this.lower(t.of, scope, ctx, self, depth) };
      case 'ptr': return { k: 'ptr', of: this.lower(t.of, scope, ctx, self, depth) };
      case 'slice': return { k: 'slice', of: this.lower(t.of, scope, ctx, self, depth) };
      case 'tuple': return { k: 'tuple', of: t.of.map((x) => this.lower(x, scope, ctx, self, depth)) };
      case 'dyn': return { k: 'dyn', bounds: t.bounds.map((b) => this.lower(b, scope, ctx, self, depth)) };
      case 'prim': return { k: 'prim', name: t.name };
      case 'fn': return {
        k: 'fn', params: t.params.map((x) => this.lower(x, scope, ctx, self, depth)),
        ret: t.ret ? this.lower(t.ret, scope, ctx, self, depth) : { k: 'tuple', of: [] },
      };
      case 'qself': {
        if (t.trait && this.projection && depth < MAX_ALIAS_DEPTH) {
          const on = this.lower(t.self, scope, ctx, self, depth + 1);
          const trait = this.lower(t.trait, scope, ctx, self, depth + 1);
          const hit = on.k !== 'unknown' && trait.k === 'adt' ? this.projection(on, trait, t.name) : null;
          if (hit) return hit;
        }
        return { k: 'unknown', why: `associated type ${t.name}` };
      }
      case 'other': {
        const expanded = depth < MAX_ALIAS_DEPTH && t.text.includes('!') ? this.macroType?.(t.text) ?? null : null;
        return expanded ? this.lower(expanded, scope, ctx, self, depth + 1) : { k: 'unknown', why: `type ${t.text}` };
      }
    }
  }

  /**
   * `lower` of a type an item declares (its return type, a field's, a
   * bound), in the item's own scope with its own generics and no body
   * locals, `Self` = `self`: memoised by (t, self) when `self` is none or an
   * adt — then the context's `Self` (any item of self's head, or none) does
   * not change the answer: a `Self::…` path lowers through `self` itself.
   * Callers pass the same scope and generics for a given `t` (its item's).
   */
  lowerDecl(t: TypeRef, scope: Scope, generics: readonly string[], self: Ty | null): Ty {
    if (self !== null && self.k !== 'adt') return this.lower(t, scope, { self: headOf(self)?.res ?? null, generics, locals: [] }, self);
    let bySelf = this.declared.get(t);
    if (bySelf === undefined) this.declared.set(t, bySelf = new Map());
    let ty = bySelf.get(self);
    if (ty === undefined) {
      ty = this.lower(t, scope, { self: self ? self.res : null, generics, locals: [] }, self);
      bySelf.set(self, ty);
    }
    return ty;
  }

  private readonly declared = new Map<TypeRef, Map<Ty | null, Ty>>();

  /** A canonical type text a dependency stored, with its paths looked up in the loaded crates. */
  lowerCanonical(text: string, generics: Map<string, Ty> | null = null): Ty {
    if (generics !== null) return this.fromCanonical(parseType(text), generics);
    // without generics a pure function of the text and the loaded crates (a Ty is never changed once made)
    let ty = this.canonical.get(text);
    if (ty === undefined) {
      ty = this.fromCanonical(parseType(text), null);
      this.canonical.set(text, ty);
    }
    return ty;
  }

  /** lowerCanonical's answers without generics, by text (one crate's resolution: bounded by its dependencies' texts). */
  private readonly canonical = new Map<string, Ty>();

  private fromCanonical(t: TypeRef, generics: Map<string, Ty> | null): Ty {
    switch (t.k) {
      case 'path': {
        const segs = t.path.split('::');
        if (segs.length === 1) {
          const g = generics?.get(t.path);
          return g ?? { k: 'param', name: t.path };
        }
        const args = t.args.map((a) => this.fromCanonical(a, generics));
        const res = this.canonicalRes(t.path);
        const ty: Ty = { k: 'adt', res, args };
        if (t.assoc) ty.assoc = t.assoc.map((a) => ({ name: a.name, ty: this.fromCanonical(a.ty, generics) }));
        return ty;
      }
      case 'ref': return { k: 'ref', mut: t.mut, of: this.fromCanonical(t.of, generics) };
      case 'ptr': return { k: 'ptr', of: this.fromCanonical(t.of, generics) };
      case 'slice': return { k: 'slice', of: this.fromCanonical(t.of, generics) };
      case 'tuple': return { k: 'tuple', of: t.of.map((x) => this.fromCanonical(x, generics)) };
      case 'dyn': return { k: 'dyn', bounds: t.bounds.map((b) => this.fromCanonical(b, generics)) };
      case 'prim': return { k: 'prim', name: t.name };
      case 'fn': return {
        k: 'fn', params: t.params.map((x) => this.fromCanonical(x, generics)),
        ret: t.ret ? this.fromCanonical(t.ret, generics) : { k: 'tuple', of: [] },
      };
      default: return { k: 'unknown', why: 'stored type' };
    }
  }

  /** A canonical path: an item of a loaded crate, else the text (std, or a crate not loaded). */
  canonicalRes(path: string): Res {
    const ident = path.split('::')[0]!;
    const ix = this.world.crate(ident);
    const hit = ix?.atQpath(path, 'type')[0] ?? ix?.at(path, 'type')[0];
    if (ix && hit) return { dep: { crate: ix, node: hit } };
    return { ext: stdPath(path), krate: ix ? ix.crate.krate : null, depName: ix ? ix.ident : null };
  }

  /**
   * `type A<T, E = X> = B<T, E>`: the aliased type with the arguments
   * substituted, a missing one by its default (anyhow's `Result<T>` is
   * `Result<T, anyhow::Error>`). A dependency's alias names its parameters
   * in type_info `g` (defaults `gd`); one stored without them, in the order
   * they first occur in the aliased type.
   */
  private expandAlias(ty: Ty & { k: 'adt' }, depth: number): Ty {
    if (depth >= MAX_ALIAS_DEPTH) return ty;
    const r = ty.res;
    if ('def' in r && r.def.kind === 'type' && r.def.item.ty) {
      const d = r.def;
      const ctx: PathCtx = { self: null, generics: d.item.generics, locals: [] };
      const subst = new Map<string, Ty>();
      d.item.generics.forEach((g, i) => {
        const given = ty.args[i];
        const dflt = given ? undefined : d.item.genericDefaults?.find((x) => x.name === g);
        // a default may name the parameters before it (`type M<K, V = K>`)
        const t = given ?? (dflt ? substitute(this.lower(dflt.ty, d.scope, ctx, null, depth + 1), subst) : undefined);
        if (t) subst.set(g, t);
      });
      return substitute(this.lower(d.item.ty!, d.scope, ctx, null, depth + 1), subst);
    }
    if ('dep' in r && r.dep.node.kind === 'type' && r.dep.node.typeInfo?.a) {
      const info = r.dep.node.typeInfo;
      const a = info.a!;
      const params = info.g ?? paramsOf(parseType(a));
      if (params.length === 0) return this.lowerCanonical(a, null);
      const subst = new Map<string, Ty>();
      params.forEach((g, i) => {
        const dflt = info.gd?.[g];
        const t = ty.args[i] ?? (dflt !== undefined ? this.lowerCanonical(dflt, subst) : undefined);
        if (t) subst.set(g, t);
      });
      return this.lowerCanonical(a, subst);
    }
    return ty;
  }
}

/** The type parameters a canonical type text names (its one-segment paths), in the order they first occur. */
function paramsOf(t: TypeRef, out: string[] = []): string[] {
  switch (t.k) {
    case 'path':
      if (!t.path.includes('::') && !out.includes(t.path)) out.push(t.path);
      for (const a of t.args) paramsOf(a, out);
      for (const a of t.assoc ?? []) paramsOf(a.ty, out);
      break;
    case 'ref': case 'ptr': case 'slice': paramsOf(t.of, out); break;
    case 'tuple': for (const x of t.of) paramsOf(x, out); break;
    case 'dyn': for (const x of t.bounds) paramsOf(x, out); break;
    case 'fn': for (const x of t.params) paramsOf(x, out); if (t.ret) paramsOf(t.ret, out); break;
    default:
  }
  return out;
}

/** A written path with `crate`/`self`/`super` heads made absolute (for text that did not resolve). */
export function absolutePath(p: string, scope: Scope): string {
  const segs = p.split('::');
  let base: Scope | null = scope;
  let i = 0;
  if (segs[0] === 'crate' || segs[0] === '$crate') { base = scope.root; i = 1; } else if (segs[0] === 'self') i = 1;
  else if (segs[0] === 'super') {
    while (segs[i] === 'super' && base) { base = base.parent; i++; }
  } else return p;
  return [base ? base.def.qpath : scope.root.def.qpath, ...segs.slice(i)].join('::');
}

/** Replace type parameters by the types `subst` gives them. */
export function substitute(t: Ty, subst: ReadonlyMap<string, Ty>): Ty {
  if (subst.size === 0) return t;
  switch (t.k) {
    case 'param': return subst.get(t.name) ?? t;
    case 'adt': {
      const out: Ty = { k: 'adt', res: t.res, args: t.args.map((a) => substitute(a, subst)) };
      if (t.assoc) out.assoc = t.assoc.map((a) => ({ name: a.name, ty: substitute(a.ty, subst) }));
      return out;
    }
    case 'ref': return { k: 'ref', mut: t.mut, of: substitute(t.of, subst) };
    case 'ptr': return { k: 'ptr', of: substitute(t.of, subst) };
    case 'slice': return { k: 'slice', of: substitute(t.of, subst) };
    case 'tuple': return { k: 'tuple', of: t.of.map((x) => substitute(x, subst)) };
    case 'dyn': return { k: 'dyn', bounds: t.bounds.map((b) => substitute(b, subst)) };
    case 'fn': return { k: 'fn', params: t.params.map((x) => substitute(x, subst)), ret: substitute(t.ret, subst) };
    default: return t;
  }
}

/** The canonical path of a resolved item. */
export function resPath(r: Res): string {
  if ('def' in r) return r.def.qpath;
  if ('dep' in r) return r.dep.node.qpath;
  return stdPath(r.ext);
}

/** A type's canonical text (`withArgs` false: a path type's own arguments left out). */
export function renderTy(t: Ty, withArgs = true): string {
  switch (t.k) {
    case 'adt': {
      const args = withArgs ? t.args.map((a) => renderTy(a)) : [];
      if (withArgs) for (const a of t.assoc ?? []) args.push(`${a.name} = ${renderTy(a.ty)}`);
      const p = resPath(t.res);
      return args.length > 0 ? `${p}<${args.join(', ')}>` : p;
    }
    case 'param': return t.name;
    case 'ref': return `&${t.mut ? 'mut ' : ''}${renderTy(t.of, withArgs)}`;
    case 'ptr': return `*${renderTy(t.of, withArgs)}`;
    case 'slice': return `[${renderTy(t.of)}]`;
    case 'tuple': return t.of.length === 1 ? `(${renderTy(t.of[0]!)},)` : `(${t.of.map((x) => renderTy(x)).join(', ')})`;
    case 'dyn': return `dyn ${t.bounds.map((b) => renderTy(b)).join(' + ')}`;
    case 'prim': return t.name;
    case 'fn': {
      const ret = t.ret.k === 'tuple' && t.ret.of.length === 0 ? '' : ` -> ${renderTy(t.ret)}`;
      return `fn(${t.params.map((x) => renderTy(x)).join(', ')})${ret}`;
    }
    case 'unknown': return '_';
  }
}

/** The item a type is about, for member lookup: the path type under references. */
export function headOf(t: Ty): (Ty & { k: 'adt' }) | null {
  let cur = t;
  while (cur.k === 'ref' || cur.k === 'ptr') cur = cur.of;
  return cur.k === 'adt' ? cur : null;
}

/** A def of this crate, or a dep item, as the key of member tables. */
export function resKey(r: Res): object | string {
  if ('def' in r) return r.def;
  if ('dep' in r) return r.dep.node;
  return `${r.krate ?? ''}|${stdPath(r.ext)}`;
}

/** The key of a type's member tables: its item for a path type, `prim:x`, `slice`, `str`; null for parameters and unknowns. */
export function tyKey(t: Ty): object | string | null {
  let cur = t;
  while (cur.k === 'ref' || cur.k === 'ptr') cur = cur.of;
  switch (cur.k) {
    case 'adt': return resKey(cur.res);
    case 'prim': return `prim:${cur.name}`;
    case 'slice': return 'slice';
    case 'tuple': return cur.of.length === 0 ? 'prim:()' : null;
    default: return null;
  }
}
