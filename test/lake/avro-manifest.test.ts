import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures, needsFixtures } from '../helpers.ts';
import { decodeManifest, encodeManifest, type ManifestEntryToWrite } from '../../src/lake/avro/manifest.ts';
import { decodeManifestList } from '../../src/lake/avro/manifest-list.ts';
import { readContainer } from '../../src/lake/avro/container.ts';
import type { DataFile, PartitionSpec, Schema } from '../../src/lake/spec/types.ts';

const FIXTURE_TABLES = [
  'icebird_spark_bunnies/bunnies',
  'icebird_java_bunnies/bunnies',
  'icebird_spark_rename_column/rename_column',
  'icebird_athena_example/example',
  'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults',
];

const metadataDir = (table: string): string => path.join(icebergFixtures!, table, 'metadata');

/** Every manifest of a fixture table, reached through its manifest lists. */
function manifestsOf(table: string) {
  const dir = metadataDir(table);
  const out = new Map<string, ReturnType<typeof decodeManifest> & { list: string }>();
  for (const name of readdirSync(dir).filter((n) => n.startsWith('snap-'))) {
    for (const mf of decodeManifestList(readFileSync(path.join(dir, name)), name)) {
      const local = path.join(dir, path.basename(mf.manifestPath));
      const decoded = decodeManifest(readFileSync(local), local, { addedSnapshotId: mf.addedSnapshotId, sequenceNumber: mf.sequenceNumber });
      assert.equal(decoded.content, mf.content, `${local}: content in the list and in the manifest agree`);
      out.set(path.basename(mf.manifestPath), { ...decoded, list: name });
    }
  }
  return out;
}

test('manifest: every manifest of the five fixture tables decodes by field id', { skip: needsFixtures }, () => {
  let total = 0;
  for (const table of FIXTURE_TABLES) {
    const dir = metadataDir(table);
    const names = readdirSync(dir).filter((n) => n.endsWith('.avro') && !n.startsWith('snap-'));
    assert.ok(names.length > 0, table);
    const reached = manifestsOf(table);
    for (const n of names) {
      assert.ok(reached.has(n), `${table}/${n} is listed by some manifest list`);
      const m = reached.get(n)!;
      assert.equal(m.specId, 0);
      for (const e of m.entries) {
        assert.equal(typeof e.snapshotId, 'bigint');
        assert.ok(e.sequenceNumber >= 1n, `${n}: sequence number resolved`);
        assert.ok(e.dataFile.recordCount > 0n);
        assert.equal(e.dataFile.fileFormat.toUpperCase(), 'PARQUET');
        total++;
      }
    }
  }
  assert.ok(total >= 12);
});

test('manifest: rename_column partition tuples are (bucket, days) by partition field id, null kept', { skip: needsFixtures }, () => {
  const ms = manifestsOf('icebird_spark_rename_column/rename_column');
  const m = ms.get('abf62b15-903b-40b6-9e6b-26bcdceac9b3-m0.avro')!;
  const byPath = m.entries.map((e) => [path.basename(path.dirname(path.dirname(e.dataFile.filePath))), e.dataFile.partition, e.dataFile.recordCount] as const);
  byPath.sort((a, b) => a[0].localeCompare(b[0]));
  assert.deepEqual(byPath, [
    ['id_bucket=0', [0, 18993], 2n],
    ['id_bucket=2', [2, 18994], 1n],
    ['id_bucket=3', [3, null], 1n],
  ]);
  for (const e of m.entries) {
    assert.equal(e.status, 1);
    assert.equal(e.snapshotId, 5276958600260276572n);
    assert.equal(e.sequenceNumber, 1n);
    assert.equal(e.fileSequenceNumber, 1n);
    assert.equal(e.dataFile.sortOrderId, 0);
    assert.deepEqual(e.dataFile.splitOffsets, [4n]);
  }
  const first = m.entries.find((e) => e.dataFile.partition[0] === 0)!.dataFile;
  assert.deepEqual([...first.lowerBounds!.get(4)!], [0xfe, 0x0c]); // -5.00
  assert.deepEqual([...first.upperBounds!.get(4)!], [0x03, 0xe7]); // 9.99
  assert.equal(first.valueCounts!.get(1), 2n);
  assert.equal(first.columnSizes!.get(2), 71n);
  assert.ok(first.lowerBounds instanceof Map && !(first.lowerBounds.get(4) instanceof Buffer), 'bounds are plain Uint8Arrays');
});

