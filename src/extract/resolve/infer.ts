// Method calls resolved by a small type inference, the way rustc's method
// resolution works for the common cases: the receiver's type comes from
// `self` (the enclosing impl), parameters, `let x: T`, initialisers
// (constructor calls, struct literals, functions' declared return types —
// so chains resolve), `?` on Result/Option, fields (`self.field.m()`),
// `if let Some(x)` and `for x in`. The method is then looked up along the
// autoderef steps of that type (references, Box/Rc/Arc and std guards,
// `Deref` impls): inherent methods before trait methods (impl members, then
// the trait's default method); a receiver that is a type parameter or a
// trait object finds the method in its bounds' traits (`dispatch` dynamic).
// Into loaded dependencies too, through their stored types and impls.
//
// Invariants: never guesses — an unknown receiver type or a method found
// nowhere leaves the call unresolved with the reason. Pure over the phases'
// data; every body's inference state (binding types) lives in a BodyEnv.
import type { Binding, Expr, Ref, TypeRef } from '../types.ts';
import type { Def } from './defs.ts';
import { depNs, type DepItem } from './deps.ts';
import type { DepImpl, ImplInfo, Impls } from './impls.ts';
import type { Names, PathCtx, Res } from './names.ts';
import { DEREF_TO_ARG, stdKey } from './std.ts';
import { ITER, keyOf as keyOfTy, stdClosureParam, stdItem, stdMethod, stdTy, type StdCallArgs } from './stdlib.ts';
import type { DepNode } from './summary.ts';
import { headOf, renderTy, resKey, resPath, substitute, tyKey, UNKNOWN, type Ty, type TypeLowering } from './types.ts';

/** A dependency's blanket impl and the trait it implements (a loaded crate's). */
interface BlanketTrait {
  impl: DepItem;
  trait: Extract<Res, { dep: unknown }>['dep'];
}

export interface Resolved {
  res: Res | null;
  /** Why `res` is null. */
  reason: string | null;
  dispatch: 'static' | 'dynamic' | null;
}

/** What a body's paths and names mean: its scope, Self, generics with bounds, bindings. */
export interface BodyEnv {
  def: Def;
  ctx: PathCtx;
  /** The type `self`/`Self` has (the impl's self type; a trait's `Self` parameter). */
  selfTy: Ty | null;
  /** Type parameters -> trait bounds (lowered). */
  bounds: Map<string, Ty[]>;
  bindings: readonly Binding[];
  /** Memo of binding types (by binding). */
  memo: Map<Binding, Ty>;
}

/** Methods of derivable std traits, called as `Type::m(…)` on a type that derives the trait. */
const DERIVABLE: ReadonlyMap<string, string> = new Map([
  ['default', 'std::default::Default'], ['clone', 'std::clone::Clone'], ['eq', 'std::cmp::PartialEq'], ['ne', 'std::cmp::PartialEq'],
  ['cmp', 'std::cmp::Ord'], ['partial_cmp', 'std::cmp::PartialOrd'], ['hash', 'std::hash::Hash'], ['fmt', 'std::fmt::Debug'],
]);

/** std's iterator traits: a type bounded by one is an iterator. */
const ITERATOR_TRAITS: ReadonlySet<string> = new Set([
  'std::iter::Iterator', 'std::iter::DoubleEndedIterator', 'std::iter::ExactSizeIterator', 'std::iter::FusedIterator',
]);

/** Bounds every type of interest meets (or that say nothing about methods). */
const MARKER_TRAITS: ReadonlySet<string> = new Set([
  'std::marker::Sized', 'std::marker::Send', 'std::marker::Sync', 'std::marker::Unpin', 'std::marker::Copy', 'std::clone::Clone',
]);

/** Traits whose type parameter defaults to `Self` (`impl PartialEq for X` compares with X). */
const RHS_IS_SELF: ReadonlySet<string> = new Set([
  'PartialEq', 'PartialOrd', 'Add', 'Sub', 'Mul', 'Div', 'Rem', 'BitAnd', 'BitOr', 'BitXor', 'Shl', 'Shr',
  'AddAssign', 'SubAssign', 'MulAssign', 'DivAssign', 'RemAssign', 'BitAndAssign', 'BitOrAssign', 'BitXorAssign', 'ShlAssign', 'ShrAssign',
]);

/**
 * std traits whose methods take the trait's type parameter as their first
 * argument (`PartialEq<Rhs>::eq(&self, &Rhs)`, `From<T>::from(T)`); others
 * do not (`Extend<A>::extend` takes an iterator of A), so an argument's type
 * tells nothing about which of their impls is called.
 */
const ARG_IS_PARAM: ReadonlySet<string> = new Set([...RHS_IS_SELF, 'From', 'TryFrom']);

const INTEGERS: ReadonlySet<string> = new Set(['u8', 'u16', 'u32', 'u64', 'u128', 'usize', 'i8', 'i16', 'i32', 'i64', 'i128', 'isize']);

const FN_TRAITS: ReadonlySet<string> = new Set(['Fn', 'FnMut', 'FnOnce']);

/** Inference gives up past this depth (a binding defined through itself). */
const MAX_DEPTH = 64;
/** std's tuple structs with a public field 0 of their type parameter (`Wrapping(pub T)`). */
const STD_WRAPPERS = /^(?:std|core)::(?:num::(?:Wrapping|Saturating)|cmp::Reverse|panic::AssertUnwindSafe)$/;

/** Autoderef steps tried. */
const MAX_DEREF = 6;

type Method = { readonly res: Res; readonly ret: Ty; readonly dispatch: 'static' | 'dynamic' };

/** A method found; its result type is made when first read (a call's edge needs only the method, a chain its type). */
function method(res: Res, dispatch: 'static' | 'dynamic', ret: () => Ty): Method {
  let t: Ty | undefined;
  return { res, dispatch, get ret(): Ty { return t ??= ret(); } };
}

/** A method `exact` found fitting, with the trait it comes from (null: inherent) and whether through a blanket impl. */
interface Found {
  res: Res;
  trait: Res | null;
  blanket: boolean;
}

/** A member of an impl of this crate for the probed type, and the references around its `self` parameter's type. */
interface OwnCandidate {
  info: ImplInfo;
  res: { def: Def };
  have: readonly ('ref' | 'mut')[];
}

/** A member of a loaded dependency's impl for the probed type (or its trait's default method). */
interface DepCandidate {
  impl: DepImpl;
  res: Res;
  have: readonly ('ref' | 'mut')[];
}

/** A blanket impl's method, the references its `self` type puts around the impl's parameter, and that parameter. */
interface BlanketCandidate {
  info: ImplInfo;
  res: { def: Def };
  have: readonly ('ref' | 'mut')[];
  param: string;
}

interface Candidates {
  own: OwnCandidate[];
  dep: DepCandidate[];
}

/** An associated type asked of impls of std traits: the traits (by last path segment) and the item's name. */
interface AssocQuery {
  traits: readonly string[];
  name: string;
}

const ITERATOR_ITEM: AssocQuery = { traits: ['Iterator'], name: 'Item' };
const ITERATED_ITEM: AssocQuery = { traits: ['Iterator', 'IntoIterator'], name: 'Item' };
const INDEX_OUTPUT: AssocQuery = { traits: ['Index'], name: 'Output' };
const DEREF_TARGET: AssocQuery = { traits: ['Deref'], name: 'Target' };

/** The impl whose associated type `assocOfTraitImpl` lowers: this crate's (and the item), or a dependency's (and the stored text). */
type AssocImpl = { own: ImplInfo; a: Def } | { dep: DepImpl; text: string };

/** `candidates`' key for types without member tables (parameters, unknowns, tuples). */
const NO_KEY = '\u0000none';

export class Infer {
  private blanketCache: BlanketTrait[] | null = null;

  constructor(private readonly names: Names, private readonly lowering: TypeLowering, private readonly impls: Impls) {
    lowering.projection = (self, trait, name) => this.projection(self, trait, name);
  }

  /**
   * `<T as Trait>::Name`: the associated type `Name` of T's impl of Trait
   * (this crate's or a dependency's), an impl for exactly T's references
   * first (`impl IntoIterator for Map` before `for &Map`); null when none.
   */
  private projection(self: Ty, trait: Ty & { k: 'adt' }, name: string): Ty | null {
    // (an associated type defined through another projection: a few levels, never a cycle)
    if (this.projecting >= 4) return null;
    this.projecting++;
    try {
      return this.projectionOnce(self, trait, name);
    } finally {
      this.projecting--;
    }
  }

  private projecting = 0;

  private projectionOnce(self: Ty, trait: Ty & { k: 'adt' }, name: string): Ty | null {
    // `<P as Trait>::X` with P a type parameter or a projection (`<I::Item as IntoFallibleIterator>::IntoFallibleIter`):
    // no impl to read, the trait's declaration of X — a parameter bounded as it declares
    if (self.k === 'param' || (self.k === 'adt' && 'ext' in self.res && self.res.krate === null && self.args.length === 0 && /^[A-Za-z_]\w*::[A-Za-z_]\w*$/.test(self.res.ext))) {
      const t = 'def' in trait.res && trait.res.def.kind === 'trait' ? this.projections({ k: 'adt', res: { ext: `Self::${name}`, krate: null, depName: null }, args: [] }, trait.res.def)
        : 'dep' in trait.res ? this.depProjections({ k: 'adt', res: { ext: `Self::${name}`, krate: null, depName: null }, args: [] }, trait.res.dep) : null;
      return t?.k === 'param' ? t : null;
    }
    const want = refChain(self).join(' ');
    const mine = this.impls.implsOfTy(self).filter((i) => i.trait && sameItem(i.trait.res, trait.res))
      .sort((a, b) => Number(refChain(b.self).join(' ') === want) - Number(refChain(a.self).join(' ') === want));
    for (const info of mine) {
      const a = info.def.children.find((c) => c.name === name && c.item.ty);
      if (!a) continue;
      const head = headOf(self);
      const ctx: PathCtx = { self: head ? head.res : null, generics: info.def.item.generics, locals: [] };
      return substitute(this.lowering.lower(a.item.ty!, a.scope, ctx, info.self), matchArgs(info.self, self));
    }
    for (const impl of this.impls.depImplsOfTy(self)) {
      if (!impl.trait || !sameItem(impl.trait, trait.res)) continue;
      const a = impl.item.crate.childrenOf(impl.node).find((c) => c.name === name);
      if (a?.typeInfo?.a) return this.depAssoc(impl, a.typeInfo.a, self);
    }
    return null;
  }

  /**
   * A dependency impl's associated type (canonical text) for the concrete
   * type `t`: the impl's parameters matched against `t`'s arguments
   * (crossbeam's `impl<T> Deref for CachePadded<T> { type Target = T; }`).
   */
  private depAssoc(impl: DepImpl, text: string, t: Ty): Ty {
    const selfText = impl.node.typeInfo?.self;
    const subst = selfText ? matchArgs(this.lowering.lowerCanonical(selfText), t) : null;
    return subst && subst.size > 0 ? this.lowering.lowerCanonical(text, subst) : this.lowering.lowerCanonical(text);
  }

  /** The environment of a body item (fn, method, trait item, const). */
  env(def: Def): BodyEnv {
    const impl = def.impl ?? (def.kind === 'impl' ? def : null);
    const traitOwner = def.parent?.kind === 'trait' ? def.parent : def.kind === 'trait' ? def : null;
    let selfTy: Ty | null = null;
    let selfRes: Res | null = null;
    if (impl) {
      const info = this.impls.byDef.get(impl);
      selfTy = info ? info.self : null;
      selfRes = selfTy ? headOf(selfTy)?.res ?? null : null;
    } else if (traitOwner) {
      selfTy = { k: 'param', name: 'Self' };
      selfRes = { def: traitOwner };
    }
    const ctx: PathCtx = { self: selfRes, generics: def.item.generics, locals: def.item.uses };
    const bounds = new Map<string, Ty[]>();
    for (const g of def.item.bounds ?? []) {
      const list = bounds.get(g.name) ?? [];
      for (const b of g.bounds) list.push(this.lowering.lower(b, def.scope, ctx, selfTy));
      bounds.set(g.name, list);
    }
    if (traitOwner) {
      const list = bounds.get('Self') ?? [];
      list.push({ k: 'adt', res: { def: traitOwner }, args: [] });
      bounds.set('Self', list);
    }
    return { def, ctx, selfTy, bounds, bindings: def.item.bindings ?? [], memo: new Map() };
  }

