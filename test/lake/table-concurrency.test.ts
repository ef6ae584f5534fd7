// Two real processes appending to one table: optimistic commits with retries
// keep every row exactly once and every commit as its own snapshot.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import { repoRoot, scratch } from '../helpers.ts';

const work = scratch('mimir-concurrency-');
after(work.cleanup);

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/lake/table-append-child.ts'), ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child ${args[1]} exited ${code}: ${err}`))));
  });
}

test('concurrency: two processes appending 50 commits each end with 100 snapshots and every row once', async () => {
  const root = path.join(work.dir, 'lake');
  const lake = Lake.open(root);
  await lake.createTable(
    { namespace: ['c'], name: 'events' },
    {
      schemaId: 0,
      fields: [
        { id: 1, name: 'writer', required: true, type: { type: 'string' } },
        { id: 2, name: 'n', required: true, type: { type: 'long' } },
      ],
    },
  );
  await Promise.all([run([root, 'a', '50']), run([root, 'b', '50'])]);
  const t = await lake.loadTable({ namespace: ['c'], name: 'events' });
  assert.equal(t.metadata.snapshots.length, 100);
  const rows = await t.scan().toArray();
  assert.equal(rows.length, 100);
  const keys = new Set(rows.map((r) => `${r.writer}:${r.n}`));
  assert.equal(keys.size, 100, 'no row twice');
  for (const w of ['a', 'b']) for (let i = 0; i < 50; i++) assert.ok(keys.has(`${w}:${i}`), `row ${w}:${i} present`);
  // the snapshot chain is linear: every parent is the previous snapshot
  const snaps = t.metadata.snapshots;
  for (let i = 1; i < snaps.length; i++) assert.equal(snaps[i]!.parentSnapshotId, snaps[i - 1]!.snapshotId);
  assert.equal(t.currentSnapshot()!.summary['total-records'], '100');
  lake.close();
});
