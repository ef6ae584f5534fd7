import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures, needsFixtures } from '../helpers.ts';
import { decodeManifestList, encodeManifestList } from '../../src/lake/avro/manifest-list.ts';
import { readContainer, writeContainer } from '../../src/lake/avro/container.ts';
import type { ManifestFile } from '../../src/lake/spec/types.ts';
import type { Json } from '../../src/lake/spec/json.ts';

const fx = (...p: string[]): string => path.join(icebergFixtures!, ...p);
const read = (f: string): ManifestFile[] => decodeManifestList(readFileSync(f), f);

test('manifest list: every list of the fixture tables decodes (old and new count names alike)', { skip: needsFixtures }, () => {
  const dirs = [
    'icebird_spark_bunnies/bunnies/metadata',
    'icebird_java_bunnies/bunnies/metadata',
    'icebird_spark_rename_column/rename_column/metadata',
    'icebird_athena_example/example/metadata',
    'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults/metadata',
  ];
  let lists = 0;
  for (const d of dirs) {
    for (const n of readdirSync(fx(d)).filter((x) => x.startsWith('snap-'))) {
      const snap = BigInt(n.split('-')[1]!);
      const files = read(fx(d, n));
      assert.ok(files.length > 0);
      assert.ok(files.some((f) => f.addedSnapshotId === snap), `${n}: one manifest was added by the list's own snapshot`);
      for (const f of files) assert.ok(f.addedFilesCount + f.existingFilesCount + f.deletedFilesCount >= 1, `${n}: counts read by field id`);
      lists++;
    }
  }
  assert.equal(lists, 10);
  // Spark (old names): sequence 3 list of spark_bunnies
  const spark = read(fx('icebird_spark_bunnies/bunnies/metadata/snap-2701171901096418979-1-91d5eea0-314d-4056-8818-59b825cbd38a.avro'));
  assert.equal(spark.length, 3);
  assert.deepEqual(
    { ...spark[0]!, partitions: spark[0]!.partitions },
    {
      manifestPath: 's3a://hyperparam-iceberg/spark/bunnies/metadata/91d5eea0-314d-4056-8818-59b825cbd38a-m1.avro',
      manifestLength: 7285n,
      partitionSpecId: 0,
      content: 0,
      sequenceNumber: 3n,
      minSequenceNumber: 3n,
      addedSnapshotId: 2701171901096418979n,
      addedFilesCount: 1,
      existingFilesCount: 0,
      deletedFilesCount: 0,
      addedRowsCount: 20n,
      existingRowsCount: 0n,
      deletedRowsCount: 0n,
      partitions: [],
    },
  );
  // Java 1.8.1 (new names, key_metadata column, delete manifests)
  const java = read(fx('icebird_java_bunnies/bunnies/metadata/snap-9158179788527662767-1-a01399a1-e864-4562-b921-c8cb56e6e4a9.avro'));
  assert.deepEqual(java.map((f) => [f.content, f.sequenceNumber, f.addedSnapshotId, f.addedRowsCount]), [
    [0, 3n, 9158179788527662767n, 1n],
    [0, 1n, 4951213507629824583n, 21n],
    [1, 3n, 9158179788527662767n, 1n],
    [1, 2n, 6458828015811002920n, 6n],
  ]);
  assert.equal(java[0]!.keyMetadata, undefined);
});

test('manifest list: rename_column partition summaries carry the README bounds', { skip: needsFixtures }, () => {
  const [m] = read(fx('icebird_spark_rename_column/rename_column/metadata/snap-5276958600260276572-1-abf62b15-903b-40b6-9e6b-26bcdceac9b3.avro'));
  assert.equal(m!.addedFilesCount, 3);
  assert.equal(m!.addedRowsCount, 4n);
  assert.deepEqual(m!.partitions, [
    { containsNull: false, containsNan: false, lowerBound: Uint8Array.of(0, 0, 0, 0), upperBound: Uint8Array.of(3, 0, 0, 0) },
    { containsNull: true, containsNan: false, lowerBound: Uint8Array.of(0x31, 0x4a, 0, 0), upperBound: Uint8Array.of(0x32, 0x4a, 0, 0) },
  ]);
});

test('manifest list: iceberg-rust vectors written by Java 1.4 and 1.5 decode identically', { skip: needsFixtures }, () => {
  const a = read(fx('metadata_vectors/iceberg-rust/manifests_lists/manifest-list-v2-1.avro'));
  const b = read(fx('metadata_vectors/iceberg-rust/manifests_lists/manifest-list-v2-2.avro'));
  const strip = (fs: ManifestFile[]) => fs.map(({ manifestPath: _p, manifestLength: _l, addedSnapshotId: _s, ...rest }) => rest);
  assert.deepEqual(strip(a), strip(b));
  assert.equal(a[0]!.addedSnapshotId, 6653143792592159268n);
  assert.equal(b[0]!.addedSnapshotId, 3083072880052097243n);
  assert.equal(a[0]!.addedFilesCount, 1);
  assert.equal(b[0]!.addedFilesCount, 1);
  assert.equal(a[0]!.addedRowsCount, 1n);
  assert.equal(a[0]!.manifestPath, 'iceberg-warehouse/people/metadata/794bd2ee-052c-449c-9a6f-3a88857c747f-m0.avro');
});

