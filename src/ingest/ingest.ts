// Ingest: a workspace's crates (repo `name`) or crate directories (repo
// `@universe`) -> extract each crate in a worker thread -> the delta against
// the lake's state of that (repo, krate) at the run's generation -> written
// as the run's data files in bounded batches -> ONE commit with the run's
// `ingest_runs` row (src/log/run.ts): one run, one generation.
//
// Invariants:
// - Only deltas are written: re-ingesting unchanged code writes no event (the
//   run row aside). A crate whose files all hash as the lake records them, and
//   whose input fingerprint (the `Cargo.toml` row: manifest bytes, targets,
//   dependency versions from Cargo.lock) is unchanged, is not parsed at all.
//   Extraction (name resolution) is crate-wide, so a crate with one changed
//   file is extracted whole; the diff still writes only what changed.
// - krate = `name@version`, and extract puts krate into every id: a version
//   bump of a repo crate changes all its ids (remove + add of every item).
//   Crates gone from the workspace (or at an old version) get removes.
// - Concurrency: every read of a run is at its generation, and the commit
//   asserts the run's keys (`repo:<name>` = the last run id read then;
//   `universe:<name@version>` absent for each crate it adds). A writer of the
//   same repo or crates that landed first makes the commit fail; the run is
//   discarded and diffed again against the newer state (at most RUN_TRIES
//   attempts). Different repos share no key and never wait on each other.
// - Memory: one crate's graph and its current state, plus at most `batchRows`
//   buffered event rows and STATE_FLUSH_ROWS rows per state table (and the few
//   crates the worker pipeline holds) — never the whole repo. Data files are
//   written as the buffers fill.
// Rows are written node, edge, pos, then file kinds.
// Crash story: nothing is visible before the run's commit, so a crash (or a
// full disk) anywhere leaves the lake at the previous generation plus
// unreferenced files for gc; the run row is never missing for landed events.
// The rerun diffs against the same state and writes the same delta.
// Strict mode extracts everything first and writes nothing if any problem.
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import {
  activeFeatures, compareVersions, pickVersion, readCrateDir, readWorkspace, type CrateGraph, type DepCrate, type Dependency, type FeatureSelection, type FileStatus, type Package,
  type ProblemKind, type Workspace,
} from '../extract/index.ts';
import { and, eq, inList } from '../lake/expr/expr.ts';
import type { Value } from '../lake/spec/types.ts';
import type { EventLog, EventRow } from '../log/event-log.ts';
import { RunDiskFull, withRun, type Run } from '../log/run.ts';
import { describeFailure } from '../lake/disk-full.ts';
import { formatMaintainReport, maintain, type MaintainReport } from '../log/maintain.ts';
import { StateDelta } from '../log/state/delta.ts';
import { SourcesWriter, ensureSourcesTable, type SourcesWritten } from '../log/blobs.ts';
import { placed } from '../log/state/rows.ts';
import { crashPoint } from '../lake/testing/crash.ts';
import { UNIVERSE_REPO, runNote, targetKrate, type Kind, type TargetKind } from '../log/schema.ts';
import { DepSummaries, loadDepCrates, type DepRef } from './deps.ts';
import { ExtractPool, type Awaits, type ExtractJob, type ExtractResult } from './pool.ts';
import { Writer } from './writer.ts';
import { LocalCrates, defaultSearchDirs, expandCrateDirs, findCrate, nearestCompatible, parseCrateDirName } from './locate.ts';
import {
  MANIFEST_PATH, MANIFEST_STATUS, addCounts, diff, edgeFields, fileFields, fileId, nodeFields,
  type DeltaSink, type Fields, type RowContext,
} from './rows.ts';

export interface IngestProgress {
  phase: 'check' | 'extract' | 'write' | 'deps';
  krate: string;
  /** Crates finished so far, of `total`. */
  done: number;
  total: number;
}

export interface IngestOptions {
  /** Repo name (default: the workspace folder's name). */
  repo?: string;
  rev?: string;
  /** The git commit this run indexes (git-native ingest): recorded on the run row; its id becomes `rev`. */
  commit?: { sha: string; timeMs: number; subject: string; refs: string[] };
  /** Also add the Cargo.lock dependency crates found locally to the universe. */
  withDeps?: boolean;
  /**
   * The folder recorded as the repo's root on the run (`root` in its summary;
   * `--abs` answers join paths to it). Default: the workspace folder; git
   * ingest gives the repository's own folder (+ the workspace's prefix).
   */
  root?: string;
  /** Any problem fails the run before anything is written. */
  strict?: boolean;
  onProgress?: (p: IngestProgress) => void;
  /** Extract worker threads (default 2; 0 = extract in this thread). */
  workers?: number;
  /** Rows buffered before an append (default 50 000). */
  batchRows?: number;
  /** Limit on one crate's extraction in a worker (default 120 s); past it the crate is reported and skipped. */
  extractTimeoutMs?: number;
  /**
   * Run the log's maintenance after the run (default true): compact tables
   * whose small files passed their threshold (log/maintain.ts). False = skip.
   */
  maintain?: boolean;
  /** Files over this size are skipped (default extract's 4 MiB). */
  maxFileBytes?: number;
  /** Where `withDeps` looks for crates (default: vendor/, ~/.cargo/registry/src/*, /usr/share/cargo/registry). */
  searchDirs?: string[];
  /**
   * A Cargo.lock dependency version the lake does not have (and `withDeps` did not find):
   * `exact` (default) leaves its paths unresolved; `nearest` uses the nearest present
   * version of the same semver-compatible major instead, one warning (`substitutions`) each.
   */
  deps?: 'exact' | 'nearest';
  /**
   * Features of the ingested crates, as cargo's `--features`,
   * `--all-features`, `--no-default-features` (default: each crate's default
   * features). Universe crates added with `withDeps` get their default features.
   */
  features?: string[];
  allFeatures?: boolean;
  noDefaultFeatures?: boolean;
  /**
   * Evaluate cfg as the release profile does (`debug_assertions` off), as
   * `cargo build --release`; default the dev profile (on), as `cargo build`,
   * `cargo check` and rust-analyzer. Part of a crate's fingerprint. Universe
   * crates added with `withDeps` get the dev profile.
   */
  release?: boolean;
}

export interface UniverseOptions extends Omit<IngestOptions, 'repo' | 'withDeps' | 'searchDirs'> {
  /** Versions to resolve the crates' own dependencies with (e.g. a workspace's Cargo.lock). */
  lock?: Map<string, string[]>;
}

/** A Cargo.lock dependency version neither found locally nor in the lake. */
export interface MissingDep {
  /** `name@version` as Cargo.lock names it. */
  krate: string;
  /** Other versions of the crate present in the search folders (with `withDeps`), and in the lake's universe. */
  local: string[];
  lake: string[];
  /** With `deps: 'nearest'`: the version used instead (null: no semver-compatible version present). */
  substitute: string | null;
}

