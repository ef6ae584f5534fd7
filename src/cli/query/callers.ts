// `mimir callers PATH [--as-of G|TIME]`: the call sites of the item, across
// repos and the universe, each with the calling item (src/query/refs.ts).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { AS_OF, SERVER, answer, parseAsOf } from './common.ts';
import { refLines, refSummary } from './refs-lines.ts';

export const command: CommandSpec = {
  usage: 'PATH [--as-of GEN|TIME] [options]',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [AS_OF, SERVER],
  examples: ['mimir callers regex::Regex::new', 'mimir callers regex::Regex::new --as-of 2024-05-01T00:00:00Z --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const asOf = parseAsOf(args);
  return answer(ctx, { q: 'callers', path, asOf }, refLines, (r) => refSummary(r, path, 'call site'));
}
