// `mimir def PATH [--as-of G|TIME]`: where the item at a qualified path is
// defined (src/query/def.ts), one line per definition
// (`repo krate qpath  file:line  kind`).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { AS_OF, SERVER, answer, atGen, nodeLine, parseAsOf } from './common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--as-of GEN|TIME] [options]',
  description: 'The exact qualified path first; when no item has it, its last segments (a re-export such as regex::Regex::new).',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [AS_OF, SERVER],
  examples: ['mimir def regex::Regex::new', 'mimir def serde::de::Deserializer --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  return answer(
    ctx,
    { q: 'def', path, asOf: parseAsOf(args) },
    (r) => r.hits.map((h) => `${nodeLine(h)}  ${h.kind ?? '-'}`),
    (r) => `${plural(r.hits.length, 'definition')} of ${path}${r.match === 'suffix' ? ' (by its last segments)' : ''} ${atGen(r.generation)}`,
  );
}
