// `ingest PATH --git REV | A..B`: index commits of a git repository, oldest
// first, one run each, reading every tree from git itself (git.ts) — the
// user's work tree is never read or touched. Each run records the commit's
// id (as `rev`), time, subject and the tags/branches pointing at it.
//
// Invariants: runs land in the commits' order (each is one generation, so
// `--as-of <sha>` answers as that commit); a crate whose files did not change
// between two commits is not parsed again (ingest's per-crate hash check);
// the repo name defaults to the git top folder's name, never the scratch
// mirror's. Resumable: a range whose leading commits the repo already holds
// (its latest run's rev is in the range) starts after that commit, so a rerun
// after a crash converges instead of indexing the same commits twice.
import * as path from 'node:path';
import type { EventLog } from '../log/event-log.ts';
import { INGEST_RUNS } from '../log/schema.ts';
import { eq } from '../lake/expr/expr.ts';
import { TreeMirror, commitInfo, commitsOf, gitTop, refsAt } from './git.ts';
import { ingest, type IngestOptions, type IngestReport } from './ingest.ts';

export interface GitIngestOptions extends Omit<IngestOptions, 'rev' | 'commit'> {
  /** Called before each commit's run: its index in the range, the total, and the commit. */
  onCommit?: (i: number, total: number, sha: string, subject: string) => void;
}

export interface GitIngestReport {
  repo: string;
  /** The commits the spec named, oldest first. */
  commits: string[];
  /** Leading commits skipped because the repo already held them. */
  skipped: number;
  runs: IngestReport[];
  ms: number;
}

/** The rev of the repo's latest run (by start time), or null. */
async function latestRev(log: EventLog, repo: string): Promise<string | null> {
  const t = await log.table(INGEST_RUNS);
  if (!t) return null;
  let best: { started: bigint; rev: string | null } | null = null;
  for await (const b of t.scan({ filter: eq('repo', repo), columns: ['started', 'rev'] }).batches()) {
    const s = b.columns[b.fields.findIndex((f) => f.name === 'started')]!;
    const r = b.columns[b.fields.findIndex((f) => f.name === 'rev')]!;
    for (let i = 0; i < b.numRows; i++) {
      const started = s[i] as bigint;
      if (!best || started > best.started) best = { started, rev: (r[i] as string | null) ?? null };
    }
  }
  return best?.rev ?? null;
}

/** Ingest the commits `spec` names (see the module). */
export async function ingestGit(log: EventLog, dir: string, spec: string, opts: GitIngestOptions = {}): Promise<GitIngestReport> {
  const started = Date.now();
  const { top, prefix } = await gitTop(dir);
  const repo = opts.repo ?? path.basename(top);
  const commits = await commitsOf(top, spec);
  let from = 0;
  if (commits.length > 1) {
    const have = await latestRev(log, repo);
    const at = have === null ? -1 : commits.indexOf(have);
    if (at >= 0) from = at + 1;
  }
  const report: GitIngestReport = { repo, commits, skipped: from, runs: [], ms: 0 };
  if (from === commits.length) {
    report.ms = Date.now() - started;
    return report;
  }
  const mirror = await TreeMirror.open(top);
  try {
    for (let i = from; i < commits.length; i++) {
      const sha = commits[i]!;
      const info = await commitInfo(top, sha);
      opts.onCommit?.(i, commits.length, sha, info.subject);
      await mirror.checkout(sha);
      const { onCommit: _onCommit, ...rest } = opts;
      const r = await ingest(log, path.join(mirror.dir, prefix), { ...rest, repo, root: rest.root ?? path.join(top, prefix), commit: { ...info, refs: await refsAt(top, sha) } });
      report.runs.push(r);
    }
  } finally {
    await mirror.close();
  }
  report.ms = Date.now() - started;
  return report;
}
