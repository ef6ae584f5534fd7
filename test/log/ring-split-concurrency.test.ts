// The ring split while another process appends ring and repo rows back to
// back (no pacing): the split must not livelock (it freezes appends for its
// final catch-up and switch), and every row lands exactly once, in the table
// the mode at its commit says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { CODE_NODE_EVENTS, PROP_RING_FREEZE, SOURCE_KINDS, UNIVERSE_REPO, ringTableName, tableName } from '../../src/log/schema.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import { buildUnified } from './ring-split-helpers.ts';

const APPENDER = path.join(repoRoot, 'test/log/ring-append-child.ts');

/** The generation of the switch commit: the first split generation of the run of split ones ending now. */
async function switchGeneration(log: EventLog): Promise<bigint> {
  let g = log.lake.catalog.pointerGeneration();
  assert.equal(await log.ringSplit(g), true);
  while (await log.ringSplit(g - 1n)) g--;
  return g;
}

/** Start the appender child on a lake; lines() counts its appends so far. */
function startAppender(root: string, stop: string, tag: string): { lines: () => number; waitLines: (n: number) => Promise<void>; out: () => string; exited: Promise<number | null>; err: () => string; kill: () => void } {
  const child = spawn(process.execPath, ['--import', 'tsx', APPENDER, root, stop, tag], { cwd: repoRoot });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let gone = false;
  const exited = new Promise<number | null>((r) =>
    child.on('close', (c) => {
      gone = true;
      r(c);
    }),
  );
  const lines = (): number => out.split('\n').filter(Boolean).length;
  const waitLines = async (n: number): Promise<void> => {
    while (lines() < n) {
      if (gone) assert.fail(`the appender exited early: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { lines, waitLines, out: () => out, exited, err: () => err, kill: () => child.kill('SIGKILL') };
}

test('split: completes while another process appends back to back; every row once, no ring row in a source table after the switch', { timeout: 600_000 }, async (t) => {
  const s = scratch('mimir-split-conc-');
  let kill = (): void => undefined;
  try {
    const root = path.join(s.dir, 'lake');
    const log = await buildUnified(root, 600, 30, 4);
    const stop = path.join(s.dir, 'stop');
    const app = startAppender(root, stop, 'conc');
    kill = app.kill;
    const { lines, waitLines } = app;
    await waitLines(6);
    const r = await splitRing(log, { chunkRows: 50 });
    assert.equal(r.switched, true);
    t.diagnostic(`split report: rounds ${r.rounds}, frozen ${r.frozen}, caught up ${r.caughtUp} row(s), ${r.ms} ms`);
    assert.ok(r.rounds <= 2, `rounds ${r.rounds}: at most one unfrozen attempt, then one frozen`);
    assert.ok(r.caughtUp > 0n, 'rows appended during the copy were caught up');
    const atReturn = lines();
    // the appender goes on after the switch (its waits ended)
    await waitLines(atReturn + 9);
    writeFileSync(stop, '');
    assert.equal(await app.exited, 0, app.err());
    const switchGen = await switchGeneration(log);
    const node = (await log.table(CODE_NODE_EVENTS))!;
    assert.equal(node.metadata.properties[PROP_RING_FREEZE], undefined, 'the switch removed the freeze');
    const appends = app.out().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string; gen: string; ring: number; ids: string[] });
    for (const a of appends) {
      if (BigInt(a.gen) > switchGen) assert.equal(a.ring, 3, `an append at generation ${a.gen} after the switch (${switchGen}) routes its ring rows to the ring table`);
      else assert.equal(a.ring, 0, `an append at generation ${a.gen} before the switch (${switchGen}) keeps its ring rows in the source table`);
    }
    assert.ok(appends.some((a) => BigInt(a.gen) > switchGen), 'appends landed after the switch');
    for (const kind of SOURCE_KINDS) {
      const rows = await log.rows(kind);
      const ids = rows.map((x) => x['id'] as string);
      assert.equal(new Set(ids).size, ids.length, `${kind}: no row twice`);
      const want = new Set(ids);
      let appended = 0;
      for (const a of appends) {
        if (a.kind !== kind) continue;
        for (const id of a.ids) assert.ok(want.has(id), `${kind}: ${id} present`);
        appended += a.ids.length;
      }
      assert.equal(rows.length, 600 + 30 + appended, `${kind}: exactly the built rows and every appended row`);
      // source table files committed after the switch hold no ring row
      const src = (await log.table(tableName(kind)))!;
      const atSwitch = (await log.table(tableName(kind), switchGen))!;
      const before = new Set((await atSwitch.dataFiles()).map((f) => f.file.filePath));
      let ringAfter = 0;
      for await (const b of src.scan({ filter: eq('repo', UNIVERSE_REPO) }).batches()) if (!before.has(b.source!.file)) ringAfter += b.numRows;
      assert.equal(ringAfter, 0, `${kind}: no ring row in the source table after the switch`);
    }
    log.close();
  } finally {
    kill();
    await new Promise((r) => setTimeout(r, 200));
    s.cleanup();
  }
});

test('unsplit: completes while another process appends back to back; every row once, no ring row in a ring table after the switch back', { timeout: 600_000 }, async (t) => {
  const s = scratch('mimir-unsplit-conc-');
  let kill = (): void => undefined;
  try {
    const root = path.join(s.dir, 'lake');
    const log = await buildUnified(root, 300, 30, 3);
    assert.equal((await splitRing(log, { chunkRows: 100 })).switched, true);
    const stop = path.join(s.dir, 'stop');
    const app = startAppender(root, stop, 'uconc');
    kill = app.kill;
    await app.waitLines(6);
    const r = await unsplitRing(log, { chunkRows: 50 });
    t.diagnostic(`unsplit report: rounds ${r.rounds}, frozen ${r.frozen}, copied back ${r.copiedBack} row(s), ${r.ms} ms`);
    assert.equal(r.switched, true);
    assert.ok(r.rounds <= 2, `rounds ${r.rounds}: at most one unfrozen attempt, then one frozen`);
    await app.waitLines(app.lines() + 9);
    writeFileSync(stop, '');
    assert.equal(await app.exited, 0, app.err());
    // the switch back: the first unified generation of the run of unified ones ending now
    let g = log.lake.catalog.pointerGeneration();
    assert.equal(await log.ringSplit(g), false);
    while (!(await log.ringSplit(g - 1n))) g--;
    const node = (await log.table(CODE_NODE_EVENTS))!;
    assert.equal(node.metadata.properties[PROP_RING_FREEZE], undefined, 'the switch back removed the freeze');
    const appends = app.out().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string; gen: string; ring: number; ids: string[] });
    for (const a of appends) assert.equal(a.ring, BigInt(a.gen) > g ? 0 : 3, `append at generation ${a.gen} (switch back at ${g})`);
    assert.ok(appends.some((a) => BigInt(a.gen) > g), 'appends landed after the switch back');
    for (const kind of SOURCE_KINDS) {
      const rows = await log.rows(kind);
      const ids = rows.map((x) => x['id'] as string);
      assert.equal(new Set(ids).size, ids.length, `${kind}: no row twice`);
      const have = new Set(ids);
      let appended = 0;
      for (const a of appends) {
        if (a.kind !== kind) continue;
        for (const id of a.ids) assert.ok(have.has(id), `${kind}: ${id} present`);
        appended += a.ids.length;
      }
      assert.equal(rows.length, 300 + 30 + appended, `${kind}: exactly the built rows and every appended row`);
      const ringNow = (await log.table(ringTableName(kind)))!;
      const ringAtSwitch = (await log.table(ringTableName(kind), g))!;
      assert.equal(ringNow.metadata.currentSnapshotId, ringAtSwitch.metadata.currentSnapshotId, `${kind}: nothing landed in the ring table after the switch back`);
    }
    log.close();
  } finally {
    kill();
    await new Promise((r) => setTimeout(r, 200));
    s.cleanup();
  }
});
