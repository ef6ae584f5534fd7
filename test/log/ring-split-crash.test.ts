// SIGKILL at split and unsplit crash points: the lake reads the same rows and a rerun converges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch, runTsx } from '../helpers.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { splitRing } from '../../src/log/ring-split.ts';
import { CODE_NODE_EVENTS, PROP_RING_FREEZE } from '../../src/log/schema.ts';
import { buildUnified, mergedStats, statsText, ring } from './ring-split-helpers.ts';

const CHILD = path.join(repoRoot, 'test/log/ring-split-child.ts');

const run = runTsx;

test('split: a crash at each step converges on rerun', { timeout: 600_000 }, async () => {
  const s = scratch('mimir-split-crash-');
  try {
    // enumerate the points a split and an unsplit pass through
    const traceRoot = path.join(s.dir, 'trace');
    (await buildUnified(traceRoot, 30, 5, 3)).close();
    const trace = path.join(s.dir, 'trace.txt');
    assert.equal((await run([CHILD, 'split', traceRoot, '8'], { env: { MIMIR_CRASH_TRACE: trace } })).code, 0);
    const pts = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    writeFileSync(trace, '');
    const tl = await EventLog.open(traceRoot);
    await tl.append('node', ring('node', 4, 500, 6, 'late'));
    tl.close();
    assert.equal((await run([CHILD, 'unsplit', traceRoot], { env: { MIMIR_CRASH_TRACE: trace } })).code, 0);
    const upts = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    // and with the freeze (freezeAfter 0): the points of the frozen round
    const ftrace = path.join(s.dir, 'ftrace.txt');
    const froot = path.join(s.dir, 'ftrace-lake');
    (await buildUnified(froot, 30, 5, 3)).close();
    assert.equal((await run([CHILD, 'split', froot, '8', '0'], { env: { MIMIR_CRASH_TRACE: ftrace } })).code, 0);
    const fpts = readFileSync(ftrace, 'utf8').split('\n').filter(Boolean);
    writeFileSync(ftrace, '');
    const fl = await EventLog.open(froot);
    await fl.append('node', ring('node', 4, 500, 6, 'late'));
    fl.close();
    assert.equal((await run([CHILD, 'unsplit', froot, '0'], { env: { MIMIR_CRASH_TRACE: ftrace } })).code, 0);
    const fupts = readFileSync(ftrace, 'utf8').split('\n').filter(Boolean);
    const pick = (all: string[], want: RegExp): string[] => all.filter((p) => want.test(p));
    const splitPoints = [
      ...pick(pts, /^split:(start|after-copy-chunk#(1|4)|after-copy-kind#2|after-copy|after-catch-up|before-switch|after-switch)#?\d*$/),
      ...pick(pts, /^lake:(before|after)-catalog-commit#(2)$/),
    ];
    const unsplitPoints = pick(upts, /^unsplit:(start|after-rewrite#1|after-copy-chunk#1|after-kind#1|before-switch|after-switch)#?\d*$/);
    const frozenSplitPoints = pick(fpts, /^split:(frozen|after-final-catch-up|before-switch)#1$/);
    const frozenUnsplitPoints = pick(fupts, /^unsplit:(frozen|before-switch)#1$/);
    assert.equal(frozenSplitPoints.length, 3, `frozen split points: ${fpts.join(' ')}`);
    assert.equal(frozenUnsplitPoints.length, 2, `frozen unsplit points: ${fupts.join(' ')}`);
    assert.ok(splitPoints.length >= 7, `split points: ${splitPoints.join(' ')}`);
    assert.ok(unsplitPoints.length >= 4, `unsplit points: ${unsplitPoints.join(' ')}`);
    let i = 0;
    const splitRuns = [...splitPoints.map((p) => ({ point: p, freeze: [] as string[] })), ...frozenSplitPoints.map((p) => ({ point: p, freeze: ['0'] }))];
    for (const { point, freeze } of splitRuns) {
      const root = path.join(s.dir, `s${i++}`);
      const log = await buildUnified(root, 30, 5, 3);
      const before = statsText(await mergedStats(log));
      log.close();
      const killed = await run([CHILD, 'split', root, '8', ...freeze], { env: { MIMIR_CRASH_AT: point } });
      assert.equal(killed.signal, 'SIGKILL', `${point}: killed (${killed.stderr})`);
      const after = await EventLog.open(root);
      assert.equal(statsText(await mergedStats(after)), before, `${point}: reads unchanged after the kill`);
      after.close();
      const rerun = await run([CHILD, 'split', root, '8', ...freeze]);
      assert.equal(rerun.code, 0, `${point}: rerun ${rerun.stderr}`);
      const done = await EventLog.open(root);
      assert.equal(await done.ringSplit(), true, point);
      assert.equal((await done.table(CODE_NODE_EVENTS))!.metadata.properties[PROP_RING_FREEZE], undefined, `${point}: no freeze left after the rerun`);
      assert.equal(statsText(await mergedStats(done)), before, `${point}: reads unchanged after the rerun`);
      done.close();
    }
    const unsplitRuns = [...unsplitPoints.map((p) => ({ point: p, freeze: [] as string[] })), ...frozenUnsplitPoints.map((p) => ({ point: p, freeze: ['0'] }))];
    for (const { point, freeze } of unsplitRuns) {
      const root = path.join(s.dir, `u${i++}`);
      const log = await buildUnified(root, 30, 5, 3);
      await splitRing(log, { chunkRows: 8 });
      await log.append('node', ring('node', 4, 500, 6, 'late'));
      const before = statsText(await mergedStats(log));
      log.close();
      const killed = await run([CHILD, 'unsplit', root, ...freeze], { env: { MIMIR_CRASH_AT: point } });
      assert.equal(killed.signal, 'SIGKILL', `${point}: killed (${killed.stderr})`);
      const after = await EventLog.open(root);
      assert.equal(statsText(await mergedStats(after)), before, `${point}: reads unchanged after the kill`);
      after.close();
      const rerun = await run([CHILD, 'unsplit', root, ...freeze]);
      assert.equal(rerun.code, 0, `${point}: rerun ${rerun.stderr}`);
      const done = await EventLog.open(root);
      assert.equal(await done.ringSplit(), false, point);
      assert.equal((await done.table(CODE_NODE_EVENTS))!.metadata.properties[PROP_RING_FREEZE], undefined, `${point}: no freeze left after the rerun`);
      assert.equal(statsText(await mergedStats(done)), before, `${point}: reads unchanged after the rerun`);
      done.close();
    }
  } finally {
    s.cleanup();
  }
});
