// Shared pieces of the query commands (`mimir find`, `def`, `refs`,
// `callers`, `callees`, `history`, `diff`): the `--as-of` option (a generation
// number or an ISO 8601 time), the one-line forms of nodes and edges, and the
// run wrapper that asks the question (serve/questions.ts) — of a running
// `mimir serve` when one is configured (--server, $MIMIR_SERVER), else of the
// existing lake's log — prints JSON or lines, and ends with a one-line
// summary on stderr. Both ways print the same bytes: the server sends the
// answer as JSON and the same printers run on it. Read-only.
import { UsageError, type Args, type OptionSpec } from '../args.ts';
import { SERVER_OPTION, type Context } from '../command.ts';
import type { AsOf, NodeHit } from '../../query/index.ts';
import { BadQuestion, parseAsOf as parseAsOfText, type Answers, type Question, type QuestionName } from '../../serve/questions.ts';

export const AS_OF: OptionSpec = { name: 'as-of', kind: 'value', arg: 'GEN|TIME', help: 'answer as of a lake generation (a number) or a time (ISO 8601, e.g. 2024-05-01T12:00:00Z)' };

/** Every question command takes --server. */
export const SERVER = SERVER_OPTION;

/** `--as-of`: digits = a generation; otherwise an ISO 8601 date or time. */
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

/** `file:line`, `file`, or `-`. */
export function place(file: string | null, line: number | null): string {
  if (file === null) return '-';
  return line === null ? file : `${file}:${line}`;
}

/** `repo krate qpath  file:line`. */
export function nodeLine(n: NodeHit): string {
  return `${n.repo} ${n.krate} ${n.qpath ?? n.id}  ${place(n.file, n.line)}`;
}

/**
 * Ask `q` (of the server in ctx.server, else of the lake), print JSON or the
 * lines, then the summary on stderr.
 */
export async function answer<N extends QuestionName>(
  ctx: Context,
  q: Question & { q: N },
  lines: (r: Answers[N]) => string[],
  summary: (r: Answers[N]) => string,
): Promise<number> {
  const result = ctx.server !== undefined ? await askRemote<N>(ctx.server, q) : await askLocal<N>(ctx, q);
  if (ctx.json) {
    await ctx.out.json(result);
    return 0;
  }
  for (const l of lines(result)) await ctx.out.line(l);
  ctx.out.err(summary(result));
  return 0;
}

/** The answer read from the lake (the lake's modules are loaded here, not when a server answers). */
async function askLocal<N extends QuestionName>(ctx: Context, q: Question & { q: N }): Promise<Answers[N]> {
  const [{ openLog }, { ask }, { hasStateTables }] = await Promise.all([import('../log/common.ts'), import('../../serve/questions.ts'), import('../../log/state/view.ts')]);
  const open = await openLog(ctx, { readOnly: 'auto' });
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
  const { askServer, serverUrl } = await import('../../serve/client.ts');
  return (await askServer(serverUrl(server), q)) as unknown as Answers[N];
}

/** ` at generation G` for the summary line. */
export const atGen = (g: bigint): string => `at generation ${g}`;
