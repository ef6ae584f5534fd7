// Integrity on real files: 16 bytes flipped anywhere in a manifest (header,
// blocks, end) make a scan, gc's reachability walk and checkLake fail naming
// the manifest, and gc deletes nothing of that table; a manifest whose counts
// or length disagree with its manifest list, and a data file whose footer
// counts other rows than its manifest entry, are errors naming the file; a
// manifest list's flipped bytes are caught too. A foreign table's miscounted
// manifest list reads by its entries, with a warning.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Lake, openMetadataFile } from '../../src/lake/lake.ts';
import { onWarning } from '../../src/lake/warnings.ts';
import { localPath } from '../../src/lake/io/paths.ts';
import { removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { checkLake } from '../../src/lake/maintenance/check.ts';
import { readManifestList } from '../../src/lake/scan/plan.ts';
import { decodeManifestList, encodeManifestList } from '../../src/lake/avro/manifest-list.ts';
import { IntegrityError } from '../../src/lake/spec/integrity.ts';
import { icebergFixtures, needsFixtures, scratch } from '../helpers.ts';
import { REPO_ID_SCHEMA, repoIdBatch } from './repo-id-rows.ts';

const work = scratch('mimir-integrity-');
after(work.cleanup);

const schema = REPO_ID_SCHEMA;
const batch = repoIdBatch;

let counter = 0;
async function lakeWithTable(): Promise<{ lake: Lake; ident: { namespace: string[]; name: string } }> {
  const lake = Lake.open(path.join(work.dir, `lake-${counter++}`));
  const ident = { namespace: ['i'], name: 't' };
  const t = await lake.createTable(ident, schema);
  await t.append([batch('a', 0, 50)]);
  await t.append([batch('b', 50, 50)]);
  return { lake, ident };
}

async function firstManifest(lake: Lake, ident: { namespace: string[]; name: string }): Promise<{ list: string; manifest: string }> {
  const t = await lake.loadTable(ident);
  const snap = t.currentSnapshot()!;
  const [mf] = await readManifestList(lake.io, snap);
  return { list: localPath(snap.manifestList), manifest: localPath(mf!.manifestPath) };
}

function flip16(file: string, at: number): void {
  const b = readFileSync(file);
  for (let i = at; i < Math.min(at + 16, b.length); i++) b[i] = b[i]! ^ 0xff;
  writeFileSync(file, b);
}

test('integrity: 16 flipped bytes anywhere in a manifest are caught by scan, gc and check, naming the manifest', async () => {
  const { lake, ident } = await lakeWithTable();
  const { manifest } = await firstManifest(lake, ident);
  const pristine = readFileSync(manifest);
  const offsets = [0, 40, Math.floor(pristine.length / 2), pristine.length - 40, pristine.length - 16];
  for (let at = 64; at < pristine.length - 16; at += 97) offsets.push(at);
  for (const at of offsets) {
    writeFileSync(manifest, pristine);
    flip16(manifest, at);
    const t = await lake.loadTable(ident);
    await assert.rejects(t.scan().toArray(), (e: Error) => e.message.includes(manifest), `scan, flip at ${at}`);
    const check = await checkLake(lake);
    assert.ok(check.problems.some((p) => p.file.endsWith(path.basename(manifest))), `check, flip at ${at}: ${JSON.stringify(check.problems)}`);
  }
  const gc = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.equal(gc.skipped.length, 1, 'gc leaves the table alone');
  assert.match(gc.skipped[0]!.reason, new RegExp(path.basename(manifest)));
  assert.deepEqual(gc.deleted, []);
  writeFileSync(manifest, pristine);
  assert.equal((await (await lake.loadTable(ident)).scan().toArray()).length, 100, 'restored, it reads again');
  assert.deepEqual((await checkLake(lake, { footers: true })).problems, []);
  lake.close();
});

test('integrity: a flipped manifest list is caught, naming it', async () => {
  const { lake, ident } = await lakeWithTable();
  const { list } = await firstManifest(lake, ident);
  flip16(list, Math.floor(readFileSync(list).length / 2));
  await assert.rejects((await lake.loadTable(ident)).scan().toArray(), (e: Error) => e.message.includes(list));
  const check = await checkLake(lake);
  assert.equal(check.problems.length, 1);
  assert.ok(check.problems[0]!.file.endsWith(path.basename(list)));
  lake.close();
});

test('integrity: manifest counts or length that disagree with the manifest list are an IntegrityError naming the manifest', async () => {
  const { lake, ident } = await lakeWithTable();
  const t = await lake.loadTable(ident);
  const snap = t.currentSnapshot()!;
  const listFile = localPath(snap.manifestList);
  const pristine = readFileSync(listFile);
  const files = decodeManifestList(pristine, listFile);
  const rewrite = (change: (f: (typeof files)[number]) => void): void => {
    const copy = files.map((f) => ({ ...f }));
    change(copy[0]!);
    writeFileSync(listFile, encodeManifestList(copy, { snapshotId: snap.snapshotId, parentSnapshotId: snap.parentSnapshotId, sequenceNumber: snap.sequenceNumber }));
  };
  rewrite((f) => (f.addedRowsCount += 1n));
  await assert.rejects(t.scan().toArray(), (e: unknown) => {
    assert.ok(e instanceof IntegrityError);
    assert.match((e as Error).message, /its entries count 50 added rows where its manifest list records 51/);
    assert.ok((e as IntegrityError).file === files[0]!.manifestPath);
    return true;
  });
  rewrite((f) => (f.existingFilesCount += 2));
  await assert.rejects(t.scan().toArray(), /0 existing files where its manifest list records 2/);
  rewrite((f) => (f.manifestLength -= 1n));
  await assert.rejects(t.scan().toArray(), /bytes, its manifest list records/);
  writeFileSync(listFile, pristine);
  assert.equal((await t.scan().toArray()).length, 100);
  lake.close();
});

test('integrity: a data file whose footer counts other rows than its manifest entry is an error naming it', async () => {
  const { lake, ident } = await lakeWithTable();
  const t = await lake.loadTable(ident);
  const files = (await t.dataFiles()).map((f) => localPath(f.file.filePath));
  assert.equal(files.length, 2);
  // the second file (50 rows) replaced by a valid Parquet file of another table holding 3 rows
  const other = await lake.createTable({ namespace: ['i'], name: 'other' }, schema);
  await other.append([batch('z', 0, 3)]);
  const [small] = await other.dataFiles();
  copyFileSync(localPath(small!.file.filePath), files[1]!);
  await assert.rejects(t.scan().toArray(), (e: unknown) => {
    assert.ok(e instanceof IntegrityError, String(e));
    assert.match((e as Error).message, /its Parquet footer counts 3 rows, its manifest entry records 50/);
    assert.ok((e as Error).message.includes(files[1]!), (e as Error).message);
    return true;
  });
  const check = await checkLake(lake, { footers: true });
  assert.ok(check.problems.some((p) => p.file.endsWith(path.basename(files[1]!))), JSON.stringify(check.problems));
  lake.close();
});

test('integrity: a foreign table whose manifest list miscounts its manifest\'s entries reads by the entries with a warning naming the manifest; the same damage to a Mimir table is still refused', { skip: needsFixtures }, async () => {
  const copy = path.join(work.dir, 'bunnies');
  cpSync(path.join(icebergFixtures!, 'icebird_spark_bunnies', 'bunnies'), copy, { recursive: true });
  const meta = path.join(copy, 'metadata', 'v5.metadata.json');
  const t = await openMetadataFile(meta, { locationRoot: copy });
  const rows = await t.scan().toArray();
  assert.equal(rows.length, 20, 'the fixture reads its 20 rows');
  const snap = t.currentSnapshot()!;
  const local = (uri: string): string => path.join(copy, uri.replace(/^s3a:\/\/hyperparam-iceberg\/spark\/bunnies\//, ''));
  const listFile = local(snap.manifestList);
  const files = decodeManifestList(readFileSync(listFile), listFile);
  const wrong = files.map((f) => ({ ...f }));
  // as older writers recorded them: counts that disagree with the manifest's entries
  wrong[0]!.addedRowsCount += 3n;
  wrong[0]!.existingFilesCount += 1;
  writeFileSync(listFile, encodeManifestList(wrong, { snapshotId: snap.snapshotId, parentSnapshotId: snap.parentSnapshotId, sequenceNumber: snap.sequenceNumber }));
  const warnings: string[] = [];
  const stop = onWarning((m) => warnings.push(m));
  try {
    const again = await (await openMetadataFile(meta, { locationRoot: copy })).scan().toArray();
    assert.deepEqual(again, rows, 'read by its entries: the same rows');
  } finally {
    stop();
  }
  assert.equal(warnings.length, 1, `one warning: ${JSON.stringify(warnings)}`);
  assert.ok(warnings[0]!.includes(path.basename(files[0]!.manifestPath)), warnings[0]);
  assert.match(warnings[0]!, /where its manifest list records/);
  // Mimir's own manifests (checksummed) with the same damage: refused (the test above pins the messages)
  const { lake, ident } = await lakeWithTable();
  const own = await lake.loadTable(ident);
  const ownSnap = own.currentSnapshot()!;
  const ownList = localPath(ownSnap.manifestList);
  const ownFiles = decodeManifestList(readFileSync(ownList), ownList).map((f) => ({ ...f }));
  ownFiles[0]!.addedRowsCount += 3n;
  writeFileSync(ownList, encodeManifestList(ownFiles, { snapshotId: ownSnap.snapshotId, parentSnapshotId: ownSnap.parentSnapshotId, sequenceNumber: ownSnap.sequenceNumber }));
  await assert.rejects(own.scan().toArray(), (e: unknown) => e instanceof IntegrityError);
  lake.close();
});