/** `--deps nearest` used `used` where Cargo.lock says `wanted` (both `name@version`). */
export interface Substitution {
  wanted: string;
  used: string;
  /** Where the substitute is: found locally (added to the universe by this ingest) or already in the lake. */
  from: 'local' | 'lake';
}

/** A problem with the input, and the crate it belongs to ('' for the workspace itself). */
export interface IngestProblem {
  krate: string;
  path: string;
  kind: ProblemKind | 'extract-failed' | 'not-found';
  message: string;
}

export interface IngestReport {
  run: string;
  repo: string;
  rev: string | null;
  /** Crates in the workspace (or crate versions given to a universe add). */
  crates: number;
  /** Crates not parsed because nothing in them changed. */
  unchangedCrates: number;
  /** Universe crate versions skipped because the lake has them. */
  presentCrates: number;
  /** Crates of the repo no longer in the workspace, whose items were removed. */
  removedCrates: number;
  /** Source files of the crates (parsed or not). */
  files: number;
  /** Files read and parsed in this run. */
  parsed: number;
  /** Files not parsed again because their crate was unchanged. */
  skippedUnchanged: number;
  /** Bytes of the parsed files. */
  bytes: number;
  events: { add: number; change: number; remove: number };
  /** Position rows written: items and edges that moved without a semantic change (or moved with one). */
  moves: number;
  problems: IngestProblem[];
  ms: number;
  /** Attempts the run took: more than 1 when another writer of the same repo or crates landed first and the run diffed again. */
  attempts: number;
  /** The lake generation the run landed in. */
  generation: bigint;
  /** The maintenance that followed the run (absent when skipped). */
  maintenance?: MaintainReport;
  /** Why that maintenance failed (the run itself landed). */
  maintenanceError?: string;
  /**
   * What failed after the run's commit landed (e.g. ending its lease on a full
   * disk), one line each naming the generation: the run is whole in the lake,
   * nothing of it was deleted; the CLI prints these as warnings (exit 0).
   */
  afterCommit?: string[];
  /** File contents the run stored in `mimir.code_sources` (absent when the lake has no such table). */
  sources?: SourcesWritten;
  /**
   * `withDeps`: the universe add of the dependencies, the `name@version`s not found locally
   * nor in the lake, the folders searched, and for each missing one the other versions present.
   */
  deps?: { report: IngestReport; notFound: string[]; searched: string[]; missing: MissingDep[] };
  /** `deps: 'nearest'`: the dependency versions replaced by a present semver-compatible one (recorded on the run row). */
  substitutions?: Substitution[];
}

/**
 * The path given to `ingest` is not a valid workspace or package (a file, a
 * folder without Cargo.toml, a manifest that does not parse or that cargo
 * would refuse, no package):
 * nothing was written. Crates leave a repo only when a valid workspace no
 * longer has them.
 */
export class IngestInputError extends Error {
  constructor(message: string, readonly problems: IngestProblem[] = []) {
    super(message);
    this.name = 'IngestInputError';
  }
}

/**
 * The workspace at `root`, refused (IngestInputError) unless it is one: a
 * folder holding a Cargo.toml whose manifests (its own, every member's,
 * Cargo.lock) all parse and pass cargo's checks (extract/manifest-check.ts),
 * with at least one package. A broken manifest must
 * never read as "these crates are gone" and remove them.
 */
export async function readValidWorkspace(root: string, repo: string): Promise<Workspace> {
  let st;
  try {
    st = await stat(root);
  } catch (e) {
    throw new IngestInputError(`cannot ingest ${root}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : (e as Error).message} — nothing written`);
  }
  if (!st.isDirectory()) {
    throw new IngestInputError(`cannot ingest ${root}: it is a file, not a workspace or package folder (expected a folder holding Cargo.toml) — nothing written`);
  }
  const manifest = path.join(root, 'Cargo.toml');
  if (!(await stat(manifest).then((m) => m.isFile(), () => false))) {
    throw new IngestInputError(`cannot ingest ${root}: not a workspace or package (no Cargo.toml in it) — nothing written`);
  }
  const ws = await readWorkspace(root);
  if (ws.problems.length > 0) {
    const problems = ws.problems.map((p) => ({ krate: '', ...p }));
    const shown = ws.problems.slice(0, 3).map((p) => p.message).join('; ') + (ws.problems.length > 3 ? `; … ${ws.problems.length - 3} more` : '');
    throw new IngestInputError(
      `cannot ingest ${root}: its manifests are not valid (${ws.problems.length} problem${ws.problems.length === 1 ? '' : 's'}: ${shown}) — nothing written; repo ${repo} is unchanged (crates leave a repo only when a valid workspace no longer has them)`,
      problems,
    );
  }
  if (ws.packages.length === 0) {
    throw new IngestInputError(
      `cannot ingest ${root}: its Cargo.toml names no package (a [workspace] without members, or neither [workspace] nor [package]) — nothing written; to remove repo ${repo} from the lake use \`mimir repo remove ${repo}\``,
    );
  }
  return ws;
}

/** Strict mode met a problem: nothing was written. */
export class StrictIngestError extends Error {
  constructor(readonly problems: IngestProblem[]) {
    super(`strict ingest failed: ${problems.length} problem(s), nothing written; first: ${problems[0] ? problems[0].message : '?'}`);
  }
}

/** One crate to ingest. */
interface CrateSpec {
  krate: string;
  rootDir: string;
  /** The crate's folder relative to the repo root ('' at the root; `/`-separated); null for universe crates (file column crate_dir). */
  crateDir?: string | null;
  targets: string[];
  deps: [string, { krate: string; repo?: string }][];
  edition: string;
  /** Active features, expanded through `[features]`. */
  features: string[];
  /** The profile whose cfg is evaluated: `debug_assertions` on in `dev`, off in `release`. */
  profile: 'dev' | 'release';
  buildScript: string | null;
  /** The normal dependencies, whose summaries resolution reads (ingest/deps.ts). */
  resolveInto: DepRef[];
  /** A crate made of one test/example/bench/build target of its package: its kind, its own name in paths, extra cfg names. */
  target?: { kind: TargetKind; ident: string; cfgNames: string[] };
}

const DEFAULT_BATCH = 50_000;
/**
 * Rows of a state table the run buffers before writing a sorted file: half the
 * state tables' file size (`mimir.write.file-rows`, 262 144), so a run's files
 * overlap little. At 50 000 a fresh ingest of bench:ingest's corpus wrote 6
 * overlapping files per edge table, past state maintenance's limit (4), and the
 * run's maintenance then rewrote both edge tables whole (~300k rows each).
 */
const STATE_FLUSH_ROWS = 131_072;
/**
 * Facts (nodes, edges) of the results the extract workers may hold before this thread takes
 * them (pool.ts Room): enough for the workers to go on through a few seconds of writing here.
 */
const RESULT_FACTS = 100_000;
/** Strict mode keeps the graphs of its check pass for the write pass up to this many facts. */
const STRICT_KEEP_FACTS = 500_000;

