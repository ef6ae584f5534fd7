// Rust source text -> the items of one file, with web-tree-sitter and the
// tree-sitter-rust grammar (never a line-based reader).
//
// Invariant: `parse` never throws on any text and always frees the tree it
// made (wasm memory is not garbage collected). A file with syntax errors keeps
// every item that parsed, with status 'errors'. Input is fed to the parser in
// chunks that never split a surrogate pair. Tree-sitter indices here are
// UTF-16 code units, so node text is `text.slice(startIndex, endIndex)`.
//
// Body hash: every item carries `bodyHash`, sha256 hex (first 16 chars) of
// its own exact source text — from its first token (`pub`, `fn`, …) to its
// end, outer attributes and doc comments excluded — with the text of each
// child item (impl and trait members, inline module items, enum variants)
// replaced by one NUL, so an edit inside a method changes that method's hash
// and not its impl's. Exact text, not whitespace-collapsed: simpler, and a
// reformat that moves nothing is rare enough to be worth a change event.
import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Language, Parser } from 'web-tree-sitter';
import { BodyReader, attrText } from './body.ts';
import { Syntax, collapse } from './syntax.ts';
import { flatten, initParser, type SyntaxNode as Node } from './tree.ts';
import type { GenericParam, Item, NodeKind, ParsedFile, UseDecl } from './types.ts';

export interface RustParser {
  parse(text: string): ParsedFile;
}

const CHUNK = 64 * 1024;
const SIGNATURE_CAP = 200;
/** Text read for a long item's signature before falling back to the whole text (see `signature`). */
const PREFIX = 4 * SIGNATURE_CAP;

let language: Promise<Language> | null = null;

/** The grammar, loaded once per process (or worker thread). */
function rustLanguage(): Promise<Language> {
  if (!language) {
    language = (async () => {
      await initParser();
      const require = createRequire(import.meta.url);
      const dir = path.dirname(require.resolve('tree-sitter-rust/package.json'));
      return Language.load(path.join(dir, 'tree-sitter-rust.wasm'));
    })();
  }
  return language;
}

/** A parser for Rust; cheap after the first call in a process. */
export async function loadRust(): Promise<RustParser> {
  const lang = await rustLanguage();
  const parser = new Parser();
  parser.setLanguage(lang);
  return {
    parse(text: string): ParsedFile {
      const tree = parser.parse(chunked(text));
      if (!tree) throw new Error('tree-sitter returned no tree (parser has no language?)');
      let flat;
      try {
        flat = flatten(tree, text);
      } finally {
        tree.delete();
      }
      try {
        return new FileReader(text).read(flat.root);
      } finally {
        flat.release();
      }
    },
  };
}

/** Parse only, for measuring the grammar's speed: returns whether the tree has errors. */
export async function parseOnly(): Promise<(text: string) => boolean> {
  const lang = await rustLanguage();
  const parser = new Parser();
  parser.setLanguage(lang);
  return (text) => {
    const tree = parser.parse(chunked(text));
    const bad = tree ? tree.rootNode.hasError : true;
    tree?.delete();
    return bad;
  };
}

function chunked(text: string): (index: number) => string | undefined {
  return (index) => {
    if (index >= text.length) return undefined;
    let end = Math.min(index + CHUNK, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    return text.slice(index, end);
  };
}

/** Items of a block that name a type (the self type of an impl in that block may be one). */
const LOCAL_TYPES = new Set(['struct_item', 'enum_item', 'union_item', 'type_item']);

/** Where an item sits decides the kind of its fns and consts. */
type Scope = 'module' | 'impl' | 'trait' | 'extern';

/** sha256 hex, first 16 chars: the body hash of an item's text (see the module comment). */
export function bodyHashOf(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 16);
}

/** `///`, `//!`, `/**`, `/*!` (but not `////` or `/***`): doc comments, which are attributes. */
function isDocComment(text: string): boolean {
  return /^\/\/[/!](?!\/)/.test(text) || /^\/\*[*!](?![*/])/.test(text);
}

