// The last phase: every definition's edges — contains, impl-for-type,
// impl-of-trait, uses, type refs, value refs (a path naming a variant, a
// unit or tuple struct, a const … in an expression or pattern) and calls
// (path calls, method calls, macro invocations) — from what the earlier
// phases resolved.
//
// Invariants: an edge's position is its target's name token (line, col);
// edge ids hash (source, kind, target text, occurrence), so they do not move
// with lines. A target is set only for a found item: this crate's, a loaded
// dependency's, or a dependency item whose id follows from its definition
// path (the crate is not in the lake yet). Otherwise `dst` is null, the text
// is kept, and `unresolvedReason` says why.
import { hash } from 'node:crypto';
import type { EdgeFact, EdgeKind } from '../types.ts';
import type { Def, DefTable, Namespace } from './defs.ts';
import type { Impls } from './impls.ts';
import type { BodyEnv, Infer, Resolved } from './infer.ts';
import type { Names, Res } from './names.ts';
import { resPath, type Ty } from './types.ts';

export interface EdgeOptions {
  /** This crate's `name@version`. */
  krate: string;
  /** Where a dependency's ids live, by its `name@version`. */
  depRepo: ReadonlyMap<string, string>;
  /** Id of a dependency item from its definition path (graph.ts nodeId). */
  depId: (repo: string, krate: string, ns: Namespace, qpath: string) => string;
}

export function edgeId(src: string, kind: EdgeKind, target: string, occurrence: number): string {
  if (ESCAPED.test(src) || ESCAPED.test(kind) || !Number.isSafeInteger(occurrence)) {
    return hash('sha256', JSON.stringify([src, kind, target, occurrence]), 'hex').slice(0, 32);
  }
  return ownEdgeId(src, kind, target, occurrence);
}

/**
 * edgeId of an edge `Edges` makes: its source is a node id (hex), its kind a
 * plain word and its occurrence a count, so only the text is checked; the
 * JSON text of [src, kind, target, occurrence] is written out when no string
 * needs escaping (the common case).
 */
function ownEdgeId(src: string, kind: EdgeKind, target: string, occurrence: number): string {
  const json = ESCAPED.test(target) ? JSON.stringify([src, kind, target, occurrence]) : `["${src}","${kind}","${target}",${occurrence}]`;
  return hash('sha256', json, 'hex').slice(0, 32);
}

