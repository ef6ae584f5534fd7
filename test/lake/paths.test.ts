// Paths as the spec means them: the string in the metadata is the object's
// name. Mimir writes each data file exactly where its manifest says — the
// Java-escaped partition folder is the literal folder name — so DuckDB reads
// the manifests' paths as they are, a copy of the lake reads the same, a
// binary truncate encoding to '/' is just '%2F', and a lake written when Mimir
// still decoded those names keeps reading and keeps its files through gc.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Lake, openMetadataFile } from '../../src/lake/lake.ts';
import { decodedLocalPath, fileLocation, isRelativePath, localPath, relativeBaseOf } from '../../src/lake/io/paths.ts';
import { removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import type { Schema, Value } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-paths-');
after(work.cleanup);

test('paths: file: URLs are taken literally; file://rel is relative; the base of a relative location is read off the metadata file', () => {
  assert.equal(localPath('file:///a/k=%3A/f.parquet'), '/a/k=%3A/f.parquet');
  assert.equal(localPath('file:/a/b'), '/a/b');
  assert.equal(localPath('file://localhost/a/b'), '/a/b');
  assert.equal(localPath('file://data/persistent/t/x'), 'data/persistent/t/x');
  assert.equal(localPath('/a b/c'), '/a b/c');
  assert.equal(localPath('s3://bucket/t'), 's3://bucket/t');
  assert.equal(isRelativePath('data/t'), true);
  assert.equal(isRelativePath('./t'), true);
  assert.equal(isRelativePath('file://data/t'), true);
  assert.equal(isRelativePath('file:///data/t'), false);
  assert.equal(isRelativePath('s3a://b/t'), false);
  assert.equal(fileLocation('/lake/a b/ns/t'), 'file:///lake/a b/ns/t');
  assert.equal(decodedLocalPath('file:///t/k=%C3%BC/f'), '/t/k=ü/f');
  assert.equal(decodedLocalPath('file:///t/k=%ZZ/f'), undefined);
  assert.equal(relativeBaseOf('/repo/data/p/t/metadata/v3.metadata.json', 'data/p/t'), '/repo');
  assert.equal(relativeBaseOf('/repo/data/p/t/metadata/v3.metadata.json', 'file://data/p/t/'), '/repo');
  assert.equal(relativeBaseOf('/repo/t/metadata/v3.metadata.json', './t'), '/repo');
  assert.equal(relativeBaseOf('/elsewhere/metadata/v3.metadata.json', 'data/p/t'), undefined);
  assert.equal(relativeBaseOf('/repo/data/p/t/metadata/v3.metadata.json', '/abs/t'), undefined);
});

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 's', required: true, type: { type: 'string' } },
    { id: 2, name: 'b', required: true, type: { type: 'binary' } },
    { id: 3, name: 'n', required: true, type: { type: 'int' } },
  ],
};
const VALUES = ['ü', '+', '✓', ':', '%', 'a b', 'x/y'];
/** Bytes whose 3-byte truncation is base64 `////`: the partition value encodes to '/'. */
const SLASHY = Uint8Array.from([0xff, 0xff, 0xff, 0x01]);

test('paths: escaped partition values are the literal folder names; DuckDB reads the manifest paths as they are; a copy reads alike', async () => {
  const root = path.join(work.dir, 'lake');
  const lake = Lake.open(root);
  const t = await lake.createTable({ namespace: ['p'], name: 't' }, schema, {
    partitionBy: [
      { sourceId: 1, name: 's', transform: { kind: 'identity' } },
      { sourceId: 2, name: 'b_trunc', transform: { kind: 'truncate', width: 3 } },
    ],
  });
  const cols: Value[][] = [[], [], []];
  VALUES.forEach((v, i) => {
    cols[0]!.push(v);
    cols[1]!.push(i % 2 === 0 ? SLASHY : Uint8Array.from([i]));
    cols[2]!.push(i);
  });
  await t.append([{ fields: schema.fields, numRows: VALUES.length, columns: cols }]);
  const files = await t.dataFiles();
  assert.equal(files.length, VALUES.length);

  const dataDir = path.join(root, 'p', 't', 'data');
  const folders = readdirSync(dataDir).sort();
  assert.deepEqual(folders, ['s=%25', 's=%2B', 's=%3A', 's=%C3%BC', 's=%E2%9C%93', 's=a+b', 's=x%2Fy'].sort());
  assert.ok(readdirSync(path.join(dataDir, 's=%C3%BC')).includes('b_trunc=%2F%2F%2F%2F'), 'a truncated binary whose base64 is "////" is one folder');

  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  let duckRows = 0;
  for (const { file } of files) {
    assert.ok(file.filePath.startsWith('file:///'));
    assert.ok(existsSync(localPath(file.filePath)), `written where the manifest says: ${file.filePath}`);
    const r = (await c.runAndReadAll(`SELECT s, n FROM read_parquet('${file.filePath.replaceAll("'", "''")}', hive_partitioning = false)`)).getRows();
    assert.equal(r.length, 1);
    assert.equal(r[0]![0], VALUES[Number(r[0]![1])]);
    duckRows += r.length;
  }
  c.closeSync();
  assert.equal(duckRows, VALUES.length);
  const metadataFile = t.metadataLocation;
  lake.close();

  // cp -a of the lake folder, the original removed: the copy reads every row (its location mapped to the copy)
  const copy = path.join(work.dir, 'copy');
  cpSync(root, copy, { recursive: true, preserveTimestamps: true });
  rmSync(root, { recursive: true });
  const copied = await openMetadataFile(path.join(copy, path.relative(root, localPath(metadataFile))), { locationRoot: path.join(copy, 'p', 't') });
  const rows = await copied.scan().toArray();
  assert.deepEqual(rows.map((r) => r.s).sort(), [...VALUES].sort());
  const slash = await copied.scan({ filter: { op: 'eq', col: 'b', value: SLASHY } }).toArray();
  assert.equal(slash.length, 4);
});

test('paths: a lake whose files sit under the decoded names (written before paths were literal) still reads, and gc keeps those files', async () => {
  const root = path.join(work.dir, 'old');
  const lake = Lake.open(root);
  try {
    const t = await lake.createTable({ namespace: ['p'], name: 'o' }, schema, { partitionBy: [{ sourceId: 1, name: 's', transform: { kind: 'identity' } }] });
    await t.append([{ fields: schema.fields, numRows: 2, columns: [['ü', '✓'], [Uint8Array.from([1]), Uint8Array.from([2])], [1, 2]] }]);
    const dataDir = path.join(root, 'p', 'o', 'data');
    renameSync(path.join(dataDir, 's=%C3%BC'), path.join(dataDir, 's=ü'));
    renameSync(path.join(dataDir, 's=%E2%9C%93'), path.join(dataDir, 's=✓'));
    const again = await lake.loadTable({ namespace: ['p'], name: 'o' });
    assert.deepEqual((await again.scan().toArray()).map((r) => r.s).sort(), ['ü', '✓'].sort());
    const report = await removeOrphanFiles(lake, { olderThanMs: 0 });
    assert.deepEqual(report.deleted, [], 'files under decoded names are their metadata\'s files, not orphans');
    assert.equal(readdirSync(path.join(dataDir, 's=ü')).length, 1);
  } finally {
    lake.close();
  }
});
