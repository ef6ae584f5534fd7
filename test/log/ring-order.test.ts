// Ring split and unsplit keep the commit order of each id's events: a
// universe crate added then removed stays removed after the copy. The copy
// used to stream the source's files in the scan's plan order (newest
// manifests first) into one commit, so a crate's `remove` rows could land
// before its `add` rows at one sequence number and the fold (latest row
// wins) brought the crate back — in the log, its history and its answers,
// while the state tables still said removed (`state verify` failed). Found
// by the chaos campaign (npm run chaos, seed 1517792552 step 85: ring
// unsplit after universe remove fnvish@0.2.1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { eq } from '../../src/lake/expr/expr.ts';

const fnvish = path.join(repoRoot, 'samples', 'workspace', 'vendor', 'fnvish-0.2.1');

for (const [from, op] of [['split', 'unsplit'], ['unified', 'split']] as const) {
  // six CLI processes, ~1.5 s each when idle; the limit allows 10x and more for a loaded machine
  test(`ring ${op}: a universe crate added then removed stays removed (events copied in commit order)`, { timeout: 180_000 }, async () => {
    const s = scratch('mimir-ring-order-');
    try {
      const lake = path.join(s.dir, 'lake');
      for (const args of [['init', '--ring', from], ['universe', 'add', fnvish], ['universe', 'remove', 'fnvish@0.2.1', '--force'], ['ring', op], ['state', 'verify']]) {
        const r = await runCli(args, { lake });
        assert.equal(r.code, 0, `mimir ${args.join(' ')} exited ${r.code}:\n${r.stdout}${r.stderr}`);
      }
      const log = await EventLog.open(lake, { readOnly: true });
      try {
        const live = await log.state('node', eq('krate', 'fnvish@0.2.1'));
        assert.deepEqual([...live.values()].map((n) => n.qpath), [], 'no item of the removed crate is live in the log');
        assert.ok((await log.rows('node', { filter: eq('krate', 'fnvish@0.2.1') })).length >= 10, 'its add and remove events are all kept');
      } finally {
        log.close();
      }
    } finally {
      s.cleanup();
    }
  });
}