class FileReader {
  /** UTF-16 span of each item's syntax node, for its body hash. */
  private readonly spans = new Map<Item, [number, number]>();
  private readonly syn: Syntax;
  private readonly body: BodyReader;

  constructor(private readonly src: string) {
    this.syn = new Syntax(src);
    this.body = new BodyReader(this.syn, (node, line, out) => this.flattenUse(node, [], '', line, out), (node, owner) => this.nestedImpl(node, owner));
  }

  /**
   * An `impl` written inside a fn body or an initialiser: a child of that item
   * (rustdoc lists it with the enclosing module's items). Its `#[…]`
   * attributes are the attribute items just before it. A self type named by
   * an item of the same block (`struct V; impl Visitor for V`) is marked
   * local: module scope must not resolve it.
   */
  private nestedImpl(node: Node, owner: Item): void {
    const attrs: Node[] = [];
    for (let p = node.previousNamedSibling; p && (p.type === 'attribute_item' || p.type.endsWith('comment')); p = p.previousNamedSibling) {
      if (p.type === 'attribute_item') attrs.unshift(p);
    }
    const item = this.readItem(node, 'module', attrs, owner);
    if (!item?.impl) return;
    const head = item.impl.selfTypePath.split('::')[0]!.split('<')[0]!.trim();
    const block = node.parent;
    if (head && block) {
      for (const c of block.namedChildren) {
        if (!c || !LOCAL_TYPES.has(c.type)) continue;
        const n = c.childForFieldName('name');
        if (n && this.text(n) === head) { item.impl.local = true; break; }
      }
    }
    owner.children.push(item);
  }

  read(root: Node): ParsedFile {
    const out: ParsedFile = {
      status: 'ok', errorCount: 0, firstErrorLine: 0, items: [], uses: [], macroCalls: [], externCrates: [], innerCfg: [],
      lineCount: root.endPosition.row + 1, firstLine: 1, firstCol: 1,
    };
    for (const c of root.namedChildren) {
      if (!c || ((c.type === 'line_comment' || c.type === 'block_comment') && !isDocComment(this.text(c)))) continue;
      out.firstLine = c.startPosition.row + 1;
      out.firstCol = c.startPosition.column + 1;
      break;
    }
    if (root.hasError) this.countErrors(root, out);
    const holder = this.blank('module', '', root);
    this.readItems(root, 'module', holder);
    out.items = holder.children;
    out.uses = holder.uses;
    out.externCrates = holder.externCrates ?? [];
    out.macroCalls = holder.macroCalls ?? [];
    for (const c of root.namedChildren) {
      if (c?.type !== 'inner_attribute_item') continue;
      const text = attrText(this.syn, c);
      if (text.startsWith('cfg(') || text.startsWith('cfg_attr(')) out.innerCfg.push(text);
    }
    this.hashBodies(out.items);
    return out;
  }

  private hashBodies(items: Item[]): void {
    for (const item of items) {
      const span = this.spans.get(item);
      if (!span) continue;
      let text = '';
      let at = span[0];
      for (const c of item.children) {
        const cs = this.spans.get(c);
        if (!cs || cs[0] < at || cs[1] > span[1]) continue;
        text += this.src.slice(at, cs[0]) + '\u0000';
        at = cs[1];
      }
      text += this.src.slice(at, span[1]);
      item.bodyHash = bodyHashOf(text);
      this.hashBodies(item.children);
    }
  }

  private countErrors(root: Node, out: ParsedFile): void {
    this.countErrorsIn(root, out);
    if (out.errorCount === 0) out.errorCount = 1; // hasError was set: at least one
    out.status = 'errors';
  }

  /**
   * ERROR and MISSING nodes under `node` (itself included), in document
   * order; only subtrees whose `hasError` is set are entered (a subtree's
   * error cost is the sum of its nodes', so one without it holds neither):
   * a walk of the whole tree was most of the cost of a file with an error.
   */
  private countErrorsIn(node: Node, out: ParsedFile): void {
    if (node.isMissing || node.type === 'ERROR') {
      out.errorCount++;
      if (!out.firstErrorLine) out.firstErrorLine = node.startPosition.row + 1;
    }
    for (const c of node.children) {
      if (!c) continue;
      if (c.hasError) this.countErrorsIn(c, out);
      else if (c.isMissing || c.type === 'ERROR') this.countErrorsIn(c, out); // (not seen: such a node has hasError set)
    }
  }

