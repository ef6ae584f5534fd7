// `--format dot|mermaid` and `--depth N` of `mimir callers`, `callees` and
// `refs`: the graph of callers of callers (callees of callees, referrers)
// up to N levels (src/query/graph.ts), printed as a Graphviz DOT digraph, a
// mermaid `graph TD`, or — --depth alone — an indented tree. One node per
// item, labelled by its qualified path (escaped for the format); edges point
// from the caller to the callee. --json prints the graph itself. Read-only;
// reads the lake directly (not with --server).
import { UsageError, type Args, type OptionSpec } from '../args.ts';
import type { Context } from '../command.ts';
import { plural } from '../output.ts';
import { atGen, filtersOf, parseAsOf } from './common.ts';
import type { CallGraph, GraphDirection } from '../../query/graph.ts';
import type { EdgeKind } from '../../query/index.ts';

export const PICTURE_OPTIONS: OptionSpec[] = [
  { name: 'format', kind: 'value', arg: 'dot|mermaid', help: 'a picture: a Graphviz DOT digraph or a mermaid graph, edges from caller to callee' },
  { name: 'depth', kind: 'value', arg: 'N', help: 'follow N levels (callers of callers, …; default 1); without --format, an indented tree' },
];

/** Whether the arguments ask for a picture (--format or --depth). */
export const wantsPicture = (args: Args): boolean => args.has('format') || args.has('depth');

const dotText = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
/** A mermaid label in quotes, its `#`, quotes and angle brackets as entity codes (diff --format mermaid uses it too). */
export const mermaidText = (s: string): string => `"${s.replace(/#/g, '#35;').replace(/"/g, '#quot;').replace(/</g, '#lt;').replace(/>/g, '#gt;').replace(/\n/g, ' ')}"`;

/** The graph as a DOT digraph: nodes n0… labelled by qualified path, the asked-about items bold. */
export function toDot(g: CallGraph): string {
  const ids = new Map(g.nodes.map((n, i) => [n.id, `n${i}`]));
  const lines = [`digraph ${g.direction} {`, '  node [shape=box, fontname="monospace"];'];
  for (const n of g.nodes) lines.push(`  ${ids.get(n.id)} [label=${dotText(n.label)}${n.level === 0 ? ', style=bold' : ''}];`);
  for (const e of g.edges) lines.push(`  ${ids.get(e.from)} -> ${ids.get(e.to)}${e.kind !== 'calls' ? ` [label=${dotText(e.kind)}]` : ''};`);
  lines.push('}');
  return lines.join('\n');
}

/** The graph as a mermaid flowchart (`graph TD`). */
export function toMermaid(g: CallGraph): string {
  const ids = new Map(g.nodes.map((n, i) => [n.id, `n${i}`]));
  const lines = ['graph TD'];
  for (const n of g.nodes) lines.push(`  ${ids.get(n.id)}[${mermaidText(n.label)}]`);
  for (const e of g.edges) lines.push(`  ${ids.get(e.from)} -->${e.kind !== 'calls' ? `|${mermaidText(e.kind)}|` : ''} ${ids.get(e.to)}`);
  return lines.join('\n');
}

/** The graph as an indented tree from each asked-about item (an item met again is marked, not expanded twice). */
export function toTree(g: CallGraph): string {
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  const next = new Map<string, string[]>();
  for (const e of g.edges) {
    const [a, b] = g.direction === 'callees' ? [e.from, e.to] : [e.to, e.from];
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  const out: string[] = [];
  const shown = new Set<string>();
  const walk = (id: string, depth: number): void => {
    const n = byId.get(id)!;
    const again = shown.has(id);
    out.push(`${'  '.repeat(depth)}${n.label}${again && (next.get(id)?.length ?? 0) > 0 ? ' (see above)' : ''}`);
    if (again) return;
    shown.add(id);
    for (const c of next.get(id) ?? []) walk(c, depth + 1);
  };
  for (const n of g.nodes.filter((x) => x.level === 0)) walk(n.id, 0);
  return out.join('\n');
}

/** Print the picture of `path` asked by --format / --depth; summary on stderr. */
export async function picture(ctx: Context, args: Args, path: string, direction: GraphDirection): Promise<number> {
  const format = args.value('format');
  if (format !== undefined && format !== 'dot' && format !== 'mermaid') throw new UsageError(`--format: expected dot or mermaid, found "${format}"`, args.commandPath);
  const depth = args.count('depth') ?? 1;
  if (depth < 1) throw new UsageError(`--depth: expected at least 1, found ${depth}`, args.commandPath);
  if (ctx.server !== undefined) throw new UsageError('--format and --depth read the lake directly: give --lake, not --server', args.commandPath);
  if (args.flag('unresolved')) throw new UsageError('--unresolved lists edges, it draws no picture: leave out --format and --depth', args.commandPath);
  const asOf = parseAsOf(args);
  const { limit: _limit, context: _context, ...filters } = filtersOf(args);
  const kind = args.value('kind');
  const [{ openLog }, { callGraph }] = await Promise.all([import('../log/common.ts'), import('../../query/graph.ts')]);
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  try {
    const g = await callGraph(open.log, path, { ...filters, asOf, direction, depth, edgeKind: kind as EdgeKind | undefined });
    if (ctx.json) await ctx.out.json(g);
    else await ctx.out.line(format === 'dot' ? toDot(g) : format === 'mermaid' ? toMermaid(g) : toTree(g));
    const cut = g.truncated ? ' (cut at 500 items: narrow it with --depth, --repo, --krate)' : '';
    ctx.out.err(`${plural(g.nodes.length, 'item')}, ${plural(g.edges.length, 'edge')} within ${plural(depth, 'level')} of ${direction} of ${path}${cut} ${atGen(g.generation)}`);
    return 0;
  } finally {
    open.close();
  }
}