/** A character JSON.stringify escapes in a string: `"`, `\`, a control character, a surrogate (a lone one is escaped). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

export class Edges {
  private readonly out: EdgeFact[] = [];
  /**
   * Edges made so far by (source, kind, target text): the occurrence in the
   * next one's id. A definition's own edges are all made while `of` runs
   * for it, so those are counted for the current one only (kind -> text);
   * `contains` edges come from the parent, counted per parent.
   */
  private readonly own = new Map<EdgeKind, Map<string, number>>();
  private readonly contained = new Map<Def, Map<string, number>>();

  constructor(
    private readonly table: DefTable, private readonly names: Names, private readonly impls: Impls,
    private readonly infer: Infer, private readonly opts: EdgeOptions,
  ) {}

  all(): EdgeFact[] {
    for (const def of this.table.defs) this.of(def);
    return this.out;
  }

  private of(def: Def): void {
    for (const m of this.own.values()) if (m.size > 0) m.clear(); // clear() allocates a new table even when empty
    const item = def.item;
    const origin = item.origin ?? null;
    if (def.parent) this.push(def.parent, 'contains', def.id, { def }, null, item.file, item.lineStart, item.col, null, null, origin);
    if (def.kind === 'impl' && item.impl) {
      const info = this.impls.byDef.get(def);
      const self = info ? headRes(info.self) : null;
      this.push(def, 'impl_for_type', item.impl.selfTypePath, self, 'type', item.file, item.lineStart, item.col, self ? null : 'self type not found', null, origin);
      if (item.impl.traitPath) {
        const trait = info?.trait ? info.trait.res : null;
        this.push(def, 'impl_of_trait', item.impl.traitPath, trait, 'type', item.file, item.lineStart, item.col, trait ? null : 'trait not found', null, origin);
      }
    }
    const scope = def.scope;
    for (const u of item.uses) {
      const t = this.names.resolveUse(u, scope, 'type') ?? this.names.resolveUse(u, scope, 'value') ?? this.names.resolveUse(u, scope, 'macro');
      this.push(def, 'uses', u.glob ? `${u.path}::*` : u.path, t, null, item.file, u.line, u.col ?? 0, t ? null : 'import not found', null, origin);
    }
    for (const call of item.macroCalls ?? []) {
      const t = this.names.resolveMacro(call.path, scope);
      this.push(def, 'calls', `${call.path}!`, t, 'macro', item.file, call.line, call.col, t ? null : 'macro not found', null, origin);
    }
    let env: BodyEnv | null = null;
    for (const ref of item.refs) {
      const refOrigin = ref.origin !== undefined ? ref.origin : origin;
      if (ref.kind === 'type_ref') {
        env ??= this.infer.env(def);
        const t = this.names.resolve(this.names.segs(ref.target), scope, 'type', env.ctx);
        this.push(def, 'type_ref', ref.target, t, 'type', item.file, ref.line, ref.col, t ? null : 'type not found', null, refOrigin);
        continue;
      }
      if (ref.kind === 'value_ref') {
        env ??= this.infer.env(def);
        const t = this.names.resolve(this.names.segs(ref.target), scope, 'value', env.ctx);
        if (ref.pat && !constantLike(t)) continue; // a binding
        this.push(def, 'value_ref', ref.target, t, 'value', item.file, ref.line, ref.col, t ? null : 'value not found', null, refOrigin);
        continue;
      }
      if (ref.target.endsWith('!')) {
        const t = this.names.resolveMacro(ref.target.slice(0, -1), scope);
        this.push(def, 'calls', ref.target, t, 'macro', item.file, ref.line, ref.col, t ? null : 'macro not found', null, refOrigin);
        continue;
      }
      env ??= this.infer.env(def);
      const r: Resolved = ref.target.startsWith('.') ? this.infer.methodCall(ref, env) : this.infer.pathCall(ref, env);
      this.push(def, 'calls', ref.target, r.res, 'value', item.file, ref.line, ref.col, r.reason, r.res ? r.dispatch : null, refOrigin);
    }
  }

  private push(
    src: Def, kind: EdgeKind, text: string, t: Res | null, ns: Namespace | null, file: string, line: number, col: number,
    reason: string | null, dispatch: EdgeFact['dispatch'], origin: string | null,
  ): void {
    const n = this.occurrence(src, kind, text);
    const d = this.describe(t, text, ns);
    this.out.push({
      id: ownEdgeId(src.id, kind, text, n), src: src.id, dst: d.dst, dstPath: d.dstPath, dstKrate: d.dstKrate, kind, file, line, col,
      unresolvedReason: d.dst ? null : d.reason ?? reason ?? 'not found', origin, dispatch,
    });
  }

  /** How many edges (src, kind, text) were made before this one; counts it. */
  private occurrence(src: Def, kind: EdgeKind, text: string): number {
    let byText: Map<string, number> | undefined;
    if (kind === 'contains') {
      byText = this.contained.get(src);
      if (byText === undefined) this.contained.set(src, byText = new Map());
    } else {
      byText = this.own.get(kind);
      if (byText === undefined) this.own.set(kind, byText = new Map());
    }
    const n = byText.get(text) ?? 0;
    byText.set(text, n + 1);
    return n;
  }

  private describe(t: Res | null, text: string, ns: Namespace | null): { dst: string | null; dstPath: string; dstKrate: string | null; reason?: string } {
    if (!t) return { dst: null, dstPath: text, dstKrate: null };
    if ('def' in t) return { dst: t.def.id, dstPath: t.def.qpath, dstKrate: this.opts.krate };
    if ('dep' in t) return { dst: t.dep.node.id, dstPath: t.dep.node.qpath, dstKrate: t.dep.crate.crate.krate };
    if (!t.krate) return { dst: null, dstPath: resPath(t), dstKrate: null, reason: t.ext.startsWith('std::') || t.ext === 'std' ? 'in the standard library' : 'crate unknown' };
    // Into a dependency not in the lake: the id is computable when the
    // namespace is known and the path is where the item is defined.
    const repo = this.opts.depRepo.get(t.krate) ?? '@universe';
    const dst = ns ? this.opts.depId(repo, t.krate, ns, t.ext) : null;
    return { dst, dstPath: t.ext, dstKrate: t.krate, reason: `${t.krate} not loaded` };
  }
}

/** A unit variant or struct, a const or a static (what a bare name in a pattern names rather than binds). */
function constantLike(t: Res | null): boolean {
  if (!t || 'ext' in t) return false;
  const kind = 'def' in t ? t.def.kind : t.dep.node.kind;
  return kind === 'variant' || kind === 'struct' || kind === 'const' || kind === 'static';
}

function headRes(t: Ty): Res | null {
  let cur = t;
  while (cur.k === 'ref' || cur.k === 'ptr') cur = cur.of;
  return cur.k === 'adt' ? cur.res : null;
}
