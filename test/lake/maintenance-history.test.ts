// How much history a lake keeps, on real lakes in one process: orphan removal
// with a history window drops the metadata files of older generations but
// keeps the metadata-log's (write.metadata.previous-versions-max) and every
// generation a live lease reads; reading as of a dropped generation is a clear
// error; write.metadata.delete-after-commit.enabled deletes what the log
// trims at commit time, except what a lease reads; every file the writers
// produce has a name gc recognises as Mimir's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { ExpiredGenerationError, Lake } from '../../src/lake/lake.ts';
import { localPath } from '../../src/lake/io/paths.ts';
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';
import { expireSnapshots, removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { isMimirFile } from '../../src/lake/maintenance/names.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-history-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
  ],
};

function batch(repo: string, from: number, n: number): Batch {
  const rows: Value[][] = Array.from({ length: n }, (_, i) => [repo, BigInt(from + i)]);
  return { fields: schema.fields, numRows: n, columns: [rows.map((r) => r[0]!), rows.map((r) => r[1]!)] };
}

let counter = 0;
const freshLake = (): Lake => Lake.open(path.join(work.dir, `lake-${counter++}`));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const metadataFiles = (lake: Lake, ident: { namespace: string[]; name: string }): string[] =>
  readdirSync(path.join(localPath(lake.tableLocation(ident)), 'metadata'))
    .filter((f) => f.endsWith('.metadata.json'))
    .sort();
const ids = (rows: Record<string, Value>[]): string[] => rows.map((r) => String(r.id)).sort();

test('history: old generations\' metadata files go, the metadata-log\'s and a leased generation\'s stay; reading a dropped generation says so', async () => {
  const lake = freshLake();
  const ident = { namespace: ['h'], name: 't' };
  const t = await lake.createTable(ident, schema, { properties: { 'write.metadata.previous-versions-max': '3' } });
  const gens: bigint[] = [];
  for (let i = 0; i < 10; i++) {
    await t.append([batch(`r${i}`, i * 10, 2)]);
    gens.push(lake.catalog.pointerGeneration());
  }
  assert.equal(metadataFiles(lake, ident).length, 11, 'create + 10 appends');
  assert.equal(t.metadata.metadataLog.length, 3, 'the log keeps previous-versions-max entries');
  const rowsAt3 = ids(await (await lake.loadTable(ident, { generation: gens[2]! })).scan().toArray());
  // a pin on the third append's generation, taken after the files are old enough for the lease rule
  await sleep(2100);
  const lease = lake.catalog.beginLease({ releaseBase: gens[2]!, note: 'test pin' });
  const r1 = await removeOrphanFiles(lake, { olderThanMs: 0, historyRetainMs: 0 });
  assert.equal(r1.deleted.length, 3, `create, 1st and 2nd append's metadata files go: ${r1.deleted.join(', ')}`);
  assert.ok(r1.deleted.every((f) => f.endsWith('.metadata.json')));
  assert.equal(metadataFiles(lake, ident).length, 8);
  assert.deepEqual(ids(await (await lake.loadTable(ident, { generation: gens[2]! })).scan().toArray()), rowsAt3, 'the leased generation reads');
  lease.end();

  const r2 = await removeOrphanFiles(lake, { olderThanMs: 0, historyRetainMs: 0 });
  assert.equal(r2.deleted.length, 4);
  assert.equal(metadataFiles(lake, ident).length, 4, 'the current file and the 3 of its metadata-log');
  await assert.rejects(lake.loadTable(ident, { generation: gens[2]! }), (e: unknown) => {
    assert.ok(e instanceof ExpiredGenerationError);
    assert.match((e as Error).message, new RegExp(`as of lake generation ${gens[2]}: its metadata file .* was removed by gc`));
    return true;
  });
  assert.equal((await (await lake.loadTable(ident, { generation: gens[7]! })).scan().toArray()).length, 16, 'a generation in the log still reads');
  assert.equal((await t.scan().toArray()).length, 20, 'the current state is whole');

  // without a window (the default), nothing of the history goes
  const r3 = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.deepEqual(r3.deleted, []);
  lake.close();
});

test('history: write.metadata.delete-after-commit.enabled deletes what the log trims at commit, except a leased generation\'s', async () => {
  const lake = freshLake();
  const ident = { namespace: ['h'], name: 'dac' };
  const t = await lake.createTable(ident, schema, {
    properties: { 'write.metadata.previous-versions-max': '2', 'write.metadata.delete-after-commit.enabled': 'true' },
  });
  await t.append([batch('a', 0, 1)]);
  const leasedGen = lake.catalog.pointerGeneration();
  const leasedFile = t.metadataLocation;
  const lease = lake.catalog.beginLease({ releaseBase: leasedGen, note: 'test pin' });
  for (let i = 1; i < 6; i++) await t.append([batch('a', i, 1)]);
  const files = metadataFiles(lake, ident);
  assert.equal(files.length, 4, `current + 2 in the log + the leased one: ${files.join(', ')}`);
  assert.ok(files.includes(path.basename(leasedFile)));
  lease.end();
  await t.append([batch('a', 9, 1)]);
  assert.equal(metadataFiles(lake, ident).length, 4, 'once trimmed off the log, a file is no commit\'s to delete any more');
  await sleep(20);
  const r = await removeOrphanFiles(lake, { olderThanMs: 0, historyRetainMs: 0 });
  assert.equal(r.deleted.length, 1, 'gc collects it');
  assert.equal(metadataFiles(lake, ident).length, 3);
  lake.close();
});

test('names: every file the lake writers produce is one gc may recognise as Mimir\'s', async () => {
  const lake = freshLake();
  const ident = { namespace: ['h'], name: 'names' };
  const t = await lake.createTable(ident, schema, { partitionBy: [{ sourceId: 1, name: 'repo', transform: { kind: 'identity' } }] });
  await t.append([batch('a', 0, 3), batch('b', 3, 3)]);
  const [first] = await t.dataFiles();
  await t.overwrite([first!.file.filePath], await t.writeDataFiles([batch('a', 0, 1)]));
  await t.setProperties({ x: 'y' });
  await sleep(5);
  await expireSnapshots(t, { olderThanMs: 0 });
  const dir = localPath(lake.tableLocation(ident));
  const rel: string[] = [];
  const walk = (d: string, prefix: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name), `${prefix}${e.name}/`);
      else rel.push(`${prefix}${e.name}`);
    }
  };
  walk(dir, '');
  assert.ok(rel.length > 8, rel.join(' '));
  for (const f of rel) assert.ok(isMimirFile(f), `${f} is a Mimir name`);
  // the temporary sibling of an interrupted write (io/fileio.ts)
  assert.ok(isMimirFile(`data/repo=a/.00001-${randomUUID()}.parquet.${randomUUID()}.tmp`));
  for (const f of ['notes.txt', 'data/x.parquet', 'metadata/junk.avro', 'metadata/v3.metadata.json', 'metadata/sub/00000-x.metadata.json', '../x']) {
    assert.ok(!isMimirFile(f), `${f} is not`);
  }
  lake.close();
});
