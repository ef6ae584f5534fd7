// `mimir export scip`: one repo's graph, as of one generation, as a SCIP index
// (scip-wire.ts) so that Sourcegraph and other SCIP consumers read it. One
// Document per Rust source file of the repo (path = the crate's folder in the
// workspace + the file), holding a definition occurrence per item at its name
// and a reference occurrence per edge (refs and call sites) at the target's
// name, and a SymbolInformation per item defined there; items of other repos
// and the universe that edges point at are the index's external symbols.
//
// Symbols follow SCIP's grammar with rust-analyzer's scheme and package, so
// they can meet rust-analyzer's own SCIP output: `rust-analyzer cargo <crate>
// <version> <descriptors>`, the descriptors being the item's qualified path
// without its crate segment. Mapping per item kind (the last descriptor; the
// segments before it are namespaces `/`, except the owner of a member, a
// type `#`):
//   module -> `name/` (a crate root: `crate/`); struct, enum, union, trait,
//   type alias -> `Name#`; fn -> `name().`; method -> `Type#name().`;
//   variant -> `Enum#Variant.`; trait item -> `Trait#name().` (fn),
//   `Trait#Name#` (type), `Trait#NAME.` (const); const, static -> `NAME.`;
//   macro -> `name!`. Impls have no symbol (their members are named with the
//   self type, not `impl#[..]` as rust-analyzer does). A binary target's crate
//   (`app[bin tool]@0.1.0`) keeps its root segment as a first namespace,
//   backtick-escaped. Names outside SCIP's simple identifiers are escaped
//   with backticks (a backtick doubled). An edge whose target is not a node
//   (unresolved into a known crate) gets a symbol from its path, the kind
//   guessed from the edge; one into no known crate (std, unknown receivers)
//   is not exported (counted as `skipped`).
//
// Positions: Mimir keeps 1-based lines and 1-based columns in UTF-16 code
// units (extract/tree.ts); SCIP ranges are 0-based, and each Document says
// PositionEncoding UTF16. A name is looked up in the stored source line at
// the recorded column (edges of `use` items carry none, impl edges the
// `impl` keyword's): its first whole-word occurrence from there, else from
// the line start (a `use` over several lines: on the item's next lines, so
// such an import's occurrence may sit below the line Mimir answers with),
// else the identifier at the recorded column (`Self`, a renamed import). `contains` edges are structure,
// not text, and are not exported.
//
// Memory: one crate of the repo at a time (its live nodes and edges, the
// columns answers show), one document and its source text at a time, and the
// external symbols met so far; the index is written as a stream of records
// (metadata first). Read-only.
import { pathToFileURL } from 'node:url';
import { and, eq, inList } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';
import { readBlob } from '../log/blobs.ts';
import { dstName } from '../log/state/schema.ts';
import { EDGE_HIT_COLUMNS, NODE_HIT_COLUMNS, stateNodeHit } from './state.ts';
import { edgeNamesByPath } from './refs.ts';
import { repoRoots } from './scope.ts';
import { candidateIds, edgeHit, foldIds, isLive, nodeHit, placed, readAt, str, type AsOf, type EdgeHit, type NodeHit, type ReadAt, type Row } from './read.ts';
import {
  POSITION_ENCODING_UTF16, ROLE_DEFINITION, ROLE_IMPORT, SYMBOL_KIND, TEXT_ENCODING_UTF8,
  encodeDocumentRecord, encodeExternalSymbolRecord, encodeMetadataRecord,
  type Document, type Occurrence, type SymbolInformation, type ToolInfo,
} from './scip-wire.ts';

export interface ScipOptions {
  repo: string;
  asOf?: AsOf;
  /**
   * Metadata.project_root, a URI (`file:///…`); default: the folder the
   * repo's newest ingest run recorded (refused when none was recorded).
   */
  projectRoot?: string;
  tool: ToolInfo;
  /** Where the graph is read from (QueryOptions.from): the state tables by default, `log` = fold the event log (the same index; for checks). */
  from?: 'state' | 'log';
  /** Progress after each document (done of total). */
  onProgress?: (done: number, total: number) => void;
}

export interface ScipReport {
  repo: string;
  generation: bigint;
  documents: number;
  occurrences: number;
  definitions: number;
  references: number;
  /** SymbolInformation in documents (defined here). */
  symbols: number;
  externalSymbols: number;
  /** Edges not exported: their target is in no known crate (std, unresolved receivers). */
  skipped: number;
  bytes: number;
}

