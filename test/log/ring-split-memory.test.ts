// The ring split keeps memory flat as the ring grows (child process RSS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot, scratch, runTsx } from '../helpers.ts';

const CHILD = path.join(repoRoot, 'test/log/ring-split-child.ts');

const run = runTsx;

test('split: memory stays flat as the ring grows', { timeout: 300_000 }, async () => {
  const s = scratch('mimir-split-mem-');
  try {
    const small = path.join(s.dir, 'small');
    const big = path.join(s.dir, 'big');
    const builds = await Promise.all([run([CHILD, 'build', small, '100000', '10']), run([CHILD, 'build', big, '400000', '10'])]);
    for (const b of builds) assert.equal(b.code, 0, b.stderr);
    const node = ['--max-old-space-size=160'];
    const [a, b] = await Promise.all([run([CHILD, 'split', small, '20000'], { node }), run([CHILD, 'split', big, '20000'], { node })]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const ra = JSON.parse(a.stdout) as { report: { copied: number; switched: boolean }; peakRss: number };
    const rb = JSON.parse(b.stdout) as { report: { copied: number; switched: boolean }; peakRss: number };
    assert.equal(ra.report.copied, 100_060);
    assert.equal(rb.report.copied, 400_060);
    assert.ok(ra.report.switched && rb.report.switched);
    const mb = (x: number): number => Math.round(x / 2 ** 20);
    assert.ok(rb.peakRss - ra.peakRss < 64 * 2 ** 20, `peak RSS ${mb(ra.peakRss)} MB for 100k ring rows, ${mb(rb.peakRss)} MB for 400k`);
  } finally {
    s.cleanup();
  }
});

