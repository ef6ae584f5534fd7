// Answers people can act on: each question (find, def, refs, callers,
// callees, history) asked at one generation, narrowed by the filters every
// question takes (--repo, --krate, --exclude-tests, --limit; scope.ts), each
// hit placed at its repo-relative path (or absolute, `abs`), and a name that
// matches nothing refused with the closest names the lake has
// (UnknownNameError: the CLI's exit 1). `find` ranks fuzzy matches as an
// editor's symbol search does (suggest.ts). A zero answer of refs/callers
// counts the unresolved edges carrying the name, which `unresolved` lists.
// The answers are the `--json` output, versioned (`question`, `version`;
// schemas/<question>.schema.json documents each). The query functions
// (find.ts, def.ts, refs.ts, history.ts) do the lookups; this module only
// narrows, places and words. Read-only.
import type { EventLog } from '../log/event-log.ts';
import { def } from './def.ts';
import { find, nameMatcher } from './find.ts';
import { history, type HistoryEvent } from './history.ts';
import { readAt, type AsOf, type EdgeHit, type NodeHit, type ReadAt } from './read.ts';
import { callees, refs, type EdgeKind } from './refs.ts';
import { checkNodeKind, checkScope, inScope, isTestPlace, krateWhere, placer, UnknownNameError, type Placed, type Scope } from './scope.ts';
import { fuzzyScore, didYouMean } from './suggest.ts';
import { allNames, everHad, suggestPaths, unresolvedNamed } from './unknown.ts';
import { hasGlob } from './glob.ts';
import { contextLines, SourceCache } from './source.ts';

/** The version of each answer's JSON shape (schemas/<question>.schema.json); bump on any change to it. */
export const ANSWER_VERSIONS = { find: 1, def: 1, refs: 2, callers: 2, callees: 2, history: 2, diff: 2 } as const;

export interface AnswerOptions extends Scope {
  asOf?: AsOf;
  from?: 'state' | 'log';
  /** Absolute paths (under the root each repo was last ingested from) instead of repo-relative ones. */
  abs?: boolean;
  /** Lines of source around each hit (`context` on the hits; from the lake's stored sources, query/source.ts). */
  context?: number;
  /** callees: only the calls resolved to an item the lake holds (a repo's or the universe's); `unresolved` counts the others. */
  resolved?: boolean;
}

/** A line of source around a hit (`--context N`). */
export interface ContextLine {
  line: number;
  text: string;
}

/**
 * A hit with its path for people: repo-relative (or absolute), null when it
 * has no file; with `context` asked, the source lines around it (empty when
 * the lake has no text of that file at the generation).
 */
export type PlacedNode = NodeHit & { path: string | null; context?: ContextLine[] };
export type PlacedEdge = EdgeHit & { path: string | null; context?: ContextLine[] };
export type PlacedRef = PlacedEdge & { from: PlacedNode | null };
export type PlacedCallee = PlacedEdge & { to: PlacedNode | null };
export type PlacedEvent = Omit<HistoryEvent, 'node' | 'edge'> & { node?: PlacedNode; edge?: PlacedEdge };

type Match = 'exact' | 'suffix' | 'none';

export interface FindAnswer {
  question: 'find';
  version: number;
  generation: bigint;
  /** Hits before --limit. */
  total: number;
  hits: PlacedNode[];
}

export interface DefAnswer {
  question: 'def';
  version: number;
  generation: bigint;
  match: Match;
  total: number;
  hits: PlacedNode[];
}

export interface RefsAnswer {
  question: 'refs' | 'callers';
  version: number;
  generation: bigint;
  match: Match;
  targets: PlacedNode[];
  /** True when `refs` lists the unresolved edges named like the path (`--unresolved`). */
  unresolvedOnly: boolean;
  total: number;
  refs: PlacedRef[];
  /** On a zero answer: how many unresolved edges (of the question's kind, in scope) carry the path's last name; else null. */
  unresolved: number | null;
}

export interface CalleesAnswer {
  question: 'callees';
  version: number;
  generation: bigint;
  match: Match;
  targets: PlacedNode[];
  total: number;
  callees: PlacedCallee[];
  /** With `resolved`: how many calls were left out (unresolved, or to an item the lake does not hold: std, say). */
  unresolved?: number;
}

