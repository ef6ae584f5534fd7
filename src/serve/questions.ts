// The graph questions as data, shared by both ways of asking them: the CLI
// reading the lake itself and `mimir serve` answering over HTTP (with the
// CLI's client of it). A `Question` names one src/query function and its
// arguments; `ask` calls that function, so a question gets the same answer
// whichever way it travels. On the wire a question is a route
// (`/api/<name>`) and string parameters: `questionParams` writes them and
// `parseQuestion` reads them back, refusing anything unexpected (an unknown
// or repeated parameter, a missing one, a malformed value) with a
// `BadQuestion` that says what was expected and what was found — the
// server's 400. Pure: no I/O here beyond the query call. src/query (and with
// it the lake, SQLite, Parquet, wasm) is imported only when `ask` runs, so a
// CLI that sends its question to a server starts without loading them.
import type { EventLog } from '../log/event-log.ts';
import type { AsOf, DiffResult, EdgeKind, QueryOptions } from '../query/index.ts';
import type { CalleesAnswer, DefAnswer, FindAnswer, HistoryAnswer, RefsAnswer } from '../query/answer.ts';

/**
 * The edge kinds a `refs` question may name: query/refs.ts's EDGE_KINDS,
 * repeated here so that parsing a question loads no query code
 * (test/serve/questions.test.ts checks that the two lists agree).
 */
export const EDGE_KINDS: readonly EdgeKind[] = ['contains', 'impl_of_trait', 'impl_for_type', 'uses', 'calls', 'type_ref', 'value_ref'];

/** The filters and the form of paths every question takes (diff: repo, krate, limit, excludeTests): query/scope.ts, query/answer.ts. */
export interface Filters {
  repo?: string;
  krate?: string;
  limit?: number;
  excludeTests?: boolean;
  /** Absolute paths instead of repo-relative ones. */
  abs?: boolean;
  /** Lines of source around each hit. */
  context?: number;
}

/** A question that names a path (`def`, `refs`, …). */
type PathQuestion<N extends string> = Filters & {
  q: N;
  path: string;
  asOf?: AsOf;
};

export type Question =
  | ({ q: 'find'; name: string; kind?: string; exact?: boolean; asOf?: AsOf } & Filters)
  | PathQuestion<'def'>
  | (PathQuestion<'refs'> & { kind?: EdgeKind; unresolved?: boolean })
  | (PathQuestion<'callers'> & { unresolved?: boolean })
  | (PathQuestion<'callees'> & { resolved?: boolean })
  | PathQuestion<'history'>
  | { q: 'diff'; from?: bigint; to?: bigint; fromRev?: string; toRev?: string; repo?: string; krate?: string; limit?: number; excludeTests?: boolean; moves?: boolean; public?: boolean };

export type QuestionName = Question['q'];

/** What each question answers with. */
export interface Answers {
  find: FindAnswer;
  def: DefAnswer;
  refs: RefsAnswer;
  callers: RefsAnswer;
  callees: CalleesAnswer;
  history: HistoryAnswer;
  diff: DiffAnswer;
}

/** diff's answer with its JSON version (schemas/diff.schema.json). */
export type DiffAnswer = DiffResult & { question: 'diff'; version: number };

export type Answer = Answers[QuestionName];

/** A malformed question: the message says what was expected and what was found. */
export class BadQuestion extends Error {}

/** The parameters of each question on the wire, required ones first. */
const FILTERS = ['repo', 'krate', 'limit', 'excludeTests', 'abs', 'context'];

export const QUESTION_PARAMS: Record<QuestionName, { required: string[]; optional: string[] }> = {
  find: { required: ['name'], optional: ['kind', 'exact', ...FILTERS, 'asOf'] },
  def: { required: ['path'], optional: [...FILTERS, 'asOf'] },
  refs: { required: ['path'], optional: ['kind', 'unresolved', ...FILTERS, 'asOf'] },
  callers: { required: ['path'], optional: ['unresolved', ...FILTERS, 'asOf'] },
  callees: { required: ['path'], optional: ['resolved', ...FILTERS, 'asOf'] },
  history: { required: ['path'], optional: [...FILTERS, 'asOf'] },
  diff: { required: [], optional: ['from', 'to', 'fromRev', 'toRev', 'repo', 'krate', 'limit', 'excludeTests', 'moves', 'public'] },
};

export const QUESTION_NAMES = Object.keys(QUESTION_PARAMS) as QuestionName[];

export const isQuestionName = (s: string): s is QuestionName => Object.hasOwn(QUESTION_PARAMS, s);

/**
 * Ask a question of the log: the src/query function it names, as of its
 * `asOf` (or the log's read generation); `from` as in QueryOptions.
 */
