// `mimir serve` as a real process: it binds 127.0.0.1 unless --host says
// otherwise (and a non-loopback --host prints a warning), prints its URL once
// listening, holds a read lease (a pin) while it serves a generation, and
// stops on SIGTERM with exit 0, releasing its leases. Bad options are usage
// errors (exit 2); a folder without a lake is a failure (exit 1).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { Lake } from '../../src/lake/lake.ts';
import { sampleLake } from '../query/sample.ts';
import { runCli } from '../cli/run-cli.ts';
import { request } from './http.ts';

const work = scratch('mimir-serve-bind-');
const lake = path.join(work.dir, 'lake');
after(work.cleanup);
before(async () => {
  const { log } = await sampleLake(lake);
  log.close();
});

interface Serving {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Start `mimir serve ARGS` and wait for its URL line. */
function serve(args: string[]): Promise<Serving> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), 'serve', '--port', '0', ...args], {
      cwd: repoRoot,
      env: { ...process.env, MIMIR_LAKE: lake },
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

test('serve: binds 127.0.0.1 by default, quietly; holds a pin lease while serving; SIGTERM stops it with exit 0 and releases it', async () => {
  const s = await serve([]);
  try {
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await request(s.url, '/api/callers?path=regex::Regex::new');
    assert.equal(r.status, 200, r.text);
    const l = Lake.open(lake, { create: false });
    try {
      const pins = l.catalog.liveLeases().filter((x) => x.pid === s.child.pid);
      assert.deepEqual(pins.map((x) => x.note), [`pin ${r.headers['x-mimir-generation']}`], 'one read lease, on the generation served');
    } finally {
      l.close();
    }
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.equal(await s.exit, 0);
  assert.doesNotMatch(s.stderr(), /warning/);
  assert.match(s.stderr(), /mimir serve: stopped \(SIGTERM\) after 1 requests/);
  const l = Lake.open(lake, { create: false });
  try {
    assert.deepEqual(l.catalog.liveLeases().filter((x) => x.pid === s.child.pid), []);
  } finally {
    l.close();
  }
});

test('serve: a --host other than loopback prints a warning; bad options are usage errors; no lake is a failure', async () => {
  const s = await serve(['--host', '0.0.0.0']);
  try {
    assert.match(s.url, /^http:\/\/0\.0\.0\.0:\d+$/);
    assert.match(s.stderr(), /mimir serve: warning: listening on 0\.0\.0\.0, not loopback — anyone who can reach this machine/);
    const port = new URL(s.url).port;
    assert.equal((await request(`http://127.0.0.1:${port}`, '/api')).status, 200);
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.equal(await s.exit, 0);
  for (const args of [['--port', 'x'], ['--port', '70000'], ['--timeout', 'soon'], ['--readers', '0']]) {
    const r = await runCli(['serve', ...args], { lake });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const none = await runCli(['serve', '--port', '0'], { lake: path.join(work.dir, 'absent') });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^mimir serve: no lake at .*absent \(no catalog.db there\)/);
});
