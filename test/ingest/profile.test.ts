// The profile whose cfg an ingest evaluates (src/extract/resolve/cfg.ts):
// the dev profile by default (`debug_assertions` on, as `cargo build`,
// `cargo check` and rust-analyzer), the release profile with `release`
// (ingest `--release`). The profile is part of a crate's fingerprint: the
// same sources ingested under the other profile are indexed again (the
// `#[cfg(debug_assertions)]` twin gives way to its release twin, as events),
// and ingesting again under the same profile writes nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { ingest } from '../../src/ingest/index.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { repoRoot } from '../helpers.ts';
import { freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

const fixture = path.join(repoRoot, 'test', 'extract', 'fixtures', 'cfg');

/** Line of `cfgs::Engine::check` and the call lines out of it. */
async function check(log: EventLog): Promise<{ lines: number[]; calls: string[] }> {
  const nodes = [...(await log.state('node', eq('qpath', 'cfgs::Engine::check'))).values()].filter((r) => r['op'] !== 'remove');
  const ids = new Set(nodes.map((r) => r['id'] as string));
  const calls: string[] = [];
  for (const r of (await log.state('edge', and(eq('krate', 'cfgs@0.1.0'), eq('edge_kind', 'calls')))).values()) {
    if (r['op'] !== 'remove' && ids.has(r['src'] as string)) calls.push(`${r['dst_path']}:${r['line']}`);
  }
  return { lines: nodes.map((r) => Number(r['line_start'])), calls };
}

test('profile: dev by default (the debug_assertions twin), release on request, each a fingerprint of its own', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = path.join(lake.dir, 'cfg');
  cpSync(fixture, ws, { recursive: true });
  const lines = readFileSync(path.join(ws, 'src', 'lib.rs'), 'utf8').split('\n');
  const debugTwin = lines.findIndex((l) => l.includes('#[cfg(debug_assertions)]')) + 2;
  const releaseTwin = lines.findIndex((l) => l.includes('#[cfg(not(debug_assertions))]')) + 2;

  const dev = await ingest(lake.log, ws, { repo: 'fx', maintain: false });
  assert.ok(dev.events.add > 0);
  assert.deepEqual(await check(lake.log), { lines: [debugTwin], calls: [`cfgs::Engine::base:${debugTwin + 1}`] });

  const release = await ingest(lake.log, ws, { repo: 'fx', maintain: false, release: true });
  assert.equal(release.unchangedCrates, 0, 'the profile is part of the fingerprint');
  assert.ok(release.events.change + release.events.remove > 0, `events of the switch: ${JSON.stringify(release.events)}`);
  assert.deepEqual(await check(lake.log), { lines: [releaseTwin], calls: [] });

  const again = await ingest(lake.log, ws, { repo: 'fx', maintain: false, release: true });
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 }, 'same profile again: nothing written');
  assert.ok(again.unchangedCrates > 0);
});
