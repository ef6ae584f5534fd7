// README.md's commands run as written. Every line of every ```sh block of the
// README is a command (comments and blank lines aside); each one is either run
// here — through /bin/sh, exactly as written, from a scratch copy of the
// checkout (a folder of symlinks to its entries), with `mimir` on PATH as a
// shim for `node bin/mimir.js` and $MIMIR_LAKE naming a demo lake built once
// in the scratch folder by the README's own `npm run demo` — and must
// exit 0 and print something on stdout, or is listed in SKIPPED below with the
// reason it cannot run in a test. A README line in neither list fails the test
// (so a new example must be made runnable or skipped on purpose), and so does
// a SKIPPED entry the README no longer has.
//
// Nothing outside the scratch folder is written by a README command: the lake
// is $MIMIR_LAKE there (no README command names --lake except the skipped
// ones), and a file a command writes to its working folder (`> out.txt`)
// lands in the scratch copy, not in the checkout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';

/** README lines that cannot run in a test, each with the reason. */
const SKIPPED = new Map<string, string>([
  ['npm ci', 'reinstalls node_modules (a shared install here); the test runs on the installed checkout'],
  ['npm test', 'the whole suite, this file included; .ci/run runs it'],
  ['mimir serve --lake /srv/mimir-lake --host 0.0.0.0 --port 7700', 'a server: it does not exit (test/serve/ covers it), and it would listen on every interface'],
  [
    'mimir ingest . --repo myproject --with-deps --catalog postgresql://mimir@db.internal/mimir --warehouse s3://acme-mimir/lake',
    'needs a PostgreSQL server at db.internal (test/cli/catalog-pg.test.ts runs the same against a throwaway server)',
  ],
]);

/** The README line that builds the demo lake; run once, before the others. */
const DEMO = 'npm run demo';

/** Lines run as written: the CLI (as `mimir`, `npx mimir`, `node bin/mimir.js`) and the demo. */
const RUNNABLE = /^(mimir|npx mimir|node bin\/mimir\.js|npm run mimir --) |^npm run demo$/;

/** Without its trailing `# comment` (a `#` outside quotes, after a blank). */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) {
      return line.slice(0, i);
    }
  }
  return line;
}

/** Every command of the README's ```sh blocks, in order (continuation lines joined). */
function readmeCommands(markdown: string): string[] {
  const out: string[] = [];
  let inSh = false;
  let inOther = false;
  let pending = '';
  for (const raw of markdown.split('\n')) {
    const fence = /^\s*```(\S*)/.exec(raw);
    if (fence) {
      if (inSh || inOther) {
        inSh = inOther = false;
      } else if (fence[1] === 'sh' || fence[1] === 'bash' || fence[1] === 'shell') {
        inSh = true;
      } else {
        inOther = true;
      }
      continue;
    }
    if (!inSh) continue;
    const line = pending + stripComment(raw).trim();
    if (line.endsWith('\\')) {
      pending = line.slice(0, -1).trimEnd() + ' ';
      continue;
    }
    pending = '';
    if (line !== '') out.push(line);
  }
  return out;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const work = scratch('mimir-readme-');
const lake = path.join(work.dir, 'lake');
const shimDir = path.join(work.dir, 'bin');
/** The working folder of every command: the checkout's entries as symlinks (not .git, not a default lake). */
const checkout = path.join(work.dir, 'checkout');

/** `line` through /bin/sh from the scratch checkout, `mimir` on PATH, the demo lake as $MIMIR_LAKE. */
function sh(line: string): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${shimDir}${path.delimiter}${process.env.PATH ?? ''}`, MIMIR_LAKE: lake, NO_COLOR: '1' };
  for (const k of ['MIMIR_SERVER', 'MIMIR_CATALOG', 'MIMIR_CATALOG_NAME', 'MIMIR_DEBUG', 'MIMIR_ANSWER_FROM']) delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', line], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const show = (line: string, r: Run): string => `README command: ${line}\nexit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

const commands = readmeCommands(readFileSync(path.join(repoRoot, 'README.md'), 'utf8'));

before(() => {
  mkdirSync(shimDir, { recursive: true });
  const shim = path.join(shimDir, 'mimir');
  writeFileSync(shim, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repoRoot, 'bin', 'mimir.js'))} "$@"\n`);
  chmodSync(shim, 0o755);
  mkdirSync(checkout);
  for (const entry of readdirSync(repoRoot)) {
    if (entry === '.git' || entry === 'mimir-lake') continue;
    symlinkSync(path.join(repoRoot, entry), path.join(checkout, entry));
  }
});
after(() => work.cleanup());

test('readme: every command line of a ```sh block is runnable or skipped with a reason', () => {
  assert.ok(commands.length >= 10, `expected the README to hold at least 10 commands in sh blocks, found ${commands.length}`);
  assert.ok(commands.includes(DEMO), `expected the README to hold "${DEMO}" (it builds the demo lake the others run on)`);
  assert.ok(commands.includes('npm test'), 'expected the README to hold "npm test" (the test command .ci/run runs)');
  const unhandled = commands.filter((c) => !SKIPPED.has(c) && !RUNNABLE.test(c));
  assert.deepEqual(unhandled, [], 'README commands neither run by this test nor listed in SKIPPED with a reason');
  const stale = [...SKIPPED.keys()].filter((c) => !commands.includes(c));
  assert.deepEqual(stale, [], 'SKIPPED names commands the README no longer has');
});

// Time limit: the demo and 10 commands took 15 s on an idle 2-core machine
// and 44 s at load 18;
// 10 minutes is about 40x the idle figure, for a machine at load 16.
test('readme: every runnable command exits 0 and prints an answer on the demo lake', { timeout: 600_000 }, async (t) => {
  const demo = await sh(DEMO);
  assert.equal(demo.code, 0, show(DEMO, demo));
  for (const line of commands) {
    if (line === DEMO || SKIPPED.has(line) || !RUNNABLE.test(line)) continue;
    await t.test(line, async () => {
      const r = await sh(line);
      assert.equal(r.code, 0, show(line, r));
      assert.notEqual(r.stdout.trim(), '', show(line, r));
    });
  }
});
