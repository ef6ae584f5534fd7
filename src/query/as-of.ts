// `--as-of` for people: a lake generation (digits), a time (ISO 8601: when
// the lake was written), or a git commit of an ingested repo — its id or a
// prefix of at least 4 hex digits, a tag or branch recorded when it was
// ingested, `HEAD` (the repo's latest ingested commit), or `REV@{DATE}` /
// `@{DATE}` (the repo's history as of DATE: its ingested commit with the
// latest committer time at or before DATE) — resolved to the lake generation
// that landed that commit's run. The one place that maps an `AsOf` to a
// generation, for the CLI and the server alike. Read-only.
//
// A commit ingested more than once (reverted to, re-run) answers as its
// latest run; a branch or tag recorded by several runs of one repo (it moved
// between ingests) answers as the latest run that recorded it, where the name
// pointed when last seen. A prefix or name naming commits of two repos is
// refused with the candidates, never guessed; `repo` narrows it. Errors name
// the option or parameter the value came in (`what`: `--as-of`,
// `--from-rev`, `asOf`, …).
//
// `@{DATE}` uses the commit times `ingest --git` records on each run
// (ingest_runs.rev_time), not git's reflog as `git rev-parse main@{DATE}`
// does: the lake knows which commits it indexed, not where a branch pointed
// on some machine. A `REV` before `@{` only picks the repo (the one whose
// runs recorded that branch or tag); commits are not filtered by ancestry.
import type { EventLog } from '../log/event-log.ts';
import { UNIVERSE_REPO, parseRunNote } from '../log/schema.ts';
import { didYouMeanText } from './suggest.ts';

/** When to answer: a lake generation, a time, or a commit (id, prefix, tag, branch, HEAD, REV@{DATE}) of an ingested repo. */
export type AsOf = { generation: bigint } | { time: Date } | { rev: string; repo?: string };

/** A rev that names no ingested commit, or more than one. */
export class AsOfError extends Error {}

interface RunRev {
  run: string;
  repo: string;
  rev: string;
  refs: string[];
  started: bigint;
  /** The commit's committer time in µs (runs of `ingest --git`), else null. */
  revTime: bigint | null;
}

/** Every run that recorded a rev, read at `generation` (the ingest_runs table is small and compacted: every column is read). */
async function runRevs(log: EventLog, generation: bigint): Promise<RunRev[]> {
  const out: RunRev[] = [];
  for await (const b of log.scanRuns({ generation })) {
    const col = (name: string) => b.columns[b.fields.findIndex((f) => f.name === name)];
    const [run, repo, rev, started, refs, revTime] = [col('run')!, col('repo')!, col('rev')!, col('started')!, col('refs'), col('rev_time')];
    for (let i = 0; i < b.numRows; i++) {
      const r = rev[i];
      if (typeof r !== 'string' || r === '') continue;
      const rf = refs?.[i];
      const t = revTime?.[i];
      out.push({ run: run[i] as string, repo: repo[i] as string, rev: r, refs: typeof rf === 'string' && rf !== '' ? rf.split('\n') : [], started: started[i] as bigint, revTime: typeof t === 'bigint' ? t : null });
    }
  }
  return out;
}

/** The generation whose run (by its note) is `run`, or undefined. */
function generationOfRun(log: EventLog, run: string): bigint | undefined {
  for (const g of log.lake.catalog.generations({ limit: Number.MAX_SAFE_INTEGER })) {
    if (parseRunNote(g.note)?.run === run) return g.generation;
  }
  return undefined;
}

/** `REV@{DATE}` or `@{DATE}` split, or null for any other rev. Throws AsOfError on a DATE that is no ISO 8601 time. */
export function splitDated(rev: string, what = '--as-of'): { base: string; date: Date } | null {
  const m = /^(.*)@\{([^}]*)\}$/.exec(rev);
  if (!m) return null;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(m[2]!) ? Date.parse(m[2]!) : Number.NaN;
  if (Number.isNaN(ms)) throw new AsOfError(`${what} ${rev}: expected an ISO 8601 date or time inside @{…} (e.g. main@{2024-05-01T12:00:00Z}), found "${m[2]}"`);
  return { base: m[1]!, date: new Date(ms) };
}

const short = (r: RunRev): string => `${r.repo}@${r.rev.slice(0, 12)}`;
const later = (a: RunRev, b: RunRev): boolean => a.started > b.started;

/** The one repo of `runs`, or an AsOfError listing them (or saying there is none). */
function oneRepo(runs: RunRev[], rev: string, what: string, repo: string | undefined): string {
  const repos = [...new Set(runs.map((r) => r.repo))].sort();
  if (repos.length === 0) {
    throw new AsOfError(`${what} ${rev}: ${repo === undefined ? 'no repo of the lake' : `repo ${repo}`} has an ingested commit (commits are recorded by \`mimir ingest --git\` or \`--rev\`); nothing read`);
  }
  if (repos.length > 1) throw new AsOfError(`${what} ${rev} is ambiguous: ${repos.length} repos have ingested commits (${repos.join(', ')}); give --repo`);
  return repos[0]!;
}

