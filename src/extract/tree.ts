// A parsed tree read out of wasm once, into flat typed arrays, and nodes
// that read those arrays: the readers (parser.ts, body.ts, syntax.ts) ask
// node questions (type, fields, children, positions) in plain JS instead of
// one wasm round trip, a marshalled node and a new object per question.
//
// How: one pre-order walk of a tree cursor per parsed text records, per
// visible node, its type id, the field that names it in its parent, its
// start and end (UTF-16 code units), its parent, previous sibling and the end
// of its subtree. Rows and columns come from the text's line starts (tree-
// sitter counts a row at each '\n' and columns in code units here, so they
// agree). In a tree with errors each node also records tree-sitter's own
// `hasError` and `isMissing`. The walk calls web-tree-sitter's wasm exports
// directly when `Parser.init` was given our module object (the exported
// cursor functions of web-tree-sitter 0.27.2, pinned exactly in
// package.json, read and write the cursor in the shared transfer buffer);
// otherwise it uses the public TreeCursor API (slower, same arrays).
//
// Invariants: a SyntaxNode answers as web-tree-sitter's Node does for every
// member defined here (same nodes, same order; `id` is unique within its
// tree only), except that a token tree or a comment has no children in a
// tree without errors, a field that names a token (`operator`) is not kept,
// and in a tree with errors a node next to a zero-width MISSING node may get
// that node as its sibling where tree-sitter (which finds siblings by
// position) answers none. A FlatTree holds everything it answers (its Tree
// can be deleted at once) until its `release()`, which lends its arrays to
// the next walk. Crash story: none — memory only; a tree with more nodes than
// the arrays hold grows them.
import { Parser, type Language, type Tree, type TreeCursor } from 'web-tree-sitter';

/** The wasm exports the fast walk calls (present on the module object `Parser.init` fills). */
interface Binding {
  _ts_init(): number;
  HEAP32: Int32Array;
  _ts_tree_cursor_current_node_type_id_wasm(tree: number): number;
  _ts_tree_cursor_current_field_id_wasm(tree: number): number;
  _ts_tree_cursor_start_index_wasm(tree: number): number;
  _ts_tree_cursor_end_index_wasm(tree: number): number;
  _ts_tree_cursor_goto_first_child_wasm(tree: number): number;
  _ts_tree_cursor_goto_next_sibling_wasm(tree: number): number;
  _ts_tree_cursor_goto_parent_wasm(tree: number): number;
  _ts_tree_cursor_current_node_wasm(tree: number): void;
  _ts_node_has_error_wasm(tree: number): number;
  _ts_node_is_missing_wasm(tree: number): number;
}

const EXPORTS = [
  '_ts_init', '_ts_tree_cursor_current_node_type_id_wasm', '_ts_tree_cursor_current_field_id_wasm', '_ts_tree_cursor_start_index_wasm',
  '_ts_tree_cursor_end_index_wasm', '_ts_tree_cursor_goto_first_child_wasm', '_ts_tree_cursor_goto_next_sibling_wasm',
  '_ts_tree_cursor_goto_parent_wasm', '_ts_tree_cursor_current_node_wasm', '_ts_node_has_error_wasm', '_ts_node_is_missing_wasm',
] as const;

let binding: Binding | null = null;
let transfer = 0;

/**
 * `Parser.init`, keeping the wasm module's exports for the fast walk. When
 * web-tree-sitter was initialised before (by other code in this process) the
 * module object is not ours and the walk uses the public cursor.
 */
export async function initParser(): Promise<void> {
  const module: Record<string, unknown> = {};
  await Parser.init(module as Parameters<typeof Parser.init>[0]);
  if (binding || !EXPORTS.every((e) => typeof module[e] === 'function') || !(module.HEAP32 instanceof Int32Array)) return;
  binding = module as unknown as Binding;
  transfer = binding._ts_init() >> 2;
}

/** Whether the walk calls wasm exports directly (web-tree-sitter was first initialised by `initParser`). */
export function fastWalk(): boolean {
  return binding !== null;
}

/** Per language: type names, which types are named, field ids by name. */
class Grammar {
  readonly types: string[];
  readonly named: Uint8Array;
  private readonly fields = new Map<string, number>();
  private readonly matchers = new WeakMap<TypeSet, Uint8Array>();
  /** Type ids of `_` (a tuple pattern's or a closure parameter's placeholder), whose field is recorded too. */
  readonly underscore: Set<number>;
  /** Types whose children are not read (token trees, comments): 1. Their text is all the readers use. */
  readonly opaque: Uint8Array;

