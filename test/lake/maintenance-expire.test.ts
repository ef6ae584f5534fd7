// expireSnapshots on real lakes: what is retained, what is deleted (exactly the
// files only expired snapshots reached), dry runs, and gc.enabled=false.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lake } from '../../src/lake/lake.ts';
import { Table } from '../../src/lake/table/table.ts';
import { metadataUpdate } from '../../src/lake/table/commit.ts';
import { readManifestList } from '../../src/lake/scan/plan.ts';
import type { Batch, Schema, TableMetadata, Value } from '../../src/lake/spec/types.ts';
import { expireSnapshots, GcDisabledError } from '../../src/lake/maintenance/index.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-expire-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
  ],
};
// uncompressed: keeps these tests independent of the Parquet codecs
const props = { 'write.parquet.compression-codec': 'uncompressed' };

function batch(repo: string, from: number, n: number): Batch {
  const rows: Value[][] = Array.from({ length: n }, (_, i) => [repo, BigInt(from + i)]);
  return { fields: schema.fields, numRows: n, columns: [rows.map((r) => r[0]!), rows.map((r) => r[1]!)] };
}

let counter = 0;
function freshLake(): Lake {
  return Lake.open(path.join(work.dir, `lake-${counter++}`));
}

const local = (p: string): string => (p.startsWith('file:') ? fileURLToPath(p) : p);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Every file the snapshots of `m` reach, by kind, read independently of the module under test. */
async function reach(t: Table, m: TableMetadata): Promise<{ lists: Set<string>; manifests: Set<string>; data: Set<string> }> {
  const lists = new Set<string>();
  const manifests = new Set<string>();
  const data = new Set<string>();
  for (const s of m.snapshots) {
    lists.add(s.manifestList);
    for (const mf of await readManifestList(t.io, s)) manifests.add(mf.manifestPath);
    for (const f of await t.dataFiles({ snapshotId: s.snapshotId })) data.add(f.file.filePath);
  }
  return { lists, manifests, data };
}

const sortedIds = (rows: Record<string, Value>[]): bigint[] => rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/** 5 appends, a tag on the second, an overwrite replacing the third's file. */
async function history(lake: Lake, name: string): Promise<{ t: Table; tagged: bigint }> {
  const t = await lake.createTable({ namespace: ['m'], name }, schema, { properties: props });
  for (let i = 0; i < 5; i++) await t.append([batch(`r${i}`, i * 10, 10)]);
  const tagged = t.metadata.snapshots[1]!.snapshotId;
  await t.commit(metadataUpdate((base) => ({ ...base, refs: { ...base.refs, keep: { snapshotId: tagged, type: 'tag' } } })));
  const thirdSnap = t.metadata.snapshots[2]!;
  const thirdFiles = (await t.dataFiles({ snapshotId: thirdSnap.snapshotId })).map((f) => f.file.filePath);
  const secondFiles = new Set((await t.dataFiles({ snapshotId: t.metadata.snapshots[1]!.snapshotId })).map((f) => f.file.filePath));
  const onlyThird = thirdFiles.filter((p) => !secondFiles.has(p));
  assert.equal(onlyThird.length, 1);
  await t.overwrite(onlyThird, await t.writeDataFiles([batch('r2', 20, 5)]));
  await sleep(5); // every snapshot strictly older than "now"
  return { t, tagged };
}

