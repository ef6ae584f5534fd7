// `mimir refs PATH [--kind EDGE] [--as-of G|TIME]`: every live edge into the
// item, across repos and the universe (src/query/refs.ts).
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import type { EdgeKind } from '../../query/index.ts';
import { EDGE_KINDS } from '../../serve/questions.ts';
import { AS_OF, SERVER, answer, parseAsOf } from './common.ts';
import { refLines, refSummary } from './refs-lines.ts';

export const command: CommandSpec = {
  usage: 'PATH [--kind EDGE] [--as-of GEN|TIME] [options]',
  description: 'Edges whose target is the item (by id) or its path (unresolved or cross-crate edges).',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [{ name: 'kind', kind: 'value', arg: 'EDGE', help: `only edges of this kind (${EDGE_KINDS.join(', ')})` }, AS_OF, SERVER],
  examples: ['mimir refs regex::Regex::new', 'mimir refs serde::Serialize --kind impl_of_trait --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const kind = args.value('kind');
  if (kind !== undefined && !(EDGE_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--kind: expected one of ${EDGE_KINDS.join(', ')}, found "${kind}"`, args.commandPath);
  }
  const asOf = parseAsOf(args);
  return answer(ctx, { q: 'refs', path, asOf, kind: kind as EdgeKind | undefined }, refLines, (r) => refSummary(r, path, 'reference'));
}
