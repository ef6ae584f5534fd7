// rustdoc JSON -> the crate's items as the compiler sees them, keyed the way
// Mimir's graph can be compared with, plus the indexes the call and path
// checks need (def paths, public paths, impls). Pure functions over parsed
// JSON (format version 57 and near ones); `slimDoc` keeps only the local
// crate's items and the fields used here, which is what the cache stores.
//
// Kinds: rustdoc's item kinds are mapped to Mimir's NodeKind — function ->
// fn / method (in an impl) / trait_item (in a trait); assoc_const and
// assoc_type -> const / type in an impl, trait_item in a trait; constant ->
// const; type_alias -> type; proc_macro -> fn (the `#[proc_macro…]` fn, its
// name read from the source). Out of scope, never compared: struct fields
// (Mimir does not model them), `use` and `extern crate` (edges in Mimir, not
// items), trait aliases, extern types, primitives; impls rustdoc synthesizes
// (auto traits, blanket copies) and items without a span.
//
// Origin: rustdoc gives an item expanded from a macro the span of the
// outermost invocation (`ast_struct! { … }`); such an item is `macro`, and
// is matched anywhere within the invocation's lines; so is a member (variant,
// impl or trait item) of a `macro` item, whatever its own span. An item whose
// span points into a `#[derive(…)]` list is `derive`, and so is an impl that
// rustdoc marks `automatically_derived` inside an invocation (a derive on a
// generated type gets the invocation's span), with its members. Every other item with a
// span in the crate is `written`; a span outside the crate's
// folder (another crate's macro) is `external` and not compared.
import type { TypeAst } from './types.ts';
import { fromRustdoc, rustdocArgs } from './types.ts';

export type ItemKind =
  | 'module' | 'fn' | 'method' | 'struct' | 'enum' | 'variant' | 'union' | 'trait'
  | 'trait_item' | 'impl' | 'const' | 'static' | 'type' | 'macro';

export type Origin = 'written' | 'macro' | 'derive' | 'external';

export interface DocSpan {
  file: string;
  line: number;
  col: number;
  endLine: number;
  endCol: number;
}

/** One local item of the rustdoc index, slimmed. */
export interface DocItem {
  id: number;
  name: string | null;
  /** rustdoc's inner kind (`function`, `impl`, `use`, …). */
  kind: string;
  span: DocSpan | null;
  public: boolean;
  /** Module items, impl items, trait items, enum variants. */
  children?: number[];
  /** Impls of a struct/enum/union (synthetic and blanket copies dropped); implementations of a trait. */
  impls?: number[];
  use?: { source: string; name: string; target: number | null; glob: boolean };
  impl?: { traitName: string | null; traitId: number | null; traitArgs: TypeAst[]; self: TypeAst; selfId: number | null; forGeneric: boolean };
  /** An impl `#[derive]` made (rustdoc keeps its `#[automatically_derived]`). */
  derived?: true;
}

