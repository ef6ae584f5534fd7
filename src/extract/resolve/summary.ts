// What later crates need to resolve into this one, and how it is written:
// node column 20 `type_info` (compact JSON, short keys) plus the node's
// `public_paths`. Also the reader of type texts written there.
//
// type_info by kind (absent keys = nothing to say; types are canonical
// texts: crate-qualified definition paths, std through `std::`, generic
// parameters by name):
//   fn/method/trait fn:   { r: return type, s: 'ref'|'mut'|'value' (self parameter) }
//   struct/union/variant: { f: [[field, type], …] (public fields only), v: 1 when also a value (tuple/unit) }
//   type alias/assoc type:{ a: type, b: [bound, …] (a trait's `type X: Bound;`),
//                           g: [parameter, …] and gd: { parameter: default type } (a generic alias) }
//   trait:                { st: [supertrait, …] }
//   impl:                 { self: type, trait?: type }
//   const/static:         { t: type }
//   exported macro_rules: { m: definition text }
//   module:               { x: { name: definition path } } — its `pub use`s of other crates' items
//                         (syn's `pub use proc_macro2::Ident;`: `{ x: { Ident: 'proc_macro2::Ident' } }`)
// Invariant: pure; `parseType(renderType(t))` gives back `t` for every type
// the renderer writes.
import type { NodeKind, TypeRef } from '../types.ts';

export interface TypeInfo {
  r?: string;
  s?: 'ref' | 'mut' | 'value';
  f?: [string, string][];
  v?: 1;
  a?: string;
  /** A trait's associated type's bounds (`type SerializeMap: SerializeMap<…>;`). */
  b?: string[];
  /** A generic type alias's parameters in order (`type Result<T, E = Error>`: ['T', 'E']). */
  g?: string[];
  /** Its defaulted parameters' types (`{ E: 'anyhow::Error' }`). */
  gd?: Record<string, string>;
  st?: string[];
  self?: string;
  trait?: string;
  t?: string;
  m?: string;
  /** With `m`: `#[macro_export(local_inner_macros)]`. */
  li?: 1;
  /** A module's public re-exports of other crates' items: name -> the item's definition path (its qpath). */
  x?: Record<string, string>;
}

/** One node of a dependency crate as the lake stores it (the columns resolution reads). */
export interface DepNode {
  id: string;
  kind: NodeKind;
  name: string;
  qpath: string;
  parent: string | null;
  publicPaths: string[];
  typeInfo: TypeInfo | null;
}

/** A dependency crate's nodes, as loaded from the lake (or from this run's results). */
export interface DepCrate {
  /** `name@version`. */
  krate: string;
  /** Where its ids live (`@universe` or a repo). */
  repo: string;
  nodes: DepNode[];
}

export function encodeTypeInfo(t: TypeInfo): string | null {
  const keys = Object.keys(t) as (keyof TypeInfo)[];
  if (keys.every((k) => t[k] === undefined)) return null;
  return JSON.stringify(t);
}

export function decodeTypeInfo(s: string | null): TypeInfo | null {
  if (!s) return null;
  try {
    const v: unknown = JSON.parse(s);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as TypeInfo) : null;
  } catch {
    return null;
  }
}

/**
 * parseType's answers by text, shared by the crates a thread resolves (the
 * same dependency summaries' texts are read for each crate depending on
 * them). Safe because a TypeRef is never changed once made; cleared at
 * PARSED_TYPES_CAP entries, so memory stays bounded.
 */
const parsedTypes = new Map<string, TypeRef>();
const PARSED_TYPES_CAP = 65_536;

/**
 * A type text (as written by typeText) back to a TypeRef. Accepts paths with
 * `<…>` arguments and `Name = T` bindings, `&`, `&mut`, `*`, `[T]`, tuples,
 * `dyn A + B`, `<T as Tr>::N`, `fn(A) -> R`; anything else is `other`.
 */