test('manifest: java_bunnies delete manifests carry equality_ids [1] and position-delete bounds', { skip: needsFixtures }, () => {
  const ms = manifestsOf('icebird_java_bunnies/bunnies');
  const eq = ms.get('a01399a1-e864-4562-b921-c8cb56e6e4a9-m1.avro')!;
  assert.equal(eq.content, 1);
  const f = eq.entries[0]!.dataFile;
  assert.equal(f.content, 2);
  assert.deepEqual(f.equalityIds, [1]);
  assert.equal(Buffer.from(f.lowerBounds!.get(1)!).toString(), 'New Zealand');
  assert.equal(f.referencedDataFile, undefined);
  assert.equal(eq.entries[0]!.sequenceNumber, 3n);
  const pos = ms.get('e1756967-c907-47e2-8b37-82123c5e5908-m0.avro')!;
  const p = pos.entries[0]!.dataFile;
  assert.equal(p.content, 1);
  assert.equal(p.recordCount, 6n);
  assert.equal(Buffer.from(p.lowerBounds!.get(2147483546)!).toString(), 's3a://hyperpara' + 'm');
  assert.equal(Buffer.from(p.upperBounds!.get(2147483546)!).toString(), 's3a://hyperparan');
  assert.equal(pos.entries[0]!.sequenceNumber, 2n);
  // the data manifest without any column metrics
  const initial = ms.get('583a45a0-7389-4d71-9305-ac3a8725c38b-m0.avro')!.entries[0]!.dataFile;
  assert.equal(initial.valueCounts, undefined);
  assert.equal(initial.recordCount, 21n);
});

test('manifest: spark_bunnies DELETED entry keeps its explicit sequence numbers; ADDED ones inherit', { skip: needsFixtures }, () => {
  const ms = manifestsOf('icebird_spark_bunnies/bunnies');
  const del = ms.get('91d5eea0-314d-4056-8818-59b825cbd38a-m0.avro')!.entries[0]!;
  assert.equal(del.status, 2);
  assert.equal(del.snapshotId, 2701171901096418979n);
  assert.equal(del.sequenceNumber, 1n);
  assert.equal(del.fileSequenceNumber, 1n);
  const added = ms.get('91d5eea0-314d-4056-8818-59b825cbd38a-m1.avro')!.entries[0]!;
  assert.equal(added.sequenceNumber, 3n);
  assert.equal(added.dataFile.recordCount, 20n);
});

test('manifest: PyIceberg manifest (codec null) decodes with relative paths', { skip: needsFixtures }, () => {
  const dir = metadataDir('duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults');
  const file = path.join(dir, '0bb8c58e-4fbc-483f-af6d-0e2f896179a2-m0.avro');
  assert.equal(readContainer(readFileSync(file), file).codec, 'null');
  const m = decodeManifest(readFileSync(file), file, { addedSnapshotId: 1n, sequenceNumber: 1n });
  assert.equal(m.entries[0]!.snapshotId, 8904642012249016277n);
  assert.match(m.entries[0]!.dataFile.filePath, /^data\/persistent\/add_columns_with_defaults\//);
  assert.equal(m.entries[0]!.dataFile.recordCount, 2n);
});

// ---- round trip -------------------------------------------------------------

const schema: Schema = {
  schemaId: 3,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'int' } },
    { id: 2, name: 'name', required: false, type: { type: 'string' } },
    { id: 3, name: 'day', required: false, type: { type: 'date' } },
    { id: 4, name: 'big', required: false, type: { type: 'long' } },
    { id: 5, name: 'price', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
    { id: 6, name: 'flag', required: false, type: { type: 'boolean' } },
    { id: 7, name: 'u', required: false, type: { type: 'uuid' } },
    { id: 8, name: 'ts', required: false, type: { type: 'timestamptz' } },
    { id: 9, name: 'raw', required: false, type: { type: 'binary' } },
    { id: 10, name: 'wide', required: false, type: { type: 'decimal', precision: 30, scale: 3 } },
  ],
};