export function newRunId(now: number): string {
  return `${new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(4).toString('hex')}`;
}

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

const STATUS_KIND: Partial<Record<FileStatus, ProblemKind>> = {
  errors: 'parse-errors', 'skipped-not-utf8': 'not-utf8', 'skipped-too-large': 'too-large',
  'skipped-binary': 'binary', missing: 'missing', loop: 'loop',
};

/** Ingest a workspace (or one package) as repo `opts.repo`. */
export async function ingest(log: EventLog, workspaceDir: string, opts: IngestOptions = {}): Promise<IngestReport> {
  const started = Date.now();
  const root = path.resolve(workspaceDir);
  const repo = opts.repo ?? path.basename(root);
  if (repo === UNIVERSE_REPO) throw new Error(`repo name ${UNIVERSE_REPO} is reserved for the universe (use universeAdd)`);
  const ws = await readValidWorkspace(root, repo);
  const problems: IngestProblem[] = [];
  // files left out while reading the packages (a target file name that is not UTF-8): reported, and --strict fails on them
  for (const pkg of ws.packages) {
    const dir = path.relative(root, pkg.dir).split(path.sep).join('/');
    for (const p of pkg.skipped) problems.push({ krate: `${pkg.name}@${pkg.version}`, ...p, path: dir ? `${dir}/${p.path}` : p.path, message: dir ? `${dir}/${p.message}` : p.message });
  }
  // Dependencies first (their own run): the repo's crates then resolve into them.
  const { deps, substitutions } = await dependencies(log, root, ws, opts);
  const subst = new Map(substitutions.map((x) => [x.wanted, x.used]));
  const specs: CrateSpec[] = [];
  const seen = new Set<string>();
  for (const pkg of ws.packages) {
    const krate = `${pkg.name}@${pkg.version}`;
    if (seen.has(krate)) continue;
    seen.add(krate);
    // `--deps nearest`: a Cargo.lock version not present resolves to its substitute
    const pick = (name: string, req: string | null) => {
      const v = pickVersion(ws.lock.get(name) ?? [], req);
      const s = v === null ? undefined : subst.get(`${name}@${v}`);
      return s === undefined ? v : s.slice(s.lastIndexOf('@') + 1);
    };
    // crate_dir: the package's folder relative to the repo root, for its lib/bin crate and its targets
    const crateDir = path.relative(root, pkg.dir).split(path.sep).join('/');
    for (const spec of [specOf(pkg, krate, repo, ws.packages, pick, opts), ...targetSpecs(pkg, krate, repo, ws.packages, pick, opts)]) {
      spec.crateDir = crateDir;
      specs.push(spec);
    }
  }
  let report: IngestReport;
  try {
    report = await runCrates(log, repo, specs, problems, { ...opts, root: opts.root ?? root, rev: opts.rev, substitutions, removeMissing: true, started, maintain: false });
  } catch (e) {
    // the dependencies' run landed before this one failed for lack of space: say so, it is kept
    const d = deps?.report;
    if (!(e instanceof RunDiskFull) || !d || d.events.add + d.events.change + d.events.remove === 0) throw e;
    const after = (d.afterCommit ?? []).map((w) => `; ${w}`).join('');
    throw new RunDiskFull(e.file, e.op, `${e.message}. The dependencies' run ${d.run} had landed before it, at generation ${d.generation}, and is kept${after}`);
  }
  if (deps) report.deps = deps;
  if (opts.maintain !== false) await maintainAfter(log, report);
  return report;
}

/**
 * The Cargo.lock dependencies of a workspace: with `withDeps`, those found in the
 * search folders are added to the universe (one run), and each one neither found nor
 * in the lake is reported with where Mimir looked and the other versions of the crate
 * that are present (locally, in the lake). With `deps: 'nearest'`, such a version is
 * replaced by the nearest semver-compatible version present (`nearestCompatible`;
 * found locally with `withDeps`, else in the lake): one substitution each, returned
 * for the repo's run to record and the CLI to warn about.
 */
async function dependencies(
  log: EventLog, root: string, ws: Workspace, opts: IngestOptions,
): Promise<{ deps: IngestReport['deps']; substitutions: Substitution[] }> {
  const substitutions: Substitution[] = [];
  const nearest = opts.deps === 'nearest';
  if (!opts.withDeps && !nearest) return { deps: undefined, substitutions };
  const searchDirs = opts.searchDirs ?? await defaultSearchDirs(root);
  const local = new LocalCrates(searchDirs);
  const inLake = await universeVersions(log);
  const members = new Set(ws.packages.map((p) => `${p.name}@${p.version}`));
  const found: string[] = [];
  const notFound: string[] = [];
  const missing: MissingDep[] = [];
  for (const [name, versions] of [...ws.lock].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (const v of versions) {
      const krate = `${name}@${v}`;
      if (members.has(krate)) continue;
      opts.onProgress?.({ phase: 'deps', krate, done: found.length + notFound.length, total: 0 });
      const lakeHas = inLake.get(name)?.includes(v) ?? false;
      const dir = opts.withDeps ? await findCrate(name, v, searchDirs) : null;
      if (dir) {
        found.push(dir);
        continue;
      }
      if (lakeHas) continue;
      const localOthers = opts.withDeps ? (await local.versions(name)).filter((x) => x.version !== v) : [];
      const lakeOthers = (inLake.get(name) ?? []).filter((x) => x !== v);
      let substitute: string | null = null;
      if (nearest) {
        substitute = nearestCompatible(v, [...localOthers.map((x) => x.version), ...lakeOthers]);
        if (substitute !== null) {
          const fromLake = lakeOthers.includes(substitute);
          const at = localOthers.find((x) => x.version === substitute);
          if (!fromLake && at && !found.includes(at.dir)) found.push(at.dir);
          substitutions.push({ wanted: krate, used: `${name}@${substitute}`, from: fromLake ? 'lake' : 'local' });
        }
      }
      if (opts.withDeps) notFound.push(krate);
      missing.push({ krate, local: localOthers.map((x) => x.version).sort(compareVersions), lake: [...lakeOthers].sort(compareVersions), substitute });
    }
  }
  if (!opts.withDeps) return { deps: undefined, substitutions };
  const { features: _f, allFeatures: _a, noDefaultFeatures: _n, release: _r, ...depOpts } = opts;
  const report = await universeAdd(log, found, { ...depOpts, lock: ws.lock, maintain: false });
  return { deps: { report, notFound, searched: searchDirs, missing }, substitutions };
}

/** The live universe crate versions of the lake, by crate name (their Cargo.toml file rows). */
async function universeVersions(log: EventLog): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const row of (await log.state('file', and(eq('repo', UNIVERSE_REPO), eq('path', MANIFEST_PATH)))).values()) {
    const k = row['krate'] as string;
    const at = k.lastIndexOf('@');
    if (at <= 0) continue;
    const list = out.get(k.slice(0, at)) ?? [];
    list.push(k.slice(at + 1));
    out.set(k.slice(0, at), list);
  }
  return out;
}

