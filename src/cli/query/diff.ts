// `mimir diff (--from GEN | --from-rev REV) (--to GEN | --to-rev REV) [--repo R]
// [--moves] [--public] [--stat]`: the semantic diff (src/query/diff.ts), one
// line per changed item — `added`, `removed`, `renamed`, `signature`,
// `visibility`, `body`, `paths`, `moved` (with --moves) — then the kind, the
// path, the crate and `file:line`, and what changed; `--public` prefixes the
// semver class (breaking, additive); `--stat` prints counts per crate instead;
// `--format mermaid` prints them as a picture: a mermaid `graph LR` with a
// node per crate (a bump: `name@old..new`) and its counts of added, removed
// and changed items. No edges: the lake keeps no crate-to-crate dependency
// table (only item edges), so a crate's dependencies would cost a scan of
// the edges at both ends; the notes (bumps, new dependencies) stay in the
// summary on stderr.
// A summary on stderr: one line when it fits the terminal (off one, $COLUMNS
// or 100), else a line per crate and per note, wrapped. A reversed range is
// an error (exit 1) naming the swap.
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { plural, wrap } from '../output.ts';
import type { DiffResult, ItemChange, Stat } from '../../query/index.ts';
import { FILTER_OPTIONS, SERVER, answer, filtersOf, place } from './common.ts';
import { mermaidText } from './picture.ts';

export const command: CommandSpec = {
  usage: '(--from GEN | --from-rev REV) (--to GEN | --to-rev REV) [--repo R] [--krate K] [--limit N] [--exclude-tests] [--moves] [--public] [--stat | --format mermaid] [options]',
  description:
    'What changed between two lake generations or two ingested commits, item by item: added, removed, renamed (same body, new path or name), ' +
    'signature, visibility or body changed. Moves (a line shift, an item moved to another file) are counted, listed with --moves. A version bump of a ' +
    'crate — the repo\'s own or a dependency its calls point into — is diffed item by item across the two versions. --public keeps the public API ' +
    'and classes each change as breaking or additive (semver). With --from-rev/--to-rev the repo is the one those commits were ingested for.',
  positionals: [],
  options: [
    { name: 'from', kind: 'value', arg: 'GEN', help: 'the earlier lake generation (see `mimir log generations`)' },
    { name: 'to', kind: 'value', arg: 'GEN', help: 'the later lake generation' },
    { name: 'from-rev', kind: 'value', arg: 'REV', help: 'the earlier end as a commit ingested with `ingest --git`: its id or a prefix, a tag, a branch, HEAD, or REV@{DATE} / @{DATE} (the repo\'s history as of DATE)' },
    { name: 'to-rev', kind: 'value', arg: 'REV', help: 'the later end as a commit (the same forms as --from-rev)' },
    { name: 'repo', kind: 'value', arg: 'R', help: 'only this repo and the dependencies it calls into (@universe = the dependency crates)' },
    ...FILTER_OPTIONS.filter((o) => o.name === 'krate' || o.name === 'limit' || o.name === 'exclude-tests'),
    { name: 'moves', kind: 'flag', help: 'also list items whose only change is their position' },
    { name: 'public', kind: 'flag', help: 'only the public API, each change marked breaking or additive' },
    { name: 'stat', kind: 'flag', help: 'counts per crate and kind of change instead of the list' },
    { name: 'format', kind: 'value', arg: 'mermaid', help: 'a picture instead of the list: a mermaid graph with a node per crate and its counts of added, removed and changed items (no edges)' },
    SERVER,
  ],
  examples: [
    'mimir diff --from-rev v1.0.0 --to-rev v1.1.0',
    'mimir diff --from-rev 4649aa97 --to-rev v1.1.0 --public',
    'mimir diff --from 12 --to 15 --repo acme --stat',
    'mimir diff --from-rev v1.0.0 --to-rev v1.1.0 --format mermaid > diff.mmd',
    'mimir diff --from-rev v1 --to-rev v2 --moves --json',
    "mimir diff --from-rev 'main@{2024-05-01}' --to-rev HEAD",
  ],
  run,
};

const path = (c: ItemChange): string =>
  c.change === 'renamed' ? `${c.before!.qpath ?? c.before!.id} -> ${c.after!.qpath ?? c.after!.id}` : ((c.after ?? c.before)!.qpath ?? (c.after ?? c.before)!.id);