const spec: PartitionSpec = {
  specId: 4,
  fields: [
    { sourceId: 1, fieldId: 1000, name: 'id_bucket', transform: { kind: 'bucket', n: 16 } },
    { sourceId: 3, fieldId: 1001, name: 'day', transform: { kind: 'identity' } },
    { sourceId: 2, fieldId: 1002, name: 'name', transform: { kind: 'identity' } },
    { sourceId: 4, fieldId: 1003, name: 'big', transform: { kind: 'identity' } },
    { sourceId: 5, fieldId: 1004, name: 'price', transform: { kind: 'identity' } },
    { sourceId: 6, fieldId: 1005, name: 'flag', transform: { kind: 'identity' } },
    { sourceId: 7, fieldId: 1006, name: 'u', transform: { kind: 'identity' } },
    { sourceId: 8, fieldId: 1007, name: 'ts_hour', transform: { kind: 'hour' } },
    { sourceId: 9, fieldId: 1008, name: 'raw', transform: { kind: 'identity' } },
    { sourceId: 10, fieldId: 1009, name: 'wide', transform: { kind: 'identity' } },
  ],
};

const BIG = 2n ** 62n + 12345n; // above 2^53: must survive exactly

function file(i: number, partition: DataFile['partition'], extra: Partial<DataFile> = {}): DataFile {
  return {
    content: 0,
    filePath: `file:/lake/t/data/f-${i}.parquet`,
    fileFormat: 'PARQUET',
    partition,
    recordCount: BigInt(100 + i),
    fileSizeInBytes: BIG + BigInt(i),
    columnSizes: new Map([[1, 10n], [2, BIG]]),
    valueCounts: new Map([[1, 100n]]),
    nullValueCounts: new Map([[2, 0n]]),
    nanValueCounts: new Map([[4, 0n]]),
    lowerBounds: new Map([[1, Uint8Array.of(1, 0, 0, 0)]]),
    upperBounds: new Map([[1, Uint8Array.of(9, 0, 0, 0)], [2, Uint8Array.from(Buffer.from('zz'))]]),
    keyMetadata: Uint8Array.of(0xca, 0xfe),
    splitOffsets: [4n, BIG],
    sortOrderId: 0,
    ...extra,
  };
}

const tuples: DataFile['partition'][] = [
  [3, 18993, 'alpha', BIG, '9.99', true, 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 480000, Uint8Array.of(0, 1), '12345678901234567890.123'],
  [15, -1, 'Mopsy–Naïve 🐇', -BIG, '-5.00', false, '00000000-0000-0000-0000-000000000001', -1, new Uint8Array(0), '-0.001'],
  [null, null, null, null, null, null, null, null, null, null],
];

const entries: ManifestEntryToWrite[] = [
  { status: 1, snapshotId: null, sequenceNumber: null, fileSequenceNumber: null, dataFile: file(0, tuples[0]!) },
  { status: 0, snapshotId: BIG + 1n, sequenceNumber: 5n, fileSequenceNumber: 6n, dataFile: file(1, tuples[1]!) },
  { status: 2, snapshotId: BIG + 2n, sequenceNumber: 2n, fileSequenceNumber: 2n, dataFile: file(2, tuples[2]!) },
];

