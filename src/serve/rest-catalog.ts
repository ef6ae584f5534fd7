// The read side of the Apache Iceberg REST catalog protocol, served by
// `mimir serve` under `/iceberg` (a client's base URI is
// `http://HOST:PORT/iceberg`; it then calls `/iceberg/v1/config`, …). No
// `prefix` is advertised, so paths are `/iceberg/v1/namespaces/…`.
//
// Routes (all GET unless said): `/v1/config` (no defaults or overrides, the
// `endpoints` this server answers); `/v1/namespaces` (`parent`, paging
// `pageToken`/`pageSize` -> `next-page-token`); `/v1/namespaces/{ns}` (GET
// with its properties, HEAD exists -> 204); `/v1/namespaces/{ns}/tables`
// (paged); `/v1/namespaces/{ns}/tables/{table}` (GET: `metadata-location`,
// `metadata` — the bytes of the table's current metadata JSON file, put into
// the response as they are, so 64-bit ids stay exact — and an empty `config`;
// an `ETag` derived from the metadata location, `If-None-Match` -> 304; HEAD
// exists -> 204). Views: none exist, so their list is empty and a view is a
// NoSuchViewException. Multi-level namespaces are joined by the unit
// separator 0x1F (`%1F` in a URL), the spec's default.
//
// Read-only: every write the protocol defines (create/drop/update a
// namespace, create/register/commit/drop/rename a table, transactions,
// views, metrics) is refused with 403 ForbiddenException — 403 because the
// spec lists it for every one of those endpoints (406 only for some), and a
// server that refuses by policy is what it describes. Mimir's event log holds
// invariants (a run lands in one generation, ring routing, state tables kept
// equal to the log) that an engine's commit would break. Other methods on a
// known path get 405 with `Allow`.
//
// Generations: a request reads the catalog at the pointer generation when it
// starts, holding a pinned handle (pins.ts: a read lease) while it reads, so
// gc never deletes the metadata file it is about to send. Namespaces are those
// of the tables that exist at that generation plus those with stored
// properties (namespace properties are not versioned: they are read as now).
//
// Auth: with a token, every REST request must carry `Authorization: Bearer
// <token>` (else 401 NotAuthorizedException); a server bound to a
// non-loopback address without a token answers every REST request with 403
// (the lake's metadata names every file path in it). Errors use the spec's
// model `{"error": {"message", "type", "code"}}`. Nothing here writes.
import { createHash, timingSafeEqual } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import type { Lake } from '../lake/lake.ts';
import { identToString, type TableIdent } from '../lake/catalog/catalog.ts';
import { cachedRead } from '../lake/io/read-cache.ts';
import { parseJson, stringifyJson } from '../lake/spec/json.ts';
import type { Pins } from './pins.ts';

/** Where the REST catalog is mounted: a client's base URI is the server's URL plus this. */
export const REST_PREFIX = '/iceberg';

/** The unit separator that joins the levels of a multi-level namespace in a path or `parent`. */
const SEP = '\x1f';

/** The read endpoints this server answers, as `/v1/config` lists them. */
export const REST_ENDPOINTS = [
  'GET /v1/{prefix}/namespaces',
  'GET /v1/{prefix}/namespaces/{namespace}',
  'HEAD /v1/{prefix}/namespaces/{namespace}',
  'GET /v1/{prefix}/namespaces/{namespace}/tables',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'GET /v1/{prefix}/namespaces/{namespace}/views',
  'GET /v1/{prefix}/namespaces/{namespace}/views/{view}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}',
];

export interface RestOptions {
  lake: Lake;
  pins: Pins;
  /** The bearer token REST requests must carry (none: no check). */
  token?: string;
  /** The server listens beyond loopback: without a token, REST is refused. */
  exposed: boolean;
}

/** A REST answer: status, headers and body (none for HEAD, 204 and 304). */
export interface RestReply {
  status: number;
  headers: Record<string, string>;
  body?: Buffer;
}

/** A refusal in the spec's error model. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const WHY_READ_ONLY =
  "the lake is read-only through this server: Mimir's event log keeps invariants an engine does not know (a run lands in one generation, ring rows are routed by the lake's mode, state tables equal the log), so commits, creates, drops and renames are made only by mimir itself (ingest, state maintain, table maintenance)";

/** Is `pathname` under the REST prefix? */
export function isRestPath(pathname: string): boolean {
  return pathname === REST_PREFIX || pathname.startsWith(`${REST_PREFIX}/`);
}

