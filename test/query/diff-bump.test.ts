// The semantic diff across a version bump of a repo's own crates, targets
// included (`a@0.1.0` -> `a@0.2.0`, `a@0.1.0/test/t` -> `a@0.2.0/test/t`):
// items are matched by (kind, path), so only what changed is listed, never
// remove-all/add-all; and renames by the same body under a new path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { EventLog, type EventRow } from '../../src/log/event-log.ts';
import { diff } from '../../src/query/index.ts';
import { scratch } from '../helpers.ts';
import { node } from './sample.ts';

const item = (krate: string, qpath: string, body: string, o: { op?: string; line?: number; file?: string } = {}): EventRow => ({
  ...node('r', krate, `${krate}:${qpath}`, qpath, o),
  body_hash: body,
  public_paths: qpath,
});

test('diff across a version bump: items matched by kind and path in each crate and target; a same-body new path is a rename', { timeout: 600_000 }, async () => {
  const s = scratch('mimir-diff-bump-');
  const log = await EventLog.open(path.join(s.dir, 'lake'));
  try {
    const v1 = [item('a@0.1.0', 'a::f', 'h1'), item('a@0.1.0', 'a::g', 'h2', { line: 10 }), item('a@0.1.0', 'a::util::h', 'h3', { line: 20 }), item('a@0.1.0/test/t', 't::check', 'h4')];
    await log.append('node', v1);
    const from = log.readGeneration();
    await log.append('node', [
      ...v1.map((r) => ({ ...r, op: 'remove' })),
      item('a@0.2.0', 'a::f', 'h1-new'),
      item('a@0.2.0', 'a::g', 'h2', { line: 12 }),
      item('a@0.2.0', 'a::h', 'h3', { line: 30 }),
      item('a@0.2.0', 'a::k', 'h5', { line: 40 }),
      item('a@0.2.0/test/t', 't::check', 'h4'),
    ]);
    const to = log.readGeneration();
    const d = await diff(log, { from, to, repo: 'r' });
    assert.deepEqual(
      d.changes.map((c) => [c.change, c.aspects.join(','), c.before?.qpath ?? null, c.after?.qpath ?? null, c.bump]),
      [
        ['changed', 'body', 'a::f', 'a::f', 'a@0.1.0 -> a@0.2.0'],
        ['renamed', '', 'a::util::h', 'a::h', 'a@0.1.0 -> a@0.2.0'],
        ['added', '', null, 'a::k', 'a@0.1.0 -> a@0.2.0'],
      ],
    );
    assert.deepEqual(d.bumps.map((b) => [b.name, b.from, b.to]), [['a', 'a@0.1.0', 'a@0.2.0'], ['a/test/t', 'a@0.1.0/test/t', 'a@0.2.0/test/t']]);
    assert.equal(d.hiddenMoves, 1, 'a::g only moved (line 10 -> 12)');
    assert.deepEqual([d.semver.breaking, d.semver.additive, d.semver.patch, d.semver.release], [1, 1, 1, 'major']);
    assert.equal(d.total, 3);

    // the filters every question takes
    const limited = await diff(log, { from, to, repo: 'r', limit: 1 });
    assert.deepEqual([limited.changes.length, limited.total, limited.changes[0]!.after?.qpath], [1, 3, 'a::f'], '--limit cuts the sorted list; total counts all');
    const t = await diff(log, { from, to, repo: 'r', moves: true, krate: 'a@0.2.0/test/t' });
    assert.deepEqual(t.changes.map((c) => c.after?.qpath), [], 'the test target changed nothing');
    const noTests = await diff(log, { from, to, repo: 'r', moves: true, excludeTests: true });
    const withTests = await diff(log, { from, to, repo: 'r', moves: true });
    assert.deepEqual(noTests.changes.map((c) => c.after?.qpath), withTests.changes.filter((c) => !c.after!.krate.includes('/test/')).map((c) => c.after?.qpath));
    const byName = await diff(log, { from, to, repo: 'r', krate: 'a' });
    assert.equal(byName.total, 3, '--krate NAME takes both ends of the bump');
    const old = await diff(log, { from, to, repo: 'r', krate: 'a@0.1.0' });
    assert.equal(old.total, 3, '--krate at the earlier version names the bumped crate too');
    await assert.rejects(diff(log, { from, to, krate: 'b' }), (e: Error) => e.name === 'UnknownNameError' && /no such crate/.test(e.message), 'a crate the lake never had');
    await assert.rejects(diff(log, { from, to, repo: 'nosuch' }), (e: Error) => e.name === 'UnknownNameError', 'a repo the lake never had');
  } finally {
    log.close();
    s.cleanup();
  }
});