/** The symbol scheme rust-analyzer's SCIP output uses. */
export const SCHEME = 'rust-analyzer';

/** Write the repo's index to `write` (records in order; each awaited). Throws when the repo has no live file or item. */
export async function exportScip(log: EventLog, opts: ScipOptions, write: (bytes: Uint8Array) => Promise<void>): Promise<ScipReport> {
  return readAt(log, opts.asOf, async (r) => {
    const files = await repoFiles(r, opts.repo);
    if (files.length === 0) {
      throw new Error(`expected repo "${opts.repo}" to have live files at generation ${r.generation}, found none (mimir repo list names the repos) — nothing written`);
    }
    const report: ScipReport = { repo: opts.repo, generation: r.generation, documents: 0, occurrences: 0, definitions: 0, references: 0, symbols: 0, externalSymbols: 0, skipped: 0, bytes: 0 };
    const put = async (b: Uint8Array): Promise<void> => {
      report.bytes += b.length;
      await write(b);
    };
    const projectRoot = opts.projectRoot ?? (await recordedRoot(r, opts.repo));
    await put(encodeMetadataRecord({ version: 0, toolInfo: opts.tool, projectRoot, textDocumentEncoding: TEXT_ENCODING_UTF8 }));

    const sources = files.filter((f) => f.path.endsWith('.rs'));
    const repoKrates = new Set(files.map((f) => f.krate));
    const external = new Map<string, SymbolInformation>();
    // one crate at a time: its nodes and edges, the targets of its edges, its documents
    for (const krate of [...repoKrates].sort(cmpStr)) {
      const [nodes, edges] = await Promise.all([crateNodes(r, opts.repo, krate), crateEdges(r, opts.repo, krate)]);
      const targets = await resolveTargets(r, opts.repo, repoKrates, nodes, edges);
      const byFile = new Map<string, { nodes: NodeHit[]; edges: EdgeHit[] }>();
      const slot = (file: string): { nodes: NodeHit[]; edges: EdgeHit[] } => {
        let s = byFile.get(file);
        if (!s) byFile.set(file, (s = { nodes: [], edges: [] }));
        return s;
      };
      for (const n of nodes) if (n.file !== null) slot(n.file).nodes.push(n);
      for (const e of edges) {
        if (e.edgeKind === 'contains' || e.file === null || e.line === null) continue;
        if (!targets.has(e.id)) {
          report.skipped++;
          continue;
        }
        slot(e.file).edges.push(e);
      }
      for (const t of targets.values()) if (t.external && !external.has(t.info.symbol)) external.set(t.info.symbol, t.info);
      for (const f of sources.filter((x) => x.krate === krate).sort((a, b) => cmpStr(a.relative, b.relative))) {
        const s = byFile.get(f.path) ?? { nodes: [], edges: [] };
        const text = f.hash === null ? null : await readBlob(r.log, f.hash);
        const doc = documentOf(f.relative, text, s.nodes, s.edges, targets);
        report.documents++;
        report.occurrences += doc.occurrences.length;
        report.definitions += doc.occurrences.filter((o) => (o.symbolRoles & ROLE_DEFINITION) !== 0).length;
        report.symbols += doc.symbols.length;
        await put(encodeDocumentRecord(doc));
        opts.onProgress?.(report.documents, sources.length);
      }
    }
    report.references = report.occurrences - report.definitions;
    for (const info of [...external.values()].sort((a, b) => cmpStr(a.symbol, b.symbol))) {
      report.externalSymbols++;
      await put(encodeExternalSymbolRecord(info));
    }
    return report;
  }, opts.from);
}

/** `export scip repo R at generation G: 3 documents, 120 occurrences (40 definitions, 80 references), 40 symbols, 5 external, 2 edges skipped, 4.1 kB`. */
export function formatScipReport(r: ScipReport): string {
  return `export scip repo ${r.repo} at generation ${r.generation}: ${r.documents} documents, ${r.occurrences} occurrences `
    + `(${r.definitions} definitions, ${r.references} references), ${r.symbols} symbols, ${r.externalSymbols} external symbols, `
    + `${r.skipped} edges skipped (no target crate), ${r.bytes} bytes`;
}

