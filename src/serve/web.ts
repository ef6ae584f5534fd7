// The web UI's files as `mimir serve` sends them: the page shell (one HTML
// document for every page route: `/`, `/search`, `/lake`, `/item/<path>`,
// `/graph/<path>`, `/history/<path>`, `/diff`; the front end in web/ routes
// on the client) and the built assets, one JS and one CSS file and the JS
// chunks pages load on demand, each named by its content hash
// (scripts/build-web.ts writes them and `manifest.json` into dist/web/). Each file is sent
// compressed as the request's Accept-Encoding allows (brotli, else gzip,
// else as is; each encoding made once and kept), with a strong ETag per
// encoding (a matching If-None-Match gets a 304); hashed assets are
// `Cache-Control: immutable`, the shell `no-cache` (it names the current
// assets). The shell's Content-Security-Policy lets the page load and fetch
// only from this server: nothing leaves the machine.
//
// Invariant: no request names a file. An asset is looked up by its name in
// the manifest's list; nothing from the URL is joined to a folder. When the
// manifest is missing or unreadable the shell is a page saying how to build
// the UI (503), and the JSON API is unaffected.
// Reload: the manifest's mtime is checked on each shell request, so a
// `npm run build` while the server runs is picked up by the next page load.
// Crash story: nothing written; nothing to recover.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type * as http from 'node:http';
import * as nodePath from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';

/** The file scripts/build-web.ts writes beside the assets: their names. */
export const WEB_MANIFEST = 'manifest.json';

/** URL prefix of the built assets. */
export const ASSET_PREFIX = '/assets/';

/** Paths answered with the page shell (client-side routes). */
export function isPageRoute(pathname: string): boolean {
  if (pathname === '/' || pathname === '/search' || pathname === '/lake' || pathname === '/diff') return true;
  return ['/item/', '/graph/', '/history/'].some((p) => pathname.startsWith(p) && pathname.length > p.length);
}

type Encoding = 'br' | 'gzip' | 'identity';

/** One file as sent: its bytes, type and cache policy, with its encodings made on first use. */
class WebFile {
  private readonly encoded = new Map<Encoding, Buffer>();
  readonly etag: string;
  constructor(
    readonly bytes: Buffer,
    readonly type: string,
    readonly cacheControl: string,
  ) {
    this.etag = createHash('sha256').update(bytes).digest('base64url').slice(0, 22);
    this.encoded.set('identity', bytes);
  }

  body(e: Encoding): Buffer {
    let b = this.encoded.get(e);
    if (!b) {
      b = e === 'br' ? brotliCompressSync(this.bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: this.bytes.length } }) : gzipSync(this.bytes, { level: 9 });
      this.encoded.set(e, b);
    }
    return b;
  }
}

interface Built {
  mtimeMs: number;
  shell: WebFile;
  assets: Map<string, WebFile>;
}

/** What the server needs of a built UI folder. */
export class WebAssets {
  private built: Built | null = null;
  constructor(readonly dir: string) {}

  /** The built UI, reloaded when its manifest changed; null (with the reason) when it is not built. */
  private current(): Built | string {
    const manifest = nodePath.join(this.dir, WEB_MANIFEST);
    let mtimeMs: number;
    try {
      mtimeMs = statSync(manifest).mtimeMs;
    } catch {
      return `no ${manifest}`;
    }
    if (this.built?.mtimeMs === mtimeMs) return this.built;
    try {
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as { js?: unknown; css?: unknown; chunks?: unknown };
      const named = (v: unknown, ext: string): string => {
        if (typeof v !== 'string' || !new RegExp(`^[\\w-]+\\.${ext}$`).test(v)) throw new Error(`${manifest}: expected a ${ext} file name, found ${JSON.stringify(v)}`);
        return v;
      };
      const js = named(m.js, 'js');
      const css = named(m.css, 'css');
      if (m.chunks !== undefined && !Array.isArray(m.chunks)) throw new Error(`${manifest}: expected "chunks" to be a list of file names, found ${JSON.stringify(m.chunks)}`);
      const chunks = ((m.chunks ?? []) as unknown[]).map((c) => named(c, 'js'));
      const immutable = 'public, max-age=31536000, immutable';
      const assets = new Map<string, WebFile>([
        [js, new WebFile(readFileSync(nodePath.join(this.dir, js)), 'text/javascript; charset=utf-8', immutable)],
        [css, new WebFile(readFileSync(nodePath.join(this.dir, css)), 'text/css; charset=utf-8', immutable)],
        ...chunks.map((c): [string, WebFile] => [c, new WebFile(readFileSync(nodePath.join(this.dir, c)), 'text/javascript; charset=utf-8', immutable)]),
      ]);
      this.built = { mtimeMs, shell: new WebFile(Buffer.from(shellHtml(js, css)), 'text/html; charset=utf-8', 'no-cache'), assets };
      return this.built;
    } catch (e) {
      return (e as Error).message;
    }
  }

