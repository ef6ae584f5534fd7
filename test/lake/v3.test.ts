// Iceberg v3 as far as Mimir goes: a v3 table reads (defaults, row lineage
// left alone), and what Mimir does not do is refused naming the feature —
// writes to a v3 table (row lineage), deletion vectors, the variant and
// geospatial types — never a silent wrong answer.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Lake, openMetadataFile } from '../../src/lake/lake.ts';
import { localPath } from '../../src/lake/io/paths.ts';
import { parseTableMetadata, serializeTableMetadata } from '../../src/lake/spec/metadata.ts';
import { parseSchema } from '../../src/lake/spec/schema.ts';
import { decodeManifestList, encodeManifestList } from '../../src/lake/avro/manifest-list.ts';
import { decodeManifest, encodeManifest } from '../../src/lake/avro/manifest.ts';
import type { Schema } from '../../src/lake/spec/types.ts';
import { icebergFixtures, needsFixtures, scratch } from '../helpers.ts';

const work = scratch('mimir-v3-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'note', required: false, type: { type: 'string' } },
  ],
};

async function tableWithRows(name: string): Promise<{ lake: Lake; ident: { namespace: string[]; name: string } }> {
  const lake = Lake.open(path.join(work.dir, name));
  const ident = { namespace: ['v'], name };
  const t = await lake.createTable(ident, schema);
  await t.append([{ fields: schema.fields, numRows: 2, columns: [[1n, 2n], ['a', null]] }]);
  return { lake, ident };
}

test('v3: the minimal v3 metadata vector parses; the v3 types variant, geometry and geography are refused by name', { skip: needsFixtures }, () => {
  const text = readFileSync(path.join(icebergFixtures!, 'metadata_vectors', 'apache-iceberg', 'TableMetadataV3ValidMinimal.json'), 'utf8');
  assert.equal(parseTableMetadata(text, 'TableMetadataV3ValidMinimal.json').formatVersion, 3);
  for (const type of ['variant', 'geometry(srid:4326)', 'geography(srid:4326, spherical)']) {
    assert.throws(
      () => parseSchema({ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'g', required: false, type }] }, 'schema'),
      (e: Error) => e.message.includes(`type "${type}" is an Iceberg v3 type Mimir does not read`) && e.message.includes('(g)'),
    );
  }
});

test('v3: a format v3 table scans (initial defaults for added fields) and refuses every write before writing a file', async () => {
  const { lake, ident } = await tableWithRows('upgraded');
  try {
    const t = await lake.loadTable(ident);
    // upgrade the table to v3 the way another engine would: a new metadata file, the pointer moved
    const m = t.metadata;
    const added = { id: 3, name: 'flag', required: false, type: { type: 'boolean' as const }, initialDefault: true };
    const next = { ...m, formatVersion: 3 as const, lastColumnId: 3, schemas: [...m.schemas, { schemaId: 1, fields: [...schema.fields, added] }], currentSchemaId: 1 };
    const loc = t.metadataLocation.replace(/\/[^/]+$/, '/00009-v3.metadata.json');
    await lake.io.writeNew(loc, serializeTableMetadata(next));
    lake.catalog.commit([{ ident, expected: t.metadataLocation, next: loc }], 'upgrade to v3');
    const v3 = await lake.loadTable(ident);
    assert.equal(v3.metadata.formatVersion, 3);
    assert.deepEqual(await v3.scan().toArray(), [
      { id: 1n, note: 'a', flag: true },
      { id: 2n, note: null, flag: true },
    ]);
    assert.equal(await v3.scan({ filter: { op: 'eq', col: 'flag', value: true } }).count(), 2, 'the default prunes as it reads');
    const before = (await v3.dataFiles()).length;
    await assert.rejects(v3.append([{ fields: schema.fields, numRows: 1, columns: [[3n], ['b']] }]), /format v3 table; Mimir writes format v2 only .* — nothing written/);
    await assert.rejects(v3.setProperties({ a: 'b' }), /Mimir writes format v2 only/);
    await assert.rejects(
      lake.commit([{ ident, update: { apply: async (b) => b, attemptFiles: () => [], sharedFiles: () => [] } }]),
      /is an Iceberg format v3 table; Mimir writes format v2 only/,
    );
    assert.equal((await (await lake.loadTable(ident)).dataFiles()).length, before);
  } finally {
    lake.close();
  }
});

test('v3: a deletion vector (a PUFFIN delete file) is refused naming the feature and the file, not ignored', async () => {
  const { lake, ident } = await tableWithRows('dv');
  try {
    const t = await lake.loadTable(ident);
    const snap = t.currentSnapshot()!;
    const lists = decodeManifestList(await lake.io.readAll(snap.manifestList), snap.manifestList);
    const data = lists[0]!;
    const { entries } = decodeManifest(await lake.io.readAll(data.manifestPath), data.manifestPath, { addedSnapshotId: data.addedSnapshotId, sequenceNumber: data.sequenceNumber });
    const target = entries[0]!.dataFile;
    const dvPath = target.filePath.replace(/[^/]+$/, 'dv-1.puffin');
    const { bytes } = encodeManifest(
      [{ status: 1, snapshotId: null, sequenceNumber: null, fileSequenceNumber: null, dataFile: { ...target, content: 1, filePath: dvPath, fileFormat: 'PUFFIN', recordCount: 1n, fileSizeInBytes: 64n, referencedDataFile: target.filePath } }],
      { schema, spec: t.spec, content: 1 },
    );
    const dvManifest = data.manifestPath.replace(/\.avro$/, '-dv.avro');
    await lake.io.writeNew(dvManifest, bytes);
    const list = encodeManifestList([data, { ...data, manifestPath: dvManifest, manifestLength: BigInt(bytes.length), content: 1 }], { snapshotId: snap.snapshotId, sequenceNumber: snap.sequenceNumber });
    await lake.io.writeAtomic(snap.manifestList, list);
    const reopened = await openMetadataFile(localPath(t.metadataLocation));
    await assert.rejects(reopened.scan().toArray(), (e: Error) => {
      assert.match(e.message, /dv-1\.puffin is a deletion vector \(Iceberg v3, Puffin\); Mimir does not read deletion vectors/);
      assert.match(e.message, /nothing returned/);
      return true;
    });
  } finally {
    lake.close();
  }
});
