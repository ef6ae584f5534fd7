// Plain data shared by the extract/ modules: parsed items, graph facts and
// problems. Everything here is JSON-like (strings, numbers, arrays, nulls) so
// that ingest/ can compare two extractions field by field.

/** What a Rust item is. `method` = a fn inside an impl; `trait_item` = a member of a trait. */
export type NodeKind =
  | 'module' | 'fn' | 'method' | 'struct' | 'enum' | 'variant' | 'union' | 'trait'
  | 'trait_item' | 'impl' | 'const' | 'static' | 'type' | 'macro';

/** `value_ref`: a path naming a value in an expression or pattern (`WalkState::Quit`, `Unit`, `LIMIT`), not called. */
export type EdgeKind = 'contains' | 'impl_of_trait' | 'impl_for_type' | 'uses' | 'calls' | 'type_ref' | 'value_ref';

export type ParseStatus = 'ok' | 'errors';

export type FileStatus =
  | ParseStatus | 'skipped-not-utf8' | 'skipped-too-large' | 'skipped-binary' | 'missing' | 'loop';

export type ProblemKind =
  | 'parse-errors' | 'not-utf8' | 'too-large' | 'binary' | 'missing' | 'loop' | 'unreadable' | 'bad-manifest' | 'macro';

/** Something wrong with the input; extraction went on without it. */
export interface Problem {
  path: string;
  kind: ProblemKind;
  message: string;
}

/** One `use` leaf, flattened from groups: `use a::{b, c::d as e, f::*}` gives three. */
export interface UseDecl {
  /** The imported path as written, segments joined by `::` (for a glob: the module path). */
  path: string;
  /** The name it is bound to (`e` above; `_` for `as _`), or null for a glob. */
  alias: string | null;
  glob: boolean;
  /** Where its name is (extract/parser.ts flattenUse): line, and column 1-based (absent: not known, e.g. a `use` of a macro's expansion). */
  line: number;
  col?: number;
  visibility: string;
  /** `cfg`/`cfg_attr` attributes on the declaration (see Item.cfg). */
  cfg?: string[];
}

/** `extern crate name as alias;` (alias = name without `as`); `pub` on a facade's (`pub extern crate gimli;`). */
export interface ExternCrate {
  name: string;
  alias: string;
  cfg?: string[];
  macroUse?: boolean;
  /** Set only when not private (`pub`, `pub(crate)`). */
  visibility?: string;
}

/**
 * A type as written, paths not yet resolved: what name resolution renders
 * and inference reads. Lifetimes are dropped; `impl A` and `dyn A` are both `dyn`.
 */
export type TypeRef =
  | { k: 'path'; path: string; args: TypeRef[]; assoc?: { name: string; ty: TypeRef }[] }
  | { k: 'ref'; mut: boolean; of: TypeRef }
  | { k: 'ptr'; of: TypeRef }
  | { k: 'slice'; of: TypeRef }
  | { k: 'tuple'; of: TypeRef[] }
  | { k: 'dyn'; bounds: TypeRef[] }
  | { k: 'prim'; name: string }
  /** `<T as Trait>::Name` or `T::Name` (trait null). */
  | { k: 'qself'; self: TypeRef; trait: TypeRef | null; name: string }
  /** A fn pointer type (`unsafe fn(A, B) -> R`; `ret` null for `()`); `text` as written, whitespace collapsed (paths render it so). */
  | { k: 'fn'; params: TypeRef[]; ret: TypeRef | null; text: string }
  | { k: 'other'; text: string };

/** A generic parameter with its trait bounds (from `<T: A>` and `where T: B`). */
export interface GenericParam {
  name: string;
  bounds: TypeRef[];
  /** Named only by a `where` predicate, not declared here: an outer item's parameter or a type (`where Standard: Distribution<T>`). */
  whereOnly?: true;
  /** `E = Error`: the type a missing argument stands for. */
  default?: TypeRef;
}

