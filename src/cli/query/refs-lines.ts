// The lines and summary shared by `mimir refs` and `mimir callers`: one line
// per edge into the item (`repo krate from-qpath  file:line  edge-kind`).
import type { RefsResult } from '../../query/index.ts';
import { plural } from '../output.ts';
import { atGen, place } from './common.ts';

export function refLines(r: RefsResult): string[] {
  return r.refs.map((h) => `${h.repo} ${h.krate} ${h.from?.qpath ?? h.src ?? '-'}  ${place(h.file, h.line)}  ${h.edgeKind ?? '-'}`);
}

export function refSummary(r: RefsResult, path: string, word: string): string {
  const target =
    r.targets.length === 0 ? `${path} (no live item has this path; edges by path only)` : r.targets.length === 1 ? r.targets[0]!.qpath ?? path : `${path} (${r.targets.length} items)`;
  const repos = new Set(r.refs.map((h) => h.repo)).size;
  return `${plural(r.refs.length, word)} to ${target} from ${plural(repos, 'repo')} ${atGen(r.generation)}`;
}
