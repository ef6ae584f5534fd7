// `mimir universe add PATH…`: crate directories (`name-version/`, or folders
// of them: a vendor folder, a cargo registry) into the universe (repo
// @universe); versions already present are skipped (src/ingest). Thin wrapper.
import type { CommandSpec, Context } from '../command.ts';
import type { Args, PositionalSpec } from '../args.ts';
import { universeAdd } from '../../ingest/index.ts';
import { FEATURE_OPTIONS, featureOptions, progress, requireFolders, runIngest } from './ingest-common.ts';

const MAX_PATHS = 64;

/**
 * args.ts has no repeatable positional: `max` copies of `spec` (the first
 * required) let the parser take up to `max` paths, while help (which maps over
 * the list) shows the first only.
 */
function variadic(spec: PositionalSpec, max: number): PositionalSpec[] {
  class Positionals extends Array<PositionalSpec> {
    static override get [Symbol.species](): ArrayConstructor {
      return Array;
    }
    override map<U>(fn: (p: PositionalSpec, i: number, a: PositionalSpec[]) => U): U[] {
      return [fn(this[0]!, 0, this)];
    }
  }
  const out = new Positionals();
  out.push(spec);
  for (let i = 1; i < max; i++) out.push({ ...spec, required: false });
  return out;
}

export const command: CommandSpec = {
  usage: 'PATH… [--strict] [options]',
  description: 'Creates the lake (split) when absent.',
  positionals: variadic({ name: 'PATH…', required: true, help: `crate folders (name-version/) or folders of them (at most ${MAX_PATHS})` }, MAX_PATHS),
  options: [{ name: 'strict', kind: 'flag', help: 'any problem with the input fails the run; nothing is written' }, ...FEATURE_OPTIONS],
  examples: ['mimir universe add vendor', 'mimir universe add /usr/share/cargo/registry'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  requireFolders(args.positionals);
  return runIngest(ctx, (log) => universeAdd(log, args.positionals, { strict: args.flag('strict'), onProgress: progress(ctx), ...featureOptions(args) }));
}
