// `diff`: what changed in the code between two lake generations, item by
// item, as a person reviewing the change would say it — added, removed,
// renamed, signature / visibility / body changed — with moves (an item whose
// only change is where it sits: a line shift, a move to another file) counted
// but listed only on request. Either end is a generation or a commit of an
// ingested repo (resolved with as-of.ts; the repo is then implied).
//
// Identity: an item is its node id within a crate (id = repo, crate@version,
// namespace, path). Across a version bump (`tally@0.1.0` -> `tally@0.2.0`, or
// a dependency the repo's edges point into moving from `fnvish@0.2.1` to
// `fnvish@0.2.2`) ids all change, so items are matched by (kind, path)
// instead: a bump diffs like any edit, never remove-all/add-all. Leftover
// removed/added items of one crate pair are matched as renames: the same body
// text under a new path (body hash equal, same name), or the same body but
// for its name (same kind, same signature with the name taken out, same line
// span, same outgoing edges at the same offsets) — each only when the match is
// unique. What counts as a change of an item (anything else — parent ids,
// resolution columns — is not listed):
//   signature   its signature (visibility words taken out) or its kind
//   visibility  its visibility
//   body        its text (body hash), when neither of the above changed; not
//               for an impl or trait, whose text is its members (MEMBER_BLOCKS)
//   paths       only its public paths (a re-export added or taken away)
//   moved       only its position (file, line, column)
// `public`: the item is public API at either end (public paths, or a pub
// member of an impl or trait of a public type); the semver class of a change
// of a public item is breaking (removed, renamed, signature, visibility
// narrowed, a public path taken away), additive (added, widened, a path
// added) or patch (body).
//
// Memory: the folded nodes, edges and positions of the scope (a repo, or the
// lake) at both ends, and the bumped dependencies' nodes. Read-only: both ends
// are read through pinned handles (gc keeps them).
import type { Value } from '../lake/spec/types.ts';
import type { EventLog } from '../log/event-log.ts';
import { COL_ID, COL_KRATE, COL_REPO, UNIVERSE_REPO, parseRunNote } from '../log/schema.ts';
import { SEMANTIC } from '../ingest/rows.ts';
import { generationOfRev } from './as-of.ts';
import { checkScope, isTestPlace, krateMatches, UnknownNameError } from './scope.ts';
import { inList } from '../lake/expr/expr.ts';
import { allOf, cmp, nodeHit, placed, scopeFilter, type NodeHit, type Row } from './read.ts';

export interface DiffOptions {
  /** The earlier end: a lake generation, or `fromRev`, a commit (id, prefix, tag, branch, HEAD, REV@{DATE}: query/as-of.ts) of an ingested repo. */
  from?: bigint;
  fromRev?: string;
  /** The later end (the same two ways). */
  to?: bigint;
  toRev?: string;
  /** Only this repo (and the dependencies its edges point into); implied by the revs when they name one repo. */
  repo?: string;
  /** List moves (changes of position only) too; they are always counted. */
  moves?: boolean;
  /** Only changes of public API items (semver-minded: breaking and additive). */
  public?: boolean;
  /** Only changes of this crate (`name@version`, or `name` for every version: both ends of a bump). */
  krate?: string;
  /** Leave out changes in test code (query/scope.ts isTestPlace). */
  excludeTests?: boolean;
  /** List at most this many changes (`total` says how many there were; the counts cover all). */
  limit?: number;
}

export type ChangeKind = 'added' | 'removed' | 'renamed' | 'changed' | 'moved';
export type Aspect = 'signature' | 'visibility' | 'body' | 'paths';
export type Semver = 'breaking' | 'additive' | 'patch';

/** One item's change. */
export interface ItemChange {
  change: ChangeKind;
  /** For `changed` (and a rename that also changed): what changed. */
  aspects: Aspect[];
  before: NodeHit | null;
  after: NodeHit | null;
  /** Public API at either end. */
  public: boolean;
  /** The semver class of the change of a public item (null: not public, or a move). */
  semver: Semver | null;
  /** The dependency bump this item's change belongs to (`fnvish@0.2.1 -> fnvish@0.2.2`), else null. */
  bump: string | null;
}

/** A crate matched across two versions. */
export interface Bump {
  repo: string;
  name: string;
  from: string;
  to: string;
  /** A dependency of the diffed repo (its edges point into it), not one of its own crates. */
  dependency: boolean;
}