/**
 * An expression as far as method resolution needs it (a receiver, a `let`
 * initialiser): paths, calls, method calls, fields, `?`, derefs, literals.
 * Anything else is `unknown` with its syntax kind.
 */
export type Expr =
  | { k: 'path'; path: string }
  | { k: 'call'; f: string; targs?: TypeRef[]; a0?: Expr }
  /** A call of a value (`(vtable.f)(x)`, `make()(x)`): the callee any expression but a path or a method. */
  | { k: 'vcall'; f: Expr; a0?: Expr }
  | { k: 'mcall'; recv: Expr; name: string; targs?: TypeRef[]; a0?: Expr }
  | { k: 'field'; recv: Expr; name: string }
  | { k: 'try'; of: Expr }
  | { k: 'deref'; of: Expr }
  | { k: 'index'; of: Expr; range?: boolean }
  | { k: 'tuple'; of: Expr[] }
  | { k: 'struct'; path: string }
  | { k: 'lit'; prim: string }
  | { k: 'cast'; ty: TypeRef }
  | { k: 'macro'; name: string }
  /** A closure: the expression it returns (a block's tail), when there is one. */
  | { k: 'closure'; body: Expr | null; at: number }
  /**
   * One of several values of one type (match arms, if/else branches): the first whose type is known.
   * `at`: where each is read (a match arm's bindings are visible from its pattern on).
   */
  | { k: 'either'; of: Expr[]; at?: number[] }
  | { k: 'unknown'; what: string };

/**
 * A local name in a body: `let` (with its type and/or initialiser),
 * parameters, closure parameters, `for` and `if let`/`while let`/`match`
 * patterns. `via` says how the name's type follows from `init`'s:
 * `value` = the same; `some` = the payload of Option/Result (`Some(x)`,
 * `Ok(x)`); `iter` = the item of iterating it; `closure` = parameter
 * `closure.param` of a closure passed as argument `closure.arg` to method
 * `closure.method` of the receiver `init`. `proj` then takes tuple elements
 * and struct/variant fields, outermost first (`let (a, b) = …`,
 * `Class(hir::Class::Unicode(ref cls))`, `Foo { a, .. }`).
 */
export interface Binding {
  name: string;
  /** UTF-16 offset in the file from which the name is visible… */
  at: number;
  /** …and up to which (exclusive; absent: the end of the body). */
  until?: number;
  ty?: TypeRef;
  init?: Expr;
  via?: 'value' | 'some' | 'iter' | 'closure';
  /** `fn`: the closure is an argument of a path call (`f(|x| …)`), and `init` is the called path. */
  closure?: { method: string; arg: number; param: number; fn?: true };
  proj?: Projection[];
  /** UTF-16 offset at which `init` is read (the `let`'s start: `let x = x.next();` reads the earlier x); default `at`. */
  from?: number;
}

/** A step into a value: a tuple's element, or a field of the struct or variant a pattern names. */
/** (`elem` after a `..` counts from the end: -1 is the last; `deref`: a `&pat` pattern, through the reference.) */
export type Projection = { elem: number } | { path: string; field: string } | { deref: true };

/**
 * A reference from inside an item. `target` is the path as written: `foo`,
 * `a::b::c`, `Type::method`, `.m` for a method call, `name!` for a macro.
 * `line`/`col` are the name token's (`m` in `a.b().m()`, `f` in `a::f()`).
 */
export interface Ref {
  kind: 'calls' | 'type_ref' | 'value_ref';
  target: string;
  line: number;
  /** 1-based column (UTF-16 code units) of the name token; 0 when unknown. */
  col: number;
  /** Method calls: the receiver. */
  recv?: Expr;
  /** The first argument (picks among `From<A>` / `PartialEq<Rhs>` impls: `Ref::from("x")`, `a.eq(&b)`). */
  a0?: Expr;
  /** `<T as Trait>::f(…)` / `<T>::f(…)`: the qualified self type and trait. */
  qself?: { self: TypeRef; trait: TypeRef | null };
  /** UTF-16 offset of the call in its file (bindings before it are in scope). */
  at?: number;
  /**
   * value_ref of a bare name in a pattern (`Quit =>` after `use WalkState::*`): a path only when it names a
   * unit variant, unit struct or const (rustc's rule; then an edge), else a binding (no edge).
   */
  pat?: true;
  /**
   * Absent = as the item it is in; null = written in the source; `macro-arg` =
   * inside an expression macro's arguments; `macro:<name>` = generated by it.
   */
  origin?: string | null;
}

