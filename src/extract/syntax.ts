// Small readers over tree-sitter nodes shared by the item reader (parser.ts)
// and the body reader (body.ts): node text, paths without generic
// arguments, and types as plain `TypeRef` data.
//
// Invariant: pure functions of (source text, node); they never throw on odd
// syntax — an unknown type shape is `{ k: 'other' }`, an unknown path shape
// is its text with whitespace removed. Tree-sitter indices are UTF-16 code
// units, so a node's text is `src.slice(startIndex, endIndex)`.
import type { SyntaxNode as Node } from './tree.ts';
import type { GenericParam, TypeRef } from './types.ts';

/** Whitespace that `collapse` changes: a character other than a space, or two spaces in a row. */
const RUN = /[^\S ]| {2}/;

export function collapse(s: string): string {
  // most texts have single spaces only: then the replace would copy the string to the same text
  return RUN.test(s) ? s.replace(/\s+/g, ' ').trim() : s.trim();
}

export class Syntax {
  constructor(readonly src: string) {}

  text(node: Node): string {
    return this.src.slice(node.startIndex, node.endIndex);
  }

  /** A path node as `a::b::c`, generic arguments dropped. */
  pathText(node: Node): string {
    switch (node.type) {
      case 'scoped_identifier':
      case 'scoped_type_identifier':
      case 'scoped_use_list': {
        const p = node.childForFieldName('path');
        const n = node.childForFieldName('name');
        const head = p ? this.pathText(p) : '';
        const tail = n ? this.text(n) : '';
        return head ? `${head}::${tail}` : p === null && this.src.startsWith('::', node.startIndex) ? `::${tail}` : tail;
      }
      case 'generic_type':
      case 'generic_type_with_turbofish': {
        const t = node.childForFieldName('type');
        return t ? this.pathText(t) : collapse(this.text(node));
      }
      case 'generic_function': {
        const f = node.childForFieldName('function');
        return f ? this.pathText(f) : collapse(this.text(node));
      }
      default:
        return this.text(node).replace(/\s+/g, '');
    }
  }

  /** The path of a type without its generic arguments (`a::B<T>` -> `a::B`, `&mut X` -> `X`). */
  typePath(node: Node): string {
    switch (node.type) {
      case 'generic_type':
      case 'reference_type':
      case 'pointer_type': {
        const t = node.childForFieldName('type');
        return t ? this.typePath(t) : collapse(this.text(node));
      }
      case 'type_identifier':
      case 'scoped_type_identifier':
      case 'scoped_identifier':
      case 'identifier':
        return this.pathText(node);
      default:
        return collapse(this.text(node));
    }
  }

