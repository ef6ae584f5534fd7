// A function body (or a const/static initialiser) -> what resolution needs
// of it: the calls written in it (path calls, method calls with their
// receiver expressions, macro invocations), its local names (`let`,
// parameters, closures, `for`, `if let`, `match` arms) and the spans of
// statements under `#[cfg]`. One walk over the body's syntax tree.
//
// Invariants: positions are the name token's (`m` in `a.b().m()`, `f` in
// `a::f()`, the macro name in `m!()`), 1-based lines and columns. Receiver
// expressions are plain data (types.ts `Expr`) shared between the calls of a
// chain, built once per syntax node. Never throws on odd syntax: what it does
// not understand is `{ k: 'unknown' }`.
import type { SyntaxNode as Node } from './tree.ts';
import { Syntax, collapse } from './syntax.ts';
import type { Binding, Expr, Item, MacroCall, Projection, Ref, TypeRef, UseDecl } from './types.ts';

/**
 * A list of node types whose `includes` is a set lookup. web-tree-sitter's
 * `descendantsOfType` turns its type names into symbols by calling
 * `types.includes` once per type of the grammar (~330) on every call, which
 * was most of its cost in the body walk; with this list it is one hash lookup
 * each. Still a plain array of the names for any other reader.
 */
class TypeList extends Array<string> {
  private readonly set: Set<string>;
  constructor(types: readonly string[]) {
    super();
    this.push(...types);
    this.set = new Set(types);
  }
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }
  override includes(type: string): boolean {
    return this.set.has(type);
  }
}

const WALKED = new TypeList([
  'call_expression', 'macro_invocation', 'use_declaration', 'let_declaration', 'closure_expression', 'for_expression',
  'let_condition', 'match_expression', 'attribute_item', 'function_item', 'impl_item', 'assignment_expression',
  'scoped_identifier',
]);

/** Parents of a `scoped_identifier` that is no value named in an expression or pattern (a prefix, an import, a macro's or attribute's name). */
const NOT_VALUE_PARENTS: ReadonlySet<string> = new Set([
  'scoped_identifier', 'scoped_type_identifier', 'use_declaration', 'use_as_clause', 'scoped_use_list', 'use_list', 'use_wildcard',
  'macro_invocation', 'attribute', 'meta_item', 'visibility_modifier',
]);

/** Arms of a `match` whose values are kept as its possible types (the first known one wins). */
const MAX_ARMS = 8;

export class BodyReader {
  private readonly exprs = new Map<number, Expr>();

  constructor(
    private readonly syn: Syntax, private readonly flattenUse: (node: Node, line: number, out: UseDecl[]) => void,
    private readonly nestedImpl: (node: Node, owner: Item) => void = () => {},
  ) {}

