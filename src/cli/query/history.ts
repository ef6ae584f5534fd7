// `mimir history PATH [--as-of G|TIME]`: every event of the item and of the
// edges out of it, oldest first (src/query/history.ts), one line each
// (`generation [@commit] time op kind repo krate what  file:line`).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { isoTime, plural } from '../output.ts';
import type { HistoryEvent } from '../../query/index.ts';
import { AS_OF, SERVER, answer, atGen, parseAsOf, place } from './common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--as-of GEN|TIME] [options]',
  description: 'Every node id that ever had the path (removed items too), its events and those of its outgoing edges.',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. mycrate::parse' }],
  options: [AS_OF, SERVER],
  examples: ['mimir history mycrate::parse', 'mimir history mycrate::parse --json'],
  run,
};

function line(e: HistoryEvent): string {
  const gen = e.generation === null ? 'g?' : `g${e.generation}`;
  const time = e.committedMs === null ? '-' : isoTime(e.committedMs);
  const what = e.node ? `node ${e.node.kind ?? '-'} ${e.node.qpath ?? e.id}` : `edge ${e.edge?.edgeKind ?? '-'} -> ${e.edge?.dstPath ?? e.edge?.dst ?? '-'}`;
  const at = e.node ? place(e.node.file, e.node.line) : place(e.edge?.file ?? null, e.edge?.line ?? null);
  const rev = e.rev ? ` @${e.rev.slice(0, 12)}` : '';
  return `${gen}${rev} ${time} ${e.op.padEnd(6)} ${e.repo} ${e.krate} ${what}  ${at}`;
}

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const asOf = parseAsOf(args);
  return answer(
    ctx,
    { q: 'history', path, asOf },
    (r) => r.events.map(line),
    (r) => `${plural(r.events.length, 'event')} of ${path} (${plural(r.ids.length, 'item')}) ${atGen(r.generation)}`,
  );
}