  // --- calls ---------------------------------------------------------------

  /** A method call `recv.m(…)`. */
  methodCall(ref: Ref, env: BodyEnv): Resolved {
    const name = ref.target.slice(1);
    if (!ref.recv) return { res: null, reason: 'no receiver', dispatch: null };
    const recv = this.typeOf(ref.recv, ref.at ?? Infinity, env, 0);
    if (recv.k === 'unknown') return { res: null, reason: `receiver type unknown: ${recv.why}`, dispatch: null };
    const arg = ref.a0 ? () => this.typeOf(ref.a0!, ref.at ?? Infinity, env, 0) : null;
    const m = this.lookupMethod(recv, name, env, arg);
    if (m) return { res: m.res, reason: null, dispatch: m.dispatch };
    const s = stripRefs(recv);
    // `P::X` with P a type parameter whose bound's trait declares `type X: Bound`: Bound's method (rand's
    // `self.0.sample(rng)` on a field of type `X::Sampler`, `X: SampleUniform`)
    const proj = s.k === 'adt' && 'ext' in s.res && s.res.krate === null ? /^([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)$/.exec(s.res.ext) : null;
    if (proj && env.bounds.has(proj[1]!)) {
      const p = this.projectionOf(env.bounds.get(proj[1]!)!, proj[2]!);
      const pm = p ? this.inBounds(this.assocBounds.get(p.name) ?? [], name, env, p) : null;
      if (pm) return { res: pm.res, reason: null, dispatch: 'dynamic' };
    }
    const std = this.stdOwner(recv) ?? (this.iterLike(recv, env) ? 'std::iter::Iterator' : null);
    if (std) return { res: { ext: `${std}::${name}`, krate: null, depName: null }, reason: null, dispatch: std === 'std::iter::Iterator' ? 'dynamic' : 'static' };
    // a type of a crate not in the lake: its impls are unknown, so a trait in scope that merely declares `name`
    // is no answer (ripgrep's `regex::bytes::Regex::find_at` is not grep_matcher's `Matcher::find_at`)
    if (s.k === 'adt' && 'ext' in s.res && s.res.krate !== null) {
      const declares = this.scopeTraitMethod(name, env, null);
      const also = declares ? `; ${resPath(declares).split('::').slice(0, -1).join('::')} in scope declares ${name}, no impl of it for the type is known` : '';
      return { res: null, reason: `${describe(s)} is of ${s.res.krate}, which is not in the lake: its methods are unknown${also}`, dispatch: null };
    }
    return { res: null, reason: `no method ${name} found for ${describe(recv)}`, dispatch: null };
  }

  /**
   * A receiver whose methods (not found in the crate or its loaded
   * dependencies) are the standard library's: the std path they live under.
   */
  private stdOwner(recv: Ty): string | null {
    const s = stripRefs(recv);
    if (s.k === 'prim') return `std::primitive::${s.name}`;
    if (s.k === 'slice') return 'std::slice';
    if (s.k === 'tuple') return s.of.length === 0 ? 'std::primitive::unit' : 'std::primitive::tuple';
    if (s.k === 'adt' && 'ext' in s.res && s.res.krate === null && s.res.ext.startsWith('std::')) return s.res.ext;
    return null;
  }

  /** A path call `f(…)`, `T::f(…)`, `Self::f(…)`, `<T as Tr>::f(…)`. */
  pathCall(ref: Ref, env: BodyEnv): Resolved {
    if (ref.qself) return this.qualifiedCall(ref, env);
    const segs = this.names.segs(ref.target);
    // `T::f()` with T a type parameter: the method of one of T's bounds
    if (segs.length === 2 && env.bounds.has(segs[0]!)) {
      const m = this.inBounds(env.bounds.get(segs[0]!)!, segs[1]!, env, { k: 'param', name: segs[0]! });
      if (m) return { res: m.res, reason: null, dispatch: 'dynamic' };
      return { res: null, reason: `no item ${segs[1]} in the bounds of ${segs[0]}`, dispatch: null };
    }
    // `T::X::f()` with T a type parameter and X an associated type of one of its bounds' traits: X's bounds
    if (segs.length === 3 && env.bounds.has(segs[0]!)) {
      const proj = this.projectionOf(env.bounds.get(segs[0]!)!, segs[1]!);
      const m = proj ? this.inBounds(this.assocBounds.get(proj.name) ?? [], segs[2]!, env, proj) : null;
      if (m) return { res: m.res, reason: null, dispatch: 'dynamic' };
    }
    if (segs[0] === 'Self' && segs.length === 2 && env.selfTy?.k === 'param') {
      const m = this.inBounds(env.bounds.get('Self') ?? [], segs[1]!, env, env.selfTy);
      if (m) return { res: m.res, reason: null, dispatch: 'dynamic' };
    }
    // `f(x)` with f a local (a fn pointer, a closure): no item is called, whatever the module holds under that name
    if (segs.length === 1 && ref.at !== undefined && this.localBefore(segs[0]!, ref.at, env)) {
      return { res: null, reason: 'a local value called (fn pointer or closure)', dispatch: null };
    }
    const res = this.names.resolve(segs, env.def.scope, 'value', env.ctx);
    if (res && 'ext' in res && segs.length >= 2 && ref.a0) {
      // `fmt::Display::fmt(&self.0, f)`: a std trait's method on the first argument's type — its impl when one is the crate's (or a dependency's)
      const via = this.traitCallOnArg(segs, ref, env);
      if (via) return { res: via, reason: null, dispatch: 'static' };
    }
    if (res && 'ext' in res && res.krate !== null && segs.length >= 2) {
      // `Rng::from_other(..)` on a dependency's type whose impls do not write it (a trait's provided method):
      // the one trait in scope that declares it and that the type implements (a type of a crate not in the
      // lake keeps its path: whether it implements the trait is not known)
      const owner = this.names.resolve(segs.slice(0, -1), env.def.scope, 'type', env.ctx);
      const t = owner && 'dep' in owner ? this.scopeTraitMethod(segs[segs.length - 1]!, env, { k: 'adt', res: owner, args: [] }) : null;
      if (t) return { res: t, reason: null, dispatch: 'static' };
    }
    if (res) {
      const picked = this.byArgument(res, ref, env);
      if (!picked) return { res: null, reason: `several impls of ${ref.target} and the argument's type does not pick one`, dispatch: null };
      return { res: picked, reason: null, dispatch: 'static' };
    }
    const derived = this.derivedCall(segs, env);
    if (derived) return { res: derived.res, reason: null, dispatch: 'static' };
    return { res: null, reason: `${ref.target} not found`, dispatch: null };
  }

  /** `Trait::m(x, …)` with a std trait: the member of the impl of that trait for x's type (refs stripped), if the crate or a dependency has one. */
  private traitCallOnArg(segs: readonly string[], ref: Ref, env: BodyEnv): Res | null {
    const trait = this.names.resolve(segs.slice(0, -1), env.def.scope, 'type', env.ctx);
    if (!trait || !('ext' in trait)) return null;
    const self = stripRefs(this.typeOf(ref.a0!, ref.at ?? Infinity, env, 0));
    if (self.k !== 'adt' || 'ext' in self.res) return null;
    return this.traitMethodFor(self, { k: 'adt', res: trait, args: [] }, segs[segs.length - 1]!);
  }

  /**
   * `Ref::from(x)` where the type implements `From<A>` for several `A`: the
   * impl whose trait argument is the argument's type. When the argument's
   * type is not known (or matches none), the call is left unresolved: a guess
   * among the impls would too often be wrong.
   */
  private byArgument(res: Res, ref: Ref, env: BodyEnv): Res | null {
    if (!('def' in res) || !res.def.impl) return res;
    const info = this.impls.byDef.get(res.def.impl);
    const trait = info?.trait;
    if (!info || !trait || trait.args.length === 0) return res;
    const siblings = this.impls.implsOfTy(info.self).filter((i) => i.trait && sameItem(i.trait.res, trait.res) && i.members.has(res.def.name));
    if (siblings.length < 2) return res;
    let arg = ref.a0 ? this.typeOf(ref.a0, ref.at ?? Infinity, env, 0) : UNKNOWN('no argument');
    // `FromIterator<A>::from_iter(iter)`: the item the argument iterates
    if (arg.k !== 'unknown' && resPath(trait.res).split('::').pop() === 'FromIterator') arg = this.itemOf(arg);
    if (arg.k === 'unknown') return null;
    const want = renderTy(arg);
    let hit = siblings.find((i) => renderTy(i.trait!.args[0]!) === want);
    if (!hit) {
      // references are not tracked exactly (`&self[..]`): the one impl equal with references stripped
      const bare = siblings.filter((i) => renderTy(stripRefs(i.trait!.args[0]!)) === renderTy(stripRefs(arg)));
      if (bare.length === 1) hit = bare[0];
    }
    if (!hit && arg.k === 'prim' && INTEGERS.has(arg.name)) {
      const ints = siblings.filter((i) => { const a = i.trait!.args[0]; return a?.k === 'prim' && INTEGERS.has(a.name); });
      if (ints.length === 1) hit = ints[0];
    }
    const m = hit ? pickFn(hit.members.get(res.def.name)) : null;
    return m ? { def: m } : null;
  }

  /**
   * `Type::default()`, `Type::clone(x)`…: a method of a std trait the type
   * implements without a written impl (a derive) — the trait's method, and
   * the type for `default`/`clone`.
   */
  private derivedCall(segs: readonly string[], env: BodyEnv): { res: Res; ret: Ty } | null {
    if (segs.length < 2) return null;
    const trait = DERIVABLE.get(segs[segs.length - 1]!);
    if (!trait) return null;
    const owner = segs.length === 2 && segs[0] === 'Self' ? env.ctx.self : this.names.resolve(segs.slice(0, -1), env.def.scope, 'type', env.ctx);
    if (!owner || 'ext' in owner) return null;
    const kind = 'def' in owner ? owner.def.kind : owner.dep.node.kind;
    if (kind !== 'struct' && kind !== 'enum' && kind !== 'union') return null;
    const name = segs[segs.length - 1]!;
    const ret: Ty = name === 'default' || name === 'clone' ? { k: 'adt', res: owner, args: [] } : UNKNOWN(`${name} result`);
    return { res: { ext: `${trait}::${name}`, krate: null, depName: null }, ret };
  }

  private qualifiedCall(ref: Ref, env: BodyEnv): Resolved {
    const q = ref.qself!;
    const name = ref.target.slice(ref.target.lastIndexOf('::') + 2);
    const self = this.lowering.lower(q.self, env.def.scope, env.ctx, env.selfTy);
    if (!q.trait) {
      const m = self.k === 'unknown' ? null : this.lookupMethod(self, name, env);
      return m ? { res: m.res, reason: null, dispatch: m.dispatch } : { res: null, reason: `no item ${name} for ${describe(self)}`, dispatch: null };
    }
    const trait = this.lowering.lower(q.trait, env.def.scope, env.ctx, env.selfTy);
    if (trait.k !== 'adt') return { res: null, reason: `trait of ${ref.target} not found`, dispatch: null };
    if (self.k === 'param' || self.k === 'dyn') {
      const m = this.traitItem(trait, name, env);
      return m ? { res: m, reason: null, dispatch: 'dynamic' } : { res: null, reason: `no item ${name} in ${resPath(trait.res)}`, dispatch: null };
    }
    const viaImpl = this.traitMethodFor(self, trait, name);
    if (viaImpl) return { res: viaImpl, reason: null, dispatch: 'static' };
    const m = this.traitItem(trait, name, env);
    if (m) return { res: m, reason: null, dispatch: 'static' };
    return { res: null, reason: `no item ${name} in ${resPath(trait.res)}`, dispatch: null };
  }

  // --- types of expressions ------------------------------------------------

  typeOf(e: Expr, at: number, env: BodyEnv, depth: number): Ty {
    if (depth > MAX_DEPTH) return UNKNOWN('too deep');
    switch (e.k) {
      case 'path': return this.pathType(e.path, at, env, depth);
      case 'call': return this.callType(e, at, env, depth);
      case 'vcall': return this.calledValue(this.typeOf(e.f, at, env, depth + 1), env);
      case 'mcall': {
        const recv = this.typeOf(e.recv, at, env, depth + 1);
        if (recv.k === 'unknown') return recv;
        const m = this.lookupMethod(recv, e.name, env);
        if (m) return m.ret;
        return this.stdMethodType(recv, e, env, depth) ?? UNKNOWN(`method ${e.name} of ${describe(recv)}`);
      }
      case 'field': return this.fieldType(this.typeOf(e.recv, at, env, depth + 1), e.name);
      case 'try': return payload(this.typeOf(e.of, at, env, depth + 1));
      case 'deref': {
        // references are not tracked exactly (`self` is its type, not `&Self`): a `*` that has no
        // pointer to go through leaves the type as it is, like autoderef would
        const t = this.typeOf(e.of, at, env, depth + 1);
        if (t.k === 'ref' || t.k === 'ptr') return t.of;
        return this.derefOnce(t) ?? t;
      }
      case 'index': {
        const base = this.typeOf(e.of, at, env, depth + 1);
        if (!e.range) return this.elemOf(base);
        const s = stripRefs(base);
        if ((s.k === 'prim' && s.name === 'str') || (s.k === 'adt' && key(s) === 'String')) return { k: 'prim', name: 'str' };
        const elem = this.elemOf(base);
        return elem.k === 'unknown' ? elem : { k: 'slice', of: elem };
      }
      case 'tuple': return { k: 'tuple', of: e.of.map((x) => this.typeOf(x, at, env, depth + 1)) };
      case 'closure': return UNKNOWN('closure');
      case 'either': {
        let first: Ty | null = null;
        for (const [i, x] of e.of.entries()) {
          const t = this.typeOf(x, e.at?.[i] ?? at, env, depth + 1);
          if (t.k !== 'unknown') return t;
          first ??= t;
        }
        return first ?? UNKNOWN('no branch');
      }
      case 'struct': {
        const segs = this.names.segs(e.path);
        if (e.path === 'Self' && env.selfTy) return env.selfTy;
        const res = this.names.resolve(segs, env.def.scope, 'type', env.ctx);
        if (!res) return UNKNOWN(`struct ${e.path}`);
        return this.ownerType(res);
      }
      case 'lit': return e.prim === 'str' ? { k: 'ref', mut: false, of: { k: 'prim', name: 'str' } } : { k: 'prim', name: e.prim };
      case 'cast': return this.lowering.lower(e.ty, env.def.scope, env.ctx, env.selfTy);
      case 'macro': {
        const name = e.name.split('::').pop()!;
        if (name === 'vec') return stdAdt('std::vec::Vec', [UNKNOWN('vec! element')]);
        if (name === 'format') return stdAdt('std::string::String', []);
        return UNKNOWN(`macro ${e.name}!`);
      }
      case 'unknown': return UNKNOWN(e.what);
    }
  }

  private pathType(path: string, at: number, env: BodyEnv, depth: number): Ty {
    if (path === 'self') {
      if (!env.selfTy) return UNKNOWN('self outside an impl');
      const sp = env.def.item.selfParam;
      return sp === 'ref' || sp === 'mut' ? { k: 'ref', mut: sp === 'mut', of: env.selfTy } : env.selfTy;
    }
    if (!path.includes('::')) {
      const b = this.binding(path, at, env);
      if (b) return this.bindingType(b, env, depth);
    }
    const res = this.names.resolve(this.names.segs(path), env.def.scope, 'value', env.ctx);
    if (!res) return UNKNOWN(`${path} not found`);
    return this.valueType(res, env);
  }

  /** The binding of `name` visible at `at` that was bound last (the innermost, the latest shadowing). */
  private binding(name: string, at: number, env: BodyEnv): Binding | null {
    let hit: Binding | null = null;
    for (const b of env.bindings) {
      if (b.name !== name || b.at > at || (b.until !== undefined && at >= b.until)) continue;
      if (!hit || b.at >= hit.at) hit = b;
    }
    return hit;
  }

  /**
   * A local a call names: a binding made strictly before `at` (a macro's
   * scanned `let f = f(…)` binds at the invocation, where its own call is),
   * not capitalised (an identifier pattern such as `None` or `MAX` names an
   * item, which the binder cannot tell).
   */
  private localBefore(name: string, at: number, env: BodyEnv): Binding | null {
    if (!/^[a-z_]/.test(name)) return null;
    let hit: Binding | null = null;
    for (const b of env.bindings) {
      if (b.name !== name || b.at >= at || (b.until !== undefined && at >= b.until)) continue;
      if (!hit || b.at >= hit.at) hit = b;
    }
    return hit;
  }

  private bindingType(b: Binding, env: BodyEnv, depth: number): Ty {
    const known = env.memo.get(b);
    if (known) return known;
    env.memo.set(b, UNKNOWN(`${b.name} defined through itself`));
    let t: Ty;
    if (b.ty) t = this.lowering.lower(b.ty, env.def.scope, env.ctx, env.selfTy);
    else if (b.closure?.fn && b.init?.k === 'path') {
      // a closure passed to a function: its parameter's type from the function's `Fn(A)` bound
      const res = this.names.resolve(this.names.segs(b.init.path), env.def.scope, 'value', env.ctx);
      t = (res && 'def' in res ? this.sigClosureParam(res.def, b.closure.arg, b.closure.param) : null)
        ?? UNKNOWN(`closure parameter of ${b.init.path}`);
    } else if (b.init) {
      const init = this.typeOf(b.init, b.from ?? b.at, env, depth + 1);
      const via = b.via ?? 'value';
      if (init.k === 'unknown') t = init;
      else if (via === 'value') t = init;
      else if (via === 'some') t = payload(init);
      else if (via === 'iter') t = this.itemOf(init, env);
      else t = b.closure ? this.closureParam(init, b.closure, env) : UNKNOWN('closure');
      for (const p of b.proj ?? []) {
        if (t.k === 'unknown') break;
        if ('deref' in p) {
          // `&pat`: through the reference (none known: the type as it is, like autoderef)
          if (t.k === 'ref') t = t.of;
          continue;
        }
        // a pattern through a reference binds by reference (match ergonomics)
        const byRef = t.k === 'ref';
        if ('elem' in p) {
          const s = stripRefs(t);
          const at = p.elem < 0 && s.k === 'tuple' ? s.of.length + p.elem : p.elem;
          t = s.k === 'tuple' && s.of[at] ? s.of[at]! : UNKNOWN(`element ${p.elem} of ${describe(s)}`);
        } else t = p.path === 'Some' ? payload(t) : p.path === 'Err' ? errorOf(t) : this.patternField(t, p, env);
        if (byRef && t.k !== 'ref' && t.k !== 'unknown') t = { k: 'ref', mut: false, of: t };
      }
    } else t = UNKNOWN(`type of ${b.name} not written`);
    env.memo.set(b, t);
    return t;
  }

  /** Field `field` of the struct or variant `path` a pattern names, matched against a value of type `t`. */
  private patternField(t: Ty, pat: { path: string; field: string }, env: BodyEnv): Ty {
    const segs = this.names.segs(pat.path);
    const scrutinee = headOf(t);
    let res = this.names.resolve(segs, env.def.scope, 'value', env.ctx) ?? this.names.resolve(segs, env.def.scope, 'type', env.ctx);
    // `Variant(x)` of a glob-imported or same-named enum: the scrutinee's enum's variant
    if ((!res || 'ext' in res) && segs.length === 1 && scrutinee) res = this.names.member(scrutinee.res, segs[0]!, 'type') ?? res;
    if (!res) return UNKNOWN(`pattern ${pat.path}`);
    if ('def' in res) {
      const d = res.def;
      const f = d.item.fields?.find((x) => x.name === pat.field);
      if (!f) return UNKNOWN(`field ${pat.field} of ${d.qpath}`);
      const owner = d.kind === 'variant' && d.parent ? d.parent : d;
      const subst = new Map<string, Ty>();
      if (scrutinee) owner.item.generics.forEach((g, i) => { if (scrutinee.args[i]) subst.set(g, scrutinee.args[i]!); });
      const ctx: PathCtx = { self: { def: owner }, generics: owner.item.generics, locals: [] };
      return substitute(this.lowering.lower(f.ty, owner.scope, ctx, scrutinee), subst);
    }
    if ('dep' in res) {
      const f = res.dep.node.typeInfo?.f?.find((x) => x[0] === pat.field);
      if (f) return this.lowering.lowerCanonical(f[1]);
    }
    return UNKNOWN(`field ${pat.field} of ${resPath(res)}`);
  }

  /** The type of a value path: a const/static, a unit struct or variant. */
  private valueType(res: Res, env: BodyEnv): Ty {
    if ('def' in res) {
      const d = res.def;
      if ((d.kind === 'const' || d.kind === 'static') && d.item.ty) {
        return this.lowering.lower(d.item.ty, d.scope, { self: null, generics: d.item.generics, locals: [] }, null);
      }
      if (d.kind === 'struct' || d.kind === 'variant') return this.ownerType(res);
      return UNKNOWN(`value ${d.qpath}`);
    }
    if ('dep' in res) {
      const n = res.dep.node;
      if ((n.kind === 'const' || n.kind === 'static') && n.typeInfo?.t) return this.lowering.lowerCanonical(n.typeInfo.t);
      if (n.kind === 'struct' || n.kind === 'variant') return this.ownerType(res);
    }
    void env;
    return UNKNOWN(`value ${resPath(res)}`);
  }

  /** A struct's (or variant's enum's) type. */
  private ownerType(res: Res): Ty {
    if ('def' in res && res.def.kind === 'variant' && res.def.parent) return { k: 'adt', res: { def: res.def.parent }, args: [] };
    if ('dep' in res && res.dep.node.kind === 'variant' && res.dep.node.parent) {
      const p = res.dep.crate.node(res.dep.node.parent);
      if (p) return { k: 'adt', res: { dep: { crate: res.dep.crate, node: p } }, args: [] };
    }
    if ('ext' in res) {
      const p = res.ext.split('::');
      if (p.length > 2 && /^[A-Z]/.test(p[p.length - 2]!) && /^[A-Z]/.test(p[p.length - 1]!)) {
        return { k: 'adt', res: { ext: p.slice(0, -1).join('::'), krate: res.krate, depName: res.depName }, args: [] };
      }
    }
    return { k: 'adt', res, args: [] };
  }

  private callType(e: Expr & { k: 'call' }, at: number, env: BodyEnv, depth: number): Ty {
    const segs = this.names.segs(e.f);
    // `Some(x)`, `Ok(x)`, `Box::new(x)`, `Rc::new(x)`, `Arc::new(x)`
    const last = segs[segs.length - 1]!;
    const arg = () => (e.a0 ? this.typeOf(e.a0, at, env, depth + 1) : UNKNOWN('argument'));
    if (segs.length === 1 && (last === 'Some' || last === 'Ok') && !this.binding(last, at, env)) {
      return stdAdt(last === 'Some' ? 'std::option::Option' : 'std::result::Result', [arg()]);
    }
    // `f(x)` with f a local (a fn pointer, a closure parameter bounded by `Fn(A) -> B`): what calling it gives
    if (segs.length === 1) {
      const b = this.localBefore(last, at, env);
      if (b) return this.calledValue(this.bindingType(b, env, depth + 1), env);
    }
    if (segs.length === 2 && env.bounds.has(segs[0]!)) {
      const m = this.inBounds(env.bounds.get(segs[0]!)!, last, env, { k: 'param', name: segs[0]! });
      return m ? m.ret : UNKNOWN(`${e.f}`);
    }
    const res = this.names.resolve(segs, env.def.scope, 'value', env.ctx);
    if (!res) return this.derivedCall(segs, env)?.ret ?? UNKNOWN(`${e.f} not found`);
    if ('ext' in res) {
      const owner = stdKey(res.ext.split('::').slice(0, -1).join('::'));
      if (owner && (last === 'new' || last === 'from') && DEREF_TO_ARG.has(owner)) return stdAdt(res.ext.split('::').slice(0, -1).join('::'), [arg()]);
      if (owner && ['new', 'with_capacity', 'default', 'from', 'new_in'].includes(last)) return stdAdt(res.ext.split('::').slice(0, -1).join('::'), [UNKNOWN('type argument')]);
      // `Arc::clone(&a)`: the pointer itself; `max(a, b)`/`min`: the arguments' type; `mem::replace(&mut d, v)`, `mem::take(&mut d)`: d's
      if (owner && last === 'clone' && DEREF_TO_ARG.has(owner)) return stripRef(arg());
      if (res.ext === 'std::cmp::max' || res.ext === 'std::cmp::min') return arg();
      if (res.ext === 'std::mem::replace' || res.ext === 'std::mem::take') return stripRef(arg());
      return UNKNOWN(`return type of ${res.ext}`);
    }
    const ownerSelf = segs.length >= 2 && segs[0] === 'Self' ? env.selfTy : null;
    return this.returnType(res, ownerSelf, null);
  }

  /**
   * What calling a value of type `t` gives: a fn pointer's result, the
   * `Output` of an `Fn`/`FnMut`/`FnOnce` bound (`F: Fn(A) -> B`, `dyn Fn(A) ->
   * B`, through references and Box).
   */
  private calledValue(t: Ty, env: BodyEnv): Ty {
    if (t.k === 'unknown') return t;
    for (const s of this.derefSteps(t)) {
      if (s.k === 'fn') return s.ret;
      const bounds = s.k === 'param' ? env.bounds.get(s.name) ?? [] : s.k === 'dyn' ? s.bounds : [];
      for (const b of bounds) {
        if (b.k !== 'adt' || !FN_TRAITS.has(resPath(b.res).split('::').pop()!)) continue;
        return b.assoc?.find((a) => a.name === 'Output')?.ty ?? { k: 'tuple', of: [] };
      }
    }
    return UNKNOWN(`call of a value of type ${describe(t)}`);
  }

  /**
   * The declared return type of a function item (`Self` = the owner's self
   * type, or `recv` when called as a method; impl generics matched against
   * `recv`'s arguments). A struct or variant called is its constructor.
   */
  private returnType(res: Res, ownerSelf: Ty | null, recv: Ty | null): Ty {
    if ('def' in res) {
      const d = res.def;
      if (d.kind === 'struct' || d.kind === 'variant') return this.ownerType(res);
      if (d.kind !== 'fn' && d.kind !== 'method' && d.kind !== 'trait_item') return UNKNOWN(`${d.kind} ${d.qpath} called`);
      if (d.item.ret === undefined) return UNKNOWN(`${d.qpath} is not a function`);
      if (d.item.ret === null) return { k: 'tuple', of: [] };
      const impl = d.impl ? this.impls.byDef.get(d.impl) : undefined;
      const self = recv && d.parent?.kind === 'trait' ? recv : impl ? impl.self : ownerSelf ?? recv;
      // (memoised when Self is the impl's own type or there is none: the common case)
      const ret = self === null || (impl && self === impl.self)
        ? this.lowering.lowerDecl(d.item.ret, d.scope, d.item.generics, self)
        : this.lowering.lower(d.item.ret, d.scope, { self: self ? headOf(self)?.res ?? null : null, generics: d.item.generics, locals: [] }, self);
      if (d.parent?.kind === 'trait' && recv && (stripRefs(recv).k === 'param' || stripRefs(recv).k === 'dyn')) return this.projections(ret, d.parent);
      return impl && recv ? substitute(ret, matchArgs(impl.self, recv)) : ret;
    }
    if ('dep' in res) {
      const n = res.dep.node;
      if (n.kind === 'struct' || n.kind === 'variant') return this.ownerType(res);
      const r = n.typeInfo?.r;
      if (r === undefined) return UNKNOWN(`return type of ${n.qpath} not stored`);
      const parent = n.parent ? res.dep.crate.node(n.parent) : null;
      let subst: Map<string, Ty> | null = null;
      if (parent?.kind === 'impl' && parent.typeInfo?.self && recv) {
        subst = matchArgs(this.lowering.lowerCanonical(parent.typeInfo.self), recv);
      }
      if (parent?.kind === 'trait' && recv) (subst ??= new Map()).set('Self', recv);
      const ret = this.lowering.lowerCanonical(r, subst);
      if (parent?.kind === 'trait' && recv && (stripRefs(recv).k === 'param' || stripRefs(recv).k === 'dyn')) {
        return this.depProjections(ret, { crate: res.dep.crate, node: parent });
      }
      return ret;
    }
    return UNKNOWN(`return type of ${res.ext}`);
  }

  private fieldType(recv: Ty, name: string): Ty {
    for (const t of this.derefSteps(recv)) {
      const head = headOf(t);
      if (!head) {
        if (t.k === 'tuple' && /^\d+$/.test(name)) return t.of[Number(name)] ?? UNKNOWN(`field ${name}`);
        continue;
      }
      const r = head.res;
      if ('def' in r && r.def.item.fields) {
        const f = r.def.item.fields.find((x) => x.name === name);
        if (f) {
          const d = r.def;
          const ctx: PathCtx = { self: r, generics: d.item.generics, locals: [] };
          const subst = new Map<string, Ty>();
          d.item.generics.forEach((g, i) => { if (head.args[i]) subst.set(g, head.args[i]!); });
          return substitute(this.lowering.lower(f.ty, d.scope, ctx, head), subst);
        }
      } else if ('dep' in r && r.dep.node.typeInfo?.f) {
        const f = r.dep.node.typeInfo.f.find((x) => x[0] === name);
        if (f) return this.lowering.lowerCanonical(f[1]);
      } else if ('ext' in r && name === '0' && STD_WRAPPERS.test(r.ext) && head.args[0]) {
        return head.args[0];
      }
    }
    return UNKNOWN(`field ${name} of ${describe(recv)}`);
  }

  /** A std method's result type along the receiver's autoderef steps (stdlib.ts). */
  private stdMethodType(recv: Ty, e: Expr & { k: 'mcall' }, env: BodyEnv, depth: number): Ty | null {
    const args: StdCallArgs = {
      closureRet: () => {
        const c = e.a0;
        // a function passed by path (`.map(TokenStream::unwrap_stable)`): its declared result
        if (c?.k === 'path' && c.path.includes('::')) {
          const res = this.names.resolve(this.names.segs(c.path), env.def.scope, 'value', env.ctx);
          return res ? this.returnType(res, null, null) : UNKNOWN(`${c.path} not found`);
        }
        if (!c || c.k !== 'closure' || !c.body) return UNKNOWN('closure result');
        return this.typeOf(c.body, c.at, env, depth + 1);
      },
      arg0: () => (e.a0 ? this.typeOf(e.a0, Infinity, env, depth + 1) : UNKNOWN('argument')),
    };
    // raw pointers (derefSteps goes through them): `ptr.as_ref()`
    const ptr = stripRef(recv);
    if (ptr.k === 'ptr') {
      const r = stdMethod(ptr, e.name, args);
      if (r) return r;
    }
    for (const t of this.derefSteps(recv, env)) {
      const r = stdMethod(this.iterLike(t, env) ?? t, e.name, args);
      if (r) return r;
      // a type of the crate (or a dependency) implementing Iterator: std's adapters over its Item
      // (regex's `self.find_iter(t).enumerate()` on its Matches)
      const item = t.k === 'adt' && !('ext' in t.res) ? this.assocOfTraitImpl(t, ITERATOR_ITEM) : null;
      const viaItem = item ? stdMethod(stdTy(ITER, [item]), e.name, args) : null;
      if (viaItem) return viaItem;
    }
    return null;
  }

  /**
   * A type parameter or trait object bounded by std's `Iterator` (directly,
   * or through a supertrait of a bound: `trait Itertools: Iterator`): the
   * iterator it is, `std::slice::Iter<Item>` as stdlib.ts models them (Item
   * from an `Item = T` binding); else null.
   */
  private iterLike(t: Ty, env: BodyEnv): Ty | null {
    const s = stripRefs(t);
    const bounds = s.k === 'param' ? env.bounds.get(s.name) ?? this.assocBounds.get(s.name) ?? [] : s.k === 'dyn' ? s.bounds : null;
    if (!bounds) return null;
    const seen = new Set<object | string>();
    const visit = (b: Ty): Ty | null => {
      if (b.k !== 'adt') return null;
      const key = resKey(b.res);
      if (seen.has(key)) return null;
      seen.add(key);
      const p = resPath(b.res);
      // (a type bounded by IntoIterator only has into_iter, which gives such an iterator)
      if (ITERATOR_TRAITS.has(p) || p === 'std::iter::IntoIterator') {
        const item = b.assoc?.find((a) => a.name === 'Item')?.ty ?? UNKNOWN('Item of the bound');
        return stdTy(ITER, [item]);
      }
      if ('def' in b.res && b.res.def.kind === 'trait') {
        const d = b.res.def;
        const ctx: PathCtx = { self: b.res, generics: d.item.generics, locals: [] };
        for (const st of d.item.supertraits ?? []) {
          const r = visit(this.lowering.lower(st, d.scope, ctx, null));
          if (r) return r;
        }
      }
      return null;
    };
    for (const b of bounds) {
      const r = visit(b);
      if (r) return r;
    }
    return null;
  }

  /** Does `t` meet trait bound `b`? Known only for traits of the lake (an impl, or a bound) and std's iterator traits; else no. */
  private satisfies(t: Ty, b: Ty, env: BodyEnv): boolean {
    if (b.k !== 'adt') return false;
    const p = resPath(b.res);
    if (MARKER_TRAITS.has(p)) return true;
    if (ITERATOR_TRAITS.has(p)) {
      if (this.iterLike(t, env) || keyOfTy(stripRefs(t)) === 'Iter') return true;
      return this.assocOfTraitImpl(stripRefs(t), ITERATOR_ITEM) !== null;
    }
    const s = stripRefs(t);
    if (s.k === 'param') return (env.bounds.get(s.name) ?? []).some((x) => x.k === 'adt' && resKey(x.res) === resKey(b.res));
    if ('ext' in b.res) return false;
    if (this.impls.implsOfTy(s).some((i) => i.trait && resKey(i.trait.res) === resKey(b.res))) return true;
    return this.impls.depImplsOfTy(s).some((i) => i.trait !== null && resKey(i.trait) === resKey(b.res));
  }

  /** A method of a blanket impl (`impl<T: Bound> Trait for T`) whose bounds `t` meets: the impl's member, else the trait's item. */
  private viaBlanket(t: Ty, name: string, env: BodyEnv): Method | null {
    for (const c of this.viaBlanketCandidates(name, env)) {
      if (!this.blanketBounds(c.info, c.param).every((b) => this.satisfies(t, b, env))) continue;
      return method(c.res, 'static', () => this.returnType(c.res, null, t));
    }
    return null;
  }

  /** The blanket impls for a type parameter that give `name` (their member, else their trait's item), in order; memoised by name. */
  private viaBlanketCandidates(name: string, env: BodyEnv): readonly { info: ImplInfo; res: Res; param: string }[] {
    let out = this.viaBlanketMemo.get(name);
    if (out !== undefined) return out;
    out = [];
    for (const info of this.impls.blanket) {
      const param = stripRefs(info.self);
      if (param.k !== 'param') continue;
      const member = pickFn(info.members.get(name));
      const res: Res | null = member ? { def: member } : this.traitItem(info.trait!, name, env);
      if (res) out.push({ info, res, param: param.name });
    }
    this.viaBlanketMemo.set(name, out);
    return out;
  }

  private readonly viaBlanketMemo = new Map<string, { info: ImplInfo; res: Res; param: string }[]>();


  /** A blanket impl's bounds on its type parameter `param`, lowered in the impl's scope (once per impl). */
  private blanketBounds(info: ImplInfo, param: string): Ty[] {
    let bounds = this.blanketBoundsMemo.get(info);
    if (bounds === undefined) {
      const ctx: PathCtx = { self: null, generics: info.def.item.generics, locals: [] };
      bounds = (info.def.item.bounds ?? []).filter((g) => g.name === param).flatMap((g) => g.bounds)
        .map((b) => this.lowering.lower(b, info.def.scope, ctx, null));
      this.blanketBoundsMemo.set(info, bounds);
    }
    return bounds;
  }

  private readonly blanketBoundsMemo = new Map<ImplInfo, Ty[]>();

  /** The parameter type of a closure passed to a method of `recv`. */
  private closureParam(recv: Ty, c: NonNullable<Binding['closure']>, env: BodyEnv): Ty {
    for (const t of this.derefSteps(recv, env)) {
      const r = stdClosureParam(t.k === 'param' ? this.iterLike(t, env) ?? t : t, c.method, c.arg, c.param);
      if (r) return r;
      const item = this.userItem(t);
      if (item && ['map', 'for_each', 'filter_map', 'flat_map', 'any', 'all', 'position'].includes(c.method) && c.param === 0) return item;
      if (item && ['filter', 'find', 'take_while', 'skip_while', 'inspect'].includes(c.method) && c.param === 0) return { k: 'ref', mut: false, of: item };
    }
    // a method of the crate: the closure parameter's type from the method's `F: Fn(A)` bound
    const m = this.lookupMethod(recv, c.method, env);
    if (m && 'def' in m.res) {
      const t = this.sigClosureParam(m.res.def, c.arg, c.param, recv);
      if (t) return t;
    }
    return UNKNOWN(`closure parameter of ${c.method} on ${describe(recv)}`);
  }

  /**
   * The type of parameter `param` of a closure passed as argument `arg` of
   * the crate's function `def`: from the argument's `F: Fn(A, …)` bound (its
   * own generic, a `where` clause, `impl Fn(A)`, `&dyn Fn(A)`), or null. A
   * trait's method called on a bounded `recv`: `Self::X` in the bound is the
   * projection (as in a return type: `G: FnMut(B, Self::Item)` on `I: FallibleIterator`).
   */
  private sigClosureParam(def: Def, arg: number, param: number, recv: Ty | null = null): Ty | null {
    const p = def.item.params?.[arg];
    if (!p) return null;
    let ty = p.ty;
    while (ty.k === 'ref') ty = ty.of;
    let bounds: readonly TypeRef[] = [];
    if (ty.k === 'dyn') bounds = ty.bounds;
    else if (ty.k === 'path' && !ty.path.includes('::')) {
      const name = ty.path;
      bounds = (def.item.bounds ?? []).filter((g) => g.name === name).flatMap((g) => g.bounds);
    }
    for (const b of bounds) {
      if (b.k !== 'path' || !FN_TRAITS.has(b.path.split('::').pop()!)) continue;
      const args = b.args[0];
      const pt = args && args.k === 'tuple' ? args.of[param] : undefined;
      if (!pt) return null;
      const denv = this.env(def);
      const r = recv ? stripRefs(recv) : null;
      if (def.parent?.kind === 'trait' && r && (r.k === 'param' || r.k === 'dyn')) {
        const t = this.projections(this.lowering.lower(pt, def.scope, { ...denv.ctx, self: null }, r), def.parent);
        return t.k === 'unknown' ? null : t;
      }
      const t = this.lowering.lower(pt, def.scope, denv.ctx, denv.selfTy);
      return t.k === 'unknown' ? null : t;
    }
    return null;
  }

  /** What `for x in t` binds: std collections and iterators, else an `Iterator`/`IntoIterator` impl's `Item`. */
  private itemOf(t: Ty, env: BodyEnv | null = null): Ty {
    for (const s of this.derefSteps(t, env)) {
      const r = stdItem(s) ?? this.userItem(s);
      if (r) return r;
      // a parameter (or a projection `G::Edges`) bounded by `Iterator<Item = X>`
      const it = env && s.k === 'param' ? this.iterLike(s, env) : null;
      if (it) return stdItem(it) ?? UNKNOWN('item');
    }
    return UNKNOWN(`item of iterating ${describe(t)}`);
  }

  /** The `Item` of a crate's or dependency's `Iterator` (or `IntoIterator`) impl for `t`. */
  private userItem(t: Ty): Ty | null {
    return this.assocOfTraitImpl(t, ITERATED_ITEM);
  }

  /** What indexing gives: std collections, else an `Index` impl's `Output`. */
  private elemOf(t: Ty): Ty {
    for (const s of this.derefSteps(t)) {
      const std = elemOf(s);
      if (std.k !== 'unknown') return std;
      const out = this.assocOfTraitImpl(s, INDEX_OUTPUT);
      if (out) return out;
    }
    return UNKNOWN(`element of ${describe(t)}`);
  }

  /** The associated type `q.name` of `t`'s impl of a trait named one of `q.traits` (this crate's or a dependency's). */
  private assocOfTraitImpl(t: Ty, q: AssocQuery): Ty | null {
    const hit = this.assocImpl(t, q);
    if (hit === null) return null;
    if ('own' in hit) {
      const info = hit.own;
      const head = headOf(t);
      const ctx: PathCtx = { self: head ? head.res : null, generics: info.def.item.generics, locals: [] };
      return substitute(this.lowering.lower(hit.a.item.ty!, hit.a.scope, ctx, info.self), matchArgs(info.self, t));
    }
    return this.depAssoc(hit.dep, hit.text, t);
  }

  /**
   * The impl (and its associated item) `assocOfTraitImpl` takes for `t`:
   * the first of this crate's impls for t's item, else of the dependencies'.
   * Memoised by t's item (tyKey; the dependencies' impl key is a function of
   * it): most types have no Deref or Iterator impl, and every autoderef step
   * asked again.
   */
  private assocImpl(t: Ty, q: AssocQuery): AssocImpl | null {
    const key = tyKey(t);
    if (key === null) return null;
    let memo = this.assocImplMemo.get(q);
    if (memo === undefined) this.assocImplMemo.set(q, memo = new Map());
    const known = memo.get(key);
    if (known !== undefined) return known;
    const hit = this.assocImplOnce(t, q);
    memo.set(key, hit);
    return hit;
  }

  private readonly assocImplMemo = new Map<AssocQuery, Map<object | string, AssocImpl | null>>();

  private assocImplOnce(t: Ty, q: AssocQuery): AssocImpl | null {
    const isOne = (r: Res) => q.traits.includes(resPath(r).split('::').pop()!);
    for (const info of this.impls.implsOfTy(t)) {
      if (!info.trait || !isOne(info.trait.res)) continue;
      const a = info.def.children.find((c) => c.name === q.name && c.item.ty);
      if (a) return { own: info, a };
    }
    for (const impl of this.impls.depImplsOfTy(t)) {
      if (!impl.trait || !isOne(impl.trait)) continue;
      const a = impl.item.crate.childrenOf(impl.node).find((c) => c.name === q.name);
      if (a?.typeInfo?.a) return { dep: impl, text: a.typeInfo.a };
    }
    return null;
  }

  // --- method lookup -------------------------------------------------------

  /** `name` along the autoderef steps of `recv`: inherent, then traits; bounds for parameters and trait objects. */
  lookupMethod(recv: Ty, name: string, env: BodyEnv, arg: (() => Ty) | null = null): Method | null {
    const m = this.probe(recv, name, env, arg) ?? this.lenient(recv, name, env, arg);
    // a method only a trait out of scope gives (syn's IdentFragment::span for Member), or none: a dependency's
    // blanket impl of a trait in scope (`impl<T: ToTokens> Spanned for T` with `use syn::spanned::Spanned;`)
    if (m && (m.dispatch !== 'static' || this.traitInScope(m.res, env) !== false)) return m;
    const s = stripRefs(recv);
    if (s.k === 'unknown') return m;
    return this.depBlanket(name, env) ?? m;
  }

  /**
   * The method `name` of the one trait the body's module (or the body)
   * imports or defines that declares it — among those `self` implements
   * (any, with `self` null: for a message, never for an edge).
   */
  private scopeTraitMethod(name: string, env: BodyEnv, self: Ty | null): Res | null {
    const found: Res[] = [];
    const consider = (r: Res | null) => {
      if (!r) return;
      if (self !== null && !this.satisfies(self, { k: 'adt', res: r, args: [] }, env)) return;
      let hit: Res | null = null;
      if ('def' in r && r.def.kind === 'trait') {
        const c = r.def.children.find((x) => x.name === name && x.ns === 'value');
        if (c) hit = { def: c };
      } else if ('dep' in r && r.dep.node.kind === 'trait') {
        const c = r.dep.crate.childrenOf(r.dep.node).find((x) => x.name === name && depNs(x) === 'value');
        if (c) hit = { dep: { crate: r.dep.crate, node: c } };
      }
      if (hit && !found.some((f) => sameItem(f, hit!))) found.push(hit);
    };
    const scope = env.def.scope;
    for (const u of [...env.ctx.locals, ...scope.uses]) if (!u.glob) consider(this.names.resolveUse(u, scope, 'type'));
    for (const defs of scope.items.values()) for (const d of defs) if (d.kind === 'trait') consider({ def: d });
    return found.length === 1 ? found[0]! : null;
  }

  /**
   * Whether the trait a method belongs to (a trait item, or a member of a
   * trait impl) is in scope where `env` is: null when it is no trait method
   * or that is not known.
   */
  private traitInScope(res: Res, env: BodyEnv): boolean | null {
    let trait: Res | null = null;
    if ('def' in res) {
      const d = res.def;
      if (d.parent?.kind === 'trait') trait = { def: d.parent };
      else if (d.impl) {
        const t = this.impls.byDef.get(d.impl)?.trait;
        trait = t ? t.res : null;
      }
    } else if ('dep' in res) {
      const parent = res.dep.node.parent ? res.dep.crate.node(res.dep.node.parent) : null;
      if (parent?.kind === 'trait') trait = { dep: { crate: res.dep.crate, node: parent } };
      else if (parent?.kind === 'impl' && parent.typeInfo?.trait) {
        const t = this.lowering.lowerCanonical(parent.typeInfo.trait);
        trait = t.k === 'adt' ? t.res : null;
      }
    }
    if (!trait || 'ext' in trait) return null;
    const last = resPath(trait).split('::').pop()!;
    const seen = this.names.resolve([last], env.def.scope, 'type', env.ctx);
    return seen !== null && resKey(seen) === resKey(trait);
  }

  /** Is trait `t` in scope for the body: nameable in its module (its name, or a `use … as _` of it), or the trait of the impl it is in (rustc's current trait)? */
  private nameInScope(t: Res, env: BodyEnv): boolean {
    const impl = env.def.impl ?? (env.def.kind === 'impl' ? env.def : null);
    const own = impl ? this.impls.byDef.get(impl)?.trait : undefined;
    if (own && resKey(own.res) === resKey(t)) return true;
    const seen = this.names.lookup(env.def.scope, resPath(t).split('::').pop()!, 'type');
    if (seen !== null && resKey(seen) === resKey(t)) return true;
    for (const u of [...env.ctx.locals, ...env.def.scope.uses]) {
      if (u.glob || u.alias !== '_') continue;
      const r = this.names.resolveUse(u, env.def.scope, 'type');
      if (r && resKey(r) === resKey(t)) return true;
    }
    return false;
  }

  /** `name` from a loaded dependency's blanket impl of a trait in scope (its member, else the trait's item). */
  private depBlanket(name: string, env: BodyEnv): Method | null {
    for (const { trait, res } of this.depBlanketCandidates(name)) {
      const seen = this.names.resolve([trait.node.name], env.def.scope, 'type', env.ctx);
      if (!seen || !('dep' in seen) || seen.dep.node !== trait.node) continue;
      return method(res, 'static', () => this.returnType(res, null, null));
    }
    return null;
  }

  /** The loaded dependencies' blanket impls that give `name` (their member, else their trait's), in order; memoised by name. */
  private depBlanketCandidates(name: string): readonly { trait: BlanketTrait['trait']; res: Res }[] {
    if (this.depBlanketMemo === null) {
      // every name at once, one pass over the impls and their traits' items (was: one pass per name asked)
      const memo = new Map<string, { trait: BlanketTrait['trait']; res: Res }[]>();
      for (const { impl, trait } of this.blanketTraits()) {
        const own = firstValues(impl.crate.childrenOf(impl.node));
        for (const [n, hit] of own) pushTo(memo, n, { trait, res: { dep: { crate: impl.crate, node: hit } } });
        for (const [n, hit] of firstValues(trait.crate.childrenOf(trait.node))) {
          if (!own.has(n)) pushTo(memo, n, { trait, res: { dep: { crate: trait.crate, node: hit } } });
        }
      }
      this.depBlanketMemo = memo;
    }
    return this.depBlanketMemo.get(name) ?? [];
  }

  private depBlanketMemo: Map<string, { trait: BlanketTrait['trait']; res: Res }[]> | null = null;

  /** The loaded dependencies' blanket impls with their traits lowered, once per crate's resolution (each call lowered every impl's trait: ~2 s of a worker's CPU on bench:ingest). */
  private blanketTraits(): readonly BlanketTrait[] {
    if (this.blanketCache === null) {
      this.blanketCache = [];
      for (const impl of this.lowering.world.blanketImpls()) {
        const t = this.lowering.lowerCanonical(impl.node.typeInfo!.trait!);
        if (t.k === 'adt' && 'dep' in t.res) this.blanketCache.push({ impl, trait: t.res.dep });
      }
    }
    return this.blanketCache;
  }

  /**
   * rustc's probe: along the receiver's autoderef steps U, a method whose
   * `self` parameter has type U, else &U, else &mut U — inherent methods
   * before trait methods at each. Exact about references (impls for `&T` and
   * `T` apart); when the receiver's references are not known well enough for
   * that, `lenient` decides.
   */
  private probe(recv: Ty, name: string, env: BodyEnv, arg: (() => Ty) | null): Method | null {
    const blanket = this.blanketCandidates(name);
    let u: Ty | null = recv;
    for (let i = 0; u && i < MAX_DEREF; i++) {
      if (u.k === 'param' || u.k === 'dyn' || u.k === 'unknown') return null;
      // (the three adjustments share their base type, so its candidates are fetched once per step)
      const cands = this.candidates(stripRefs(u), name);
      if (cands.own.length > 0 || cands.dep.length > 0 || blanket.length > 0) {
        for (const adj of ['value', 'ref', 'mut'] as const) {
          const target: Ty = adj === 'value' ? u : { k: 'ref', mut: adj === 'mut', of: u };
          const m = this.exact(target, name, cands, blanket, env, arg);
          if (m) return m;
        }
      }
      u = u.k === 'ref' || u.k === 'ptr' ? u.of : this.derefOnce(u);
    }
    return null;
  }

  /**
   * The members named `name` of the impls for a type (this crate's, then the
   * loaded dependencies'), with the reference chain of their `self`
   * parameter: what `exact` compares. Memoised by the type's item (tyKey, of
   * which the dependencies' impl key is a function) and name.
   */
  private candidates(base: Ty, name: string): Candidates {
    const key = tyKey(base) ?? NO_KEY;
    let byName = this.candidateMemo.get(key);
    if (byName === undefined) this.candidateMemo.set(key, byName = new Map());
    let out = byName.get(name);
    if (out !== undefined) return out;
    const own: OwnCandidate[] = [];
    for (const info of this.impls.implsOfTy(base)) {
      let hit = pickFn(info.members.get(name));
      // the trait's default method, inherited by an impl that does not define it (BufMut::put_u8 on BytesMut)
      if (!hit && info.trait && 'def' in info.trait.res && info.trait.res.def.kind === 'trait') {
        hit = info.trait.res.def.children.find((c) => c.name === name && (c.kind === 'trait_item' || c.kind === 'method') && c.item.ret !== undefined) ?? null;
      }
      const have = hit ? selfChain(refChain(info.self), hit.item.selfParam ?? null) : null;
      if (hit && have) own.push({ info, res: { def: hit }, have });
    }
    const dep: DepCandidate[] = [];
    for (const impl of this.impls.depImplsOfTy(base)) {
      const self = impl.node.typeInfo?.self ? this.lowering.lowerCanonical(impl.node.typeInfo.self) : null;
      if (!self) continue;
      const hit = impl.item.crate.childrenOf(impl.node).find((c) => c.name === name && depNs(c) === 'value');
      let res: Res | null = hit ? { dep: { crate: impl.item.crate, node: hit } } : null;
      let selfParam = hit?.typeInfo?.s ?? null;
      if (!res && impl.trait && 'dep' in impl.trait) {
        // the trait's default method, inherited by an impl that does not define it
        const d = impl.trait.dep.crate.childrenOf(impl.trait.dep.node).find((c) => c.name === name && depNs(c) === 'value');
        if (d) { res = { dep: { crate: impl.trait.dep.crate, node: d } }; selfParam = d.typeInfo?.s ?? null; }
      }
      const have = res ? selfChain(refChain(self), selfParam) : null;
      if (res && have) dep.push({ impl, res, have });
    }
    out = { own, dep };
    byName.set(name, out);
    return out;
  }

  private readonly candidateMemo = new Map<object | string, Map<string, Candidates>>();

  /**
   * This crate's blanket impls (`impl<T: Buf> Buf for &mut T`) with a method
   * `name` taking `self` in some form, and the references its `self` type
   * puts around the impl's own type parameter (not a type named in a where
   * clause, `where Standard: Distribution<T>`, which the generics list also
   * holds). Memoised by name.
   */
  private blanketCandidates(name: string): BlanketCandidate[] {
    let out = this.blanketMemo.get(name);
    if (out !== undefined) return out;
    out = [];
    for (const info of this.impls.blanket) {
      const hit = pickFn(info.members.get(name));
      const param = stripRefs(info.self);
      if (!hit || param.k !== 'param' || !info.def.item.generics.includes(param.name) || hit.item.selfParam === undefined || hit.item.selfParam === null) continue;
      if (this.names.lookup(info.def.scope, param.name, 'type') !== null) continue;
      const sp = hit.item.selfParam;
      const have = sp === 'value' ? refChain(info.self) : [sp === 'mut' ? 'mut' as const : 'ref' as const, ...refChain(info.self)];
      out.push({ info, res: { def: hit }, have, param: param.name });
    }
    this.blanketMemo.set(name, out);
    return out;
  }

  private readonly blanketMemo = new Map<string, BlanketCandidate[]>();

  /** The method among `cands` whose `self` parameter type is exactly `target` (references compared), inherent first. */
  private exact(target: Ty, name: string, cands: Candidates, blanketCands: readonly BlanketCandidate[], env: BodyEnv, arg: (() => Ty) | null): Method | null {
    const want = refChain(target);
    const inherent: Found[] = [];
    const traits: Found[] = [];
    let blanketFound = false;
    for (const c of cands.own) {
      if (!sameRefs(c.have, want)) continue;
      const trait = c.info.trait;
      if (trait && !this.argFits(trait, c.info.self, arg, name)) continue;
      if (trait) traits.push({ res: c.res, trait: trait.res, blanket: false });
      else inherent.push({ res: c.res, trait: null, blanket: false });
    }
    // blanket impls: at this autoref step when the method's `self` type is `target` with T in place of what
    // is left of it, and that meets T's bounds
    for (const c of blanketCands) {
      let rest: Ty = target;
      let ok = true;
      for (const r of c.have) {
        if (rest.k !== 'ref' || (rest.mut ? 'mut' : 'ref') !== r) { ok = false; break; }
        rest = rest.of;
      }
      if (!ok || rest.k === 'unknown' || rest.k === 'param') continue;
      const bounds = this.blanketBounds(c.info, c.param);
      if (bounds.length === 0 || !bounds.every((b) => this.satisfies(rest, b, env))) continue;
      traits.push({ res: c.res, trait: c.info.trait ? c.info.trait.res : null, blanket: true });
      blanketFound = true;
    }
    for (const c of cands.dep) {
      if (!sameRefs(c.have, want)) continue;
      if (c.impl.traitArgs !== null && arg && !this.argFitsText(c.impl.traitArgs, arg)) continue;
      if (c.impl.trait) traits.push({ res: c.res, trait: c.impl.trait, blanket: false });
      else inherent.push({ res: c.res, trait: null, blanket: false });
    }
    const found = this.pickExact(inherent, traits, blanketFound, env, arg);
    return found ? method(found.res, 'static', () => this.returnType(found.res, null, target)) : null;
  }

  /** `exact`'s choice among the methods that fit: inherent first, then the one trait (in scope) that gives it. */
  private pickExact(inherent: Found[], traits: Found[], blanketFound: boolean, env: BodyEnv, arg: (() => Ty) | null): Found | null {
    if (inherent[0]) return inherent[0];
    // an impl of a trait for exactly this type and a blanket impl of the same trait whose bounds seem met cannot
    // both apply (coherence): the blanket's bound check is the lenient one (petgraph's `impl IntoNeighbors for
    // &'a List` against `impl<'a, G: IntoNeighbors> IntoNeighbors for &'a G`)
    if (blanketFound) {
      const concrete = new Set(traits.filter((m) => !m.blanket).map((m) => resKey(m.trait!)));
      for (let i = traits.length - 1; i >= 0; i--) {
        const t = traits[i]!.trait;
        if (traits[i]!.blanket && t && concrete.has(resKey(t))) traits.splice(i, 1);
      }
    }
    // one trait gives it, and that trait (this crate's or a dependency's) is not in scope: rustc does not see it
    // at this step (petgraph's `self.edge_weight(ix)` in StableGraph's impl: DataMap's `&mut G` impl fits the
    // autoref, but DataMap is not imported there; the inherent method one step on is the one called)
    if (traits.length === 1 && traits[0]!.trait && !('ext' in traits[0]!.trait) && !this.nameInScope(traits[0]!.trait, env)) return null;
    if (traits.length <= 1) return traits[0] ?? null;
    // several traits give the method: the ones in scope (rustc's rule); several impls of one trait that
    // only the argument's type tells apart, and it does not: no guess
    const traitOf = (m: Found): object | string | null => (m.trait ? resKey(m.trait) : null);
    const distinct = new Set(traits.map(traitOf));
    if (distinct.size > 1) {
      const inScope = traits.filter((m) => {
        const t = m.trait;
        if (!t) return false;
        const seen = this.names.lookup(env.def.scope, resPath(t).split('::').pop()!, 'type');
        return seen !== null && resKey(seen) === resKey(t);
      });
      return new Set(inScope.map(traitOf)).size === 1 ? inScope[0]! : null;
    }
    return arg ? traits[0]! : null;
  }

  /**
   * Does a trait impl's first type argument (`PartialEq<Rhs>`; `Self` when
   * an operator trait's is not written) take the call's argument? Unknown: yes.
   * A trait of this crate whose method `name` does not take that parameter
   * first (`Distribution<T>::sample(&self, rng)`: T is the result) fits.
   */
  private argFits(trait: Ty & { k: 'adt' }, self: Ty, arg: (() => Ty) | null, name: string): boolean {
    const want = trait.args[0] ?? (RHS_IS_SELF.has(resPath(trait.res).split('::').pop()!) ? self : undefined);
    if (!want || !arg || want.k === 'param') return true;
    const r = trait.res;
    if ('ext' in r && resPath(r).split('::').pop() === 'Extend') return this.itemFits(want, arg);
    if ('ext' in r && !ARG_IS_PARAM.has(resPath(r).split('::').pop()!)) return true;
    if ('def' in r && r.def.kind === 'trait') {
      const first = r.def.item.generics.find((g) => g !== 'Self');
      const m = r.def.children.find((c) => c.name === name && c.item.params !== undefined);
      let p = m?.item.params?.[0]?.ty;
      while (p && (p.k === 'ref' || p.k === 'ptr')) p = p.of;
      if (m && !(p && p.k === 'path' && p.path === first)) return true;
    }
    const got = arg();
    if (got.k === 'unknown' || got.k === 'param') return true;
    return renderTy(stripRefs(want)) === renderTy(stripRefs(got));
  }

  /** `Extend<A>::extend(iter)`: does the argument iterate A (references apart)? Unknown: yes. */
  private itemFits(want: Ty, arg: () => Ty): boolean {
    if (want.k === 'param') return true;
    const got = arg();
    if (got.k === 'unknown' || got.k === 'param') return true;
    const item = this.itemOf(got);
    if (item.k === 'unknown' || item.k === 'param') return true;
    return shapeFits(stripRefs(want), stripRefs(item));
  }

  /** A dependency impl's trait arguments (canonical text) against the call's argument: unknown = fits. */
  private argFitsText(traitText: string, arg: () => Ty): boolean {
    const t = this.lowering.lowerCanonical(traitText);
    if (t.k !== 'adt' || t.args.length === 0) return true;
    if ('ext' in t.res && resPath(t.res).split('::').pop() === 'Extend') return this.itemFits(t.args[0]!, arg);
    if ('ext' in t.res && !ARG_IS_PARAM.has(resPath(t.res).split('::').pop()!)) return true;
    const want = t.args[0]!;
    if (want.k === 'param') return true;
    const got = arg();
    if (got.k === 'unknown' || got.k === 'param') return true;
    return renderTy(stripRefs(want)) === renderTy(stripRefs(got));
  }

  /** The method along autoderef steps with references ignored: inherent, then traits; bounds for parameters and trait objects. */
  private lenient(recv: Ty, name: string, env: BodyEnv, arg: (() => Ty) | null): Method | null {
    const byRef = recv.k === 'ref';
    let first = true;
    for (const t of this.derefSteps(recv, env)) {
      if (t.k === 'param') {
        const m = this.inBounds(env.bounds.get(t.name) ?? this.assocBounds.get(t.name) ?? [], name, env, t)
          ?? this.inBounds(this.whereBounds(t.name, env), name, env, t) ?? this.viaBlanket(t, name, env);
        if (m) return m;
        continue;
      }
      if (t.k === 'dyn') {
        const m = this.inBounds(t.bounds, name, env, t) ?? this.viaBlanket(t, name, env);
        if (m) return m;
        continue;
      }
      const head = headOf(t);
      const owner = head ? head.res : null;
      // impls for `&T` and for `T` share a table: on the first step, those matching the receiver's reference first
      const impls = first ? this.refsFirst(this.impls.implsOfTy(t), byRef) : this.impls.implsOfTy(t);
      first = false;
      // inherent (this crate's impls, then the dependency's)
      for (const info of impls) {
        if (info.trait) continue;
        const hit = pickFn(info.members.get(name));
        if (hit) return method({ def: hit }, 'static', () => this.returnType({ def: hit }, null, t));
      }
      {
        const hit = this.depMethod(t, name, false);
        if (hit) return method(hit, 'static', () => this.returnType(hit, null, t));
      }
      // trait impls: the impl's member, else the trait's default method
      // (whether the argument fits is asked only of an impl that gives `name`: it does not depend on which)
      for (const info of impls) {
        if (!info.trait) continue;
        const hit = pickFn(info.members.get(name));
        const dflt = hit ? null : this.traitItem(info.trait, name, env);
        if ((!hit && !dflt) || !this.argFits(info.trait, info.self, arg, name)) continue;
        if (hit) return method({ def: hit }, 'static', () => this.returnType({ def: hit }, null, t));
        return method(dflt!, 'static', () => this.returnType(dflt!, null, t));
      }
      {
        const hit = this.depMethod(t, name, true);
        if (hit) return method(hit, 'static', () => this.returnType(hit, null, t));
      }
      if (owner && 'def' in owner && owner.def.kind === 'trait') {
        const item = owner.def.children.find((c) => c.name === name);
        if (item) return method({ def: item }, 'dynamic', () => this.returnType({ def: item }, null, t));
      }
      const blanket = this.viaBlanket(t, name, env);
      if (blanket) return blanket;
    }
    return null;
  }

  /** `impls` (one type's table) with those whose self type is a reference (`byRef`) or not (else) first, in order otherwise; memoised per table. */
  private refsFirst(impls: ImplInfo[], byRef: boolean): ImplInfo[] {
    if (impls.length < 2) return impls;
    const memo = byRef ? this.refsFirstMemo[1] : this.refsFirstMemo[0];
    let out = memo.get(impls);
    if (out === undefined) {
      out = [...impls].sort((a, b) => Number((b.self.k === 'ref') === byRef) - Number((a.self.k === 'ref') === byRef));
      memo.set(impls, out);
    }
    return out;
  }

  private readonly refsFirstMemo: [Map<ImplInfo[], ImplInfo[]>, Map<ImplInfo[], ImplInfo[]>] = [new Map(), new Map()];

  /** A method of a dependency type: its inherent impls, or (`traits`) its trait impls and their traits' defaults. */
  private depMethod(t: Ty, name: string, traits: boolean): Res | null {
    for (const impl of this.impls.depImplsOfTy(t)) {
      if ((impl.trait !== null) !== traits) continue;
      const hit = impl.item.crate.childrenOf(impl.node).find((c) => c.name === name && depNs(c) === 'value');
      if (hit) return { dep: { crate: impl.item.crate, node: hit } };
      if (impl.trait && 'dep' in impl.trait) {
        const t = impl.trait.dep;
        const d = t.crate.childrenOf(t.node).find((c) => c.name === name);
        if (d) return { dep: { crate: t.crate, node: d } };
      }
    }
    return null;
  }

  /** An item named `name` in the traits `bounds` (and their supertraits) of the type `self`. */
  /**
   * A trait method's return type on a bounded receiver: each `Self::X` the
   * trait declares as `type X: Bound;` becomes a parameter bounded by Bound
   * (serde's `let mut s = ser.serialize_struct(…)?; s.end()`).
   */
  private projections(t: Ty, trait: Def): Ty {
    switch (t.k) {
      case 'adt': {
        const ext = 'ext' in t.res ? t.res.ext : null;
        const m = ext !== null ? /^Self::([A-Za-z_][A-Za-z0-9_]*)$/.exec(ext) : null;
        if (m) {
          // declared by the trait or one of its supertraits (`trait IntoEdges: IntoEdgeReferences`, `EdgeRef` of the latter)
          const declared = this.declaring(trait, m[1]!);
          const owner = declared ?? trait;
          const name = `${owner.qpath}::${m[1]}`;
          if (!this.assocBounds.has(name)) {
            this.assocBounds.set(name, []); // first: a bound that names this projection again does not recurse
            const decl = owner.children.find((c) => c.name === m[1] && c.ns === 'type')?.item.bounds?.find((b) => b.name === m[1]);
            const ctx: PathCtx = { self: null, generics: owner.item.generics, locals: [] };
            // (`type Edges: Iterator<Item = Self::EdgeRef>`: the binding is a projection too)
            this.assocBounds.set(name, (decl?.bounds ?? []).map((b) => this.projections(this.lowering.lower(b, owner.scope, ctx, null), owner)));
          }
          // (declared without bounds: still a parameter, which the body's `where G::Id: Idx` may bound)
          return (declared || this.assocBounds.get(name)!.length > 0) ? { k: 'param', name } : t;
        }
        if (t.args.length === 0 && !t.assoc) return t;
        const out: Ty = { ...t, args: t.args.map((a) => this.projections(a, trait)) };
        if (t.assoc) out.assoc = t.assoc.map((a) => ({ name: a.name, ty: this.projections(a.ty, trait) }));
        return out;
      }
      case 'ref': return { ...t, of: this.projections(t.of, trait) };
      default: return t;
    }
  }

  /**
   * `projections` for a dependency's trait: each `Self::X` whose associated
   * type the trait bounds (type_info `b`: serde's `type SerializeMap:
   * SerializeMap<…>;`) becomes a parameter bounded by those traits.
   */
  private depProjections(t: Ty, trait: Extract<Res, { dep: unknown }>['dep']): Ty {
    switch (t.k) {
      case 'adt': {
        const ext = 'ext' in t.res ? t.res.ext : null;
        const m = ext !== null ? /^Self::([A-Za-z_][A-Za-z0-9_]*)$/.exec(ext) : null;
        if (m) {
          const name = `${trait.node.qpath}::${m[1]}`;
          if (!this.assocBounds.has(name)) {
            const decl = trait.crate.childrenOf(trait.node).find((c) => c.name === m[1] && c.kind === 'trait_item');
            this.assocBounds.set(name, (decl?.typeInfo?.b ?? []).map((b) => this.lowering.lowerCanonical(b)));
          }
          return this.assocBounds.get(name)!.length > 0 ? { k: 'param', name } : t;
        }
        return t.args.length > 0 ? { ...t, args: t.args.map((a) => this.depProjections(a, trait)) } : t;
      }
      case 'ref': return { ...t, of: this.depProjections(t.of, trait) };
      default: return t;
    }
  }

  /** `P::X` (a path type left as text) with P a bounded type parameter of the body: the projection parameter, else null. */
  private boundProjection(t: Ty, env: BodyEnv): (Ty & { k: 'param' }) | null {
    if (t.k !== 'adt' || !('ext' in t.res) || t.res.krate !== null || t.args.length > 0) return null;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)$/.exec(t.res.ext);
    const bounds = m ? env.bounds.get(m[1]!) : undefined;
    return bounds ? this.projectionOf(bounds, m![2]!) : null;
  }