const krate = (c: ItemChange): string => {
  // across a version bump: `name@old..new`
  if (c.bump !== null) {
    const [b, a] = c.bump.split(' -> ') as [string, string];
    const x = /^(.*?)@([^/]*)(\/.*)?$/.exec(b);
    const y = /^(.*?)@([^/]*)(\/.*)?$/.exec(a);
    return x && y && x[1] === y[1] && x[3] === y[3] ? `${x[1]}@${x[2]}..${y[2]}${x[3] ?? ''}` : `${b}..${a}`;
  }
  return (c.after ?? c.before)!.krate;
};

function detail(c: ItemChange): string {
  const b = c.before;
  const a = c.after;
  const parts: string[] = [];
  if (b && a && c.aspects.includes('signature')) parts.push(`was: ${b.signature ?? '-'}`);
  if (b && a && c.aspects.includes('visibility')) parts.push(`${b.visibility || 'private'} -> ${a.visibility || 'private'}`);
  if (b && a && (c.change === 'moved' || c.change === 'renamed') && (b.file !== a.file || b.line !== a.line)) parts.push(`from ${place(b.file, b.line)}`);
  return parts.length > 0 ? `  (${parts.join('; ')})` : '';
}

const tag = (c: ItemChange): string => (c.change === 'changed' ? c.aspects.join(',') : c.change);

function changeLine(c: ItemChange, withSemver: boolean): string {
  const h = (c.after ?? c.before)!;
  const head = withSemver ? `${(c.semver ?? '-').padEnd(9)} ` : '';
  return `${head}${tag(c).padEnd(10)} ${h.kind ?? '?'} ${path(c)}  ${krate(c)} ${place(h.file, h.line)}${detail(c)}`;
}

const STAT_ORDER: (keyof Stat)[] = ['added', 'removed', 'renamed', 'signature', 'visibility', 'body', 'paths', 'moved'];

function statText(s: Stat): string {
  return STAT_ORDER.filter((k) => s[k] > 0).map((k) => `${k} ${s[k]}`).join(', ') || 'no change';
}

/** Counts per crate (a bump: `name old -> new`), then the total. */
function statLines(r: DiffResult): string[] {
  const per = new Map<string, Stat>();
  for (const c of r.changes) {
    const k = krate(c);
    let s = per.get(k);
    if (!s) per.set(k, (s = { added: 0, removed: 0, renamed: 0, signature: 0, visibility: 0, body: 0, paths: 0, moved: 0 }));
    if (c.change === 'changed') for (const x of c.aspects) s[x]++;
    else s[c.change]++;
  }
  const width = Math.max(5, ...[...per.keys()].map((k) => k.length));
  const out = [...per].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([k, s]) => `${k.padEnd(width)}  ${statText(s)}`);
  out.push(`${'total'.padEnd(width)}  ${plural(r.total, 'item')}: ${statText(r.stat)}${r.hiddenMoves > 0 ? ` (${plural(r.hiddenMoves, 'move')} not listed)` : ''}`);
  return out;
}

/**
 * The counts per crate as a mermaid `graph LR`: a node per crate, labelled
 * with the crate and `+added -removed ~changed` (changed: renamed, signature,
 * visibility, body, paths or moved — an item counts once however many of its
 * aspects changed). Counts are over the changes listed: a --limit that cut
 * the list is said in a `%%` comment.
 */
export function diffMermaid(r: DiffResult): string {
  const per = new Map<string, { added: number; removed: number; changed: number }>();
  for (const c of r.changes) {
    const k = krate(c);
    let s = per.get(k);
    if (!s) per.set(k, (s = { added: 0, removed: 0, changed: 0 }));
    if (c.change === 'added') s.added++;
    else if (c.change === 'removed') s.removed++;
    else s.changed++;
  }
  const lines = ['graph LR', `  %% ${plural(r.total, 'change')} from ${end(r, 'from')} to ${end(r, 'to')}${r.repo ? ` in ${r.repo}` : ''}`];
  if (r.changes.length < r.total) lines.push(`  %% counts over the ${r.changes.length} changes listed (--limit)`);
  if (per.size === 0) lines.push(`  none[${mermaidText('no change')}]`);
  [...per].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).forEach(([k, s], i) => {
    // `<br/>` between the escaped parts: mermaid's line break inside a label
    lines.push(`  c${i}[${mermaidText(k).slice(0, -1)}<br/>+${s.added} added, -${s.removed} removed, ~${s.changed} changed"]`);
  });
  return lines.join('\n');
}

