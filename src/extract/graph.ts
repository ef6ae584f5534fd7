// One crate's source -> its code graph: files, nodes (items with stable ids)
// and edges (contains, impl-of-trait, impl-for-type, uses, calls, type refs).
//
// Invariants:
// - Ids never depend on files or lines: a node id hashes (repo, krate,
//   namespace, qualified path, disambiguator); moving an item within its
//   module keeps its id, renaming it changes it. The namespace (type, value,
//   macro, impl — Rust's own name spaces) stands in for the kind so that an id
//   can be computed from a path alone (see `universeNodeId`).
// - Duplicates of (namespace, qpath) — `#[cfg]` twins, two `impl Foo` blocks —
//   are numbered in module-tree order; impls are keyed by their header text,
//   so only identical headers are numbered.
// - Resolution is best effort and never guesses across crates: an edge keeps
//   its textual target in `dstPath`; `dst` is set only for a found item (or a
//   dependency item whose id follows from its path); `dstKrate` names the crate
//   (`name@version`) for internal and dependency targets, null when unknown.
// Bad input never throws: see modules.ts; the graph holds what parsed.
import { hash } from 'node:crypto';
import * as path from 'node:path';
import { loadModuleTree } from './modules.ts';
import { bodyHashOf, loadRust, type RustParser } from './parser.ts';
import type { CrateGraph, EdgeFact, EdgeKind, FileFact, Item, NodeFact, NodeKind, Problem, UseDecl } from './types.ts';

export const UNIVERSE = '@universe';
/** Body hash of an item without text of its own (a crate root module). */
const EMPTY_BODY_HASH = bodyHashOf('');

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
}

export type Namespace = 'type' | 'value' | 'macro' | 'impl';

/** Stable id of an item: 32 hex chars of sha256 over (repo, krate, namespace, qpath, disambiguator). */
export function nodeId(repo: string, krate: string, ns: Namespace, qpath: string, disamb = ''): string {
  return hash('sha256', JSON.stringify([repo, krate, ns, qpath, disamb]), 'hex').slice(0, 32);
}

/** The id extracting dependency `krate` (`name@version`) into the universe gives the item at `qpath`. */
export function universeNodeId(krate: string, ns: Namespace, qpath: string): string {
  return nodeId(UNIVERSE, krate, ns, qpath);
}

export function edgeId(src: string, kind: EdgeKind, target: string, occurrence: number): string {
  return hash('sha256', JSON.stringify([src, kind, target, occurrence]), 'hex').slice(0, 32);
}

export function namespaceOf(kind: NodeKind, signature = ''): Namespace {
  switch (kind) {
    case 'fn': case 'method': case 'const': case 'static': return 'value';
    case 'macro': return 'macro';
    case 'impl': return 'impl';
    case 'trait_item': return signature.startsWith('type ') ? 'type' : 'value';
    default: return 'type';
  }
}

interface Rec {
  item: Item;
  kind: NodeKind;
  ns: Namespace;
  qpath: string;
  id: string;
  parent: Rec | null;
  /** Module scope the item's paths are resolved in (a module's own scope for modules). */
  scope: ModRec;
  /** For members of an impl: the impl. */
  impl: Rec | null;
  children: Rec[];
  /** For impls: what the self type and trait resolved to. */
  selfTarget?: Target | null;
  traitTarget?: Target | null;
  typeQ?: string;
  traitQ?: string | null;
}

interface ModRec {
  /** Dense number, for memo keys. */
  n: number;
  rec: Rec;
  parent: ModRec | null;
  root: ModRec;
  names: Map<string, Rec[]>;
  uses: UseDecl[];
  externs: Map<string, string>;
}

/** A resolved path: an item of this crate, or a path in another crate (krate null: unknown, e.g. std). */
type Target = { int: Rec } | { ext: string; krate: string | null; depName: string | null };

/**
 * Depth limit of one resolution chain (kept from the first version so that
 * acyclic chains resolve exactly as before). Cycles are cut by the visited
 * set long before this; a result cut by this limit is never memoised.
 */