/** The reply in the spec's error model. */
export function restErrorReply(e: RestError): RestReply {
  const body = Buffer.from(stringifyJson({ error: { message: e.message, type: e.type, code: e.status } }));
  return { status: e.status, headers: { 'content-type': 'application/json; charset=utf-8', ...e.headers }, body };
}

/** Answer one REST request (`url.pathname` under REST_PREFIX). Errors come back as replies, never thrown. */
export async function answerRest(o: RestOptions, method: string, url: URL, headers: IncomingHttpHeaders): Promise<RestReply> {
  try {
    checkAuth(o, headers);
    return await route(o, method, url, headers);
  } catch (e) {
    if (e instanceof RestError) return restErrorReply(e);
    return restErrorReply(new RestError(500, 'ServiceFailureException', `the server failed to read the lake: ${(e as Error)?.message ?? String(e)}`));
  }
}

function checkAuth(o: RestOptions, headers: IncomingHttpHeaders): void {
  const e = authRefusal(o, headers, 'its Iceberg REST catalog');
  if (e) throw e;
}

/**
 * Why a request may not use what the token guards (`what`: the REST catalog,
 * /api/sql), or undefined when it may: a token was given and the request does
 * not carry it (401), or none was given and the server listens beyond loopback (403).
 */
export function authRefusal(o: { token?: string; exposed: boolean }, headers: IncomingHttpHeaders, what: string): RestError | undefined {
  if (o.token === undefined) {
    if (!o.exposed) return undefined;
    return new RestError(403, 'ForbiddenException', `this server listens beyond loopback without a token, so ${what} is off: start mimir serve with --token T (or MIMIR_SERVE_TOKEN=T) and send "Authorization: Bearer T"`);
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  const given = Buffer.from(m?.[1] ?? '');
  const want = Buffer.from(o.token);
  if (m && given.length === want.length && timingSafeEqual(given, want)) return undefined;
  return new RestError(
    401,
    'NotAuthorizedException',
    m ? 'the bearer token does not match the one this server was started with (--token); nothing read' : `${what} requires "Authorization: Bearer <token>" (the token given to mimir serve --token); nothing read`,
    { 'www-authenticate': 'Bearer realm="mimir"' },
  );
}

/** Path segments after `/iceberg/v1`, percent-decoded; a namespace segment split on 0x1F. */
function segments(url: URL): string[] {
  const rest = url.pathname.slice(REST_PREFIX.length).replace(/\/+$/, '');
  const parts = rest.split('/').slice(1);
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    throw new RestError(400, 'BadRequestException', `malformed percent-encoding in ${url.pathname}`);
  }
}

function namespaceOf(segment: string): string[] {
  const ns = segment.split(SEP);
  if (ns.some((l) => l === '')) throw new RestError(400, 'BadRequestException', `namespace "${segment.replace(/\x1f/g, '%1F')}": expected non-empty levels joined by %1F`);
  return ns;
}

const nsText = (ns: readonly string[]): string => ns.join('.');

function allow(method: string, allowed: string[], path: string, writes: boolean): void {
  if (allowed.includes(method)) return;
  if (writes && (method === 'POST' || method === 'DELETE')) throw new RestError(403, 'ForbiddenException', `${method} ${path} refused: ${WHY_READ_ONLY}; nothing changed`);
  throw new RestError(405, 'MethodNotAllowedException', `${method} is not allowed on ${path} (allowed: ${allowed.join(', ') || 'none: writes are refused'})`, { allow: allowed.join(', ') });
}

