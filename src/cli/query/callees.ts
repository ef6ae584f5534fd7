// `mimir callees PATH [--resolved] [filters] [--as-of WHEN]`: the calls the
// item makes, one line each (`repo krate callee  path:line:col` — the call
// site; the callee's path when it was not resolved to an item, with the
// resolver's reason, or `(not in the lake)` when resolved to a crate not ingested). --resolved keeps the calls to items the lake holds (the
// summary counts the others). --repo and --krate choose which item(s) the
// path names; --exclude-tests drops call sites in test code.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { PICTURE_OPTIONS, picture, wantsPicture } from './picture.ts';
import { plural } from '../output.ts';
import { AS_OF, FILTER_OPTIONS, SERVER, answer, atGen, filtersOf, hitPlace, parseAsOf, shown } from './common.ts';
import { unresolvedText } from './refs-lines.ts';

export const command: CommandSpec = {
  usage: 'PATH [--resolved] [--repo R] [--krate K] [--limit N] [--exclude-tests] [--abs] [--as-of WHEN] [options]',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. mycrate::main' }],
  options: [
    { name: 'resolved', kind: 'flag', help: 'only the calls resolved to an item the lake holds (a repo\'s or a universe crate\'s): no std, no unresolved' },
    ...FILTER_OPTIONS, AS_OF, ...PICTURE_OPTIONS, SERVER,
  ],
  examples: [
    'mimir callees regex::Regex::new --depth 3 --format dot | dot -Tsvg > callees.svg',
    'mimir callees mycrate::main', 'mimir callees mycrate::main --resolved', 'mimir callees mycrate::Server::run --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  if (wantsPicture(args)) return picture(ctx, args, path, 'callees');
  const asOf = parseAsOf(args);
  return answer(
    ctx,
    { q: 'callees', path, asOf, resolved: args.flag('resolved') || undefined, ...filtersOf(args) },
    (r, paint) => r.callees.map((h) => ({ text: `${h.to?.repo ?? '-'} ${h.to?.krate ?? h.dstKrate ?? '-'} ${h.to?.qpath ?? h.dstPath ?? '-'}  ${paint.place(hitPlace(h))}${h.to ? '' : h.dst !== null ? '  (not in the lake)' : `  ${unresolvedText(h)}`}`, at: h })),
    (r) =>
      `${plural(r.total, 'call')} from ${r.targets.length === 1 ? r.targets[0]!.qpath ?? path : path}${shown(r.callees.length, r.total)} ${atGen(r.generation)}` +
      (r.unresolved !== undefined && r.unresolved > 0 ? `; ${plural(r.unresolved, 'call')} to no item the lake holds left out (--resolved)` : '') +
      (r.match === 'none' ? ` (no live item has this path; \`mimir history ${path}\` shows when it went)` : ''),
  );
}