const MAX_DEPTH = 24;
/** Marks a cut by the depth limit (below any stack index): taints every frame above it. */
const DEPTH_CUT = -1;

export async function extractCrate(input: ExtractInput): Promise<CrateGraph> {
  const parser = input.parser ?? await loadRust();
  return new CrateExtractor(input, parser).run();
}

class CrateExtractor {
  private readonly files = new Map<string, FileFact>();
  private readonly problems: Problem[] = [];
  private readonly recs: Rec[] = [];
  private readonly roots: ModRec[] = [];
  private readonly mods = new Map<Rec, ModRec>();
  /** Methods and associated items by the type they belong to (key from typeKey). */
  private readonly members = new Map<string, Map<string, Rec[]>>();
  private readonly ident: string;
  private readonly deps = new Map<string, { krate: string; ident: string; repo: string }>();
  /** Repo of each dependency krate (`name@version`). */
  private readonly depRepo = new Map<string, string>();
  /** Exported macros by name, in module-tree order (first wins). */
  private readonly exportedMacros = new Map<string, Rec>();
  /** Macros by name, in module-tree order (first wins). */
  private readonly macrosByName = new Map<string, Rec>();
  // Resolution memo and visited set. Keys: `l|mod|ns|name` (lookup) and
  // `r|mod|ns|path` (context-free resolve). `active` maps a key being
  // computed to its frame index; re-entering it is a cycle (glob imports that
  // import each other, 2015-style `use common::*` in several modules) and
  // answers null. A result is memoised unless a cycle cut (or the depth limit)
  // below it referred to a frame above it: such a result depends on the path
  // that led to it.
  private readonly memo = new Map<string, Target | null>();
  private readonly active = new Map<string, number>();
  private frames = 0;
  private lowCut = Infinity;

  constructor(private readonly input: ExtractInput, private readonly parser: RustParser) {
    this.ident = crateName(input.krate).replace(/-/g, '_');
    for (const [local, d] of input.deps) {
      this.deps.set(local.replace(/-/g, '_'), { krate: d.krate, ident: crateName(d.krate).replace(/-/g, '_'), repo: d.repo ?? UNIVERSE });
    }
    for (const d of this.deps.values()) if (!this.depRepo.has(d.krate)) this.depRepo.set(d.krate, d.repo);
  }

  async run(): Promise<CrateGraph> {
    for (let i = 0; i < this.input.targets.length; i++) {
      const target = this.input.targets[i]!;
      const name = i === 0 ? this.ident : `${this.ident}[bin ${binName(target)}]`;
      const tree = await loadModuleTree({
        rootDir: this.input.rootDir, target, name,
        readFile: this.input.readFile, parser: this.parser,
        maxFileBytes: this.input.limits?.maxFileBytes,
      });
      for (const f of tree.files) if (!this.files.has(f.path)) this.files.set(f.path, f);
      for (const p of tree.problems) {
        if (!this.problems.some((q) => q.path === p.path && q.kind === p.kind)) this.problems.push(p);
      }
      const rec = this.makeRec(tree.root, 'module', name, null, null, null);
      const mod = this.makeMod(rec, null);
      this.roots.push(mod);
      this.collect(tree.root.children, mod, rec);
    }
    this.placeImpls();
    this.assignIds();
    const nodes: NodeFact[] = this.recs.map((r) => ({
      id: r.id, kind: r.kind, name: r.item.name, qpath: r.qpath, file: r.item.file,
      lineStart: r.item.lineStart, lineEnd: r.item.lineEnd, visibility: r.item.visibility,
      signature: r.item.signature, parent: r.parent ? r.parent.id : null,
      bodyHash: r.item.bodyHash ?? EMPTY_BODY_HASH,
    }));
    const edges = this.edges();
    return { files: [...this.files.values()], nodes, edges, problems: this.problems };
  }

  // --- nodes ----------------------------------------------------------------

  private makeRec(item: Item, kind: NodeKind, qpath: string, parent: Rec | null, scope: ModRec | null, impl: Rec | null): Rec {
    const rec: Rec = {
      item, kind, ns: namespaceOf(kind, item.signature), qpath, id: '', parent,
      scope: scope as ModRec, impl, children: [],
    };
    this.recs.push(rec);
    parent?.children.push(rec);
    return rec;
  }

