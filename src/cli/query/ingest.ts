// `mimir ingest PATH [--repo NAME] [--rev REV] [--with-deps] [--strict] [--features F,…] [--all-features] [--no-default-features]`:
// a Rust workspace (or one package) into the lake as repo NAME, writing only
// the deltas against the lake's current state (src/ingest). Thin wrapper.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { ingest } from '../../ingest/index.ts';
import { FEATURE_OPTIONS, featureOptions, progress, requireFolders, runIngest } from './ingest-common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--repo NAME] [--rev REV] [--with-deps] [--strict] [options]',
  description: 'Creates the lake (split) when absent. Problems with the input are listed and skipped; --strict fails the run instead (exit 1, nothing written).',
  positionals: [{ name: 'PATH', required: true, help: 'a workspace or package folder (with Cargo.toml)' }],
  options: [
    { name: 'repo', kind: 'value', arg: 'NAME', help: 'repo name (default: the folder name)' },
    { name: 'rev', kind: 'value', arg: 'REV', help: 'revision recorded with the run (a commit, a tag)' },
    { name: 'with-deps', kind: 'flag', help: 'also add the Cargo.lock dependencies found locally (vendor/, cargo registry) to the universe' },
    { name: 'strict', kind: 'flag', help: 'any problem with the input fails the run; nothing is written' },
    ...FEATURE_OPTIONS,
  ],
  examples: ['mimir ingest ~/src/myproject', 'mimir ingest . --repo acme --rev $(git rev-parse HEAD) --with-deps'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const dir = args.positionals[0]!;
  requireFolders([dir]);
  return runIngest(ctx, (log) =>
    ingest(log, dir, {
      repo: args.value('repo'), rev: args.value('rev'), withDeps: args.flag('with-deps'), strict: args.flag('strict'), onProgress: progress(ctx),
      ...featureOptions(args),
    }),
  );
}