export type Stat = Record<'added' | 'removed' | 'renamed' | Aspect | 'moved', number>;

export interface DiffResult {
  from: bigint;
  to: bigint;
  fromRev: string | null;
  toRev: string | null;
  repo: string | null;
  /** The changes listed (moves only with `moves`; only public ones with `public`), by crate and path; at most `limit`. */
  changes: ItemChange[];
  /** The changes there were before `limit` cut the list. */
  total: number;
  /** Counts of the changes listed (moves: all of them, listed or not). */
  stat: Stat;
  /** Moves counted but not listed. */
  hiddenMoves: number;
  bumps: Bump[];
  /** Dependencies (crate@version) the repo's edges started or stopped pointing into, other than bumps. */
  dependencies: { added: string[]; removed: string[] };
  /** Edge events between the ends, as counts (calls, uses…: they follow the bodies listed). */
  edges: { added: number; changed: number; removed: number };
  /** Over the public items' changes (the scope's own crates, not its dependencies): breaking, additive, patch, and the release they call for. */
  semver: { breaking: number; additive: number; patch: number; release: 'major' | 'minor' | 'patch' | 'none' };
}

/** A diff whose ends are the wrong way round, or name nothing: the message says what to give instead. */
export class DiffRangeError extends Error {}

const hitOf = (r: Row): NodeHit => nodeHit(r);

export async function diff(log: EventLog, opts: DiffOptions): Promise<DiffResult> {
  const now = log.readGeneration();
  const end = async (which: 'from' | 'to'): Promise<{ g: bigint; rev: string | null }> => {
    const g = opts[which];
    const rev = which === 'from' ? opts.fromRev : opts.toRev;
    const flag = which === 'from' ? '--from' : '--to';
    if (g !== undefined && rev !== undefined) throw new DiffRangeError(`give ${flag} GEN or ${flag}-rev REV, not both (found ${flag} ${g} and ${flag}-rev ${rev})`);
    if (rev !== undefined) return { g: await generationOfRev(log, rev, opts.repo, now, `${flag}-rev`), rev };
    if (g === undefined) throw new DiffRangeError(`missing the ${which === 'from' ? 'earlier' : 'later'} end: ${flag} GEN (a lake generation) or ${flag}-rev REV (a commit, tag or branch of an ingested repo)`);
    if (g < 0n) throw new DiffRangeError(`${flag}: expected a generation >= 0, found ${g}`);
    if (g > now) throw new DiffRangeError(`${flag} ${g} is in the future (the lake is at generation ${now})`);
    return { g, rev: null };
  };
  const from = await end('from');
  const to = await end('to');
  if (from.g > to.g) {
    const name = (e: { g: bigint; rev: string | null }, flag: string): string => (e.rev !== null ? `${flag}-rev ${e.rev}` : `${flag} ${e.g}`);
    const at = (e: { g: bigint; rev: string | null }): string => (e.rev !== null ? ` (generation ${e.g})` : '');
    throw new DiffRangeError(
      `the range is reversed: ${name(from, '--from')}${at(from)} is after ${name(to, '--to')}${at(to)} — nothing compared; ` +
        `swap them: ${name(to, '--from')} ${name(from, '--to')}`,
    );
  }
  // both ends through pinned handles (a generation whose snapshots gc expired is read from the log by runs)
  const a = log.pin({ generation: from.g }, { history: true });
  try {
    const b = log.pin({ generation: to.g }, { history: true });
    try {
      // a repo or crate the lake has at neither end is unknown (did you mean …)
      if (opts.repo !== undefined || opts.krate !== undefined) {
        const scope = { repo: opts.repo, krate: opts.krate };
        try {
          await checkScope(b, to.g, scope);
        } catch (e) {
          if (!(e instanceof UnknownNameError) || from.g === to.g) throw e;
          await checkScope(a, from.g, scope).catch(() => {
            throw e;
          });
        }
      }
      let repo = opts.repo;
      if (repo === undefined) {
        const repos = new Set([from, to].filter((e) => e.rev !== null).map((e) => repoOfGeneration(log, e.g)).filter((r): r is string => r !== undefined));
        if (repos.size === 1) repo = [...repos][0];
      }
      const r = await compare(a, b, repo, opts);
      return { from: from.g, to: to.g, fromRev: from.rev, toRev: to.rev, repo: repo ?? null, ...r };
    } finally {
      b.close();
    }
  } finally {
    a.close();
  }
}

