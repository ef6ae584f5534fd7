// The ring split and unsplit: every promise of the seed, and the fixes
// (digests in verification, catch-up, unsplit), on real lakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scratch } from '../helpers.ts';
import { EventLog, rowsToBatch, batchRows } from '../../src/log/event-log.ts';
import { splitRing, unsplitRing, formatSplitReport, formatUnsplitReport, reportJson } from '../../src/log/ring-split.ts';
import { krateStats, compareStats } from '../../src/log/digest.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, kindSchema, ringTableName, tableName } from '../../src/log/schema.ts';
import { buildUnified, mergedStats, statsText, ring, rowsOf } from './ring-split-helpers.ts';

async function withLake(fn: (root: string) => Promise<void>): Promise<void> {
  const s = scratch('mimir-split-');
  try {
    await fn(s.dir);
  } finally {
    s.cleanup();
  }
}

const LINE = /^ring split: copied \d+ row\(s\) \(recopied \d+ table\(s\)\), \d+ ring row\(s\) verified, (switched|not switched \(was split already\)) in \d+ ms$/;

test('split: a pinned handle is refused', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const pinned = log.pin({ generation: log.readGeneration() });
    await assert.rejects(splitRing(pinned), /a pinned read handle cannot split the log/);
    await assert.rejects(unsplitRing(pinned), /a pinned read handle cannot unsplit the log/);
    pinned.close();
    assert.equal(await log.ringSplit(), false);
    log.close();
  }));

test('split: an already split lake is a no-op report', () =>
  withLake(async (root) => {
    const log = await EventLog.open(root); // new lakes are split
    await log.append('node', ring('node', 5));
    const g = log.readGeneration();
    const r = await splitRing(log);
    assert.equal(r.copied, 0n);
    assert.equal(r.switched, false);
    assert.equal(r.recopied, 0);
    assert.match(formatSplitReport(r), /not switched \(was split already\)/);
    assert.match(formatSplitReport(r), LINE);
    assert.equal(log.readGeneration(), g, 'no commit');
    log.close();
  }));

test('split: a ring table holding exactly the ring rows is skipped', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    await assert.rejects(splitRing(log, { failAfterCopy: true }), /fail_after_copy/);
    const ringSnaps = await Promise.all(SOURCE_KINDS.map(async (k) => (await log.table(ringTableName(k)))!.metadata.snapshots.length));
    const r = await splitRing(log);
    assert.equal(r.copied, 0n);
    assert.equal(r.recopied, 0);
    assert.equal(r.verified, 120n);
    assert.equal(r.switched, true);
    const after = await Promise.all(SOURCE_KINDS.map(async (k) => (await log.table(ringTableName(k)))!.metadata.snapshots.length));
    assert.deepEqual(after, ringSnaps, 'no ring table written');
    log.close();
  }));

test('split: a ring table holding some rows is emptied and copied again', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const before = statsText(await mergedStats(log));
    // a crash mid-copy left 5 of the node ring rows in the ring table
    const t = (await log.table(ringTableName('node')))!;
    await t.append([rowsToBatch(kindSchema('node'), ring('node', 5), 'test')]);
    const r = await splitRing(log, { chunkRows: 1000 });
    assert.equal(r.recopied, 1);
    assert.equal(r.copied, 120n);
    assert.equal(r.verified, 120n);
    const nodeRing = (await log.table(ringTableName('node')))!;
    const ops = nodeRing.metadata.snapshots.map((s) => s.summary.operation);
    assert.deepEqual(ops, ['append', 'delete', 'append'], 'emptied in one commit, then copied');
    assert.equal(statsText(await mergedStats(log)), before);
    log.close();
  }));

test('split: the copy streams in chunks of chunkRows (commits per chunk)', () =>
  withLake(async (root) => {
    const log = await buildUnified(root, 30, 10, 3);
    const r = await splitRing(log, { chunkRows: 7 });
    assert.equal(r.copied, 120n);
    for (const k of SOURCE_KINDS) {
      const t = (await log.table(ringTableName(k)))!;
      const counts = t.metadata.snapshots.map((s) => Number(s.summary['mimir.ring-copy']));
      assert.deepEqual(counts, [7, 7, 7, 7, 2], `${k}: one commit per chunk of at most 7 rows`);
    }
    log.close();
  }));

test('split: failAfterCopy stops with nothing switched', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const before = statsText(await mergedStats(log));
    await assert.rejects(splitRing(log, { failAfterCopy: true }), {
      message: 'split_ring: fail_after_copy (test hook) — copied 120 row(s), nothing switched',
    });
    assert.equal(await log.ringSplit(), false);
    const other = await EventLog.open(root);
    assert.equal(await other.ringSplit(), false);
    other.close();
    assert.equal(statsText(await mergedStats(log)), before, 'reads unchanged');
    log.close();
  }));