/** The repo's root folder as its newest ingest run recorded it, as a file:// URI. */
async function recordedRoot(r: ReadAt, repo: string): Promise<string> {
  const root = (await repoRoots(r.log, r.generation, [repo])).get(repo);
  if (root === undefined) throw new Error(`expected the ingest runs of repo "${repo}" to record the folder it was ingested from, found none — pass the project root (--root DIR); nothing written`);
  return pathToFileURL(root).href;
}

// ---- symbols ------------------------------------------------------------------------

const SIMPLE = /^[A-Za-z0-9_+\-$]+$/;

/** A descriptor name: as is when a simple identifier, else backtick-escaped. */
export function scipName(name: string): string {
  return SIMPLE.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}

/** A package field (scheme, manager, name, version): spaces doubled, `.` when empty. */
const pkgField = (s: string): string => (s === '' ? '.' : s.replace(/ /g, '  '));

/** `name@version` -> package name (a target suffix `[bin x]` dropped) and version. */
function packageOf(krate: string): { name: string; version: string; target: boolean } {
  const at = krate.lastIndexOf('@');
  const full = at > 0 ? krate.slice(0, at) : krate;
  const version = at > 0 ? krate.slice(at + 1) : '';
  const b = full.indexOf('[');
  return { name: b > 0 ? full.slice(0, b) : full, version, target: b > 0 };
}

/** The descriptor suffix of an item kind (the last descriptor), or null for kinds without a symbol (impls). */
function lastDescriptor(kind: string, name: string, signature: string | null): string | null {
  const n = scipName(name);
  switch (kind) {
    case 'module': return `${n}/`;
    case 'struct': case 'enum': case 'union': case 'trait': case 'type': return `${n}#`;
    case 'fn': case 'method': return `${n}().`;
    case 'variant': case 'const': case 'static': return `${n}.`;
    case 'macro': return `${n}!`;
    case 'trait_item': {
      const sig = signature ?? '';
      if (/\bfn\s/.test(sig)) return `${n}().`;
      if (/^\s*type\s/.test(sig)) return `${n}#`;
      return `${n}.`;
    }
    default: return null;
  }
}

/** Kinds whose item is a member of a type (its owner segment is a type `#`). */
const MEMBER_KINDS = new Set(['method', 'variant', 'trait_item']);

/**
 * The SCIP symbol of the item at `qpath` (`krate::a::B::c`) of kind `kind` in
 * `krate` (`name@version`), or null (an impl, a path without a name).
 */
export function scipSymbol(krate: string, qpath: string, kind: string, signature: string | null = null): string | null {
  const segs = qpath.split('::');
  if (segs.some((s) => s === '' || s.includes(' '))) return null;
  const pkg = packageOf(krate);
  const head = `${pkgField(SCHEME)} cargo ${pkgField(pkg.name)} ${pkgField(pkg.version)} `;
  const prefix = pkg.target ? `${scipName(segs[0]!)}/` : '';
  const rest = segs.slice(1);
  if (rest.length === 0) return kind === 'module' ? `${head}${prefix}crate/` : null;
  const last = lastDescriptor(kind, rest[rest.length - 1]!, signature);
  if (last === null) return null;
  const before = rest.slice(0, -1);
  const owner = MEMBER_KINDS.has(kind) && before.length > 0 ? `${scipName(before.pop()!)}#` : '';
  return `${head}${prefix}${before.map((s) => `${scipName(s)}/`).join('')}${owner}${last}`;
}

const KIND_OF: Record<string, number> = {
  module: SYMBOL_KIND.Module, struct: SYMBOL_KIND.Struct, enum: SYMBOL_KIND.Enum, union: SYMBOL_KIND.Union,
  trait: SYMBOL_KIND.Trait, type: SYMBOL_KIND.TypeAlias, fn: SYMBOL_KIND.Function, method: SYMBOL_KIND.Method,
  variant: SYMBOL_KIND.EnumMember, const: SYMBOL_KIND.Constant, static: SYMBOL_KIND.StaticVariable, macro: SYMBOL_KIND.Macro,
  trait_item: SYMBOL_KIND.TraitMethod,
};

