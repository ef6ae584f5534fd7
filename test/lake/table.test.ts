// Table writes and reads end to end on a real lake: SQLite catalog, Avro
// manifests, Parquet data files, all on disk.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, NestedField, Schema, Value } from '../../src/lake/spec/types.ts';
import { eq, and, ge, lt, inList } from '../../src/lake/expr/expr.ts';
import { decodeManifestList } from '../../src/lake/avro/manifest-list.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-table-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
    { id: 3, name: 'name', required: false, type: { type: 'string' } },
    { id: 4, name: 'score', required: false, type: { type: 'double' } },
  ],
};

function batch(fields: NestedField[], rows: Value[][]): Batch {
  return { fields, numRows: rows.length, columns: fields.map((_f, i) => rows.map((r) => r[i] ?? null)) };
}
const rowsOf = (repo: string, from: number, n: number): Value[][] =>
  Array.from({ length: n }, (_, i) => [repo, BigInt(from + i), `item-${from + i}`, (from + i) / 2]);

let counter = 0;
function freshLake(): Lake {
  return Lake.open(path.join(work.dir, `lake-${counter++}`));
}

test('table: append then scan returns every row, projected by name', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['t'], name: 'a' }, schema);
  await t.append([batch(schema.fields, rowsOf('r1', 0, 100))]);
  await t.append([batch(schema.fields, rowsOf('r2', 100, 50))]);
  const rows = await t.scan({ columns: ['id', 'repo'] }).toArray();
  assert.equal(rows.length, 150);
  assert.deepEqual(Object.keys(rows[0]!), ['id', 'repo']);
  assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(Array.from({ length: 150 }, (_, i) => BigInt(i))));
  const snap = t.currentSnapshot()!;
  assert.equal(snap.summary['total-records'], '150');
  assert.equal(snap.summary.operation, 'append');
  assert.equal(t.metadata.snapshots.length, 2);
  lake.close();
});

test('table: filters select exact rows (eq, in, range)', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['t'], name: 'f' }, schema);
  await t.append([batch(schema.fields, rowsOf('r1', 0, 1000))]);
  assert.equal((await t.scan({ filter: eq('id', 7) }).toArray()).length, 1);
  assert.equal((await t.scan({ filter: inList('id', [1, 2, 3, 5000]) }).toArray()).length, 3);
  assert.equal((await t.scan({ filter: and(ge('id', 10), lt('id', 20)) }).toArray()).length, 10);
  assert.equal((await t.scan({ filter: eq('repo', 'nope') }).toArray()).length, 0);
  lake.close();
});

test('table: overwrite replaces exactly the files read and keeps files appended since', async () => {
  const lake = freshLake();
  const ident = { namespace: ['t'], name: 'o' };
  const t = await lake.createTable(ident, schema);
  await t.append([batch(schema.fields, rowsOf('r1', 0, 10))]);
  const read = (await t.dataFiles()).map((d) => d.file);
  // another handle appends after our read
  const other = await lake.loadTable(ident);
  await other.append([batch(schema.fields, rowsOf('r2', 10, 5))]);
  const newFiles = await t.writeDataFiles([batch(schema.fields, rowsOf('r1', 0, 3))]);
  await t.overwrite(read, newFiles, 'overwrite');
  const rows = await t.scan().toArray();
  assert.equal(rows.length, 8, 'the 3 rewritten rows plus the 5 appended concurrently');
  assert.equal(rows.filter((r) => r.repo === 'r2').length, 5);
  // replacing a file that is no longer live fails and commits nothing
  const before = t.metadataLocation;
  await assert.rejects(t.overwrite(read, [], 'delete'), /no longer live/);
  await t.refresh();
  assert.equal(t.metadataLocation, before);
  // ... and leaves no file behind, also when a live file beside it had its manifest rewritten first
  const metaDir = path.join(fileURLToPath(lake.tableLocation(ident)), 'metadata');
  const files = readdirSync(metaDir).sort();
  const live = (await t.dataFiles()).map((d) => d.file);
  await assert.rejects(t.overwrite([...live, ...read], [], 'delete'), /no longer live/);
  assert.deepEqual(readdirSync(metaDir).sort(), files, 'a refused replace leaves no manifest behind');
  lake.close();
});

test('table: add column; old files read it as null', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['t'], name: 's' }, schema);
  await t.append([batch(schema.fields, rowsOf('r1', 0, 3))]);
  await t.addColumns([{ name: 'extra', type: { type: 'int' } }]);
  const f = t.schema.fields;
  assert.equal(f[4]!.name, 'extra');
  assert.equal(f[4]!.id, 5);
  await t.append([batch(f, [['r1', 99n, 'x', 1, 42]])]);
  const rows = await t.scan({ columns: ['id', 'extra'] }).toArray();
  assert.deepEqual(rows.map((r) => r.extra).sort(), [42, null, null, null]);
  lake.close();
});