/** The repo whose run landed generation `g` (from its note), if any. */
function repoOfGeneration(log: EventLog, g: bigint): string | undefined {
  const [entry] = log.lake.catalog.generations({ limit: 1, before: g + 1n });
  if (!entry || entry.generation !== g) return undefined;
  const note = parseRunNote(entry.note);
  return note && note.what !== 'universe' ? note.repo : undefined;
}

/** Nodes (positions merged in) and edges of a scope at one end. */
interface Side {
  nodes: Map<string, Row>;
  edges: Map<string, Row>;
}

async function side(log: EventLog, filter: ReturnType<typeof allOf>, withEdges = true): Promise<Side> {
  const nodes = await log.state('node', filter);
  const pos = await log.state('pos', filter);
  for (const [id, row] of nodes) {
    const p = pos.get(id);
    if (p && p.entity === 'node') nodes.set(id, placed('node', row, p));
  }
  const edges = withEdges ? await log.state('edge', filter) : new Map<string, Row>();
  for (const [id, row] of edges) {
    const p = pos.get(id);
    if (p && p.entity === 'edge') edges.set(id, placed('edge', row, p));
  }
  return { nodes, edges };
}

/** `name@version` or `name@version/kind/target` (a target of the package): the version, and the rest as the name. */
function splitKrate(krate: string): { name: string; version: string } {
  const m = /^(.*?)@([^/]*)(\/.*)?$/.exec(krate);
  return m ? { name: m[1]! + (m[3] ?? ''), version: m[2]! } : { name: krate, version: '' };
}
const nameOf = (krate: string): string => splitKrate(krate).name;
const versionOf = (krate: string): string => splitKrate(krate).version;