  private text(node: Node): string {
    return this.src.slice(node.startIndex, node.endIndex);
  }

  private blank(kind: NodeKind, name: string, node: Node): Item {
    return {
      kind, name, visibility: '', signature: '', file: '',
      lineStart: node.startPosition.row + 1, lineEnd: node.endPosition.row + 1, col: node.startPosition.column + 1,
      children: [], uses: [], refs: [], generics: [],
    };
  }

  /** Items of a module body, impl, trait or extern block, appended to `into`. */
  private readItems(container: Node, scope: Scope, into: Item) {
    let attrs: Node[] = [];
    for (let child = container.firstNamedChild; child; child = child.nextNamedSibling) {
      const type = child.type;
      if (type === 'attribute_item') { attrs.push(child); continue; }
      if (type === 'line_comment' || type === 'block_comment' || type === 'inner_attribute_item') continue;
      const item = this.readItem(child, scope, attrs, into);
      attrs = [];
      if (item) into.children.push(item);
    }
  }

  /** The `cfg`/`cfg_attr` attributes among `attrs`, as texts (undefined when none); `#[test]` reads as `cfg(test)`. */
  private cfgOf(attrs: Node[]): string[] | undefined {
    let out: string[] | undefined;
    for (const a of attrs) {
      const name = this.attrName(a);
      if (name === 'cfg' || name === 'cfg_attr') (out ??= []).push(attrText(this.syn, a));
      // a `#[test]`/`#[bench]` fn exists only in the test harness: as `cfg(test)` (off)
      else if (name === 'test' || name === 'bench') (out ??= []).push('cfg(test)');
    }
    return out;
  }

  private readItem(node: Node, scope: Scope, attrs: Node[], into: Item): Item | null {
    const item = this.readItemKind(node, scope, attrs, into);
    if (item) {
      const cfg = this.cfgOf(attrs);
      if (cfg) item.cfg = cfg;
    }
    return item;
  }