test('manifest: encode then decode gives back every field, 64-bit values exact, inheritance resolved', () => {
  const { bytes, summary } = encodeManifest(entries, { schema, spec, content: 0 });
  const m = decodeManifest(bytes, 'rt.avro', { addedSnapshotId: BIG + 9n, sequenceNumber: 7n });
  assert.equal(m.specId, 4);
  assert.equal(m.content, 0);
  assert.equal(m.entries.length, 3);
  assert.deepEqual(
    m.entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber]),
    [
      [1, BIG + 9n, 7n, 7n],
      [0, BIG + 1n, 5n, 6n],
      [2, BIG + 2n, 2n, 2n],
    ],
  );
  m.entries.forEach((e, i) => assert.deepEqual(e.dataFile, entries[i]!.dataFile, `entry ${i}`));

  assert.equal(summary.addedFilesCount, 1);
  assert.equal(summary.existingFilesCount, 1);
  assert.equal(summary.deletedFilesCount, 1);
  assert.equal(summary.addedRowsCount, 100n);
  assert.equal(summary.existingRowsCount, 101n);
  assert.equal(summary.deletedRowsCount, 102n);
  assert.equal(summary.minDataSequenceNumber, 5n); // the DELETED entry's 2 does not count
  assert.equal(summary.partitionSpecId, 4);
  const p = summary.partitions!;
  assert.equal(p.length, spec.fields.length);
  assert.deepEqual(p[0], { containsNull: true, containsNan: false, lowerBound: Uint8Array.of(3, 0, 0, 0), upperBound: Uint8Array.of(15, 0, 0, 0) });
  assert.deepEqual([...p[1]!.lowerBound!], [0xff, 0xff, 0xff, 0xff]); // day -1
  assert.deepEqual(Buffer.from(p[2]!.lowerBound!).toString(), 'Mopsy–Naïve 🐇');
  assert.deepEqual(Buffer.from(p[2]!.upperBound!).toString(), 'alpha');
  assert.deepEqual([...p[4]!.lowerBound!], [0xfe, 0x0c]);
  assert.deepEqual([...p[4]!.upperBound!], [0x03, 0xe7]);
  assert.deepEqual([...p[5]!.lowerBound!], [0]);
  assert.deepEqual([...p[5]!.upperBound!], [1]);
});

