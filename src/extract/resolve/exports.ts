// What this crate leaves for the crates that depend on it: each node's
// type_info (summary.ts gives the format) — return types, fields, aliases,
// supertraits, impl headers, exported macro texts — in canonical type text,
// so a dependant resolves into this crate from the lake without its sources.
//
// Invariant: runs after impls (types resolve, `Self` is the impl's self
// type and never left in a stored type); pure over the phases' data.
import type { Def } from './defs.ts';
import type { Impls } from './impls.ts';
import type { Names, PathCtx } from './names.ts';
import { encodeTypeInfo, type TypeInfo } from './summary.ts';
import { renderTy, type Ty, type TypeLowering } from './types.ts';

export class Exports {
  constructor(private readonly lowering: TypeLowering, private readonly impls: Impls, private readonly names: Names) {}

  /** type_info of one node (null when there is nothing to say). */
  typeInfo(def: Def): string | null {
    const item = def.item;
    const info: TypeInfo = {};
    const impl = def.impl ? this.impls.byDef.get(def.impl) : undefined;
    const self: Ty | null = impl ? impl.self : def.parent?.kind === 'trait' ? { k: 'param', name: 'Self' } : null;
    const ctx: PathCtx = { self: null, generics: item.generics, locals: [] };
    // (self an adt or none: the lowering infer made of the same declared type, when it did)
    const render = (t: Parameters<TypeLowering['lower']>[0], at: Def = def) => renderTy(self === null || self.k === 'adt'
      ? this.lowering.lowerDecl(t, at.scope, item.generics, self)
      : this.lowering.lower(t, at.scope, ctx, self));
    switch (def.kind) {
      case 'fn':
      case 'method':
      case 'trait_item':
        if (item.ret !== undefined) {
          info.r = item.ret ? render(item.ret) : '()';
          if (item.selfParam) info.s = item.selfParam;
        } else if (item.ty) {
          // an associated type (its default) or const
          if (item.signature.startsWith('type ')) info.a = render(item.ty);
          else info.t = render(item.ty);
        } else if (item.signature.startsWith('type ')) {
          info.a = '_';
        }
        if (def.parent?.kind === 'trait' && item.signature.startsWith('type ')) {
          // `type X: Bound;` — what a dependant's `T::X` value can be called with
          const bounds = item.bounds?.find((g) => g.name === item.name)?.bounds ?? [];
          if (bounds.length > 0) info.b = bounds.map((t) => render(t));
        }
        break;
      case 'struct':
      case 'union':
      case 'variant': {
        const fields = (item.fields ?? []).filter((f) => f.visibility.startsWith('pub') || def.kind === 'variant');
        if (fields.length > 0) info.f = fields.map((f) => [f.name, render(f.ty)]);
        if (def.kind !== 'union' && (!item.fields || item.fields.length === 0 || item.fields[0]!.name === '0')) info.v = 1;
        break;
      }
      case 'type':
        if (item.ty) info.a = render(item.ty);
        if (item.ty && item.generics.length > 0) {
          // the parameters in order, and the defaulted ones' types: a dependant's `Result<T>` expands to `Result<T, Error>`
          info.g = [...item.generics];
          for (const d of item.genericDefaults ?? []) (info.gd ??= {})[d.name] = render(d.ty);
        }
        break;
      case 'trait':
        if (item.supertraits && item.supertraits.length > 0) info.st = item.supertraits.map((t) => render(t));
        break;
      case 'impl': {
        const i = this.impls.byDef.get(def);
        if (i) {
          info.self = renderTy(i.self);
          if (i.trait) info.trait = renderTy(i.trait);
        }
        break;
      }
      case 'const':
      case 'static':
        if (item.ty) info.t = render(item.ty);
        break;
      case 'module': {
        const x = this.names.foreignReexports(def);
        if (x) info.x = x;
        break;
      }
      case 'macro':
        if (item.macroExport && item.macroText) {
          info.m = item.macroText;
          if (item.macroLocalInner) info.li = 1;
        }
        break;
      default:
    }
    return encodeTypeInfo(info);
  }
}