/**
 * The log's maintenance after a landed run, its outcome in the report. A
 * failure there does not fail the run (it landed): it is reported
 * (`maintenanceError`) and the next run or `mimir compact` does it again.
 */
async function maintainAfter(log: EventLog, report: IngestReport): Promise<void> {
  crashPoint('ingest:before-maintain');
  try {
    report.maintenance = await maintain(log);
  } catch (e) {
    report.maintenanceError = describeFailure(e);
  }
  crashPoint('ingest:after-maintain');
}

/** Add crate directories (or folders of them) to the universe; versions already present are skipped. */
export async function universeAdd(log: EventLog, paths: string[], opts: UniverseOptions = {}): Promise<IngestReport> {
  const started = Date.now();
  const { dirs, problems: found } = await expandCrateDirs(paths);
  const problems: IngestProblem[] = found.map((p) => ({ krate: '', path: p.path, kind: 'unreadable', message: p.message }));
  // versions available to resolve dependencies: the lock given, the crates here, their sibling folders
  const available = new Map<string, Set<string>>();
  const note = (name: string, version: string) => {
    const set = available.get(name) ?? new Set<string>();
    set.add(version);
    available.set(name, set);
  };
  for (const [name, vs] of opts.lock ?? []) for (const v of vs) note(name, v);
  const parents = new Set(dirs.map((d) => path.dirname(d)));
  for (const parent of parents) {
    const { dirs: siblings } = await expandCrateDirs([parent]).catch(() => ({ dirs: [] as string[] }));
    for (const s of siblings) {
      const m = parseCrateDirName(path.basename(s));
      if (m) note(m.name, m.version);
    }
  }
  const pkgs: Package[] = [];
  for (const d of dirs) {
    const { pkg, problems: ps } = await readCrateDir(d);
    for (const p of ps) problems.push({ krate: path.basename(d), ...p, path: path.join(d, p.path) });
    // a manifest cargo would refuse gives no package: reported above, the crate skipped (--strict fails the run)
    if (!pkg) continue;
    for (const p of pkg.skipped) problems.push({ krate: `${pkg.name}@${pkg.version}`, ...p, path: path.join(d, p.path), message: `${d}/${p.message}` });
    note(pkg.name, pkg.version);
    pkgs.push(pkg);
  }
  const lockPick = (name: string, req: string | null) => pickVersion([...(available.get(name) ?? [])], req);
  const specs: CrateSpec[] = [];
  const seen = new Set<string>();
  for (const pkg of pkgs) {
    const krate = `${pkg.name}@${pkg.version}`;
    if (seen.has(krate)) continue;
    seen.add(krate);
    specs.push(specOf(pkg, krate, UNIVERSE_REPO, [], lockPick, opts));
  }
  const report = await runCrates(log, UNIVERSE_REPO, specs, problems, { ...opts, removeMissing: false, started, skipPresent: true });
  if (opts.maintain !== false) await maintainAfter(log, report);
  return report;
}

function specOf(
  pkg: Package, krate: string, repo: string, members: Package[], pick: (name: string, req: string | null) => string | null,
  sel: FeatureSelection & { release?: boolean }, kinds: readonly Dependency['kind'][] = ['normal', 'build', 'dev'], resolveKinds: readonly Dependency['kind'][] = ['normal'],
  first: { local: string; krate: string; repo: string }[] = [],
): CrateSpec {
  const deps = new Map<string, { krate: string; repo?: string }>();
  const resolveInto: DepRef[] = [];
  for (const f of first) {
    deps.set(f.local, { krate: f.krate, repo: f.repo });
    resolveInto.push({ krate: f.krate, repo: f.repo });
  }
  // normal dependencies first: a name that is also a dev-dependency keeps the normal one
  const order = { normal: 0, build: 1, dev: 2 } as const;
  for (const d of [...pkg.deps].filter((x) => kinds.includes(x.kind)).sort((a, b) => order[a.kind] - order[b.kind])) {
    if (deps.has(d.localName)) continue;
    const sibling = d.path ? members.find((m) => m.dir === d.path) : undefined;
    const dep = sibling ? { krate: `${sibling.name}@${sibling.version}`, repo } : null;
    const v = sibling ? null : pick(d.crateName, d.req);
    const chosen: { krate: string; repo?: string } | null = dep ?? (v ? { krate: `${d.crateName}@${v}` } : null);
    if (!chosen) continue;
    deps.set(d.localName, chosen);
    if (resolveKinds.includes(d.kind) && !resolveInto.some((r) => r.krate === chosen.krate)) resolveInto.push({ krate: chosen.krate, repo: chosen.repo ?? UNIVERSE_REPO });
  }
  return {
    krate, rootDir: pkg.dir, targets: pkg.targets.map((t) => t.path),
    deps: [...deps].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    edition: pkg.edition, features: activeFeatures(pkg, sel), profile: sel.release ? 'release' : 'dev', buildScript: pkg.buildScript,
    resolveInto: resolveInto.sort((a, b) => (a.krate < b.krate ? -1 : a.krate > b.krate ? 1 : 0)),
  };
}

/**
 * The package's tests, examples, benches and build script, each a crate of its own
 * (`name@version/<kind>/<target>`, as cargo builds them): a test, example or bench sees
 * the package's lib (same repo) and its normal and dev-dependencies, with cfg `test` on
 * for tests and benches; the build script sees its build-dependencies only.
 */
function targetSpecs(
  pkg: Package, krate: string, repo: string, members: Package[], pick: (name: string, req: string | null) => string | null, sel: FeatureSelection & { release?: boolean },
): CrateSpec[] {
  const out: CrateSpec[] = [];
  const lib = pkg.targets.find((t) => t.kind === 'lib');
  const seen = new Set<string>();
  for (const t of pkg.otherTargets) {
    const kind = t.kind as TargetKind;
    const k = targetKrate(krate, kind, t.name);
    if (seen.has(k)) continue;
    seen.add(k);
    const ident = t.name.replace(/-/g, '_');
    const spec = kind === 'build'
      ? specOf(pkg, k, repo, members, pick, sel, ['build'], ['build'])
      : specOf(pkg, k, repo, members, pick, sel, ['normal', 'dev'], ['normal', 'dev'], lib && lib.name !== ident ? [{ local: lib.name, krate, repo }] : []);
    spec.targets = [t.path];
    if (kind === 'build') {
      spec.features = [];
      spec.buildScript = null;
    }
    spec.target = { kind, ident, cfgNames: kind === 'test' || kind === 'bench' ? ['test'] : [] };
    out.push(spec);
  }
  return out;
}

interface RunOptions extends IngestOptions {
  started: number;
  /** Recorded on the run's report (and so its ingest_runs row). */
  substitutions?: Substitution[];
  removeMissing: boolean;
  skipPresent?: boolean;
}

/** What the lake records of one crate's files: path -> row. */
type FileState = Map<string, Record<string, Value>>;