function symbolInfo(symbol: string, n: { kind: string | null; name: string | null; signature: string | null }): SymbolInformation {
  const kind = n.kind === 'trait_item' && !/\bfn\s/.test(n.signature ?? '') ? 0 : (KIND_OF[n.kind ?? ''] ?? 0);
  return { symbol, displayName: n.name ?? '', kind, documentation: n.signature ? [`\`\`\`rust\n${n.signature}\n\`\`\``] : [] };
}

/** The symbol of a node, or null. */
const nodeSymbol = (n: NodeHit): string | null => (n.qpath && n.kind ? scipSymbol(n.krate, n.qpath, n.kind, n.signature) : null);

/** An unresolved edge's target kind, guessed from the edge and its path (a symbol needs one). */
function guessedKind(e: EdgeHit): string {
  const p = (e.dstPath ?? '').split('::');
  const last = p[p.length - 1] ?? '';
  if (last.endsWith('!')) return 'macro';
  const upper = (s: string | undefined): boolean => s !== undefined && /^[A-Z]/.test(s);
  if (e.edgeKind === 'type_ref') return 'struct';
  if (e.edgeKind === 'calls') return upper(p[p.length - 2]) ? 'method' : 'fn';
  return upper(last) ? 'struct' : 'fn';
}

// ---- reading the repo ---------------------------------------------------------------

interface SourceFileRow {
  krate: string;
  /** Relative to the crate folder, as node and edge rows name files. */
  path: string;
  /** Relative to the workspace: the Document's relative_path. */
  relative: string;
  hash: string | null;
}

async function crateNodes(r: ReadAt, repo: string, krate: string): Promise<NodeHit[]> {
  const where = and(eq('repo', repo), eq('krate', krate));
  if (r.view) return (await r.view.nodes(where, NODE_HIT_COLUMNS)).map(stateNodeHit);
  return (await foldCrate(r, 'node', repo, krate)).map(nodeHit);
}

async function crateEdges(r: ReadAt, repo: string, krate: string): Promise<EdgeHit[]> {
  const where = and(eq('repo', repo), eq('krate', krate));
  if (r.view) return (await r.view.edgesOut(where, EDGE_HIT_COLUMNS)).map(edgeHit);
  return (await foldCrate(r, 'edge', repo, krate)).map(edgeHit);
}

async function repoFiles(r: ReadAt, repo: string): Promise<SourceFileRow[]> {
  const rows = r.view ? await r.view.files(eq('repo', repo), ['krate', 'path', 'crate_dir', 'hash']) : await foldCrate(r, 'file', repo);
  return rows.filter((f) => typeof f.path === 'string').map((f) => {
    const dir = (str(f.crate_dir) ?? '').replace(/\/+$/, '');
    const path = f.path as string;
    return { krate: f.krate as string, path, relative: dir === '' || dir === '.' ? path : `${dir}/${path}`, hash: str(f.hash) };
  });
}

/** Live rows of one kind of a repo (or of one of its crates), folded from the log (a lake without state tables), nodes and edges placed by their pos rows. */
async function foldCrate(r: ReadAt, kind: 'node' | 'edge' | 'file', repo: string, krate?: string): Promise<Row[]> {
  const where = krate === undefined ? eq('repo', repo) : and(eq('repo', repo), eq('krate', krate));
  const state = await r.log.state(kind, where, { generation: r.generation });
  const live = [...state.values()].filter(isLive);
  if (kind === 'file') return live;
  const pos = await r.log.state('pos', where, { generation: r.generation });
  return live.map((row) => {
    const p = pos.get(row.id as string);
    return p ? placed(kind, row, p) : row;
  });
}

interface Target {
  info: SymbolInformation;
  /** Defined outside the repo (an external symbol of the index). */
  external: boolean;
  /** The name to find at the edge's place. */
  name: string;
}

/**
 * Each exportable edge's target (by edge id): the node its `dst` names (in
 * the repo, else looked up in its `dst_krate`), else a node of `dst_krate`
 * its path names (edgeNamesByPath, as refs answers), else a symbol made from
 * the path. Edges without `dst` nor `dst_krate` have none.
 */
