// `mimir history PATH [filters] [--as-of WHEN]`: every event of the item
// and of the edges out of it, oldest first (src/query/answer.ts), one line
// each (`generation [@commit] time op kind repo krate what  path:line:col`).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { isoTime, plural } from '../output.ts';
import type { PlacedEvent } from '../../query/answer.ts';
import { AS_OF, FILTER_OPTIONS, SERVER, answer, atGen, filtersOf, hitPlace, parseAsOf, shown } from './common.ts';

export const command: CommandSpec = {
  usage: 'PATH [--repo R] [--krate K] [--limit N] [--exclude-tests] [--abs] [--as-of WHEN] [options]',
  description: 'Every node id that ever had the path (removed items too), its events and those of its outgoing edges.',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. mycrate::parse' }],
  options: [...FILTER_OPTIONS, AS_OF, SERVER],
  examples: ['mimir history mycrate::parse', 'mimir history mycrate::parse --json', "mimir history mycrate::parse --as-of 'main@{2024-05-01}'"],
  run,
};

function line(e: PlacedEvent): string {
  const gen = e.generation === null ? 'g?' : `g${e.generation}`;
  const time = e.committedMs === null ? '-' : isoTime(e.committedMs);
  const what = e.node ? `node ${e.node.kind ?? '-'} ${e.node.qpath ?? e.id}` : `edge ${e.edge?.edgeKind ?? '-'} -> ${e.edge?.dstPath ?? e.edge?.dst ?? '-'}`;
  const h = e.node ?? e.edge;
  const at = h ? hitPlace(h) : '-';
  const rev = e.rev ? ` @${e.rev.slice(0, 12)}` : '';
  return `${gen}${rev} ${time} ${e.op.padEnd(6)} ${e.repo} ${e.krate} ${what}  ${at}`;
}

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const asOf = parseAsOf(args);
  return answer(
    ctx,
    { q: 'history', path, asOf, ...filtersOf(args) },
    (r) => r.events.map((e) => { const h = e.node ?? e.edge; return h ? { text: line(e), at: h } : line(e); }),
    (r) => `${plural(r.total, 'event')} of ${path} (${plural(r.ids.length, 'item')})${shown(r.events.length, r.total)} ${atGen(r.generation)}`,
  );
}