/** The crate's input fingerprint, recorded as its `Cargo.toml` file row. */
async function manifestFact(spec: CrateSpec, maxFileBytes: number | undefined, depsAvailable: string[]): Promise<Fields> {
  let bytes: Buffer = Buffer.alloc(0);
  try {
    bytes = await readFile(path.join(spec.rootDir, 'Cargo.toml'));
  } catch {
    // a crate without a readable manifest still has a fingerprint
  }
  let build = '';
  if (spec.buildScript) build = sha256(await readFile(path.join(spec.rootDir, spec.buildScript)).catch(() => Buffer.alloc(0)));
  const hash = sha256(JSON.stringify({
    manifest: sha256(bytes), krate: spec.krate, targets: spec.targets, deps: spec.deps, maxFileBytes: maxFileBytes ?? null,
    edition: spec.edition, features: spec.features, profile: spec.profile, build, depsAvailable, ...spec.target ? { target: spec.target } : {},
  }));
  const fact: Fields = { path: MANIFEST_PATH, hash, size: BigInt(bytes.length), parse_status: MANIFEST_STATUS };
  if (spec.target) fact['target_kind'] = spec.target.kind;
  return fact;
}

/** Do all recorded files still hash as recorded (a recorded '' = unreadable then: still unreadable)? */
async function unchanged(spec: CrateSpec, files: FileState, manifest: Fields): Promise<boolean> {
  const m = files.get(MANIFEST_PATH);
  if (!m || m['hash'] !== manifest['hash']) return false;
  for (const t of spec.targets) if (!files.has(t)) return false;
  for (const [p, row] of files) {
    if (p === MANIFEST_PATH) continue;
    let bytes: Buffer | null = null;
    try {
      bytes = await readFile(path.resolve(spec.rootDir, p));
    } catch {
      bytes = null;
    }
    const want = row['hash'] as string;
    if (bytes === null ? want !== '' : want === '' || sha256(bytes) !== want) return false;
  }
  return true;
}

/** The concurrency key of a repo: its last run id. */
export function repoKey(repo: string): string {
  return `repo:${repo}`;
}
/** The concurrency key of a universe crate version: present once it was added. */
export function universeKey(krate: string): string {
  return `universe:${krate}`;
}

/**
 * One run: diff every crate against the lake at the run's generation, write
 * the delta as data files, land it with the run row in one commit. When
 * another writer of the same repo (or crate version) landed first, the run is
 * discarded and diffed again against the newer state (bounded, jittered).
 */
async function runCrates(
  log: EventLog, repo: string, specs: CrateSpec[], problems: IngestProblem[], opts: RunOptions,
): Promise<IngestReport> {
  const runId = newRunId(opts.started);
  const keys = repo === UNIVERSE_REPO ? specs.map((s) => universeKey(s.krate)) : [repoKey(repo)];
  const rev = opts.commit?.sha ?? opts.rev ?? null;
  const note = runNote({ what: repo === UNIVERSE_REPO ? 'universe' : 'ingest', repo, rev, run: runId });
  await ensureSourcesTable(log.lake);
  const { result: report, generation, attempts, afterCommit } = await withRun(log, { repo, run: runId, keys, note }, async (run, attempt) => {
    // the serving state tables change in the run's commit (when the lake has them)
    const state = await StateDelta.open(run.view, { base: run.generation, flushRows: STATE_FLUSH_ROWS });
    // file contents new to the lake, in the same commit (log/blobs.ts)
    const sources = await SourcesWriter.open(log, run.view, (p) => run.track([p]));
    try {
      const { report, landed } = await diffAndWrite(run, repo, specs, [...problems], opts, state, sources);
      report.ms = Date.now() - opts.started;
      report.attempts = attempt;
      const set: Record<string, string> = {};
      if (repo === UNIVERSE_REPO) for (const k of landed) set[universeKey(k)] = runId;
      else set[repoKey(repo)] = runId;
      if (state) {
        const targets = await state.finish();
        run.track(state.paths());
        for (const t of targets) run.addTarget(t);
      }
      if (sources) {
        const t = await sources.finish();
        if (t) run.addTarget(t);
        report.sources = sources.written;
      }
      return { row: runRow(report, opts.started, opts.commit, repo === UNIVERSE_REPO ? null : (opts.root ?? null)), keys: set, result: report };
    } catch (e) {
      await state?.abort();
      throw e;
    }
  });
  report.generation = generation;
  report.attempts = attempts;
  if (afterCommit.length > 0) report.afterCommit = afterCommit;
  return report;
}

/**
 * The body of one attempt of a run: read the state at the run's generation,
 * extract, diff, write data files. Returns the report and the crates whose
 * file rows it wrote.
 */