test('split: verification names tables, totals and owners when counts differ', () =>
  withLake(async (root) => {
    const log = await buildUnified(root, 10, 2, 2);
    const err = await splitRing(log, {
      testHooks: {
        afterCopy: async () => {
          // one ring row too many in the node ring table (2 owners there already)
          const t = (await log.table(ringTableName('node')))!;
          await t.append([rowsToBatch(kindSchema('node'), ring('node', 1, 500, 2), 'test')]);
        },
      },
    }).catch((e: Error) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /^split_ring: mimir\.code_node_events holds 10 ring row\(s\) in 4 owner\(s\), mimir\.code_node_events_ring holds 11 in 4 — not switched$/);
    assert.equal(await log.ringSplit(), false);
    log.close();
  }));

test('split: equal counts with different content fail on the digest', () =>
  withLake(async (root) => {
    const log = await buildUnified(root, 10, 2, 1);
    const err = await splitRing(log, {
      testHooks: {
        afterCopy: async () => {
          // same krates, same counts, one row's content changed
          const t = (await log.table(ringTableName('edge')))!;
          const rows = await t.scan().toArray();
          rows[3]!['edge_kind'] = 'uses';
          const files = await t.dataFiles();
          const written = await t.writeDataFiles([rowsToBatch(kindSchema('edge'), rows, 'test')]);
          await t.overwrite(files.map((f) => f.file), written);
        },
      },
    }).catch((e: Error) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /^split_ring: mimir\.code_edge_events holds 10 ring row\(s\) in 4 owner\(s\), mimir\.code_edge_events_ring holds 10 in 4, but the content digests differ for 1 krate\(s\): dep\d@1\.0\.0 — not switched$/);
    assert.equal(await log.ringSplit(), false);
    log.close();
  }));

test('split: one switching commit at the end; every handle reads split', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const early = await EventLog.open(root); // opened before the split
    const srcSnaps = await Promise.all(SOURCE_KINDS.map(async (k) => (await log.table(tableName(k)))!.metadata.snapshots.length));
    const r = await splitRing(log);
    assert.equal(r.switched, true);
    const g = log.readGeneration();
    assert.equal(await log.ringSplit(g), true);
    assert.equal(await log.ringSplit(g - 1n), false, 'the generation before the last is unified: the switch is the last commit');
    // the switch is a metadata change only: the node table's snapshot and every other table's pointer unchanged by it
    for (const k of SOURCE_KINDS) {
      const now = (await log.table(tableName(k), g))!;
      const prev = (await log.table(tableName(k), g - 1n))!;
      assert.equal(now.metadata.currentSnapshotId, prev.metadata.currentSnapshotId);
      if (k !== 'node') assert.equal(now.metadataLocation, prev.metadataLocation);
      const ringNow = (await log.table(ringTableName(k), g))!;
      const ringPrev = (await log.table(ringTableName(k), g - 1n))!;
      assert.equal(ringNow.metadataLocation, ringPrev.metadataLocation);
    }
    const after = await Promise.all(SOURCE_KINDS.map(async (k) => (await log.table(tableName(k)))!.metadata.snapshots.length));
    assert.deepEqual(after, srcSnaps, 'nothing written to (or deleted from) the source tables');
    const fresh = await EventLog.open(root);
    for (const h of [log, early, fresh]) assert.equal(await h.ringSplit(), true);
    // a handle opened before the split routes ring rows to the ring table now
    const a = await early.append('file', ring('file', 3, 900, 4, 'post'));
    assert.equal(a.ring, 3);
    const src = (await log.table(tableName('file')))!;
    assert.equal(await src.scan({ filter: { op: 'eq', col: 'repo', value: UNIVERSE_REPO } }).count(), 30, 'no new ring row in the source');
    early.close();
    fresh.close();
    log.close();
  }));

test('split: report fields and one-line form', () =>
  withLake(async (root) => {
    const log = await buildUnified(root, 12, 3, 2);
    const r = await splitRing(log, { chunkRows: 5 });
    assert.equal(r.copied, 48n);
    assert.equal(r.verified, 48n);
    assert.equal(r.recopied, 0);
    assert.equal(r.switched, true);
    assert.equal(r.caughtUp, 0n);
    assert.ok(Number.isInteger(r.ms) && r.ms >= 0);
    assert.equal(formatSplitReport(r), `ring split: copied 48 row(s) (recopied 0 table(s)), 48 ring row(s) verified, switched in ${r.ms} ms`);
    assert.match(formatSplitReport(r), LINE);
    const j = JSON.parse(reportJson(r)) as Record<string, unknown>;
    assert.equal(j.copied, 48);
    assert.match(reportJson(r), /"copied":48,/);
    log.close();
  }));

test('split: ring rows committed during the copy are caught up, none lost', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const other = await EventLog.open(root);
    let switchTries = 0;
    const r = await splitRing(log, {
      chunkRows: 8,
      testHooks: {
        afterCopy: async () => {
          for (const k of SOURCE_KINDS) await other.append(k, [...ring(k, 6, 1000, 4, 'during'), ...rowsOf(k, 'acme', 2, 1000, 4, 'during')]);
        },
        beforeSwitch: async (round) => {
          switchTries++;
          // an append races the switch on the first attempt: the guard fails, we catch up again
          if (round === 0) await other.append('edge', ring('edge', 4, 2000, 4, 'race'));
        },
      },
    });
    assert.equal(r.switched, true);
    assert.equal(r.caughtUp, 28n);
    assert.equal(r.copied, 148n);
    assert.equal(r.verified, 148n);
    assert.equal(r.rounds, 2);
    assert.equal(switchTries, 2);
    for (const k of SOURCE_KINDS) {
      const rows = await log.rows(k);
      const ids = rows.map((x) => x['id'] as string);
      assert.equal(new Set(ids).size, ids.length, `${k}: every row once`);
      assert.equal(rows.filter((x) => x['repo'] === UNIVERSE_REPO).length, k === 'edge' ? 40 : 36);
      assert.equal(rows.length, (k === 'edge' ? 40 : 36) + 12);
    }
    other.close();
    log.close();
  }));

