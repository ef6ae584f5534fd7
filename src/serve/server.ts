// `mimir serve`: a long-running, read-only JSON HTTP API over one lake, on
// node:http. Routes: `/api` (what the server answers), `/api/lake` (tables,
// generations, ring mode, runs, crates), `/api/source` (lines of a file's
// stored text: source.ts) and `/api/<question>` for find, def, refs,
// callers, callees, history and diff (questions.ts: parameters in the query
// string, or as a JSON object in a POST body), each with `asOf`; `POST
// /api/sql` (sql.ts: one read-only SELECT through lake/sql's DuckDB views)
// only when started with `allowSql`. The Iceberg REST catalog's read side is
// mounted under `/iceberg` (rest-catalog.ts: engines take
// `http://HOST:PORT/iceberg` as their catalog URI); with a `token` it and
// /api/sql require `Authorization: Bearer <token>`, and a server bound beyond
// loopback without one refuses both. The web UI
// (web.ts; built from web/ into dist/web/) is served on `/`, `/search`,
// `/lake`, `/item/<path>`, `/graph/<path>`, `/history/<path>`, `/diff`
// and `/assets/<hashed name>`: it asks the same API.
//
// Generations: every request reads at one lake generation — the catalog's
// pointer generation when the request starts (so new ingests are picked up
// without a restart), or the one its `asOf` names — through a handle pinned
// to it for the whole request (pins.ts), so an ingest committing meanwhile is
// never half seen. Answers are cached by (pointer generation, read
// generation, question) in a byte-bounded LRU (cache.ts): entries never go
// stale, new generations make new keys.
//
// Limits: at most `readers` answers computed at once, `queue` more waiting;
// a request has `timeoutMs` in all (503 if it never got a reader, 504 if its
// answer was not ready: its work is then cancelled, nothing is cached). The
// limit can fire because reads let the event loop turn every few ms
// (lake/preempt.ts): the lake's reads are synchronous, and a scan that never
// yields would hold off every timer, connection and signal until it ends. URLs above
// `maxUrlBytes` get 414, bodies above `maxBodyBytes` 413. Errors are JSON
// `{"error": message, "status": code}`: 400 malformed question, 403 a
// non-loopback Host on a loopback server (DNS rebinding), 404 unknown route
// or a name the lake does not have (query/scope.ts UnknownNameError: the
// body then carries its `suggestions`, the closest names, best first),
// 405 wrong method, 500 a failed read.
//
// Safety: read-only — the log is opened without creating or evolving tables
// and every read goes through a pinned handle; read leases are the only
// writes. No request names a file: routes are fixed strings and parameters
// are matched against column values; and the lake's FileIO has its reads
// confined to the lake folder (Lake `confineReads`, turned on here for any
// lake given), so even a crafted metadata file or a symlink naming a file
// elsewhere gets an error, never that file's contents. Binds 127.0.0.1 unless told otherwise (cli/serve.ts warns).
// Crash story: nothing to recover; a killed server's leases expire.
import * as http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { Lake } from '../lake/lake.ts';
import { EventLog } from '../log/event-log.ts';
import { CODE_NODE_EVENTS, ident, qualified } from '../log/schema.ts';
import { JsonSyntaxError, parseJson, stringifyJson } from '../lake/spec/json.ts';
import { AsOfError, DiffRangeError, generationOf, type AsOf } from '../query/index.ts';
import { AnswerCache } from './cache.ts';
import { enableReadCache } from '../lake/io/read-cache.ts';
import { Limiter, QueueFull, QueueTimeout } from './limiter.ts';
import { withinSignal } from '../lake/preempt.ts';
import { lakeInfo } from './lake-info.ts';
import { Pins } from './pins.ts';
import { BadQuestion, QUESTION_PARAMS, ask, isQuestionName, parseAsOf, parseQuestion, questionKey, type Question } from './questions.ts';
import { SOURCE_PARAMS, SourceNotFound, answerSource, parseSourceParams } from './source.ts';
import { ASSET_PREFIX, WebAssets, isPageRoute, sendNotBuilt, sendWebFile } from './web.ts';
import { REST_PREFIX, RestError, answerRest, authRefusal, isRestPath, restErrorReply, type RestReply } from './rest-catalog.ts';
import { SqlFailed, answerSql, parseSqlParams } from './sql.ts';