  /**
   * Read `body` into `item` (refs, bindings, cfg spans; with `uses`, its `use` declarations too).
   * An `impl` written in the body is an item of its own (handed to `nestedImpl`, rustdoc lists it):
   * nothing inside it is read as the body's.
   */
  read(body: Node, item: Item, uses: boolean): void {
    const bindings: Binding[] = item.bindings ?? [];
    let skipTo = -1;
    for (const n of body.descendantsOfType(WALKED)) {
      if (!n || n.startIndex < skipTo) continue;
      switch (n.type) {
        case 'impl_item':
          skipTo = n.endIndex;
          this.nestedImpl(n, item);
          break;
        case 'assignment_expression': {
          // `let x; … x = e;` / `let mut x = None; … x = Some(e);`: e gives x's type from here on
          const left = n.childForFieldName('left');
          const right = n.childForFieldName('right');
          if (left?.type !== 'identifier' || !right) break;
          const name = this.syn.text(left);
          let last: Binding | undefined;
          for (const b of bindings) if (b.name === name && b.at <= n.startIndex && (b.until === undefined || n.startIndex < b.until)) last = b;
          if (last && !last.ty && (!last.init || (last.init.k === 'path' && last.init.path === 'None'))) {
            bindings.push({ name, at: n.endIndex, init: this.expr(right), from: n.startIndex });
          }
          break;
        }
        case 'call_expression':
          this.call(n, item.refs);
          break;
        case 'scoped_identifier':
          this.valueRef(n, item.refs);
          break;
        case 'macro_invocation': {
          macroRef(this.syn, n, item.refs);
          const call = bodyMacro(this.syn, n);
          if (call) (item.bodyMacros ??= []).push(call);
          break;
        }
        case 'use_declaration': {
          if (!uses) break;
          const arg = n.childForFieldName('argument');
          if (arg) this.flattenUse(arg, n.startPosition.row + 1, item.uses);
          break;
        }
        case 'let_declaration': {
          const pat = n.childForFieldName('pattern');
          const ty = n.childForFieldName('type');
          const value = n.childForFieldName('value');
          // visible to the end of its block (`let (byte, rest) = …;` in a match arm does not shadow the fn `byte` after it)
          const until = n.parent?.type === 'block' ? n.parent.endIndex : undefined;
          if (pat) this.bind(pat, n.endIndex, ty ? this.syn.typeOf(ty) : undefined, value ? this.expr(value) : undefined, 'value', bindings, { from: n.startIndex, until });
          break;
        }
        case 'function_item':
          // an fn nested in the body: its parameters are names in its own body
          for (const p of n.childForFieldName('parameters')?.namedChildren ?? []) {
            if (p?.type !== 'parameter') continue;
            const pat = p.childForFieldName('pattern');
            const ty = p.childForFieldName('type');
            if (pat && ty) this.bind(pat, n.startIndex, this.syn.typeOf(ty), undefined, 'value', bindings, { until: n.endIndex });
          }
          break;
        case 'closure_expression': {
          const ctx = this.closureContext(n);
          let i = 0;
          const params = n.childForFieldName('parameters');
          for (const p of params ? elements(params) : []) {
            const closure = ctx ? { ...ctx.closure, param: i } : undefined;
            i++;
            if (!p) continue; // `_`: a position, no name
            const pat = p.type === 'parameter' ? p.childForFieldName('pattern') : p;
            const ty = p.type === 'parameter' ? p.childForFieldName('type') : null;
            if (!pat) continue;
            const until = n.endIndex;
            if (ty) this.bind(pat, n.startIndex, this.syn.typeOf(ty), undefined, 'value', bindings, { until });
            else if (ctx && closure) this.bind(pat, n.startIndex, undefined, ctx.recv, 'closure', bindings, { closure, from: ctx.from, until });
            else this.bind(pat, n.startIndex, undefined, undefined, 'value', bindings, { until });
          }
          break;
        }
        case 'for_expression': {
          const pat = n.childForFieldName('pattern');
          const value = n.childForFieldName('value');
          const block = n.childForFieldName('body');
          if (pat && value) this.bind(pat, block ? block.startIndex : n.startIndex, undefined, this.expr(value), 'iter', bindings, { from: n.startIndex, until: n.endIndex });
          break;
        }
        case 'let_condition': {
          const pat = n.childForFieldName('pattern');
          const value = n.childForFieldName('value');
          // visible in the `if let`/`while let` body (and later conditions of a chain)
          const owner = n.parent?.type === 'let_chain' ? n.parent.parent : n.parent;
          if (pat && value) this.bind(pat, n.endIndex, undefined, this.expr(value), 'value', bindings, { from: n.startIndex, until: owner?.endIndex });
          if (pat) this.patternNames(pat, item.refs);
          break;
        }
        case 'match_expression': {
          const value = n.childForFieldName('value');
          if (!value) break;
          const scrutinee = this.expr(value);
          for (const arm of n.childForFieldName('body')?.namedChildren ?? []) {
            if (!arm || arm.type !== 'match_arm') continue;
            const mp = arm.childForFieldName('pattern');
            const pat = mp?.namedChildren.find((c) => c !== null && !c.type.endsWith('comment')) ?? null;
            if (pat) this.bind(pat, mp!.endIndex, undefined, scrutinee, 'value', bindings, { from: n.startIndex, until: arm.endIndex });
            if (pat) this.patternNames(pat, item.refs);
          }
          break;
        }
        case 'attribute_item': {
          const text = attrText(this.syn, n);
          if (!text || !(text.startsWith('cfg(') || text.startsWith('cfg_attr('))) break;
          let next = n.nextNamedSibling;
          while (next && (next.type === 'attribute_item' || next.type.endsWith('comment'))) next = next.nextNamedSibling;
          if (next) (item.cfgSpans ??= []).push([next.startIndex, next.endIndex, [text]]);
          break;
        }
      }
    }
    if (bindings.length > 0) item.bindings = bindings;
  }