export interface DocCrate {
  format: number;
  /** The crate's name as code spells it (`serde_json`). */
  name: string;
  root: number;
  items: DocItem[];
  /** rustdoc's `paths` entries of the local crate: the def path of each nameable item. */
  paths: { id: number; path: string[]; kind: string }[];
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function spanOf(s: unknown): DocSpan | null {
  if (!isObj(s)) return null;
  const b = s['begin'] as number[] | undefined;
  const e = s['end'] as number[] | undefined;
  if (!Array.isArray(b) || !Array.isArray(e)) return null;
  return { file: String(s['filename']), line: b[0]!, col: b[1]!, endLine: e[0]!, endCol: e[1]! };
}

/** The slim form of a parsed rustdoc JSON document (local items only). */
export function slimDoc(raw: Json): DocCrate {
  const index = raw['index'] as Record<string, Json>;
  const paths = raw['paths'] as Record<string, Json>;
  const root = Number(raw['root']);
  const kept = new Set<number>();
  const out: DocItem[] = [];
  const extName = (id: unknown): string | null => {
    const p = paths[String(id)];
    const segs = p && Array.isArray(p['path']) ? (p['path'] as string[]) : null;
    return segs ? segs[segs.length - 1]! : null;
  };
  const ids = (v: unknown): number[] => (Array.isArray(v) ? v.map(Number) : []);
  for (const [k, it] of Object.entries(index)) {
    if (Number(it['crate_id']) !== 0) continue;
    const inner = it['inner'] as Json;
    const [kind, v] = Object.entries(inner)[0] ?? ['', null];
    const d = v as Json;
    if (kind === 'impl' && (d['is_synthetic'] || d['blanket_impl'])) continue;
    const item: DocItem = {
      id: Number(k), name: typeof it['name'] === 'string' ? it['name'] : null, kind, span: spanOf(it['span']),
      public: it['visibility'] === 'public',
    };
    switch (kind) {
      case 'module': item.children = ids(d['items']); break;
      case 'struct': case 'union': item.impls = ids(d['impls']); break;
      case 'enum': item.children = ids(d['variants']); item.impls = ids(d['impls']); break;
      case 'trait': item.children = ids(d['items']); item.impls = ids(d['implementations']); break;
      case 'use': item.use = { source: String(d['source']), name: String(d['name']), target: d['id'] === null || d['id'] === undefined ? null : Number(d['id']), glob: Boolean(d['is_glob']) }; break;
      case 'impl': {
        const tr = d['trait'] as Json | null;
        const forT = d['for'] as Json;
        item.children = ids(d['items']);
        item.impl = {
          traitName: tr ? (extName(tr['id']) ?? lastSeg(String(tr['path']))) : null,
          traitId: tr && tr['id'] !== undefined ? Number(tr['id']) : null,
          traitArgs: tr ? rustdocArgs(tr['args']) : [],
          self: fromRustdoc(forT),
          selfId: isObj(forT) && isObj(forT['resolved_path']) && typeof (forT['resolved_path'] as Json)['id'] === 'number' ? Number((forT['resolved_path'] as Json)['id']) : null,
          forGeneric: isObj(forT) && 'generic' in forT,
        };
        if (Array.isArray(it['attrs']) && (it['attrs'] as unknown[]).some((a) => a === 'automatically_derived')) item.derived = true;
        break;
      }
      default: break;
    }
    kept.add(item.id);
    out.push(item);
  }
  for (const it of out) if (it.impls) it.impls = it.impls.filter((i) => kept.has(i));
  const localPaths: DocCrate['paths'] = [];
  for (const [k, p] of Object.entries(paths)) {
    if (Number(p['crate_id']) !== 0) continue;
    localPaths.push({ id: Number(k), path: p['path'] as string[], kind: String(p['kind']) });
  }
  const rootItem = index[String(root)];
  return { format: Number(raw['format_version']), name: String(rootItem?.['name'] ?? ''), root, items: out, paths: localPaths };
}

function lastSeg(p: string): string {
  const i = p.lastIndexOf('::');
  return i >= 0 ? p.slice(i + 2) : p;
}

// ---- the items to compare -----------------------------------------------------

export interface OracleItem {
  id: number;
  kind: ItemKind;
  /** rustdoc's kind, for reports. */
  docKind: string;
  name: string;
  file: string;
  /** Start line as compared: the span's (a file module's starts after the file's leading comments). */
  line: number;
  /** Another start line that is as right: 1 for a file module (where the file starts). */
  altLine?: number;
  /** Last line of the span: a `macro` item matches anywhere in its invocation. */
  endLine: number;
  /** Def path of the module the item is written in (`serde_json::de`); '' for the crate root. */
  modPath: string;
  origin: Origin;
  /** The item's def path, when it has one (types, fns, modules, …; impl members: `Type::m`). */
  defPath: string | null;
}

/** What docModel reads of the sources: a crate-relative file's text, and where an inline module ends. */
export interface SourceText {
  text(file: string): string | null;
  /** Character offset of a 1-based (line, column), or null when the file is unreadable. */
  offset(file: string, line: number, col: number): number | null;
  /** Last line of the inline `mod` starting at `line` (rustdoc's span of an inline module covers only `mod x`). */
  moduleEnd(file: string, line: number): number | null;
}

export interface DocModel {
  doc: DocCrate;
  byId: Map<number, DocItem>;
  /** Items to compare, by rustdoc id. */
  items: Map<number, OracleItem>;
  /** Structural parent of each item (module, impl, trait, enum). */
  parent: Map<number, number>;
  /** Module ids by def path, and each module's def path. */
  modPath: Map<number, string>;
  /** Local def paths (crate-relative, no crate name) -> items; types, fns, traits, modules, consts, statics, macros, variants. */
  defPaths: Map<string, number[]>;
  /** Items not compared, by reason (`struct_field`, `use`, `no span`, `external span`, …). */
  skipped: Map<string, number>;
}

/** Build the model of one crate's rustdoc: items to compare with their keys, and the indexes. */
export function docModel(doc: DocCrate, source: SourceText): DocModel {
  const byId = new Map(doc.items.map((i) => [i.id, i] as const));
  const parent = new Map<number, number>();
  for (const it of doc.items) {
    if (!it.children) continue;
    for (const c of it.children) if (!parent.has(c)) parent.set(c, it.id);
  }
  // modules: def paths from the root down
  const modPath = new Map<number, string>();
  const walk = (id: number, p: string) => {
    if (modPath.has(id)) return;
    modPath.set(id, p);
    const m = byId.get(id);
    for (const c of m?.children ?? []) {
      const ci = byId.get(c);
      if (ci?.kind === 'module' && ci.name) walk(c, `${p}::${ci.name}`);
    }
  };
  walk(doc.root, doc.name);
  // each module's extent: a file module its whole file, an inline module its braces (from the source)
  const extents: { id: number; file: string; line: number; endLine: number }[] = [];
  for (const id of modPath.keys()) {
    const m = byId.get(id)!;
    if (!m.span) continue;
    const pid = parent.get(id);
    const p = pid === undefined ? null : byId.get(pid) ?? null;
    if (id === doc.root || isFileModule(m, p)) extents.push({ id, file: m.span.file, line: 0, endLine: Infinity });
    else extents.push({ id, file: m.span.file, line: m.span.line, endLine: source.moduleEnd(m.span.file, m.span.line) ?? m.span.endLine });
  }
  const innermostModule = (span: DocSpan): number => {
    let best = doc.root;
    let bestLine = -1;
    for (const e of extents) {
      if (e.file !== span.file || e.line > span.line || e.endLine < span.line) continue;
      if (e.line > bestLine) { best = e.id; bestLine = e.line; }
    }
    return best;
  };
  const moduleOf = (id: number): number => {
    for (let p = parent.get(id); p !== undefined; p = parent.get(p)) {
      if (byId.get(p)?.kind === 'module') return p;
      if (byId.get(p)?.kind === 'impl') {
        const s = byId.get(p)!.span;
        return s ? innermostModule(s) : doc.root;
      }
    }
    const s = byId.get(id)?.span;
    return s ? innermostModule(s) : doc.root;
  };

  const items = new Map<number, OracleItem>();
  const skipped = new Map<string, number>();
  const skip = (why: string) => skipped.set(why, (skipped.get(why) ?? 0) + 1);
  for (const it of doc.items) {
    const parentKind = byId.get(parent.get(it.id) ?? -1)?.kind ?? null;
    const kind = mapKind(it.kind, parentKind);
    if (!kind) { skip(it.kind); continue; }
    if (!it.span) { skip(`${it.kind} without span`); continue; }
    if (it.name === '_' ) { skip('anonymous const'); continue; }
    const span = it.span;
    const text = relative(span.file) ? source.text(span.file) : null;
    const at = text === null ? null : source.offset(span.file, span.line, span.col);
    let origin: Origin = !relative(span.file) ? 'external' : originOf(text, at);
    // a derive on an item a macro generated: rustdoc gives it the invocation's span, the impl says what made it
    if (origin === 'macro' && it.derived) origin = 'derive';
    if (origin === 'external') { skip('span outside the crate'); continue; }
    let name = it.name ?? '';
    if (it.kind === 'proc_macro') name = procMacroFnName(text, at) ?? name;
    if (it.kind === 'impl') name = '';
    const isRoot = it.id === doc.root;
    const mod = kind === 'module' ? (isRoot ? null : moduleOf(it.id)) : moduleOf(it.id);
    const fileModule = kind === 'module' && (isRoot || isFileModule(it, mod === null ? null : byId.get(mod) ?? null));
    items.set(it.id, {
      id: it.id, kind, docKind: it.kind, name, file: span.file,
      line: span.line, endLine: fileModule ? span.line : span.endLine,
      ...(fileModule && span.line !== 1 ? { altLine: 1 } : {}),
      modPath: mod === null ? '' : modPath.get(mod) ?? doc.name,
      origin, defPath: null,
    });
  }

  // A member of an enum, impl or trait that a macro invocation generated is generated too, even
  // when its own span is real (tokens passed through `$($t)*`): it matches anywhere in the invocation.
  // A member of a derived impl is the derive's.
  for (const it of items.values()) {
    const p = parent.get(it.id);
    const pi = p === undefined ? undefined : items.get(p);
    if (pi && pi.kind === 'impl' && pi.origin === 'derive' && it.origin === 'macro') { it.origin = 'derive'; continue; }
    if (!pi || pi.kind === 'module' || pi.origin !== 'macro' || it.origin !== 'written') continue;
    it.origin = 'macro';
    it.line = Math.min(it.line, pi.line);
    it.endLine = Math.max(it.endLine, pi.endLine);
  }

  // def paths: modules and module-level items from the tree, variants and trait items below them,
  // impl members as `Type::m` (inherent) — what MIR prints for a callee.
  const defPaths = new Map<string, number[]>();
  const addDef = (p: string, id: number) => {
    const list = defPaths.get(p);
    if (list) { if (!list.includes(id)) list.push(id); } else defPaths.set(p, [id]);
    const oi = items.get(id);
    if (oi && oi.defPath === null) oi.defPath = p;
  };
  const crateRel = (p: string) => (p === doc.name ? '' : p.slice(doc.name.length + 2));
  for (const [mid, mp] of modPath) {
    const rel = crateRel(mp);
    if (rel) addDef(rel, mid);
    for (const c of byId.get(mid)?.children ?? []) {
      const ci = byId.get(c);
      if (!ci || !ci.name || ci.kind === 'use' || ci.kind === 'extern_crate' || ci.kind === 'module') continue;
      const cp = rel ? `${rel}::${ci.name}` : ci.name;
      addDef(cp, c);
      if (ci.kind === 'enum' || ci.kind === 'trait') {
        for (const v of ci.children ?? []) {
          const vi = byId.get(v);
          if (vi?.name) addDef(`${cp}::${vi.name}`, v);
        }
      }
    }
  }
  return { doc, byId, items, parent, modPath, defPaths, skipped };
}

function relative(file: string): boolean {
  return !file.startsWith('/') && !file.startsWith('<');
}

/** rustdoc kind + structural parent kind -> Mimir's kind (null: out of scope). */
export function mapKind(kind: string, parentKind: string | null): ItemKind | null {
  switch (kind) {
    case 'module': return 'module';
    case 'function': return parentKind === 'impl' ? 'method' : parentKind === 'trait' ? 'trait_item' : 'fn';
    case 'struct': case 'enum': case 'variant': case 'union': case 'trait': case 'impl': case 'macro': case 'static':
      return kind;
    case 'type_alias': return 'type';
    case 'constant': return 'const';
    case 'assoc_const': return parentKind === 'trait' ? 'trait_item' : 'const';
    case 'assoc_type': return parentKind === 'trait' ? 'trait_item' : 'type';
    case 'proc_macro': return 'fn';
    default: return null;
  }
}

/** A file module's span is in another file than the `mod` that declares it (rustdoc starts it after leading comments). */
function isFileModule(m: DocItem, parentModule: DocItem | null): boolean {
  if (!m.span || !parentModule || !parentModule.span) return true;
  return m.span.file !== parentModule.span.file || (m.span.line === 1 && m.span.col === 1);
}

/** Character offset of a 1-based (line, col) in `text` (cols count characters). */
export function offsetOf(text: string, line: number, col: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  // columns are characters: walk code points
  let c = 1;
  let i = at;
  while (c < col && i < text.length && text[i] !== '\n') {
    const cp = text.codePointAt(i)!;
    i += cp > 0xffff ? 2 : 1;
    c++;
  }
  return i;
}

const INVOCATION = /^(?:::)?(?:[A-Za-z_$][A-Za-z0-9_]*\s*::\s*)*[A-Za-z_][A-Za-z0-9_]*\s*!/;

/** written / macro / derive, from the text at the span's start (see the module comment). */
export function originOf(text: string | null, at: number | null): Origin {
  if (text === null || at === null) return 'written';
  const head = text.slice(at, at + 200);
  if (INVOCATION.test(head) && !/^macro_rules\s*!/.test(head)) return 'macro';
  // inside `#[derive(A, B)]`: the nearest `#[` before the span opens a derive and is not closed before it
  const before = text.slice(Math.max(0, at - 2000), at);
  const open = before.lastIndexOf('#[');
  if (open >= 0) {
    const attr = before.slice(open);
    if (/^#\[\s*derive\s*\(/.test(attr) && !attr.includes(']')) return 'derive';
  }
  return 'written';
}

/** `#[proc_macro_derive(Name)] pub fn derive_name(…)`: the fn's own name, from the span's text. */
function procMacroFnName(text: string | null, at: number | null): string | null {
  if (text === null || at === null) return null;
  const m = /\bfn\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(at, at + 400));
  return m ? m[1]! : null;
}

// ---- public paths -------------------------------------------------------------

/**
 * Every path by which an item of the crate can be named from outside: the
 * def paths of rustdoc's `paths`, and the paths `pub use` makes (single and
 * glob, followed through re-exported modules), walked from the crate root
 * through public items only. Path -> item id (a path naming two items in
 * different namespaces keeps both).
 */
export function publicPaths(m: DocModel): { defPaths: Map<string, number[]>; reexports: Map<string, number[]> } {
  const add = (map: Map<string, number[]>, p: string, id: number) => {
    const list = map.get(p);
    if (list) { if (!list.includes(id)) list.push(id); } else map.set(p, [id]);
  };
  const defPaths = new Map<string, number[]>();
  for (const p of m.doc.paths) add(defPaths, p.path.join('::'), p.id);
  const reexports = new Map<string, number[]>();
  const seen = new Set<string>();
  const MAX_DEPTH = 12;
  const visitModule = (mid: number, prefix: string, depth: number) => {
    const key = `${mid}|${prefix}`;
    if (seen.has(key) || depth > MAX_DEPTH) return;
    seen.add(key);
    const mod = m.byId.get(mid);
    for (const c of mod?.children ?? []) {
      const it = m.byId.get(c);
      if (!it || !it.public) continue;
      if (it.kind === 'use' && it.use) {
        const target = it.use.target === null ? undefined : m.byId.get(it.use.target);
        if (!target) continue; // another crate's item, or a primitive
        if (it.use.glob) {
          if (target.kind === 'module') visitModule(target.id, prefix, depth + 1);
          else if (target.kind === 'enum') for (const v of target.children ?? []) nameItem(v, `${prefix}::${m.byId.get(v)?.name}`, depth, true);
          continue;
        }
        nameItem(target.id, `${prefix}::${it.use.name}`, depth, true);
        continue;
      }
      if (!it.name) continue;
      nameItem(c, `${prefix}::${it.name}`, depth, false);
    }
  };
  const nameItem = (id: number, p: string, depth: number, viaUse: boolean) => {
    const it = m.byId.get(id);
    if (!it) return;
    if (viaUse || !defPaths.has(p)) add(reexports, p, id);
    if (it.kind === 'module') visitModule(id, p, depth + 1);
    else if (it.kind === 'enum') for (const v of it.children ?? []) { const vn = m.byId.get(v)?.name; if (vn) nameItem(v, `${p}::${vn}`, depth, viaUse); }
  };
  visitModule(m.doc.root, m.doc.name, 0);
  // a path that is both (a module and a fn re-exported under its name): one path naming either
  for (const [p, ids] of reexports) {
    const d = defPaths.get(p);
    if (!d) continue;
    for (const id of ids) if (!d.includes(id)) d.push(id);
    reexports.delete(p);
  }
  return { defPaths, reexports };
}
