// Shared pieces of the query commands (`mimir find`, `def`, `refs`,
// `callers`, `callees`, `history`, `diff`): the `--as-of` option (a generation
// number, an ISO 8601 time or a commit: AS_OF_FORMS), the one-line forms of nodes and edges, and the
// run wrapper that asks the question (serve/questions.ts) — of a running
// `mimir serve` when one is configured (--server, $MIMIR_SERVER), else of the
// existing lake's log — prints JSON or lines, and ends with a one-line
// summary on stderr. Both ways print the same bytes: the server sends the
// answer as JSON and the same printers run on it. Read-only.
import { UsageError, type Args, type OptionSpec } from '../args.ts';
import { SERVER_OPTION, type Context } from '../command.ts';
import { PLAIN, type Paint } from '../output.ts';
import type { AsOf, NodeHit } from '../../query/index.ts';
import { BadQuestion, parseAsOf as parseAsOfText, type Answers, type Filters, type Question, type QuestionName } from '../../serve/questions.ts';

/** Every form an as-of value takes (query/as-of.ts resolves them), for help texts. */
export const AS_OF_FORMS =
  'a lake generation (a number: `mimir log generations`); a time the lake was written (ISO 8601, e.g. 2024-05-01T12:00:00Z); ' +
  'or a commit of a repo ingested with `ingest --git` (or `--rev`): its id or a prefix of 4+ hex digits, a tag or branch (where it pointed when last ingested), ' +
  'HEAD (the repo\'s latest ingested commit), or REV@{DATE} / @{DATE}, the repo\'s history as of DATE (its ingested commit with the latest commit time at or before DATE; ' +
  'REV only picks the repo)';

export const AS_OF: OptionSpec = { name: 'as-of', kind: 'value', arg: 'WHEN', help: `answer as of WHEN: ${AS_OF_FORMS}` };

/** Every question command takes --server. */
export const SERVER = SERVER_OPTION;

/** `--as-of`: digits = a generation; an ISO 8601 date or time; else a commit (AS_OF_FORMS). */
export function parseAsOf(args: Args): AsOf | undefined {
  const v = args.value('as-of');
  if (v === undefined) return undefined;
  try {
    return parseAsOfText(v, '--as-of');
  } catch (e) {
    if (e instanceof BadQuestion) throw new UsageError(e.message, args.commandPath);
    throw e;
  }
}