async function diffAndWrite(
  run: Run, repo: string, specs: CrateSpec[], problems: IngestProblem[], opts: RunOptions, state: StateDelta | undefined,
  sources: SourcesWriter | undefined,
): Promise<{ report: IngestReport; landed: string[] }> {
  const log = run.view;
  const runId = run.id;
  const ts = BigInt(opts.started) * 1000n;
  const landed: string[] = [];
  const report: IngestReport = {
    run: runId, repo, rev: opts.commit?.sha ?? opts.rev ?? null, crates: specs.length, unchangedCrates: 0, presentCrates: 0, removedCrates: 0,
    files: 0, parsed: 0, skippedUnchanged: 0, bytes: 0, events: { add: 0, change: 0, remove: 0 }, moves: 0, problems, ms: 0,
    attempts: 0, generation: 0n, ...opts.substitutions?.length ? { substitutions: opts.substitutions } : {},
  };
  const total = specs.length;
  let done = 0;
  const progress = (phase: IngestProgress['phase'], krate: string) => opts.onProgress?.({ phase, krate, done, total });

  // The lake's file rows of this repo, per krate: the unchanged check, the universe skip, removed crates.
  const fileState = new Map<string, FileState>();
  for (const row of (await log.state('file', eq('repo', repo))).values()) {
    const k = row['krate'] as string;
    const m = fileState.get(k) ?? new Map<string, Record<string, Value>>();
    m.set(row['path'] as string, row);
    fileState.set(k, m);
  }

  // The dependencies resolution can read (in the lake, or given to this run) are part of a
  // crate's fingerprint: one that becomes available re-resolves its dependants.
  const available = await availableDeps(log, specs);
  // Decide per crate: present (universe), unchanged, or to extract.
  type Plan = { spec: CrateSpec; manifest: Fields; job: ExtractJob | null };
  const plans: Plan[] = [];
  for (const spec of specs) {
    progress('check', spec.krate);
    const prev = fileState.get(spec.krate);
    if (opts.skipPresent && prev && prev.size > 0) {
      report.presentCrates++;
      continue;
    }
    const manifest = await manifestFact(spec, opts.maxFileBytes, spec.resolveInto.map((d) => d.krate).filter((k) => available.has(k)));
    if (prev && await unchanged(spec, prev, manifest)) {
      report.unchangedCrates++;
      for (const [p, row] of prev) {
        if (p === MANIFEST_PATH) continue;
        report.files++;
        report.skippedUnchanged++;
        const status = row['parse_status'] as FileStatus;
        const kind = STATUS_KIND[status];
        if (kind) problems.push({ krate: spec.krate, path: p, kind, message: `${spec.krate} ${p}: ${status} (unchanged since an earlier run)` });
      }
      continue;
    }
    plans.push({
      spec, manifest,
      job: {
        repo, krate: spec.krate, rootDir: spec.rootDir, targets: spec.targets, deps: spec.deps, maxFileBytes: opts.maxFileBytes,
        edition: spec.edition, features: spec.features, buildScript: spec.buildScript,
        ...spec.target ? { ident: spec.target.ident, cfgNames: spec.target.cfgNames } : {}, ...spec.profile === 'release' ? { release: true } : {},
      },
    });
  }
  const removed = opts.removeMissing ? [...fileState.keys()].filter((k) => !specs.some((s) => s.krate === k)).sort() : [];
  // Crates to extract that have no file rows may still have node/edge events (a crash before
  // their file rows landed): one scan of the krate column says which. The rest the lake has
  // never seen, so their delta is all `add` and their state is not read.
  const known = new Set(fileState.keys());
  for (const k of await krates(log, repo, plans.map((p) => p.spec.krate).filter((k) => !known.has(k)))) known.add(k);
  // ... and the extracting thread builds their rows
  for (const p of plans) if (!known.has(p.spec.krate)) p.job!.addRows = { run: runId, ts };
  // Longest chains first: a crate waits for the crates of this run it depends on (below), so
  // its rank is its own work (its .rs bytes) plus the largest rank among the crates that wait
  // for it; ready crates start in rank order. A long chain (proc-macro2 -> quote -> syn ->
  // serde_derive) thus starts at once, and one big crate started last does not run alone at
  // the end while the other workers idle. Only the order of work changes, not what is written.
  if (plans.length > 1) {
    const work = new Map<Plan, number>();
    for (const p of plans) work.set(p, await rustBytes(p.spec.rootDir));
    const byKrate = new Map(plans.map((p) => [p.spec.krate, p]));
    const dependants = new Map<Plan, Plan[]>(plans.map((p) => [p, []]));
    for (const p of plans) {
      for (const d of p.spec.resolveInto) {
        const q = byKrate.get(d.krate);
        if (q && q !== p) dependants.get(q)!.push(p);
      }
    }
    const rank = new Map<Plan, number>();
    const rankOf = (p: Plan, seen: Set<Plan>): number => {
      const known = rank.get(p);
      if (known !== undefined) return known;
      if (seen.has(p)) return 0; // a cycle among this run's crates: cut it here
      seen.add(p);
      let most = 0;
      for (const q of dependants.get(p)!) most = Math.max(most, rankOf(q, seen));
      seen.delete(p);
      const r = work.get(p)! + most;
      rank.set(p, r);
      return r;
    };
    for (const p of plans) rankOf(p, new Set());
    plans.sort((a, b) => rank.get(b)! - rank.get(a)!);
    // ... and a free worker takes the ready crate of highest rank, whenever it was submitted
    for (const p of plans) p.job!.priority = rank.get(p)!;
  }

  // The workers hold at most 4 * depth results (below) and claim no crate once those hold
  // RESULT_FACTS facts, whatever this thread is doing (pool.ts Room).
  const workers = Math.min(opts.workers ?? 2, plans.length);
  const depth = Math.max(2, workers * 8);
  const pool = new ExtractPool(workers, opts.extractTimeoutMs, { results: 4 * depth, facts: RESULT_FACTS });
  const writer = new Writer(run, opts.batchRows ?? DEFAULT_BATCH, state);
  try {
    const extractProblems = (plan: Plan, res: ExtractResult | Error): IngestProblem[] => {
      if (res instanceof Error) {
        return [{ krate: plan.spec.krate, path: plan.spec.rootDir, kind: 'extract-failed', message: `${plan.spec.krate}: extraction failed: ${res.message.split('\n')[0]}` }];
      }
      return res.graph.problems.map((p) => ({ krate: plan.spec.krate, ...p, message: `${plan.spec.krate}: ${p.message}` }));
    };
    // A pipeline: the pool works ahead on the next crates while this thread diffs and writes.
    // Results are consumed as they complete (not in crate order), so one slow crate never
    // idles the other workers. Every crate is offered at once, but for those that read
    // summaries from the lake: at most `depth` of them are offered and not done (the summaries
    // they hold). The results the workers hold are bounded by the pool's room.
    // Dependencies first: a crate of this run waits until the crates of this run it depends on
    // are extracted (their summaries, ingest/deps.ts, are what it resolves into): it is offered
    // once they are, and a worker claims it once their summaries reach it, from the worker that
    // made each (no turn of this thread). The others are read from the lake. Among ready
    // crates, the order above (largest first) holds.
    const inRun = new Map(plans.map((p) => [p.spec.krate, p]));
    const waitsFor = new Map(plans.map((p) => [p, p.spec.resolveInto.filter((d) => inRun.has(d.krate) && d.krate !== p.spec.krate).map((d) => d.krate)]));
    for (const p of plans) for (const k of waitsFor.get(p)!) inRun.get(k)!.job!.summary = true;
    const pipeline = async (each: (plan: Plan, res: ExtractResult | Error) => Promise<void>, kept?: Map<string, ExtractResult>) => {
      const summaries = new DepSummaries(log, (c) => pool.forget(c));
      for (const p of plans) summaries.expect(p.spec.resolveInto);
      // this pass's summary id of each crate others wait for, and how many of those are still to be offered
      const madeId = new Map<string, number>();
      const waiting = new Map<string, number>();
      for (const p of plans) {
        for (const k of waitsFor.get(p)!) {
          if (!madeId.has(k)) madeId.set(k, pool.summaryId());
          waiting.set(k, (waiting.get(k) ?? 0) + 1);
        }
      }
      const ready: { plan: Plan; res: ExtractResult | Error; pooled: boolean }[] = [];
      const submitted = new Set<string>();
      let wake: (() => void) | null = null;
      let inFlight = 0;
      let fromLake = 0;
      const todo = [...plans];
      /** Reads summaries from the lake (at most `depth` such crates are offered and not done). */
      const readsLake = (p: Plan) => p.spec.resolveInto.some((d) => !inRun.has(d.krate) || d.krate === p.spec.krate);
      /** The plan's job is offered (or kept): a made summary no crate still to offer awaits may go. */
      const offeredNow = (plan: Plan) => {
        for (const d of plan.spec.resolveInto) {
          if (d.krate === plan.spec.krate || !madeId.has(d.krate)) continue;
          const left = waiting.get(d.krate)! - 1;
          waiting.set(d.krate, left);
          if (left === 0) pool.forget(madeId.get(d.krate)!);
        }
      };
      const start = async (plan: Plan): Promise<{ res: ExtractResult | Error; pooled: boolean }> => {
        const krate = plan.spec.krate;
        const id = madeId.get(krate);
        const keptRes = kept?.get(krate);
        if (keptRes) {
          if (id !== undefined) pool.provide(id, keptRes.summary ?? null);
          offeredNow(plan);
          return { res: keptRes, pooled: false };
        }
        // (decided now: crates offered while this one reads the lake are not among them)
        const offered = new Set(plan.spec.resolveInto.filter((d) => d.krate !== krate && submitted.has(d.krate) && madeId.has(d.krate)).map((d) => d.krate));
        const awaited = (d: DepRef) => offered.has(d.krate);
        const deps = plan.spec.resolveInto;
        // the crates of this run offered before it, by id; the others (a cycle's) from the lake
        summaries.pass(deps.filter(awaited));
        let res: Promise<ExtractResult> | null = null;
        try {
          const read = await summaries.take(deps.filter((d) => !awaited(d)));
          const depCrates = deps.flatMap((d): (DepCrate | Awaits)[] => (awaited(d) ? [{ awaits: madeId.get(d.krate)! }] : read.filter((c) => c.krate === d.krate)));
          res = pool.run({ ...plan.job!, depCrates, ...id !== undefined ? { summaryId: id } : {} });
        } catch (e) {
          res = Promise.reject(e);
        }
        // offered: the summaries it awaits are held for it, and the workers may drop those no crate still to offer awaits
        offeredNow(plan);
        try {
          return { res: await res, pooled: true };
        } catch (e) {
          // its dependants go on with what the lake holds of it, as when it had not been extracted
          if (id !== undefined && !pool.isClosed) pool.provide(id, (await loadDepCrates(log, [{ krate, repo }]).catch(() => []))[0] ?? null);
          return { res: e instanceof Error ? e : new Error(String(e)), pooled: false };
        }
      };
      const submit = () => {
        while (todo.length > 0) {
          // extracting in this thread: `depth` crates at a time, as there is no room to bound them
          if (pool.workers === 0 && inFlight >= depth) return;
          let i = todo.findIndex((p) => waitsFor.get(p)!.every((k) => submitted.has(k)) && (fromLake < depth || !readsLake(p)));
          if (i < 0) {
            if (todo.some((p) => waitsFor.get(p)!.every((k) => submitted.has(k)))) return; // wait for room to read the lake
            // a cycle among this run's crates: go on without the summaries it lacks
            if (fromLake >= depth && readsLake(todo[0]!)) return;
            i = 0;
          }
          const plan = todo.splice(i, 1)[0]!;
          progress('extract', plan.spec.krate);
          submitted.add(plan.spec.krate);
          inFlight++;
          const lake = readsLake(plan);
          if (lake) fromLake++;
          void start(plan).then(({ res, pooled }) => {
            ready.push({ plan, res, pooled });
            if (lake) {
              fromLake--;
              submit();
            }
            const w = wake;
            wake = null;
            w?.();
          });
        }
      };
      submit();
      while (inFlight > 0) {
        if (ready.length === 0) await new Promise<void>((resolve) => { wake = resolve; });
        const { plan, res, pooled } = ready.shift()!;
        inFlight--;
        await each(plan, res);
        if (pooled) pool.consumed(res as ExtractResult);
        done++;
        submit();
      }
    };

    let kept: Map<string, ExtractResult> | undefined;
    if (opts.strict) {
      // Check pass: extract everything, write nothing; keep graphs while they are small.
      kept = new Map();
      let facts = 0;
      await pipeline(async (plan, res) => {
        problems.push(...extractProblems(plan, res));
        if (!(res instanceof Error)) {
          facts += res.graph.nodes.length + res.graph.edges.length + (res.batches ? res.batches.node.numRows + res.batches.edge.numRows : 0);
          if (facts <= STRICT_KEEP_FACTS) kept!.set(plan.spec.krate, res);
        }
      });
      if (problems.length > 0) throw new StrictIngestError(problems);
      done = 0;
    }

    await pipeline(async (plan, res) => {
      if (!opts.strict) problems.push(...extractProblems(plan, res));
      if (res instanceof Error) return;
      progress('write', plan.spec.krate);
      const ctx: RowContext = { repo, krate: plan.spec.krate, run: runId, ts };
      await writeCrate(log, writer, ctx, res, plan.manifest, fileState.get(plan.spec.krate) ?? new Map(), known.has(plan.spec.krate), plan.spec.crateDir ?? null);
      landed.push(plan.spec.krate);
      const before = fileState.get(plan.spec.krate);
      for (const f of res.graph.files) {
        if (sources && (f.parseStatus === 'ok' || f.parseStatus === 'errors') && before?.get(f.path)?.['hash'] !== f.hash) {
          await sources.want(f.hash, path.resolve(plan.spec.rootDir, f.path));
        }
        report.files++;
        if (f.parseStatus === 'ok' || f.parseStatus === 'errors') {
          report.parsed++;
          report.bytes += f.size;
        }
      }
      kept?.delete(plan.spec.krate);
      await writer.maybeFlush();
    }, kept);

    for (const krate of removed) {
      const ctx: RowContext = { repo, krate, run: runId, ts };
      const empty: CrateGraph = { files: [], nodes: [], edges: [], problems: [] };
      await writeCrate(log, writer, ctx, { graph: empty, ms: 0 }, null, fileState.get(krate) ?? new Map(), true);
      report.removedCrates++;
      await writer.maybeFlush();
    }
    await writer.flush();
  } finally {
    await pool.close();
  }
  report.events = writer.counts;
  report.moves = writer.rows.pos;
  return { report, landed };
}

