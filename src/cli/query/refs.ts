// `mimir refs PATH [--kind EDGE] [--unresolved] [filters] [--as-of WHEN]`:
// every live edge into the item, across repos and the universe
// (src/query/answer.ts); the filters choose the referencing sites.
// `--unresolved` lists instead the edges whose target was not found and is
// named like the path's last segment.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { PICTURE_OPTIONS, picture, wantsPicture } from './picture.ts';
import type { EdgeKind } from '../../query/index.ts';
import { EDGE_KINDS } from '../../serve/questions.ts';
import { didYouMean } from '../../query/suggest.ts';
import { AS_OF, FILTER_OPTIONS, SERVER, answer, filtersOf, parseAsOf } from './common.ts';
import { UNRESOLVED, refLines, refSummary } from './refs-lines.ts';

export const command: CommandSpec = {
  usage: 'PATH [--kind EDGE] [--unresolved] [--repo R] [--krate K] [--limit N] [--exclude-tests] [--abs] [--as-of WHEN] [options]',
  description: 'Edges whose target is the item (by id) or its path (unresolved or cross-crate edges). --repo, --krate and --exclude-tests choose where the references are.',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [{ name: 'kind', kind: 'value', arg: 'EDGE', help: `only edges of this kind (${EDGE_KINDS.join(', ')})` }, UNRESOLVED, ...FILTER_OPTIONS, AS_OF, ...PICTURE_OPTIONS, SERVER],
  examples: [
    'mimir refs regex::Regex::new --depth 3 --format dot | dot -Tsvg > refs.svg',
    'mimir refs regex::Regex::new', 'mimir refs serde::Serialize --kind impl_of_trait --json', 'mimir refs mycrate::parse --unresolved'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const kind = args.value('kind');
  if (kind !== undefined && !(EDGE_KINDS as readonly string[]).includes(kind)) {
    const close = didYouMean(kind, EDGE_KINDS);
    throw new Error(`no such edge kind "${kind}"${close.length > 0 ? ` — did you mean ${close.join(', ')}?` : ''} (kinds: ${EDGE_KINDS.join(', ')})`);
  }
  const asOf = parseAsOf(args);
  if (wantsPicture(args)) return picture(ctx, args, path, 'refs');
  return answer(ctx, { q: 'refs', path, asOf, kind: kind as EdgeKind | undefined, unresolved: args.flag('unresolved') || undefined, ...filtersOf(args) }, refLines, (r) => refSummary(r, path, 'reference'));
}