/** An item-position macro invocation (`foo! { … }` / `foo!(…);` among items). */
export interface MacroCall {
  /** The macro's path as written, without `!`. */
  path: string;
  /** The token tree's text, delimiters included, and where it starts (its tokens keep exact positions). */
  text: string;
  textLine: number;
  textCol: number;
  line: number;
  col: number;
  /** UTF-16 offset of the invocation in its file. */
  startIndex: number;
  /** `cfg`/`cfg_attr` attributes on the invocation. */
  cfg?: string[];
}

/** One item as the parser sees it (a file is a list of these). */
export interface Item {
  kind: NodeKind;
  /** Identifier; '' for impls. */
  name: string;
  visibility: string;
  signature: string;
  lineStart: number;
  lineEnd: number;
  /** 1-based column of the name token (of `impl` for impls); 0 when unknown. */
  col: number;
  /** File the item lives in, relative to the crate dir ('' until modules.ts places it). */
  file: string;
  /** Members: inline or file module items, impl/trait members, enum variants. */
  children: Item[];
  /** `use` declarations directly in this scope (module, or fn body). */
  uses: UseDecl[];
  refs: Ref[];
  /** Type parameter names declared on the item (never resolved as paths). */
  generics: string[];
  /** A type alias's defaulted parameters (`type Result<T, E = Error>`: E -> Error). */
  genericDefaults?: { name: string; ty: TypeRef }[];
  /** Type parameters with their bounds (own ones; members also see their impl's/trait's). */
  bounds?: GenericParam[];
  /**
   * Outer `#[cfg(…)]` and `#[cfg_attr(…)]` attributes, each as the text
   * inside `#[…]`; resolve/cfg.ts evaluates them.
   */
  cfg?: string[];
  /** For `mod`: `external` = `mod foo;` (body in another file); `pathAttr` = `#[path = "…"]`. */
  mod?: { external: boolean; pathAttr: string | null };
  /** For impls: trait and self type as written (whitespace collapsed), and their paths without generic arguments. */
  impl?: {
    trait: string | null; traitPath: string | null; selfType: string; selfTypePath: string; selfTy: TypeRef; traitTy: TypeRef | null;
    /** An impl inside a body whose self type is an item of that body (not resolvable from the module). */
    local?: boolean;
  };
  /** `#[macro_export]` on a macro_rules!. */
  macroExport?: boolean;
  /** `#[macro_use]` on a `mod` (its macros stay visible after it). */
  macroUse?: boolean;
  /** A `macro_rules!` definition's whole text (for the expander and for dependants). */
  macroText?: string;
  /** `extern crate x as y;` in a module: alias → crate name (`pub` when it is re-exported: a facade). */
  externCrates?: ExternCrate[];
  /** Item-position macro invocations directly in this scope. */
  macroCalls?: MacroCall[];
  /** Macro invocations inside this item's own bodies (macros/ turns their arguments into refs). */
  bodyMacros?: MacroCall[];
  /** `#[macro_export(local_inner_macros)]` on a macro_rules!. */
  macroLocalInner?: boolean;
  /** Hash of the item's own text, child items cut out (parser.ts); absent for a crate root module. */
  bodyHash?: string;
  /** Struct/union/variant fields (tuple fields named `0`, `1`, …). */
  fields?: { name: string; ty: TypeRef; visibility: string }[];
  /** Functions: parameters (name null for a pattern), `self` kind, declared return type (null = `()`). */
  params?: { name: string | null; ty: TypeRef }[];
  selfParam?: 'value' | 'ref' | 'mut' | null;
  ret?: TypeRef | null;
  /** Type aliases and associated types (`type Target = X;`); consts and statics: their type. */
  ty?: TypeRef;
  /** Traits: supertraits. */
  supertraits?: TypeRef[];
  /** Bodies: local names with their types or initialisers, in source order. */
  bindings?: Binding[];
  /** Bodies: [start, end, cfg attributes] of statements carrying `#[cfg]`. */
  cfgSpans?: [number, number, string[]][];
  /** null/absent = written in the source; `macro:<name>` = generated by that macro. */
  origin?: string;
}

