// `mimir ingest PATH [--repo NAME] [--rev REV] [--with-deps] [--strict]`:
// a Rust workspace (or one package) into the lake as repo NAME, writing only
// the deltas against the lake's current state (src/ingest). Thin wrapper.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import * as path from 'node:path';
import { IngestInputError, ingest, readValidWorkspace } from '../../ingest/index.ts';
import { problemLine, progress, requireFolders, runIngest } from './ingest-common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--repo NAME] [--rev REV] [--with-deps] [--strict] [options]',
  description: 'Creates the lake (split) when absent. Problems with the input are listed and skipped; --strict fails the run instead (exit 1, nothing written). A PATH that is not a valid workspace or package (a file, no Cargo.toml, a manifest that does not parse) fails (exit 1, nothing written): crates leave a repo only when a valid workspace no longer has them; a whole repo only by `mimir repo remove`.',
  positionals: [{ name: 'PATH', required: true, help: 'a workspace or package folder (with Cargo.toml)' }],
  options: [
    { name: 'repo', kind: 'value', arg: 'NAME', help: 'repo name (default: the folder name)' },
    { name: 'rev', kind: 'value', arg: 'REV', help: 'revision recorded with the run (a commit, a tag)' },
    { name: 'with-deps', kind: 'flag', help: 'also add the Cargo.lock dependencies found locally (vendor/, cargo registry) to the universe' },
    { name: 'strict', kind: 'flag', help: 'any problem with the input fails the run; nothing is written' },
    { name: 'no-maintain', kind: 'flag', help: 'skip the compaction of tables whose small files passed their threshold (mimir.maintain.small-files, default 16)' },
  ],
  examples: ['mimir ingest ~/src/myproject', 'mimir ingest . --repo acme --rev $(git rev-parse HEAD) --with-deps'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const dir = args.positionals[0]!;
  requireFolders([dir]);
  // before the lake is opened (or created): a mistaken path changes nothing at all
  try {
    await readValidWorkspace(path.resolve(dir), args.value('repo') ?? path.basename(path.resolve(dir)));
  } catch (e) {
    if (e instanceof IngestInputError) for (const p of e.problems) ctx.out.err(problemLine(p));
    throw e;
  }
  return runIngest(ctx, (log) =>
    ingest(log, dir, { repo: args.value('repo'), rev: args.value('rev'), withDeps: args.flag('with-deps'), strict: args.flag('strict'), maintain: !args.flag('no-maintain'), onProgress: progress(ctx) }),
  );
}
