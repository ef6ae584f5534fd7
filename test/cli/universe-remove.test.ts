// `mimir universe remove` and `ingest --deps` on the command line: a refusal is exit 1 naming
// the repos and nothing written, --force removes, --json is the report; a bad --deps is a
// usage error (exit 2); a missing dependency prints where Mimir looked and what is present.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from './run-cli.ts';

const work = scratch('mimir-cli-universe-remove-');
after(work.cleanup);

test('universe remove: refused with exit 1 while the sample points into it, --force removes it (--json), ingest --deps nearest warns', async () => {
  const lake = path.join(work.dir, 'lake');
  const ws = path.join(work.dir, 'workspace');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const ing = await runCli(['ingest', ws, '--repo', 'sample', '--with-deps', '--no-maintain'], { lake });
  assert.equal(ing.code, 0, ing.stderr);

  const refused = await runCli(['universe', 'remove', 'fnvish@0.2.1'], { lake });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refused — live edges of repos point into fnvish@0\.2\.1 \(sample: \d+\)/);
  const dry = await runCli(['universe', 'remove', 'fnvish@0.2.1', '--dry-run'], { lake });
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^universe remove fnvish@0\.2\.1 \(dry run\): would write \d+ remove events .*edges pointing into it: sample \d+ — nothing written/);
  const forced = await runCli(['universe', 'remove', 'fnvish@0.2.1', '--force', '--json'], { lake });
  assert.equal(forced.code, 0, forced.stderr);
  const r = JSON.parse(forced.stdout) as { krate: string; forced: boolean; events: number };
  assert.equal(r.krate, 'fnvish@0.2.1');
  assert.equal(r.forced, true);
  assert.ok(r.events > 0);
  assert.equal((await runCli(['def', 'fnvish::hash_str'], { lake })).stdout.includes('@universe'), false);

  assert.equal((await runCli(['ingest', ws, '--deps', 'closest'], { lake })).code, 2);

  // the lock asks for 0.2.3; vendor/ holds 0.2.1 only
  const lock = path.join(ws, 'Cargo.lock');
  writeFileSync(lock, readFileSync(lock, 'utf8').replace('version = "0.2.1"', 'version = "0.2.3"'));
  const near = await runCli(['ingest', ws, '--repo', 'sample', '--with-deps', '--deps', 'nearest', '--no-maintain'], { lake });
  assert.equal(near.code, 0, near.stderr);
  assert.match(near.stdout, /^dependencies looked for in: .*vendor/m);
  assert.match(near.stdout, /^dependency not found locally: fnvish@0\.2\.3 \(other versions present: locally 0\.2\.1\)$/m);
  assert.match(near.stdout, /^warning: fnvish@0\.2\.3 is not in the lake; its paths resolve into fnvish@0\.2\.1 instead \(--deps nearest/m);
});
