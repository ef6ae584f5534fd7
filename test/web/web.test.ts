// The web UI over HTTP, without a browser (test/web/browser.test.ts drives
// one): `mimir serve` answers the page shell on every page route and the two
// hashed assets from the build, compressed as Accept-Encoding allows (brotli,
// else gzip), with strong ETags (304 on a match) and `immutable` caching for
// the assets; the first load of `/` is measured (compressed bytes). Without a
// build, `/` says how to make one and the API still answers. The API
// additions the UI uses: `/api/source` (a file's stored lines, pinned like
// every answer) and the did-you-mean `suggestions` of an unknown name's 404.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startServer } from '../../src/serve/server.ts';
import { request } from '../serve/http.ts';
import { sampleWebServer, type WebSetup } from './setup.ts';

let s: WebSetup;
before(async () => {
  s = await sampleWebServer('mimir-web-http-');
});
after(async () => {
  await s?.cleanup();
});

const get = (target: string, headers: Record<string, string> = {}, method = 'GET') => request(s.server.url, target, { headers, method });

test('web: every page route answers the same shell naming the hashed assets; no-cache, CSP only this origin', async () => {
  const shells = await Promise.all(['/', '/search?q=hash_str', '/lake', '/item/fnvish::hash_str', '/item/tally::Tally::add?at=20&asOf=1', '/graph/fnvish::hash_str?depth=3', '/history/tally::Tally::add', '/diff?from=1&to=2&public=1'].map((t) => get(t)));
  for (const r of shells) {
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers['content-type'] ?? '', /^text\/html/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.match(String(r.headers['content-security-policy']), /default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/);
    assert.equal(r.text, shells[0]!.text);
  }
  assert.ok(shells[0]!.text.includes(`/assets/${s.web.js}`) && shells[0]!.text.includes(`/assets/${s.web.css}`), shells[0]!.text);
  assert.doesNotMatch(shells[0]!.text, /https?:\/\//, 'the shell names nothing off this server');
  // not pages: unknown routes, a bare /item/, and assets the build did not make, are 404 JSON
  // the chunks pages load on demand are served like the assets; the picture's (dagre) is not in the first load
  assert.ok(s.web.chunks.length >= 1, `chunks: ${s.web.chunks.join(', ')}`);
  for (const c of s.web.chunks) assert.equal((await get(`/assets/${c}`)).status, 200, c);
  const lazy = s.web.chunks.filter((c) => !s.web.firstLoad.includes(c));
  assert.ok(lazy.length >= 1, `a chunk loaded on demand only: ${s.web.chunks.join(', ')} vs first load ${s.web.firstLoad.join(', ')}`);
  assert.ok(lazy.some((c) => readFileSync(path.join(s.web.dir, c), 'utf8').includes('rankdir')), 'dagre (the layout) is in a chunk loaded on demand');
  for (const f of s.web.firstLoad) assert.ok(!readFileSync(path.join(s.web.dir, f), 'utf8').includes('rankdir'), `${f} (first load) holds no dagre`);
  for (const t of ['/index.html', '/item/', '/items/x', '/graph/', '/history/', '/assets/app-XXXX.js', `/assets/../manifest.json`, '/assets/manifest.json', `/assets/%2e%2e%2fmanifest.json`]) {
    const r = await get(t);
    assert.equal(r.status, 404, `${t}: ${r.status} ${r.text.slice(0, 200)}`);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  }
  const post = await get('/lake', {}, 'POST');
  assert.equal(post.status, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
});

test('web: assets are sent brotli, else gzip, else plain, each with its own strong ETag (304 on a match) and immutable caching; the first load of / is measured', async () => {
  let firstLoad = { br: 0, gzip: 0, identity: 0 };
  for (const file of s.web.firstLoad) {
    const t = `/assets/${file}`;
    const plain = await fetch(`${s.server.url}${t}`, { headers: { 'accept-encoding': 'identity' } });
    const bytes = Buffer.from(await plain.arrayBuffer());
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(plain.headers.get('content-type') ?? '', file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    const etags = new Set<string>();
    for (const [accept, enc, decode] of [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip;q=1, br;q=0', 'gzip', gunzipSync],
      ['*', 'br', brotliDecompressSync],
    ] as const) {
      const r = await wire(t, { 'accept-encoding': accept });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], enc, accept);
      assert.equal(r.headers.vary, 'Accept-Encoding');
      assert.equal(Number(r.headers['content-length']), r.body.length);
      assert.ok(r.body.length < bytes.length / 2, `${file} ${enc}: ${r.body.length} bytes of ${bytes.length}`);
      assert.deepEqual(decode(r.body), bytes, `${file} decoded from ${enc} is the file`);
      etags.add(r.headers.etag as string);
      const again = await wire(t, { 'accept-encoding': accept, 'if-none-match': r.headers.etag as string });
      assert.equal(again.status, 304, accept);
      assert.equal(again.body.length, 0);
    }
    etags.add(plain.headers.get('etag')!);
    assert.equal(etags.size, 3, `one ETag per encoding: ${[...etags].join(' ')}`);
    firstLoad = { br: firstLoad.br + (await wire(t, { 'accept-encoding': 'br' })).body.length, gzip: firstLoad.gzip + (await wire(t, { 'accept-encoding': 'gzip' })).body.length, identity: firstLoad.identity + bytes.length };
  }
  for (const [k, accept] of [['br', 'br'], ['gzip', 'gzip'], ['identity', 'identity']] as const) firstLoad[k] += (await wire('/', { 'accept-encoding': accept })).body.length;
  console.log(`web: first load of / (shell + JS + CSS): ${firstLoad.br} bytes brotli, ${firstLoad.gzip} gzip, ${firstLoad.identity} plain; bundle built in ${s.web.ms.toFixed(0)} ms`);
  assert.ok(firstLoad.gzip < 300_000, `the first load of / is ${firstLoad.gzip} bytes gzip, above the 300 kB aim`);
  const head = await wire('/', { 'accept-encoding': 'br' }, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
});

test('web: /api/source gives a file\'s stored lines at the read generation; an unknown file is a 404 that says so', async () => {
  const r = await get('/api/source?repo=@universe&krate=fnvish@0.2.1&file=src/lib.rs&from=16&to=19');
  assert.equal(r.status, 200, r.text);
  const b = JSON.parse(r.text) as { generation: number; lineCount: number; lines: { line: number; text: string }[] };
  assert.deepEqual(b.lines.map((l) => l.line), [16, 17, 18, 19]);
  assert.equal(b.lines[1]!.text, 'pub fn hash_str(s: &str) -> u64 {');
  assert.equal(String(b.generation), r.headers['x-mimir-generation']);
  const gone = await get('/api/source?repo=sample&krate=tally@0.1.0&file=src/nope.rs');
  assert.equal(gone.status, 404, gone.text);
  assert.match(JSON.parse(gone.text).error, /no text of src\/nope\.rs in crate tally@0\.1\.0 of repo sample at generation \d+/);
  const bad = await get('/api/source?repo=sample&krate=tally@0.1.0&file=src/lib.rs&from=9&to=3');
  assert.equal(bad.status, 400);
  assert.match(JSON.parse(bad.text).error, /to \(3\) is before from \(9\)/);
  assert.equal((await get('/api/source?repo=sample&file=src/lib.rs')).status, 400);
});

test('web: an unknown path\'s 404 carries the did-you-mean suggestions as a list', async () => {
  const r = await get('/api/def?path=fnvish::hash_st');
  assert.equal(r.status, 404);
  const b = JSON.parse(r.text) as { error: string; suggestions: string[] };
  assert.deepEqual(b.suggestions, ['fnvish::hash_str']);
  assert.match(b.error, /did you mean fnvish::hash_str/);
  const lake = JSON.parse((await get('/api/lake?generations=0&runs=0')).text) as { crates: { repo: string; krate: string }[] };
  assert.deepEqual(lake.crates, [
    { repo: '@universe', krate: 'fnvish@0.2.1' },
    { repo: 'sample', krate: 'tally-cli@0.1.0' },
    { repo: 'sample', krate: 'tally@0.1.0' },
  ]);
});

test('web: without a build, / says how to make one (503) and the JSON API still answers', async () => {
  const bare = await startServer({ lake: s.lake, port: 0, webDir: path.join(s.dir, 'no-such-build') });
  try {
    const r = await request(bare.url, '/item/fnvish::hash_str');
    assert.equal(r.status, 503);
    assert.match(r.text, /The web UI is not built/);
    assert.match(r.text, /npm run build/);
    assert.equal((await request(bare.url, '/assets/app-X.js')).status, 404);
    assert.equal((await request(bare.url, '/api/def?path=fnvish::hash_str')).status, 200);
  } finally {
    await bare.close();
  }
});

/** A response as sent (node:http: no decoding, so sizes are the wire's). */
async function wire(target: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const http = await import('node:http');
  const u = new URL(s.server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