  /** A type as plain data (see TypeRef). */
  typeOf(node: Node | null): TypeRef {
    if (!node) return { k: 'other', text: '' };
    switch (node.type) {
      case 'type_identifier':
      case 'identifier':
        return { k: 'path', path: this.text(node), args: [] };
      case 'scoped_type_identifier':
      case 'scoped_identifier': {
        const p = node.childForFieldName('path');
        const n = node.childForFieldName('name');
        if (p && (p.type === 'bracketed_type' || p.type === 'generic_type') && n) {
          const inner = p.type === 'bracketed_type' ? p.namedChildren.find((c) => c !== null) ?? null : null;
          if (inner && inner.type === 'qualified_type') {
            const t = inner.childForFieldName('type');
            const a = inner.childForFieldName('alias');
            return { k: 'qself', self: this.typeOf(t), trait: a ? this.typeOf(a) : null, name: this.text(n) };
          }
          if (p.type === 'generic_type') {
            // `Foo<T>::Assoc`: rare; the path without arguments
            return { k: 'path', path: `${this.pathText(p)}::${this.text(n)}`, args: [] };
          }
        }
        const path = this.pathText(node);
        return { k: 'path', path, args: [] };
      }
      case 'generic_type': {
        const t = node.childForFieldName('type');
        const base = t ? this.typeOf(t) : { k: 'other' as const, text: this.text(node) };
        if (base.k !== 'path') return base;
        const args: TypeRef[] = [];
        const assoc: { name: string; ty: TypeRef }[] = [];
        for (const a of node.childForFieldName('type_arguments')?.namedChildren ?? []) {
          if (!a || a.type === 'lifetime' || a.type === 'line_comment' || a.type === 'block_comment') continue;
          if (a.type === 'type_binding') {
            const n = a.childForFieldName('name');
            if (n) assoc.push({ name: this.text(n), ty: this.typeOf(a.childForFieldName('type')) });
            continue;
          }
          args.push(this.typeOf(a));
        }
        return assoc.length > 0 ? { ...base, args, assoc } : { ...base, args };
      }
      case 'reference_type': {
        const mut = node.namedChildren.some((c) => c?.type === 'mutable_specifier');
        return { k: 'ref', mut, of: this.typeOf(node.childForFieldName('type')) };
      }
      case 'pointer_type':
        return { k: 'ptr', of: this.typeOf(node.childForFieldName('type')) };
      case 'array_type':
        return { k: 'slice', of: this.typeOf(node.childForFieldName('element')) };
      case 'tuple_type':
        return { k: 'tuple', of: node.namedChildren.filter((c): c is Node => c !== null && !c.type.endsWith('comment')).map((c) => this.typeOf(c)) };
      case 'unit_type':
        return { k: 'tuple', of: [] };
      case 'primitive_type':
        return { k: 'prim', name: this.text(node) };
      case 'never_type':
        return { k: 'prim', name: '!' };
      case 'dynamic_type':
      case 'abstract_type': {
        const t = node.childForFieldName('trait');
        if (t) return { k: 'dyn', bounds: this.boundsOf(t) };
        return { k: 'dyn', bounds: node.namedChildren.flatMap((c) => (c ? this.boundsOf(c) : [])) };
      }
      case 'bounded_type':
        return { k: 'dyn', bounds: node.namedChildren.flatMap((c) => (c ? this.boundsOf(c) : [])) };
      case 'parenthesized_type': {
        const inner = node.namedChildren.find((c) => c !== null) ?? null;
        return this.typeOf(inner);
      }
      case 'function_type': {
        // `unsafe extern "C" fn(A, x: B) -> R`; a bare `Fn(A)` (edition 2015's trait object) stays `other`
        if (node.childForFieldName('trait')) return { k: 'other', text: collapse(this.text(node)) };
        const ret = node.childForFieldName('return_type');
        return { k: 'fn', params: this.fnParams(node), ret: ret ? this.typeOf(ret) : null, text: collapse(this.text(node)) };
      }
      default:
        return { k: 'other', text: collapse(this.text(node)) };
    }
  }

  /** Trait bounds of a bounds node (`A + B<C> + ?Sized + 'a`), lifetimes and `?Sized` dropped. */
  boundsOf(node: Node): TypeRef[] {
    switch (node.type) {
      case 'trait_bounds':
      case 'bounded_type':
        return node.namedChildren.flatMap((c) => (c ? this.boundsOf(c) : []));
      case 'lifetime':
      case 'removed_trait_bound':
      case 'line_comment':
      case 'block_comment':
        return [];
      case 'higher_ranked_trait_bound': {
        const t = node.childForFieldName('type');
        return t ? this.boundsOf(t) : [];
      }
      case 'function_type': {
        // `F: Fn(A) -> B`: the trait is the function's name; its parameters one tuple argument, its
        // result the `Output` binding (rustc's `Fn<(A,), Output = B>`)
        const ret = node.childForFieldName('return_type');
        const bound: TypeRef = { k: 'path', path: this.pathText(node.childForFieldName('trait') ?? node), args: [{ k: 'tuple', of: this.fnParams(node) }] };
        if (ret) bound.assoc = [{ name: 'Output', ty: this.typeOf(ret) }];
        return [bound];
      }
      default: {
        const t = this.typeOf(node);
        return t.k === 'path' ? [t] : [];
      }
    }
  }

