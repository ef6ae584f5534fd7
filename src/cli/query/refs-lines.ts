// The lines and summary shared by `mimir refs` and `mimir callers`: one line
// per edge into the item (`repo krate from-qpath  path:line:col  edge-kind`;
// with --unresolved the text written and the resolver's reason),
// and a summary that, for a zero answer, counts the unresolved edges named
// like the item and says how to list them.
import type { RefsAnswer } from '../../query/answer.ts';
import type { OptionSpec } from '../args.ts';
import { PLAIN, plural, type Paint } from '../output.ts';
import { atGen, hitPlace, shown, type Line } from './common.ts';

/** `--unresolved` of refs and callers. */
export const UNRESOLVED: OptionSpec = { name: 'unresolved', kind: 'flag', help: 'list the unresolved edges named like the last segment of PATH instead' };

export function refLines(r: RefsAnswer, paint: Paint = PLAIN): Line[] {
  return r.refs.map((h) => ({ text: `${h.repo} ${h.krate} ${h.from?.qpath ?? h.src ?? '-'}  ${paint.place(hitPlace(h))}  ${paint.kind(h.edgeKind ?? '-')}${r.unresolvedOnly ? `  -> ${h.dstPath ?? '-'} ${unresolvedText(h)}` : ''}`, at: h }));
}

/** `(unresolved: REASON)` — the resolver's reason when the run recorded one (lakes before reasons: `(unresolved)`). */
export function unresolvedText(h: { reason?: string }): string {
  return h.reason !== undefined ? `(unresolved: ${h.reason})` : '(unresolved)';
}

export function refSummary(r: RefsAnswer, path: string, word: string): string {
  const name = path.includes('::') ? path.slice(path.lastIndexOf('::') + 2) : path;
  if (r.unresolvedOnly) return `${plural(r.total, `unresolved ${word}`)} named ${name}${shown(r.refs.length, r.total)} ${atGen(r.generation)}`;
  const target =
    r.targets.length === 0 ? `${path} (no live item has this path; edges by path only)` : r.targets.length === 1 ? r.targets[0]!.qpath ?? path : `${path} (${r.targets.length} items)`;
  const repos = new Set(r.refs.map((h) => h.repo)).size;
  const loose =
    r.unresolved !== null && r.unresolved > 0
      ? `; ${plural(r.unresolved, `unresolved ${word}`)} ${r.unresolved === 1 ? 'is' : 'are'} named ${name}: mimir ${r.question} ${path} --unresolved`
      : '';
  const from = r.refs.length < r.total ? '' : ` from ${plural(repos, 'repo')}`;
  return `${plural(r.total, word)} to ${target}${from}${shown(r.refs.length, r.total)} ${atGen(r.generation)}${loose}`;
}
