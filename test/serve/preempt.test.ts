// `mimir serve` as a real process stays responsive whatever one request
// costs: a find of 40 stars and a literal (which once froze the whole server:
// an exponential RegExp, then no timer, connection or signal ran) answers,
// `/api` answers beside it, and SIGTERM stops the process. A request kept busy
// on purpose (MIMIR_TEST_BUSY_ANSWER_MS, cli/serve.ts: CPU in preempted steps,
// as a long scan) gets the time-limit 504 while `/api` answers, its work stops
// (no answer left in progress), and SIGTERM during such a request stops the
// process within seconds, the request getting a 503.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { node, sampleLake } from '../query/sample.ts';
import { request, type Reply } from './http.ts';

type Obj = { [k: string]: Json };
const work = scratch('mimir-serve-preempt-');
const lake = path.join(work.dir, 'lake');
after(work.cleanup);
/** A long name, as large lakes have many: a RegExp of 40 `.*` never finishes on it. */
const LONG = 'a_rather_long_function_name_that_goes_on_and_on_and_on';
before(async () => {
  const { log } = await sampleLake(lake);
  await log.append('node', [node('alpha', 'alpha@0.1.0', 'a-long', `alpha::${LONG}`, { file: 'src/lib.rs', line: 40 })]);
  log.close();
});

/**
 * Bounds on waits, none a measure of speed: what they wait for takes well under
 * a second here (a stop: ~0.1 s); the unfixed server never answers at all.
 */
const ANSWER_MS = 60_000;
const STOP_MS = 30_000;

interface Serving {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function serve(args: string[], env: Record<string, string> = {}): Promise<Serving> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), 'serve', '--port', '0', ...args], {
      cwd: repoRoot,
      env: { ...process.env, MIMIR_LAKE: lake, ...env },
    });
    let out = '';
    let err = '';
    const exit = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+) /.exec(out);
      if (m) resolve({ child, url: m[1]!, stderr: () => err, exit });
    });
    void exit.then((code) => reject(new Error(`mimir serve exited ${code} before listening: ${err}`)));
  });
}

/** `p`, or a failure naming `what` once `ms` have passed. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const body = (r: Reply): Obj => parseJson(r.text) as Obj;
const stats = async (url: string): Promise<Obj> => body(await within(ANSWER_MS, '/api', request(url, '/api'))).stats as Obj;

async function stop(s: Serving): Promise<number | null> {
  s.child.kill('SIGTERM');
  return within(STOP_MS, 'exit after SIGTERM', s.exit);
}

const STARS = '*'.repeat(40);

test('serve: a find of 40 stars and a literal answers, /api answers beside it, SIGTERM stops the server', { timeout: 300_000 }, async () => {
  const s = await serve([]);
  try {
    const [miss, index] = await Promise.all([
      within(ANSWER_MS, 'the 40-star find', request(s.url, `/api/find?name=${STARS}QQQQ`)),
      new Promise<Reply>((r) => setTimeout(() => r(within(ANSWER_MS, '/api beside the 40-star find', request(s.url, '/api'))), 100)),
    ]);
    assert.equal(index.status, 200, index.text);
    assert.equal(miss.status, 404, miss.text);
    assert.match(body(miss).error as string, /no item matches "\*{40}QQQQ"|no such item/);
    const hit = await within(ANSWER_MS, 'the 40-star find that matches', request(s.url, `/api/find?name=${STARS}eck`));
    assert.equal(hit.status, 200, hit.text);
    assert.deepEqual((body(hit).hits as Obj[]).map((h) => h.qpath), ['beta::util::check']);
    const long = await within(ANSWER_MS, 'the 40-star find of the long name', request(s.url, `/api/find?name=a${STARS}on`));
    assert.deepEqual((body(long).hits as Obj[]).map((h) => h.qpath), [`alpha::${LONG}`]);
    assert.equal(await stop(s), 0);
    assert.match(s.stderr(), /mimir serve: stopped \(SIGTERM\) after 4 requests/);
  } finally {
    s.child.kill('SIGKILL');
  }
});

test('serve: the time limit fires on a busy answer (504, its work stopped) while /api answers; SIGTERM during a busy answer stops the server', { timeout: 300_000 }, async () => {
  // every answer would compute for 10 minutes; the limit is 2 s
  const s = await serve(['--timeout', '2s'], { MIMIR_TEST_BUSY_ANSWER_MS: '600000' });
  try {
    const busy = within(ANSWER_MS, 'the busy find', request(s.url, '/api/find?name=check'));
    // /api answers while the busy answer computes (asked until it says so: start-up on a loaded machine is slow)
    let during = await stats(s.url);
    for (let i = 0; i < 100 && during.active !== 1; i++) during = await stats(s.url);
    assert.equal(during.active, 1, 'one answer in progress, and /api answered meanwhile');
    const late = await busy;
    assert.equal(late.status, 504, late.text);
    assert.equal(body(late).status, 504);
    assert.match(body(late).error as string, /not ready within the time limit \(2000 ms\): its work was stopped and nothing was cached — narrow the question .* or start the server with a longer --timeout/);
    // the work stopped: no answer left in progress (the unstopped one would run for 10 minutes)
    let afterwards = await stats(s.url);
    for (let i = 0; i < 100 && afterwards.active !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      afterwards = await stats(s.url);
    }
    assert.equal(afterwards.active, 0, 'the cancelled answer freed its reader');

    // SIGTERM while an answer is busy: the request gets a 503 (or its connection closes) and the process exits 0
    const second = request(s.url, '/api/def?path=alpha::main').then(
      (r) => r,
      (e: Error) => e,
    );
    let busyAgain = await stats(s.url);
    for (let i = 0; i < 100 && busyAgain.active !== 1; i++) busyAgain = await stats(s.url);
    assert.equal(busyAgain.active, 1);
    assert.equal(await stop(s), 0);
    const r = await second;
    if (!(r instanceof Error)) {
      assert.equal(r.status, 503, r.text);
      assert.match(body(r).error as string, /the server is stopping/);
    }
    assert.match(s.stderr(), /mimir serve: stopped \(SIGTERM\)/);
  } finally {
    s.child.kill('SIGKILL');
  }
});