export interface HistoryAnswer {
  question: 'history';
  version: number;
  generation: bigint;
  ids: string[];
  total: number;
  events: PlacedEvent[];
}

/** The question read at one generation (asOf, else the handle's now), its post-processing at the same one. */
function at<T>(log: EventLog, opts: AnswerOptions, fn: (r: ReadAt) => Promise<T>): Promise<T> {
  return readAt(log, opts.asOf ?? { generation: log.readGeneration() }, fn, opts.from);
}

const passes = (scope: Scope, h: { repo: string; krate: string }, path: string | null, qpath: string | null): boolean =>
  inScope(scope, h.repo, h.krate) && !(scope.excludeTests === true && isTestPlace(path, qpath, h.krate));

function limited<T>(xs: T[], limit: number | undefined): T[] {
  return limit === undefined ? xs : xs.slice(0, limit);
}

/** The hits with the source lines around each (`context` lines before and after), read at the answer's generation. */
async function withContext<T extends Placed & { line: number | null }>(r: ReadAt, hits: T[], n: number | undefined): Promise<(T & { context?: ContextLine[] })[]> {
  if (n === undefined || n <= 0 || hits.length === 0) return hits;
  const cache = new SourceCache(r.log, { generation: r.generation });
  return Promise.all(
    hits.map(async (h) => {
      if (h.file === null || h.line === null) return { ...h, context: [] };
      const text = await cache.get({ repo: h.repo, krate: h.krate, path: h.file });
      return { ...h, context: text === null ? [] : contextLines(text, h.line, n) };
    }),
  );
}

async function placeAll(r: ReadAt, hits: Placed[], abs: boolean | undefined): Promise<<T extends Placed>(h: T) => T & { path: string | null }> {
  const where = await placer(r.log, r.generation, hits, abs === true);
  return <T extends Placed>(h: T) => ({ ...h, path: where(h) });
}

export interface FindAnswerOptions extends AnswerOptions {
  kind?: string;
  exact?: boolean;
}

/**
 * `find`: items by name. A plain NAME (no glob, not --exact, no `::`) is a
 * fuzzy match ranked best first (exact, prefix, camel humps and word starts,
 * then scattered letters); globs, --exact and paths keep the place order.
 * Zero hits without filters: the name is unknown (closest names suggested).
 */
export async function answerFind(log: EventLog, name: string, opts: FindAnswerOptions = {}): Promise<FindAnswer> {
  checkNodeKind(opts.kind);
  return at(log, opts, async (r) => {
    await checkScope(r.log, r.generation, opts);
    // repo and the crate push down (the crate as ranges of its spellings: krateWhere); passes() narrows exactly
    const krateFilter = opts.krate === undefined ? undefined : krateWhere(opts.krate);
    const res = await find(r.log, name, { kind: opts.kind, repo: opts.repo, krateWhere: krateFilter, exact: opts.exact, from: opts.from });
    const place = await placeAll(r, res.hits, opts.abs);
    let hits = res.hits.map(place).filter((h) => passes(opts, h, h.path, h.qpath));
    if (isFuzzy(name, opts.exact)) {
      const score = new Map(hits.map((h) => [h, fuzzyScore(name, h.name ?? '') ?? 0]));
      hits = hits.map((h, i) => ({ h, i })).sort((a, b) => score.get(b.h)! - score.get(a.h)! || a.i - b.i).map((x) => x.h);
    }
    if (res.hits.length === 0 && opts.kind === undefined && opts.repo === undefined && opts.krate === undefined) {
      const close = nameMatcher(name).col === 'name' ? didYouMean(name, await allNames(r)) : await suggestPaths(r, name);
      throw new UnknownNameError(close.length > 0 ? `no item matches "${name}" at generation ${r.generation} — did you mean ${close.join(', ')}?` : `no such item: nothing matches "${name}" (at generation ${r.generation})`, close);
    }
    return { question: 'find', version: ANSWER_VERSIONS.find, generation: r.generation, total: hits.length, hits: await withContext(r, limited(hits, opts.limit), opts.context) };
  });
}

/** Is `find NAME` a fuzzy (ranked) search? */
export function isFuzzy(name: string, exact: boolean | undefined): boolean {
  return exact !== true && !hasGlob(name) && !name.includes('::');
}