  /** A call: `f(…)`, `a::f(…)`, `x.m(…)`, `f::<T>(…)`, `x.m::<T>(…)`. */
  private call(n: Node, out: Ref[]): void {
    const f = n.childForFieldName('function');
    if (!f) return;
    const callee = f.type === 'generic_function' ? f.childForFieldName('function') ?? f : f;
    switch (callee.type) {
      case 'identifier':
      case 'scoped_identifier': {
        const name = callee.type === 'identifier' ? callee : callee.childForFieldName('name') ?? callee;
        const head = callee.type === 'scoped_identifier' ? callee.childForFieldName('path') : null;
        const qualified = head?.type === 'bracketed_type' ? head.namedChildren.find((c) => c !== null && !c.type.endsWith('comment')) ?? null : null;
        if (qualified) {
          // `<T as Trait>::f(…)` / `<T>::f(…)`
          const isQ = qualified.type === 'qualified_type';
          const self = this.syn.typeOf(isQ ? qualified.childForFieldName('type') : qualified);
          const trait = isQ ? this.syn.typeOf(qualified.childForFieldName('alias')) : null;
          out.push({
            kind: 'calls', target: collapse(this.syn.text(callee)), line: name.startPosition.row + 1, col: name.startPosition.column + 1,
            at: n.startIndex, qself: { self, trait },
          });
          return;
        }
        const ref: Ref = { kind: 'calls', target: this.syn.pathText(callee), line: name.startPosition.row + 1, col: name.startPosition.column + 1, at: n.startIndex };
        const a0 = callee.type === 'scoped_identifier' ? firstArg(n) : null;
        if (a0) ref.a0 = this.expr(a0);
        out.push(ref);
        return;
      }
      case 'field_expression': {
        const field = callee.childForFieldName('field');
        const value = callee.childForFieldName('value');
        if (!field) return;
        const ref: Ref = {
          kind: 'calls', target: `.${this.syn.text(field)}`, line: field.startPosition.row + 1, col: field.startPosition.column + 1,
          recv: value ? this.expr(value) : { k: 'unknown', what: 'none' }, at: n.startIndex,
        };
        const a0 = firstArg(n);
        if (a0) ref.a0 = this.expr(a0);
        out.push(ref);
        return;
      }
      default:
    }
  }

  /**
   * A path naming a value where it is not called: an expression or a pattern
   * (`Walk::Quit => …`, `x == Walk::Quit`, `Walk::Skip(n)` as a pattern, `self::LIMIT`).
   * The callee of a call is the call's (call), a path inside a longer one, a
   * `use` or a macro name none.
   */
  private valueRef(n: Node, out: Ref[]): void {
    const parent = n.parent;
    if (!parent || NOT_VALUE_PARENTS.has(parent.type)) return;
    const callee = (c: Node) => c.type === 'call_expression' && c.childForFieldName('function')?.id === n.id;
    if (callee(parent)) return;
    if (parent.type === 'generic_function' && parent.parent?.type === 'call_expression' && parent.parent.childForFieldName('function')?.id === parent.id) return;
    const name = n.childForFieldName('name') ?? n;
    out.push({ kind: 'value_ref', target: this.syn.pathText(n), line: name.startPosition.row + 1, col: name.startPosition.column + 1, at: n.startIndex });
  }

  /**
   * Bare names in a refutable pattern (a match arm's, an `if let`'s) that may
   * name a value: `Quit`, the head of `Skip(n)` — value_refs marked `pat`,
   * kept by resolution only when they name a constant-like item. Names a
   * pattern binds for sure (`ref x`, `mut x`, `x @ …`, struct fields) are none.
   */
  private patternNames(pat: Node, out: Ref[]): void {
    const bare = (n: Node) => out.push({ kind: 'value_ref', target: this.syn.text(n), line: n.startPosition.row + 1, col: n.startPosition.column + 1, at: n.startIndex, pat: true });
    switch (pat.type) {
      case 'identifier':
        bare(pat);
        return;
      case 'tuple_struct_pattern': {
        const head = pat.childForFieldName('type');
        if (head?.type === 'identifier') bare(head);
        for (const e of elements(pat, head)) if (e) this.patternNames(e, out);
        return;
      }
      case 'struct_pattern':
        for (const c of pat.namedChildren) {
          const p = c?.type === 'field_pattern' ? c.childForFieldName('pattern') : null;
          if (p) this.patternNames(p, out);
        }
        return;
      case 'captured_pattern': {
        const inner = pat.namedChildren.filter((c): c is Node => c !== null && !c.type.endsWith('comment'));
        for (const c of inner.slice(1)) this.patternNames(c, out);
        return;
      }
      case 'or_pattern':
      case 'tuple_pattern':
      case 'slice_pattern':
      case 'reference_pattern':
      case 'match_pattern':
        for (const c of pat.namedChildren) if (c && !c.type.endsWith('comment')) this.patternNames(c, out);
        return;
      default:
    }
  }