test('table: partition spec evolution keeps old files on their spec', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['t'], name: 'p' }, schema);
  await t.append([batch(schema.fields, [...rowsOf('r1', 0, 5), ...rowsOf('r3', 20, 5)])]);
  await t.updateSpec([{ sourceId: 1, name: 'repo', transform: { kind: 'identity' } }]);
  assert.equal(t.metadata.defaultSpecId, 1);
  assert.equal(t.spec.fields[0]!.fieldId, 1000);
  await t.append([batch(schema.fields, [...rowsOf('r2', 5, 5), ...rowsOf('r3', 10, 5)])]);
  const files = await t.dataFiles();
  assert.deepEqual(files.map((f) => f.specId).sort(), [0, 1, 1]);
  assert.ok(files.some((f) => f.file.filePath.includes('/data/repo=r2/')));
  const s = t.scan({ filter: eq('repo', 'r3') });
  assert.equal((await s.toArray()).length, 10, 'r3 rows from the spec-0 file and the spec-1 file');
  assert.equal(s.metrics.dataFilesSkipped, 1, 'r2 file pruned by partition value; spec-0 file kept (its bounds hold r3)');
  lake.close();
});

test('table: time travel by snapshot id, timestamp and lake generation', async () => {
  const lake = freshLake();
  const ident = { namespace: ['t'], name: 'tt' };
  const t = await lake.createTable(ident, schema);
  const c1 = await t.append([batch(schema.fields, rowsOf('r1', 0, 4))]);
  const ts1 = t.currentSnapshot()!.timestampMs;
  await new Promise((r) => setTimeout(r, 5));
  await t.append([batch(schema.fields, rowsOf('r1', 4, 4))]);
  assert.equal((await t.scan({ snapshotId: c1.snapshotId }).toArray()).length, 4);
  assert.equal((await t.scan({ asOfMs: ts1 }).toArray()).length, 4);
  const pinned = await lake.loadTable(ident, { generation: c1.generation });
  assert.equal((await pinned.scan().toArray()).length, 4);
  await assert.rejects(pinned.append([batch(schema.fields, rowsOf('r1', 0, 1))]), /read-only: pinned to lake generation/);
  assert.equal((await t.scan().toArray()).length, 8);
  lake.close();
});

test('table: 64-bit ids above 2^53 are exact in metadata, manifest lists and catalog', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['t'], name: 'ids' }, schema);
  for (let i = 0; i < 5; i++) await t.append([batch(schema.fields, rowsOf('r', i, 1))]);
  const big = t.metadata.snapshots.filter((s) => s.snapshotId > 2n ** 53n);
  assert.ok(big.length >= 3, 'random 63-bit ids are almost always above 2^53');
  const text = readFileSync(fileURLToPath(t.metadataLocation), 'utf8');
  for (const s of t.metadata.snapshots) {
    assert.ok(text.includes(`"snapshot-id": ${s.snapshotId}`), `metadata holds ${s.snapshotId} literally`);
    const list = decodeManifestList(readFileSync(fileURLToPath(s.manifestList)), s.manifestList);
    assert.ok(list.some((m) => m.addedSnapshotId === s.snapshotId));
  }
  lake.close();
});

test('table: properties set and removed; reserved keys refused', async () => {
  const lake = freshLake();
  const t = await lake.createTable({ namespace: ['t'], name: 'props' }, schema);
  await t.setProperties({ 'mimir.ring': 'split', a: '1' });
  await t.removeProperties(['a']);
  const again = await lake.loadTable({ namespace: ['t'], name: 'props' });
  assert.equal(again.properties['mimir.ring'], 'split');
  assert.equal(again.properties.a, undefined);
  await assert.rejects(t.setProperties({ 'format-version': '3' }), /reserved/);
  assert.equal(again.metadata.metadataLog.length, 2, 'the metadata log keeps the previous files');
  lake.close();
});

test('table: a corrupted metadata file, manifest or Parquet footer gives an error naming the file; nothing is written', async () => {
  const lake = freshLake();
  const ident = { namespace: ['t'], name: 'bad' };
  const t = await lake.createTable(ident, schema);
  await t.append([batch(schema.fields, rowsOf('r', 0, 10))]);
  const dir = fileURLToPath(lake.tableLocation(ident));
  const listing = (): string[] => readdirSync(dir, { recursive: true }) as string[];
  const files = listing();
  const gen = lake.catalog.pointerGeneration();

  const data = path.join(dir, files.find((f) => f.endsWith('.parquet'))!);
  const good = readFileSync(data);
  writeFileSync(data, good.subarray(0, good.length - 5));
  await assert.rejects(t.scan().toArray(), (e: Error) => e.message.includes(path.basename(data)));
  writeFileSync(data, good);

  const manifest = path.join(dir, files.find((f) => /-m\d+\.avro$/.test(f))!);
  const mgood = readFileSync(manifest);
  writeFileSync(manifest, mgood.subarray(0, 40));
  await assert.rejects(t.scan().toArray(), (e: Error) => e.message.includes(path.basename(manifest)));
  writeFileSync(manifest, mgood);

  const meta = fileURLToPath(t.metadataLocation);
  const text = readFileSync(meta, 'utf8');
  writeFileSync(meta, text.slice(0, text.length / 2));
  await assert.rejects(lake.loadTable(ident), (e: Error) => e.message.includes(path.basename(meta)));
  await assert.rejects(t.append([batch(schema.fields, rowsOf('r', 0, 1))]), (e: Error) => e.message.includes(path.basename(meta)));
  writeFileSync(meta, text);

  assert.equal(lake.catalog.pointerGeneration(), gen, 'no commit landed');
  const after = listing().filter((f) => statSync(path.join(dir, f)).isFile());
  assert.deepEqual(after.sort(), files.filter((f) => statSync(path.join(dir, f)).isFile()).sort(), 'no file left behind');
  lake.close();
});