async function route(o: RestOptions, method: string, url: URL, headers: IncomingHttpHeaders): Promise<RestReply> {
  const s = segments(url);
  const path = url.pathname;
  if (s[0] !== 'v1') {
    throw new RestError(404, 'NotFoundException', `no route ${JSON.stringify(path)}: the Iceberg REST catalog answers ${REST_PREFIX}/v1/config, ${REST_PREFIX}/v1/namespaces[/…]`);
  }
  const r = s.slice(1);
  // writes the protocol defines on paths that are not reads: refused outright
  if (r[0] === 'oauth' || r[0] === 'transactions' || (r[0] === 'tables' && r[1] === 'rename') || (r[0] === 'views' && r[1] === 'rename')) {
    allow(method, [], path, true);
  }
  if (r.length === 1 && r[0] === 'config') {
    allow(method, ['GET'], path, false);
    return json(200, { defaults: {}, overrides: {}, endpoints: REST_ENDPOINTS });
  }
  if (r[0] !== 'namespaces') throw new RestError(404, 'NotFoundException', `no route ${JSON.stringify(path)}: expected ${REST_PREFIX}/v1/config or ${REST_PREFIX}/v1/namespaces[/…]`);
  return read(o, async (view) => {
    if (r.length === 1) {
      allow(method, ['GET', 'HEAD'], path, true);
      const parentText = url.searchParams.get('parent') ?? '';
      const parent = parentText === '' ? [] : namespaceOf(parentText);
      if (parent.length > 0 && !view.namespaceExists(parent)) throw noNamespace(parent);
      const children = new Map<string, string[]>();
      for (const ns of view.namespaces) {
        if (ns.length > parent.length && parent.every((l, i) => ns[i] === l)) {
          const child = ns.slice(0, parent.length + 1);
          children.set(child.join(SEP), child);
        }
      }
      const page = paginate([...children.keys()].sort(), url);
      return json(200, { namespaces: page.items.map((k) => children.get(k)!), ...page.next });
    }
    const ns = namespaceOf(r[1]!);
    if (r.length === 2) {
      allow(method, ['GET', 'HEAD'], path, true);
      if (!view.namespaceExists(ns)) throw noNamespace(ns);
      if (method === 'HEAD') return { status: 204, headers: {} };
      return json(200, { namespace: ns, properties: view.properties(ns) });
    }
    if (r.length === 3 && r[2] === 'properties') allow(method, [], path, true);
    if (r.length === 3 && r[2] === 'register') allow(method, [], path, true);
    if (r[2] === 'views' || r[2] === 'register-view') {
      if (r[2] === 'register-view' || r.length > 4) allow(method, [], path, true);
      allow(method, ['GET', 'HEAD'], path, true);
      if (!view.namespaceExists(ns)) throw noNamespace(ns);
      if (r.length === 3) {
        const page = paginate([], url);
        return json(200, { identifiers: [], ...page.next });
      }
      throw new RestError(404, 'NoSuchViewException', `no view ${nsText(ns)}.${r[3]}: Mimir's lake has tables only, no views`);
    }
    if (r[2] !== 'tables') throw new RestError(404, 'NotFoundException', `no route ${JSON.stringify(path)}`);
    if (r.length === 3) {
      allow(method, ['GET', 'HEAD'], path, true);
      if (!view.namespaceExists(ns)) throw noNamespace(ns);
      const names = view.tables.filter((t) => t.namespace.join(SEP) === ns.join(SEP)).map((t) => t.name).sort();
      const page = paginate(names, url);
      return json(200, { identifiers: page.items.map((name) => ({ namespace: ns, name })), ...page.next });
    }
    if (r.length === 4) {
      allow(method, ['GET', 'HEAD'], path, true);
      const ident: TableIdent = { namespace: ns, name: r[3]! };
      const location = view.location(ident);
      if (location === undefined) {
        if (!view.namespaceExists(ns)) throw noNamespace(ns);
        throw new RestError(404, 'NoSuchTableException', `no table ${identToString(ident)} in this lake at generation ${view.generation}`);
      }
      if (method === 'HEAD') return { status: 204, headers: {} };
      const etag = `"${createHash('sha256').update(location).digest('hex').slice(0, 32)}"`;
      const tags = (headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
      if (tags.includes(etag) || tags.includes('*')) return { status: 304, headers: { etag } };
      const text = await metadataText(o.lake, location);
      const body = Buffer.from(`{"metadata-location":${JSON.stringify(location)},"metadata":${text},"config":{}}`);
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', etag }, body };
    }
    // `/tables/{table}/metrics`, `/plan`, `/credentials`, …: writes or planning this server does not do
    allow(method, [], path, true);
    throw new RestError(404, 'NotFoundException', `no route ${JSON.stringify(path)}`);
  });
}

const noNamespace = (ns: string[]): RestError => new RestError(404, 'NoSuchNamespaceException', `no namespace ${nsText(ns)} in this lake`);

function json(status: number, v: unknown): RestReply {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(stringifyJson(v)) };
}

