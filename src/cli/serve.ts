// `mimir serve [--host H] [--port N] [--timeout D] [--readers N] [--cache-mb N]
// [--token T] [--allow-sql]`: the JSON HTTP API, the web UI and the Iceberg
// REST catalog's read side (under /iceberg) over the lake
// (src/serve/server.ts) until SIGINT or SIGTERM. `--token T` (or
// MIMIR_SERVE_TOKEN) makes the REST catalog and /api/sql require `Authorization:
// Bearer T`; beyond loopback they are refused without one. `--allow-sql` turns
// on `POST /api/sql`. Prints the URL on stdout (`--json`: an object) once listening; a
// host other than loopback gets a warning on stderr. `--access-log` prints a
// line per request on stderr. Read-only. On SIGINT or SIGTERM it stops:
// answers in flight are cancelled (their requests get a 503), connections
// close within 2 s, and should anything still hold the process it exits
// anyway after 5 s (a killed server's leases expire).
import type { CommandSpec, Context } from './command.ts';
import { UsageError, type Args } from './args.ts';
import { openExistingLake, parseDuration } from './log/common.ts';
import { DEFAULT_HOST, DEFAULT_PORT, isLoopback, startServer } from '../serve/server.ts';
import { REST_PREFIX } from '../serve/rest-catalog.ts';
import { preempt } from '../lake/preempt.ts';

/** How long connections may stay open after a stop signal, and how long until the process exits regardless (ms). */
const CLOSE_GRACE_MS = 2_000;
const EXIT_AFTER_MS = 5_000;

export const command: CommandSpec = {
  usage: '[--host H] [--port N] [--timeout D] [--readers N] [--cache-mb N] [--token T] [--allow-sql] [options]',
  description: [
    'Answers GET /api/<question>?<parameters> (find, def, refs, callers, callees, history, diff, each with',
    'asOf) and /api/lake with JSON, read-only, at the lake\'s current generation (picked up as ingests',
    'commit) or the one asOf names. Point the CLI at it with --server URL or MIMIR_SERVER=URL.',
    'Also an Iceberg REST catalog (read side) for engines: catalog URI http://HOST:PORT/iceberg (DuckDB, Spark,',
    'Trino, PyIceberg: docs/engines.md). Writes through it (commits, creates, drops, renames) are refused',
    'with 403: only mimir writes the lake. With --allow-sql, POST /api/sql {"sql": "select …"} runs one',
    'read-only SELECT over the same views as mimir sql.',
  ].join('\n'),
  positionals: [],
  options: [
    { name: 'host', kind: 'value', arg: 'H', help: `interface to listen on (default ${DEFAULT_HOST}; anything but loopback exposes the lake, with a warning)` },
    { name: 'port', kind: 'value', arg: 'N', help: `port (default ${DEFAULT_PORT}; 0 = any free port)` },
    { name: 'timeout', kind: 'value', arg: 'D', help: 'time limit of a request, queueing included (default 30s)' },
    { name: 'readers', kind: 'value', arg: 'N', help: 'answers computed at once (default 4)' },
    { name: 'cache-mb', kind: 'value', arg: 'N', help: 'answer cache size in MiB (default 64; 0 = none)' },
    { name: 'token', kind: 'value', arg: 'T', help: 'require "Authorization: Bearer T" on the REST catalog and /api/sql (default $MIMIR_SERVE_TOKEN; needed for them beyond loopback)' },
    { name: 'allow-sql', kind: 'flag', help: 'answer POST /api/sql (read-only SQL over the lake, at most 100000 rows, within --timeout)' },
    { name: 'access-log', kind: 'flag', help: 'one line per request on stderr (method, target, status, ms, cache)' },
  ],
  examples: ['mimir serve --lake ~/lake', 'MIMIR_SERVE_TOKEN="$(openssl rand -hex 16)" mimir serve --allow-sql --host 0.0.0.0', 'MIMIR_SERVER=http://127.0.0.1:7700 mimir callers regex::Regex::new', 'curl "http://127.0.0.1:7700/api/def?path=regex::Regex::new"'],
  pager: false,
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const host = args.value('host') ?? DEFAULT_HOST;
  const port = args.count('port') ?? DEFAULT_PORT;
  if (port > 65535) throw new UsageError(`--port: expected 0 to 65535, found ${port}`, args.commandPath);
  const timeout = args.value('timeout');
  const timeoutMs = timeout === undefined ? undefined : parseDuration(timeout, 'timeout', args.commandPath);
  if (timeoutMs === 0) throw new UsageError('--timeout: expected a duration above 0', args.commandPath);
  const readers = args.count('readers');
  if (readers === 0) throw new UsageError('--readers: expected at least 1', args.commandPath);
  const cacheMb = args.count('cache-mb');
  const token = args.value('token') ?? (process.env.MIMIR_SERVE_TOKEN || undefined);
  if (token !== undefined && !/^[\x21-\x7e]{8,}$/.test(token)) throw new UsageError('--token: expected at least 8 printable characters without spaces', args.commandPath);
  if (!isLoopback(host)) {
    ctx.out.err(`mimir serve: warning: listening on ${host}, not loopback — anyone who can reach this machine on port ${port} can read the whole lake through the JSON API (no authentication, no TLS)`);
    if (token === undefined) ctx.out.err('mimir serve: the Iceberg REST catalog (/iceberg) and /api/sql are off beyond loopback without a token: give --token T (or MIMIR_SERVE_TOKEN=T)');
  }
  const server = await startServer({
    lake: openExistingLake(ctx),
    host,
    port,
    timeoutMs,
    readers,
    cacheBytes: cacheMb === undefined ? undefined : cacheMb * 1024 * 1024,
    token,
    allowSql: args.flag('allow-sql'),
    onRequest: args.flag('access-log')
      ? (r) => ctx.out.err(`${r.method} ${r.url} ${r.status} ${r.ms.toFixed(1)}ms${r.cache ? ` ${r.cache}` : ''}${r.generation !== null ? ` g${r.generation}` : ''}`)
      : undefined,
    testAfterPin: busyHook(),
  });
  if (ctx.json) await ctx.out.json({ url: server.url, host: server.host, port: server.port, rest: `${server.url}${REST_PREFIX}`, lake: server.lakeRoot, generation: server.generation() });
  else await ctx.out.line(`mimir serve: listening on ${server.url} (lake ${server.lakeRoot}, generation ${server.generation()}; Iceberg REST catalog ${server.url}${REST_PREFIX}); stop with Ctrl-C`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  const s = server.stats();
  const exit = setTimeout(() => {
    ctx.out.err(`mimir serve: not stopped ${EXIT_AFTER_MS} ms after ${signal}; exiting (read leases expire by themselves)`);
    process.exit(1);
  }, EXIT_AFTER_MS);
  exit.unref();
  await server.close(CLOSE_GRACE_MS);
  clearTimeout(exit);
  ctx.out.err(`mimir serve: stopped (${signal}) after ${s.requests} requests; cache ${s.cache.hits} hits, ${s.cache.misses} misses`);
  return 0;
}

/**
 * Test hook (test/serve/preempt.test.ts), not documented: with
 * MIMIR_TEST_BUSY_ANSWER_MS=N every question first computes for N ms in
 * preempted steps, as a long scan of a large lake does.
 */
function busyHook(): (() => Promise<void>) | undefined {
  const ms = Number(process.env.MIMIR_TEST_BUSY_ANSWER_MS ?? '');
  if (!(ms > 0)) return undefined;
  return async () => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const step = Date.now() + 1;
      while (Date.now() < step); // a millisecond of CPU, as decoding a page is
      await preempt();
    }
  };
}
