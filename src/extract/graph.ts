// One crate's source -> its code graph: files, nodes (items with stable ids)
// and edges (contains, impl-of-trait, impl-for-type, uses, calls, type refs).
// Extraction is per file (parser.ts); resolution is per crate, in rustc's
// order, one phase per file of resolve/:
//   cfg -> module tree (+ macro expansion) -> defs -> names -> impls -> ids
//   -> public paths -> types / method calls -> edges, type_info.
//
// Invariants:
// - Ids never depend on files or lines: a node id hashes (repo, krate,
//   namespace, qualified path, disambiguator); moving an item within its
//   module keeps its id, renaming it changes it. The namespace (type, value,
//   macro, impl — Rust's own name spaces) stands in for the kind so that an id
//   can be computed from a path alone (see `universeNodeId`).
// - Duplicates of (namespace, qpath) left after cfg (two `impl Foo` blocks,
//   items of the same name in two bin targets) are numbered in module-tree
//   order; impls are keyed by their header text too, so only identical
//   headers are numbered.
// - Resolution never guesses across crates: an edge keeps its textual target
//   in `dstPath`; `dst` is set only for a found item (see resolve/edges.ts).
// Bad input never throws: see modules.ts; the graph holds what parsed.
import { hash } from 'node:crypto';
import * as path from 'node:path';
import { MacroExpander } from './macros/expander.ts';
import { loadModuleTree, type ItemExpander } from './modules.ts';
import { bodyHashOf, loadRust, type RustParser } from './parser.ts';
import { buildScriptCfgs, Cfg } from './resolve/cfg.ts';
import { DefTable, namespaceOf, type Def, type Namespace } from './resolve/defs.ts';
import { DepWorld, crateIdent } from './resolve/deps.ts';
import { Edges, edgeId } from './resolve/edges.ts';
import { Exports } from './resolve/exports.ts';
import { Impls } from './resolve/impls.ts';
import { Infer } from './resolve/infer.ts';
import { Names, type Dep } from './resolve/names.ts';
import { parseType, type DepCrate } from './resolve/summary.ts';
import { TypeLowering } from './resolve/types.ts';
import type { CrateGraph, FileFact, NodeFact, Problem, TypeRef } from './types.ts';

export const UNIVERSE = '@universe';
/** Body hash of an item without text of its own (a crate root module). */
const EMPTY_BODY_HASH = bodyHashOf('');

export { edgeId, namespaceOf, type Namespace };

export interface ExtractInput {
  repo: string;
  /** `name@version` (used as given in ids; see README of ingest for the choice). */
  krate: string;
  /** Absolute crate dir. */
  rootDir: string;
  /** Target root files relative to rootDir, lib first (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`). */
  targets: string[];
  /**
   * Dependencies by the name the code uses (`-` or `_`), to `name@version`.
   * `repo` is where that crate's ids live: '@universe' (default) for
   * dependencies, the same repo for a sibling workspace member.
   */
  deps: Map<string, { krate: string; repo?: string }>;
  readFile(absPath: string): Promise<Buffer>;
  limits?: { maxFileBytes?: number };
  /** A parser to reuse (default: one per process via loadRust). */
  parser?: RustParser;
  /** The package's edition (default '2015', as cargo). */
  edition?: string;
  /** Active features, already expanded (cargo.ts activeFeatures); default none. */
  features?: readonly string[];
  /** The build script relative to rootDir: the cfg names it sets literally are on (see resolve/cfg.ts). */
  buildScript?: string | null;
  /** Dependency crates loaded from the lake (their nodes), to resolve into. */
  depCrates?: readonly DepCrate[];
  /** Item-position macro expansion (src/extract/macros); none by default. */
  expander?: ItemExpander;
  /** The crate's own name in paths (default: from `krate`); a test target `tests/it.rs` is `it`. */
  ident?: string;
  /** Extra cfg names set (`test` for a test or bench target). */
  cfgNames?: readonly string[];
  /** cfg as the release profile sets it (`debug_assertions` off); default the dev profile's (on). */
  release?: boolean;
}

/** Stable id of an item: 32 hex chars of sha256 over (repo, krate, namespace, qpath, disambiguator). */
export function nodeId(repo: string, krate: string, ns: Namespace, qpath: string, disamb = ''): string {
  return hash('sha256', JSON.stringify([repo, krate, ns, qpath, disamb]), 'hex').slice(0, 32);
}

/** The id extracting dependency `krate` (`name@version`) into the universe gives the item at `qpath`. */
export function universeNodeId(krate: string, ns: Namespace, qpath: string): string {
  return nodeId(UNIVERSE, krate, ns, qpath);
}