  /**
   * The where-clause bounds of a projection parameter (`trait::NodeId`) written
   * on `G::NodeId` in the body's generics (`where G::NodeId: GraphIndex`).
   */
  private whereBounds(param: string, env: BodyEnv): Ty[] {
    const x = param.split('::').pop()!;
    if (x === param) return [];
    const out: Ty[] = [];
    for (const [name, list] of env.bounds) if (name.endsWith(`::${x}`) && name.split('::').length === 2) out.push(...list);
    return out;
  }

  /** The trait among `trait` and its supertraits (this crate's) that declares the associated type `x`, or null. */
  private declaring(trait: Def, x: string, depth = 0): Def | null {
    if (trait.children.some((c) => c.name === x && c.ns === 'type')) return trait;
    if (!trait.item.supertraits || trait.item.supertraits.length === 0) return null;
    let byName = this.declared.get(trait);
    if (!byName) this.declared.set(trait, byName = new Map());
    const memo = byName.get(x);
    if (memo !== undefined) return memo;
    const hit = this.declaringOnce(trait, x, depth);
    byName.set(x, hit);
    return hit;
  }

  /** `declaring`'s answers, by trait and name. */
  private readonly declared = new Map<Def, Map<string, Def | null>>();

  private declaringOnce(trait: Def, x: string, depth: number): Def | null {
    if (depth >= 6) return null;
    const ctx: PathCtx = { self: { def: trait }, generics: trait.item.generics, locals: [] };
    for (const st of trait.item.supertraits ?? []) {
      const t = this.lowering.lower(st, trait.scope, ctx, null);
      if (t.k === 'adt' && 'def' in t.res && t.res.def.kind === 'trait') {
        const hit = this.declaring(t.res.def, x, depth + 1);
        if (hit) return hit;
      }
    }
    return null;
  }