export interface ParsedFile {
  status: ParseStatus;
  /** Count of ERROR and MISSING nodes. */
  errorCount: number;
  /** Line of the first error (1-based), or 0. */
  firstErrorLine: number;
  items: Item[];
  uses: UseDecl[];
  /** Module-level macro invocations (item-producing macros). */
  macroCalls: MacroCall[];
  externCrates: ExternCrate[];
  /** Inner `#![cfg(…)]` attributes of the file (they apply to its module). */
  innerCfg: string[];
  /** Line and column (1-based) of the file's first token that is not a plain comment (where rustc's span of a file module starts). */
  firstLine: number;
  firstCol: number;
  lineCount: number;
}

export interface FileFact {
  /** Relative to the crate dir, '/'-separated. */
  path: string;
  /** sha256 hex of the bytes ('' when the file could not be read). */
  hash: string;
  size: number;
  parseStatus: FileStatus;
}

export interface NodeFact {
  id: string;
  kind: NodeKind;
  name: string;
  qpath: string;
  file: string;
  lineStart: number;
  lineEnd: number;
  visibility: string;
  signature: string;
  parent: string | null;
  /** 1-based column of the name token (0 unknown). */
  col: number;
  /** null = written in the source; `macro:<name>` = generated by that macro_rules!. */
  origin: string | null;
  /** The item's public paths (as rustdoc computes them), sorted; empty when none. */
  publicPaths: string[];
  /** Compact JSON of what other crates need to resolve into this item (resolve/summary.ts), or null. */
  typeInfo: string | null;
  /**
   * sha256 hex (16 chars) of the item's exact text without its child items
   * (see parser.ts), so a body edit that moves no line is still a change.
   * Not part of the id. A crate root module hashes the empty text.
   */
  bodyHash: string;
}

export interface EdgeFact {
  id: string;
  src: string;
  dst: string | null;
  dstPath: string;
  dstKrate: string | null;
  kind: EdgeKind;
  file: string;
  line: number;
  /** 1-based column of the target's name token (0 unknown). */
  col: number;
  /** Why `dst` is null (null when resolved). */
  unresolvedReason: string | null;
  /** null = written; `macro-arg` = inside an expression macro's arguments; `macro:<name>` = generated. */
  origin: string | null;
  /** Calls: `static`, or `dynamic` for a call through a trait bound / trait object; null otherwise. */
  dispatch: 'static' | 'dynamic' | null;
}

export interface CrateGraph {
  files: FileFact[];
  nodes: NodeFact[];
  edges: EdgeFact[];
  problems: Problem[];
  /** What macro expansion did (for reports and benchmarks). */
  expansion?: ExpansionStats;
}

/** Counts of the expansion phase (src/extract/macros). */
export interface ExpansionStats {
  /** Item-position invocations met (nested ones included) and what became of them. */
  itemCalls: number;
  expanded: number;
  wrappers: number;
  cfgIf: number;
  unresolved: number;
  failed: number;
  /** Items produced (top level of each expansion); expansions parsed, and their text's length. */
  producedItems: number;
  parses: number;
  parsedChars: number;
  /** Macro calls inside bodies (nested ones included); expanded by their definition; refs found. */
  bodyCalls: number;
  bodyExpanded: number;
  argRefs: number;
  /** The first failures (`file:line name!: why`). */
  failures: string[];
}
