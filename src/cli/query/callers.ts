// `mimir callers PATH [--unresolved] [filters] [--as-of WHEN]`: the call
// sites of the item, across repos and the universe, each with the calling
// item (src/query/answer.ts); the filters choose the call sites.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { PICTURE_OPTIONS, picture, wantsPicture } from './picture.ts';
import { AS_OF, FILTER_OPTIONS, SERVER, answer, filtersOf, parseAsOf } from './common.ts';
import { UNRESOLVED, refLines, refSummary } from './refs-lines.ts';

export const command: CommandSpec = {
  usage: 'PATH [--unresolved] [--repo R] [--krate K] [--limit N] [--exclude-tests] [--abs] [--as-of WHEN] [options]',
  description: '--repo, --krate and --exclude-tests choose where the call sites are; --unresolved lists the calls named like the item that were not resolved, each with the resolver\'s reason.',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [{ ...UNRESOLVED, help: 'list the unresolved calls named like the last segment of PATH instead' }, ...FILTER_OPTIONS, AS_OF, ...PICTURE_OPTIONS, SERVER],
  examples: [
    'mimir callers regex::Regex::new --depth 3 --format dot | dot -Tsvg > callers.svg',
    'mimir callers regex::Regex::new', 'mimir callers regex::Regex::new --repo myrepo --exclude-tests --limit 20', 'mimir callers regex::Regex::new --as-of 2024-05-01T00:00:00Z --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  if (wantsPicture(args)) return picture(ctx, args, path, 'callers');
  const asOf = parseAsOf(args);
  return answer(ctx, { q: 'callers', path, asOf, unresolved: args.flag('unresolved') || undefined, ...filtersOf(args) }, refLines, (r) => refSummary(r, path, 'call site'));
}