/** Numeric-aware version order (1.10 after 1.9). */
function versionCmp(a: string, b: string): number {
  const pa = a.split(/[.+-]/);
  const pb = b.split(/[.+-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    const d = /^\d+$/.test(x) && /^\d+$/.test(y) ? Number(x) - Number(y) : cmp(x, y);
    if (d !== 0) return d;
  }
  return 0;
}

function byKrate(rows: Map<string, Row>): Map<string, Map<string, Row>> {
  const out = new Map<string, Map<string, Row>>();
  for (const [id, r] of rows) {
    const k = `${r[COL_REPO] as string}\u0000${r[COL_KRATE] as string}`;
    let m = out.get(k);
    if (!m) out.set(k, (m = new Map()));
    m.set(id, r);
  }
  return out;
}

/** Dependency crates (`name@version`) the repo's edges point into, that are not the repo's own crates. */
function dependencyKrates(s: Side): Set<string> {
  const own = new Set<string>();
  for (const r of s.nodes.values()) own.add(r[COL_KRATE] as string);
  const out = new Set<string>();
  for (const e of s.edges.values()) {
    const k = e.dst_krate;
    if (typeof k === 'string' && k.includes('@') && !own.has(k)) out.add(k);
  }
  return out;
}

async function compare(a: EventLog, b: EventLog, repo: string | undefined, opts: DiffOptions) {
  const filter = allOf(scopeFilter({ repo }));
  const before = await side(a, filter);
  const after = await side(b, filter);
  const pairs: { from: Map<string, Row>; to: Map<string, Row>; bump: Bump | null; fromSide: Side; toSide: Side }[] = [];
  const bumps: Bump[] = [];
  const dependencies = { added: [] as string[], removed: [] as string[] };

  // crates of the scope: the same crate at both ends, a version bump (one version gone, one come), or only at one end
  const ka = byKrate(before.nodes);
  const kb = byKrate(after.nodes);
  const gone = [...ka.keys()].filter((k) => !kb.has(k));
  const come = [...kb.keys()].filter((k) => !ka.has(k));
  for (const k of ka.keys()) if (kb.has(k)) pairs.push({ from: ka.get(k)!, to: kb.get(k)!, bump: null, fromSide: before, toSide: after });
  const group = (keys: string[]) => {
    const m = new Map<string, string[]>();
    for (const k of keys) {
      const [r, krate] = k.split('\u0000') as [string, string];
      const key = `${r}\u0000${nameOf(krate)}`;
      m.set(key, [...(m.get(key) ?? []), k]);
    }
    return m;
  };
  const goneBy = group(gone);
  const comeBy = group(come);
  const olderBy = group([...ka.keys()]);
  for (const [key, ks] of comeBy) {
    const [r, name] = key.split('\u0000') as [string, string];
    let old = goneBy.get(key);
    // a new universe version beside the old one (the universe keeps every version): the newest older one present
    if ((!old || old.length === 0) && r === UNIVERSE_REPO && ks.length === 1) {
      const v = versionOf(ks[0]!.split('\u0000')[1]!);
      const older = (olderBy.get(key) ?? []).filter((o) => versionCmp(versionOf(o.split('\u0000')[1]!), v) < 0);
      older.sort((x, y) => versionCmp(versionOf(y.split('\u0000')[1]!), versionOf(x.split('\u0000')[1]!)));
      if (older.length > 0) old = [older[0]!];
    }
    if (old && old.length === 1 && ks.length === 1) {
      const bump: Bump = { repo: r, name, from: old[0]!.split('\u0000')[1]!, to: ks[0]!.split('\u0000')[1]!, dependency: false };
      bumps.push(bump);
      pairs.push({ from: ka.get(old[0]!)!, to: kb.get(ks[0]!)!, bump, fromSide: before, toSide: after });
      goneBy.delete(key);
      continue;
    }
    for (const k of ks) pairs.push({ from: new Map(), to: kb.get(k)!, bump: null, fromSide: before, toSide: after });
  }
  for (const ks of goneBy.values()) for (const k of ks) pairs.push({ from: ka.get(k)!, to: new Map(), bump: null, fromSide: before, toSide: after });

  // a repo's dependencies: the crates its edges point into at each end; a name at one version each end, differing, is a bump
  if (repo !== undefined && repo !== UNIVERSE_REPO) {
    const da = dependencyKrates(before);
    const db = dependencyKrates(after);
    const byName = (s: Set<string>) => {
      const m = new Map<string, string[]>();
      for (const k of s) m.set(nameOf(k), [...(m.get(nameOf(k)) ?? []), k]);
      return m;
    };
    const na = byName(da);
    const nb = byName(db);
    const wanted: { name: string; from: string; to: string }[] = [];
    for (const [name, vs] of nb) {
      const old = na.get(name) ?? [];
      const added = vs.filter((v) => !da.has(v));
      const removed = old.filter((v) => !db.has(v));
      if (added.length === 1 && removed.length === 1) wanted.push({ name, from: removed[0]!, to: added[0]! });
      else dependencies.added.push(...added);
      if (!(added.length === 1 && removed.length === 1)) dependencies.removed.push(...removed);
    }
    for (const [name, vs] of na) if (!nb.has(name)) dependencies.removed.push(...vs);
    if (wanted.length > 0) {
      const dep = (log: EventLog, krates: string[]) => side(log, allOf([...scopeFilter({ repo: UNIVERSE_REPO }), inList(COL_KRATE, krates)]), true);
      const ua = await dep(a, wanted.map((w) => w.from));
      const ub = await dep(b, wanted.map((w) => w.to));
      const ua2 = byKrate(ua.nodes);
      const ub2 = byKrate(ub.nodes);
      for (const w of wanted) {
        const bump: Bump = { repo: UNIVERSE_REPO, name: w.name, from: w.from, to: w.to, dependency: true };
        bumps.push(bump);
        const f = ua2.get(`${UNIVERSE_REPO}\u0000${w.from}`) ?? new Map();
        const t = ub2.get(`${UNIVERSE_REPO}\u0000${w.to}`) ?? new Map();
        pairs.push({ from: f, to: t, bump, fromSide: ua, toSide: ub });
      }
    }
    dependencies.added.sort();
    dependencies.removed.sort();
  }

  const all: ItemChange[] = [];
  /** Changes of a dependency's items: listed, but not the repo's semver. */
  const ofDependency = new Set<ItemChange>();
  for (const p of pairs) {
    for (const c of comparePair(p.from, p.to, p.bump, p.fromSide, p.toSide)) {
      all.push(c);
      if (p.bump?.dependency) ofDependency.add(c);
    }
  }

  // edges of the scope, as counts
  const edges = { added: 0, changed: 0, removed: 0 };
  for (const [id, e] of after.edges) {
    const o = before.edges.get(id);
    if (!o) edges.added++;
    else if (SEMANTIC.edge.some((c) => !same(o[c] ?? null, e[c] ?? null))) edges.changed++;
  }
  for (const id of before.edges.keys()) if (!after.edges.has(id)) edges.removed++;

  const stat: Stat = { added: 0, removed: 0, renamed: 0, signature: 0, visibility: 0, body: 0, paths: 0, moved: 0 };
  const semver = { breaking: 0, additive: 0, patch: 0, release: 'none' as DiffResult['semver']['release'] };
  let hiddenMoves = 0;
  const changes: ItemChange[] = [];
  const wanted = (c: ItemChange): boolean => {
    const h = (c.after ?? c.before)!;
    // a change across a bump belongs to both versions of the crate
    const krates = c.bump !== null ? c.bump.split(' -> ') : [h.krate];
    if (opts.krate !== undefined && !krates.some((k) => krateMatches(opts.krate!, k))) return false;
    if (opts.excludeTests && isTestPlace(h.file, h.qpath, h.krate)) return false;
    return true;
  };
  for (const c of all) {
    if (!wanted(c)) continue;
    if (c.semver && !ofDependency.has(c)) semver[c.semver]++;
    if (c.change === 'moved') {
      stat.moved++;
      if (!opts.moves) {
        hiddenMoves++;
        continue;
      }
    }
    if (opts.public && (c.semver === null || c.semver === 'patch') && c.change !== 'moved') continue;
    if (opts.public && c.change === 'moved' && !c.public) continue;
    if (c.change === 'added' || c.change === 'removed' || c.change === 'renamed') stat[c.change]++;
    for (const x of c.aspects) stat[x]++;
    changes.push(c);
  }
  semver.release = semver.breaking > 0 ? 'major' : semver.additive > 0 ? 'minor' : semver.patch > 0 ? 'patch' : 'none';
  const pathOf = (c: ItemChange): string => (c.after ?? c.before)!.qpath ?? '';
  const krateOf = (c: ItemChange): string => (c.after ?? c.before)!.krate;
  const repoOf = (c: ItemChange): string => (c.after ?? c.before)!.repo;
  changes.sort((x, y) => cmp(repoOf(x), repoOf(y)) || cmp(nameOf(krateOf(x)), nameOf(krateOf(y))) || cmp(pathOf(x), pathOf(y)) || cmp(x.change, y.change) || cmp((x.after ?? x.before)!.id, (y.after ?? y.before)!.id));
  bumps.sort((x, y) => cmp(x.repo, y.repo) || cmp(x.name, y.name));
  const total = changes.length;
  if (opts.limit !== undefined && changes.length > opts.limit) changes.length = opts.limit;
  return { changes, total, stat, hiddenMoves, bumps, dependencies, edges, semver };
}

// ---- one crate (or one crate across versions) -------------------------------------

/** A signature with its visibility words taken out (`pub(crate) fn f()` -> `fn f()`). */
const bareSignature = (s: Value | undefined): string => (typeof s === 'string' ? s.replace(/^\s*pub(\s*\([^)]*\))?\s+/, '') : '');

const isWordChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * A signature with the item's own name replaced, for renames: its first
 * occurrence as a whole word (no word character either side). A plain
 * search, not a RegExp built from the name.
 */
function nameless(r: Row): string {
  const name = typeof r.name === 'string' ? r.name : '';
  const sig = bareSignature(r.signature);
  if (name === '') return sig;
  for (let i = sig.indexOf(name); i >= 0; i = sig.indexOf(name, i + 1)) {
    const end = i + name.length;
    if ((i === 0 || !isWordChar(sig.charCodeAt(i - 1))) && (end === sig.length || !isWordChar(sig.charCodeAt(end)))) return `${sig.slice(0, i)}\u0000${sig.slice(end)}`;
  }
  return sig;
}

/** The edges out of an item, at offsets from its first line (calls and uses its body makes). */
function outgoing(s: Side): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of s.edges.values()) {
    if (e.edge_kind === 'contains' || typeof e.src !== 'string') continue;
    const src = s.nodes.get(e.src);
    const line = typeof e.line === 'number' && src && typeof src.line_start === 'number' ? e.line - src.line_start : '?';
    const list = out.get(e.src) ?? [];
    list.push(`${String(e.edge_kind)} ${String(e.dst_path)} ${line}`);
    out.set(e.src, list);
  }
  for (const l of out.values()) l.sort();
  return out;
}

