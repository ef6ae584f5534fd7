// The Iceberg REST catalog (read side) that `mimir serve` mounts under
// /iceberg, and POST /api/sql, on a real lake (samples/workspace ingested
// with its dependencies) served by real `mimir serve` processes: the npm
// client iceberg-js lists namespaces and tables and loads every table, and
// what it gets is the table's current metadata file; every response
// validates against the protocol's required fields and error model
// (rest-protocol.ts); unknown names are 404s, writes are 403s that change
// nothing, paging round-trips, ETag/If-None-Match gives 304, a token is
// required when set (and beyond loopback); /api/sql is off unless
// --allow-sql, answers like `mimir sql`, limits rows and stops at the time
// limit. No wall-clock assertions: the one time limit is the server's own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IcebergError, IcebergRestCatalog } from 'iceberg-js';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli, jsonLines } from '../cli/run-cli.ts';
import { request, serveProcess, type Reply, type Serving } from './http.ts';
import { problems, type RestShape } from './rest-protocol.ts';
import { Lake } from '../../src/lake/lake.ts';
import { identToString } from '../../src/lake/catalog/catalog.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { startServer } from '../../src/serve/server.ts';

const work = scratch('mimir-serve-rest-');
const lakeDir = path.join(work.dir, 'lake');
const TOKEN = 'test-token-5f0c1e';

/** Start `mimir serve ARGS` on the test lake. */
const serve = (args: string[], token = ''): Promise<Serving> => serveProcess(args, { MIMIR_LAKE: lakeDir, MIMIR_SERVE_TOKEN: token });

let open: Serving; // --allow-sql, no token
let guarded: Serving; // a token (from MIMIR_SERVE_TOKEN), no --allow-sql
let tables: string[]; // every table of the lake, `ns.name`
let nsProps: Record<string, string>; // the properties the catalog stores for namespace mimir
let earlier: bigint; // a generation before the last, at which code_node_events exists

before(async () => {
  const ws = path.join(work.dir, 'ws');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const r = await runCli(['--lake', lakeDir, 'ingest', ws, '--repo', 'sample', '--with-deps']);
  assert.equal(r.code, 0, r.stderr);
  const lake = Lake.open(lakeDir, { create: false });
  try {
    tables = lake.catalog.listAllTables().map(identToString).sort();
    nsProps = lake.catalog.namespaceProperties(['mimir']);
    const now = lake.catalog.pointerGeneration();
    earlier = now - 1n; // before the sample repo's run (its universe run landed there)
    assert.ok(lake.catalog.pointerAt({ namespace: ['mimir'], name: 'code_node_events' }, earlier) !== undefined);
  } finally {
    lake.close();
  }
  [open, guarded] = await Promise.all([serve(['--allow-sql']), serve([], TOKEN)]);
});

after(async () => {
  for (const s of [open, guarded]) {
    if (!s) continue;
    s.child.kill('SIGTERM');
    await s.exit;
  }
  work.cleanup();
});

const rest = (s: Serving): string => `${s.url}/iceberg`;

/** A REST call's reply, its body parsed (64-bit safe) and checked as `shape`. */
async function call(base: string, target: string, shape: RestShape | undefined, opts: Parameters<typeof request>[2] = {}): Promise<Reply & { body: Json }> {
  const r = await request(base, `/iceberg${target}`, opts);
  const body = r.text === '' ? null : parseJson(r.text);
  if (shape !== undefined) assert.deepEqual(problems(shape, body, r.status), [], `${opts.method ?? 'GET'} ${target} -> ${r.status} as ${shape}: ${r.text.slice(0, 300)}`);
  if (r.text !== '') assert.match(String(r.headers['content-type']), /^application\/json/);
  return { ...r, body };
}

/** An error reply: the status, the spec's error model, and its type. */
async function refused(base: string, target: string, status: number, type: string, opts: Parameters<typeof request>[2] = {}): Promise<string> {
  const r = await call(base, target, 'IcebergErrorResponse', opts);
  assert.equal(r.status, status, `${opts.method ?? 'GET'} ${target}: ${r.text}`);
  const e = (r.body as { error: { type: string; message: string } }).error;
  assert.equal(e.type, type, e.message);
  return e.message;
}

