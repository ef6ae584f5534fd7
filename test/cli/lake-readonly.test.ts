// A read-only lake answers: after `chmod -R a-w`, a user who may not write it
// (uid 65534 when the tests run as root, else the owner itself) gets the same
// answers from `find`, `find --as-of`, `table scan`, `ring status` and `log
// generations` as the lake's owner, each with the note that this reader takes
// no lease; a write (`gc`) fails with exit 1 saying the lake is read-only, and
// no file of the lake changes; `state verify` and `gc --dry-run` succeed and
// write nothing. Real `mimir` processes, real permissions.
// Skipped, saying why, when this root process cannot start a process as uid
// 65534 or that user cannot read the checkout (it could not run mimir).
// And a read-only file system: the same lake bind-mounted read-only (when
// this process may mount) answers the same to root, whom no mode bit stops,
// and runs `state verify` and `gc --dry-run` the same.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { digests } from './digests.ts';

const work = scratch('mimir-cli-ro-');
const lake = path.join(work.dir, 'lake');
const rofs = path.join(work.dir, 'rofs');
let mounted = false;
after(() => {
  if (mounted && spawnSync('umount', [rofs]).status !== 0) spawnSync('umount', ['-l', rofs]);
  execFileSync('chmod', ['-R', 'u+w', work.dir]);
  work.cleanup();
});

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** Why the reader cannot be run here (the test's skip reason), or false. */
const cannotDropPrivileges: string | false = (() => {
  if (!asRoot) return false;
  const bin = path.join(repoRoot, 'bin', 'mimir.js');
  const r = spawnSync(process.execPath, ['-e', `require('node:fs').accessSync(${JSON.stringify(bin)}, 4)`], { uid: NOBODY, gid: NOBODY, encoding: 'utf8' });
  if (r.error) return `skipped: this root process cannot start one as uid ${NOBODY} (${r.error.message}), and a read-only lake must be read by a user who may not write it`;
  if (r.status !== 0) return `skipped: uid ${NOBODY} cannot read ${bin} (${r.stderr.trim().split('\n').pop() ?? ''}), so it cannot run mimir`;
  return false;
})();

/** Run the CLI as the reader: uid/gid 65534 when we are root, else as ourselves. */
function runAsReader(args: string[], lake: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, MIMIR_LAKE: lake, HOME: '/nonexistent' };
    delete env.MIMIR_DEBUG;
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), ...args], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const ok = (r: CliResult, what: string): CliResult => {
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${r.stderr}`);
  return r;
};

const QUESTIONS: string[][] = [
  ['find', 'Tally'],
  ['find', 'Tally', '--as-of', '2999-01-01T00:00:00Z'],
  ['table', 'scan', 'lake:mimir.code_node_events', '--columns', 'repo,krate,id,op'],
  ['ring', 'status', '--json'],
  ['log', 'generations', '--json'],
];

/** Commands that only look at the lake: they must work on a read-only one. */
const READ_ONLY_CHECKS: string[][] = [
  ['state', 'verify'],
  ['gc', '--dry-run', '--retain', '0', '--json'],
];

/**
 * A report without what may differ between runs: timings, and for gc what it
 * would delete (the owner's run leases the generation it reads, which keeps
 * its snapshots; a reader without write access takes no lease): the tables.
 */
const normalise = (out: string): string => {
  if (out.startsWith('{')) {
    const r = JSON.parse(out) as { tables: { table: string }[]; dryRun: boolean };
    return JSON.stringify({ dryRun: r.dryRun, tables: r.tables.map((t) => t.table) });
  }
  return out.replace(/ in \d+ ms/g, ' in 0 ms');
};

/** The owner's answers to QUESTIONS and READ_ONLY_CHECKS, from a writable lake. */
const expected: string[] = [];
const expectedChecks: string[] = [];
before(async () => {
  ok(await runCli(['ingest', path.join(repoRoot, 'samples', 'workspace'), '--repo', 'sample', '--with-deps'], { lake }), 'ingest');
  for (const q of QUESTIONS) expected.push(ok(await runCli(q, { lake }), q.join(' ')).stdout);
  for (const c of READ_ONLY_CHECKS) expectedChecks.push(normalise(ok(await runCli(c, { lake }), c.join(' ')).stdout));
});

test('read-only: a chmod -R a-w lake read by another user answers queries, table scan, ring status and log generations', { skip: cannotDropPrivileges }, async () => {
  // mkdtemp makes the scratch folder 0700: let the reader in, then take write access away
  chmodSync(work.dir, 0o755);
  execFileSync('chmod', ['-R', 'a-w', lake]);
  const before = digests(lake);
  for (const [i, q] of QUESTIONS.entries()) {
    const r = ok(await runAsReader(q, lake), `${q.join(' ')} as a reader without write access`);
    assert.equal(r.stdout, expected[i], `${q.join(' ')}: same answer as the owner's`);
    assert.match(r.stderr, /note: the lake at .* is opened read-only.*takes no lease, so a gc running elsewhere cannot see it/, q.join(' '));
  }
  for (const [i, c] of READ_ONLY_CHECKS.entries()) {
    const r = ok(await runAsReader(c, lake), `${c.join(' ')} as a reader without write access`);
    assert.equal(normalise(r.stdout), expectedChecks[i], `${c.join(' ')}: same report as the owner's`);
  }
  const gc = await runAsReader(['gc', '--retain', '0'], lake);
  assert.equal(gc.code, 1, `gc on a read-only lake fails: ${gc.stderr}`);
  assert.match(gc.stderr, /read-only/);
  assert.deepEqual(digests(lake), before, 'no file of the lake changed');
});

test('read-only: a lake on a read-only file system answers root the same, writes nothing and refuses gc', async (t) => {
  mkdirSync(rofs);
  mounted = spawnSync('mount', ['--bind', lake, rofs]).status === 0;
  if (mounted && spawnSync('mount', ['-o', 'remount,bind,ro', rofs]).status !== 0) {
    spawnSync('umount', [rofs]);
    mounted = false;
  }
  if (!mounted) {
    t.skip('skipped: cannot bind-mount a folder read-only here (needs root and CAP_SYS_ADMIN)');
    return;
  }
  assert.throws(() => writeFileSync(path.join(rofs, 'probe'), 'x'), /EROFS/, 'the mount is read-only, even for root');
  const before = digests(lake);
  for (const [i, q] of QUESTIONS.entries()) {
    const r = ok(await runCli(q, { lake: rofs }), `${q.join(' ')} on a read-only file system`);
    // the same lake under another path: answers naming the lake folder name the mount point
    assert.equal(r.stdout.split(rofs).join(lake), expected[i], `${q.join(' ')}: same answer as from the writable lake`);
    assert.match(r.stderr, /note: the lake at .* is opened read-only.*takes no lease/, q.join(' '));
  }
  for (const [i, c] of READ_ONLY_CHECKS.entries()) {
    const r = ok(await runCli(c, { lake: rofs }), `${c.join(' ')} on a read-only file system`);
    assert.equal(normalise(r.stdout.split(rofs).join(lake)), expectedChecks[i], `${c.join(' ')}: same report as from the writable lake`);
  }
  const gc = await runCli(['gc', '--retain', '0'], { lake: rofs });
  assert.equal(gc.code, 1, `gc on a read-only file system fails: ${gc.stderr}`);
  assert.match(gc.stderr, /read-only/);
  assert.deepEqual(digests(lake), before, 'no file of the lake changed');
});