  private readItemKind(node: Node, scope: Scope, attrs: Node[], into: Item): Item | null {
    switch (node.type) {
      case 'function_item':
      case 'function_signature_item':
        return this.fn(node, scope);
      case 'struct_item':
      case 'union_item':
        return this.struct(node, node.type === 'struct_item' ? 'struct' : 'union');
      case 'enum_item':
        return this.enumItem(node);
      case 'trait_item':
        return this.trait(node);
      case 'impl_item':
        return this.implItem(node);
      case 'const_item':
      case 'static_item': {
        const kind: NodeKind = scope === 'trait' ? 'trait_item' : node.type === 'const_item' ? 'const' : 'static';
        const item = this.header(node, kind, node.childForFieldName('value'));
        const type = node.childForFieldName('type');
        this.typeRefs(type, item.refs, item.generics);
        if (type) item.ty = this.syn.typeOf(type);
        const value = node.childForFieldName('value');
        if (value) this.body.read(value, item, false);
        return item;
      }
      case 'type_item':
      case 'associated_type': {
        const item = this.header(node, scope === 'trait' ? 'trait_item' : 'type', null);
        const defaults = this.generics(node, item).flatMap((p) => (p.default ? [{ name: p.name, ty: p.default }] : []));
        if (defaults.length > 0) item.genericDefaults = defaults;
        // `type X: Bound;` in a trait: the bounds of the projection `Self::X`
        const declared = node.childForFieldName('bounds')?.namedChildren.filter((c): c is Node => c !== null && !c.type.endsWith('comment') && c.type !== 'lifetime') ?? [];
        if (declared.length > 0) item.bounds = [...item.bounds ?? [], { name: item.name, bounds: declared.map((c) => this.syn.typeOf(c)) }];
        const type = node.childForFieldName('type');
        this.typeRefs(type, item.refs, item.generics);
        if (type) item.ty = this.syn.typeOf(type);
        return item;
      }
      case 'macro_definition': {
        const item = this.header(node, 'macro', null);
        item.signature = `macro_rules! ${item.name}`;
        item.macroExport = attrs.some((a) => this.attrName(a) === 'macro_export');
        item.macroText = this.text(node);
        if (attrs.some((a) => this.attrName(a) === 'macro_export' && this.text(a).includes('local_inner_macros'))) item.macroLocalInner = true;
        return item;
      }
      case 'mod_item': {
        const body = node.childForFieldName('body');
        const item = this.header(node, 'module', body);
        const pathAttr = attrs.map((a) => this.attrValue(a, 'path')).find((v) => v !== null) ?? null;
        item.mod = { external: !body, pathAttr };
        if (attrs.some((a) => this.attrName(a) === 'macro_use')) item.macroUse = true;
        if (body) this.readItems(body, 'module', item);
        return item;
      }
      case 'use_declaration': {
        const vis = this.visibility(node);
        const arg = node.childForFieldName('argument');
        const cfg = this.cfgOf(attrs);
        if (arg) {
          const from = into.uses.length;
          this.flattenUse(arg, [], vis, node.startPosition.row + 1, into.uses);
          if (cfg) for (let i = from; i < into.uses.length; i++) into.uses[i]!.cfg = cfg;
        }
        return null;
      }
      case 'extern_crate_declaration': {
        const name = node.childForFieldName('name');
        const alias = node.childForFieldName('alias');
        if (name) {
          const e: NonNullable<Item['externCrates']>[number] = { name: this.text(name), alias: this.text(alias ?? name) };
          const cfg = this.cfgOf(attrs);
          if (cfg) e.cfg = cfg;
          if (attrs.some((a) => this.attrName(a) === 'macro_use')) e.macroUse = true;
          const vis = this.visibility(node);
          if (vis !== '') e.visibility = vis;
          (into.externCrates ??= []).push(e);
        }
        return null;
      }
      case 'foreign_mod_item': {
        const body = node.childForFieldName('body');
        if (!body) return null;
        // the block's cfg applies to each of its items
        const cfg = this.cfgOf(attrs);
        const holder = this.blank('module', '', body);
        this.readItems(body, 'extern', holder);
        for (const c of holder.children) {
          if (cfg) c.cfg = [...cfg, ...(c.cfg ?? [])];
          into.children.push(c);
        }
        return null;
      }
      case 'macro_invocation': {
        if (scope === 'module' || scope === 'impl' || scope === 'trait') this.macroCall(node, attrs, into);
        return null;
      }
      case 'expression_statement': {
        // `m!(…);` / `m![…];` among items parses as a statement
        const m = node.namedChild(0);
        if (m?.type === 'macro_invocation' && (scope === 'module' || scope === 'impl' || scope === 'trait')) this.macroCall(m, attrs, into);
        return null;
      }
      case 'ERROR':
        // Error recovery may wrap well-formed items: keep those.
        this.readItems(node, scope, into);
        return null;
      default:
        return null;
    }
  }

  /** An item-position macro invocation: recorded for expansion, and as a call of the macro. */
  private macroCall(node: Node, attrs: Node[], into: Item): void {
    const m = node.childForFieldName('macro');
    if (!m) return;
    const name = m.type === 'scoped_identifier' ? m.childForFieldName('name') ?? m : m;
    const tt = node.namedChildren.find((c) => c?.type === 'token_tree') ?? null;
    const call: NonNullable<Item['macroCalls']>[number] = {
      path: this.syn.pathText(m), text: tt ? this.text(tt) : '', line: name.startPosition.row + 1, col: name.startPosition.column + 1,
      textLine: tt ? tt.startPosition.row + 1 : 0, textCol: tt ? tt.startPosition.column + 1 : 0,
      startIndex: node.startIndex,
    };
    const cfg = this.cfgOf(attrs);
    if (cfg) call.cfg = cfg;
    (into.macroCalls ??= []).push(call);
  }

