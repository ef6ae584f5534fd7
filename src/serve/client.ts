// The client side of `mimir serve`, for the CLI: asks a question of a running
// server (GET /api/<question>?<parameters>, questions.ts) and returns the
// answer's JSON, parsed losslessly (integers above 2^53 as bigints). An error
// reply becomes a ServerError carrying the server's own message, so the CLI
// prints what it would have printed reading the lake itself. node:http only
// (it loads faster than fetch); plain http, as the server speaks.
import * as http from 'node:http';
import { parseJson, type Json } from '../lake/spec/json.ts';
import { questionParams, type Question } from './questions.ts';

/** The server answered with an error status; `message` is its own. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** `host:port` or `http://host:port[/]` as a base URL; anything else is refused. */
export function serverUrl(text: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new Error(`expected a server address such as http://127.0.0.1:7700, found "${text}"`);
  }
  if (u.protocol !== 'http:') throw new Error(`expected an http:// server address (mimir serve speaks plain HTTP), found "${text}"`);
  return u;
}

/** The answer of the server at `base` to `q`, as JSON. */
export function askServer(base: URL, q: Question, timeoutMs = 120_000): Promise<Json> {
  const search = new URLSearchParams(questionParams(q)).toString();
  const path = `${base.pathname.replace(/\/+$/, '')}/api/${q.q}${search ? `?${search}` : ''}`;
  return get(base, path, timeoutMs);
}

function get(base: URL, path: string, timeoutMs: number): Promise<Json> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname.replace(/^\[|\]$/g, ''), port: base.port || 80, path, method: 'GET', timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Json;
        try {
          body = parseJson(text);
        } catch {
          return reject(new ServerError(res.statusCode ?? 0, `the server at ${base.origin} answered ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`));
        }
        if (res.statusCode === 200) return resolve(body);
        const msg = body !== null && typeof body === 'object' && !Array.isArray(body) && typeof body.error === 'string' ? body.error : text.slice(0, 200);
        reject(new ServerError(res.statusCode ?? 0, msg));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`the server at ${base.origin} did not answer within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'EHOSTUNREACH') {
        reject(new Error(`cannot reach a mimir server at ${base.origin} (${e.code}): nothing was asked — start one with 'mimir serve', or unset MIMIR_SERVER / drop --server to read the lake directly`));
      } else reject(e);
    });
    req.end();
  });
}