  constructor(private readonly lang: Language) {
    this.types = lang.types;
    this.named = new Uint8Array(65536);
    for (let i = 0; i < this.types.length; i++) this.named[i] = lang.nodeTypeIsNamed(i) ? 1 : 0;
    this.named[65535] = 1; // ERROR
    this.underscore = new Set();
    this.opaque = new Uint8Array(65536);
    for (let i = 0; i < this.types.length; i++) {
      const type = this.types[i];
      if (type === '_') this.underscore.add(i);
      if (this.named[i] && (type === 'token_tree' || type === 'line_comment' || type === 'block_comment')) this.opaque[i] = 1;
    }
  }

  fieldId(name: string): number {
    let id = this.fields.get(name);
    if (id === undefined) {
      id = this.lang.fieldIdForName(name) ?? -1;
      this.fields.set(name, id);
    }
    return id;
  }

  /** 1 at the type ids whose name `types` includes (kept per list object). */
  matcher(types: TypeSet): Uint8Array {
    let m = this.matchers.get(types);
    if (!m) {
      m = new Uint8Array(65536);
      for (let i = 0; i < this.types.length; i++) if (this.types[i] && types.includes(this.types[i]!)) m[i] = 1;
      if (types.includes('ERROR')) m[65535] = 1;
      this.matchers.set(types, m);
    }
    return m;
  }

  typeName(id: number): string {
    return this.types[id] || 'ERROR';
  }
}

const grammars = new WeakMap<Language, Grammar>();

function grammarOf(lang: Language): Grammar {
  let g = grammars.get(lang);
  if (!g) {
    g = new Grammar(lang);
    grammars.set(lang, g);
  }
  return g;
}

/** A list of type names (an array, or anything with `includes`). */
export type TypeSet = { includes(type: string): boolean };

export interface Point {
  row: number;
  column: number;
}

/** The flat arrays of one tree (pre-order: a node's subtree is `i .. sub[i]-1`). */
export class FlatTree {
  readonly type: Uint16Array;
  readonly field: Uint16Array;
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly parent: Int32Array;
  readonly prev: Int32Array;
  readonly sub: Int32Array;
  /** bit 1: hasError, bit 2: isMissing (recorded only when the root has an error). */
  readonly flags: Uint8Array;
  readonly lines: Int32Array;
  private readonly nodes: (SyntaxNode | undefined)[];

  constructor(readonly g: Grammar, readonly size: number, private readonly arrays: Arrays, lines: Int32Array) {
    this.type = arrays.type;
    this.field = arrays.field;
    this.start = arrays.start;
    this.end = arrays.end;
    this.parent = arrays.parent;
    this.prev = arrays.prev;
    this.sub = arrays.sub;
    this.flags = arrays.flags;
    this.lines = lines;
    this.nodes = new Array<SyntaxNode | undefined>(size);
  }

  /** Hand the arrays back for the next walk: this tree and its nodes must not be used after. */
  release(): void {
    scratch ??= this.arrays;
  }

  get root(): SyntaxNode {
    return this.node(0);
  }

  node(i: number): SyntaxNode {
    return this.nodes[i] ??= new SyntaxNode(this, i);
  }

  /** The row `point` found last: readers ask for nearby offsets in turn (a row, then its column; items in order). */
  private row = 0;

  /** Row and column (code units) of a text offset. */
  point(index: number): Point {
    const lines = this.lines;
    const r = this.row;
    if (lines[r]! <= index && (r + 1 === lines.length || index < lines[r + 1]!)) return { row: r, column: index - lines[r]! };
    let lo = 0;
    let hi = lines.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lines[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    this.row = lo;
    return { row: lo, column: index - lines[lo]! };
  }
}

/** The arrays a walk fills (grown as needed); a released tree's arrays are taken by the next walk. */
interface Arrays {
  type: Uint16Array;
  field: Uint16Array;
  start: Int32Array;
  end: Int32Array;
  parent: Int32Array;
  prev: Int32Array;
  sub: Int32Array;
  flags: Uint8Array;
}

function arrays(n: number): Arrays {
  return {
    type: new Uint16Array(n), field: new Uint16Array(n), start: new Int32Array(n), end: new Int32Array(n),
    parent: new Int32Array(n), prev: new Int32Array(n), sub: new Int32Array(n), flags: new Uint8Array(n),
  };
}

let scratch: Arrays | null = arrays(1 << 14);

function grow(a: Arrays, n: number): Arrays {
  const b = arrays(Math.max(n, a.type.length * 2));
  b.type.set(a.type); b.field.set(a.field); b.start.set(a.start); b.end.set(a.end);
  b.parent.set(a.parent); b.prev.set(a.prev); b.sub.set(a.sub); b.flags.set(a.flags);
  return b;
}

/** Offsets at which each line of `text` starts. */
function lineStarts(text: string): Int32Array {
  let buf = lineScratch;
  let k = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    if (k === buf.length) {
      const b = new Int32Array(buf.length * 2);
      b.set(buf);
      buf = lineScratch = b;
    }
    buf[k++] = i + 1;
  }
  return buf.slice(0, k);
}

