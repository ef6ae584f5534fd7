// The filters every question takes (`--repo`, `--krate`, `--limit`,
// `--exclude-tests`) and the names they must name: a repo or crate the lake
// does not have at the generation asked is an UnknownNameError with the
// closest names the lake has ("did you mean"), never an empty answer. Also
// where a hit sits for a person: its path relative to the repo root (the
// crate's folder, file column `crate_dir`, joined to the crate-relative
// `file`), or absolute under the root the repo was last ingested from.
// Read-only; the names come from the state tables (code_files) or, on a lake
// without them, a fold of the file events of the lake.
import * as path from 'node:path';
import { and, eq, ge, inList, lt, or, type Expr } from '../lake/expr/expr.ts';
import { batchRows, type EventLog } from '../log/event-log.ts';
import { UNIVERSE_REPO, targetKindOf } from '../log/schema.ts';
import { StateView } from '../log/state/view.ts';
import type { NodeKind } from '../extract/types.ts';
import { didYouMean } from './suggest.ts';

/** A name the lake has never had (at the generation asked): the CLI's exit 1, the server's 404. */
export class UnknownNameError extends Error {
  constructor(
    message: string,
    /** The closest names the lake has, best first (empty when nothing is close). */
    readonly suggestions: string[] = [],
  ) {
    super(message);
    this.name = 'UnknownNameError';
  }
}

/** The filters of a question. */
export interface Scope {
  /** Only this repo (`@universe` = the dependency crates). */
  repo?: string;
  /** Only this crate: `name@version`, or `name` for any version. */
  krate?: string;
  /** At most this many hits (the answer says how many there were). */
  limit?: number;
  /** Leave out hits in test code (isTestPlace). */
  excludeTests?: boolean;
}

/** The part of a scope that names where hits live (inScope): what def, refs, callers, callees and history push into their lookups. */
export type CrateScope = Pick<Scope, 'repo' | 'krate'>;

export const NODE_KINDS: readonly NodeKind[] = ['module', 'fn', 'method', 'struct', 'enum', 'variant', 'union', 'trait', 'trait_item', 'impl', 'const', 'static', 'type', 'macro'];

/**
 * `--krate regex` names every version; `regex@1.10.0` that one; either
 * includes the package's target crates (`tally@0.1.0/test/words`), which a
 * full target krate names alone (a `-` and `_` are the same).
 */
export function krateMatches(wanted: string, krate: string): boolean {
  const norm = (s: string): string => s.replace(/-/g, '_');
  if (wanted.includes('@')) return norm(wanted) === norm(krate) || norm(krate).startsWith(`${norm(wanted)}/`);
  const at = krate.lastIndexOf('@');
  return norm(at < 0 ? krate : krate.slice(0, at)) === norm(wanted);
}

/** Does a hit at (repo, krate) pass the scope's repo and krate? */
export function inScope(scope: Scope, repo: string, krate: string): boolean {
  return (scope.repo === undefined || scope.repo === repo) && (scope.krate === undefined || krateMatches(scope.krate, krate));
}

/**
 * Is this place test code? A test or bench target crate (`name@v/test/t`,
 * targetKindOf), a `tests` or `benches` folder on its path, a
 * `tests.rs`/`test.rs` file, or a `tests` or `test` module on its qualified
 * path (`#[cfg(test)] mod tests`, kept when a crate is indexed with test cfg).
 */
export function isTestPlace(file: string | null, qpath: string | null, krate?: string): boolean {
  if (krate !== undefined) {
    const t = targetKindOf(krate);
    if (t === 'test' || t === 'bench') return true;
  }
  if (file !== null) {
    const segs = file.split(/[\\/]/);
    const base = segs[segs.length - 1];
    if (base === 'tests.rs' || base === 'test.rs') return true;
    if (segs.slice(0, -1).some((s) => s === 'tests' || s === 'benches')) return true;
  }
  if (qpath !== null) {
    const segs = qpath.split('::');
    if (segs.slice(1, -1).some((s) => s === 'tests' || s === 'test')) return true;
  }
  return false;
}

/** The (repo, krate) pairs the lake has at `generation`: from code_files, else a fold of the file events. */
export async function liveCrates(log: EventLog, generation: bigint, where?: { repo?: string }): Promise<{ repo: string; krate: string; crateDir: string | null }[]> {
  const seen = new Map<string, { repo: string; krate: string; crateDir: string | null }>();
  const put = (repo: unknown, krate: unknown, dir: unknown): void => {
    if (typeof repo !== 'string' || typeof krate !== 'string') return;
    const k = `${repo}\0${krate}`;
    const prev = seen.get(k);
    if (!prev || (prev.crateDir === null && typeof dir === 'string')) seen.set(k, { repo, krate, crateDir: typeof dir === 'string' ? dir : null });
  };
  const filter = where?.repo !== undefined ? eq('repo', where.repo) : undefined;
  const view = await StateView.open(log, generation);
  if (view) {
    for (const r of await view.rows('code_files', filter, ['repo', 'krate', 'crate_dir'])) put(r.repo, r.krate, r.crate_dir);
  } else {
    for (const r of (await log.state('file', filter, { generation })).values()) put(r.repo, r.krate, r.crate_dir);
  }
  return [...seen.values()];
}