const BIG = 2n ** 63n - 2n;

const files: ManifestFile[] = [
  {
    manifestPath: 'file:/lake/t/metadata/a-m0.avro',
    manifestLength: 7000n,
    partitionSpecId: 2,
    content: 0,
    sequenceNumber: 9007199254740993n,
    minSequenceNumber: 9007199254740991n,
    addedSnapshotId: BIG,
    addedFilesCount: 3,
    existingFilesCount: 4,
    deletedFilesCount: 5,
    addedRowsCount: BIG - 1n,
    existingRowsCount: 0n,
    deletedRowsCount: 2n ** 53n + 1n,
    partitions: [
      { containsNull: true, containsNan: false, lowerBound: Uint8Array.of(1, 0, 0, 0), upperBound: Uint8Array.of(9, 0, 0, 0) },
      { containsNull: true, containsNan: false },
    ],
  },
  {
    manifestPath: 'file:/lake/t/metadata/b-m1.avro',
    manifestLength: 12n,
    partitionSpecId: 0,
    content: 1,
    sequenceNumber: 1n,
    minSequenceNumber: 1n,
    addedSnapshotId: 1n,
    addedFilesCount: 0,
    existingFilesCount: 0,
    deletedFilesCount: 0,
    addedRowsCount: 0n,
    existingRowsCount: 0n,
    deletedRowsCount: 0n,
    partitions: [],
    keyMetadata: Uint8Array.of(7, 7),
  },
];

test('manifest list: encode then decode is exact for 64-bit ids and counts; Avro metadata as Java writes it', () => {
  const bytes = encodeManifestList(files, { snapshotId: BIG, sequenceNumber: 9007199254740993n });
  assert.deepEqual(decodeManifestList(bytes, 'l.avro'), files);
  const c = readContainer(bytes, 'l.avro');
  assert.equal(c.codec, 'deflate');
  assert.equal(c.meta.get('snapshot-id'), BIG.toString());
  assert.equal(c.meta.get('parent-snapshot-id'), 'null');
  assert.equal(c.meta.get('sequence-number'), '9007199254740993');
  assert.equal(c.meta.get('format-version'), '2');
  const withParent = readContainer(encodeManifestList([], { snapshotId: 5n, parentSnapshotId: BIG, sequenceNumber: 2n }), 'p.avro');
  assert.equal(withParent.meta.get('parent-snapshot-id'), BIG.toString());
  assert.equal(withParent.records.length, 0);
  const s = c.schemaJson as { name: string; fields: { name: string; 'field-id': number; type: unknown }[] };
  assert.equal(s.name, 'manifest_file');
  assert.deepEqual(s.fields.map((f) => f.name).slice(7, 10), ['added_files_count', 'existing_files_count', 'deleted_files_count']);
  assert.deepEqual(s.fields.map((f) => f['field-id']), [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519]);
  assert.match(JSON.stringify(s), /"name":"r508"/);
  assert.match(JSON.stringify(s), /"element-id":508/);
});

test('manifest list: a v1 list without content and sequence numbers reads as data manifests at sequence 0', () => {
  const v1: Json = {
    type: 'record',
    name: 'manifest_file',
    fields: [
      { name: 'manifest_path', type: 'string', 'field-id': 500 },
      { name: 'manifest_length', type: 'long', 'field-id': 501 },
      { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
      { name: 'added_snapshot_id', type: ['null', 'long'], default: null, 'field-id': 503 },
      { name: 'added_data_files_count', type: ['null', 'int'], default: null, 'field-id': 504 },
      { name: 'existing_data_files_count', type: ['null', 'int'], default: null, 'field-id': 505 },
      { name: 'deleted_data_files_count', type: ['null', 'int'], default: null, 'field-id': 506 },
    ],
  };
  const bytes = writeContainer(
    v1,
    [{ manifest_path: 'm.avro', manifest_length: 10n, partition_spec_id: 0, added_snapshot_id: 77n, added_data_files_count: 2, existing_data_files_count: null, deleted_data_files_count: 0 }],
    { 'format-version': '1' },
  );
  const [m] = decodeManifestList(bytes, 'v1.avro');
  assert.equal(m!.content, 0);
  assert.equal(m!.sequenceNumber, 0n);
  assert.equal(m!.minSequenceNumber, 0n);
  assert.equal(m!.addedFilesCount, 2);
  assert.equal(m!.existingFilesCount, 0);
  assert.equal(m!.addedSnapshotId, 77n);
  assert.equal(m!.partitions, undefined);
});

test('manifest list: a corrupted list is refused with an error naming the file', () => {
  const bytes = encodeManifestList(files, { snapshotId: 1n, sequenceNumber: 1n });
  assert.throws(() => decodeManifestList(bytes.subarray(0, bytes.length - 30), '/lake/snap-1.avro'), /\/lake\/snap-1\.avro/);
  assert.throws(() => decodeManifestList(new Uint8Array(0), '/lake/empty.avro'), /\/lake\/empty\.avro: .*bad magic/);
});