async function resolveTargets(r: ReadAt, repo: string, repoKrates: Set<string>, nodes: NodeHit[], edges: EdgeHit[]): Promise<Map<string, Target>> {
  const key = (krate: string, id: string): string => `${krate}\u0000${id}`;
  const own = new Map(nodes.map((n) => [key(n.krate, n.id), n]));
  const ownKrates = new Set(nodes.map((n) => n.krate));
  const wanted = edges.filter((e) => e.edgeKind !== 'contains' && e.file !== null && e.line !== null);
  // nodes outside the repo that edges name by id
  const byId = wanted.filter((e) => e.dst !== null && !own.has(key(e.dstKrate ?? e.krate, e.dst)));
  const foreign = await nodesById(r, byId.map((e) => ({ id: e.dst!, krate: e.dstKrate ?? e.krate })));
  // nodes edges name by path (no dst): candidates by crate and last segment
  const byPath = wanted.filter((e) => e.dst === null && e.dstKrate !== null && e.dstPath !== null);
  const candidates = await nodesNamed(r, byPath, nodes, ownKrates);

  const out = new Map<string, Target>();
  const put = (e: EdgeHit, n: NodeHit, external: boolean): boolean => {
    const symbol = nodeSymbol(n);
    if (symbol === null) return false;
    out.set(e.id, { info: symbolInfo(symbol, n), external, name: n.name ?? dstName(e.dstPath) ?? '' });
    return true;
  };
  for (const e of wanted) {
    if (e.dst !== null) {
      const k = key(e.dstKrate ?? e.krate, e.dst);
      const n = own.get(k) ?? foreign.get(k);
      if (n && put(e, n, n.repo !== repo)) continue;
    }
    if (e.dstKrate === null || e.dstPath === null) continue;
    const name = dstName(e.dstPath) ?? '';
    const edge = { krate: e.krate, dst: e.dst, dstPath: e.dstPath, dstKrate: e.dstKrate };
    const hit = (candidates.get(`${e.dstKrate}\u0000${name}`) ?? []).find((n) => edgeNamesByPath(edge, { krate: n.krate, qpath: n.qpath ?? '', kind: n.kind }));
    if (hit && put(e, hit, hit.repo !== repo)) continue;
    const kind = guessedKind(e);
    const symbol = scipSymbol(e.dstKrate, e.dstPath.replace(/!$/, ''), kind);
    if (symbol !== null) out.set(e.id, { info: symbolInfo(symbol, { kind, name, signature: null }), external: !repoKrates.has(e.dstKrate), name });
  }
  return out;
}

/** Live nodes by (krate, id), keyed `krate\0id`. */
async function nodesById(r: ReadAt, refs: { id: string; krate: string }[]): Promise<Map<string, NodeHit>> {
  const out = new Map<string, NodeHit>();
  if (refs.length === 0) return out;
  if (r.view) {
    for (const row of (await r.view.nodesById(refs, NODE_HIT_COLUMNS)).values()) out.set(`${row.krate as string}\u0000${row.id as string}`, stateNodeHit(row));
    return out;
  }
  const state = await foldIds(r, 'node', new Set(refs.map((x) => x.id)));
  for (const row of state.values()) if (isLive(row)) out.set(`${row.krate as string}\u0000${row.id as string}`, nodeHit(row));
  return out;
}

/** Candidate targets of path-named edges: live nodes of their `dst_krate` named as the path's last segment, keyed `krate\0name`, sorted by qpath. */
async function nodesNamed(r: ReadAt, edges: EdgeHit[], own: NodeHit[], ownKrates: Set<string>): Promise<Map<string, NodeHit[]>> {
  const out = new Map<string, NodeHit[]>();
  const add = (n: NodeHit): void => {
    const k = `${n.krate}\u0000${n.name ?? ''}`;
    const l = out.get(k);
    if (l) l.push(n);
    else out.set(k, [n]);
  };
  for (const n of own) add(n);
  const names = [...new Set(edges.filter((e) => !ownKrates.has(e.dstKrate!)).map((e) => dstName(e.dstPath)).filter((n): n is string => n !== null))];
  const krates = [...new Set(edges.map((e) => e.dstKrate!).filter((k) => !ownKrates.has(k)))];
  if (names.length > 0 && krates.length > 0) {
    const filter = and(inList('name', names), inList('krate', krates));
    if (r.view) for (const row of await r.view.nodes(filter, NODE_HIT_COLUMNS)) add(stateNodeHit(row));
    else for (const row of (await foldIds(r, 'node', await candidateIds(r, 'node', filter))).values()) if (isLive(row) && krates.includes(row.krate as string)) add(nodeHit(row));
  }
  for (const l of out.values()) l.sort((a, b) => cmpStr(a.qpath ?? '', b.qpath ?? '') || cmpStr(a.id, b.id));
  return out;
}