/** At most this many spellings (`-`/`_` at each separator) make a krate filter; more and none is pushed down. */
const MAX_SPELLINGS = 8;

/**
 * A filter on column `krate` that holds for every krate `krateMatches(wanted,
 * krate)` accepts (a superset: callers test krateMatches on the rows): for
 * `name@version`, that krate and its `/kind/target` crates — `= x` or `[x/,
 * x0)` ('0' follows '/'), so `x-copy1` is not in it; for `name`, `= name` or
 * every `name@…` (`[name@, nameA)`: 'A' follows '@') — for each spelling of
 * `-` and `_`. Undefined when the name has more separators than
 * MAX_SPELLINGS covers (then nothing is pushed down).
 */
export function krateWhere(wanted: string): Expr | undefined {
  let spellings = [''];
  for (const ch of wanted) {
    spellings = ch === '-' || ch === '_' ? spellings.flatMap((s) => [`${s}-`, `${s}_`]) : spellings.map((s) => s + ch);
    if (spellings.length > MAX_SPELLINGS) return undefined;
  }
  const parts: Expr[] = [];
  for (const x of spellings) {
    const [lo, hi] = wanted.includes('@') ? [`${x}/`, `${x}0`] : [`${x}@`, `${x}A`];
    parts.push(eq('krate', x), and(ge('krate', lo), lt('krate', hi)));
  }
  return or(...parts);
}

/**
 * The live (repo, krate) pairs whose krate `wanted` names (krateWhere), and
 * in `repo` when given: a lookup of those ranges on code_files (sorted by
 * repo, krate), so its cost is that crate's rows, whatever the universe's
 * size. A superset (callers test krateMatches); empty without state tables or
 * with too many spellings: the caller then reads every crate.
 */
async function cratesSpelled(log: EventLog, generation: bigint, wanted: string, repo: string | undefined): Promise<{ repo: string; krate: string }[]> {
  const view = await StateView.open(log, generation);
  const where = krateWhere(wanted);
  if (!view || !where) return [];
  const rows = await view.rows('code_files', repo === undefined ? where : and(where, eq('repo', repo)), ['repo', 'krate']);
  return rows.filter((r) => typeof r.repo === 'string' && typeof r.krate === 'string').map((r) => ({ repo: r.repo as string, krate: r.krate as string }));
}

/** The (repo, krate) pairs of live files and nodes (for messages: a scan of two columns of code_nodes). */
export async function allCrates(log: EventLog, generation: bigint): Promise<{ repo: string; krate: string }[]> {
  const seen = new Map<string, { repo: string; krate: string }>();
  for (const c of [...(await liveCrates(log, generation)), ...(await nodeCrates(log, generation))]) seen.set(`${c.repo}\0${c.krate}`, c);
  return [...seen.values()];
}

/** The (repo, krate) pairs of live nodes (a scan of two columns of code_nodes, or a fold). */
async function nodeCrates(log: EventLog, generation: bigint): Promise<{ repo: string; krate: string; crateDir: string | null }[]> {
  const seen = new Map<string, { repo: string; krate: string; crateDir: string | null }>();
  const view = await StateView.open(log, generation);
  const rows = view ? await view.rows('code_nodes', undefined, ['repo', 'krate']) : [...(await log.state('node', undefined, { generation })).values()];
  for (const r of rows) if (typeof r.repo === 'string' && typeof r.krate === 'string') seen.set(`${r.repo}\0${r.krate}`, { repo: r.repo, krate: r.krate, crateDir: null });
  return [...seen.values()];
}

/**
 * Check that the scope's repo and krate name something the lake has at
 * `generation`; throw an UnknownNameError with the closest names otherwise.
 */