function end(r: DiffResult, which: 'from' | 'to'): string {
  const rev = which === 'from' ? r.fromRev : r.toRev;
  const g = which === 'from' ? r.from : r.to;
  return rev !== null ? `${rev} (generation ${g})` : `generation ${g}`;
}

/**
 * The summary: one line when it fits in `width`; else the totals, a line per
 * crate with its counts (when the list is complete and spans two crates or
 * more), then each note on its own line, all wrapped at `width`.
 */
function summary(r: DiffResult, pub: boolean, width: number): string {
  const parts = summaryParts(r, pub);
  const one = parts.join('; ');
  if (one.length <= width) return one;
  const out = [wrap(parts[0]!, width, '    ')];
  const per = statLines(r).slice(0, -1);
  if (r.changes.length === r.total && per.length > 1) out.push(...per.map((l) => wrap(`  ${l}`, width, '    ')));
  for (const p of parts.slice(1)) out.push(wrap(`  ${p}`, width, '    '));
  return out.join('\n');
}

function summaryParts(r: DiffResult, pub: boolean): string[] {
  const shown = r.total > r.changes.length ? ` (${r.changes.length} listed: --limit)` : '';
  const parts = [`${plural(r.total, 'change')}${shown} from ${end(r, 'from')} to ${end(r, 'to')}${r.repo ? ` in ${r.repo}` : ''}: ${statText(r.stat)}`];
  if (r.hiddenMoves > 0) parts.push(`${plural(r.hiddenMoves, 'move')} not listed (--moves lists them)`);
  const version = (k: string): string => /@([^/]*)/.exec(k)?.[1] ?? k;
  for (const b of r.bumps) parts.push(`${b.dependency ? 'dependency' : 'crate'} ${b.name} ${version(b.from)} -> ${version(b.to)}`);
  if (r.dependencies.added.length > 0) parts.push(`new dependencies ${r.dependencies.added.join(', ')}`);
  if (r.dependencies.removed.length > 0) parts.push(`dependencies dropped ${r.dependencies.removed.join(', ')}`);
  if (pub) parts.push(`semver: ${r.semver.breaking} breaking, ${r.semver.additive} additive, ${r.semver.patch} patch -> a ${r.semver.release} release`);
  parts.push(`edges +${r.edges.added} ~${r.edges.changed} -${r.edges.removed}`);
  return parts;
}

async function run(args: Args, ctx: Context): Promise<number> {
  const gen = (name: string): bigint | undefined => {
    const v = args.value(name);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new UsageError(`--${name}: expected a generation number, found "${v}" (a commit, tag or branch goes in --${name}-rev)`, args.commandPath);
    return BigInt(v);
  };
  const from = gen('from');
  const to = gen('to');
  const fromRev = args.value('from-rev');
  const toRev = args.value('to-rev');
  for (const [g, rev, name] of [[from, fromRev, 'from'], [to, toRev, 'to']] as const) {
    if (g === undefined && rev === undefined) throw new UsageError(`missing --${name} GEN or --${name}-rev REV`, args.commandPath);
    if (g !== undefined && rev !== undefined) throw new UsageError(`give --${name} GEN or --${name}-rev REV, not both`, args.commandPath);
  }
  const pub = args.flag('public');
  const f = filtersOf(args);
  const stat = args.flag('stat');
  const format = args.value('format');
  if (format !== undefined && format !== 'mermaid') throw new UsageError(`--format: expected mermaid, found "${format}" (diff draws only the per-crate summary)`, args.commandPath);
  if (format !== undefined && stat) throw new UsageError('--stat prints the counts and --format mermaid draws them: give one of them', args.commandPath);
  return answer(
    ctx,
    { q: 'diff', from, to, fromRev, toRev, repo: args.value('repo'), krate: f.krate, limit: f.limit, excludeTests: f.excludeTests, moves: args.flag('moves') || undefined, public: pub || undefined },
    (r: DiffResult) => (format === 'mermaid' ? [diffMermaid(r)] : stat ? statLines(r) : r.changes.map((c) => changeLine(c, pub))),
    (r) => summary(r, pub, ctx.out.errWidth()),
  );
}