/**
 * Bytes of the `.rs` files under `dir` (hidden folders and `target` skipped, at most
 * `maxEntries` entries looked at, symlinks not followed): a crate's expected extraction work,
 * for scheduling only. Unreadable entries count 0.
 */
async function rustBytes(dir: string, maxEntries = 20_000): Promise<number> {
  let total = 0;
  let seen = 0;
  const stack = [dir];
  while (stack.length > 0 && seen < maxEntries) {
    const d = stack.pop()!;
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    seen += entries.length;
    const sizes: Promise<number>[] = [];
    for (const e of entries) {
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && e.name !== 'target') stack.push(path.join(d, e.name));
      } else if (e.isFile() && e.name.endsWith('.rs')) {
        sizes.push(stat(path.join(d, e.name)).then((s) => s.size, () => 0));
      }
    }
    for (const n of await Promise.all(sizes)) total += n;
  }
  return total;
}

/** The dependency crates of `specs` that resolution can read: given to this run, or with file rows in the lake. */
async function availableDeps(log: EventLog, specs: CrateSpec[]): Promise<Set<string>> {
  const out = new Set(specs.map((s) => s.krate));
  const byRepo = new Map<string, Set<string>>();
  for (const s of specs) {
    for (const d of s.resolveInto) if (!out.has(d.krate)) byRepo.set(d.repo, (byRepo.get(d.repo) ?? new Set()).add(d.krate));
  }
  for (const [repo, wanted] of byRepo) {
    for await (const b of log.scan('file', { filter: and(eq('repo', repo), inList('krate', [...wanted])), columns: ['krate'] })) {
      const c = b.fields.findIndex((f) => f.name === 'krate');
      for (const v of b.columns[c] ?? []) if (typeof v === 'string') out.add(v);
    }
  }
  return out;
}

