// `mimir serve`'s HTTP surface, on a real lake (test/query/sample.ts) served
// in this process: answers and their generation header, new generations
// picked up without a restart, /api/lake, and every refusal — 400 with a
// message for malformed questions and bodies, 404 for unknown routes and
// path-traversal attempts (no request names a file), 405, 413, 414, 403 for a
// non-loopback Host — each a JSON `{error, status}`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { writeFileSync } from 'node:fs';
import { scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { node, sampleLake, type Sample } from '../query/sample.ts';
import { request, type Reply } from './http.ts';
import * as http from 'node:http';
import { preempt } from '../../src/lake/preempt.ts';

type Obj = { [k: string]: Json };
const work = scratch('mimir-serve-');
const lake = path.join(work.dir, 'lake');
let s: Omit<Sample, 'log'>;
let server: RunningServer;

before(async () => {
  const { log, ...gens } = await sampleLake(lake);
  log.close();
  s = gens;
  server = await startServer({ lake: lake, port: 0, maxBodyBytes: 1024, maxUrlBytes: 2048 });
});
after(async () => {
  await server?.close();
  work.cleanup();
});

const get = (target: string, opts?: Parameters<typeof request>[2]): Promise<Reply> => request(server.url, target, opts);
const body = (r: Reply): Obj => parseJson(r.text) as Obj;

function refused(r: Reply, status: number, message: RegExp): void {
  assert.equal(r.status, status, `expected ${status}, found ${r.status}: ${r.text}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  const b = body(r);
  assert.equal(b.status, status);
  assert.match(b.error as string, message);
}

test('serve: a question answers with JSON at the current generation, named in X-Mimir-Generation; asOf reads the past', async () => {
  const r = await get('/api/def?path=alpha::helper&asOf=' + s.added);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers['x-mimir-generation'], String(s.added));
  const b = body(r);
  assert.equal(BigInt(b.generation as number), s.added);
  assert.deepEqual((b.hits as Obj[]).map((h) => [h.qpath, h.line]), [['alpha::helper', 20]]);
  const now = body(await get('/api/def?path=alpha::helper'));
  assert.equal(BigInt(now.generation as number), s.removed);
  assert.deepEqual(now.hits, []);
  const post = await get('/api/def', { method: 'POST', body: JSON.stringify({ path: 'alpha::helper', asOf: Number(s.changed) }) });
  assert.equal(post.status, 200, post.text);
  assert.deepEqual((body(post).hits as Obj[]).map((h) => h.line), [30]);
});

test('serve: a new generation is picked up without a restart; the cache answers a repeat from the same generation', async () => {
  // scoped to a repo the lake has: an empty answer (200), not an unknown name
  const first = await get('/api/find?name=fresh_item&exact=true&repo=alpha');
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(body(first).hits, []);
  const again = await get('/api/find?exact=true&repo=alpha&name=fresh_item');
  assert.equal(again.headers['x-mimir-cache'], 'hit');
  assert.equal(again.text, first.text);
  const log = await EventLog.open(lake);
  try {
    await log.append('node', [node('alpha', 'alpha@0.1.0', 'a-fresh', 'alpha::fresh_item', { file: 'src/lib.rs', line: 7 })]);
  } finally {
    log.close();
  }
  const after = await get('/api/find?name=fresh_item&exact=true&repo=alpha');
  assert.equal(after.headers['x-mimir-cache'], 'miss');
  assert.ok(BigInt(after.headers['x-mimir-generation'] as string) > BigInt(first.headers['x-mimir-generation'] as string));
  assert.deepEqual((body(after).hits as Obj[]).map((h) => h.qpath), ['alpha::fresh_item']);
});

test('serve: /api/lake lists tables, generations, ring mode and runs at one generation; /api describes the routes', async () => {
  const r = await get(`/api/lake?asOf=${s.changed}&generations=3&runs=5`);
  assert.equal(r.status, 200, r.text);
  const b = body(r);
  assert.equal(BigInt(b.generation as number), s.changed);
  assert.equal(b.ringMode, 'split');
  const tables = (b.tables as Obj[]).map((t) => t.table);
  assert.ok(tables.includes('mimir.code_node_events') && tables.includes('mimir.code_edge_events_ring'), tables.join(', '));
  const gens = (b.generations as Obj[]).map((g) => BigInt(g.generation as number));
  assert.equal(gens.length, 3);
  assert.equal(gens[0], s.changed, 'newest first, none after the generation read');
  assert.ok(Array.isArray(b.runs));
  const idx = body(await get('/api'));
  assert.ok('/api/callers' in (idx.routes as Obj) && '/api/lake' in (idx.routes as Obj));
});

test('serve: malformed questions get 400 with a message that says what was expected and found', async () => {
  refused(await get('/api/def'), 400, /def: missing parameter path/);
  refused(await get('/api/def?path='), 400, /path: expected a PATH .* found an empty string/);
  refused(await get('/api/def?path=a&path=b'), 400, /parameter "path" given twice/);
  refused(await get('/api/def?path=a&color=red'), 400, /unknown parameter "color" for def \(expected path, repo, krate, limit, excludeTests, abs, context, asOf\)/);
  refused(await get('/api/find?name=x&asOf=last%20week'), 400, /asOf: expected a generation number, an ISO 8601 time .* found "last week"/);
  refused(await get('/api/find?name=x&asOf=yesterday'), 400, /no commit, tag or branch of any ingested repo is named yesterday/);
  refused(await get('/api/def?path=x&asOf=999999'), 400, /generation 999999 is in the future \(the lake is at \d+\)/);
  refused(await get('/api/refs?path=x&kind=nope'), 400, /kind: expected one of contains, .* found "nope"/);
  refused(await get('/api/diff?from=1'), 400, /diff: missing parameter to/);
  refused(await get('/api/diff?from=a&to=2'), 400, /from: expected a generation number, found "a"/);
  refused(await get('/api/find?name=x&exact=maybe'), 400, /exact: expected true or false, found "maybe"/);
  refused(await get('/api/lake?runs=-1'), 400, /runs: expected a count from 0 to 1000/);
  refused(await get('/api/def', { method: 'POST', body: '{"path": ' }), 400, /the body is not JSON: invalid JSON at offset/);
  refused(await get('/api/def', { method: 'POST', body: '["x"]' }), 400, /the body must be a JSON object of parameters/);
  refused(await get('/api/def', { method: 'POST', body: '{"path": {"a": 1}}' }), 400, /parameter "path": expected a string, number or boolean/);
  refused(await get('/api/def?path=x', { method: 'POST', body: '{"path": "x"}' }), 400, /not both/);
});

test('serve: unknown routes 404, wrong methods 405 with Allow, oversized bodies 413 and targets 414', async () => {
  for (const t of ['/index.html', '/api/nope', '/api/def/extra', '/apidef', '/API/def']) refused(await get(t), 404, /no route/);
  const del = await get('/api/def?path=x', { method: 'DELETE' });
  refused(del, 405, /DELETE is not allowed on \/api\/def \(allowed: GET, HEAD, POST\)/);
  assert.equal(del.headers.allow, 'GET, HEAD, POST');
  refused(await get('/api', { method: 'POST', body: '{}' }), 405, /POST is not allowed on \/api/);
  refused(await get('/api/def', { method: 'POST', body: JSON.stringify({ path: 'x'.repeat(2000) }) }), 413, /above the limit of 1024/);
  refused(await get(`/api/def?path=${'x'.repeat(3000)}`), 414, /above the limit of 2048/);
});

test('serve: no request reads a file outside the lake (path traversal gets 404; paths are names, not files)', async () => {
  const secret = path.join(work.dir, 'secret.txt');
  writeFileSync(secret, 'TOP-SECRET-CONTENT\n');
  const rel = path.relative(lake, secret);
  const attempts = [
    `/../secret.txt`,
    `/api/../../secret.txt`,
    `/api/lake/../../secret.txt`,
    `/%2e%2e/%2e%2e/secret.txt`,
    `/api/%2e%2e%2f%2e%2e%2fsecret.txt`,
    `/api/def/..%2f..%2f${encodeURIComponent(rel)}`,
    `/api/${encodeURIComponent(secret)}`,
    `/api/..;/secret.txt`,
    `//${secret}`,
    `/etc/passwd`,
  ];
  for (const t of attempts) {
    const r = await get(t);
    assert.equal(r.status, 404, `${t}: ${r.status} ${r.text}`);
    assert.doesNotMatch(r.text, /TOP-SECRET|root:/);
  }
  for (const t of [`/api/def?path=${encodeURIComponent(rel)}`, `/api/find?name=${encodeURIComponent(secret)}`, `/api/history?path=${encodeURIComponent('../../../../etc/passwd')}`]) {
    // matched against the graph's names: no item has them (404, a did-you-mean or "no such item"), nothing opened
    const r = await get(t);
    refused(r, 404, /no such item|no item/);
    assert.doesNotMatch(r.text, /TOP-SECRET|root:/);
  }
  refused(await get(`/api/lake?asOf=${encodeURIComponent(rel)}`), 400, /asOf: expected a generation number/);
});