/** A table's current metadata file, as the catalog points at it now: its location and text. */
function currentMetadata(ident: string): { location: string; text: string } {
  const lake = Lake.open(lakeDir, { create: false });
  try {
    const dot = ident.lastIndexOf('.');
    const p = lake.catalog.requireTable({ namespace: ident.slice(0, dot).split('.'), name: ident.slice(dot + 1) });
    return { location: p.metadataLocation, text: readFileSync(fileURLToPath(new URL(p.metadataLocation)), 'utf8') };
  } finally {
    lake.close();
  }
}

test('rest: iceberg-js lists the namespaces and tables and loads every Mimir table; the metadata it gets is the current metadata file', async () => {
  const catalog = new IcebergRestCatalog({ baseUrl: rest(open) });
  const namespaces = await catalog.listNamespaces();
  assert.deepEqual(namespaces, [{ namespace: ['mimir'] }]);
  assert.equal(await catalog.namespaceExists({ namespace: ['mimir'] }), true);
  assert.equal(await catalog.namespaceExists({ namespace: ['nope'] }), false);
  assert.deepEqual(await catalog.loadNamespaceMetadata({ namespace: ['mimir'] }), { properties: nsProps });
  const listed = (await catalog.listTables({ namespace: ['mimir'] })).map((t) => `${t.namespace.join('.')}.${t.name}`).sort();
  assert.deepEqual(listed, tables);
  assert.ok(tables.length >= 10, `the lake has its event, ring, state and run tables: ${tables.join(', ')}`);
  for (const t of tables) {
    const name = t.slice('mimir.'.length);
    const meta = await catalog.loadTable({ namespace: ['mimir'], name });
    const file = currentMetadata(t);
    assert.deepEqual(meta, JSON.parse(file.text), `${t}: iceberg-js's metadata equals ${file.location}`);
    assert.equal(await catalog.tableExists({ namespace: ['mimir'], name }), true);
    // 64-bit exact: the raw reply parsed bigint-safe equals the file parsed the same way
    const r = await call(open.url, `/v1/namespaces/mimir/tables/${name}`, 'LoadTableResult');
    assert.equal(r.status, 200);
    const body = r.body as { 'metadata-location': string; metadata: Json; config: Json };
    assert.equal(body['metadata-location'], file.location);
    assert.deepEqual(body.metadata, parseJson(file.text));
    assert.deepEqual(body.config, {});
  }
  assert.equal(await catalog.tableExists({ namespace: ['mimir'], name: 'no_such_table' }), false);
});

