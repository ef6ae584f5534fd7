// `mimir find NAME [--kind K] [--exact] [filters] [--as-of WHEN]`: live
// items by name (src/query/answer.ts), one line each
// (`repo krate qpath  path:line:col  kind`). A plain name is a fuzzy search
// ranked best first (`RSB` finds RegexSetBuilder); a name nothing matches
// fails (exit 1) with the closest names the lake has.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { AS_OF, FILTER_OPTIONS, SERVER, answer, atGen, filtersOf, nodeLine, parseAsOf, shown } from './common.ts';

export const command: CommandSpec = {
  usage: 'NAME [--kind K] [--exact] [--repo R] [--krate K] [--limit N] [--exclude-tests] [--abs] [--as-of WHEN] [options]',
  description: [
    'NAME is matched against item names, or against qualified paths when it contains `::`.',
    'A plain name matches fuzzily, as an editor\'s symbol search does (its letters in order;',
    'exact names, prefixes, camel humps and word starts rank first). With * or ? it is a glob',
    'over the whole name; with --exact it must be equal; a path is a substring.',
  ].join('\n'),
  positionals: [{ name: 'NAME', required: true, help: 'a name (`RegexSetBuilder`, `RSB`), a glob (`Regex*`, `?ew`) or a path (`regex::*::new`)' }],
  options: [
    { name: 'kind', kind: 'value', arg: 'K', help: 'only items of this kind (fn, method, struct, enum, trait, impl, module, …)' },
    { name: 'exact', kind: 'flag', help: 'NAME must equal the name (or path)' },
    ...FILTER_OPTIONS,
    AS_OF,
    SERVER,
  ],
  examples: ['mimir find Regex --kind struct', 'mimir find RSB --limit 5', "mimir find 'new*' --repo @universe", 'mimir find check --exact --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const name = args.positionals[0]!;
  const q = { q: 'find' as const, name, kind: args.value('kind'), exact: args.flag('exact') || undefined, ...filtersOf(args), asOf: parseAsOf(args) };
  return answer(
    ctx,
    q,
    (r, paint) => r.hits.map((h) => ({ text: `${nodeLine(h, paint)}  ${paint.kind(h.kind ?? '-')}`, at: h })),
    (r) => `${plural(r.total, 'item')} matching "${name}"${shown(r.hits.length, r.total)} ${atGen(r.generation)}`,
  );
}
