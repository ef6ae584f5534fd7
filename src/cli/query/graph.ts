// `mimir graph PATH [--depth N] [--svg out.svg] [--format dot|mermaid]`: the
// call graph of an item — its callers up to N levels above it and its callees
// N levels below (src/query/graph.ts callGraphBoth), read at one generation.
// --svg writes the picture as a standalone SVG file, laid out by the same
// module the web UI's /graph page draws with (src/query/graph-layout.ts);
// otherwise it prints a Graphviz DOT digraph (or a mermaid graph), as
// `callers --format dot` does. --json prints the graph itself.
// Crash story: the SVG is written to a temporary file beside the target and
// renamed over it, so the target is either the old file or the whole new one.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { UsageError, type Args } from '../args.ts';
import type { CommandSpec, Context } from '../command.ts';
import { plural } from '../output.ts';
import { AS_OF, atGen, filtersOf, parseAsOf } from './common.ts';
import { toDot, toMermaid } from './picture.ts';

export const command: CommandSpec = {
  usage: 'PATH [--depth N] [--svg FILE] [--format dot|mermaid] [--repo R] [--krate K] [--exclude-tests] [--as-of GEN|TIME]',
  description: 'Callers are drawn above the item, callees below it; edges point from the caller to the callee.',
  positionals: [{ name: 'PATH', required: true, help: 'a qualified path, e.g. regex::Regex::new' }],
  options: [
    { name: 'depth', kind: 'value', arg: 'N', help: 'levels of callers and of callees to follow (default 2)' },
    { name: 'svg', kind: 'value', arg: 'FILE', help: 'write the picture as a standalone SVG file (styles inside)' },
    { name: 'format', kind: 'value', arg: 'dot|mermaid', help: 'print a Graphviz DOT digraph (the default) or a mermaid graph' },
    { name: 'repo', kind: 'value', arg: 'R', help: 'only this repo (@universe = the dependency crates)' },
    { name: 'krate', kind: 'value', arg: 'K', help: 'only this crate: name@version, or a name for every version' },
    { name: 'exclude-tests', kind: 'flag', help: 'leave out test code' },
    AS_OF,
  ],
  examples: ['mimir graph regex::Regex::new --svg regex-new.svg', 'mimir graph regex::Regex::new --depth 3 | dot -Tpng > g.png', 'mimir graph mycrate::main --format mermaid'],
  run,
};

/** Default levels of callers and of callees (the web page's default too). */
export const DEFAULT_DEPTH = 2;

async function run(args: Args, ctx: Context): Promise<number> {
  const path = args.positionals[0]!;
  const format = args.value('format');
  if (format !== undefined && format !== 'dot' && format !== 'mermaid') throw new UsageError(`--format: expected dot or mermaid, found "${format}"`, args.commandPath);
  const svg = args.value('svg');
  if (svg !== undefined && format !== undefined) throw new UsageError('--svg writes a picture and --format prints one: give one of them', args.commandPath);
  const depth = args.count('depth') ?? DEFAULT_DEPTH;
  if (depth < 1) throw new UsageError(`--depth: expected at least 1, found ${depth}`, args.commandPath);
  const asOf = parseAsOf(args);
  const { limit: _limit, context: _context, abs: _abs, ...filters } = filtersOf(args);
  const [{ openLog }, { callGraphBoth }] = await Promise.all([import('../log/common.ts'), import('../../query/graph.ts')]);
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  try {
    const g = await callGraphBoth(open.log, path, { ...filters, asOf, depth });
    if (svg !== undefined) {
      const { layoutGraph, pictureSvg } = await import('../../query/graph-layout.ts');
      const text = pictureSvg(layoutGraph(g.nodes, g.edges), `call graph of ${path} (${depth} levels each way, generation ${g.generation})`);
      const target = nodePath.resolve(svg);
      const tmp = `${target}.tmp-${process.pid}`;
      try {
        writeFileSync(tmp, text);
        renameSync(tmp, target);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw new Error(`writing the picture to ${target} failed (${(e as Error).message}); no file was written`);
      }
      if (ctx.json) await ctx.out.json({ ...g, svg: target });
      else await ctx.out.line(target);
    } else if (ctx.json) await ctx.out.json(g);
    else await ctx.out.line(format === 'mermaid' ? toMermaid(g) : toDot(g));
    const cut = g.truncated ? ' (cut at 500 items a side: narrow it with --depth, --repo, --krate)' : '';
    ctx.out.err(`${plural(g.nodes.length, 'item')}, ${plural(g.edges.length, 'edge')} within ${plural(depth, 'level')} of callers and callees of ${path}${cut} ${atGen(g.generation)}`);
    return 0;
  } finally {
    open.close();
  }
}