/** Line starts are collected here, then copied out at their count (one pass over the text instead of two). */
let lineScratch = new Int32Array(1 << 12);

/** The cursor moves and reads the walk needs. */
interface Walker {
  typeId(): number;
  fieldId(): number;
  start(): number;
  end(): number;
  /** bit 1 hasError, bit 2 isMissing of the current node. */
  flags(): number;
  firstChild(): boolean;
  nextSibling(): boolean;
  parent(): boolean;
  done(): void;
}

type Handles = { handles: number[] };

/**
 * A cursor of `tree` put on the transfer buffer, where the wasm cursor
 * exports read and move it; `release` hands its current handles back (its
 * stack may have moved while it grew) and frees it.
 */
function cursorOnTransfer(b: Binding, tree: Tree): { t: number; release: () => void } {
  const t = (tree as unknown as { 0: number })[0];
  const cursor = tree.walk();
  const h = (cursor as unknown as Handles).handles;
  const tb = transfer;
  const heap = b.HEAP32;
  heap[tb] = h[0]!; heap[tb + 1] = h[1]!; heap[tb + 2] = h[2]!; heap[tb + 3] = h[3]!;
  return {
    t,
    release: () => {
      const now = b.HEAP32;
      h[0] = now[tb]!; h[1] = now[tb + 1]!; h[2] = now[tb + 2]!; h[3] = now[tb + 3]!;
      cursor.delete();
    },
  };
}

/** The wasm exports on the transfer buffer (the cursor lives there between calls). */
function rawWalker(b: Binding, tree: Tree): Walker {
  const { t, release } = cursorOnTransfer(b, tree);
  const tb = transfer;
  let heap = b.HEAP32;
  return {
    typeId: () => b._ts_tree_cursor_current_node_type_id_wasm(t),
    fieldId: () => b._ts_tree_cursor_current_field_id_wasm(t),
    start: () => b._ts_tree_cursor_start_index_wasm(t),
    end: () => b._ts_tree_cursor_end_index_wasm(t),
    flags: () => {
      // the node is marshalled over the cursor: keep the cursor and put it back
      heap = b.HEAP32;
      const c0 = heap[tb]!, c1 = heap[tb + 1]!, c2 = heap[tb + 2]!, c3 = heap[tb + 3]!;
      b._ts_tree_cursor_current_node_wasm(t);
      const f = (b._ts_node_has_error_wasm(t) ? 1 : 0) | (b._ts_node_is_missing_wasm(t) ? 2 : 0);
      heap = b.HEAP32;
      heap[tb] = c0; heap[tb + 1] = c1; heap[tb + 2] = c2; heap[tb + 3] = c3;
      return f;
    },
    firstChild: () => b._ts_tree_cursor_goto_first_child_wasm(t) !== 0,
    nextSibling: () => b._ts_tree_cursor_goto_next_sibling_wasm(t) !== 0,
    parent: () => b._ts_tree_cursor_goto_parent_wasm(t) !== 0,
    done: release,
  };
}

/** The public TreeCursor (when the module's exports are not ours). */
function publicWalker(tree: Tree): Walker {
  const c: TreeCursor = tree.walk();
  return {
    typeId: () => c.nodeTypeId,
    fieldId: () => c.currentFieldId,
    start: () => c.startIndex,
    end: () => c.endIndex,
    flags: () => {
      const n = c.currentNode;
      return (n.hasError ? 1 : 0) | (n.isMissing ? 2 : 0);
    },
    firstChild: () => c.gotoFirstChild(),
    nextSibling: () => c.gotoNextSibling(),
    parent: () => c.gotoParent(),
    done: () => c.delete(),
  };
}