/** Which of `wanted` have any node or edge event in `repo` (one krate-column scan per kind). */
async function krates(log: EventLog, repo: string, wanted: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (wanted.length === 0) return found;
  const filter = and(eq('repo', repo), inList('krate', wanted));
  for (const kind of ['node', 'edge'] as const) {
    for await (const b of log.scan(kind, { filter, columns: ['krate'] })) {
      const c = b.fields.findIndex((f) => f.name === 'krate');
      if (c < 0) throw new Error(`a scan of the ${kind} events for column krate returned columns ${b.fields.map((f) => f.name).join(', ')}`);
      for (const v of b.columns[c]!) if (typeof v === 'string') found.add(v);
    }
  }
  return found;
}

/**
 * Diff one crate against its current state and buffer the rows (file rows
 * last). `known` false: the lake has no event of this crate, so its state is
 * empty and is not read.
 */
async function writeCrate(
  log: EventLog, writer: Writer, ctx: RowContext, res: ExtractResult, manifest: Fields | null, prevFiles: FileState, known: boolean,
  crateDir: string | null = null,
): Promise<void> {
  const { graph } = res;
  if (res.batches) {
    // built by the extracting thread: the crate is new to the lake, every node and edge is an add
    for (const kind of ['node', 'edge'] as const) {
      writer.pushBatch(kind, res.batches[kind]);
      writer.counts.add += res.batches[kind].numRows;
      await writer.state?.adds(kind, res.batches[kind]);
    }
  } else {
    const filter = and(eq('repo', ctx.repo), eq('krate', ctx.krate));
    const state = async (kind: Kind) => (known ? log.state(kind, filter) : new Map<string, Record<string, Value>>());
    const sink = { event: (kind: Kind, r: EventRow) => writer.push(kind, r), state: stateSink(writer.state, ctx) };
    // the crate's live pos rows, per entity
    const pos = { node: new Map<string, Record<string, Value>>(), edge: new Map<string, Record<string, Value>>() };
    for (const [id, r] of await state('pos')) (r['entity'] === 'edge' ? pos.edge : pos.node).set(id, r);
    const nodes = new Map<string, Fields>();
    for (const n of graph.nodes) nodes.set(n.id, nodeFields(n));
    addCounts(writer.counts, diff('node', ctx, await state('node'), nodes, sink, pos.node));
    nodes.clear();
    const edges = new Map<string, Fields>();
    for (const e of graph.edges) edges.set(e.id, edgeFields(e));
    addCounts(writer.counts, diff('edge', ctx, await state('edge'), edges, sink, pos.edge));
    edges.clear();
  }
  const files = new Map<string, Fields>();
  // crate_dir: where the crate sits in the repo, so answers print repo-relative paths (query/scope.ts)
  for (const f of graph.files) files.set(fileId(ctx.repo, ctx.krate, f.path), { ...fileFields(f), crate_dir: crateDir });
  if (manifest) files.set(fileId(ctx.repo, ctx.krate, MANIFEST_PATH), { ...manifest, crate_dir: crateDir });
  const prev = new Map<string, Record<string, Value>>();
  for (const row of prevFiles.values()) prev.set(row['id'] as string, row);
  addCounts(writer.counts, diff('file', ctx, prev, files, { event: (_k, r) => writer.push('file', r), state: stateSink(writer.state, ctx) }));
  await writer.state?.maybeFlush();
}

/** The diff's per-id state, into the run's state delta (docs/design.md, "Serving state tables"). */
function stateSink(state: StateDelta | undefined, ctx: RowContext): DeltaSink['state'] {
  if (!state) return undefined;
  return (kind, id, fields, position, moved, replaces) => {
    if (fields === null) return state.drop(kind, id);
    const row = { repo: ctx.repo, krate: ctx.krate, id, ...fields };
    if (kind === 'file') state.putFile(row, replaces);
    else if (kind === 'node') state.putNode(row, placed(position!, moved), replaces);
    else state.putEdge(row, placed(position!, moved), replaces);
  };
}

/** The run's `ingest_runs` row (landed in the run's commit). */
function runRow(report: IngestReport, started: number, commit: IngestOptions['commit'], root: string | null): EventRow {
  const { deps: _deps, generation: _generation, maintenance: _maintenance, ...rest } = report;
  const summary = JSON.stringify({ ...rest, problems: report.problems.slice(0, 1000), problemCount: report.problems.length, ...(root !== null ? { root } : {}) });
  const ev = report.events;
  const row: EventRow = {
    run: report.run, repo: report.repo, rev: report.rev, started: BigInt(started) * 1000n, finished: BigInt(Date.now()) * 1000n,
    status: report.problems.length > 0 ? 'problems' : 'ok', events: BigInt(ev.add + ev.change + ev.remove + report.moves), summary,
  };
  if (commit) {
    row['rev_time'] = BigInt(commit.timeMs) * 1000n;
    row['subject'] = commit.subject;
    row['refs'] = commit.refs.length > 0 ? commit.refs.join('\n') : null;
  }
  return row;
}

/** One line: `run R repo X: 3 crates (1 unchanged), 40 files (12 parsed, 28 unchanged), +5 ~1 -2 events, 0 problems, 0.4 s`. */
export function formatIngestReport(r: IngestReport): string {
  const crates = [`${r.crates} crate${r.crates === 1 ? '' : 's'}`];
  const notes: string[] = [];
  if (r.unchangedCrates) notes.push(`${r.unchangedCrates} unchanged`);
  if (r.presentCrates) notes.push(`${r.presentCrates} already present`);
  if (r.removedCrates) notes.push(`${r.removedCrates} removed`);
  if (notes.length) crates.push(`(${notes.join(', ')})`);
  const e = r.events;
  let line = `ingest ${r.repo}${r.rev ? `@${r.rev}` : ''} run ${r.run}: ${crates.join(' ')}, ${r.files} files (${r.parsed} parsed, ${r.skippedUnchanged} unchanged), `
    + `events +${e.add} ~${e.change} -${e.remove}${r.moves ? ` (${r.moves} moved)` : ''}, ${r.problems.length} problem${r.problems.length === 1 ? '' : 's'}, ${(r.ms / 1000).toFixed(1)} s`;
  if (r.deps) {
    const d = r.deps.report;
    line += `; deps: ${d.crates} found (${d.presentCrates} already present), ${r.deps.notFound.length} not found, events +${d.events.add}`;
  }
  const m = r.maintenance ? formatMaintainReport(r.maintenance) : '';
  if (m) line += `; ${m}`;
  if (r.maintenanceError) line += `; maintenance failed (the run landed; \`mimir compact\` can finish it): ${r.maintenanceError}`;
  return line;
}