  private makeMod(rec: Rec, parent: ModRec | null): ModRec {
    const mod: ModRec = {
      n: this.mods.size, rec, parent, root: parent ? parent.root : (null as unknown as ModRec),
      names: new Map(), uses: rec.item.uses, externs: new Map(),
    };
    if (!parent) mod.root = mod;
    for (const e of rec.item.externCrates ?? []) mod.externs.set(e.alias, e.name);
    rec.scope = mod;
    this.mods.set(rec, mod);
    return mod;
  }

  private collect(items: Item[], mod: ModRec, parent: Rec) {
    for (const item of items) {
      if (item.kind === 'impl') {
        const rec = this.makeRec(item, 'impl', '', parent, mod, null);
        for (const c of item.children) this.makeRec(c, c.kind, '', rec, mod, rec);
        continue;
      }
      // `#[macro_export]` puts a macro at the crate root, wherever it is written.
      const qpath = item.macroExport ? `${mod.root.rec.qpath}::${item.name}` : `${parent.qpath}::${item.name}`;
      const rec = this.makeRec(item, item.kind, qpath, parent, mod, null);
      if (item.kind === 'macro') {
        if (!this.macrosByName.has(item.name)) this.macrosByName.set(item.name, rec);
        if (item.macroExport && !this.exportedMacros.has(item.name)) this.exportedMacros.set(item.name, rec);
      }
      addName(mod.names, item.name, rec);
      if (item.kind === 'module') {
        const child = this.makeMod(rec, mod);
        this.collect(item.children, child, rec);
      } else {
        for (const c of item.children) this.makeRec(c, c.kind, `${qpath}::${c.name}`, rec, mod, null);
      }
    }
  }

  /** Impl qpaths need their self type and trait resolved; members are indexed by type. */
  private placeImpls() {
    for (const rec of this.recs) {
      if (rec.kind !== 'impl' || !rec.item.impl) continue;
      const info = rec.item.impl;
      const self = this.resolve(info.selfTypePath.split('::'), rec.scope, 'type', null, rec.item.generics);
      const trait = info.traitPath ? this.resolve(info.traitPath.split('::'), rec.scope, 'type', null, []) : null;
      rec.selfTarget = self;
      rec.traitTarget = trait;
      rec.typeQ = self ? targetPath(self) : info.selfTypePath;
      rec.traitQ = info.traitPath ? (trait ? targetPath(trait) : info.traitPath) : null;
      const modPath = rec.parent ? rec.parent.qpath : this.ident;
      rec.qpath = info.trait ? `${modPath}::<${info.selfType} as ${info.trait}>` : `${modPath}::impl ${info.selfType}`;
      const key = typeKey(self, rec.typeQ);
      const table = this.members.get(key) ?? new Map<string, Rec[]>();
      this.members.set(key, table);
      for (const m of rec.children) {
        m.qpath = rec.traitQ ? `<${rec.typeQ} as ${rec.traitQ}>::${m.item.name}` : `${rec.typeQ}::${m.item.name}`;
        addName(table, m.item.name, m);
      }
    }
  }