  /** `T::X` for T bounded by `bounds`: the projection parameter of the first bound's trait (this crate's) declaring `type X: …`. */
  private projectionOf(bounds: readonly Ty[], x: string): (Ty & { k: 'param' }) | null {
    for (const b of bounds) {
      if (b.k !== 'adt' || !('def' in b.res) || b.res.def.kind !== 'trait') continue;
      const t = this.projections({ k: 'adt', res: { ext: `Self::${x}`, krate: null, depName: null }, args: [] }, b.res.def);
      if (t.k === 'param') return t;
    }
    return null;
  }

  /** Bounds of the projections `projections` made, by their parameter name (`serde::ser::Serializer::SerializeMap`). */
  private readonly assocBounds = new Map<string, Ty[]>();

  private inBounds(bounds: readonly Ty[], name: string, env: BodyEnv, self: Ty): Method | null {
    for (const b of bounds) {
      if (b.k !== 'adt') continue;
      const hit = this.traitItem(b, name, env);
      // `Edge: IntoWeightedEdge<E, NodeId = Ix>`: the bound's bindings are the result's `Self::NodeId`
      if (hit) return method(hit, 'dynamic', () => withBindings(this.returnType(hit, null, self), b.assoc));
    }
    return null;
  }

  /**
   * `name` in a trait or its supertraits (this crate's or a dependency's).
   * Memoised per trait and name: the answer depends on nothing else (the
   * supertraits are lowered in the trait's own scope), and it was asked again
   * for every blanket impl and trait impl at every method probe.
   */
  private traitItem(trait: Ty & { k: 'adt' }, name: string, env: BodyEnv): Res | null {
    const r = trait.res;
    const owner: object | null = 'def' in r ? r.def : 'dep' in r ? r.dep.node : null;
    if (owner === null) return null;
    let byName = this.traitItems.get(owner);
    if (byName === undefined) this.traitItems.set(owner, byName = new Map());
    let hit = byName.get(name);
    if (hit === undefined) {
      hit = this.traitItemIn(trait, name, env, new Set());
      byName.set(name, hit);
    }
    return hit;
  }