test('expire: keeps the current and tagged snapshots and deletes exactly the files no retained snapshot reaches', async () => {
  const lake = freshLake();
  const { t, tagged } = await history(lake, 'a');
  const before = t.metadata;
  const current = t.currentSnapshot()!.snapshotId;
  const rowsBefore = sortedIds(await t.scan().toArray());
  const tagRowsBefore = sortedIds(await t.scan({ ref: 'keep' }).toArray());
  const all = await reach(t, before);

  const r = await expireSnapshots(t, { olderThanMs: 0, keepLast: 1 });
  assert.equal(r.dryRun, false);
  assert.equal(r.expired.length, 4);
  assert.deepEqual(new Set(t.metadata.snapshots.map((s) => s.snapshotId)), new Set([current, tagged]));
  assert.deepEqual(new Set(r.expired), new Set(before.snapshots.map((s) => s.snapshotId).filter((id) => id !== current && id !== tagged)));
  assert.equal(t.metadata.currentSnapshotId, current);
  assert.equal(t.metadata.refs.keep?.snapshotId, tagged);
  assert.ok(t.metadata.snapshotLog.every((e) => e.snapshotId === current || e.snapshotId === tagged));

  // a fresh load sees the same (the change was committed)
  const reloaded = await lake.loadTable({ namespace: ['m'], name: 'a' });
  assert.equal(reloaded.metadata.snapshots.length, 2);
  assert.deepEqual(sortedIds(await reloaded.scan().toArray()), rowsBefore);
  assert.deepEqual(sortedIds(await reloaded.scan({ ref: 'keep' }).toArray()), tagRowsBefore);

  // exactly the difference
  const kept = await reach(reloaded, reloaded.metadata);
  const minus = (a: Set<string>, b: Set<string>): string[] => [...a].filter((x) => !b.has(x)).sort();
  assert.deepEqual([...r.deleted.manifestLists].sort(), minus(all.lists, kept.lists));
  assert.deepEqual([...r.deleted.manifests].sort(), minus(all.manifests, kept.manifests));
  assert.deepEqual([...r.deleted.dataFiles].sort(), minus(all.data, kept.data));
  assert.equal(r.deleted.dataFiles.length, 1, 'the file only snapshots 3..5 had live');
  assert.equal(r.deleted.manifestLists.length, 4);
  assert.ok(r.deleted.manifests.length > 0);
  assert.deepEqual(r.deleted.deleteFiles, []);
  assert.deepEqual(r.deleted.statistics, []);
  for (const p of [...kept.lists, ...kept.manifests, ...kept.data]) assert.ok(existsSync(local(p)), `retained file exists: ${p}`);
  for (const p of [...r.deleted.manifestLists, ...r.deleted.manifests, ...r.deleted.dataFiles]) assert.ok(!existsSync(local(p)), `deleted: ${p}`);

  // a second run has nothing to do and commits nothing
  const loc = reloaded.metadataLocation;
  const again = await expireSnapshots(reloaded, { olderThanMs: 0, keepLast: 1 });
  assert.deepEqual(again.expired, []);
  assert.equal(reloaded.metadataLocation, loc);
  lake.close();
});

test('expire: a dry run reports what a real run then does, and commits and deletes nothing', async () => {
  const lake = freshLake();
  const { t } = await history(lake, 'd');
  const loc = t.metadataLocation;
  const all = await reach(t, t.metadata);
  const dry = await expireSnapshots(t, { olderThanMs: 0, keepLast: 1, dryRun: true });
  assert.equal(dry.dryRun, true);
  assert.equal(dry.expired.length, 4);
  assert.equal(t.metadataLocation, loc);
  assert.equal(lake.catalog.loadTable({ namespace: ['m'], name: 'd' })!.metadataLocation, loc);
  assert.equal(t.metadata.snapshots.length, 6);
  for (const p of [...all.lists, ...all.manifests, ...all.data]) assert.ok(existsSync(local(p)), `still there: ${p}`);
  const real = await expireSnapshots(t, { olderThanMs: 0, keepLast: 1 });
  assert.deepEqual(new Set(real.expired), new Set(dry.expired));
  for (const k of ['manifestLists', 'manifests', 'dataFiles', 'deleteFiles', 'statistics'] as const) {
    assert.deepEqual([...real.deleted[k]].sort(), [...dry.deleted[k]].sort(), k);
  }
  lake.close();
});

test('expire: keepLast keeps the newest N of main; the default age (5 days) expires nothing young', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['m'], name: 'k' }, schema, { properties: props });
  for (let i = 0; i < 5; i++) await t.append([batch('r', i * 10, 10)]);
  await sleep(5);
  const none = await expireSnapshots(t, {});
  assert.deepEqual(none.expired, []);
  assert.equal(t.metadata.snapshots.length, 5);
  const ids = t.metadata.snapshots.map((s) => s.snapshotId);
  const r = await expireSnapshots(t, { olderThanMs: 0, keepLast: 3 });
  assert.deepEqual(new Set(r.expired), new Set(ids.slice(0, 2)));
  assert.deepEqual(t.metadata.snapshots.map((s) => s.snapshotId), ids.slice(2));
  assert.equal((await t.scan().toArray()).length, 50);
  assert.deepEqual(r.deleted.dataFiles, [], 'every data file is still live in the current snapshot');
  // the property default applies when no option is given
  await t.setProperties({ 'history.expire.max-snapshot-age-ms': '0', 'history.expire.min-snapshots-to-keep': '2' });
  await sleep(5);
  const p = await expireSnapshots(t, {});
  assert.equal(p.expired.length, 1);
  assert.equal(t.metadata.snapshots.length, 2);
  lake.close();
});