test('rest: config, namespace and table responses carry the protocol\'s required fields; unknown names are 404s in the error model', async () => {
  const cfg = await call(open.url, '/v1/config?warehouse=anything', 'CatalogConfig');
  assert.equal(cfg.status, 200);
  const endpoints = (cfg.body as { endpoints: string[] }).endpoints;
  assert.ok(endpoints.includes('GET /v1/{prefix}/namespaces/{namespace}/tables/{table}'));
  assert.ok(endpoints.every((e) => e.startsWith('GET ') || e.startsWith('HEAD ')), 'only reads are advertised');
  assert.equal((await call(open.url, '/v1/namespaces', 'ListNamespacesResponse')).status, 200);
  assert.equal((await call(open.url, '/v1/namespaces?parent=mimir', 'ListNamespacesResponse')).status, 200);
  const ns = await call(open.url, '/v1/namespaces/mimir', 'GetNamespaceResponse');
  assert.deepEqual(ns.body, { namespace: ['mimir'], properties: nsProps });
  const lt = await call(open.url, '/v1/namespaces/mimir/tables', 'ListTablesResponse');
  assert.equal(lt.headers['x-mimir-generation'] !== undefined, true, 'a REST reply names the generation it read');
  assert.deepEqual((await call(open.url, '/v1/namespaces/mimir/views', 'ListTablesResponse')).body, { identifiers: [], 'next-page-token': null });
  // HEAD: 204 without a body, 404 for what does not exist
  assert.equal((await request(open.url, '/iceberg/v1/namespaces/mimir', { method: 'HEAD' })).status, 204);
  assert.equal((await request(open.url, '/iceberg/v1/namespaces/mimir/tables/code_nodes', { method: 'HEAD' })).status, 204);
  assert.equal((await request(open.url, '/iceberg/v1/namespaces/mimir/tables/nope', { method: 'HEAD' })).status, 404);
  assert.equal((await request(open.url, '/iceberg/v1/namespaces/nope', { method: 'HEAD' })).status, 404);
  await refused(open.url, '/v1/namespaces/nope', 404, 'NoSuchNamespaceException');
  await refused(open.url, '/v1/namespaces/nope/tables', 404, 'NoSuchNamespaceException');
  await refused(open.url, '/v1/namespaces/nope/tables/code_nodes', 404, 'NoSuchNamespaceException');
  await refused(open.url, '/v1/namespaces?parent=nope', 404, 'NoSuchNamespaceException');
  await refused(open.url, '/v1/namespaces/mimir%1Fdeeper/tables/code_nodes', 404, 'NoSuchNamespaceException'); // a two-level namespace, 0x1F-separated
  assert.match(await refused(open.url, '/v1/namespaces/mimir/tables/no_such_table', 404, 'NoSuchTableException'), /no table mimir\.no_such_table/);
  await refused(open.url, '/v1/namespaces/mimir/views/v', 404, 'NoSuchViewException');
  await refused(open.url, '/v1/nothing', 404, 'NotFoundException');
  await refused(open.url, '/v1/namespaces/mimir/tables?pageToken=%%%', 400, 'BadRequestException');
  await refused(open.url, '/v1/namespaces/mimir/tables?pageToken=&pageSize=0', 400, 'BadRequestException');
  await refused(open.url, '/v1/config', 405, 'MethodNotAllowedException', { method: 'PUT' });
  // a loopback server refuses another Host (DNS rebinding) in the same error model
  assert.match(await refused(open.url, '/v1/config', 403, 'ForbiddenException', { headers: { host: 'evil.example' } }), /answers only requests addressed to a loopback name/);
});

