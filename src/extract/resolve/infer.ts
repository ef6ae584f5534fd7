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
import type { Binding, Expr, Ref } from '../types.ts';
import type { Def } from './defs.ts';
import { depNs, type DepItem } from './deps.ts';
import type { Impls } from './impls.ts';
import type { Names, PathCtx, Res } from './names.ts';
import { DEREF_TO_ARG, STD_METHODS, stdKey } from './std.ts';
import { headOf, resPath, substitute, UNKNOWN, type Ty, type TypeLowering } from './types.ts';

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

/** Inference gives up past this depth (a binding defined through itself). */
const MAX_DEPTH = 24;
/** Autoderef steps tried. */
const MAX_DEREF = 6;

type Method = { res: Res; ret: Ty; dispatch: 'static' | 'dynamic' };

export class Infer {
  constructor(private readonly names: Names, private readonly lowering: TypeLowering, private readonly impls: Impls) {}

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
    const m = this.lookupMethod(recv, name, env);
    if (!m) return { res: null, reason: `no method ${name} found for ${describe(recv)}`, dispatch: null };
    return { res: m.res, reason: null, dispatch: m.dispatch };
  }

  /** A path call `f(…)`, `T::f(…)`, `Self::f(…)`, `<T as Tr>::f(…)`. */
  pathCall(ref: Ref, env: BodyEnv): Resolved {
    if (ref.qself) return this.qualifiedCall(ref, env);
    const segs = ref.target.split('::');
    // `T::f()` with T a type parameter: the method of one of T's bounds
    if (segs.length === 2 && env.bounds.has(segs[0]!)) {
      const m = this.inBounds(env.bounds.get(segs[0]!)!, segs[1]!, env, { k: 'param', name: segs[0]! });
      if (m) return { res: m.res, reason: null, dispatch: 'dynamic' };
      return { res: null, reason: `no item ${segs[1]} in the bounds of ${segs[0]}`, dispatch: null };
    }
    if (segs[0] === 'Self' && segs.length === 2 && env.selfTy?.k === 'param') {
      const m = this.inBounds(env.bounds.get('Self') ?? [], segs[1]!, env, env.selfTy);
      if (m) return { res: m.res, reason: null, dispatch: 'dynamic' };
    }
    const res = this.names.resolve(segs, env.def.scope, 'value', env.ctx);
    if (!res) return { res: null, reason: `${ref.target} not found`, dispatch: null };
    return { res, reason: null, dispatch: 'static' };
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
    const viaImpl = this.traitMethodFor(self, trait.res, name);
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
      case 'mcall': {
        const recv = this.typeOf(e.recv, at, env, depth + 1);
        if (recv.k === 'unknown') return recv;
        const std = this.stdMethodType(recv, e.name, e, at, env, depth);
        if (std) return std;
        const m = this.lookupMethod(recv, e.name, env);
        if (!m) return UNKNOWN(`method ${e.name} of ${describe(recv)}`);
        return m.ret;
      }
      case 'field': return this.fieldType(this.typeOf(e.recv, at, env, depth + 1), e.name);
      case 'try': return payload(this.typeOf(e.of, at, env, depth + 1));
      case 'deref': return this.derefOnce(stripRefs(this.typeOf(e.of, at, env, depth + 1))) ?? UNKNOWN('deref');
      case 'index': return elemOf(this.typeOf(e.of, at, env, depth + 1));
      case 'struct': {
        const segs = e.path.split('::');
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
    if (path === 'self') return env.selfTy ?? UNKNOWN('self outside an impl');
    if (!path.includes('::')) {
      const b = this.binding(path, at, env);
      if (b) return this.bindingType(b, env, depth);
    }
    const res = this.names.resolve(path.split('::'), env.def.scope, 'value', env.ctx);
    if (!res) return UNKNOWN(`${path} not found`);
    return this.valueType(res, env);
  }

  /** The latest binding of `name` visible at `at`. */
  private binding(name: string, at: number, env: BodyEnv): Binding | null {
    let hit: Binding | null = null;
    for (const b of env.bindings) if (b.name === name && b.at <= at) hit = b;
    return hit;
  }

  private bindingType(b: Binding, env: BodyEnv, depth: number): Ty {
    const known = env.memo.get(b);
    if (known) return known;
    env.memo.set(b, UNKNOWN(`${b.name} defined through itself`));
    let t: Ty;
    if (b.ty) t = this.lowering.lower(b.ty, env.def.scope, env.ctx, env.selfTy);
    else if (b.init) {
      const init = this.typeOf(b.init, b.at, env, depth + 1);
      const via = b.via ?? 'value';
      if (via === 'value') t = init;
      else if (via === 'some') t = payload(init);
      else if (via === 'iter') t = itemOf(init);
      else {
        const i = Number(via.slice(5));
        const s = stripRefs(init);
        t = s.k === 'tuple' && s.of[i] ? s.of[i]! : UNKNOWN(`element ${i}`);
      }
    } else t = UNKNOWN(`type of ${b.name} not written`);
    env.memo.set(b, t);
    return t;
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
    const segs = e.f.split('::');
    // `Some(x)`, `Ok(x)`, `Box::new(x)`, `Rc::new(x)`, `Arc::new(x)`
    const last = segs[segs.length - 1]!;
    const arg = () => (e.a0 ? this.typeOf(e.a0, at, env, depth + 1) : UNKNOWN('argument'));
    if (segs.length === 1 && (last === 'Some' || last === 'Ok') && !this.binding(last, at, env)) {
      return stdAdt(last === 'Some' ? 'std::option::Option' : 'std::result::Result', [arg()]);
    }
    if (segs.length === 2 && env.bounds.has(segs[0]!)) {
      const m = this.inBounds(env.bounds.get(segs[0]!)!, last, env, { k: 'param', name: segs[0]! });
      return m ? m.ret : UNKNOWN(`${e.f}`);
    }
    const res = this.names.resolve(segs, env.def.scope, 'value', env.ctx);
    if (!res) return UNKNOWN(`${e.f} not found`);
    if ('ext' in res) {
      const owner = stdKey(res.ext.split('::').slice(0, -1).join('::'));
      if (owner && (last === 'new' || last === 'from') && DEREF_TO_ARG.has(owner)) return stdAdt(res.ext.split('::').slice(0, -1).join('::'), [arg()]);
      if (owner && ['new', 'with_capacity', 'default', 'from', 'new_in'].includes(last)) return stdAdt(res.ext.split('::').slice(0, -1).join('::'), [UNKNOWN('type argument')]);
      return UNKNOWN(`return type of ${res.ext}`);
    }
    const ownerSelf = segs.length >= 2 && segs[0] === 'Self' ? env.selfTy : null;
    return this.returnType(res, ownerSelf, null);
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
      const ctx: PathCtx = { self: self ? headOf(self)?.res ?? null : null, generics: d.item.generics, locals: [] };
      const ret = this.lowering.lower(d.item.ret, d.scope, ctx, self);
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
      return this.lowering.lowerCanonical(r, subst);
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
      }
    }
    return UNKNOWN(`field ${name} of ${describe(recv)}`);
  }

  /** Methods of std types whose result follows from the receiver (std.ts). */
  private stdMethodType(recv: Ty, name: string, e: Expr & { k: 'mcall' }, at: number, env: BodyEnv, depth: number): Ty | null {
    for (const t of this.derefSteps(recv)) {
      const head = headOf(t);
      if (name === 'clone' || name === 'to_owned') {
        if (head && 'def' in head.res) return null; // the crate's own clone, if any
        return t;
      }
      if (name === 'to_string') return stdAdt('std::string::String', []);
      if ((name === 'iter' || name === 'iter_mut' || name === 'into_iter' || name === 'drain') && (t.k === 'slice' || (head && key(head) === 'Vec') || (head && key(head) === 'VecDeque'))) {
        return stdAdt('std::slice::Iter', [elemOf(t)]);
      }
      if (!head) continue;
      const k = key(head);
      const how = k ? STD_METHODS.get(k)?.get(name) : undefined;
      if (!how) continue;
      const a0 = head.args[0] ?? UNKNOWN(`type argument of ${k}`);
      switch (how) {
        case 'arg0': return a0;
        case 'self': return t;
        case 'opt0': return stdAdt('std::option::Option', [a0]);
        case 'guard': return stdAdt('std::cell::Ref', [a0]);
        case 'guardres': return stdAdt('std::result::Result', [stdAdt('std::sync::MutexGuard', [a0])]);
        case 'res0': return stdAdt('std::result::Result', [a0]);
        case 'str': return { k: 'ref', mut: false, of: { k: 'prim', name: 'str' } };
        case 'string': return stdAdt('std::string::String', []);
      }
    }
    void e; void at; void env; void depth;
    return null;
  }

  // --- method lookup -------------------------------------------------------

  /** `name` along the autoderef steps of `recv`: inherent, then traits; bounds for parameters and trait objects. */
  lookupMethod(recv: Ty, name: string, env: BodyEnv): Method | null {
    for (const t of this.derefSteps(recv)) {
      if (t.k === 'param') {
        const m = this.inBounds(env.bounds.get(t.name) ?? [], name, env, t);
        if (m) return m;
        continue;
      }
      if (t.k === 'dyn') {
        const m = this.inBounds(t.bounds, name, env, t);
        if (m) return m;
        continue;
      }
      const head = headOf(t);
      const owner = head ? head.res : null;
      const impls = this.impls.implsOfTy(t);
      // inherent (this crate's impls, then the dependency's)
      for (const info of impls) {
        if (info.trait) continue;
        const hit = pickFn(info.members.get(name));
        if (hit) return { res: { def: hit }, ret: this.returnType({ def: hit }, null, t), dispatch: 'static' };
      }
      if (owner && 'dep' in owner) {
        const hit = this.depMethod(owner.dep, name, false);
        if (hit) return { res: hit, ret: this.returnType(hit, null, t), dispatch: 'static' };
      }
      // trait impls: the impl's member, else the trait's default method
      for (const info of impls) {
        if (!info.trait) continue;
        const hit = pickFn(info.members.get(name));
        if (hit) return { res: { def: hit }, ret: this.returnType({ def: hit }, null, t), dispatch: 'static' };
        const dflt = this.traitItem(info.trait, name, env);
        if (dflt) return { res: dflt, ret: this.returnType(dflt, null, t), dispatch: 'static' };
      }
      if (owner && 'dep' in owner) {
        const hit = this.depMethod(owner.dep, name, true);
        if (hit) return { res: hit, ret: this.returnType(hit, null, t), dispatch: 'static' };
      }
      if (owner && 'def' in owner && owner.def.kind === 'trait') {
        const item = owner.def.children.find((c) => c.name === name);
        if (item) return { res: { def: item }, ret: this.returnType({ def: item }, null, t), dispatch: 'dynamic' };
      }
    }
    return null;
  }

  /** A method of a dependency type: its inherent impls, or (`traits`) its trait impls and their traits' defaults. */
  private depMethod(item: DepItem, name: string, traits: boolean): Res | null {
    for (const impl of this.impls.depImpls(item)) {
      if ((impl.trait !== null) !== traits) continue;
      const hit = item.crate.childrenOf(impl.node).find((c) => c.name === name && depNs(c) === 'value');
      if (hit) return { dep: { crate: item.crate, node: hit } };
      if (impl.trait && 'dep' in impl.trait) {
        const t = impl.trait.dep;
        const d = t.crate.childrenOf(t.node).find((c) => c.name === name);
        if (d) return { dep: { crate: t.crate, node: d } };
      }
    }
    return null;
  }

  /** An item named `name` in the traits `bounds` (and their supertraits) of the type `self`. */
  private inBounds(bounds: readonly Ty[], name: string, env: BodyEnv, self: Ty): Method | null {
    for (const b of bounds) {
      if (b.k !== 'adt') continue;
      const hit = this.traitItem(b, name, env);
      if (hit) return { res: hit, ret: this.returnType(hit, null, self), dispatch: 'dynamic' };
    }
    return null;
  }

  /** `name` in a trait or its supertraits (this crate's or a dependency's). */
  private traitItem(trait: Ty & { k: 'adt' }, name: string, env: BodyEnv, seen = new Set<object | string>()): Res | null {
    const r = trait.res;
    if ('def' in r) {
      if (r.def.kind !== 'trait' || seen.has(r.def)) return null;
      seen.add(r.def);
      const hit = r.def.children.find((c) => c.name === name && c.ns === 'value') ?? r.def.children.find((c) => c.name === name);
      if (hit) return { def: hit };
      const ctx: PathCtx = { self: r, generics: r.def.item.generics, locals: [] };
      for (const st of r.def.item.supertraits ?? []) {
        const t = this.lowering.lower(st, r.def.scope, ctx, null);
        if (t.k === 'adt') {
          const h = this.traitItem(t, name, env, seen);
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
          const h = this.traitItem(t, name, env, seen);
          if (h) return h;
        }
      }
    }
    return null;
  }

  /** `<T as Trait>::name` for a concrete T: the member of T's impl of Trait. */
  private traitMethodFor(self: Ty, trait: Res, name: string): Res | null {
    for (const info of this.impls.implsOfTy(self)) {
      if (!info.trait || !sameItem(info.trait.res, trait)) continue;
      const hit = pickFn(info.members.get(name));
      if (hit) return { def: hit };
    }
    const owner = headOf(self)?.res;
    if (owner && 'dep' in owner) {
      for (const impl of this.impls.depImpls(owner.dep)) {
        if (!impl.trait || !sameItem(impl.trait, trait)) continue;
        const hit = owner.dep.crate.childrenOf(impl.node).find((c) => c.name === name);
        if (hit) return { dep: { crate: owner.dep.crate, node: hit } };
      }
    }
    return null;
  }

  /** The autoderef steps of a type: itself without references, then what it derefs to. */
  private derefSteps(t: Ty): Ty[] {
    const out: Ty[] = [];
    let cur: Ty | null = stripRefs(t);
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
    for (const info of this.impls.implsOf(t.res)) {
      if (!info.trait || !resPath(info.trait.res).endsWith('::Deref')) continue;
      const target = info.def.children.find((c) => c.name === 'Target' && c.item.ty);
      if (!target) continue;
      const ctx: PathCtx = { self: t.res, generics: info.def.item.generics, locals: [] };
      return substitute(this.lowering.lower(target.item.ty!, target.scope, ctx, info.self), matchArgs(info.self, t));
    }
    if ('dep' in t.res) {
      for (const impl of this.impls.depImpls(t.res.dep)) {
        if (!impl.trait || !resPath(impl.trait).endsWith('::Deref')) continue;
        const target = t.res.dep.crate.childrenOf(impl.node).find((c) => c.name === 'Target');
        if (target?.typeInfo?.a) return this.lowering.lowerCanonical(target.typeInfo.a);
      }
    }
    return null;
  }
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

/** The element of a Vec, slice, array, VecDeque (or the value of a map) — what indexing gives. */
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

/** What `for x in t` binds. */
function itemOf(t: Ty): Ty {
  const s = stripRefs(t);
  if (s.k === 'slice') return s.of;
  if (s.k === 'adt') {
    const k = key(s);
    if (k === 'Vec' || k === 'VecDeque' || k === 'Option') return s.args[0] ?? UNKNOWN('item');
    if ('ext' in s.res && s.res.ext === 'std::slice::Iter') return s.args[0] ?? UNKNOWN('item');
    if (k === 'HashMap' || k === 'BTreeMap') return { k: 'tuple', of: [s.args[0] ?? UNKNOWN('key'), s.args[1] ?? UNKNOWN('value')] };
  }
  return UNKNOWN(`item of iterating ${describe(s)}`);
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

function pickFn(defs: Def[] | undefined): Def | null {
  if (!defs) return null;
  return defs.find((d) => d.ns === 'value') ?? null;
}

function sameItem(a: Res, b: Res): boolean {
  if ('def' in a) return 'def' in b && a.def === b.def;
  if ('dep' in a) return 'dep' in b && a.dep.node === b.dep.node;
  return 'ext' in b && resPath(a) === resPath(b);
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
