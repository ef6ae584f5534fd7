// removeOrphanFiles on real lakes, one process: strays and the files of a
// commit that never landed go; everything any metadata reaches stays (reads
// as of an old generation included); horizons, dry runs, unreadable tables;
// a stranger's file (a name Mimir never writes) is listed and kept.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';
import { expireSnapshots, removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-orphans-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
  ],
};
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
const ids = (rows: Record<string, Value>[]): string[] => rows.map((r) => String(r.id)).sort();

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

test('orphans: strays and a failed commit\'s files go; every reachable file stays; horizon and dry run hold back', async () => {
  const lake = freshLake();
  const ident = { namespace: ['o'], name: 't' };
  const t = await lake.createTable(ident, schema, { properties: props });
  await t.append([batch('a', 0, 10)]);
  await t.append([batch('b', 10, 10)]);
  const g1 = lake.catalog.pointerGeneration();
  const rowsG1 = ids(await t.scan().toArray());
  // replace the first file: it stays reachable through the history
  await t.overwrite([(await t.dataFiles())[0]!.file.filePath], await t.writeDataFiles([batch('a', 0, 3)]));
  const rowsNow = ids(await t.scan().toArray());
  const dir = local(lake.tableLocation(ident));
  const reachable = filesUnder(dir);

  // orphans: a commit that never landed, strays named as Mimir names its files, a temp file of a write that died, a nested stray
  const failed = (await t.writeDataFiles([batch('x', 100, 5)])).map((f) => local(f.file.filePath));
  assert.equal(failed.length, 1);
  mkdirSync(path.join(dir, 'data', 'sub'), { recursive: true });
  const strays = [
    path.join(dir, 'data', `00042-${randomUUID()}.parquet`),
    path.join(dir, 'metadata', `${randomUUID()}-m0-a1.avro`),
    path.join(dir, 'metadata', `snap-123-1-${randomUUID()}.avro`),
    path.join(dir, 'metadata', `00007-${randomUUID()}.metadata.json`),
    path.join(dir, 'data', `.00009-x.parquet.${randomUUID()}.tmp`),
    path.join(dir, 'data', 'sub', `00001-${randomUUID()}.parquet`),
  ];
  for (const s of strays) writeFileSync(s, 'junk');
  // a stranger's files: names Mimir never writes, wherever they are in the table folder
  const strangers = [
    path.join(dir, 'data', 'stray.parquet'),
    path.join(dir, 'metadata', 'junk.avro'),
    path.join(dir, 'data', 'sub', 'deep.bin'),
    path.join(dir, 'notes.txt'),
    path.join(dir, 'metadata', 'sub', `${randomUUID()}-m0.avro`),
  ];
  mkdirSync(path.join(dir, 'metadata', 'sub'));
  for (const s of strangers) writeFileSync(s, 'mine');
  // never deleted: a version hint
  writeFileSync(path.join(dir, 'metadata', 'version-hint.text'), '3');
  const orphans = [...failed, ...strays].sort();
  await sleep(20);

  const dry = await removeOrphanFiles(lake, { olderThanMs: 0, dryRun: true });
  assert.equal(dry.dryRun, true);
  assert.deepEqual(dry.deleted.map(local).sort(), orphans);
  assert.deepEqual(dry.strangers.map(local).sort(), [...strangers].sort());
  for (const o of orphans) assert.ok(existsSync(o), `dry run kept ${o}`);
  assert.equal(dry.scanned, reachable.length + orphans.length + strangers.length + 1);
  assert.equal(dry.reachable, reachable.length + 1);

  const hour = await removeOrphanFiles(lake, { olderThanMs: 60 * 60_000 });
  assert.deepEqual(hour.deleted, []);
  assert.equal(hour.kept.young, orphans.length);
  for (const o of orphans) assert.ok(existsSync(o));

  const r = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.deepEqual(r.deleted.map(local).sort(), orphans);
  assert.deepEqual(r.strangers.map(local).sort(), [...strangers].sort(), 'a stranger\'s files are listed');
  assert.deepEqual(r.skipped, []);
  for (const o of orphans) assert.ok(!existsSync(o), `deleted ${o}`);
  assert.deepEqual(
    filesUnder(dir),
    [...reachable, ...strangers, path.join(dir, 'metadata', 'version-hint.text')].sort(),
    'exactly the reachable files, the stranger\'s files and the hint remain',
  );
  const again = await lake.loadTable(ident);
  assert.deepEqual(ids(await again.scan().toArray()), rowsNow);
  assert.deepEqual(ids(await (await lake.loadTable(ident, { generation: g1 })).scan().toArray()), rowsG1, 'as of an old generation');
  const second = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.deepEqual(second.deleted, []);
  assert.equal(second.strangers.length, strangers.length, 'still listed, still kept');
  lake.close();
});

test('orphans: after expiring snapshots, history naming deleted files is tolerated and the retained files stay', async () => {
  const lake = freshLake();
  const ident = { namespace: ['o'], name: 'e' };
  const t = await lake.createTable(ident, schema, { properties: props });
  for (let i = 0; i < 4; i++) await t.append([batch(`r${i}`, i * 10, 10)]);
  await t.overwrite([(await t.dataFiles())[0]!.file.filePath], []);
  await sleep(5);
  const ex = await expireSnapshots(t, { olderThanMs: 0, keepLast: 1 });
  assert.equal(ex.expired.length, 4);
  const dir = local(lake.tableLocation(ident));
  const before = filesUnder(dir);
  const rows = ids(await t.scan().toArray());
  await sleep(20);
  const r = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.deepEqual(r.skipped, []);
  assert.deepEqual(r.deleted, []);
  assert.deepEqual(filesUnder(dir), before);
  assert.deepEqual(ids(await (await lake.loadTable(ident)).scan().toArray()), rows);
  lake.close();
});

test('orphans: a table whose metadata cannot be read is reported and left alone; other tables are cleaned', async () => {
  const lake = freshLake();
  const good = await lake.createTable({ namespace: ['o'], name: 'good' }, schema, { properties: props });
  const bad = await lake.createTable({ namespace: ['o'], name: 'bad' }, schema, { properties: props });
  await good.append([batch('g', 0, 5)]);
  await bad.append([batch('b', 0, 5)]);
  const goodStray = path.join(local(lake.tableLocation(good.ident!)), 'data', `00099-${randomUUID()}.parquet`);
  const badStray = path.join(local(lake.tableLocation(bad.ident!)), 'data', `00099-${randomUUID()}.parquet`);
  writeFileSync(goodStray, 'x');
  writeFileSync(badStray, 'x');
  // the bad table's current manifest list is corrupted
  writeFileSync(local(bad.currentSnapshot()!.manifestList), 'not avro');
  const badFiles = filesUnder(local(lake.tableLocation(bad.ident!)));
  await sleep(20);
  const r = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.equal(r.skipped.length, 1);
  assert.equal(r.skipped[0]!.table, 'o.bad');
  assert.match(r.skipped[0]!.reason, /manifest list/);
  assert.deepEqual(r.deleted.map(local), [goodStray]);
  assert.deepEqual(filesUnder(local(lake.tableLocation(bad.ident!))), badFiles);
  // a missing current metadata file is reported the same way
  const { rmSync } = await import('node:fs');
  rmSync(local(bad.metadataLocation));
  const r2 = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.equal(r2.skipped.length, 1);
  assert.ok(existsSync(badStray));
  assert.ok(statSync(badStray).isFile());
  lake.close();
});
