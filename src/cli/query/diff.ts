// `mimir diff --from G --to G [--repo R]`: nodes and edges added, changed and
// removed between two lake generations (src/query/diff.ts), one line each
// (`+`, `~`, `-` then `repo krate what  file:line`; a change lists its columns).
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { plural } from '../output.ts';
import type { Changes, DiffResult, EdgeHit, NodeHit } from '../../query/index.ts';
import { SERVER, answer, generationOption, nodeLine, place } from './common.ts';

export const command: CommandSpec = {
  usage: '--from GEN --to GEN [--repo R] [options]',
  description: 'Compares the folded state of the graph at two generations (see `mimir log generations`).',
  positionals: [],
  options: [
    { name: 'from', kind: 'value', arg: 'GEN', help: 'the earlier lake generation (required)' },
    { name: 'to', kind: 'value', arg: 'GEN', help: 'the later lake generation (required)' },
    { name: 'repo', kind: 'value', arg: 'R', help: 'only this repo (@universe = the dependency crates)' },
    SERVER,
  ],
  examples: ['mimir diff --from 12 --to 15', 'mimir diff --from 12 --to 15 --repo acme --json'],
  run,
};

const edgeLine = (e: EdgeHit): string => `${e.repo} ${e.krate} ${e.edgeKind ?? '-'} ${e.src ?? '-'} -> ${e.dstPath ?? e.dst ?? '-'}  ${place(e.file, e.line)}`;

function lines<T>(c: Changes<T>, show: (t: T) => string, what: string): string[] {
  return [
    ...c.added.map((t) => `+ ${what} ${show(t)}`),
    ...c.changed.map((x) => `~ ${what} ${show(x.after)}  (${x.columns.join(', ')})`),
    ...c.removed.map((t) => `- ${what} ${show(t)}`),
  ];
}

const counts = <T>(c: Changes<T>): string => `+${c.added.length} ~${c.changed.length} -${c.removed.length}`;

async function run(args: Args, ctx: Context): Promise<number> {
  const from = generationOption(args, 'from');
  const to = generationOption(args, 'to');
  const repo = args.value('repo');
  return answer(
    ctx,
    { q: 'diff', from, to, repo },
    (r: DiffResult) => [...lines<NodeHit>(r.nodes, nodeLine, 'node'), ...lines<EdgeHit>(r.edges, edgeLine, 'edge')],
    (r) => {
      const n = r.nodes.added.length + r.nodes.changed.length + r.nodes.removed.length + r.edges.added.length + r.edges.changed.length + r.edges.removed.length;
      return `${plural(n, 'change')} from generation ${r.from} to ${r.to}${r.repo ? ` in ${r.repo}` : ''}: nodes ${counts(r.nodes)}, edges ${counts(r.edges)}`;
    },
  );
}