/**
 * Read `tree` (parsed from `text`) into a FlatTree. Anonymous nodes record
 * their type only (and start/end, flags in a tree with errors); their field
 * only for `_`, the one anonymous node a field read here can name. The
 * children of token trees and comments are not read (about a quarter of all
 * nodes: macro arguments' tokens, `//`/doc markers) unless the tree has
 * errors, where every node is kept for the error count.
 */
export function flatten(tree: Tree, text: string, viaPublicCursor = false): FlatTree {
  const g = grammarOf(tree.language);
  const errors = tree.rootNode.hasError;
  if (binding && !viaPublicCursor && !errors) return rawFlatten(binding, tree, g, text);
  const w = binding && !viaPublicCursor ? rawWalker(binding, tree) : publicWalker(tree);
  const named = g.named;
  const underscore = g.underscore;
  const opaque = g.opaque;
  let a = scratch ?? arrays(1 << 12);
  scratch = null;
  let last = -1; // the previous sibling of the next node
  let p = -1;
  let n = 0;
  try {
    for (;;) {
      if (n >= a.type.length) a = grow(a, n + 1);
      const type = w.typeId();
      a.type[n] = type;
      a.parent[n] = p;
      a.prev[n] = last;
      if (named[type] || errors) {
        a.start[n] = w.start();
        a.end[n] = w.end();
      } else {
        a.start[n] = -1;
        a.end[n] = -1;
      }
      a.field[n] = named[type] || underscore.has(type) ? w.fieldId() : 0;
      a.flags[n] = errors ? w.flags() : 0;
      const me = n++;
      if ((errors || !opaque[type]) && w.firstChild()) {
        p = me;
        last = -1;
        continue;
      }
      a.sub[me] = n;
      last = me;
      let done = false;
      while (!w.nextSibling()) {
        if (!w.parent()) { done = true; break; }
        a.sub[p] = n;
        last = p;
        p = a.parent[p]!;
      }
      if (done) break;
    }
  } finally {
    w.done();
  }
  return new FlatTree(g, n, a, lineStarts(text));
}

/**
 * `flatten` of a tree without errors through the wasm exports, each held in
 * a local: the module object has hundreds of properties (a dictionary, not a
 * fast-property object), so a property read per call was a hash lookup, and
 * the walker's closures were one more call per node read.
 */
function rawFlatten(b: Binding, tree: Tree, g: Grammar, text: string): FlatTree {
  const typeIdOf = b._ts_tree_cursor_current_node_type_id_wasm;
  const fieldIdOf = b._ts_tree_cursor_current_field_id_wasm;
  const startOf = b._ts_tree_cursor_start_index_wasm;
  const endOf = b._ts_tree_cursor_end_index_wasm;
  const firstChild = b._ts_tree_cursor_goto_first_child_wasm;
  const nextSibling = b._ts_tree_cursor_goto_next_sibling_wasm;
  const parent = b._ts_tree_cursor_goto_parent_wasm;
  const { t, release } = cursorOnTransfer(b, tree);
  const named = g.named;
  const underscore = g.underscore;
  const opaque = g.opaque;
  let a = scratch ?? arrays(1 << 12);
  scratch = null;
  let type16 = a.type, field = a.field, start = a.start, end = a.end, par = a.parent, prev = a.prev, sub = a.sub, flags = a.flags;
  let cap = type16.length;
  let last = -1; // the previous sibling of the next node
  let p = -1;
  let n = 0;
  try {
    for (;;) {
      if (n >= cap) {
        a = grow(a, n + 1);
        type16 = a.type; field = a.field; start = a.start; end = a.end; par = a.parent; prev = a.prev; sub = a.sub; flags = a.flags;
        cap = type16.length;
      }
      const type = typeIdOf(t);
      type16[n] = type;
      par[n] = p;
      prev[n] = last;
      flags[n] = 0;
      if (named[type]) {
        start[n] = startOf(t);
        end[n] = endOf(t);
        field[n] = fieldIdOf(t);
      } else {
        start[n] = -1;
        end[n] = -1;
        field[n] = underscore.has(type) ? fieldIdOf(t) : 0;
      }
      const me = n++;
      if (!opaque[type] && firstChild(t) !== 0) {
        p = me;
        last = -1;
        continue;
      }
      sub[me] = n;
      last = me;
      let done = false;
      while (nextSibling(t) === 0) {
        if (parent(t) === 0) { done = true; break; }
        sub[p] = n;
        last = p;
        p = par[p]!;
      }
      if (done) break;
    }
  } finally {
    release();
  }
  return new FlatTree(g, n, a, lineStarts(text));
}