  /** `traitItem`'s answers, by trait (its Def or DepNode) and name. */
  private readonly traitItems = new Map<object, Map<string, Res | null>>();

  private traitItemIn(trait: Ty & { k: 'adt' }, name: string, env: BodyEnv, seen: Set<object | string>): Res | null {
    const r = trait.res;
    if ('def' in r) {
      if (r.def.kind !== 'trait' || seen.has(r.def)) return null;
      seen.add(r.def);
      const hit = r.def.children.find((c) => c.name === name && c.ns === 'value') ?? r.def.children.find((c) => c.name === name);
      if (hit) return { def: hit };
      for (const t of this.supertraits(r.def)) {
        if (t.k === 'adt') {
          const h = this.traitItemIn(t, name, env, seen);
          if (h) return h;
        }
      }
      return null;
    }
    if ('dep' in r) {
      const n = r.dep.node;
      if (n.kind !== 'trait' || seen.has(n)) return null;
      seen.add(n);
      const hit = r.dep.crate.childrenOf(n).find((c) => c.name === name);
      if (hit) return { dep: { crate: r.dep.crate, node: hit } };
      for (const st of n.typeInfo?.st ?? []) {
        const t = this.lowering.lowerCanonical(st);
        if (t.k === 'adt') {
          const h = this.traitItemIn(t, name, env, seen);
          if (h) return h;
        }
      }
    }
    return null;
  }