/** Is the item public API in its side: public paths, or a pub member (any member of a trait impl) of a public type or trait. */
function publicIn(r: Row, s: Side, byPath: () => Map<string, Row>): boolean {
  if (typeof r.public_paths === 'string' && r.public_paths !== '') return true;
  const parent = typeof r.parent === 'string' ? s.nodes.get(r.parent) : undefined;
  if (!parent) return false;
  if (parent.kind === 'trait') return typeof parent.public_paths === 'string' && parent.public_paths !== '';
  if (parent.kind !== 'impl') return false;
  let info: { self?: string; trait?: string } = {};
  try {
    info = typeof parent.type_info === 'string' ? (JSON.parse(parent.type_info) as typeof info) : {};
  } catch {
    return false;
  }
  if (!info.trait && r.visibility !== 'pub') return false;
  const self = info.self ? byPath().get(info.self) : undefined;
  return self !== undefined && typeof self.public_paths === 'string' && self.public_paths !== '';
}

const samePlace = (x: Row, y: Row): boolean => x.file === y.file && x.line_start === y.line_start && x.col === y.col;

function same(x: Value, y: Value): boolean {
  if (x === y) return true;
  if (typeof x === 'bigint' || typeof y === 'bigint') return x !== null && y !== null && BigInt(x as bigint) === BigInt(y as bigint);
  return false;
}

function comparePair(from: Map<string, Row>, to: Map<string, Row>, bump: Bump | null, fs: Side, ts: Side): ItemChange[] {
  const out: ItemChange[] = [];
  const lazyPaths = (s: Side) => {
    let m: Map<string, Row> | undefined;
    return () => {
      if (!m) {
        m = new Map();
        for (const r of s.nodes.values()) if (typeof r.qpath === 'string') m.set(r.qpath, r);
      }
      return m;
    };
  };
  const pathsA = lazyPaths(fs);
  const pathsB = lazyPaths(ts);
  const pubA = (r: Row) => publicIn(r, fs, pathsA);
  const pubB = (r: Row) => publicIn(r, ts, pathsB);
  const bumpText = bump ? `${bump.from} -> ${bump.to}` : null;

  // match: by id within one crate; by (kind, path) across versions
  const key = (r: Row): string => (bump ? `${String(r.kind)}\u0000${String(r.qpath)}` : (r[COL_ID] as string));
  const index = new Map<string, Row[]>();
  for (const r of to.values()) index.set(key(r), [...(index.get(key(r)) ?? []), r]);
  const removed: Row[] = [];
  const matched: [Row, Row][] = [];
  for (const r of from.values()) {
    const list = index.get(key(r));
    const m = list?.shift();
    if (m) matched.push([r, m]);
    else removed.push(r);
  }
  const added: Row[] = [];
  for (const list of index.values()) added.push(...list);

  // renames among what is left
  const taken = new Set<Row>();
  const pairUnique = (sig: (r: Row) => string | null): [Row, Row][] => {
    const left = new Map<string, Row[]>();
    const right = new Map<string, Row[]>();
    for (const r of removed) if (!taken.has(r)) { const s = sig(r); if (s !== null) left.set(s, [...(left.get(s) ?? []), r]); }
    for (const r of added) if (!taken.has(r)) { const s = sig(r); if (s !== null) right.set(s, [...(right.get(s) ?? []), r]); }
    const found: [Row, Row][] = [];
    for (const [s, l] of left) {
      const rr = right.get(s);
      if (l.length === 1 && rr && rr.length === 1) {
        found.push([l[0]!, rr[0]!]);
        taken.add(l[0]!);
        taken.add(rr[0]!);
      }
    }
    return found;
  };
  const bodyHash = (r: Row) => (typeof r.body_hash === 'string' ? r.body_hash : null);
  const newPath = pairUnique((r) => (bodyHash(r) === null ? null : `${String(r.kind)}\u0000${String(r.name)}\u0000${bodyHash(r)}`));
  let outA: Map<string, string[]> | undefined;
  let outB: Map<string, string[]> | undefined;
  const newName = pairUnique((r) => {
    if (r.kind === 'impl' || r.kind === 'module') return null;
    const fromSide = from.get(r[COL_ID] as string) === r;
    const edges = fromSide ? (outA ??= outgoing(fs)) : (outB ??= outgoing(ts));
    const span = typeof r.line_end === 'number' && typeof r.line_start === 'number' ? r.line_end - r.line_start : '?';
    return `${String(r.kind)}\u0000${nameless(r)}\u0000${span}\u0000${(edges.get(r[COL_ID] as string) ?? []).join('\n')}`;
  });

  for (const [b, a] of matched) {
    const aspects = aspectsOf(b, a);
    const isPub = pubA(b) || pubB(a);
    if (aspects.length === 0) {
      if (!samePlace(b, a)) out.push({ change: 'moved', aspects: [], before: hitOf(b), after: hitOf(a), public: isPub, semver: null, bump: bumpText });
      continue;
    }
    const semver = !isPub ? null : semverOf(aspects, b, a, pubA(b), pubB(a));
    out.push({ change: 'changed', aspects, before: hitOf(b), after: hitOf(a), public: isPub, semver, bump: bumpText });
  }
  for (const [b, a] of [...newPath, ...newName]) {
    const wasPub = pubA(b);
    const isPub = pubB(a);
    // an impl has no name of its own: written in another module, it is where it sits, not what it is
    if (b.kind === 'impl') {
      out.push({ change: 'moved', aspects: [], before: hitOf(b), after: hitOf(a), public: wasPub || isPub, semver: null, bump: bumpText });
      continue;
    }
    const aspects = aspectsOf(b, a).filter((x) => x !== 'paths' && x !== 'body' && x !== 'signature');
    const semver = wasPub ? 'breaking' : isPub ? 'additive' : null;
    out.push({ change: 'renamed', aspects, before: hitOf(b), after: hitOf(a), public: wasPub || isPub, semver, bump: bumpText });
  }
  for (const b of removed) if (!taken.has(b)) out.push({ change: 'removed', aspects: [], before: hitOf(b), after: null, public: pubA(b), semver: pubA(b) ? 'breaking' : null, bump: bumpText });
  for (const a of added) if (!taken.has(a)) out.push({ change: 'added', aspects: [], before: null, after: hitOf(a), public: pubB(a), semver: pubB(a) ? 'additive' : null, bump: bumpText });
  return out;
}