test('manifest: Avro metadata names the schema, spec, format version and content', () => {
  const { bytes } = encodeManifest(entries.slice(0, 1), { schema, spec, content: 0 });
  const c = readContainer(bytes, 'meta.avro');
  assert.equal(c.codec, 'deflate');
  assert.equal(c.meta.get('format-version'), '2');
  assert.equal(c.meta.get('content'), 'data');
  assert.equal(c.meta.get('partition-spec-id'), '4');
  assert.equal(c.meta.get('schema-id'), '3');
  assert.match(c.meta.get('partition-spec')!, /^\[\{"name":"id_bucket","transform":"bucket\[16\]","source-id":1,"field-id":1000\}/);
  assert.match(c.meta.get('schema')!, /"schema-id":3/);
  const s = c.schemaJson as { name: string; fields: { name: string; 'field-id': number; type: unknown }[] };
  assert.equal(s.name, 'manifest_entry');
  assert.deepEqual(s.fields.map((f) => f['field-id']), [0, 1, 3, 4, 2]);
  const df = s.fields[4]!.type as { name: string; fields: { 'field-id': number }[] };
  assert.equal(df.name, 'r2');
  assert.deepEqual(df.fields.map((f) => f['field-id']), [134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143]);
});

test('manifest: delete manifests hold only delete files; status rules are enforced on write', () => {
  const eq = file(5, tuples[2]!, { content: 2, equalityIds: [1, 2] });
  const { bytes } = encodeManifest([{ status: 1, snapshotId: 1n, sequenceNumber: null, fileSequenceNumber: null, dataFile: eq }], { schema, spec, content: 1 });
  const m = decodeManifest(bytes, 'del.avro', { addedSnapshotId: 1n, sequenceNumber: 1n });
  assert.equal(m.content, 1);
  assert.deepEqual(m.entries[0]!.dataFile.equalityIds, [1, 2]);
  assert.throws(() => encodeManifest([{ status: 1, snapshotId: 1n, sequenceNumber: null, fileSequenceNumber: null, dataFile: eq }], { schema, spec, content: 0 }), /does not belong in a data manifest/);
  assert.throws(
    () => encodeManifest([{ status: 0, snapshotId: 1n, sequenceNumber: null, fileSequenceNumber: null, dataFile: file(1, tuples[2]!) }], { schema, spec, content: 0 }),
    /only ADDED entries inherit/,
  );
  assert.throws(
    () => encodeManifest([{ status: 1, snapshotId: 1n, sequenceNumber: null, fileSequenceNumber: null, dataFile: file(1, [1, 2]) }], { schema, spec, content: 0 }),
    /partition tuple has 2 values, the spec has 10 fields/,
  );
});

test('manifest: an unpartitioned manifest has an empty partition record and no summaries', () => {
  const unpart: PartitionSpec = { specId: 0, fields: [] };
  const { bytes, summary } = encodeManifest([{ status: 1, snapshotId: 3n, sequenceNumber: null, fileSequenceNumber: null, dataFile: file(0, []) }], { schema, spec: unpart, content: 0 });
  assert.deepEqual(summary.partitions, []);
  assert.equal(summary.minDataSequenceNumber, null);
  const m = decodeManifest(bytes, 'u.avro', { addedSnapshotId: 3n, sequenceNumber: 1n });
  assert.deepEqual(m.entries[0]!.dataFile.partition, []);
});

test('manifest: a truncated or garbage manifest is refused with an error naming the file', () => {
  const { bytes } = encodeManifest(entries, { schema, spec, content: 0 });
  const inherit = { addedSnapshotId: 1n, sequenceNumber: 1n };
  assert.throws(() => decodeManifest(bytes.subarray(0, bytes.length - 40), '/lake/m-cut.avro', inherit), /\/lake\/m-cut\.avro/);
  assert.throws(() => decodeManifest(bytes.subarray(0, 3), '/lake/m-tiny.avro', inherit), /\/lake\/m-tiny\.avro: .*bad magic/);
  const garbage = Uint8Array.from(bytes);
  for (let i = garbage.length - 200; i < garbage.length - 20; i++) garbage[i] = (i * 37) & 0xff;
  assert.throws(() => decodeManifest(garbage, '/lake/m-garbage.avro', inherit), /\/lake\/m-garbage\.avro/);
  // a manifest list is not a manifest
  if (icebergFixtures) {
    const list = path.join(metadataDir('icebird_athena_example/example'), 'snap-6838723292707092922-1-3d82674b-df1e-49b5-a7a9-05b61567065a.avro');
    assert.throws(() => decodeManifest(readFileSync(list), list, inherit), /not a manifest/);
  }
});

test('manifest: repeated named Avro types (two decimal(10,2) fields), fixed, time and float NaN round-trip', () => {
  const s2: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: 'a', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
      { id: 2, name: 'b', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
      { id: 3, name: 'f', required: false, type: { type: 'fixed', length: 3 } },
      { id: 4, name: 't', required: false, type: { type: 'time' } },
      { id: 5, name: 'x', required: false, type: { type: 'float' } },
    ],
  };
  const sp: PartitionSpec = {
    specId: 1,
    fields: s2.fields.map((f, i) => ({ sourceId: f.id, fieldId: 1000 + i, name: f.name, transform: { kind: 'identity' } })),
  };
  const parts: DataFile['partition'][] = [
    ['1.50', '-2.25', Uint8Array.of(1, 2, 3), 3_600_000_000n, Number.NaN],
    ['0.00', '99999999.99', Uint8Array.of(0, 0, 0), 0n, 1.5],
  ];
  const { bytes, summary } = encodeManifest(
    parts.map((p, i) => ({ status: 1, snapshotId: 1n, sequenceNumber: null, fileSequenceNumber: null, dataFile: file(i, p) })),
    { schema: s2, spec: sp, content: 0 },
  );
  const schemaText = JSON.stringify(readContainer(bytes, 'n.avro').schemaJson);
  assert.match(schemaText, /"type":\["null","decimal_10_2"\]/, 'the second decimal field references the named type');
  const m = decodeManifest(bytes, 'n.avro', { addedSnapshotId: 1n, sequenceNumber: 1n });
  assert.deepEqual(m.entries[0]!.dataFile.partition, parts[0]);
  assert.deepEqual(m.entries[1]!.dataFile.partition, parts[1]);
  assert.equal(summary.partitions![4]!.containsNan, true);
  assert.deepEqual([...summary.partitions![4]!.lowerBound!], [0, 0, 0xc0, 0x3f]); // 1.5f, NaN is never a bound
  assert.deepEqual([...summary.partitions![1]!.lowerBound!], [0xff, 0x1f]); // -2.25
});