test('serve: a loopback server refuses a request addressed to another host name (403: DNS rebinding)', async () => {
  refused(await get('/api/def?path=x', { headers: { host: 'evil.example:80' } }), 403, /answers only requests addressed to a loopback name; found Host "evil.example:80"/);
  assert.equal((await get('/api/def?path=alpha::main', { headers: { host: `localhost:${server.port}` } })).status, 200);
});

test('serve: time limits — 504 when the answer is late (its work is stopped, nothing cached), 503 when no reader frees up in time', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  // the second request is sent once the first holds the only reader (not after a delay a loaded machine may outlast)
  let pinned!: () => void;
  const holding = new Promise<void>((r) => (pinned = r));
  const slow = await startServer({ lake: lake, port: 0, readers: 1, timeoutMs: 1500, testAfterPin: () => {
    pinned();
    return held;
  } });
  try {
    const [late, queued] = await Promise.all([
      request(slow.url, '/api/def?path=regex::Regex::new'),
      holding.then(() => request(slow.url, '/api/find?name=check')),
    ]);
    refused(late, 504, /not ready within the time limit \(1500 ms\): its work was stopped and nothing was cached — narrow the question/);
    refused(queued, 503, /no reader was free within the time limit \(1500 ms\): 1 answers in progress, 1 waiting; nothing was read/);
    release();
    // the late answer's work stops at its first read once released: its reader frees up and nothing was cached
    let again = await request(slow.url, '/api/def?path=regex::Regex::new');
    for (let i = 0; i < 50 && again.status !== 200; i++) again = await request(slow.url, '/api/def?path=regex::Regex::new');
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers['x-mimir-cache'], 'miss', 'the stopped answer was not cached');
    assert.equal(slow.stats().active, 0);
  } finally {
    release();
    await slow.close();
  }
});

test('serve: a request whose client went away has its work stopped, and the only reader answers the next question', { timeout: 600_000 }, async () => {
  let pinned!: () => void;
  const holding = new Promise<void>((r) => (pinned = r));
  // work that steps like a long scan and never ends by itself: it stops at its next step once cancelled
  let calls = 0;
  const slow = await startServer({ lake: lake, port: 0, readers: 1, timeoutMs: 60_000, testAfterPin: async () => {
    if (++calls > 1) return; // the next question is not held
    pinned();
    for (;;) {
      await preempt();
      await new Promise((r) => setTimeout(r, 20));
    }
  } });
  try {
    const gone = http.get(`${slow.url}/api/def?path=regex::Regex::new`);
    gone.on('error', () => undefined);
    await holding;
    // the client goes (a search box that typed on): without cancelling, the reader stays held
    // until the 60 s limit and the next question gets 503
    gone.destroy();
    const next = await request(slow.url, '/api/find?name=check');
    assert.equal(next.status, 200, next.text);
    assert.equal(slow.stats().active, 0);
  } finally {
    await slow.close();
  }
});