/** A required generation option (`--from 3`). */
export function generationOption(args: Args, name: string): bigint {
  const v = args.value(name);
  if (v === undefined) throw new UsageError(`missing --${name} GEN`, args.commandPath);
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name}: expected a generation number, found "${v}"`, args.commandPath);
  return BigInt(v);
}

/** The filters every question takes (query/scope.ts), and `--abs`. */
export const FILTER_OPTIONS: OptionSpec[] = [
  { name: 'repo', kind: 'value', arg: 'R', help: 'only this repo (@universe = the dependency crates)' },
  { name: 'krate', kind: 'value', arg: 'K', help: 'only this crate: name@version, or a name for every version' },
  { name: 'limit', kind: 'value', arg: 'N', help: 'at most N hits (the summary says how many there were)' },
  { name: 'exclude-tests', kind: 'flag', help: 'leave out test code (tests/ and benches/ folders, tests.rs, `tests` modules)' },
  { name: 'abs', kind: 'flag', help: 'absolute paths (under the folder the repo was ingested from) instead of repo-relative ones' },
  { name: 'context', kind: 'value', arg: 'N', help: 'print N lines of source before and after each hit (from the lake: no checkout needed)' },
];

/** The values of FILTER_OPTIONS. */
export function filtersOf(args: Args): Filters {
  const f: Filters = {};
  const repo = args.value('repo');
  const krate = args.value('krate');
  const limit = args.count('limit');
  if (repo !== undefined) f.repo = repo;
  if (krate !== undefined) f.krate = krate;
  if (limit !== undefined) f.limit = limit;
  if (args.flag('exclude-tests')) f.excludeTests = true;
  if (args.flag('abs')) f.abs = true;
  const context = args.count('context');
  if (context !== undefined && context > 0) f.context = context;
  return f;
}

/** A printed line, with the hit it shows when it shows one (its `context` lines are printed under it). */
export type Line = string | { text: string; at: { line: number | null; context?: { line: number; text: string }[] } };

/** The source lines around a hit: `   41 | text`, the hit's own line marked `>`. */
export function contextText(at: { line: number | null; context?: { line: number; text: string }[] }): string[] {
  return (at.context ?? []).map((c) => `${String(c.line).padStart(7)} ${c.line === at.line ? '>' : '|'} ${c.text}`);
}

/** `path:line:col` (as editors and compilers print), `path:line`, `path`, or `-`. */
export function place(file: string | null, line: number | null, col: number | null = null): string {
  if (file === null) return '-';
  if (line === null) return file;
  return col === null ? `${file}:${line}` : `${file}:${line}:${col}`;
}

/** A hit's place: its repo-relative path (`path`, the answers' own) else the stored file. */
export function hitPlace(h: { file: string | null; path?: string | null; line: number | null; col: number | null }): string {
  return place(h.path ?? h.file, h.line, h.col);
}

/** `repo krate qpath  path:line:col` (the place painted). */
export function nodeLine(n: NodeHit & { path?: string | null }, paint: Paint = PLAIN): string {
  return `${n.repo} ${n.krate} ${n.qpath ?? n.id}  ${paint.place(hitPlace(n))}`;
}

/** ` (N shown: --limit)` when a limit cut the hits. */
export function shown(n: number, total: number): string {
  return n < total ? ` (${n} shown: --limit)` : '';
}

/**
 * Ask `q` (of the server in ctx.server, else of the lake), print JSON or the
 * lines, then the summary on stderr.
 */
export async function answer<N extends QuestionName>(
  ctx: Context,
  q: Question & { q: N },
  lines: (r: Answers[N], paint: Paint) => Line[],
  summary: (r: Answers[N]) => string,
): Promise<number> {
  const result = ctx.server !== undefined ? await askRemote<N>(ctx.server, q) : await askLocal<N>(ctx, q);
  if (ctx.json) {
    await ctx.out.json(result);
    return 0;
  }
  for (const l of lines(result, ctx.out.paint)) {
    if (typeof l === 'string') {
      await ctx.out.line(l);
      continue;
    }
    await ctx.out.line(l.text);
    for (const c of contextText(l.at)) await ctx.out.line(c);
  }
  ctx.out.err(summary(result));
  return 0;
}

/** The answer read from the lake (the lake's modules are loaded here, not when a server answers). */
async function askLocal<N extends QuestionName>(ctx: Context, q: Question & { q: N }): Promise<Answers[N]> {
  const [{ openLog }, { ask }, { hasStateTables }, { enableReadCache }, { enableSyncReads }] = await Promise.all([
    import('../log/common.ts'),
    import('../../serve/questions.ts'),
    import('../../log/state/view.ts'),
    import('../../lake/io/read-cache.ts'),
    import('../../lake/io/fileio.ts'),
  ]);
  // nothing written at open; a pin's lease is the only write (gc elsewhere must see the generation read)
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  // a question scans some tables several times: each file's parse is read once
  enableReadCache(open.lake.io);
  // one question, then exit: reads are synchronous calls (no thread-pool round trip per open, read, close)
  enableSyncReads(open.lake.io);
  try {
    // MIMIR_ANSWER_FROM=log folds the event log instead of reading the state tables (benchmarks, checks)
    const from = ctx.env.MIMIR_ANSWER_FROM === 'log' ? 'log' : 'state';
    if (from === 'state' && q.q !== 'history' && q.q !== 'diff' && !hasStateTables(open.log)) {
      ctx.out.err(`note: the lake at ${open.lake.root} has no serving state tables (it predates them): answers fold the event log, which is slow; build them once with 'mimir state rebuild'`);
    }
    return (await ask(open.log, q, from)) as Answers[N];
  } finally {
    open.close();
  }
}

/**
 * The server's answer. Its JSON has the answer's shape; integers come back as
 * numbers below 2^53 (bigints above), which the printers only interpolate, so
 * the text printed is the same as for the answer read locally.
 */
async function askRemote<N extends QuestionName>(server: string, q: Question & { q: N }): Promise<Answers[N]> {
  const { askServer, serverUrl, ServerError } = await import('../../serve/client.ts');
  try {
    return (await askServer(serverUrl(server), q)) as unknown as Answers[N];
  } catch (e) {
    // the server names its parameter (asOf); the user typed --as-of
    if (e instanceof ServerError && /^asOf\b/.test(e.message)) e.message = e.message.replace(/^asOf\b/, '--as-of');
    throw e;
  }
}

/** ` at generation G` for the summary line. */
export const atGen = (g: bigint): string => `at generation ${g}`;