  /** The shell for a page route, or an asset; undefined for a name the build did not make (the caller's 404). */
  file(pathname: string): WebFile | { missing: string } | undefined {
    const b = this.current();
    if (typeof b === 'string') return pathname.startsWith(ASSET_PREFIX) ? undefined : { missing: b };
    if (pathname.startsWith(ASSET_PREFIX)) return b.assets.get(pathname.slice(ASSET_PREFIX.length));
    return b.shell;
  }
}

/** Security headers of every UI response: only this origin, no framing, no sniffing. */
const SECURITY = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function shellHtml(js: string, css: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    '<title>Mimir</title>',
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="${ASSET_PREFIX}${css}">`,
    `<script type="module" src="${ASSET_PREFIX}${js}"></script>`,
    '</head>',
    '<body><div id="app"><noscript>The Mimir web UI needs JavaScript; the JSON API is at <a href="/api">/api</a>.</noscript></div></body>',
    '</html>',
    '',
  ].join('\n');
}

/** The encoding to send: brotli, else gzip, when Accept-Encoding takes it (q > 0). */
export function chooseEncoding(accept: string | undefined): Encoding {
  const q = new Map<string, number>();
  for (const part of (accept ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    q.set(name, qp === undefined ? 1 : Number(qp.slice(2)) || 0);
  }
  const takes = (e: string): boolean => (q.get(e) ?? q.get('*') ?? 0) > 0;
  return takes('br') ? 'br' : takes('gzip') ? 'gzip' : 'identity';
}

/** Send a UI file (GET or HEAD), honouring If-None-Match. Returns the status sent. */
export function sendWebFile(req: http.IncomingMessage, res: http.ServerResponse, f: WebFile): number {
  const enc = chooseEncoding(req.headers['accept-encoding']);
  const etag = `"${f.etag}${enc === 'identity' ? '' : `-${enc}`}"`;
  const headers: Record<string, string> = { 'content-type': f.type, 'cache-control': f.cacheControl, etag, vary: 'Accept-Encoding', ...SECURITY };
  const inm = req.headers['if-none-match'];
  if (inm !== undefined && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    res.writeHead(304, headers);
    res.end();
    return 304;
  }
  const body = f.body(enc);
  if (enc !== 'identity') headers['content-encoding'] = enc;
  headers['content-length'] = String(body.length);
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
  return 200;
}

/** The page a browser gets when the UI is not built: what to run. */
export function sendNotBuilt(req: http.IncomingMessage, res: http.ServerResponse, dir: string, why: string, root: string): number {
  const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const body = Buffer.from(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Mimir: web UI not built</title></head><body>\n<h1>The web UI is not built</h1>\n<p>This server looks for it in <code>${esc(dir)}</code> and found ${esc(why)}.</p>\n<p>Build it with <code>npm run build</code> in <code>${esc(root)}</code>, then reload this page (no restart needed). The JSON API works without it: <a href="/api">/api</a>.</p>\n</body></html>\n`,
  );
  res.writeHead(503, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-store', ...SECURITY });
  res.end(req.method === 'HEAD' ? undefined : body);
  return 503;
}