  /** Where a closure is an argument of a call: the receiver and method (or the called path, `fn`) and the argument's position. */
  private closureContext(n: Node): { recv: Expr; from: number; closure: NonNullable<Binding['closure']> } | null {
    // the argument is the closure, or `&mut |…| …` (a `&mut dyn FnMut(…)` parameter)
    let argNode = n;
    while (argNode.parent?.type === 'reference_expression') argNode = argNode.parent;
    const args = argNode.parent;
    const call = args?.parent;
    if (!args || args.type !== 'arguments' || !call || call.type !== 'call_expression') return null;
    const f = call.childForFieldName('function');
    const callee = f?.type === 'generic_function' ? f.childForFieldName('function') : f;
    const arg = args.namedChildren.filter((c) => c !== null && !c.type.endsWith('comment') && c.type !== 'attribute_item').findIndex((c) => c!.id === argNode.id);
    if (callee && (callee.type === 'identifier' || callee.type === 'scoped_identifier')) {
      return { recv: { k: 'path', path: this.syn.pathText(callee) }, from: callee.startIndex, closure: { method: '', arg, param: 0, fn: true } };
    }
    if (!callee || callee.type !== 'field_expression') return null;
    const value = callee.childForFieldName('value');
    const field = callee.childForFieldName('field');
    if (!value || !field) return null;
    return { recv: this.expr(value), from: value.startIndex, closure: { method: this.syn.text(field), arg, param: 0 } };
  }