  /** The parameter types of a `function_type` (`fn(A, x: B)`, `Fn(A, B)`). */
  private fnParams(node: Node): TypeRef[] {
    const params = node.childForFieldName('parameters');
    return (params?.namedChildren ?? []).filter((c): c is Node => c !== null && !c.type.endsWith('comment') && c.type !== 'attribute_item')
      .map((c) => this.typeOf(c.type === 'parameter' ? c.childForFieldName('type') : c));
  }

  /** Type parameters with bounds, from `type_parameters` and a `where` clause (`T: …` and `T::X: …` predicates only). */
  genericParams(node: Node): GenericParam[] {
    const out: GenericParam[] = [];
    const tp = node.childForFieldName('type_parameters');
    for (const p of tp?.namedChildren ?? []) {
      if (!p) continue;
      if (p.type === 'type_parameter' || p.type === 'constrained_type_parameter' || p.type === 'optional_type_parameter') {
        const n = p.childForFieldName('name') ?? p.childForFieldName('left') ?? p.namedChildren.find((c) => c?.type === 'type_identifier') ?? null;
        const b = p.childForFieldName('bounds');
        const d = p.childForFieldName('default_type');
        if (n) out.push({ name: this.text(n), bounds: b ? this.boundsOf(b) : [], ...(d ? { default: this.typeOf(d) } : {}) });
      } else if (p.type === 'type_identifier') {
        out.push({ name: this.text(p), bounds: [] });
      } else if (p.type === 'const_parameter') {
        const n = p.childForFieldName('name');
        if (n) out.push({ name: this.text(n), bounds: [] });
      }
    }
    const where = node.namedChildOfType('where_clause');
    for (const pred of where?.namedChildren ?? []) {
      if (!pred || pred.type !== 'where_predicate') continue;
      const left = pred.childForFieldName('left');
      const b = pred.childForFieldName('bounds');
      // `T: …`, and `T::X: …` (a projection's bounds, kept under that name: `where G::NodeId: GraphIndex`)
      if (!left || !b || (left.type !== 'type_identifier' && !(left.type === 'scoped_type_identifier' && /^[A-Za-z_]\w*::[A-Za-z_]\w*$/.test(this.text(left))))) continue;
      const name = this.text(left);
      const bounds = this.boundsOf(b);
      const known = out.find((g) => g.name === name);
      if (known) known.bounds.push(...bounds);
      else out.push({ name, bounds, whereOnly: true });
    }
    return out;
  }
}

/** A TypeRef as Rust text (paths as given), for signatures and impl paths. */
export function typeText(t: TypeRef, path: (p: string) => string = (p) => p): string {
  switch (t.k) {
    case 'path': {
      const args = t.args.map((a) => typeText(a, path));
      for (const a of t.assoc ?? []) args.push(`${a.name} = ${typeText(a.ty, path)}`);
      return args.length > 0 ? `${path(t.path)}<${args.join(', ')}>` : path(t.path);
    }
    case 'ref': return `&${t.mut ? 'mut ' : ''}${typeText(t.of, path)}`;
    case 'ptr': return `*${typeText(t.of, path)}`;
    case 'slice': return `[${typeText(t.of, path)}]`;
    case 'tuple': return t.of.length === 1 ? `(${typeText(t.of[0]!, path)},)` : `(${t.of.map((x) => typeText(x, path)).join(', ')})`;
    case 'dyn': return `dyn ${t.bounds.map((b) => typeText(b, path)).join(' + ')}`;
    case 'prim': return t.name;
    case 'qself': return t.trait ? `<${typeText(t.self, path)} as ${typeText(t.trait, path)}>::${t.name}` : `${typeText(t.self, path)}::${t.name}`;
    case 'fn': return t.text;
    case 'other': return t.text;
  }
}