export function parseType(text: string): TypeRef {
  let t = parsedTypes.get(text);
  if (t === undefined) {
    const p = new TypeParser(text);
    t = p.type();
    if (!p.done()) t = { k: 'other', text };
    if (parsedTypes.size >= PARSED_TYPES_CAP) parsedTypes.clear();
    parsedTypes.set(text, t);
  }
  return t;
}

class TypeParser {
  private i = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    this.ws();
    return this.i >= this.s.length;
  }

  private ws(): void {
    while (this.i < this.s.length && this.s[this.i] === ' ') this.i++;
  }

  private eat(tok: string): boolean {
    this.ws();
    if (this.s.startsWith(tok, this.i)) {
      this.i += tok.length;
      return true;
    }
    return false;
  }

  private ident(): string {
    this.ws();
    const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(this.s.slice(this.i));
    if (!m) return '';
    this.i += m[0].length;
    return m[0];
  }

  type(): TypeRef {
    if (this.eat('&')) {
      this.eat("'_");
      const mut = this.eat('mut ');
      return { k: 'ref', mut, of: this.type() };
    }
    if (this.eat('*')) {
      if (!this.eat('const ')) this.eat('mut ');
      return { k: 'ptr', of: this.type() };
    }
    if (this.eat('[')) {
      const of = this.type();
      while (this.i < this.s.length && this.s[this.i] !== ']') this.i++;
      this.eat(']');
      return { k: 'slice', of };
    }
    if (this.eat('(')) {
      const of: TypeRef[] = [];
      while (!this.eat(')')) {
        if (this.i >= this.s.length) break;
        of.push(this.type());
        this.eat(',');
      }
      return { k: 'tuple', of };
    }
    if (this.eat('fn(')) {
      // `fn(A, B) -> R` (renderTy's spelling of a fn pointer)
      const start = this.i - 3;
      const params: TypeRef[] = [];
      while (!this.eat(')')) {
        if (this.i >= this.s.length) break;
        params.push(this.type());
        this.eat(',');
      }
      const ret = this.eat('->') ? this.type() : null;
      return { k: 'fn', params, ret, text: this.s.slice(start, this.i).trim() };
    }
    if (this.eat('dyn ')) {
      const bounds: TypeRef[] = [this.type()];
      while (this.eat('+')) bounds.push(this.type());
      return { k: 'dyn', bounds };
    }
    if (this.eat('<')) {
      const self = this.type();
      const trait = this.eat('as ') ? this.type() : null;
      this.eat('>');
      this.eat('::');
      return { k: 'qself', self, trait, name: this.ident() };
    }
    const segs: string[] = [];
    if (this.eat('::')) segs.push('');
    for (;;) {
      const id = this.ident();
      if (!id) break;
      segs.push(id);
      if (!this.s.startsWith('::', this.i) || this.s[this.i + 2] === '<') break;
      this.i += 2;
    }
    if (segs.length === 0 || (segs.length === 1 && segs[0] === '')) {
      const rest = this.s.slice(this.i);
      this.i = this.s.length;
      return { k: 'other', text: rest };
    }
    const path = segs.join('::');
    if (segs.length === 1 && PRIMS.has(path)) return { k: 'prim', name: path };
    const args: TypeRef[] = [];
    const assoc: { name: string; ty: TypeRef }[] = [];
    if (this.eat('<')) {
      while (!this.eat('>')) {
        if (this.i >= this.s.length) break;
        const save = this.i;
        const name = this.ident();
        if (name && this.eat('=')) {
          assoc.push({ name, ty: this.type() });
        } else {
          this.i = save;
          args.push(this.type());
        }
        this.eat(',');
      }
    }
    if (this.eat('::')) {
      // `Foo<T>::Assoc`
      const name = this.ident();
      return { k: 'qself', self: { k: 'path', path, args }, trait: null, name };
    }
    return assoc.length > 0 ? { k: 'path', path, args, assoc } : { k: 'path', path, args };
  }
}

const PRIMS = new Set([
  'u8', 'u16', 'u32', 'u64', 'u128', 'usize', 'i8', 'i16', 'i32', 'i64', 'i128', 'isize', 'f32', 'f64', 'bool', 'char', 'str', '!',
]);
