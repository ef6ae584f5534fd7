// Plain data shared by the extract/ modules: parsed items, graph facts and
// problems. Everything here is JSON-like (strings, numbers, arrays, nulls) so
// that ingest/ can compare two extractions field by field.

/** What a Rust item is. `method` = a fn inside an impl; `trait_item` = a member of a trait. */
export type NodeKind =
  | 'module' | 'fn' | 'method' | 'struct' | 'enum' | 'variant' | 'union' | 'trait'
  | 'trait_item' | 'impl' | 'const' | 'static' | 'type' | 'macro';

export type EdgeKind = 'contains' | 'impl_of_trait' | 'impl_for_type' | 'uses' | 'calls' | 'type_ref';

export type ParseStatus = 'ok' | 'errors';

export type FileStatus =
  | ParseStatus | 'skipped-not-utf8' | 'skipped-too-large' | 'skipped-binary' | 'missing' | 'loop';

export type ProblemKind =
  | 'parse-errors' | 'not-utf8' | 'too-large' | 'binary' | 'missing' | 'loop' | 'unreadable' | 'bad-manifest';

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
  /** The name it is bound to (`e` above), or null for a glob. */
  alias: string | null;
  glob: boolean;
  line: number;
  visibility: string;
}

/**
 * A reference from inside an item. `target` is the path as written: `foo`,
 * `a::b::c`, `Type::method`, `.m` for a method call, `name!` for a macro.
 */
export interface Ref {
  kind: 'calls' | 'type_ref';
  target: string;
  line: number;
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
  /** File the item lives in, relative to the crate dir ('' until modules.ts places it). */
  file: string;
  /** Members: inline or file module items, impl/trait members, enum variants. */
  children: Item[];
  /** `use` declarations directly in this scope (module, or fn body). */
  uses: UseDecl[];
  refs: Ref[];
  /** Type parameter names declared on the item (never resolved as paths). */
  generics: string[];
  /** For `mod`: `external` = `mod foo;` (body in another file); `pathAttr` = `#[path = "…"]`. */
  mod?: { external: boolean; pathAttr: string | null };
  /** For impls: trait and self type as written (whitespace collapsed), and their paths without generic arguments. */
  impl?: { trait: string | null; traitPath: string | null; selfType: string; selfTypePath: string };
  /** `#[macro_export]` on a macro_rules!. */
  macroExport?: boolean;
  /** `extern crate x as y;` in a module: alias → crate name. */
  externCrates?: { name: string; alias: string }[];
  /** Hash of the item's own text, child items cut out (parser.ts); absent for a crate root module. */
  bodyHash?: string;
}

export interface ParsedFile {
  status: ParseStatus;
  /** Count of ERROR and MISSING nodes. */
  errorCount: number;
  /** Line of the first error (1-based), or 0. */
  firstErrorLine: number;
  items: Item[];
  uses: UseDecl[];
  /** Module-level macro invocations (item-producing macros), as refs of the file's module. */
  refs: Ref[];
  externCrates: { name: string; alias: string }[];
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
}

export interface CrateGraph {
  files: FileFact[];
  nodes: NodeFact[];
  edges: EdgeFact[];
  problems: Problem[];
}