/**
 * A path no live item has: fine (an empty answer) when an item had it once
 * (removed since: `history` shows it); else an UnknownNameError with the
 * closest paths and the unresolved edges named like it.
 */
async function refuseUnknown(r: ReadAt, path: string, scope: Scope, edgeKind?: string): Promise<void> {
  if (await everHad(r, path)) return;
  throw await unknownPath(r, path, scope, edgeKind);
}

async function unknownPath(r: ReadAt, path: string, scope: Scope, edgeKind?: string, ever = false): Promise<UnknownNameError> {
  const close = await suggestPaths(r, path, ever);
  const loose = (await unresolvedNamed(r, path, edgeKind)).filter((u) => passes(scope, u.edge, u.edge.file, u.from?.qpath ?? null)).length;
  const what = edgeKind === 'calls' ? 'call site' : 'reference';
  const notes = [
    ...(loose > 0 ? [`${loose} unresolved ${what}${loose === 1 ? ' is' : 's are'} named ${lastName(path)}: \`mimir ${edgeKind === 'calls' ? 'callers' : 'refs'} ${path} --unresolved\``] : []),
  ];
  const head = close.length > 0 ? `no item has the path ${path} at generation ${r.generation} — did you mean ${close.join(', ')}?` : `no such item: ${path} (at generation ${r.generation})`;
  return new UnknownNameError(notes.length > 0 ? `${head} (${notes.join('; ')})` : head, close);
}

const lastName = (path: string): string => path.slice(path.lastIndexOf('::') + (path.includes('::') ? 2 : 0));

/** `def`: where the item at a path is defined. */
export async function answerDef(log: EventLog, path: string, opts: AnswerOptions = {}): Promise<DefAnswer> {
  return at(log, opts, async (r) => {
    await checkScope(r.log, r.generation, opts);
    // the scope narrows what def reads (def.ts, scope.ts CrateScope); passes() narrows exactly, as before
    const res = await def(r.log, path, { from: opts.from, repo: opts.repo, krate: opts.krate });
    if (res.hits.length === 0 && res.outside !== true) await refuseUnknown(r, path, opts);
    const place = await placeAll(r, res.hits, opts.abs);
    const hits = res.hits.map(place).filter((h) => passes(opts, h, h.path, h.qpath));
    return { question: 'def', version: ANSWER_VERSIONS.def, generation: r.generation, match: res.match, total: hits.length, hits: await withContext(r, limited(hits, opts.limit), opts.context) };
  });
}

export interface RefsAnswerOptions extends AnswerOptions {
  edgeKind?: EdgeKind;
  /** List the unresolved edges named like the path instead of the edges into it. */
  unresolved?: boolean;
}

/** `refs` (and `callers` = refs of kind `calls`): edges into the item; their repo, crate and place are the filters'. */
export async function answerRefs(log: EventLog, path: string, opts: RefsAnswerOptions = {}, question: 'refs' | 'callers' = 'refs'): Promise<RefsAnswer> {
  return at(log, opts, async (r) => {
    await checkScope(r.log, r.generation, opts);
    // the scope narrows the edge lookups (refs.ts edgeScope); passes() narrows exactly, as before
    const res = await refs(r.log, path, { edgeKind: opts.edgeKind, from: opts.from, repo: opts.repo, krate: opts.krate });
    const version = ANSWER_VERSIONS[question];
    if (opts.unresolved === true) {
      const loose = await unresolvedNamed(r, path, opts.edgeKind);
      const place = await placeAll(r, [...res.targets, ...loose.map((u) => u.edge), ...loose.flatMap((u) => (u.from ? [u.from] : []))], opts.abs);
      const list = loose.map((u) => ({ ...place(u.edge), from: u.from ? place(u.from) : null })).filter((h) => passes(opts, h, h.path, h.from?.qpath ?? null));
      list.sort((a, b) => cmpPlace(a, b));
      return { question, version, generation: r.generation, match: res.match, targets: res.targets.map(place), unresolvedOnly: true, total: list.length, refs: await withContext(r, limited(list, opts.limit), opts.context), unresolved: null };
    }
    if (res.targets.length === 0 && res.refs.length === 0) await refuseUnknown(r, path, opts, opts.edgeKind);
    const place = await placeAll(r, [...res.targets, ...res.refs, ...res.refs.flatMap((h) => (h.from ? [h.from] : []))], opts.abs);
    const list = res.refs.map((h) => ({ ...place(h), from: h.from ? place(h.from) : null })).filter((h) => passes(opts, h, h.path, h.from?.qpath ?? null));
    let unresolved: number | null = null;
    if (list.length === 0) {
      unresolved = (await unresolvedNamed(r, path, opts.edgeKind)).filter((u) => passes(opts, u.edge, u.edge.file, u.from?.qpath ?? null)).length;
    }
    return { question, version, generation: r.generation, match: res.match, targets: res.targets.map(place), unresolvedOnly: false, total: list.length, refs: await withContext(r, limited(list, opts.limit), opts.context), unresolved };
  });
}