export async function extractCrate(input: ExtractInput): Promise<CrateGraph> {
  const parser = input.parser ?? await loadRust();
  const ident = input.ident ?? crateIdent(input.krate);
  const files = new Map<string, FileFact>();
  const problems: Problem[] = [];

  // cfg, then each target's module tree (expanding macros as it goes)
  const cfg = new Cfg({ features: input.features ?? [], names: [...await buildScriptNames(input), ...input.cfgNames ?? []], release: input.release === true });
  const table = new DefTable();
  const macros = input.expander ? null : new MacroExpander({
    krate: input.krate, ident, edition: editionOf(input.edition), parser,
    deps: new Map([...input.deps].map(([local, d]) => [local.replace(/-/g, '_'), d.krate])), depCrates: input.depCrates,
  });
  const expander: ItemExpander | undefined = input.expander ?? macros ?? undefined;
  for (let i = 0; i < input.targets.length; i++) {
    const target = input.targets[i]!;
    const name = i === 0 ? ident : `${ident}[bin ${binName(target)}]`;
    const tree = await loadModuleTree({
      rootDir: input.rootDir, target, name, readFile: input.readFile, parser,
      maxFileBytes: input.limits?.maxFileBytes, cfg, expander,
    });
    for (const f of tree.files) if (!files.has(f.path)) files.set(f.path, f);
    for (const p of tree.problems) {
      if (!problems.some((q) => q.path === p.path && q.kind === p.kind)) problems.push(p);
    }
    table.addTarget(tree.root, name);
  }
  if (macros) problems.push(...macros.problems);

  // names, impls, ids, public paths
  const deps = new Map<string, Dep>();
  const depRepo = new Map<string, string>();
  for (const [local, d] of input.deps) {
    const dep: Dep = { krate: d.krate, ident: crateIdent(d.krate), repo: d.repo ?? UNIVERSE };
    deps.set(local.replace(/-/g, '_'), dep);
    if (!depRepo.has(d.krate)) depRepo.set(d.krate, dep.repo);
  }
  const world = new DepWorld(input.depCrates ?? []);
  const names = new Names(table, { ident, edition: input.edition ?? '2015', deps, world });
  const lowering = new TypeLowering(names, world);
  if (macros) lowering.macroType = (text) => typeOfExpansion(macros.expandType(text));
  const impls = new Impls(table, names, lowering, ident, world);
  impls.place();
  assignIds(table.defs, input.repo, input.krate);
  names.computePublicPaths();

  // types and edges
  const infer = new Infer(names, lowering, impls);
  const edges = new Edges(table, names, impls, infer, {
    krate: input.krate, depRepo, depId: (repo, krate, ns, qpath) => nodeId(repo, krate, ns, qpath),
  }).all();
  const exports = new Exports(lowering, impls, names);
  const nodes: NodeFact[] = table.defs.map((d) => ({
    id: d.id, kind: d.kind, name: d.item.name, qpath: d.qpath, file: d.item.file,
    lineStart: d.item.lineStart, lineEnd: d.item.lineEnd, visibility: d.item.visibility,
    signature: d.item.signature, parent: d.parent ? d.parent.id : null,
    col: d.item.col, origin: d.item.origin ?? null, publicPaths: d.publicPaths, typeInfo: exports.typeInfo(d),
    bodyHash: d.item.bodyHash ?? EMPTY_BODY_HASH,
  }));
  return { files: [...files.values()], nodes, edges, problems, ...(macros ? { expansion: macros.stats } : {}) };
}

/** A type-position expansion's rendered text (tokens one space apart) as a TypeRef; null when it is no type parseType reads. */
function typeOfExpansion(text: string | null): TypeRef | null {
  if (text === null) return null;
  const t = parseType(text.replace(/\s*::\s*/g, '::').replace(/\s*([<>,])\s*/g, '$1').replace(/&\s+/g, '&').replace(/^::/, ''));
  return t.k === 'other' ? null : t;
}

function editionOf(e: string | undefined): 2015 | 2018 | 2021 | 2024 {
  return e === '2018' ? 2018 : e === '2021' ? 2021 : e === '2024' ? 2024 : 2015;
}

/** The cfg names the build script sets (none when there is none, or it cannot be read). */
async function buildScriptNames(input: ExtractInput): Promise<string[]> {
  if (!input.buildScript) return [];
  try {
    return buildScriptCfgs((await input.readFile(path.resolve(input.rootDir, input.buildScript))).toString('utf8'));
  } catch {
    return [];
  }
}

function assignIds(defs: readonly Def[], repo: string, krate: string): void {
  const seen = new Map<string, number>();
  for (const d of defs) {
    const base = d.kind === 'impl' ? `${d.ns}\u0000${d.qpath}\u0000${d.item.signature}` : `${d.ns}\u0000${d.qpath}`;
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    let disamb = d.kind === 'impl' ? d.item.signature : '';
    if (n > 0) {
      disamb += `#${n + 1}`;
      if (d.kind === 'impl') d.qpath += ` #${n + 1}`;
    }
    d.id = nodeId(repo, krate, d.ns, d.qpath, disamb);
  }
}

function binName(target: string): string {
  const base = path.posix.basename(target, '.rs');
  return base === 'main' ? path.posix.basename(path.posix.dirname(target)) : base;
}
