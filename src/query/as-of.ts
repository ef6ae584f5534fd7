// `--as-of` for people: a lake generation (digits), a time (ISO 8601), or a
// git commit of an ingested repo — its id or a prefix of at least 4 hex
// digits, or a tag or branch recorded when it was ingested — resolved to the
// lake generation that landed that commit's run. The one place that maps an
// `AsOf` to a generation, for the CLI and the server alike. Read-only.
//
// A commit ingested more than once (reverted to, re-run) answers as its
// latest run. A prefix or tag naming different commits (in two repos, say) is
// refused with the candidates, never guessed; `repo` narrows it.
import type { EventLog } from '../log/event-log.ts';
import { UNIVERSE_REPO, parseRunNote } from '../log/schema.ts';
import { didYouMeanText } from './suggest.ts';

/** When to answer: a lake generation, a time, or a commit (id, prefix, tag, branch) of an ingested repo. */
export type AsOf = { generation: bigint } | { time: Date } | { rev: string; repo?: string };

/** A rev that names no ingested commit, or more than one. */
export class AsOfError extends Error {}

interface RunRev {
  run: string;
  repo: string;
  rev: string;
  refs: string[];
  started: bigint;
}

/** Every run that recorded a rev, read at `generation` (the ingest_runs table is small and compacted: every column is read). */
async function runRevs(log: EventLog, generation: bigint): Promise<RunRev[]> {
  const out: RunRev[] = [];
  for await (const b of log.scanRuns({ generation })) {
    const col = (name: string) => b.columns[b.fields.findIndex((f) => f.name === name)];
    const [run, repo, rev, started, refs] = [col('run')!, col('repo')!, col('rev')!, col('started')!, col('refs')];
    for (let i = 0; i < b.numRows; i++) {
      const r = rev[i];
      if (typeof r !== 'string' || r === '') continue;
      const rf = refs?.[i];
      out.push({ run: run[i] as string, repo: repo[i] as string, rev: r, refs: typeof rf === 'string' && rf !== '' ? rf.split('\n') : [], started: started[i] as bigint });
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

/**
 * The lake generation a commit (id, ≥4-digit prefix, tag or branch) of an
 * ingested repo landed at, among the runs at `now` (the caller's read
 * generation when it has one: a rev never resolves past it).
 */
export async function generationOfRev(log: EventLog, rev: string, repo?: string, now: bigint = log.readGeneration()): Promise<bigint> {
  // a universe add made for a repo's commit (`--with-deps`) records that commit too; the commit is the repo's
  const all = (await runRevs(log, now)).filter((r) => (repo === undefined ? r.repo !== UNIVERSE_REPO : r.repo === repo));
  const lower = rev.toLowerCase();
  const isPrefix = /^[0-9a-f]{4,}$/.test(lower);
  const hits = all.filter((r) => r.rev === rev || (isPrefix && r.rev.toLowerCase().startsWith(lower)) || r.refs.includes(rev));
  if (hits.length === 0) {
    const names = new Set<string>();
    for (const r of all) for (const x of [...r.refs, r.rev.slice(0, 12)]) names.add(x);
    const hint = didYouMeanText(rev, names);
    const where = repo === undefined ? 'any ingested repo' : `repo ${repo}`;
    throw new AsOfError(`--as-of ${rev}: no commit, tag or branch of ${where} is named ${rev}${hint ? ` — ${hint}` : ''} (revs are recorded by \`mimir ingest --git\` or \`--rev\`; a generation is a number, a time ISO 8601)`);
  }
  const commits = new Map<string, RunRev>();
  for (const h of hits) {
    const key = `${h.repo}\0${h.rev}`;
    const prev = commits.get(key);
    if (!prev || h.started > prev.started) commits.set(key, h);
  }
  if (commits.size > 1) {
    const list = [...commits.values()].map((c) => `${c.repo}@${c.rev.slice(0, 12)}`).sort().join(', ');
    throw new AsOfError(`--as-of ${rev} is ambiguous: it names ${commits.size} commits (${list}); give more digits${repo === undefined ? ' or --repo' : ''}`);
  }
  const pick = [...commits.values()][0]!;
  const g = generationOfRun(log, pick.run);
  if (g === undefined) throw new AsOfError(`--as-of ${rev}: commit ${pick.rev} of ${pick.repo} was ingested by run ${pick.run}, but no lake generation records that run (a lake made before runs were noted); use a generation number`);
  return g;
}

/** The generation an `asOf` names, never past `now` (a future generation is refused). */
export async function generationOf(log: EventLog, asOf: AsOf, now: bigint = log.readGeneration()): Promise<bigint> {
  let g: bigint;
  if ('generation' in asOf) g = asOf.generation;
  else if ('time' in asOf) g = log.lake.catalog.generationAt(asOf.time.getTime());
  else g = await generationOfRev(log, asOf.rev, asOf.repo, now);
  if (g > now) throw new AsOfError(`generation ${g} is in the future (the lake is at ${now})`);
  return g;
}