  /** A trait's supertraits, lowered in its scope (`Self` the trait), once per trait. */
  private supertraits(trait: Def): Ty[] {
    let out = this.supertraitMemo.get(trait);
    if (out === undefined) {
      const ctx: PathCtx = { self: { def: trait }, generics: trait.item.generics, locals: [] };
      out = (trait.item.supertraits ?? []).map((st) => this.lowering.lower(st, trait.scope, ctx, null));
      this.supertraitMemo.set(trait, out);
    }
    return out;
  }

  private readonly supertraitMemo = new Map<Def, Ty[]>();

  /** `<T as Trait>::name` for a concrete T: the member of T's impl of Trait. */
  private traitMethodFor(self: Ty, trait: Ty & { k: 'adt' }, name: string): Res | null {
    // `<Ref as From<usize>>::from`: the trait's arguments pick among impls of the same trait
    const args = trait.args.length > 0 ? renderTy(trait) : null;
    for (const info of this.impls.implsOfTy(self)) {
      if (!info.trait || !sameItem(info.trait.res, trait.res) || (args !== null && renderTy(info.trait) !== args)) continue;
      const hit = pickFn(info.members.get(name));
      if (hit) return { def: hit };
    }
    for (const impl of this.impls.depImplsOfTy(self)) {
      if (!impl.trait || !sameItem(impl.trait, trait.res) || (args !== null && impl.traitArgs !== null && impl.traitArgs !== args)) continue;
      const hit = impl.item.crate.childrenOf(impl.node).find((c) => c.name === name);
      if (hit) return { dep: { crate: impl.item.crate, node: hit } };
    }
    return null;
  }