  private header(node: Node, kind: NodeKind, body: Node | null): Item {
    const nameNode = node.childForFieldName('name');
    const item = this.blank(kind, nameNode ? this.text(nameNode) : '', node);
    if (nameNode) item.col = nameNode.startPosition.column + 1;
    this.spans.set(item, [node.startIndex, node.endIndex]);
    item.visibility = this.visibility(node);
    item.signature = this.signature(node.startIndex, body ? body.startIndex : node.endIndex);
    return item;
  }

  /**
   * The collapsed text `start..end` without a last `;`/`=`, cut at
   * SIGNATURE_CAP. A long text (a `macro_rules!`, a tuple struct) is
   * collapsed from a prefix when that prefix alone gives more than the cap
   * plus the two characters the end can lose: the same first SIGNATURE_CAP
   * characters (whitespace runs collapse the same in a prefix, and the text
   * starts at a token), without collapsing the whole item.
   */
  private signature(start: number, end: number): string {
    if (end - start > PREFIX) {
      const head = collapse(this.src.slice(start, start + PREFIX));
      if (head.length > SIGNATURE_CAP + 2) return head.slice(0, SIGNATURE_CAP);
    }
    let sig = collapse(this.src.slice(start, end));
    if (sig.endsWith(';') || sig.endsWith('=')) sig = sig.slice(0, -1).trimEnd();
    return sig.length > SIGNATURE_CAP ? sig.slice(0, SIGNATURE_CAP) : sig;
  }

  private visibility(node: Node): string {
    const c = node.namedChildOfType('visibility_modifier');
    return c ? collapse(this.text(c)) : '';
  }

  private generics(node: Node, item: Item, extra: string[] = []): GenericParam[] {
    item.generics.push(...extra);
    const params = this.syn.genericParams(node);
    // a name only a `where` predicate gives is no parameter of this item (an outer item's comes with it from
    // its owner; any other is a type: rand's `where Standard: Distribution<T>`), but its bounds are kept
    for (const p of params) if (!p.whereOnly && !item.generics.includes(p.name)) item.generics.push(p.name);
    if (params.some((p) => p.bounds.length > 0)) item.bounds = params.filter((p) => p.bounds.length > 0).map((p) => ({ name: p.name, bounds: p.bounds }));
    return params;
  }