export async function checkScope(log: EventLog, generation: bigint, scope: Scope): Promise<void> {
  if (scope.repo === undefined && scope.krate === undefined) return;
  const known = (cs: { repo: string; krate: string }[]): boolean => cs.some((c) => inScope(scope, c.repo, c.krate));
  // a crate named as spelled: a range of code_files' krate column (pages of the crate's rows), not every crate
  if (scope.krate !== undefined && known(await cratesSpelled(log, generation, scope.krate, scope.repo))) return;
  let crates = await liveCrates(log, generation);
  // a lake written without file rows (tools, tests): the crates of its live nodes
  if (!known(crates)) crates = [...crates, ...(await nodeCrates(log, generation))];
  if (known(crates)) return;
  if (scope.repo !== undefined && !crates.some((c) => c.repo === scope.repo)) {
    const repos = [...new Set(crates.map((c) => c.repo))];
    throw unknown('repo', scope.repo, repos, generation, `the lake has ${count(repos.length, 'repo')}`);
  }
  if (scope.krate !== undefined) {
    const wanted = scope.krate;
    const inRepo = crates.filter((c) => scope.repo === undefined || c.repo === scope.repo);
    if (!inRepo.some((c) => krateMatches(wanted, c.krate))) {
      const names = new Set<string>();
      for (const c of inRepo) {
        names.add(c.krate);
        if (!wanted.includes('@')) names.add(c.krate.slice(0, c.krate.lastIndexOf('@')));
        else if (c.krate.includes('/')) names.add(c.krate.slice(0, c.krate.indexOf('/')));
      }
      const elsewhere = scope.repo !== undefined && crates.some((c) => krateMatches(wanted, c.krate));
      throw unknown('crate', wanted, names, generation, elsewhere ? `it is not in repo ${scope.repo}` : `crates are name@version, or a name for every version`);
    }
  }
}

/** A kind `find --kind` knows, or an UnknownNameError with the closest ones. */
export function checkNodeKind(kind: string | undefined): void {
  if (kind === undefined || (NODE_KINDS as readonly string[]).includes(kind)) return;
  const close = didYouMean(kind, NODE_KINDS);
  throw new UnknownNameError(`no such kind "${kind}"${close.length > 0 ? ` — did you mean ${close.join(', ')}?` : ''} (kinds: ${NODE_KINDS.join(', ')})`, close);
}

function unknown(what: string, name: string, known: Iterable<string>, generation: bigint, why: string): UnknownNameError {
  const close = didYouMean(name, known);
  const hint = close.length > 0 ? ` — did you mean ${close.join(', ')}?` : '';
  return new UnknownNameError(`no such ${what} "${name}" at generation ${generation}${hint} (${why})`, close);
}

const count = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`;

// ---- places ----------------------------------------------------------------------

/** Where a hit sits for people: the repo-relative path (null when the hit has no file). */
export interface Placed {
  repo: string;
  krate: string;
  file: string | null;
}

/**
 * A function giving each hit's path relative to its repo root (`crate_dir`
 * + file; the crate-relative file when the lake has no crate_dir for it: a
 * universe crate, or a crate not re-ingested since crate_dir was recorded),
 * or absolute (`abs`) under the root the repo was last ingested from (when
 * the lake recorded one; else the relative path).
 */
export async function placer(log: EventLog, generation: bigint, hits: Placed[], abs = false): Promise<(h: Placed) => string | null> {
  const repos = [...new Set(hits.map((h) => h.repo))];
  const dirs = new Map<string, string | null>();
  if (repos.length > 0) {
    const view = await StateView.open(log, generation);
    const krates = [...new Set(hits.map((h) => h.krate))];
    const filter = and(inList('repo', repos), inList('krate', krates));
    const rows = view ? await view.rows('code_files', filter, ['repo', 'krate', 'crate_dir']) : [...(await log.state('file', filter, { generation })).values()];
    for (const r of rows) {
      const k = `${r.repo as string}\0${r.krate as string}`;
      if (typeof r.crate_dir === 'string' || !dirs.has(k)) dirs.set(k, typeof r.crate_dir === 'string' ? r.crate_dir : null);
    }
  }
  const roots = abs ? await repoRoots(log, generation, repos.filter((r) => r !== UNIVERSE_REPO)) : new Map<string, string>();
  return (h) => {
    if (h.file === null) return null;
    const dir = dirs.get(`${h.repo}\0${h.krate}`) ?? null;
    const rel = dir === null || dir === '' ? h.file : `${dir}/${h.file}`;
    const root = roots.get(h.repo);
    return root !== undefined && dir !== null ? path.join(root, rel) : rel;
  };
}

/** Each repo's root folder as its newest ingest run recorded it (`root` in the run's summary). */
export async function repoRoots(log: EventLog, generation: bigint, repos: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (repos.length === 0) return out;
  const newest = new Map<string, bigint>();
  for await (const b of log.scanRuns({ filter: inList('repo', repos), columns: ['repo', 'started', 'summary'], generation })) {
    for (const row of batchRows(b)) {
      const repo = row.repo as string;
      const started = typeof row.started === 'bigint' ? row.started : 0n;
      if (typeof row.summary !== 'string') continue;
      let root: unknown;
      try {
        root = (JSON.parse(row.summary) as { root?: unknown }).root;
      } catch {
        continue;
      }
      if (typeof root !== 'string') continue;
      if ((newest.get(repo) ?? -1n) < started) {
        newest.set(repo, started);
        out.set(repo, root);
      }
    }
  }
  return out;
}