  /** The autoderef steps of a type: itself without references, then what it derefs to. */
  private derefSteps(t: Ty, env: BodyEnv | null = null): Ty[] {
    const out: Ty[] = [];
    let cur: Ty | null = stripRefs(t);
    // `G::Edges` with G a bounded parameter of the body: the projection its bounds' trait declares
    if (env) cur = this.boundProjection(cur, env) ?? cur;
    for (let i = 0; cur && i < MAX_DEREF; i++) {
      out.push(cur);
      cur = this.derefOnce(cur);
      if (cur) cur = stripRefs(cur);
    }
    return out;
  }

  /** One deref: std smart pointers and guards, String -> str, Vec -> slice, a `Deref` impl's Target. */
  private derefOnce(t: Ty): Ty | null {
    if (t.k !== 'adt') return null;
    const k = key(t);
    if (k && DEREF_TO_ARG.has(k)) return t.args[0] ?? null;
    if (k === 'String') return { k: 'prim', name: 'str' };
    if (k === 'Vec') return { k: 'slice', of: t.args[0] ?? UNKNOWN('element') };
    return this.assocOfTraitImpl(t, DEREF_TARGET);
  }
}

/** The first value-namespace item of each name among a dependency item's children (what `find` by name would give). */
function firstValues(children: readonly DepNode[]): Map<string, DepNode> {
  const out = new Map<string, DepNode>();
  for (const c of children) if (!out.has(c.name) && depNs(c) === 'value') out.set(c.name, c);
  return out;
}