// ---- documents ----------------------------------------------------------------------

function documentOf(relativePath: string, text: string | null, nodes: NodeHit[], edges: EdgeHit[], targets: Map<string, Target>): Document {
  const lines = text === null ? [] : text.split('\n');
  const occurrences: Occurrence[] = [];
  const symbols = new Map<string, SymbolInformation>();
  // in source order: of two items with one symbol (cfg variants), the first describes it, however the rows came
  const ordered = [...nodes].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0) || cmpStr(a.id, b.id));
  for (const n of ordered) {
    const symbol = nodeSymbol(n);
    if (symbol === null || n.line === null) continue;
    if (!symbols.has(symbol)) symbols.set(symbol, symbolInfo(symbol, n));
    // a file module's node sits at line 1 of its own file, where its name is not written: a symbol, no
    // occurrence (a module's name is taken only where its column says; another item's is looked for)
    const range = n.kind === 'module' ? exactRange(lines, n.line, n.col, n.name ?? '') : rangeOf(lines, n.line, n.col, n.name ?? '');
    if (range) occurrences.push({ range, symbol, symbolRoles: ROLE_DEFINITION });
  }
  for (const e of edges) {
    const t = targets.get(e.id)!;
    const range = rangeOf(lines, e.line!, e.col, t.name);
    occurrences.push({ range, symbol: t.info.symbol, symbolRoles: e.edgeKind === 'uses' ? ROLE_IMPORT : 0 });
  }
  occurrences.sort((a, b) => cmpRange(a.range, b.range) || cmpStr(a.symbol, b.symbol) || a.symbolRoles - b.symbolRoles);
  // sorted: the same index whatever order the rows came in (state tables or a fold of the log)
  const described = [...symbols.values()].sort((a, b) => cmpStr(a.symbol, b.symbol));
  return { relativePath, language: 'rust', positionEncoding: POSITION_ENCODING_UTF16, occurrences, symbols: described };
}

/**
 * The 0-based range [line, start, end] of `name` on 1-based `line`: found as
 * a whole word at or after the 1-based column `col`, else from the line
 * start; with no column (a `use` item's edges), on the next lines of the
 * item too (a `use` over several lines names it further down: up to
 * FOLLOW_LINES, not past the line ending the item with `;`); else the
 * identifier at the column (`Self` for its type, a renamed import), or
 * `name`'s length there.
 */
function rangeOf(lines: string[], line: number, col: number | null, name: string): number[] {
  const known = col !== null && col > 0;
  const from = known ? col - 1 : 0;
  const t = lines[line - 1];
  if (t === undefined || name === '') return [line - 1, from, from + name.length];
  const at = wordAt(t, name, from) ?? wordAt(t, name, 0);
  if (at !== null) return [line - 1, at, at + name.length];
  if (!known && !t.includes(';')) {
    for (let l = line; l < Math.min(lines.length, line + FOLLOW_LINES); l++) {
      const next = wordAt(lines[l]!, name, 0);
      if (next !== null) return [l, next, next + name.length];
      if (lines[l]!.includes(';')) break;
    }
  }
  const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(t.slice(from));
  return [line - 1, from, from + (ident ? ident[0].length : name.length)];
}

/** How many lines past its first a `use` item is searched for a name it imports. */
const FOLLOW_LINES = 50;

/** The range of `name` when the line holds it exactly at the 1-based column `col`, else null. */
function exactRange(lines: string[], line: number, col: number | null, name: string): number[] | null {
  const t = lines[line - 1];
  if (t === undefined || col === null || col < 1 || name === '') return null;
  return wordAt(t, name, col - 1) === col - 1 ? [line - 1, col - 1, col - 1 + name.length] : null;
}

const WORD = /[A-Za-z0-9_]/;

function wordAt(text: string, name: string, from: number): number | null {
  for (let i = text.indexOf(name, from); i >= 0; i = text.indexOf(name, i + 1)) {
    const before = i > 0 ? text[i - 1]! : ' ';
    const after = text[i + name.length] ?? ' ';
    if (!WORD.test(before) && !WORD.test(after)) return i;
  }
  return null;
}

function cmpRange(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

const cmpStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