export interface ServeOptions {
  /** The lake: an open Lake (the server confines its reads to its folder, and closes it when it stops) or a lake folder. */
  lake: Lake | string;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 7700; 0 = any free port). */
  port?: number;
  /** A request's time limit, queueing included (default 30 s). */
  timeoutMs?: number;
  /** Answers computed at once (default 4). */
  readers?: number;
  /** Requests waiting for a reader beyond those (default 256). */
  queue?: number;
  /** Answer cache size (default 64 MiB; 0 = no cache). */
  cacheBytes?: number;
  /** Longest request target (default 8 KiB). */
  maxUrlBytes?: number;
  /** Largest POST body (default 64 KiB). */
  maxBodyBytes?: number;
  /** How long an unused pinned handle (a lease) is kept (default 10 s). */
  pinIdleMs?: number;
  /** Called once per request, after the response (an access log). */
  onRequest?: (r: RequestLog) => void;
  /** The built web UI (scripts/build-web.ts; default dist/web/ of this package). */
  webDir?: string;
  /** Answer `POST /api/sql` (default false: the route answers 403 naming the option). */
  allowSql?: boolean;
  /** A bearer token the REST catalog and /api/sql require (none: no check on loopback; refused beyond it). */
  token?: string;
  /** Test hook: awaited inside a request, after its handle is pinned and before it reads. */
  testAfterPin?: (generation: bigint) => Promise<void>;
}

export const DEFAULT_PORT = 7700;
export const DEFAULT_HOST = '127.0.0.1';

export interface RequestLog {
  method: string;
  url: string;
  status: number;
  ms: number;
  cache: 'hit' | 'miss' | null;
  generation: bigint | null;
}

export interface ServerStats {
  requests: number;
  active: number;
  waiting: number;
  cache: { entries: number; bytes: number; maxBytes: number; hits: number; misses: number };
  pinnedGenerations: bigint[];
}

export interface RunningServer {
  /** `http://host:port` (IPv6 hosts in brackets). */
  url: string;
  host: string;
  port: number;
  lakeRoot: string;
  /** The catalog's pointer generation now. */
  generation(): bigint;
  stats(): ServerStats;
  /** Stop accepting, cancel the answers in flight (their requests get a 503), close connections after at most `graceMs`, release every lease, close the lake. */
  close(graceMs?: number): Promise<void>;
}

/** A request the server refuses, with its HTTP status. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** The closest names the lake has (an unknown name's 404). */
    readonly suggestions?: string[],
  ) {
    super(message);
  }
}

/** This package's folder (src/serve/ and dist/serve/ are both two below it). */
const PACKAGE_ROOT = nodePath.resolve(nodePath.dirname(fileURLToPath(import.meta.url)), '..', '..');

