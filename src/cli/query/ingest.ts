// `mimir ingest PATH [--repo NAME] [--rev REV | --git REV|A..B] [--with-deps] [--strict] [--features F,…] [--all-features] [--no-default-features]`:
// a Rust workspace (or one package) into the lake as repo NAME, writing only
// the deltas against the lake's current state (src/ingest); with --git, the
// commits of a git repository read from git itself, one run each. Thin wrapper.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import * as path from 'node:path';
import { UsageError } from '../args.ts';
import { IngestInputError, ingest, ingestGit, readValidWorkspace, type GitIngestReport } from '../../ingest/index.ts';
import { FEATURE_OPTIONS, featureOptions, printReport, problemLine, progress, requireFolders, runIngest, withIngestLog } from './ingest-common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--repo NAME] [--rev REV | --git REV|A..B] [--with-deps] [--strict] [options]',
  description: 'Creates the lake (split) when absent. Problems with the input are listed and skipped; --strict fails the run instead (exit 1, nothing written). A PATH that is not a valid workspace or package (a file, no Cargo.toml, a manifest that does not parse) fails (exit 1, nothing written): crates leave a repo only when a valid workspace no longer has them; a whole repo only by `mimir repo remove`.',
  positionals: [{ name: 'PATH', required: true, help: 'a workspace or package folder (with Cargo.toml)' }],
  options: [
    { name: 'repo', kind: 'value', arg: 'NAME', help: 'repo name (default: the folder name)' },
    { name: 'rev', kind: 'value', arg: 'REV', help: 'revision recorded with the run (a commit, a tag)' },
    { name: 'git', kind: 'value', arg: 'REV|A..B', help: 'index a commit, or each commit of A..B (first-parent, oldest first), read from the git repository holding PATH; the work tree is not read' },
    { name: 'with-deps', kind: 'flag', help: 'also add the Cargo.lock dependencies found locally (vendor/, cargo registry) to the universe' },
    { name: 'deps', kind: 'value', arg: 'exact|nearest', help: 'a Cargo.lock version not in the lake (nor found with --with-deps): exact (default) leaves it unresolved; nearest uses the nearest present semver-compatible version, with a warning each' },
    { name: 'strict', kind: 'flag', help: 'any problem with the input fails the run; nothing is written' },
    { name: 'no-maintain', kind: 'flag', help: 'skip the compaction of tables whose small files passed their threshold (mimir.maintain.small-files, default 16)' },
    ...FEATURE_OPTIONS,
  ],
  examples: ['mimir ingest ~/src/myproject', 'mimir ingest . --repo acme --rev $(git rev-parse HEAD) --with-deps', 'mimir ingest . --with-deps --deps nearest', 'mimir ingest ~/src/ripgrep --git 14.0.0..14.1.0'],
  run,
};

function depsMode(args: Args): 'exact' | 'nearest' | undefined {
  const v = args.value('deps');
  if (v === undefined || v === 'exact' || v === 'nearest') return v;
  throw new UsageError(`--deps: expected exact or nearest, found ${JSON.stringify(v)}`, args.commandPath);
}

async function run(args: Args, ctx: Context): Promise<number> {
  const dir = args.positionals[0]!;
  const deps = depsMode(args);
  requireFolders([dir]);
  const spec = args.value('git');
  const maintain = !args.flag('no-maintain');
  if (spec !== undefined) {
    if (args.value('rev') !== undefined) throw new UsageError('--git records each commit as the run\'s rev; --rev cannot be given with it', args.commandPath);
    const opts = { repo: args.value('repo'), withDeps: args.flag('with-deps'), deps, strict: args.flag('strict'), maintain, onProgress: progress(ctx), ...featureOptions(args) };
    const onCommit = (i: number, total: number, sha: string, subject: string): void => ctx.out.progress(`commit ${i + 1}/${total} ${sha.slice(0, 12)} ${subject}`);
    return withIngestLog(ctx, (log) => ingestGit(log, dir, spec, { ...opts, onCommit }), printGit);
  }
  // before the lake is opened (or created): a mistaken path changes nothing at all
  try {
    await readValidWorkspace(path.resolve(dir), args.value('repo') ?? path.basename(path.resolve(dir)));
  } catch (e) {
    if (e instanceof IngestInputError) for (const p of e.problems) ctx.out.err(problemLine(p));
    throw e;
  }
  return runIngest(ctx, (log) =>
    ingest(log, dir, {
      repo: args.value('repo'), rev: args.value('rev'), withDeps: args.flag('with-deps'), deps, strict: args.flag('strict'), maintain, onProgress: progress(ctx),
      ...featureOptions(args),
    }),
  );
}

async function printGit(ctx: Context, r: GitIngestReport): Promise<void> {
  if (r.skipped > 0) await ctx.out.line(`${r.repo}: ${r.skipped} of ${r.commits.length} commits already indexed (the repo's latest run is at ${r.commits[r.skipped - 1]!.slice(0, 12)}); starting after it`);
  for (const run of r.runs) await printReport(ctx, run);
  const ev = r.runs.reduce((a, x) => ({ add: a.add + x.events.add, change: a.change + x.events.change, remove: a.remove + x.events.remove }), { add: 0, change: 0, remove: 0 });
  await ctx.out.line(`ingest ${r.repo} --git: ${r.runs.length} commit${r.runs.length === 1 ? '' : 's'} indexed (${r.skipped} skipped), events +${ev.add} ~${ev.change} -${ev.remove}, ${(r.ms / 1000).toFixed(1)} s`);
}
