// MIR calls -> the compiler's call sites as (caller item, callee item, file,
// line, syntax class), in terms of rustdoc items so that both ends can be
// looked up in Mimir's graph through the item matching.
//
// Callee: MIR prints local paths crate-relative (`de::impls::foo`), other
// crates' paths through their public re-exports (`regex_syntax::hir::Hir`),
// inherent methods as `Type::<'_>::m` and trait calls as `<Self as
// Trait<A>>::m`. A trait call goes to the impl of that trait for that self
// type (found in the crate of the type or of the trait: the orphan rule) and
// its member `m`, else to the trait's own `m` (a provided method, or a self
// type that is a type parameter: dynamic). Several candidates (impls the
// rendering of types cannot tell apart) are all accepted, and so is the
// trait's own `m` when the impl is known (the call names that method). A
// path through a fn names an item nested in a body: rustdoc has none, the
// call is left out.
//
// Caller: the body's def path walked from the crate root (modules, `<impl at
// FILE:L:C: …>` by the impl's span start, members); an impl written in a fn
// body is walked into (rustdoc lists it, Mimir indexes it as the fn's child);
// closures, other nested items and promoted constants fold into the innermost
// compared item — as Mimir folds a body's nested calls into its item. A body whose `<impl at …>` is no
// rustdoc impl has no caller: when the span is in a macro_rules! definition
// (how rustc names an impl a macro generated) its calls are `macro-body`,
// otherwise they are left out (rustdoc lacks a few impls, `impl X for dyn T`).
//
// Class: see classify.ts.
import type { MirBody, Span } from './mir.ts';
import type { DocItem, DocModel } from './rustdoc.ts';
import { publicPaths } from './rustdoc.ts';
import type { CrateSource } from './source.ts';
import { calleeName, findTopLevelWord, implAtKey, parseCallee, segsOf, splitPath, type Callee, type Seg } from './callee.ts';
import { classify, FN_TRAITS, generatedImpl, type CallClass, type Caller } from './classify.ts';
import { fromMirType, implTakes, renderType, TypeReader, tokenize, type TypeAst } from './types.ts';

export { WRITTEN_CLASSES, type CallClass } from './classify.ts';

/** Where a callee is. */
export type CalleeTarget =
  | { k: 'item'; krate: string; ids: number[]; also?: { krate: string; ids: number[] } }
  | { k: 'outside'; krate: string }
  | { k: 'unknown'; why: string };

export interface OracleCall {
  /** The caller item (local rustdoc id), null for a body generated at a macro definition (or one rustdoc misses). */
  caller: number | null;
  /** No caller, and not because a macro made the body: rustdoc has no item for it (e.g. `impl Display for dyn T`). */
  callerUnmapped: boolean;
  callee: string;
  /** The called name (the callee's last path segment). */
  name: string;
  target: CalleeTarget;
  cls: CallClass;
  /** Where the call is counted: the callee operand's file and line (the name token of a method call). */
  file: string;
  line: number;
  /** For `macro-arg`: the outermost macro whose arguments hold the call. */
  macro?: string;
  /** For `macro-body` in an item a macro invocation generated: the invocation's lines, where the edge may sit. */
  window?: { file: string; line: number; endLine: number };
}

// ---- one crate's model, with the indexes calls need ----------------------------

export interface CrateModel {
  /** Crate name as code spells it (`serde_json`). */
  name: string;
  /** `name@version`, as Mimir names the crate. */
  krate: string;
  doc: DocModel;
  /** Trait impls by the trait's last name. */
  implsByTrait: Map<string, DocItem[]>;
  /** Inherent impls by their self type's rustdoc id. */
  inherentByType: Map<number, DocItem[]>;
  /** Impls by `file:line:col` of their span start. */
  implAt: Map<string, number>;
  /** Full public paths (`regex::Regex`) and def paths (`regex::re_unicode::Regex`) -> items. */
  paths: Map<string, number[]>;
  /** Names of the crate root's items: a MIR path starting with one is local. */
  rootNames: Set<string>;
}