const VERSION = (() => {
  try {
    return (JSON.parse(readFileSync(nodePath.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
})();

/** Is `host` a loopback name or address (127.0.0.0/8, ::1, localhost)? */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** Open the lake read-only and start listening. */
export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const lake = typeof opts.lake === 'string' ? openLake(opts.lake) : opts.lake;
  lake.io.confineReads(); // never a file outside the lake, whoever opened it
  // a lake of its own (read-only): each metadata file, manifest and Parquet
  // footer is parsed once, not per request (lake/io/read-cache.ts, 64 MiB)
  if (typeof opts.lake === 'string') enableReadCache(lake.io);
  const root = lake.root;
  let log: EventLog;
  try {
    if (!lake.tableExists(ident(CODE_NODE_EVENTS))) {
      throw new Error(`the lake at ${root} has no event log (no table ${qualified(CODE_NODE_EVENTS)}); create it with 'mimir init' — nothing served`);
    }
    log = await EventLog.open(lake, { readOnly: true });
    await import('../query/index.ts'); // loaded here, not by the first request
  } catch (e) {
    lake.close();
    throw e;
  }
  const host = opts.host ?? DEFAULT_HOST;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxUrl = opts.maxUrlBytes ?? 8 * 1024;
  const maxBody = opts.maxBodyBytes ?? 64 * 1024;
  const pins = new Pins(log, opts.pinIdleMs);
  const cache = new AnswerCache(opts.cacheBytes ?? 64 * 1024 * 1024);
  const limiter = new Limiter(opts.readers ?? 4, opts.queue ?? 256);
  const computing = new Set<string>();
  const loopbackOnly = isLoopback(host);
  const web = new WebAssets(opts.webDir ?? nodePath.join(PACKAGE_ROOT, 'dist', 'web'));
  let requests = 0;

  /** The generation a read as of `asOf` sees (the pointer generation when absent); a future one or an unknown commit is refused. */
  const readGeneration = async (asOf: AsOf | undefined, now: bigint): Promise<bigint> => {
    if (asOf === undefined) return now;
    try {
      return await generationOf(log, asOf, now, 'asOf');
    } catch (e) {
      if (e instanceof AsOfError) throw new HttpError(400, e.message);
      throw e;
    }
  };

  /** Cancels of the computations in flight (close() cancels them all) and their ends (close() waits for them, briefly). */
  const inFlight = new Map<AbortController, Promise<unknown>>();

  /** Requests waiting on each key's answer, and the cancel of the computation in flight for it. */
  const waiting = new Map<string, number>();
  const computingCancel = new Map<string, AbortController>();

  /**
   * The answer body for `key`: from the cache, or computed by `fn` with a
   * reader, within the deadline. At the deadline the computation this request
   * started is cancelled (its reads stop at their next step: lake/preempt.ts)
   * and the request gets a 504; a request that joined another's computation
   * gets the same outcome as that one. When every request waiting for a key's
   * answer has gone (its client closed the connection: a search box that typed
   * on, a closed tab), that computation is cancelled too and its reader freed
   * for the questions still asked; nothing is cached.
   */
  const answer = async (key: string, deadline: number, fn: (signal: AbortSignal) => Promise<unknown>, client?: http.ServerResponse): Promise<{ body: Buffer; hit: boolean }> => {
    const cancel = new AbortController();
    const compute = (): Promise<Buffer> => {
      // this request computes the key's answer (others join it through the cache): its cancel stops the work, queued or running
      computingCancel.set(key, cancel);
      return limiter
        .run(async () => {
          computing.add(key);
          const work = withinSignal(cancel.signal, () => fn(cancel.signal));
          inFlight.set(cancel, work.catch(() => undefined));
          try {
            return Buffer.from(stringifyJson(await work));
          } finally {
            computing.delete(key);
            inFlight.delete(cancel);
          }
        }, deadline)
        .finally(() => {
          if (computingCancel.get(key) === cancel) computingCancel.delete(key);
        });
    };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const e = computing.has(key) ? overTime() : new HttpError(503, `no reader was free within the time limit (${timeoutMs} ms): ${limiter.active} answers in progress, ${limiter.waiting} waiting; nothing was read — retry later`);
        cancel.abort(e);
        reject(e);
      }, Math.max(0, deadline - Date.now()));
    });
    waiting.set(key, (waiting.get(key) ?? 0) + 1);
    let counted = true;
    const leave = (): number => {
      if (!counted) return waiting.get(key) ?? 0;
      counted = false;
      const n = (waiting.get(key) ?? 1) - 1;
      if (n > 0) waiting.set(key, n);
      else waiting.delete(key);
      return n;
    };
    const gone = (): void => {
      if (client?.writableFinished) return;
      // the last one waiting has gone: stop the work (a queued one never starts)
      if (leave() === 0) {
        computingCancel.get(key)?.abort(new HttpError(499, 'the client closed the connection before the answer was ready; its work was stopped'));
      }
    };
    client?.once('close', gone);
    try {
      return await Promise.race([cache.get(key, compute), late]);
    } finally {
      clearTimeout(timer);
      client?.off('close', gone);
      leave();
    }
  };

  const overTime = (): HttpError =>
    new HttpError(
      504,
      `the answer was not ready within the time limit (${timeoutMs} ms): its work was stopped and nothing was cached — narrow the question (a longer literal part of the name, kind, repo or krate, a limit) or start the server with a longer --timeout`,
    );

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<RequestLog> => {
    const t0 = performance.now();
    const deadline = Date.now() + timeoutMs;
    const entry: RequestLog = { method: req.method ?? '?', url: req.url ?? '', status: 200, ms: 0, cache: null, generation: null };
    try {
      const target = req.url ?? '/';
      if (Buffer.byteLength(target) > maxUrl) throw new HttpError(414, `the request target is ${Buffer.byteLength(target)} bytes, above the limit of ${maxUrl}`);
      if (loopbackOnly && req.headers.host !== undefined && !isLoopback(hostName(req.headers.host))) {
        throw new HttpError(403, `this server listens on loopback and answers only requests addressed to a loopback name; found Host "${req.headers.host}"`);
      }
      let url: URL;
      try {
        url = new URL(target, 'http://mimir.invalid');
      } catch {
        throw new HttpError(400, `malformed request target "${target.slice(0, 200)}"`);
      }
      const route = url.pathname.replace(/\/+$/, '') || '/';
      const method = req.method ?? 'GET';
      if (isRestPath(url.pathname)) {
        // a body (a refused write's) is read and dropped first, so the connection stays usable
        const whole = await drainBody(req, maxBody);
        if (!whole) res.setHeader('connection', 'close');
        return sendRest(req, res, entry, await answerRest({ lake, pins, token: opts.token, exposed: !loopbackOnly }, method, url, req.headers), t0);
      }
      if (isPageRoute(url.pathname) || url.pathname.startsWith(ASSET_PREFIX)) {
        const f = web.file(url.pathname);
        if (f !== undefined) {
          if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `${method} is not allowed on ${url.pathname} (allowed: GET, HEAD)`, { allow: 'GET, HEAD' });
          entry.status = 'missing' in f ? sendNotBuilt(req, res, web.dir, f.missing, PACKAGE_ROOT) : sendWebFile(req, res, f);
          entry.ms = performance.now() - t0;
          return entry;
        }
      }
      const name = route.startsWith('/api/') ? route.slice('/api/'.length) : route === '/api' ? '' : undefined;
      if (name === undefined || (name !== '' && name !== 'lake' && name !== 'source' && name !== 'sql' && !isQuestionName(name))) {
        throw new HttpError(404, `no route ${JSON.stringify(url.pathname)}: expected /api, /api/lake, /api/source, /api/sql or /api/<question> (${Object.keys(QUESTION_PARAMS).join(', ')}), the Iceberg REST catalog under ${REST_PREFIX}/v1/, or a page of the web UI (/, /search, /lake, /item/<path>, /graph/<path>, /history/<path>, /diff)`);
      }
      if (name === 'sql') {
        if (!opts.allowSql) throw new HttpError(403, 'POST /api/sql is off on this server: start mimir serve with --allow-sql to run read-only SQL over the lake; nothing run');
        const refused = authRefusal({ token: opts.token, exposed: !loopbackOnly }, req.headers, '/api/sql');
        if (refused) throw new HttpError(refused.status, refused.message, refused.headers);
      }
      const allowed = name === '' ? ['GET', 'HEAD'] : name === 'sql' ? ['POST'] : ['GET', 'HEAD', 'POST'];
      if (!allowed.includes(method)) throw new HttpError(405, `${method} is not allowed on ${route} (allowed: ${allowed.join(', ')})`, { allow: allowed.join(', ') });
      const params = method === 'POST' ? await bodyParams(req, url, maxBody) : [...url.searchParams];
      const now = lake.catalog.pointerGeneration();
      let key: string;
      let g: bigint;
      let fn: (signal: AbortSignal) => Promise<unknown>;
      if (name === '') {
        if (params.length > 0) throw new HttpError(400, `/api takes no parameters, found "${params[0]![0]}"`);
        const body = Buffer.from(stringifyJson(index(now)));
        return send(res, entry, 200, body, { 'x-mimir-generation': String(now) }, t0);
      } else if (name === 'lake') {
        const p = lakeParams(params);
        g = await readGeneration(p.asOf, now);
        key = `${now}|${g}|lake?generations=${p.generations}&runs=${p.runs}`;
        fn = () => pins.with(g, (pinned) => lakeInfo(pinned, { ...p, now }));
      } else if (name === 'sql') {
        const q = parseSqlParams(params);
        g = await readGeneration(q.asOf, now);
        key = `${now}|${g}|sql?${JSON.stringify({ sql: q.sql, limit: q.limit })}`;
        fn = (signal) => pins.with(g, () => answerSql(lake, g, q, signal));
      } else if (name === 'source') {
        const { asOf, ...p } = parseSourceParams(params);
        g = await readGeneration(asOf, now);
        key = `${now}|${g}|source?${JSON.stringify(p)}`;
        fn = () => pins.with(g, (pinned) => answerSource(pinned, p));
      } else {
        const q = question(name, params);
        if (q.q === 'diff') {
          for (const x of [q.from, q.to]) if (x !== undefined && x > now) throw new HttpError(400, `generation ${x} is in the future (the lake is at ${now})`);
          g = now;
          // pinned at `now`, like every answer: diff reads the lake's now (its ends' bound, the runs a rev is
          // looked up in) from its handle, and an unpinned one would read a later generation than the key's
          fn = () => pins.with(now, (pinned) => ask(pinned, q));
        } else {
          g = await readGeneration(q.asOf, now);
          const at: Question = { ...q };
          delete (at as { asOf?: AsOf }).asOf;
          fn = () =>
            pins.with(g, async (pinned) => {
              await opts.testAfterPin?.(g);
              return ask(pinned, at);
            });
        }
        const { asOf: _unused, ...rest } = q as Question & { asOf?: AsOf };
        void _unused;
        key = `${now}|${g}|${questionKey(rest as Question)}`;
      }
      entry.generation = g;
      const { body, hit } = await answer(key, deadline, fn, res);
      entry.cache = hit ? 'hit' : 'miss';
      return send(res, entry, 200, body, { 'x-mimir-generation': String(g), 'x-mimir-cache': entry.cache }, t0);
    } catch (e) {
      const err =
        e instanceof HttpError
          ? e
          : e instanceof BadQuestion || e instanceof DiffRangeError || e instanceof AsOfError || e instanceof SqlFailed
            ? new HttpError(400, e.message)
            : e instanceof Error && e.name === 'UnknownNameError'
              ? new HttpError(404, e.message, {}, (e as Error & { suggestions?: string[] }).suggestions)
            : e instanceof SourceNotFound
              ? new HttpError(404, e.message)
            : e instanceof QueueFull || e instanceof QueueTimeout
              ? new HttpError(503, e.message)
              : new HttpError(500, (e as Error)?.message ?? String(e));
      if (isRestPath((req.url ?? '/').split('?')[0]!)) {
        // refused before the REST catalog saw it (Host check, target too long): still in the spec's error model
        const type = err.status === 403 ? 'ForbiddenException' : err.status >= 500 ? 'ServiceFailureException' : 'BadRequestException';
        return sendRest(req, res, entry, restErrorReply(new RestError(err.status, type, err.message, err.headers)), t0);
      }
      const body = Buffer.from(stringifyJson({ error: err.message, status: err.status, ...(err.suggestions !== undefined ? { suggestions: err.suggestions } : {}) }));
      return send(res, entry, err.status, body, err.headers, t0);
    }
  };

  const index = (now: bigint): unknown => ({
    name: 'mimir',
    version: VERSION,
    lake: root,
    generation: now,
    routes: {
      '/api': 'this index',
      '/api/lake': { optional: ['asOf', 'generations', 'runs'] },
      '/api/source': SOURCE_PARAMS,
      '/api/sql': opts.allowSql ? { method: 'POST', body: { required: ['sql'], optional: ['asOf', 'limit'] } } : 'off (start the server with --allow-sql)',
      [`${REST_PREFIX}/v1/config`]: `the Iceberg REST catalog (read side): engines take the catalog URI <this server>${REST_PREFIX}`,
      ...Object.fromEntries(Object.entries(QUESTION_PARAMS).map(([k, v]) => [`/api/${k}`, v])),
    },
    stats: stats(),
  });

  const stats = (): ServerStats => ({
    requests,
    active: limiter.active,
    waiting: limiter.waiting,
    cache: { entries: cache.size, bytes: cache.usedBytes, maxBytes: cache.maxBytes, hits: cache.hits, misses: cache.misses },
    pinnedGenerations: pins.generations(),
  });

  const server = http.createServer((req, res) => {
    requests++;
    handle(req, res).then(
      (entry) => opts.onRequest?.(entry),
      () => undefined,
    );
  });
  server.headersTimeout = Math.min(timeoutMs, 20_000);
  server.requestTimeout = timeoutMs + 5_000;
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? DEFAULT_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((e: NodeJS.ErrnoException) => {
    pins.close();
    log.close();
    lake.close();
    throw new Error(`cannot listen on ${host}:${opts.port ?? DEFAULT_PORT}: ${e.code ?? ''} ${e.message} — nothing served`);
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.address.includes(':') ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${addr.port}`,
    host: addr.address,
    port: addr.port,
    lakeRoot: root,
    generation: () => lake.catalog.pointerGeneration(),
    stats,
    close: (graceMs = 5_000) =>
      (closing ??= new Promise<void>((resolve) => {
        // nothing new starts; what runs is cancelled and stops at its next step (its request gets a 503)
        const stopping = new HttpError(503, 'the server is stopping: the answer was not computed — retry against a running server');
        limiter.close(stopping);
        const running = [...inFlight.values()];
        for (const c of inFlight.keys()) c.abort(stopping);
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        let graceOver!: () => void;
        const grace = setTimeout(() => graceOver(), graceMs);
        let open = 2;
        const closed = (): void => {
          if (--open > 0) return;
          clearTimeout(force);
          clearTimeout(grace);
          pins.close();
          log.close();
          lake.close();
          resolve();
        };
        server.close(closed);
        server.closeIdleConnections();
        // the lake is closed only once the cancelled reads have stopped (or the grace is over)
        void Promise.race([Promise.allSettled(running), new Promise<void>((r) => (graceOver = r))]).then(closed);
      })),
  };
}

function openLake(dir: string): Lake {
  const root = nodePath.resolve(dir);
  if (!existsSync(nodePath.join(root, 'catalog.db'))) throw new Error(`no lake at ${root} (no catalog.db there); give --lake DIR or set MIMIR_LAKE — nothing served`);
  return Lake.open(root, { create: false, confineReads: true });
}

function hostName(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return colon >= 0 ? hostHeader.slice(0, colon) : hostHeader;
}

function question(name: string, params: [string, string][]): Question {
  if (!isQuestionName(name)) throw new HttpError(404, `no question ${name}`);
  return parseQuestion(name, params);
}

/** `/api/lake` parameters: asOf, generations and runs (counts, default 20, at most 1000). */
function lakeParams(params: [string, string][]): { asOf?: AsOf; generations: number; runs: number } {
  const out: { asOf?: AsOf; generations: number; runs: number } = { generations: 20, runs: 20 };
  const seen = new Set<string>();
  for (const [k, v] of params) {
    if (seen.has(k)) throw new BadQuestion(`parameter "${k}" given twice`);
    seen.add(k);
    if (k === 'asOf') out.asOf = parseAsOf(v);
    else if (k === 'generations' || k === 'runs') {
      if (!/^\d+$/.test(v) || Number(v) > 1000) throw new BadQuestion(`${k}: expected a count from 0 to 1000, found "${v}"`);
      out[k] = Number(v);
    } else throw new BadQuestion(`unknown parameter "${k}" for lake (expected asOf, generations, runs)`);
  }
  return out;
}

/** A POST body: a JSON object of parameters (strings, numbers, booleans), at most `max` bytes. */
async function bodyParams(req: http.IncomingMessage, url: URL, max: number): Promise<[string, string][]> {
  if ([...url.searchParams].length > 0) throw new HttpError(400, 'give the parameters in the query string (GET) or as a JSON object in the body (POST), not both');
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > max) throw new HttpError(413, `the request body is ${declared} bytes, above the limit of ${max}`, { connection: 'close' });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) throw new HttpError(413, `the request body is above the limit of ${max} bytes`, { connection: 'close' });
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return [];
  let v: unknown;
  try {
    v = parseJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw new HttpError(400, `the body is not JSON: ${e.message}`);
    throw e;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HttpError(400, 'the body must be a JSON object of parameters, e.g. {"path": "regex::Regex::new"}');
  return Object.entries(v).map(([k, x]) => {
    if (typeof x === 'string') return [k, x];
    if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return [k, String(x)];
    throw new HttpError(400, `parameter "${k}": expected a string, number or boolean, found ${stringifyJson(x)}`);
  });
}

/** Read and drop a request's body; false when it is above `max` bytes (then it was not read to its end). */
async function drainBody(req: http.IncomingMessage, max: number): Promise<boolean> {
  if (Number(req.headers['content-length'] ?? 0) > max) return false;
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) return false;
  }
  return true;
}

/** A REST catalog reply: its own headers (no body for HEAD, 204 and 304). */
function sendRest(req: http.IncomingMessage, res: http.ServerResponse, entry: RequestLog, r: RestReply, t0: number): RequestLog {
  entry.status = r.status;
  entry.ms = performance.now() - t0;
  const g = r.headers['x-mimir-generation'];
  if (g !== undefined) entry.generation = BigInt(g);
  if (!res.headersSent && !res.destroyed) {
    const body = r.body !== undefined && r.status !== 204 && r.status !== 304 ? r.body : undefined;
    res.writeHead(r.status, { 'cache-control': 'no-store', ...r.headers, ...(body ? { 'content-length': String(body.length) } : {}) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
  return entry;
}

function send(res: http.ServerResponse, entry: RequestLog, status: number, body: Buffer, headers: Record<string, string>, t0: number): RequestLog {
  entry.status = status;
  entry.ms = performance.now() - t0;
  if (!res.headersSent && !res.destroyed) {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-store', ...headers });
    res.end(body);
  }
  return entry;
}
