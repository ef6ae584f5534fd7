// `POST /api/sql` on `mimir serve` (off unless the server was started with
// --allow-sql): one read-only SELECT over the lake, through the same
// in-process DuckDB views `mimir sql` uses (lake/sql: every table a view built
// from its live files at one lake generation, deletes applied; file access
// limited to those files; anything but one SELECT/EXPLAIN refused before it
// runs). Body: `{"sql": "…", "asOf"?: generation | time | commit, "limit"?: N}`.
//
// Invariants: at most `limit` rows come back (default 1000, at most
// MAX_SQL_ROWS; `truncated` says when there were more — DuckDB stops there,
// the rest is never computed into the answer); 64-bit integers (and wider)
// are JSON strings, so no client loses digits; the views are those of the one
// generation the request pinned. The server's time limit holds: on a timeout
// the query is interrupted (DuckDB's interrupt) and the request gets a 504.
// DuckDB is loaded by the first request, not when the server starts.
// Crash story: nothing written — DuckDB runs in memory and the session is
// closed whatever happens.
import type { Lake } from '../lake/lake.ts';
import type { SqlColumn, SqlSession } from '../lake/sql/session.ts';
import type { DuckDBValue } from '@duckdb/node-api';
import { preempt } from '../lake/preempt.ts';
import type { AsOf } from '../query/index.ts';
import { BadQuestion, parseAsOf } from './questions.ts';

/** Rows an answer holds unless the request asks for fewer. */
export const DEFAULT_SQL_ROWS = 1000;
/** The most rows one answer may hold (about 100 MB of JSON at 1 KB a row). */
export const MAX_SQL_ROWS = 100_000;

export interface SqlRequest {
  sql: string;
  asOf?: AsOf;
  limit: number;
}

export interface SqlAnswer {
  generation: bigint;
  columns: SqlColumn[];
  rows: Record<string, unknown>[];
  truncated: boolean;
  limit: number;
}

/** The request's parameters (a POST body's, as name/text pairs). */
export function parseSqlParams(params: [string, string][]): SqlRequest {
  let sql: string | undefined;
  let asOf: AsOf | undefined;
  let limit = DEFAULT_SQL_ROWS;
  for (const [k, v] of params) {
    if (k === 'sql') sql = v;
    else if (k === 'asOf') asOf = parseAsOf(v);
    else if (k === 'limit') {
      if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > MAX_SQL_ROWS) throw new BadQuestion(`limit: expected a row count from 1 to ${MAX_SQL_ROWS}, found "${v}"`);
      limit = Number(v);
    } else throw new BadQuestion(`unknown parameter "${k}" for sql (expected sql, asOf, limit)`);
  }
  if (sql === undefined || sql.trim() === '') throw new BadQuestion('sql: expected one SELECT statement, e.g. {"sql": "select count(*) from code_nodes"}');
  return { sql, ...(asOf === undefined ? {} : { asOf }), limit };
}

/** The statement was refused (not one SELECT) or failed in DuckDB (an unknown table or column, a type error, …): the request's fault, a 400. */
export class SqlFailed extends Error {}

/** A value for JSON out: bigints (64-bit and wider integers) as decimal strings, inside lists and structs too. */
function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}

/** Run `req.sql` over the lake's tables at generation `g`; `signal` interrupts it. SqlRefusedError for anything but one SELECT, SqlFailed when DuckDB fails it. */
export async function answerSql(lake: Lake, g: bigint, req: SqlRequest, signal: AbortSignal): Promise<SqlAnswer> {
  const { SqlSession, SqlRefusedError, jsValue } = await import('../lake/sql/session.ts');
  const { addLakeViews } = await import('../lake/sql/lake-views.ts');
  const session = await SqlSession.open();
  const stop = (): void => session.interrupt();
  signal.addEventListener('abort', stop);
  try {
    await addLakeViews(session, lake, g);
    signal.throwIfAborted();
    try {
      return { generation: g, ...(await firstRows(session, req, signal, jsValue)), limit: req.limit };
    } catch (e) {
      signal.throwIfAborted(); // an interrupted query fails with DuckDB's error: the timeout is the answer
      if (e instanceof SqlRefusedError) throw new SqlFailed(e.message);
      throw new SqlFailed(`the statement failed at lake generation ${g}: ${(e as Error).message} — nothing else run`);
    }
  } finally {
    signal.removeEventListener('abort', stop);
    session.close();
  }
}

/** The first `req.limit` rows of the query's result, and whether it had more. */
async function firstRows(session: SqlSession, req: SqlRequest, signal: AbortSignal, jsValue: (v: DuckDBValue) => unknown): Promise<{ columns: SqlColumn[]; rows: Record<string, unknown>[]; truncated: boolean }> {
  const { columns, chunks } = await session.query(req.sql);
  const rows: Record<string, unknown>[] = [];
  for await (const chunk of chunks) {
    signal.throwIfAborted();
    for (const r of chunk) {
      if (rows.length === req.limit) return { columns, rows, truncated: true };
      const o: Record<string, unknown> = {};
      columns.forEach((c, i) => (o[c.name] = jsonSafe(jsValue(r[i]!))));
      rows.push(o);
    }
    await preempt();
  }
  return { columns, rows, truncated: false };
}