export async function ask(log: EventLog, q: Question, from?: QueryOptions['from']): Promise<Answer> {
  const { answerCallees, answerDef, answerFind, answerHistory, answerRefs, ANSWER_VERSIONS } = await import('../query/answer.ts');
  switch (q.q) {
    case 'find':
      return answerFind(log, q.name, { ...filters(q), kind: q.kind, exact: q.exact, asOf: q.asOf, from });
    case 'def':
      return answerDef(log, q.path, { ...filters(q), asOf: q.asOf, from });
    case 'refs':
      return answerRefs(log, q.path, { ...filters(q), asOf: q.asOf, edgeKind: q.kind, unresolved: q.unresolved, from });
    case 'callers':
      return answerRefs(log, q.path, { ...filters(q), asOf: q.asOf, edgeKind: 'calls', unresolved: q.unresolved, from }, 'callers');
    case 'callees':
      return answerCallees(log, q.path, { ...filters(q), asOf: q.asOf, resolved: q.resolved, from });
    case 'history':
      return answerHistory(log, q.path, { ...filters(q), asOf: q.asOf, from });
    case 'diff': {
      // the diff (and what it loads) only for a diff
      const { diff } = await import('../query/diff.ts');
      return { question: 'diff', version: ANSWER_VERSIONS.diff, ...(await diff(log, { from: q.from, to: q.to, fromRev: q.fromRev, toRev: q.toRev, repo: q.repo, krate: q.krate, limit: q.limit, excludeTests: q.excludeTests, moves: q.moves, public: q.public })) };
    }
  }
}

function filters(q: Filters): Filters {
  return { repo: q.repo, krate: q.krate, limit: q.limit, excludeTests: q.excludeTests, abs: q.abs, context: q.context };
}

// ---- values ------------------------------------------------------------------

/**
 * An `asOf` value: digits = a lake generation; an ISO 8601 date or time; else
 * a commit id, prefix, tag, branch, HEAD or REV@{DATE} of an ingested repo
 * (resolved when read: query/as-of.ts).
 * Throws BadQuestion naming `what`.
 */