export function crateModel(name: string, krate: string, doc: DocModel): CrateModel {
  const implsByTrait = new Map<string, DocItem[]>();
  const inherentByType = new Map<number, DocItem[]>();
  const implAt = new Map<string, number>();
  for (const it of doc.doc.items) {
    if (it.kind !== 'impl' || !it.impl) continue;
    if (it.span) implAt.set(`${it.span.file}:${it.span.line}:${it.span.col}`, it.id);
    if (it.impl.traitName) push(implsByTrait, it.impl.traitName, it);
    else if (it.impl.selfId !== null) push(inherentByType, it.impl.selfId, it);
  }
  const paths = new Map<string, number[]>();
  const pub = publicPaths(doc);
  for (const [p, ids] of pub.defPaths) paths.set(p, ids);
  for (const [p, ids] of pub.reexports) if (!paths.has(p)) paths.set(p, ids);
  const rootNames = new Set<string>();
  for (const c of doc.byId.get(doc.doc.root)?.children ?? []) {
    const ci = doc.byId.get(c);
    if (ci?.name && ci.kind !== 'use' && ci.kind !== 'extern_crate') rootNames.add(ci.name);
  }
  return { name, krate, doc, implsByTrait, inherentByType, implAt, paths, rootNames };
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V) {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

// ---- resolution ------------------------------------------------------------------

export interface World {
  local: CrateModel;
  /** Every measured crate by its code name (the local one too). */
  crates: Map<string, CrateModel>;
}

/** Which crate a path's first segment names: the local crate, a measured crate, or another one. */
function crateOfFirst(first: string, w: World): { model: CrateModel; rel: boolean } | { outside: string } {
  if (w.local.rootNames.has(first)) return { model: w.local, rel: true };
  const m = w.crates.get(first);
  if (m) return { model: m, rel: false };
  return { outside: first };
}

/** Items a path names in `m`: crate-relative def path (local) or full path (another crate). */
function lookupPath(m: CrateModel, segs: string[], rel: boolean): number[] {
  if (rel) return m.doc.defPaths.get(segs.join('::')) ?? [];
  const full = segs.join('::');
  const viaPaths = m.paths.get(full);
  if (viaPaths) return viaPaths;
  return segs[0] === m.name ? (m.doc.defPaths.get(segs.slice(1).join('::')) ?? []) : [];
}

function members(m: CrateModel, implOrTrait: DocItem, name: string): number[] {
  return (implOrTrait.children ?? []).filter((c) => m.doc.byId.get(c)?.name === name);
}

export function resolveCallee(text: string, w: World): CalleeTarget {
  const c = parseCallee(text);
  return c.k === 'trait' ? resolveTraitCall(c, w) : resolvePathCall(c.segs, w);
}

function resolvePathCall(segs: Seg[], w: World): CalleeTarget {
  if (segs.length === 0) return { k: 'unknown', why: 'empty path' };
  const first = segs[0]!.name;
  if (first.startsWith('<')) return { k: 'outside', krate: 'inherent impl of a non-path type' };
  const where = crateOfFirst(first, w);
  if ('outside' in where) return { k: 'outside', krate: first };
  const { model, rel } = where;
  const names = segs.map((s) => s.name);
  if (rel) return walkLocal(model, names, w);
  const direct = lookupPath(model, names, rel).filter((id) => isCallable(model.doc.byId.get(id)));
  if (direct.length > 0) return { k: 'item', krate: model.name, ids: direct };
  if (names.length >= 2) {
    const typeIds = lookupPath(model, names.slice(0, -1), rel);
    const ids = typeIds.flatMap((t) => typeMembers(model, t, names[names.length - 1]!));
    if (ids.length > 0) return { k: 'item', krate: model.name, ids };
  }
  return { k: 'unknown', why: `no item at ${names.join('::')}` };
}

/** Members named `name` of a type (its inherent impls, its variants) or a trait. */
function typeMembers(m: CrateModel, typeId: number, name: string): number[] {
  const ti = m.doc.byId.get(typeId);
  if (!ti) return [];
  if (ti.kind === 'trait') return members(m, ti, name);
  const ids: number[] = [];
  for (const impl of m.inherentByType.get(typeId) ?? []) ids.push(...members(m, impl, name));
  if (ti.kind === 'enum') ids.push(...members(m, ti, name));
  return ids;
}

const NESTED = 'an item inside a fn body (rustdoc has none)';

/**
 * A crate-relative path walked from the crate root: modules, `<impl at …>`
 * (the impl at that span), `<impl Type>` / `<impl Trait for Type>` (how MIR
 * names a member of an impl written in another module than its type), types
 * and their inherent members, traits and impls and their members. A path
 * through a fn is an item nested in a body; through `extern crate` another crate.
 */
function walkLocal(m: CrateModel, names: string[], w: World): CalleeTarget {
  const doc = m.doc;
  let cur: DocItem[] = [doc.byId.get(doc.doc.root)!];
  for (let i = 0; i < names.length; i++) {
    const n = names[i]!;
    const at = cur[0]!;
    if (cur.length === 1 && (at.kind === 'function' || at.kind === 'constant' || at.kind === 'static' || at.kind === 'assoc_const')) {
      return { k: 'unknown', why: NESTED };
    }
    if (n.startsWith('<impl at ')) {
      const key = implAtKey(n);
      const id = key ? m.implAt.get(key) : undefined;
      if (id === undefined) return { k: 'unknown', why: `impl ${n} not in rustdoc` };
      cur = [doc.byId.get(id)!];
      continue;
    }
    if (n.startsWith('<impl ')) {
      const inner = n.slice(6, -1);
      const rest = names.slice(i + 1);
      if (rest.length !== 1) return { k: 'unknown', why: rest.length === 0 ? `path ends at ${n}` : NESTED };
      const forAt = findTopLevelWord(inner, ' for ');
      if (forAt >= 0) return resolveTraitCall({ k: 'trait', self: inner.slice(forAt + 5), trait: segsOf(inner.slice(0, forAt)), name: rest[0]! }, w);
      const typeSegs = segsOf(inner).map((s) => s.name);
      const tw = crateOfFirst(typeSegs[0] ?? '', w);
      if ('outside' in tw) return { k: 'outside', krate: tw.outside };
      const typeIds = tw.rel ? itemsAt(tw.model, typeSegs) : lookupPath(tw.model, typeSegs, false);
      const ids = typeIds.flatMap((t) => typeMembers(tw.model, t, rest[0]!));
      return ids.length > 0 ? { k: 'item', krate: tw.model.name, ids } : { k: 'unknown', why: `no member ${rest[0]} of ${inner}` };
    }
    const next: DocItem[] = [];
    for (const c of cur) {
      if (c.kind === 'module' || c.kind === 'trait' || c.kind === 'impl') {
        for (const k of c.children ?? []) {
          const ci = doc.byId.get(k);
          if (ci?.name !== n || ci.kind === 'use') continue;
          if (ci.kind === 'extern_crate') return { k: 'outside', krate: n };
          next.push(ci);
        }
      } else if (c.kind === 'struct' || c.kind === 'enum' || c.kind === 'union' || c.kind === 'type_alias') {
        for (const id of typeMembers(m, c.id, n)) next.push(doc.byId.get(id)!);
      }
    }
    if (next.length === 0) return { k: 'unknown', why: `no item at ${m.name}::${names.slice(0, i + 1).join('::')}` };
    cur = next;
  }
  return { k: 'item', krate: m.name, ids: cur.map((c) => c.id) };
}

/** Items a crate-relative path names (modules and what they hold). */
function itemsAt(m: CrateModel, names: string[]): number[] {
  return m.doc.defPaths.get(names.join('::')) ?? [];
}

function isCallable(it: DocItem | undefined): boolean {
  return it !== undefined && (it.kind === 'function' || it.kind === 'proc_macro');
}

function resolveTraitCall(c: Extract<Callee, { k: 'trait' }>, w: World): CalleeTarget {
  const traitName = c.trait[c.trait.length - 1]?.name ?? '';
  if (FN_TRAITS.has(traitName)) return { k: 'outside', krate: 'closure call' };
  const traitWhere = crateOfFirst(c.trait[0]?.name ?? '', w);
  const traitModel = 'model' in traitWhere ? traitWhere.model : null;
  const traitIds = traitModel ? lookupPath(traitModel, c.trait.map((s) => s.name), 'model' in traitWhere && traitWhere.rel) : [];
  const traitItem = traitIds.map((id) => traitModel!.doc.byId.get(id)).find((it) => it?.kind === 'trait');
  const self = fromMirType(c.self);
  const traitArgs = c.trait[c.trait.length - 1]?.args ?? null;
  // the impl lives in the crate of the self type or of the trait
  const selfFirst = selfPathFirst(c.self);
  const homes: CrateModel[] = [];
  if (traitModel) homes.push(traitModel);
  if (selfFirst) {
    const sw = crateOfFirst(selfFirst, w);
    if ('model' in sw && !homes.includes(sw.model)) homes.push(sw.model);
  }
  // the orphan rule: a std trait's impl for a std type (Box and Pin aside, which are fundamental) is std's
  const stdSelf = selfFirst !== null && STD_CRATES.has(selfFirst) && !/^[&*\s]*(?:mut\s+|const\s+)?(?:std|core|alloc)::(?:boxed::Box|pin::Pin)\b/.test(c.self);
  if (!homes.includes(w.local) && !(stdSelf && !traitModel)) homes.push(w.local);
  for (const home of homes) {
    const impls = pickImpls(home, traitName, self, c.self, traitArgs, w);
    if (impls.length === 0) continue;
    const ids = impls.flatMap((i) => members(home, i, c.name));
    if (ids.length > 0) {
      // the trait's own declaration is right too: the call names the trait method
      const decl = traitItem && traitModel ? members(traitModel, traitItem, c.name) : [];
      return decl.length > 0 ? { k: 'item', krate: home.name, ids, also: { krate: traitModel!.name, ids: decl } } : { k: 'item', krate: home.name, ids };
    }
    // provided by the trait
    if (traitItem && traitModel) {
      const t = members(traitModel, traitItem, c.name);
      if (t.length > 0) return { k: 'item', krate: traitModel.name, ids: t };
    }
    return { k: 'outside', krate: 'outside' in traitWhere ? traitWhere.outside : traitModel?.name ?? '?' };
  }
  if (traitItem && traitModel) {
    const t = members(traitModel, traitItem, c.name);
    if (t.length > 0) return { k: 'item', krate: traitModel.name, ids: t };
    return { k: 'unknown', why: `trait ${traitName} has no member ${c.name}` };
  }
  return { k: 'outside', krate: 'outside' in traitWhere ? traitWhere.outside : '?' };
}

const STD_CRATES: ReadonlySet<string> = new Set(['std', 'core', 'alloc']);

/** First path segment of a self type's text (`&mut a::B<'_>` -> `a`), null for non-path types. */
function selfPathFirst(text: string): string | null {
  const r = new TypeReader(tokenize(text));
  while (r.peek() === '&' || r.peek() === '*' || r.peek() === 'mut' || r.peek() === 'const' || r.peek()?.startsWith("'")) r.i++;
  const t = r.peek();
  return t && /^[A-Za-z_]/.test(t) && r.peek(1) === '::' ? t : null;
}

/** Full path segments of a path self type (`a::b::C<'_>` -> [a, b, C]); null otherwise. */
function selfPathSegs(text: string): string[] | null {
  if (/^[&*([]/.test(text) || text.startsWith('dyn ') || text.startsWith('impl ') || text.startsWith('{')) return null;
  return segsOf(text).map((s) => s.name);
}

function pickImpls(home: CrateModel, traitName: string, self: TypeAst, selfText: string, traitArgs: string | null, w: World): DocItem[] {
  const all = home.implsByTrait.get(traitName) ?? [];
  if (all.length === 0) return [];
  let hits: DocItem[] = [];
  // a path self type resolved to its item: compare ids
  const segs = selfPathSegs(selfText);
  if (segs) {
    const where = crateOfFirst(segs[0]!, w);
    if ('model' in where && where.model === home) {
      const ids = new Set(lookupPath(home, segs, where.rel));
      hits = all.filter((i) => i.impl!.selfId !== null && ids.has(i.impl!.selfId));
    }
  }
  if (hits.length === 0) {
    const want = renderType(self);
    hits = all.filter((i) => renderType(i.impl!.self) === want);
  }
  // a generic impl for a path type (`impl<T: ToTokens> ToTokens for Box<T>`), then a blanket one
  if (hits.length === 0) hits = all.filter((i) => !i.impl!.forGeneric && implTakes(i.impl!.self, self));
  if (hits.length === 0) hits = all.filter((i) => i.impl!.forGeneric);
  if (hits.length > 1 && traitArgs) {
    const want = new TypeReader(tokenize(traitArgs)).genericArgs().map(renderType).join(', ');
    const narrowed = hits.filter((i) => i.impl!.traitArgs.map(renderType).join(', ') === want);
    if (narrowed.length > 0) hits = narrowed;
  }
  // no trait arguments printed: rustc leaves out those equal to their default (`Rhs = Self`), so an impl
  // whose argument is another concrete type is not the one called (`<[u8] as PartialOrd>::partial_cmp` is
  // core's, not bytes' `impl PartialOrd<Bytes> for [u8]`)
  if (!traitArgs) {
    const wantSelf = renderType(self);
    hits = hits.filter((i) => i.impl!.traitArgs.every((a) => hasGeneric(a) || renderType(a) === wantSelf));
  }
  return hits;
}

/** Does a type mention a generic parameter (`T`, `Vec<T>`)? */
function hasGeneric(t: TypeAst): boolean {
  switch (t.k) {
    case 'path': return t.generic === true || t.args.some(hasGeneric);
    case 'ref': case 'ptr': case 'slice': case 'array': return hasGeneric(t.t);
    case 'tuple': return t.ts.some(hasGeneric);
    case 'qpath': return true;
    default: return false;
  }
}

// ---- callers --------------------------------------------------------------------

/** Split a body path into segments, keeping `<impl at …>` whole. */
export function resolveCaller(bodyPath: string, local: CrateModel): number | null {
  const names = splitPath(bodyPath).filter((s) => !(s.startsWith('<') && !s.startsWith('<impl ')));
  const doc = local.doc;
  let cur: DocItem | undefined = doc.byId.get(doc.doc.root);
  let best: number | null = null;
  for (const n of names) {
    if (!cur) break;
    if (n.startsWith('<impl at ')) {
      const key = implAtKey(n);
      const id = key ? local.implAt.get(key) : undefined;
      // an impl in a fn body is a rustdoc item (and a Mimir node): its members are callers of their own
      if (cur.kind !== 'module' && id === undefined) break;
      if (id === undefined) return best === null || doc.byId.get(best)?.kind === 'module' ? null : best;
      cur = doc.byId.get(id);
      if (cur && doc.items.has(cur.id)) best = cur.id;
      continue;
    }
    if (cur.kind === 'function' || cur.kind === 'constant' || cur.kind === 'static' || cur.kind === 'assoc_const') break;
    const next: DocItem | undefined = (cur.children ?? []).map((c) => doc.byId.get(c))
      .find((c) => c !== undefined && c.kind !== 'use' && (c.kind === 'proc_macro' ? doc.items.get(c.id)?.name === n : c.name === n));
    if (!next) break;
    cur = next;
    if (doc.items.has(cur.id)) best = cur.id;
  }
  if (best === null) return null;
  const k = doc.byId.get(best)?.kind;
  return k === 'module' || k === 'impl' || k === 'trait' ? null : best;
}

/** Every call of the crate's MIR bodies, resolved and classified. */
export function oracleCalls(bodies: Iterable<MirBody>, w: World, src: CrateSource): OracleCall[] {
  const out: OracleCall[] = [];
  const callerMemo = new Map<string, { id: number | null; caller: Caller }>();
  const targetMemo = new Map<string, CalleeTarget>();
  for (const b of bodies) {
    let memo = callerMemo.get(b.path);
    if (memo === undefined) {
      const id = resolveCaller(b.path, w.local);
      const item = id === null ? null : w.local.doc.items.get(id) ?? null;
      memo = { id, caller: { item, generated: item === null && generatedImpl(b.path, src) } };
      callerMemo.set(b.path, memo);
    }
    const caller = memo.id;
    for (const call of b.calls) {
      const span: Span | null = call.fnSpan ?? call.span;
      if (!span) continue;
      const { cls, macro } = classify(call, memo.caller, src);
      const callee = call.callee ?? '(value)';
      let target: CalleeTarget;
      if (call.callee === null) target = { k: 'outside', krate: 'value' };
      else {
        target = targetMemo.get(call.callee) ?? resolveCallee(call.callee, w);
        targetMemo.set(call.callee, target);
      }
      const oc: OracleCall = {
        caller, callerUnmapped: caller === null && !memo.caller.generated, callee, name: call.callee === null ? '' : calleeName(parseCallee(call.callee)),
        target, cls, file: span.file, line: span.line,
      };
      if (macro) oc.macro = macro;
      const item = memo.caller.item;
      if (cls === 'macro-body' && item?.origin === 'macro') oc.window = { file: item.file, line: item.line, endLine: item.endLine };
      out.push(oc);
    }
  }
  return out;
}
