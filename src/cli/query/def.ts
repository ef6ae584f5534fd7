// `mimir def PATH [filters] [--as-of WHEN]`: where the item at a qualified
// path is defined (src/query/answer.ts), one line per definition
// (`repo krate qpath  path:line:col  kind`). A path no item has fails
// (exit 1) with the closest paths the lake has.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { AS_OF, FILTER_OPTIONS, SERVER, answer, atGen, filtersOf, nodeLine, parseAsOf, shown } from './common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--repo R] [--krate K] [--limit N] [--exclude-tests] [--abs] [--as-of WHEN] [options]',
  description: 'The exact qualified path first; when no item has it, its last segments (a re-export such as regex::Regex::new).',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [...FILTER_OPTIONS, AS_OF, SERVER],
  examples: ['mimir def regex::Regex::new', 'mimir def serde::de::Deserializer --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  return answer(
    ctx,
    { q: 'def', path, ...filtersOf(args), asOf: parseAsOf(args) },
    (r, paint) => r.hits.map((h) => ({ text: `${nodeLine(h, paint)}  ${paint.kind(h.kind ?? '-')}`, at: h })),
    (r) =>
      `${plural(r.total, 'definition')} of ${path}${r.match === 'suffix' ? ' (by its last segments)' : ''}${shown(r.hits.length, r.total)} ${atGen(r.generation)}` +
      (r.match === 'none' ? ` (no live item has it; \`mimir history ${path}\` shows when it went)` : ''),
  );
}