export function parseAsOf(text: string, what = 'asOf'): AsOf {
  if (/^\d+$/.test(text)) return { generation: BigInt(text) };
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) throw new BadQuestion(`${what}: "${text}" is not an ISO 8601 time such as 2024-05-01T12:00:00Z`);
    return { time: new Date(ms) };
  }
  // REV@{DATE} / @{DATE}: the repo's history as of DATE (query/as-of.ts); DATE is ISO 8601
  const dated = /^(.*)@\{([^}]*)\}$/.exec(text);
  if (dated) {
    if (!/^\d{4}-\d{2}-\d{2}/.test(dated[2]!) || Number.isNaN(Date.parse(dated[2]!))) {
      throw new BadQuestion(`${what}: expected an ISO 8601 date or time inside @{…} such as main@{2024-05-01T12:00:00Z}; found "${text}"`);
    }
    if (dated[1] === '') return { rev: text };
  }
  const name = dated ? dated[1]! : text;
  // a commit name must be a possible git ref name (no spaces, `..`, `~^:?*[\`, control characters, leading `-` or `/`)
  if (name === '' || /[\s~^:?*[\\\x00-\x1f\x7f]|\.\.|^[-/]|\/$|\.lock$|@\{/.test(name)) {
    throw new BadQuestion(
      `${what}: expected a generation number, an ISO 8601 time such as 2024-05-01T12:00:00Z, or a commit id, tag, branch, HEAD or REV@{DATE} of an ingested repo; found "${text}"`,
    );
  }
  return { rev: text };
}

/** An `asOf` as text (the inverse of parseAsOf; times in ISO 8601 UTC to the millisecond). */
export function asOfText(a: AsOf): string {
  return 'generation' in a ? String(a.generation) : 'time' in a ? a.time.toISOString() : a.rev;
}

/** A generation number (`from`, `to`). */
export function parseGeneration(text: string, what: string): bigint {
  if (!/^\d+$/.test(text)) throw new BadQuestion(`${what}: expected a generation number, found "${text}"`);
  return BigInt(text);
}

export function parseEdgeKind(text: string, what = 'kind'): EdgeKind {
  if (!(EDGE_KINDS as readonly string[]).includes(text)) throw new BadQuestion(`${what}: expected one of ${EDGE_KINDS.join(', ')}, found "${text}"`);
  return text as EdgeKind;
}

/** A count (`limit`): a non-negative integer. */
export function parseCount(text: string, what: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new BadQuestion(`${what}: expected a non-negative integer, found "${text}"`);
  return Number(text);
}

function parseFlag(text: string, what: string): boolean {
  if (text === 'true' || text === '1' || text === '') return true;
  if (text === 'false' || text === '0') return false;
  throw new BadQuestion(`${what}: expected true or false, found "${text}"`);
}

function nonEmpty(text: string, what: string, example: string): string {
  if (text.trim() === '') throw new BadQuestion(`${what}: expected ${example}, found an empty string`);
  return text;
}

// ---- the wire ------------------------------------------------------------------

/**
 * Read a question from its route name and parameters (each given once).
 * Unknown names are the caller's 404; everything else wrong is a BadQuestion.
 */
export function parseQuestion(name: QuestionName, params: Iterable<[string, string]>): Question {
  const spec = QUESTION_PARAMS[name];
  const known = new Set([...spec.required, ...spec.optional]);
  const p = new Map<string, string>();
  for (const [k, v] of params) {
    if (!known.has(k)) throw new BadQuestion(`unknown parameter "${k}" for ${name} (expected ${[...known].join(', ')})`);
    if (p.has(k)) throw new BadQuestion(`parameter "${k}" given twice ("${p.get(k)}" and "${v}")`);
    p.set(k, v);
  }
  const missing = spec.required.filter((k) => !p.has(k));
  if (missing.length > 0) throw new BadQuestion(`${name}: missing parameter ${missing.join(' and ')}`);
  const opt = <T>(k: string, f: (v: string) => T): T | undefined => (p.has(k) ? f(p.get(k)!) : undefined);
  const asOf = opt('asOf', (v) => parseAsOf(v));
  const flag = (k: string): boolean | undefined => opt(k, (v) => parseFlag(v, k) || undefined);
  const f: Filters = {
    repo: opt('repo', (v) => nonEmpty(v, 'repo', 'a repo name')),
    krate: opt('krate', (v) => nonEmpty(v, 'krate', 'a crate (name or name@version)')),
    limit: opt('limit', (v) => parseCount(v, 'limit')),
    excludeTests: flag('excludeTests'),
    abs: flag('abs'),
    context: opt('context', (v) => parseCount(v, 'context')),
  };
  const path = (): string => nonEmpty(p.get('path')!, 'path', 'a PATH such as regex::Regex::new');
  switch (name) {
    case 'find':
      return dropUndefined({ q: name, name: nonEmpty(p.get('name')!, 'name', 'a NAME'), kind: opt('kind', (v) => v), exact: flag('exact'), ...f, asOf });
    case 'refs':
      return dropUndefined({ q: name, path: path(), kind: opt('kind', (v) => parseEdgeKind(v)), unresolved: flag('unresolved'), ...f, asOf });
    case 'callers':
      return dropUndefined({ q: name, path: path(), unresolved: flag('unresolved'), ...f, asOf });
    case 'callees':
      return dropUndefined({ q: name, path: path(), resolved: flag('resolved'), ...f, asOf });
    case 'diff':
      for (const [g, rev] of [['from', 'fromRev'], ['to', 'toRev']] as const) {
        if (!p.has(g) && !p.has(rev)) throw new BadQuestion(`diff: missing parameter ${g} (a generation) or ${rev} (a commit, tag or branch of an ingested repo)`);
        if (p.has(g) && p.has(rev)) throw new BadQuestion(`diff: give ${g} (a generation) or ${rev} (a commit), not both`);
      }
      return dropUndefined({
        q: name,
        from: opt('from', (v) => parseGeneration(v, 'from')),
        to: opt('to', (v) => parseGeneration(v, 'to')),
        fromRev: opt('fromRev', (v) => nonEmpty(v, 'fromRev', 'a commit, tag or branch')),
        toRev: opt('toRev', (v) => nonEmpty(v, 'toRev', 'a commit, tag or branch')),
        repo: opt('repo', (v) => v),
        krate: f.krate,
        limit: f.limit,
        excludeTests: f.excludeTests,
        moves: opt('moves', (v) => parseFlag(v, 'moves')),
        public: opt('public', (v) => parseFlag(v, 'public')),
      });
    default:
      return dropUndefined({ q: name, path: path(), ...f, asOf });
  }
}

/** The parameters of a question on the wire (parseQuestion reads them back to an equal question). */
export function questionParams(q: Question): [string, string][] {
  const out: [string, string][] = [];
  const put = (k: string, v: string | number | boolean | bigint | AsOf | undefined): void => {
    if (v === undefined || v === false) return;
    out.push([k, typeof v === 'object' ? asOfText(v) : v === true ? 'true' : String(v)]);
  };
  for (const [k, v] of Object.entries(q)) if (k !== 'q') put(k, v as string | number | boolean | bigint | AsOf | undefined);
  return out;
}

/** A canonical text of the question (cache keys): its route and sorted parameters. */
export function questionKey(q: Question): string {
  return `${q.q}?${questionParams(q)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&')}`;
}

function dropUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}