/**
 * Kinds whose text between the braces is their members (each an item of its
 * own, listed with its own change) and what sits between them — the members'
 * doc comments and attributes, blank lines. Their body hash (extract/parser.ts:
 * each member's text replaced by one NUL) changes when a member is added or a
 * member's doc comment is edited: neither is a change of the block itself, so
 * their body is not an aspect (the header is their signature). The fingerprint
 * stays as ingested: changing it would rewrite every impl's events.
 */
const MEMBER_BLOCKS = new Set<Value>(['impl', 'trait']);

function aspectsOf(b: Row, a: Row): Aspect[] {
  const out: Aspect[] = [];
  if (b.kind !== a.kind || bareSignature(b.signature) !== bareSignature(a.signature)) out.push('signature');
  if ((b.visibility ?? '') !== (a.visibility ?? '')) out.push('visibility');
  if (out.length === 0 && !MEMBER_BLOCKS.has(a.kind ?? null) && (b.body_hash ?? null) !== (a.body_hash ?? null)) out.push('body');
  if (out.length === 0 && (b.public_paths ?? null) !== (a.public_paths ?? null)) out.push('paths');
  return out;
}

function semverOf(aspects: Aspect[], b: Row, a: Row, wasPub: boolean, isPub: boolean): Semver {
  if (wasPub && !isPub) return 'breaking';
  if (!wasPub && isPub) return 'additive';
  if (aspects.includes('signature')) return 'breaking';
  if (aspects.includes('paths')) {
    const pa = new Set(typeof a.public_paths === 'string' ? a.public_paths.split('\n') : []);
    const lost = typeof b.public_paths === 'string' ? b.public_paths.split('\n').some((p) => !pa.has(p)) : false;
    return lost ? 'breaking' : 'additive';
  }
  if (aspects.includes('visibility')) return 'additive';
  return 'patch';
}
