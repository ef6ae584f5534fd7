// `mimir callees PATH [--as-of G|TIME]`: the calls the item makes, one line
// each (`repo krate callee  file:line` — the call site; the callee's path when
// it was not resolved to an item).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import { AS_OF, SERVER, answer, atGen, parseAsOf, place } from './common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--as-of GEN|TIME] [options]',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. mycrate::main' }],
  options: [AS_OF, SERVER],
  examples: ['mimir callees mycrate::main', 'mimir callees mycrate::Server::run --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const asOf = parseAsOf(args);
  return answer(
    ctx,
    { q: 'callees', path, asOf },
    (r) => r.callees.map((h) => `${h.to?.repo ?? '-'} ${h.to?.krate ?? h.dstKrate ?? '-'} ${h.to?.qpath ?? h.dstPath ?? '-'}  ${place(h.file, h.line)}${h.to ? '' : '  (unresolved)'}`),
    (r) => `${plural(r.callees.length, 'call')} from ${r.targets.length === 1 ? r.targets[0]!.qpath ?? path : path}${r.match === 'none' ? ' (no live item has this path)' : ''} ${atGen(r.generation)}`,
  );
}
