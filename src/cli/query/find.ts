// `mimir find NAME [--kind K] [--repo R] [--krate K] [--exact] [--as-of G|TIME]`:
// live items by name (src/query/find.ts), one line each
// (`repo krate qpath  file:line  kind`).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { AS_OF, SERVER, answer, atGen, nodeLine, parseAsOf } from './common.ts';

export const command: CommandSpec = {
  usage: 'NAME [--kind K] [--repo R] [--krate K] [--exact] [--as-of GEN|TIME] [options]',
  description: [
    'NAME is matched against item names, or against qualified paths when it contains `::`.',
    'With * or ? it is a glob over the whole name; with --exact it must be equal; otherwise',
    'it is a case-insensitive substring.',
  ].join('\n'),
  positionals: [{ name: 'NAME', required: true, help: 'a name, a glob (`Regex*`, `?ew`) or a path (`regex::*::new`)' }],
  options: [
    { name: 'kind', kind: 'value', arg: 'K', help: 'only items of this kind (fn, method, struct, enum, trait, impl, module, …)' },
    { name: 'repo', kind: 'value', arg: 'R', help: 'only items of this repo (@universe = the dependency crates)' },
    { name: 'krate', kind: 'value', arg: 'K', help: 'only items of this crate (name@version)' },
    { name: 'exact', kind: 'flag', help: 'NAME must equal the name (or path)' },
    AS_OF,
    SERVER,
  ],
  examples: ['mimir find Regex --kind struct', "mimir find 'new*' --repo @universe", 'mimir find check --exact --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const name = args.positionals[0]!;
  const q = { q: 'find' as const, name, kind: args.value('kind'), repo: args.value('repo'), krate: args.value('krate'), exact: args.flag('exact') || undefined, asOf: parseAsOf(args) };
  return answer(
    ctx,
    q,
    (r) => r.hits.map((h) => `${nodeLine(h)}  ${h.kind ?? '-'}`),
    (r) => `${plural(r.hits.length, 'item')} matching "${name}" ${atGen(r.generation)}`,
  );
}