/**
 * One page of `sorted` keys. Paging is on when the request has `pageToken`
 * (empty: the first page); without it every key comes back and
 * `next-page-token` is null, as the spec asks. The token is the last key sent
 * (base64url), so a page never repeats or skips a key that still exists.
 */
function paginate(sorted: string[], url: URL): { items: string[]; next: { 'next-page-token': string | null } } {
  const sizeText = url.searchParams.get('pageSize');
  let size = Infinity;
  if (sizeText !== null) {
    if (!/^\d+$/.test(sizeText) || Number(sizeText) < 1) throw new RestError(400, 'BadRequestException', `pageSize: expected an integer of at least 1, found "${sizeText}"`);
    size = Number(sizeText);
  }
  const token = url.searchParams.get('pageToken');
  if (token === null) return { items: sorted, next: { 'next-page-token': null } };
  let after: string | undefined;
  if (token !== '') {
    after = Buffer.from(token, 'base64url').toString('utf8');
    if (Buffer.from(after, 'utf8').toString('base64url') !== token) throw new RestError(400, 'BadRequestException', `pageToken "${token}" is not one this server gave out (a next-page-token)`);
  }
  const start = after === undefined ? 0 : sorted.findIndex((k) => k > after);
  const from = start < 0 ? sorted.length : start;
  const items = sorted.slice(from, from + size);
  const more = from + items.length < sorted.length;
  return { items, next: { 'next-page-token': more ? Buffer.from(items[items.length - 1]!, 'utf8').toString('base64url') : null } };
}

/** The catalog as one generation has it. */
interface CatalogView {
  generation: bigint;
  tables: TableIdent[];
  namespaces: string[][];
  namespaceExists(ns: string[]): boolean;
  properties(ns: string[]): Record<string, string>;
  location(ident: TableIdent): string | undefined;
}

/** Run `fn` over the catalog at the pointer generation, with a read lease on it held throughout. */
async function read(o: RestOptions, fn: (view: CatalogView) => Promise<RestReply>): Promise<RestReply> {
  const catalog = o.lake.catalog;
  const g = catalog.pointerGeneration();
  return o.pins.with(g, async () => {
    const locations = new Map<string, string>();
    const tables: TableIdent[] = [];
    for (const t of catalog.listAllTables()) {
      const loc = catalog.pointerAt(t, g);
      if (loc === undefined) continue;
      tables.push(t);
      locations.set(identToString(t), loc);
    }
    const namespaces = new Map<string, string[]>();
    for (const ns of [...tables.map((t) => t.namespace), ...catalog.listNamespaces()]) namespaces.set(ns.join(SEP), ns);
    const exists = (ns: string[]): boolean => [...namespaces.values()].some((n) => n.length >= ns.length && ns.every((l, i) => n[i] === l));
    const reply = await fn({
      generation: g,
      tables,
      namespaces: [...namespaces.values()],
      namespaceExists: exists,
      properties: (ns) => (catalog.namespaceExists(ns) ? catalog.namespaceProperties(ns) : {}),
      location: (i) => locations.get(identToString(i)),
    });
    reply.headers['x-mimir-generation'] = String(g);
    return reply;
  });
}

/** The text of a metadata file (gunzipped if it is gzip), checked to be one JSON object; parsed once per file with the read cache. */
async function metadataText(lake: Lake, location: string): Promise<string> {
  return cachedRead(lake.io, `metadata text ${location}`, async () => {
    const bytes = await lake.io.readAll(location);
    const gz = location.endsWith('.gz.metadata.json') || location.endsWith('.metadata.json.gz');
    const text = (gz ? gunzipSync(bytes) : Buffer.from(bytes)).toString('utf8');
    let v: unknown;
    try {
      v = parseJson(text);
    } catch (e) {
      throw new Error(`metadata file ${location} is not JSON (${(e as Error).message}); not sent`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`metadata file ${location} does not hold a JSON object; not sent`);
    return { value: text.trim(), fileBytes: text.length };
  });
}