  /** Names bound by a pattern; `via` and `how` (closure, projections, read offset, scope end) say how their type follows from `init`. */
  private bind(
    pat: Node, at: number, ty: TypeRef | undefined, init: Expr | undefined, via: Binding['via'], out: Binding[],
    how: Pick<Binding, 'closure' | 'proj' | 'from' | 'until'> = {},
  ): void {
    const name = (n: Node) => {
      const b: Binding = { name: this.syn.text(n), at };
      if (how.until !== undefined) b.until = how.until;
      if (ty) b.ty = ty;
      if (init) {
        b.init = init;
        if (via && via !== 'value') b.via = via;
        if (how.closure) b.closure = how.closure;
        if (how.proj && how.proj.length > 0) b.proj = how.proj;
        if (how.from !== undefined) b.from = how.from;
      }
      out.push(b);
    };
    const into = (p: Projection): Pick<Binding, 'closure' | 'proj' | 'from' | 'until'> => ({ ...how, proj: [...(how.proj ?? []), p] });
    const untyped = (n: Node) => this.bind(n, at, undefined, undefined, 'value', out, { until: how.until });
    switch (pat.type) {
      case 'identifier':
      case 'shorthand_field_identifier':
        name(pat);
        return;
      case 'scoped_identifier':
        // a path pattern (`Delimiter::Brace =>`) names a constant or unit variant: it binds nothing
        return;
      case 'reference_pattern': {
        // `&x` binds what the reference points to
        const inner = pat.namedChildren.find((c): c is Node => c !== null && c.type !== 'mutable_specifier' && !c.type.endsWith('comment'));
        if (!inner) return;
        if (ty) this.bind(inner, at, ty.k === 'ref' ? ty.of : undefined, undefined, 'value', out, { until: how.until });
        else if (init) this.bind(inner, at, undefined, init, via, out, into({ deref: true }));
        else untyped(inner);
        return;
      }
      case 'mut_pattern':
      case 'ref_pattern':
      case 'captured_pattern': {
        const inner = pat.namedChildren.filter((c): c is Node => c !== null && c.type !== 'mutable_specifier');
        // `x @ P` binds x to the whole value
        const first = inner[0];
        if (first) this.bind(first, at, ty, init, via, out, how);
        return;
      }
      case 'tuple_pattern': {
        // positions count `_`; after `..` they count from the end (negative)
        const elems = elements(pat);
        const rest = elems.findIndex((e) => e?.type === 'remaining_field_pattern');
        elems.forEach((e, i) => {
          if (!e || i === rest) return;
          const elem = rest >= 0 && i > rest ? i - elems.length : i;
          const written = ty?.k === 'tuple' ? ty.of[elem < 0 ? ty.of.length + elem : elem] : undefined;
          if (ty) this.bind(e, at, written, undefined, 'value', out, { until: how.until });
          else if (init) this.bind(e, at, undefined, init, via, out, into({ elem }));
          else untyped(e);
        });
        return;
      }
      case 'tuple_struct_pattern': {
        const head = pat.childForFieldName('type');
        const path = head ? this.syn.pathText(head) : '';
        const elems = elements(pat, head);
        const rest = elems.findIndex((e) => e?.type === 'remaining_field_pattern');
        const wraps = (path === 'Some' || path === 'Ok' || path === 'Option::Some' || path === 'Result::Ok') && elems.length === 1;
        const err = (path === 'Err' || path === 'Result::Err') && elems.length === 1;
        elems.forEach((e, i) => {
          if (!e || i === rest) return;
          if (!init || path === 'None' || (rest >= 0 && i > rest)) untyped(e);
          else if (err) this.bind(e, at, undefined, init, via, out, into({ path: 'Err', field: '0' }));
          else if (wraps && via === 'value' && !how.proj) this.bind(e, at, undefined, init, 'some', out, { from: how.from, until: how.until });
          else this.bind(e, at, undefined, init, via, out, into(wraps ? { path: 'Some', field: '0' } : { path, field: String(i) }));
        });
        return;
      }
      case 'struct_pattern': {
        const head = pat.childForFieldName('type');
        const path = head ? this.syn.pathText(head) : '';
        for (const c of pat.namedChildren) {
          if (!c || c.type !== 'field_pattern') continue;
          const fieldNode = c.childForFieldName('name');
          const sub = c.childForFieldName('pattern');
          if (!fieldNode) continue;
          const field = this.syn.text(fieldNode);
          const target = sub ?? fieldNode; // `Foo { a, ref b, c: pat }`
          if (init) this.bind(target, at, undefined, init, via, out, into({ path, field }));
          else untyped(target);
        }
        return;
      }
      default:
        // slices, or-patterns, literals: their names get no type
        for (const c of pat.namedChildren) {
          if (!c) continue;
          if (c.type === 'identifier' || c.type === 'shorthand_field_identifier') untyped(c);
          else if (c.type.endsWith('pattern')) untyped(c);
        }
    }
  }

  /** An expression as plain data, built once per node. */
  expr(n: Node): Expr {
    const known = this.exprs.get(n.id);
    if (known) return known;
    const e = this.exprOf(n);
    this.exprs.set(n.id, e);
    return e;
  }