test('rest: every write is refused with 403 ForbiddenException saying why, and the lake does not change', async () => {
  const before = Lake.open(lakeDir, { create: false });
  const g0 = before.catalog.pointerGeneration();
  const pointer0 = before.catalog.requireTable({ namespace: ['mimir'], name: 'code_nodes' }).metadataLocation;
  before.close();
  const body = JSON.stringify({ name: 'x', schema: { type: 'struct', fields: [] }, namespace: ['x'] });
  const writes: [string, string][] = [
    ['POST', '/v1/namespaces'],
    ['DELETE', '/v1/namespaces/mimir'],
    ['POST', '/v1/namespaces/mimir/properties'],
    ['POST', '/v1/namespaces/mimir/tables'],
    ['POST', '/v1/namespaces/mimir/register'],
    ['POST', '/v1/namespaces/mimir/tables/code_nodes'],
    ['DELETE', '/v1/namespaces/mimir/tables/code_nodes'],
    ['POST', '/v1/namespaces/mimir/tables/code_nodes/metrics'],
    ['POST', '/v1/tables/rename'],
    ['POST', '/v1/transactions/commit'],
    ['POST', '/v1/namespaces/mimir/views'],
  ];
  for (const [method, target] of writes) {
    // content-length given: node's client sends a DELETE body without one, which no server can delimit
    const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const msg = await refused(open.url, target, 403, 'ForbiddenException', { method, body, headers });
    assert.match(msg, /read-only through this server: Mimir's event log keeps invariants an engine does not know/);
    assert.match(msg, /nothing changed$/);
  }
  const catalog = new IcebergRestCatalog({ baseUrl: rest(open) });
  await assert.rejects(catalog.dropTable({ namespace: ['mimir'], name: 'code_nodes' }), (e: unknown) => e instanceof IcebergError && e.status === 403);
  await assert.rejects(catalog.createNamespace({ namespace: ['other'] }), (e: unknown) => e instanceof IcebergError && e.status === 403);
  const lake = Lake.open(lakeDir, { create: false });
  try {
    assert.equal(lake.catalog.pointerGeneration(), g0, 'no write landed');
    assert.equal(lake.catalog.requireTable({ namespace: ['mimir'], name: 'code_nodes' }).metadataLocation, pointer0);
    assert.deepEqual(lake.catalog.listNamespaces(), [['mimir']]);
  } finally {
    lake.close();
  }
});

test('rest: paging with pageToken/pageSize returns every table once, in pages, ending with a null next-page-token', async () => {
  const seen: string[] = [];
  let token = '';
  let pages = 0;
  for (;;) {
    const r = await call(open.url, `/v1/namespaces/mimir/tables?pageSize=3&pageToken=${encodeURIComponent(token)}`, 'ListTablesResponse');
    assert.equal(r.status, 200, r.text);
    const b = r.body as { identifiers: { namespace: string[]; name: string }[]; 'next-page-token': string | null };
    assert.ok(b.identifiers.length <= 3);
    seen.push(...b.identifiers.map((i) => `${i.namespace.join('.')}.${i.name}`));
    pages++;
    assert.ok('next-page-token' in b);
    if (b['next-page-token'] === null) break;
    token = b['next-page-token'];
    assert.ok(pages < 100, 'paging ends');
  }
  assert.deepEqual(seen, tables, 'every table once, in order');
  assert.equal(pages, Math.ceil(tables.length / 3));
  // no pageToken: everything at once, next-page-token null
  const all = await call(open.url, '/v1/namespaces/mimir/tables?pageSize=3', 'ListTablesResponse');
  assert.equal((all.body as { identifiers: unknown[] }).identifiers.length, tables.length);
  const ns = await call(open.url, '/v1/namespaces?pageToken=&pageSize=1', 'ListNamespacesResponse');
  assert.deepEqual(ns.body, { namespaces: [['mimir']], 'next-page-token': null });
});

test('rest: load-table has an ETag naming the metadata version; If-None-Match with it gives 304 without a body', async () => {
  const target = '/iceberg/v1/namespaces/mimir/tables/code_nodes';
  const a = await request(open.url, target);
  const etag = a.headers.etag;
  assert.equal(a.status, 200);
  assert.match(String(etag), /^"[0-9a-f]{32}"$/);
  assert.equal((await request(open.url, target)).headers.etag, etag, 'the same version, the same tag');
  const other = await request(open.url, '/iceberg/v1/namespaces/mimir/tables/code_edges');
  assert.notEqual(other.headers.etag, etag, 'another metadata file, another tag');
  const nm = await request(open.url, target, { headers: { 'if-none-match': String(etag) } });
  assert.equal(nm.status, 304);
  assert.equal(nm.text, '');
  assert.equal((await request(open.url, target, { headers: { 'if-none-match': '"0123"' } })).status, 200);
});

test('rest: with a token (--token or MIMIR_SERVE_TOKEN), REST calls need "Authorization: Bearer <token>" (401 in the error model otherwise); iceberg-js with the token reads', async () => {
  const m1 = await refused(guarded.url, '/v1/config', 401, 'NotAuthorizedException');
  assert.match(m1, /requires "Authorization: Bearer <token>"/);
  await refused(guarded.url, '/v1/namespaces/mimir/tables/code_nodes', 401, 'NotAuthorizedException', { headers: { authorization: 'Bearer wrong-token-xxxxxx' } });
  const ok = await call(guarded.url, '/v1/config', 'CatalogConfig', { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(ok.status, 200);
  const catalog = new IcebergRestCatalog({ baseUrl: rest(guarded), auth: { type: 'bearer', token: TOKEN } });
  const meta = await catalog.loadTable({ namespace: ['mimir'], name: 'code_nodes' });
  assert.deepEqual(meta, JSON.parse(currentMetadata('mimir.code_nodes').text));
  await assert.rejects(new IcebergRestCatalog({ baseUrl: rest(guarded) }).listNamespaces(), (e: unknown) => e instanceof IcebergError && e.status === 401);
  // a token too short to be one is a usage error
  const short = await runCli(['serve', '--port', '0', '--token', 'abc'], { lake: lakeDir });
  assert.equal(short.code, 2, short.stderr);
  assert.match(short.stderr, /--token: expected at least 8 printable characters/);
  // the JSON API is not behind the token
  assert.equal((await request(guarded.url, '/api')).status, 200);
  // /api/sql is off on this server, and says how to turn it on
  const sql = await request(guarded.url, '/api/sql', { method: 'POST', body: '{"sql":"select 1"}', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(sql.status, 403);
  assert.match(sql.text, /start mimir serve with --allow-sql/);
});

test('rest: a server listening beyond loopback without a token refuses the REST catalog (403), with a token it answers', async () => {
  for (const token of [undefined, TOKEN]) {
    const s = await startServer({ lake: lakeDir, host: '0.0.0.0', port: 0, allowSql: true, ...(token ? { token } : {}) });
    try {
      const base = `http://127.0.0.1:${s.port}`;
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      if (token === undefined) {
        assert.match(await refused(base, '/v1/config', 403, 'ForbiddenException'), /beyond loopback without a token.*--token T/);
        const sql = await request(base, '/api/sql', { method: 'POST', body: '{"sql":"select 1"}' });
        assert.equal(sql.status, 403, sql.text);
      } else {
        assert.equal((await call(base, '/v1/namespaces', 'ListNamespacesResponse', { headers })).status, 200);
        assert.equal((await request(base, '/api/sql', { method: 'POST', body: '{"sql":"select 1 as one"}', headers })).status, 200);
      }
    } finally {
      await s.close();
    }
  }
});

test('sql: POST /api/sql runs one SELECT over the same views as mimir sql, at the pinned or asOf generation, bigints as strings, rows limited', async () => {
  const post = (body: unknown): Promise<Reply> => request(open.url, '/api/sql', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const q = 'select kind, count(*) as n from code_nodes group by kind order by kind';
  const r = await post({ sql: q });
  assert.equal(r.status, 200, r.text);
  const a = parseJson(r.text) as { generation: bigint; columns: { name: string; type: string }[]; rows: Record<string, string>[]; truncated: boolean };
  assert.deepEqual(a.columns, [{ name: 'kind', type: 'VARCHAR' }, { name: 'n', type: 'BIGINT' }]);
  assert.equal(a.truncated, false);
  assert.ok(a.rows.length > 0 && a.rows.every((row) => typeof row.n === 'string' && /^\d+$/.test(row.n)), 'a BIGINT comes as a decimal string');
  const cli = await runCli(['--lake', lakeDir, 'sql', q, '--json']);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(a.rows, jsonLines(cli.stdout).map((l) => {
    const o = parseJson(l) as Record<string, Json>;
    return { kind: o.kind, n: String(o.n) };
  }), 'the same answer as mimir sql');
  // asOf: an earlier generation reads the lake as it was, as mimir sql --as-of does
  const countSql = 'select count(*) as n from code_node_events';
  const early = await post({ sql: countSql, asOf: String(earlier) });
  assert.equal(early.status, 200, early.text);
  const e = parseJson(early.text) as { rows: { n: string }[]; generation: bigint };
  assert.equal(BigInt(e.generation), earlier);
  const cliEarly = await runCli(['--lake', lakeDir, 'sql', countSql, '--as-of', String(earlier), '--json']);
  assert.equal(cliEarly.code, 0, cliEarly.stderr);
  assert.equal(e.rows[0]!.n, String((parseJson(jsonLines(cliEarly.stdout)[0]!) as { n: Json }).n));
  const nowCount = parseJson((await post({ sql: countSql })).text) as { rows: { n: string }[] };
  assert.ok(BigInt(e.rows[0]!.n) < BigInt(nowCount.rows[0]!.n), `the lake grew after generation ${earlier}`);
  // the row limit
  const lim = await post({ sql: 'select * from code_node_events', limit: 5 });
  const l = parseJson(lim.text) as { rows: unknown[]; truncated: boolean; limit: bigint | number };
  assert.equal(l.rows.length, 5);
  assert.equal(l.truncated, true);
  // refusals: a write, two statements, no sql, GET
  const unknown = await post({ sql: 'select * from no_such_table' });
  assert.equal(unknown.status, 400, unknown.text);
  assert.match(unknown.text, /the statement failed at lake generation \d+: .*no_such_table/);
  for (const bad of [{ sql: "copy (select 1) to '/tmp/x.csv'" }, { sql: 'create table t as select 1' }, { sql: 'select 1; select 2' }, {}, { sql: 'select 1', limit: 0 }]) {
    const b = await post(bad);
    assert.equal(b.status, 400, `${JSON.stringify(bad)}: ${b.text}`);
  }
  assert.equal((await request(open.url, '/api/sql?sql=select%201')).status, 405);
});

test('sql: a query over the time limit is interrupted and gets a 504; the server answers the next one', async () => {
  // a 3 s limit for a query that needs minutes (10^10 rows); the next query is tiny
  const s = await startServer({ lake: lakeDir, port: 0, allowSql: true, timeoutMs: 3_000 });
  try {
    const long = await request(s.url, '/api/sql', { method: 'POST', body: JSON.stringify({ sql: 'select sum(a.range * b.range) as s from range(100000) a, range(100000) b' }) });
    assert.equal(long.status, 504, long.text);
    assert.match(long.text, /not ready within the time limit/);
    const next = await request(s.url, '/api/sql', { method: 'POST', body: JSON.stringify({ sql: 'select 41 + 1 as x' }) });
    assert.equal(next.status, 200, next.text);
    assert.deepEqual((parseJson(next.text) as { rows: unknown[] }).rows, [{ x: 42 }]);
  } finally {
    await s.close();
  }
});

test('rest protocol checker: it flags broken responses (so a pass means something)', () => {
  assert.deepEqual(problems('IcebergErrorResponse', { error: { message: 'x', type: 'NoSuchTableException', code: 404 } }, 404), []);
  assert.ok(problems('IcebergErrorResponse', { error: 'no such table', status: 404 }, 404).length >= 2, "Mimir's /api error shape is not the spec's");
  assert.deepEqual(problems('IcebergErrorResponse', { error: { message: 'x', type: 'T', code: 500 } }, 404), ['error.code 500 differs from the HTTP status 404']);
  assert.deepEqual(problems('LoadTableResult', { 'metadata-location': 'x' }, 200), ['metadata: required, an object']);
  assert.deepEqual(problems('LoadTableResult', { metadata: { 'format-version': 4, 'table-uuid': 'u' } }, 200), ['metadata.format-version: required, an integer 1..3']);
  assert.deepEqual(problems('ListTablesResponse', { identifiers: [{ namespace: 'mimir', name: 't' }], 'next-page-token': 3 }, 200).length, 2);
  assert.deepEqual(problems('ListNamespacesResponse', { namespaces: [['a'], ['a']] }, 200), ['namespaces: expected unique namespaces (arrays of strings)']);
  assert.deepEqual(problems('CatalogConfig', { defaults: {} }, 200), ['overrides: required, a map of strings']);
  assert.deepEqual(problems('GetNamespaceResponse', { properties: { a: 1 } }, 200).length, 2);
});

test('rest: after an ingest commits, a running server serves the new generation: a new metadata location, a new ETag, the old tag no longer 304', async () => {
  const target = '/iceberg/v1/namespaces/mimir/tables/code_nodes';
  const before = await request(open.url, target);
  assert.equal(before.status, 200);
  const g0 = BigInt(String(before.headers['x-mimir-generation']));
  // a new function in the sample workspace, ingested again: code_nodes changes
  const lib = path.join(work.dir, 'ws', 'crates', 'tally', 'src', 'lib.rs');
  writeFileSync(lib, `${readFileSync(lib, 'utf8')}\npub fn rest_test_added() -> u32 {\n    7\n}\n`);
  const r = await runCli(['--lake', lakeDir, 'ingest', path.join(work.dir, 'ws'), '--repo', 'sample']);
  assert.equal(r.code, 0, r.stderr);
  const after = await call(open.url, '/v1/namespaces/mimir/tables/code_nodes', 'LoadTableResult', { headers: { 'if-none-match': String(before.headers.etag) } });
  assert.equal(after.status, 200, 'the version the client holds is no longer current');
  assert.ok(BigInt(String(after.headers['x-mimir-generation'])) > g0);
  assert.notEqual(after.headers.etag, before.headers.etag);
  const file = currentMetadata('mimir.code_nodes');
  assert.equal((after.body as { 'metadata-location': string })['metadata-location'], file.location);
  assert.notEqual(file.location, (parseJson(before.text) as { 'metadata-location': string })['metadata-location']);
  assert.deepEqual((after.body as { metadata: Json }).metadata, parseJson(file.text));
});