function pushTo<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** The references around a type, outermost first (`&mut &T` -> ['mut', 'ref']). */
function refChain(t: Ty): ('ref' | 'mut')[] {
  const out: ('ref' | 'mut')[] = [];
  for (let cur = t; cur.k === 'ref'; cur = cur.of) out.push(cur.mut ? 'mut' : 'ref');
  return out;
}

/** The references around a method's `self` parameter's type (`self`, `&self`, `&mut self` of an impl for a type with `implRefs`); null when it takes no `self`. */
function selfChain(implRefs: ('ref' | 'mut')[], selfParam: string | null): ('ref' | 'mut')[] | null {
  if (selfParam === null) return null;
  return selfParam === 'value' ? implRefs : [selfParam === 'mut' ? 'mut' as const : 'ref' as const, ...implRefs];
}

function sameRefs(have: readonly ('ref' | 'mut')[], want: readonly ('ref' | 'mut')[]): boolean {
  if (have.length !== want.length) return false;
  for (let i = 0; i < have.length; i++) if (have[i] !== want[i]) return false;
  return true;
}

/** `t` without its references (raw pointers kept). */
function stripRef(t: Ty): Ty {
  let cur = t;
  while (cur.k === 'ref') cur = cur.of;
  return cur;
}

function stripRefs(t: Ty): Ty {
  let cur = t;
  while (cur.k === 'ref' || cur.k === 'ptr') cur = cur.of;
  return cur;
}

function key(t: Ty & { k: 'adt' }): string | null {
  return 'ext' in t.res && t.res.krate === null ? stdKey(t.res.ext) : null;
}

function stdAdt(path: string, args: Ty[]): Ty {
  return { k: 'adt', res: { ext: path, krate: null, depName: null }, args };
}

/** Option<T> / Result<T, E> -> T (what `?`, `if let Some(x)`, `.unwrap()` give). */
function payload(t: Ty): Ty {
  const s = stripRefs(t);
  if (s.k === 'adt' && (key(s) === 'Option' || key(s) === 'Result')) return s.args[0] ?? UNKNOWN('payload');
  if (s.k === 'unknown') return s;
  return UNKNOWN(`? on ${describe(s)}`);
}

/** Result<T, E> -> E (what an `Err(e)` pattern binds). */
function errorOf(t: Ty): Ty {
  const s = stripRefs(t);
  if (s.k === 'adt' && key(s) === 'Result') return s.args[1] ?? UNKNOWN('error type');
  if (s.k === 'unknown') return s;
  return UNKNOWN(`Err of ${describe(s)}`);
}

/** The element of a Vec, slice, array, VecDeque (or the value of a map) — what indexing a std type gives. */
function elemOf(t: Ty): Ty {
  const s = stripRefs(t);
  if (s.k === 'slice') return s.of;
  if (s.k === 'adt') {
    const k = key(s);
    if (k === 'Vec' || k === 'VecDeque') return s.args[0] ?? UNKNOWN('element');
    if (k === 'HashMap' || k === 'BTreeMap') return s.args[1] ?? UNKNOWN('value');
  }
  return UNKNOWN(`element of ${describe(s)}`);
}

/** Type parameters of a generic self type matched against a concrete one (`Foo<T>` vs `Foo<u8>` -> T = u8). */
function matchArgs(pattern: Ty, concrete: Ty): Map<string, Ty> {
  const out = new Map<string, Ty>();
  const go = (p: Ty, c: Ty) => {
    if (p.k === 'param') {
      if (!out.has(p.name) && c.k !== 'unknown') out.set(p.name, c);
      return;
    }
    const cs = p.k === 'ref' ? c : stripRefs(c);
    if (p.k === 'ref' && cs.k === 'ref') return go(p.of, cs.of);
    if (p.k === 'adt' && cs.k === 'adt') p.args.forEach((a, i) => { if (cs.args[i]) go(a, cs.args[i]!); });
    if ((p.k === 'slice') && cs.k === 'slice') go(p.of, cs.of);
  };
  go(stripRefs(pattern), concrete);
  return out;
}

/**
 * Can a value of type `got` be an `want` (an impl's trait argument, its
 * parameters free)? Structural, references kept: a parameter of the impl
 * takes anything, a parameter or unknown of the caller anything but a
 * reference (`(K, V)` takes `(T, ())`; `(&K, &V)` does not take `(K, V)`).
 */
function shapeFits(want: Ty, got: Ty): boolean {
  if (want.k === 'param' || got.k === 'unknown') return true;
  if (got.k === 'param') return want.k !== 'ref' && want.k !== 'ptr';
  switch (want.k) {
    case 'ref': return got.k === 'ref' && shapeFits(want.of, got.of);
    case 'ptr': return got.k === 'ptr' && shapeFits(want.of, got.of);
    case 'slice': return got.k === 'slice' && shapeFits(want.of, got.of);
    case 'tuple': return got.k === 'tuple' && got.of.length === want.of.length && want.of.every((w, i) => shapeFits(w, got.of[i]!));
    case 'adt': return got.k === 'adt' && resPath(got.res) === resPath(want.res) && want.args.every((w, i) => !got.args[i] || shapeFits(w, got.args[i]!));
    case 'prim': return got.k === 'prim' && got.name === want.name;
    default: return renderTy(want) === renderTy(got);
  }
}

function pickFn(defs: Def[] | undefined): Def | null {
  if (!defs) return null;
  return defs.find((d) => d.ns === 'value') ?? null;
}

function sameItem(a: Res, b: Res): boolean {
  if ('def' in a) return 'def' in b && a.def === b.def;
  if ('dep' in a) return 'dep' in b && a.dep.node === b.dep.node;
  return 'ext' in b && resPath(a) === resPath(b);
}

/** `t` with each `Self::X` a bound binds (`Trait<X = T>`) replaced by T. */
function withBindings(t: Ty, assoc: readonly { name: string; ty: Ty }[] | undefined): Ty {
  if (!assoc || assoc.length === 0) return t;
  switch (t.k) {
    case 'adt': {
      const m = 'ext' in t.res && t.args.length === 0 ? /^Self::([A-Za-z_][A-Za-z0-9_]*)$/.exec(t.res.ext) : null;
      const bound = m ? assoc.find((a) => a.name === m[1]) : undefined;
      if (bound) return bound.ty;
      return t.args.length > 0 ? { ...t, args: t.args.map((a) => withBindings(a, assoc)) } : t;
    }
    case 'ref': return { ...t, of: withBindings(t.of, assoc) };
    case 'tuple': return { k: 'tuple', of: t.of.map((x) => withBindings(x, assoc)) };
    default: return t;
  }
}

function describe(t: Ty): string {
  switch (t.k) {
    case 'adt': return resPath(t.res);
    case 'param': return `type parameter ${t.name}`;
    case 'unknown': return `unknown (${t.why})`;
    case 'ref': return `&${describe(t.of)}`;
    default: return t.k === 'prim' ? t.name : t.k;
  }
}