/** `HEAD`, `REV@{DATE}`, `@{DATE}`: the run they name among `all` (one repo's, or refused). */
function namedRun(all: RunRev[], rev: string, what: string, repo: string | undefined): RunRev | null {
  const dated = splitDated(rev, what);
  if (rev !== 'HEAD' && dated === null) return null;
  const base = dated?.base ?? 'HEAD';
  // the repo: any with a commit (HEAD, @{DATE}), else the ones whose runs recorded the branch or tag
  let scope = all;
  if (base !== '' && base !== 'HEAD') {
    scope = all.filter((r) => r.refs.includes(base));
    if (scope.length === 0) {
      const hint = didYouMeanText(base, new Set(all.flatMap((r) => r.refs)));
      throw new AsOfError(`${what} ${rev}: no branch or tag of ${repo === undefined ? 'any ingested repo' : `repo ${repo}`} is named ${base}${hint ? ` — ${hint}` : ''}; nothing read`);
    }
  }
  const name = oneRepo(scope, rev, what, repo);
  const mine = all.filter((r) => r.repo === name);
  if (dated === null) return mine.reduce((a, b) => (later(b, a) ? b : a));
  const timed = mine.filter((r) => r.revTime !== null);
  const limit = BigInt(dated.date.getTime()) * 1000n;
  const before = timed.filter((r) => r.revTime! <= limit);
  if (before.length === 0) {
    const first = timed.reduce<RunRev | null>((a, b) => (a === null || b.revTime! < a.revTime! ? b : a), null);
    const earliest = first === null ? `none of its ${mine.length} ingested commits has a recorded commit time (ingest them with \`mimir ingest --git\`)` : `its earliest ingested commit is ${short(first)} of ${new Date(Number(first.revTime! / 1000n)).toISOString()}`;
    throw new AsOfError(`${what} ${rev}: repo ${name} has no ingested commit made at or before ${dated.date.toISOString()} (${earliest}); nothing read`);
  }
  // the latest commit time wins; a commit ingested twice answers as its latest run
  return before.reduce((a, b) => (b.revTime! > a.revTime! || (b.revTime === a.revTime && later(b, a)) ? b : a));
}

/**
 * The lake generation a commit (id, ≥4-digit prefix, tag, branch, HEAD,
 * REV@{DATE}) of an ingested repo landed at, among the runs at `now` (the
 * caller's read generation when it has one: a rev never resolves past it).
 * `what` names the option or parameter in errors.
 */
export async function generationOfRev(log: EventLog, rev: string, repo?: string, now: bigint = log.readGeneration(), what = '--as-of'): Promise<bigint> {
  // a universe add made for a repo's commit (`--with-deps`) records that commit too; the commit is the repo's
  const all = (await runRevs(log, now)).filter((r) => (repo === undefined ? r.repo !== UNIVERSE_REPO : r.repo === repo));
  const pick = namedRun(all, rev, what, repo) ?? byName(all, rev, what, repo);
  const g = generationOfRun(log, pick.run);
  if (g === undefined) throw new AsOfError(`${what} ${rev}: commit ${pick.rev} of ${pick.repo} was ingested by run ${pick.run}, but no lake generation records that run (a lake made before runs were noted); use a generation number`);
  return g;
}

/** A commit id, prefix, tag or branch: the run that ingested it (the latest, per repo), or refused. */
function byName(all: RunRev[], rev: string, what: string, repo: string | undefined): RunRev {
  const lower = rev.toLowerCase();
  const isPrefix = /^[0-9a-f]{4,}$/.test(lower);
  const ids = all.filter((r) => r.rev === rev || (isPrefix && r.rev.toLowerCase().startsWith(lower)));
  const named = all.filter((r) => r.refs.includes(rev));
  if (ids.length === 0 && named.length === 0) {
    const names = new Set<string>();
    for (const r of all) for (const x of [...r.refs, r.rev.slice(0, 12)]) names.add(x);
    const hint = didYouMeanText(rev, names);
    const where = repo === undefined ? 'any ingested repo' : `repo ${repo}`;
    throw new AsOfError(`${what} ${rev}: no commit, tag or branch of ${where} is named ${rev}${hint ? ` — ${hint}` : ''} (revs are recorded by \`mimir ingest --git\` or \`--rev\`; a generation is a number, a time ISO 8601, the repo's history as of a date @{DATE})`);
  }
  // per repo and commit id: its latest run; a branch or tag (it may have moved): the latest run that recorded it, per repo
  const commits = new Map<string, RunRev>();
  const keep = (key: string, h: RunRev): void => {
    const prev = commits.get(key);
    if (!prev || later(h, prev)) commits.set(key, h);
  };
  for (const h of ids) keep(`${h.repo}\0${h.rev}`, h);
  for (const h of named) keep(`${h.repo}\0@${rev}`, h);
  // an id and a name of the same commit are one
  const distinct = new Map<string, RunRev>();
  for (const h of commits.values()) {
    const prev = distinct.get(`${h.repo}\0${h.rev}`);
    if (!prev || later(h, prev)) distinct.set(`${h.repo}\0${h.rev}`, h);
  }
  if (distinct.size > 1) {
    const list = [...distinct.values()].map(short).sort().join(', ');
    throw new AsOfError(`${what} ${rev} is ambiguous: it names ${distinct.size} commits (${list}); give more digits${repo === undefined ? ' or --repo' : ''}`);
  }
  return [...distinct.values()][0]!;
}

/** The generation an `asOf` names, never past `now` (a future generation is refused); `what` names the option or parameter in errors. */
export async function generationOf(log: EventLog, asOf: AsOf, now: bigint = log.readGeneration(), what = '--as-of'): Promise<bigint> {
  let g: bigint;
  if ('generation' in asOf) g = asOf.generation;
  else if ('time' in asOf) g = log.lake.catalog.generationAt(asOf.time.getTime());
  else g = await generationOfRev(log, asOf.rev, asOf.repo, now, what);
  if (g > now) throw new AsOfError(`${what} ${g}: generation ${g} is in the future (the lake is at ${now})`);
  return g;
}
