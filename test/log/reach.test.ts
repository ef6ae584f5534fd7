// The test helper reach.ts (what no metadata reaches: what gc must collect)
// maps a location as the lake's FileIO does, literally: a compacted unified
// lake names its ring rows' partition folder `repo=%40universe` on disk and
// in its metadata, and those files are reached, not reported as left over
// (fileURLToPath decoded `%40` to `@` and missed them: a false alarm of the
// chaos campaign's gc check, seed 1517792552 step 42).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';
import { unreferenced } from './reach.ts';

// four CLI processes, ~1.5 s each when idle; 10x and more for a loaded machine
test('reach: files under a percent-escaped partition folder (repo=%40universe) are reached', { timeout: 120_000 }, async () => {
  const s = scratch('mimir-reach-');
  try {
    const lake = path.join(s.dir, 'lake');
    for (const args of [['init', '--ring', 'unified'], ['universe', 'add', path.join(repoRoot, 'samples', 'workspace', 'vendor', 'fnvish-0.2.1')], ['compact']]) {
      const r = await runCli(args, { lake });
      assert.equal(r.code, 0, `mimir ${args.join(' ')}: ${r.stderr}`);
    }
    const escaped = (readdirSync(lake, { recursive: true }) as string[]).filter((f) => f.includes(`repo=%40universe${path.sep}`) && f.endsWith('.parquet'));
    assert.ok(escaped.length >= 3, `compaction wrote files under repo=%40universe (found ${escaped.length})`);
    assert.deepEqual((await unreferenced(lake)).filter((f) => f.includes('%40')), []);
  } finally {
    s.cleanup();
  }
});