  private exprOf(n: Node): Expr {
    switch (n.type) {
      case 'identifier':
      case 'self':
      case 'scoped_identifier':
        return { k: 'path', path: this.syn.pathText(n) };
      case 'call_expression': {
        const f = n.childForFieldName('function');
        if (!f) return { k: 'unknown', what: n.type };
        const generic = f.type === 'generic_function';
        const callee = generic ? f.childForFieldName('function') ?? f : f;
        const targs = generic ? this.typeArgs(f) : undefined;
        if (callee.type === 'field_expression') {
          const value = callee.childForFieldName('value');
          const field = callee.childForFieldName('field');
          if (!value || !field) return { k: 'unknown', what: n.type };
          const e: Expr = { k: 'mcall', recv: this.expr(value), name: this.syn.text(field) };
          if (targs) e.targs = targs;
          const a0 = firstArg(n);
          if (a0) e.a0 = this.expr(a0);
          return e;
        }
        if (callee.type === 'identifier' || callee.type === 'scoped_identifier') {
          const e: Expr = { k: 'call', f: this.syn.pathText(callee) };
          if (targs) e.targs = targs;
          const a0 = firstArg(n);
          if (a0) e.a0 = this.expr(a0);
          return e;
        }
        // a value called: `(vtable(p).object_ref)(e)`, `make()(x)`
        const e: Expr = { k: 'vcall', f: this.expr(callee) };
        const a0 = firstArg(n);
        if (a0) e.a0 = this.expr(a0);
        return e;
      }
      case 'field_expression': {
        const value = n.childForFieldName('value');
        const field = n.childForFieldName('field');
        if (!value || !field) return { k: 'unknown', what: n.type };
        return { k: 'field', recv: this.expr(value), name: this.syn.text(field) };
      }
      case 'try_expression':
      case 'reference_expression':
      case 'parenthesized_expression':
      case 'await_expression': {
        const inner = n.childForFieldName('value') ?? n.namedChildren.find((c) => c !== null && !c.type.endsWith('comment')) ?? null;
        if (!inner) return { k: 'unknown', what: n.type };
        if (n.type === 'try_expression') return { k: 'try', of: this.expr(inner) };
        // edition 2015's `try!(e)`: `try` is a keyword to the grammar, which reads `(e)` after an error node
        if (n.type === 'parenthesized_expression' && /\btry\s*!\s*$/.test(this.syn.src.slice(Math.max(0, n.startIndex - 12), n.startIndex))) {
          return { k: 'try', of: this.expr(inner) };
        }
        if (n.type === 'await_expression') return { k: 'unknown', what: 'await' };
        return this.expr(inner);
      }
      case 'unary_expression': {
        const inner = n.namedChildren.find((c) => c !== null) ?? null;
        if (inner && this.syn.src[n.startIndex] === '*') return { k: 'deref', of: this.expr(inner) };
        // `!x`, `-x`: the operand's type (what Not/Neg give for numbers, bool and most types that implement them)
        if (inner && (this.syn.src[n.startIndex] === '!' || this.syn.src[n.startIndex] === '-')) return this.expr(inner);
        return { k: 'unknown', what: n.type };
      }
      case 'index_expression': {
        const kids = n.namedChildren.filter((c): c is Node => c !== null && !c.type.endsWith('comment'));
        if (!kids[0]) return { k: 'unknown', what: n.type };
        return kids[1]?.type === 'range_expression' ? { k: 'index', of: this.expr(kids[0]), range: true } : { k: 'index', of: this.expr(kids[0]) };
      }
      case 'tuple_expression':
        return { k: 'tuple', of: n.namedChildren.filter((c): c is Node => c !== null && !c.type.endsWith('comment') && c.type !== 'attribute_item').map((c) => this.expr(c)) };
      case 'struct_expression': {
        const name = n.childForFieldName('name');
        return name ? { k: 'struct', path: this.syn.pathText(name) } : { k: 'unknown', what: n.type };
      }
      case 'string_literal':
      case 'raw_string_literal':
        return { k: 'lit', prim: 'str' };
      case 'integer_literal':
        return { k: 'lit', prim: intSuffix(this.syn.text(n)) ?? 'i32' };
      case 'float_literal':
        return { k: 'lit', prim: 'f64' };
      case 'boolean_literal':
        return { k: 'lit', prim: 'bool' };
      case 'char_literal':
        return { k: 'lit', prim: 'char' };
      case 'type_cast_expression':
        return { k: 'cast', ty: this.syn.typeOf(n.childForFieldName('type')) };
      case 'macro_invocation': {
        const m = n.childForFieldName('macro');
        return m ? { k: 'macro', name: this.syn.pathText(m) } : { k: 'unknown', what: n.type };
      }
      case 'closure_expression': {
        const body = n.childForFieldName('body');
        const tail = body ? (body.type === 'block' ? blockTail(body) : body) : null;
        return { k: 'closure', body: tail ? this.expr(tail) : null, at: n.startIndex };
      }
      case 'block': {
        const tail = blockTail(n);
        return tail ? this.expr(tail) : { k: 'unknown', what: 'block without a tail' };
      }
      case 'unsafe_block': {
        const block = n.namedChildren.find((c) => c?.type === 'block') ?? null;
        return block ? this.expr(block) : { k: 'unknown', what: n.type };
      }
      case 'if_expression': {
        // `if c { a } else { b }`: a, else b (an `else if` is an if_expression again)
        const of: Expr[] = [];
        const then = n.childForFieldName('consequence');
        if (then) of.push(this.expr(then));
        const alt = n.childForFieldName('alternative')?.namedChildren.find((c) => c !== null && (c.type === 'block' || c.type === 'if_expression')) ?? null;
        if (alt) of.push(this.expr(alt));
        return of.length > 0 ? { k: 'either', of } : { k: 'unknown', what: n.type };
      }
      case 'match_expression': {
        const of: Expr[] = [];
        const at: number[] = [];
        for (const arm of n.childForFieldName('body')?.namedChildren ?? []) {
          const v = arm?.type === 'match_arm' ? arm.childForFieldName('value') : null;
          if (v && of.length < MAX_ARMS) {
            of.push(this.expr(v));
            at.push(v.startIndex);
          }
        }
        return of.length > 0 ? { k: 'either', of, at } : { k: 'unknown', what: n.type };
      }
      default:
        return { k: 'unknown', what: n.type };
    }
  }