  private fn(node: Node, scope: Scope): Item {
    const kind: NodeKind = scope === 'impl' ? 'method' : scope === 'trait' ? 'trait_item' : 'fn';
    const body = node.childForFieldName('body');
    const item = this.header(node, kind, body);
    this.generics(node, item);
    const params = node.childForFieldName('parameters');
    this.typeRefs(params, item.refs, item.generics);
    const ret = node.childForFieldName('return_type');
    this.typeRefs(ret, item.refs, item.generics);
    item.ret = ret ? this.syn.typeOf(ret) : null;
    item.params = [];
    item.selfParam = null;
    for (const p of params?.namedChildren ?? []) {
      if (!p) continue;
      if (p.type === 'self_parameter') {
        const t = this.text(p);
        item.selfParam = t.startsWith('&') ? (/\bmut\b/.test(t) ? 'mut' : 'ref') : 'value';
      } else if (p.type === 'parameter' && p.childForFieldName('pattern')?.type === 'self') {
        // a typed receiver: `self: &Self`, `self: &mut Self`, `self: Self` (others, `self: Box<Self>`, stay unknown)
        const tn = p.childForFieldName('type');
        const t = (tn ? this.text(tn) : '').replace(/\s+/g, ' ').replace(/'\w+ /, '').trim();
        item.selfParam = t === 'Self' ? 'value' : t === '&Self' || t === '& Self' ? 'ref' : /^& ?mut Self$/.test(t) ? 'mut' : null;
      } else if (p.type === 'parameter') {
        const pat = p.childForFieldName('pattern');
        const ty = this.syn.typeOf(p.childForFieldName('type'));
        let name: string | null = null;
        if (pat?.type === 'identifier') name = this.text(pat);
        else if (pat?.type === 'mut_pattern') {
          const inner = pat.namedChildren.find((c) => c?.type === 'identifier');
          if (inner) name = this.text(inner);
        }
        item.params.push({ name, ty });
        if (name) (item.bindings ??= []).push({ name, at: p.startIndex, ty });
      }
    }
    if (body) this.body.read(body, item, true);
    return item;
  }

  private fieldsOf(body: Node | null): NonNullable<Item['fields']> {
    const out: NonNullable<Item['fields']> = [];
    if (!body) return out;
    if (body.type === 'field_declaration_list') {
      for (const f of body.namedChildren) {
        if (!f || f.type !== 'field_declaration') continue;
        const n = f.childForFieldName('name');
        if (n) out.push({ name: this.text(n), ty: this.syn.typeOf(f.childForFieldName('type')), visibility: this.visibility(f) });
      }
    } else if (body.type === 'ordered_field_declaration_list') {
      let vis = '';
      for (const c of body.namedChildren) {
        if (!c || c.type.endsWith('comment') || c.type === 'attribute_item') continue;
        if (c.type === 'visibility_modifier') { vis = collapse(this.text(c)); continue; }
        out.push({ name: String(out.length), ty: this.syn.typeOf(c), visibility: vis });
        vis = '';
      }
    }
    return out;
  }

  private struct(node: Node, kind: 'struct' | 'union'): Item {
    const body = node.childForFieldName('body');
    const item = this.header(node, kind, body && body.type === 'field_declaration_list' ? body : null);
    this.generics(node, item);
    this.typeRefs(body, item.refs, item.generics);
    item.fields = this.fieldsOf(body);
    return item;
  }

  private enumItem(node: Node): Item {
    const body = node.childForFieldName('body');
    const item = this.header(node, 'enum', body);
    this.generics(node, item);
    let attrs: Node[] = [];
    for (const v of body?.namedChildren ?? []) {
      if (!v) continue;
      if (v.type === 'attribute_item') { attrs.push(v); continue; }
      if (v.type !== 'enum_variant') continue;
      const variant = this.header(v, 'variant', null);
      variant.generics = item.generics;
      const vbody = v.childForFieldName('body');
      this.typeRefs(vbody, variant.refs, item.generics);
      variant.fields = this.fieldsOf(vbody);
      const cfg = this.cfgOf(attrs);
      if (cfg) variant.cfg = cfg;
      attrs = [];
      item.children.push(variant);
    }
    return item;
  }

  private trait(node: Node): Item {
    const body = node.childForFieldName('body');
    const item = this.header(node, 'trait', body);
    this.generics(node, item, ['Self']);
    const bounds = node.childForFieldName('bounds');
    this.typeRefs(bounds, item.refs, item.generics);
    if (bounds) item.supertraits = this.syn.boundsOf(bounds);
    if (body) this.readItems(body, 'trait', item);
    for (const c of item.children) this.inherit(c, item);
    return item;
  }

  /** Members see the generics (and bounds) of their impl or trait. */
  private inherit(member: Item, owner: Item): void {
    for (const g of owner.generics) if (!member.generics.includes(g)) member.generics.push(g);
    if (owner.bounds) member.bounds = [...(member.bounds ?? []), ...owner.bounds];
  }

  private implItem(node: Node): Item {
    const body = node.childForFieldName('body');
    const item = this.header(node, 'impl', body);
    this.generics(node, item, ['Self']);
    const trait = node.childForFieldName('trait');
    const type = node.childForFieldName('type');
    item.impl = {
      trait: trait ? collapse(this.text(trait)) : null,
      traitPath: trait ? this.syn.typePath(trait) : null,
      selfType: type ? collapse(this.text(type)) : '',
      selfTypePath: type ? this.syn.typePath(type) : '',
      selfTy: this.syn.typeOf(type),
      traitTy: trait ? this.syn.typeOf(trait) : null,
    };
    if (body) this.readItems(body, 'impl', item);
    for (const c of item.children) this.inherit(c, item);
    return item;
  }

  /** Type names mentioned in a signature part; generic parameters and primitives skipped. */
  private typeRefs(node: Node | null, out: Item['refs'], generics: string[]) {
    if (!node) return;
    switch (node.type) {
      case 'type_identifier': {
        const name = this.text(node);
        if (!generics.includes(name)) out.push({ kind: 'type_ref', target: name, line: node.startPosition.row + 1, col: node.startPosition.column + 1 });
        return;
      }
      case 'scoped_type_identifier': {
        const target = this.syn.pathText(node);
        const first = target.split('::')[0] ?? '';
        const name = node.childForFieldName('name') ?? node;
        if (!generics.includes(first)) out.push({ kind: 'type_ref', target, line: name.startPosition.row + 1, col: name.startPosition.column + 1 });
        // generic args inside path segments are rare; not descended
        return;
      }
      case 'block':
      case 'closure_expression':
        return; // expressions inside array lengths / const args
      default:
        for (let c = node.firstNamedChild; c; c = c.nextNamedSibling) this.typeRefs(c, out, generics);
    }
  }

  /**
   * The imports a `use` tree makes, each at its name: the line and 1-based
   * column of the last segment of the path it imports (`Bucket` in `use
   * bucket::Bucket;`, `b` in `use a::b as c`, the module of a glob, `self`),
   * as for every other reference; `line` (the declaration's) when no name is found.
   */
  private flattenUse(node: Node, prefix: string[], visibility: string, line: number, out: UseDecl[]) {
    const join = (segs: string[]) => segs.filter((s) => s !== '').join('::');
    const at = (n: Node | null | undefined): { line: number; col?: number } => {
      const name = n && (n.type === 'scoped_identifier' || n.type === 'scoped_type_identifier') ? (n.childForFieldName('name') ?? n) : n;
      return name ? { line: name.startPosition.row + 1, col: name.startPosition.column + 1 } : { line };
    };
    switch (node.type) {
      case 'use_as_clause': {
        const p = node.childForFieldName('path');
        const a = node.childForFieldName('alias');
        if (!p) return;
        const segs = [...prefix, ...this.syn.pathText(p).split('::')];
        out.push({ path: join(segs), alias: a ? this.text(a) : segs[segs.length - 1]!, glob: false, ...at(p), visibility });
        return;
      }
      case 'use_wildcard': {
        const inner = node.namedChildren.find((c) => c && c.type !== 'line_comment' && c.type !== 'block_comment');
        const segs = inner ? [...prefix, ...this.syn.pathText(inner).split('::')] : prefix;
        out.push({ path: join(segs), alias: null, glob: true, ...at(inner ?? node), visibility });
        return;
      }
      case 'scoped_use_list': {
        const p = node.childForFieldName('path');
        const list = node.childForFieldName('list');
        const segs = p ? [...prefix, ...this.syn.pathText(p).split('::')] : prefix;
        if (list) this.flattenUse(list, segs, visibility, line, out);
        return;
      }
      case 'use_list':
        for (const c of node.namedChildren) if (c) this.flattenUse(c, prefix, visibility, line, out);
        return;
      case 'self':
        // `use a::{self}` imports `a` itself.
        if (prefix.length > 0) out.push({ path: join(prefix), alias: prefix[prefix.length - 1]!, glob: false, ...at(node), visibility });
        return;
      case 'line_comment':
      case 'block_comment':
        return;
      default: {
        const segs = [...prefix, ...this.syn.pathText(node).split('::')];
        out.push({ path: join(segs), alias: segs[segs.length - 1]!, glob: false, ...at(node), visibility });
      }
    }
  }

  private attrName(attr: Node): string {
    const a = attr.namedChildOfType('attribute');
    const first = a?.namedChild(0);
    return first ? this.text(first) : '';
  }

  /** `#[name = "value"]` -> value (string literal content), else null. */
  private attrValue(attr: Node, name: string): string | null {
    const a = attr.namedChildOfType('attribute');
    if (!a || this.attrName(attr) !== name) return null;
    const v = a.childForFieldName('value');
    if (!v || v.type !== 'string_literal') return null;
    const content = v.namedChildren.find((c) => c?.type === 'string_content');
    return content ? this.text(content) : '';
  }
}