test('split: a source table rewritten during the copy falls back to stats and recopies', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const before = statsText(await mergedStats(log));
    const r = await splitRing(log, {
      testHooks: {
        afterCopy: async () => {
          // a compaction-like rewrite of the file source table, dropping one ring row
          const t = (await log.table(tableName('file')))!;
          const rows = (await t.scan().toArray()).filter((x) => x['id'] !== `file-${UNIVERSE_REPO}-r-0`);
          const files = await t.dataFiles();
          const written = await t.writeDataFiles([rowsToBatch(kindSchema('file'), rows, 'test')]);
          await t.overwrite(files.map((f) => f.file), written, 'overwrite');
        },
      },
    });
    assert.equal(r.switched, true);
    assert.equal(r.recopied, 1);
    assert.equal(r.verified, 119n);
    const after = await mergedStats(log);
    assert.notEqual(statsText(after), before);
    assert.equal((await log.rows('file')).length, 39);
    log.close();
  }));

test('unsplit: ring rows added after the split are copied back', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    assert.equal((await unsplitRing(log)).switched, false, 'a no-op on a unified lake');
    await splitRing(log, { chunkRows: 16 });
    // after the split: new krates and new rows of existing krates, and repo rows
    await log.append('node', [...ring('node', 5, 300, 2, 'late'), ...rowsOf('node', 'acme', 3, 300, 2, 'late')]);
    await log.append('edge', ring('edge', 4, 300, 9, 'late')); // dep4..dep8 are new krates
    const before = statsText(await mergedStats(log));
    const beforeRows = (await log.rows('edge')).length;
    const u = await unsplitRing(log, { chunkRows: 7 });
    assert.equal(u.switched, true);
    assert.ok(u.copiedBack >= 9n, `copied back ${u.copiedBack}`);
    assert.match(formatUnsplitReport(u), /^ring unsplit: copied back \d+ row\(s\) \(rewrote \d+ file\(s\)\), switched back in \d+ ms$/);
    assert.equal(await log.ringSplit(), false);
    assert.equal(statsText(await mergedStats(log)), before, 'every row reads as before');
    assert.equal((await log.rows('edge')).length, beforeRows);
    // the source tables hold exactly the ring tables' rows
    for (const k of SOURCE_KINDS) {
      const src = (await log.table(tableName(k)))!;
      const rt = (await log.table(ringTableName(k)))!;
      const a = await krateStats(src.scan().batches(), { repo: UNIVERSE_REPO });
      const b = await krateStats(rt.scan().batches());
      assert.ok(compareStats(b, a).equal, k);
    }
    // and it can be split again, converging
    const again = await splitRing(log);
    assert.equal(again.switched, true);
    assert.equal(statsText(await mergedStats(log)), before);
    log.close();
  }));

test('digest: the same multiset in any order or layout has one digest; a changed row another', async () => {
  const rows = batchRows(rowsToBatch(kindSchema('node'), ring('node', 20), 't'));
  const whole = rowsToBatch(kindSchema('node'), rows, 't');
  const rev = [...rows].reverse();
  const parts = [rowsToBatch(kindSchema('node'), rev.slice(0, 7), 't'), rowsToBatch(kindSchema('node'), rev.slice(7), 't')];
  const gen = async function* (bs: ReturnType<typeof rowsToBatch>[]) {
    yield* bs;
  };
  const a = await krateStats(gen([whole]));
  const b = await krateStats(gen(parts));
  assert.ok(compareStats(a, b).equal);
  const changed = rows.map((r, i) => (i === 5 ? { ...r, line_end: 1 } : r));
  const c = await krateStats(gen([rowsToBatch(kindSchema('node'), changed, 't')]));
  const cmp = compareStats(a, c);
  assert.equal(cmp.equal, false);
  assert.equal(cmp.totalExpected, cmp.totalHave);
  assert.deepEqual(cmp.differing, [String(rows[5]!['krate'])]);
  const dup = await krateStats(gen([whole, rowsToBatch(kindSchema('node'), rows.slice(0, 1), 't')]));
  assert.equal(compareStats(a, dup).equal, false);
  const only = await krateStats(gen([rowsToBatch(kindSchema('node'), [...rows, ...batchRows(rowsToBatch(kindSchema('node'), rowsOf('node', 'acme', 3), 't'))], 't')]), { repo: UNIVERSE_REPO });
  assert.ok(compareStats(a, only).equal, 'repo filter');
});