  private typeArgs(generic: Node): TypeRef[] {
    const out: TypeRef[] = [];
    for (const a of generic.childForFieldName('type_arguments')?.namedChildren ?? []) {
      if (a && a.type !== 'lifetime' && !a.type.endsWith('comment')) out.push(this.syn.typeOf(a));
    }
    return out;
  }
}

/** The elements of a tuple-like pattern or closure parameter list in order, `_` as null (it is no named node). */
function elements(list: Node, head: Node | null = null): (Node | null)[] {
  const out: (Node | null)[] = [];
  for (const c of list.children) {
    if (!c) continue;
    if (c.type === '_') out.push(null);
    else if (c.isNamed && c.id !== head?.id && !c.type.endsWith('comment') && c.type !== 'attribute_item') out.push(c);
  }
  return out;
}

/** A call's first argument. */
function firstArg(call: Node): Node | null {
  const args = call.childForFieldName('arguments');
  if (!args) return null;
  // child by child: most calls' first named child is it (`namedChildren` made a node object for every argument)
  for (let i = 0; ; i++) {
    const c = args.namedChild(i);
    if (!c) return null;
    const type = c.type;
    if (!type.endsWith('comment') && type !== 'attribute_item') return c;
  }
}

/** A block's tail expression (its last child when not a statement), if any. */
function blockTail(block: Node): Node | null {
  const kids = block.namedChildren.filter((c): c is Node => c !== null && !c.type.endsWith('comment'));
  const last = kids[kids.length - 1];
  if (!last || last.type.endsWith('_statement') || last.type.endsWith('_declaration') || last.type.endsWith('_item')) return null;
  // `expr;` is an expression_statement; a bare tail is the expression itself
  return last;
}

/** `name!` as a call ref, at the macro name token. */
export function macroRef(syn: Syntax, node: Node, out: Ref[]): void {
  const m = node.childForFieldName('macro');
  if (!m) return;
  const name = m.type === 'scoped_identifier' ? m.childForFieldName('name') ?? m : m;
  out.push({ kind: 'calls', target: `${syn.pathText(m)}!`, line: name.startPosition.row + 1, col: name.startPosition.column + 1, at: node.startIndex });
}

/** A macro call inside a body, for macros/ (which finds the calls in its arguments). */
function bodyMacro(syn: Syntax, node: Node): MacroCall | null {
  const m = node.childForFieldName('macro');
  const tt = node.namedChildren.find((c) => c?.type === 'token_tree');
  if (!m || !tt) return null;
  const name = m.type === 'scoped_identifier' ? m.childForFieldName('name') ?? m : m;
  return {
    path: syn.pathText(m), text: syn.text(tt), line: name.startPosition.row + 1, col: name.startPosition.column + 1,
    textLine: tt.startPosition.row + 1, textCol: tt.startPosition.column + 1, startIndex: node.startIndex,
  };
}

/** The text inside `#[…]` of an attribute item, whitespace collapsed. */
export function attrText(syn: Syntax, attr: Node): string {
  const a = attr.namedChildren.find((c) => c?.type === 'attribute');
  return a ? syn.text(a).replace(/\s+/g, ' ').trim() : '';
}

/** The type suffix of an integer literal (`1u8` -> `u8`); hex digits hold no `u`/`i`, so this holds for `0xffu8` too. */
function intSuffix(text: string): string | null {
  return /(u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize)$/.exec(text)?.[1] ?? null;
}
