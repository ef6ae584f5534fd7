// Reruns after an outcome the user never saw converge: `repo remove` and
// `universe remove` killed right after their commit landed (a real SIGKILL at
// the `run:committed` crash point), then run again, exit 0 saying "already
// removed at generation G" (G: the generation the killed run landed in) and
// write nothing; a name that never existed stays an error, with did-you-mean.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from './run-cli.ts';

const work = scratch('mimir-cli-rerun-');
after(work.cleanup);

/** The current generation, from the generation log's newest line (`mimir log generations --json`). */
async function generation(lake: string): Promise<bigint> {
  const r = await runCli(['log', 'generations', '--json', '--limit', '1'], { lake });
  assert.equal(r.code, 0, r.stderr);
  const m = /"generation":\s*"?(\d+)/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return BigInt(m[1]!);
}

test('rerun: a repo remove and a universe remove killed after their commit, run again, say "already removed at generation G" with exit 0 and write nothing; an unknown repo is exit 1 with did-you-mean', async () => {
  const lake = path.join(work.dir, 'lake');
  const ws = path.join(work.dir, 'workspace');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const ing = await runCli(['ingest', ws, '--repo', 'sample', '--with-deps', '--no-maintain'], { lake });
  assert.equal(ing.code, 0, ing.stderr);

  // killed right after the catalog commit: the user saw no answer
  const killed = await runCli(['repo', 'remove', 'sample'], { lake, env: { MIMIR_CRASH_AT: 'run:committed' } });
  assert.equal(killed.code, null, `killed (exit ${killed.code}): ${killed.stderr}`);
  const landedAt = await generation(lake);
  const again = await runCli(['repo', 'remove', 'sample'], { lake });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^repo remove sample: already removed at generation ${landedAt} by run \\S+ — nothing to do, nothing written`));
  assert.equal(await generation(lake), landedAt, 'the rerun wrote nothing');
  const json = await runCli(['repo', 'remove', 'sample', '--json'], { lake });
  assert.equal(json.code, 0, json.stderr);
  assert.match(json.stdout, new RegExp(`"alreadyRemoved":\\s*\\{\\s*"generation":\\s*"?${landedAt}`));

  const unknown = await runCli(['repo', 'remove', 'sampel'], { lake });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /repo sampel has no live item in the lake .* and never had one \(did you mean sample\?\) — nothing removed/);

  const uKilled = await runCli(['universe', 'remove', 'fnvish@0.2.1'], { lake, env: { MIMIR_CRASH_AT: 'run:committed' } });
  assert.equal(uKilled.code, null, `killed (exit ${uKilled.code}): ${uKilled.stderr}`);
  const uAt = await generation(lake);
  const uAgain = await runCli(['universe', 'remove', 'fnvish@0.2.1'], { lake });
  assert.equal(uAgain.code, 0, uAgain.stderr);
  assert.match(uAgain.stdout, new RegExp(`^universe remove fnvish@0\\.2\\.1: already removed at generation ${uAt} by run \\S+ — nothing to do, nothing written`));
  assert.equal(await generation(lake), uAt, 'the rerun wrote nothing');
  const never = await runCli(['universe', 'remove', 'fnvish@9.9.9'], { lake });
  assert.equal(never.code, 1);
  assert.match(never.stderr, /the universe has no fnvish@9\.9\.9/);
});