/** `callees`: the calls the item makes; the filters choose the item (its repo and crate) and its call sites (tests). */
export async function answerCallees(log: EventLog, path: string, opts: AnswerOptions = {}): Promise<CalleesAnswer> {
  return at(log, opts, async (r) => {
    await checkScope(r.log, r.generation, opts);
    const res = await callees(r.log, path, { from: opts.from, repo: opts.repo, krate: opts.krate });
    if (res.targets.length === 0) await refuseUnknown(r, path, opts);
    const place = await placeAll(r, [...res.targets, ...res.callees, ...res.callees.flatMap((h) => (h.to ? [h.to] : []))], opts.abs);
    const targets = res.targets.map(place);
    const all = res.callees.map((h) => ({ ...place(h), to: h.to ? place(h.to) : null })).filter((h) => passes(opts, h, h.path, null));
    const list = opts.resolved === true ? all.filter((h) => h.to !== null) : all;
    const left = opts.resolved === true ? { unresolved: all.length - list.length } : {};
    return { question: 'callees', version: ANSWER_VERSIONS.callees, generation: r.generation, match: res.match, targets, total: list.length, callees: await withContext(r, limited(list, opts.limit), opts.context), ...left };
  });
}

/** `history`: every event of the item(s) the path ever named, oldest first; the filters keep events of their repo, crate and place. */
export async function answerHistory(log: EventLog, path: string, opts: AnswerOptions = {}): Promise<HistoryAnswer> {
  return at(log, opts, async (r) => {
    await checkScope(r.log, r.generation, opts);
    const res = await history(r.log, path, { from: opts.from, repo: opts.repo, krate: opts.krate }); // reads the events in scope only
    if (res.ids.length === 0) throw await unknownPath(r, path, opts, undefined, true);
    const place = await placeAll(r, res.events.flatMap((e): Placed[] => (e.node ? [e.node] : e.edge ? [e.edge] : [])), opts.abs);
    const events: PlacedEvent[] = res.events.map((e) => {
      const { node, edge, ...rest } = e;
      return { ...rest, ...(node ? { node: place(node) } : {}), ...(edge ? { edge: place(edge) } : {}) };
    });
    const list = events.filter((e) => {
      const h = e.node ?? e.edge;
      return inScope(opts, e.repo, e.krate) && !(opts.excludeTests === true && (isTestPlace(h?.path ?? null, e.node?.qpath ?? null, e.krate)));
    });
    const shownEvents = limited(list, opts.limit);
    if (opts.context !== undefined && opts.context > 0) {
      // the source around each event's node or edge, at the answer's generation (where it is now, or was last)
      const hits = await withContext(r, shownEvents.flatMap((e): (PlacedNode | PlacedEdge)[] => (e.node ? [e.node] : e.edge ? [e.edge] : [])), opts.context);
      let i = 0;
      for (const e of shownEvents) {
        if (e.node) e.node = hits[i++] as PlacedNode;
        else if (e.edge) e.edge = hits[i++] as PlacedEdge;
      }
    }
    return { question: 'history', version: ANSWER_VERSIONS.history, generation: r.generation, ids: res.ids, total: list.length, events: shownEvents };
  });
}

function cmpPlace(a: { repo: string; krate: string; path: string | null; line: number | null; id: string }, b: typeof a): number {
  const c = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return c(a.repo, b.repo) || c(a.krate, b.krate) || c(a.path ?? '', b.path ?? '') || (a.line ?? 0) - (b.line ?? 0) || c(a.id, b.id);
}