test('expire: gc.enabled=false refuses and changes nothing', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['m'], name: 'g' }, schema, { properties: { ...props, 'gc.enabled': 'false' } });
  for (let i = 0; i < 3; i++) await t.append([batch('r', i * 10, 10)]);
  await sleep(5);
  const loc = t.metadataLocation;
  await assert.rejects(expireSnapshots(t, { olderThanMs: 0, keepLast: 1 }), (e: unknown) => e instanceof GcDisabledError && /gc\.enabled=false/.test((e as Error).message));
  await assert.rejects(expireSnapshots(t, { olderThanMs: 0, keepLast: 1, dryRun: true }), GcDisabledError);
  assert.equal(lake.catalog.loadTable({ namespace: ['m'], name: 'g' })!.metadataLocation, loc);
  assert.equal(t.metadata.snapshots.length, 3);
  lake.close();
});

test('expire: statistics and partition-statistics files of expired snapshots are dropped and deleted; those of retained ones stay', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['m'], name: 's' }, schema, { properties: props });
  for (let i = 0; i < 3; i++) await t.append([batch('r', i * 10, 10)]);
  const [s1, s2, s3] = t.metadata.snapshots.map((s) => s.snapshotId);
  const statsDir = path.join(local(lake.tableLocation({ namespace: ['m'], name: 's' })), 'metadata');
  const file = (n: string): string => {
    const p = path.join(statsDir, n);
    writeFileSync(p, 'puffin');
    return p;
  };
  const st = (id: bigint, p: string) => ({ snapshotId: id, statisticsPath: p, fileSizeInBytes: 6n, extra: { 'file-footer-size-in-bytes': 0, 'blob-metadata': [] } });
  const a = file('s1.stats'), b = file('s3.stats'), c = file('s2.partition-stats');
  await t.commit(metadataUpdate((base) => ({ ...base, statistics: [st(s1!, a), st(s3!, b)], partitionStatistics: [{ snapshotId: s2!, statisticsPath: c, fileSizeInBytes: 6n, extra: {} }] })));
  await sleep(5);
  const r = await expireSnapshots(t, { olderThanMs: 0, keepLast: 1 });
  assert.deepEqual(new Set(r.expired), new Set([s1, s2]));
  assert.deepEqual([...r.deleted.statistics].sort(), [a, c].sort());
  assert.ok(!existsSync(a) && !existsSync(c) && existsSync(b));
  const m = (await lake.loadTable({ namespace: ['m'], name: 's' })).metadata;
  assert.deepEqual(m.statistics.map((s) => s.snapshotId), [s3]);
  assert.deepEqual(m.partitionStatistics, []);
  lake.close();
});

test('expire: a commit that lands during the expiry commit is kept; expiry re-plans on the fresh base', async () => {
  const lake = freshLake();
  const ident = { namespace: ['m'], name: 'c' };
  const t0 = await lake.createTable(ident, schema, { properties: props });
  for (let i = 0; i < 3; i++) await t0.append([batch('r', i * 10, 10)]);
  const m1 = t0.metadataLocation;
  // prepare a concurrent append (metadata m2), then move the pointer back to m1
  const other = await lake.loadTable(ident);
  await other.append([batch('late', 100, 4)]);
  const m2 = other.metadataLocation;
  const late = other.currentSnapshot()!.snapshotId;
  lake.catalog.commit([{ ident, expected: m2, next: m1 }], 'test: rewind');
  // the concurrent append lands just after expiry read its base (the commit
  // registers in flight once, after loading the base and before writing)
  let attempts = 0;
  const hooks = {
    begin: () => {
      if (attempts++ === 0) lake.catalog.commit([{ ident, expected: m1, next: m2 }], 'test: concurrent append');
      return () => undefined;
    },
  };
  const t = new Table(lake.io, m1, t0.metadata, lake.catalog, ident, undefined, hooks);
  await sleep(5);
  const r = await expireSnapshots(t, { olderThanMs: 0, keepLast: 1 });
  assert.equal(attempts, 1, 'one in-flight registration covers the conflicting attempt and its retry');
  assert.equal(r.expired.length, 3, 'every snapshot but the concurrent append');
  assert.ok(!r.expired.includes(late));
  assert.equal(t.metadata.currentSnapshotId, late);
  assert.deepEqual(t.metadata.snapshots.map((s) => s.snapshotId), [late]);
  const rows = await (await lake.loadTable(ident)).scan().toArray();
  assert.equal(rows.length, 34);
  lake.close();
});