/** One node of a FlatTree, with the members of web-tree-sitter's Node the readers use. */
export class SyntaxNode {
  constructor(private readonly t: FlatTree, readonly id: number) {}

  get type(): string {
    return this.t.g.typeName(this.t.type[this.id]!);
  }

  get isNamed(): boolean {
    return this.t.g.named[this.t.type[this.id]!] === 1;
  }

  get hasError(): boolean {
    return (this.t.flags[this.id]! & 1) !== 0;
  }

  get isMissing(): boolean {
    return (this.t.flags[this.id]! & 2) !== 0;
  }

  get startIndex(): number {
    return this.t.start[this.id]!;
  }

  get endIndex(): number {
    return this.t.end[this.id]!;
  }

  get startPosition(): Point {
    return this.t.point(this.t.start[this.id]!);
  }

  get endPosition(): Point {
    return this.t.point(this.t.end[this.id]!);
  }

  get parent(): SyntaxNode | null {
    const p = this.t.parent[this.id]!;
    return p < 0 ? null : this.t.node(p);
  }

  /** All children (anonymous ones too), in order. */
  get children(): SyntaxNode[] {
    const t = this.t;
    const out: SyntaxNode[] = [];
    const end = t.sub[this.id]!;
    for (let c = this.id + 1; c < end; c = t.sub[c]!) out.push(t.node(c));
    return out;
  }

  get namedChildren(): SyntaxNode[] {
    const t = this.t;
    const named = t.g.named;
    const out: SyntaxNode[] = [];
    const end = t.sub[this.id]!;
    for (let c = this.id + 1; c < end; c = t.sub[c]!) if (named[t.type[c]!]) out.push(t.node(c));
    return out;
  }

  namedChild(index: number): SyntaxNode | null {
    const t = this.t;
    const named = t.g.named;
    const end = t.sub[this.id]!;
    let k = 0;
    for (let c = this.id + 1; c < end; c = t.sub[c]!) {
      if (!named[t.type[c]!]) continue;
      if (k++ === index) return t.node(c);
    }
    return null;
  }

  /** The first named child (`namedChildren[0]` without the array; with `nextNamedSibling`, a walk of them). */
  get firstNamedChild(): SyntaxNode | null {
    const t = this.t;
    const named = t.g.named;
    const end = t.sub[this.id]!;
    for (let c = this.id + 1; c < end; c = t.sub[c]!) if (named[t.type[c]!]) return t.node(c);
    return null;
  }

  /** The first named child of type `type` (what `namedChildren.find((c) => c.type === type)` gives, without the array). */
  namedChildOfType(type: string): SyntaxNode | null {
    const t = this.t;
    const g = t.g;
    const end = t.sub[this.id]!;
    for (let c = this.id + 1; c < end; c = t.sub[c]!) if (g.named[t.type[c]!] && g.typeName(t.type[c]!) === type) return t.node(c);
    return null;
  }

  /** The first child that the field names. */
  childForFieldName(name: string): SyntaxNode | null {
    const t = this.t;
    const id = t.g.fieldId(name);
    if (id <= 0) return null;
    const end = t.sub[this.id]!;
    for (let c = this.id + 1; c < end; c = t.sub[c]!) if (t.field[c] === id) return t.node(c);
    return null;
  }

  get nextNamedSibling(): SyntaxNode | null {
    const t = this.t;
    const p = t.parent[this.id]!;
    if (p < 0) return null;
    const end = t.sub[p]!;
    for (let c = t.sub[this.id]!; c < end; c = t.sub[c]!) if (t.g.named[t.type[c]!]) return t.node(c);
    return null;
  }

  get previousNamedSibling(): SyntaxNode | null {
    const t = this.t;
    for (let c = t.prev[this.id]!; c >= 0; c = t.prev[c]!) if (t.g.named[t.type[c]!]) return t.node(c);
    return null;
  }

  /** This node and its descendants whose type is one of `types`, in document (pre-)order. */
  descendantsOfType(types: TypeSet): SyntaxNode[] {
    const t = this.t;
    const match = t.g.matcher(types);
    const end = t.sub[this.id]!;
    const out: SyntaxNode[] = [];
    for (let c = this.id; c < end; c++) if (match[t.type[c]!] === 1) out.push(t.node(c));
    return out;
  }
}