  private assignIds() {
    const seen = new Map<string, number>();
    for (const rec of this.recs) {
      const base = rec.kind === 'impl' ? `${rec.ns}\u0000${rec.qpath}\u0000${rec.item.signature}` : `${rec.ns}\u0000${rec.qpath}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      let disamb = rec.kind === 'impl' ? rec.item.signature : '';
      if (n > 0) {
        disamb += `#${n + 1}`;
        if (rec.kind === 'impl') rec.qpath += ` #${n + 1}`;
      }
      rec.id = nodeId(this.input.repo, this.input.krate, rec.ns, rec.qpath, disamb);
    }
  }

  // --- resolution -----------------------------------------------------------

  /**
   * Resolve a path from a module scope. `ns` is the namespace wanted for the
   * last segment; earlier segments are looked up as types/modules. `selfT` is
   * what `Self` means here; `generics` are names that are type parameters;
   * `locals` are `use`s inside a fn body. Only the first segment depends on
   * those three, so a path whose first segment is none of them resolves
   * context-free (and memoised).
   */
  private resolve(segs: string[], scope: ModRec, ns: Namespace, selfT: Target | null, generics: string[], locals: UseDecl[] = [], depth = 0): Target | null {
    if (depth > MAX_DEPTH) return this.depthCut();
    if (segs.length === 0) return null;
    const first = segs[0]!;
    if (first === 'Self') return this.walk(selfT, segs, 1, ns, depth);
    if (generics.includes(first)) return null;
    for (const u of locals) {
      if (u.glob || u.alias !== first) continue;
      const firstNs: Namespace = segs.length === 1 ? ns : 'type';
      let cur = this.resolve(u.path.split('::'), scope, firstNs, selfT, [], [], depth + 1);
      if (!cur) cur = this.lookup(scope, first, firstNs, depth + 1);
      if (!cur) cur = this.externRoot(first, scope);
      return this.walk(cur, segs, 1, ns, depth);
    }
    return this.resolvePath(segs, scope, ns, depth);
  }

  /** A path without `Self`, generics or body-local imports: memoised per (module, namespace, path). */
  private resolvePath(segs: string[], scope: ModRec, ns: Namespace, depth: number): Target | null {
    if (depth > MAX_DEPTH) return this.depthCut();
    return this.memoised(`r|${scope.n}|${ns}|${segs.join('::')}`, () => {
      const first = segs[0]!;
      const firstNs: Namespace = segs.length === 1 ? ns : 'type';
      let cur: Target | null = null;
      let i = 1;
      if (first === '') return null;
      if (first === 'crate' || first === '$crate') cur = { int: scope.root.rec };
      else if (first === 'self') cur = { int: scope.rec };
      else if (first === 'super') {
        let m: ModRec | null = scope.parent;
        while (m && segs[i] === 'super') { m = m.parent; i++; }
        if (!m) return null;
        cur = { int: m.rec };
      } else {
        cur = this.lookup(scope, first, firstNs, depth + 1);
        if (!cur) cur = this.externRoot(first, scope);
      }
      return this.walk(cur, segs, i, ns, depth);
    }, false);
  }

  /** The remaining segments from `i` on, inside `cur`. */
  private walk(cur: Target | null, segs: string[], i: number, ns: Namespace, depth: number): Target | null {
    for (; cur && i < segs.length; i++) {
      cur = this.member(cur, segs[i]!, i === segs.length - 1 ? ns : 'type', depth + 1);
    }
    return cur;
  }

  /**
   * Run `compute` once per key. A lookup key met again while it is being
   * computed is a cycle and answers null (a name is not found by going round
   * in a circle); a resolve key met again is simply computed again (it reaches
   * the lookup that closes the cycle at once), so that its fallbacks after
   * the failed lookup still apply, as they did under the old depth limit.
   * Results that do not depend on a cut above them are memoised.
   */
  private memoised(key: string, compute: () => Target | null, cut: boolean): Target | null {
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    const at = this.active.get(key);
    if (at !== undefined) {
      if (!cut) return compute();
      if (at < this.lowCut) this.lowCut = at;
      return null;
    }
    const frame = this.frames++;
    this.active.set(key, frame);
    const outer = this.lowCut;
    this.lowCut = Infinity;
    let result: Target | null;
    try {
      result = compute();
    } finally {
      this.active.delete(key);
      this.frames--;
    }
    if (this.lowCut >= frame) this.memo.set(key, result);
    this.lowCut = Math.min(outer, this.lowCut);
    return result;
  }

  private depthCut(): null {
    this.lowCut = DEPTH_CUT;
    return null;
  }

  /** A name as the first segment of a path that names another crate. */
  private externRoot(name: string, scope: ModRec): Target | null {
    const ext = scope.externs.get(name) ?? scope.root.externs.get(name);
    const real = ext ?? name;
    const dep = this.deps.get(real.replace(/-/g, '_'));
    if (dep) return { ext: dep.ident, krate: dep.krate, depName: dep.ident };
    if (real === this.ident && this.roots[0] && scope.root !== this.roots[0]) return { int: this.roots[0].rec };
    if (real === 'std' || real === 'core' || real === 'alloc' || real === 'proc_macro') return { ext: real, krate: null, depName: null };
    return null;
  }

  /** A name in a module: its items, then its imports, then its glob imports (memoised, cycles cut). */
  private lookup(mod: ModRec, name: string, ns: Namespace, depth: number): Target | null {
    if (depth > MAX_DEPTH) return this.depthCut();
    return this.memoised(`l|${mod.n}|${ns}|${name}`, () => this.lookupIn(mod, name, ns, depth), true);
  }

  private lookupIn(mod: ModRec, name: string, ns: Namespace, depth: number): Target | null {
    const defs = mod.names.get(name);
    if (defs) {
      // A tuple struct is also a constructor in the value namespace.
      const hit = defs.find((r) => r.ns === ns) ?? (ns === 'value' ? defs.find((r) => r.kind === 'struct') : undefined);
      if (hit) return { int: hit };
    }
    for (const u of mod.uses) {
      if (u.glob || u.alias !== name) continue;
      const t = this.resolvePath(u.path.split('::'), mod, ns, depth + 1);
      if (t) return t;
      // unresolvable import: still say what it names
      return { ext: u.path, krate: null, depName: null };
    }
    if (defs && defs.length > 0) return { int: defs[0]! };
    for (const u of mod.uses) {
      if (!u.glob) continue;
      const t = this.resolvePath(u.path.split('::'), mod, 'type', depth + 1);
      if (t && 'int' in t) {
        const inner = this.mods.get(t.int);
        if (inner && inner !== mod) {
          const hit = this.lookup(inner, name, ns, depth + 1);
          if (hit) return hit;
        } else if (t.int.kind === 'enum') {
          const v = t.int.children.find((r) => r.item.name === name);
          if (v) return { int: v };
        }
      }
    }
    return null;
  }

  /** `seg` inside an already resolved target. */
  private member(cur: Target, seg: string, ns: Namespace, depth: number): Target | null {
    if ('ext' in cur) return { ext: `${cur.ext}::${seg}`, krate: cur.krate, depName: cur.depName };
    const rec = cur.int;
    const mod = this.mods.get(rec);
    if (mod) return this.lookup(mod, seg, ns, depth);
    if (rec.kind === 'enum' || rec.kind === 'trait') {
      const child = rec.children.find((r) => r.item.name === seg);
      if (child) return { int: child };
    }
    const table = this.members.get(typeKey(cur, rec.qpath));
    const hits = table?.get(seg);
    if (hits && hits.length > 0) return { int: hits.find((h) => h.ns === ns) ?? hits[0]! };
    return null;
  }

  private resolveMacro(target: string, scope: ModRec): Target | null {
    const segs = target.split('::');
    if (segs.length > 1) {
      const first = segs[0]!;
      if (first === 'crate' || first === '$crate' || first === 'self' || first === 'super') {
        const name = segs[segs.length - 1]!;
        const hit = this.exportedMacros.get(name) ?? this.macrosByName.get(name);
        return hit ? { int: hit } : null;
      }
      const root = this.externRoot(first, scope) ?? this.lookup(scope, first, 'type', 0);
      if (root && 'ext' in root) return { ext: `${root.ext}::${segs.slice(1).join('::')}`, krate: root.krate, depName: root.depName };
      return null;
    }
    const name = segs[0]!;
    for (let m: ModRec | null = scope; m; m = m.parent) {
      const hit = (m.names.get(name) ?? []).find((r) => r.kind === 'macro');
      if (hit) return { int: hit };
    }
    const exported = this.macrosByName.get(name);
    if (exported) return { int: exported };
    const imported = this.lookup(scope, name, 'macro', 0);
    return imported;
  }

  // --- edges ----------------------------------------------------------------

  private edges(): EdgeFact[] {
    const out: EdgeFact[] = [];
    const counts = new Map<string, number>();
    const push = (src: Rec, kind: EdgeKind, targetText: string, t: Target | null, ns: Namespace | null, file: string, line: number) => {
      const key = `${src.id}\u0000${kind}\u0000${targetText}`;
      const n = counts.get(key) ?? 0;
      counts.set(key, n + 1);
      const res = this.describe(t, targetText, ns);
      out.push({ id: edgeId(src.id, kind, targetText, n), src: src.id, ...res, kind, file, line });
    };
    for (const rec of this.recs) {
      const item = rec.item;
      if (rec.parent) {
        push(rec.parent, 'contains', rec.id, { int: rec }, null, item.file, item.lineStart);
      }
      if (rec.kind === 'impl' && item.impl) {
        push(rec, 'impl_for_type', item.impl.selfTypePath, rec.selfTarget ?? null, 'type', item.file, item.lineStart);
        if (item.impl.traitPath) push(rec, 'impl_of_trait', item.impl.traitPath, rec.traitTarget ?? null, 'type', item.file, item.lineStart);
      }
      const scope = rec.scope;
      const selfT = rec.impl?.selfTarget ?? (rec.kind === 'impl' ? rec.selfTarget ?? null : null)
        ?? (rec.parent?.kind === 'trait' ? { int: rec.parent } : rec.kind === 'trait' ? { int: rec } : null);
      const generics = item.generics;
      for (const u of item.uses) {
        const t = this.resolve(u.path.split('::'), scope, 'type', selfT, [], [], 0)
          ?? this.resolve(u.path.split('::'), scope, 'value', selfT, [], [], 0);
        push(rec, 'uses', u.glob ? `${u.path}::*` : u.path, t, null, item.file, u.line);
      }
      for (const ref of item.refs) {
        if (ref.kind === 'type_ref') {
          const t = this.resolve(ref.target.split('::'), scope, 'type', selfT, generics, item.uses);
          push(rec, 'type_ref', ref.target, t, 'type', item.file, ref.line);
        } else if (ref.target.endsWith('!')) {
          const t = this.resolveMacro(ref.target.slice(0, -1), scope);
          push(rec, 'calls', ref.target, t, 'macro', item.file, ref.line);
        } else if (ref.target.startsWith('.')) {
          push(rec, 'calls', ref.target, null, null, item.file, ref.line);
        } else {
          const t = this.resolve(ref.target.split('::'), scope, 'value', selfT, generics, item.uses);
          push(rec, 'calls', ref.target, t, 'value', item.file, ref.line);
        }
      }
    }
    return out;
  }

  private describe(t: Target | null, text: string, ns: Namespace | null): { dst: string | null; dstPath: string; dstKrate: string | null } {
    if (!t) return { dst: null, dstPath: text, dstKrate: null };
    if ('int' in t) return { dst: t.int.id, dstPath: t.int.qpath, dstKrate: this.input.krate };
    if (!t.krate) return { dst: null, dstPath: t.ext, dstKrate: null };
    // Into a dependency: the id is computable when the namespace is known and
    // the path is where the item is defined (re-exports do not match).
    const repo = this.depRepo.get(t.krate) ?? UNIVERSE;
    const dst = ns ? nodeId(repo, t.krate, ns, t.ext) : null;
    return { dst, dstPath: t.ext, dstKrate: t.krate };
  }
}

function addName(map: Map<string, Rec[]>, name: string, rec: Rec) {
  const list = map.get(name);
  if (list) list.push(rec);
  else map.set(name, [rec]);
}

function typeKey(t: Target | null, fallback: string): string {
  if (t && 'int' in t) return `int:${t.int.qpath}`;
  if (t) return `ext:${t.ext}`;
  return `text:${fallback}`;
}

function targetPath(t: Target): string {
  return 'int' in t ? t.int.qpath : t.ext;
}

function crateName(krate: string): string {
  const at = krate.lastIndexOf('@');
  return at > 0 ? krate.slice(0, at) : krate;
}

function binName(target: string): string {
  const base = path.posix.basename(target, '.rs');
  return base === 'main' ? path.posix.basename(path.posix.dirname(target)) : base;
}
