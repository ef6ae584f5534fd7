// Table metadata: every real and reference metadata file parses and round trips;
// invalid ones are refused with the file name and the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures, needsFixtures } from '../helpers.ts';
import { parseJson } from '../../src/lake/spec/json.ts';
import {
  ancestors,
  assignFreshIds,
  currentSchema,
  currentSnapshot,
  MetadataError,
  newTableMetadata,
  parseTableMetadata,
  serializeTableMetadata,
  snapshotAsOf,
  snapshotById,
  specById,
} from '../../src/lake/spec/metadata.ts';
import type { Schema, TableMetadata } from '../../src/lake/spec/types.ts';

const vectors = icebergFixtures ? path.join(icebergFixtures, 'metadata_vectors') : '';

const INVALID: Record<string, RegExp> = {
  'apache-iceberg/TableMetadataUnsupportedVersion.json': /cannot read unsupported version 42/i,
  'apache-iceberg/TableMetadataV2MissingPartitionSpecs.json': /partition-specs must exist in format v2/,
  'apache-iceberg/TableMetadataV2MissingLastPartitionId.json': /last-partition-id must exist in format v2/,
  'apache-iceberg/TableMetadataV2MissingSortOrder.json': /sort-orders must exist in format v2/,
  'apache-iceberg/TableMetadataV2MissingSchemas.json': /schemas must exist in format v2/,
  'apache-iceberg/TableMetadataV2CurrentSchemaNotFound.json': /Cannot find schema with current-schema-id=2 from schemas/,
  'apache-iceberg/TableMetadataV1MissingSchemaType.json': /schema: expected "type": "struct"/,
  'iceberg-rust/table_metadata/TableMetadataV1NoValidSchema.json': /No valid schema configuration found/,
};

function vectorFiles(): string[] {
  const out: string[] = [];
  for (const dir of ['apache-iceberg', 'iceberg-rust/table_metadata']) {
    for (const f of readdirSync(path.join(vectors, dir))) if (f.endsWith('.json')) out.push(`${dir}/${f}`);
  }
  return out;
}

function roundTrip(m: TableMetadata, file: string): TableMetadata {
  const again = parseTableMetadata(serializeTableMetadata(m), file);
  assert.deepStrictEqual(again, m, `${file}: re-serialized metadata parses to something else`);
  return again;
}

test('metadata: every valid reference vector parses and round trips through serialize/parse', { skip: needsFixtures }, () => {
  const valid = vectorFiles().filter((f) => !(f in INVALID));
  assert.ok(valid.length >= 9, `expected at least 9 valid vectors, found ${valid.length}`);
  for (const rel of valid) {
    const m = parseTableMetadata(readFileSync(path.join(vectors, rel), 'utf8'), rel);
    roundTrip(m, rel);
  }
});

test('metadata: every invalid reference vector is refused with the file name and the reason', { skip: needsFixtures }, () => {
  for (const [rel, reason] of Object.entries(INVALID)) {
    const text = readFileSync(path.join(vectors, rel), 'utf8');
    assert.throws(
      () => parseTableMetadata(text, rel),
      (e: unknown) => e instanceof MetadataError && e.message.startsWith(`${rel}: `) && reason.test(e.message),
      rel,
    );
  }
});

test('metadata: reference vectors read as Java reads them (v2 values, v1 fallbacks)', { skip: needsFixtures }, () => {
  const read = (rel: string): TableMetadata => parseTableMetadata(readFileSync(path.join(vectors, rel), 'utf8'), rel);

  const v2 = read('apache-iceberg/TableMetadataV2Valid.json');
  assert.equal(v2.formatVersion, 2);
  assert.equal(v2.lastSequenceNumber, 34n);
  assert.equal(v2.currentSnapshotId, 3055729675574597004n);
  assert.deepEqual(v2.refs.main, { snapshotId: 3055729675574597004n, type: 'branch' });
  assert.deepEqual(currentSchema(v2).identifierFieldIds, [1, 2]);
  assert.equal(v2.defaultSortOrderId, 3);
  assert.equal(v2.sortOrders[0]!.fields[1]!.transform.kind, 'bucket');
  assert.deepEqual(
    ancestors(v2, 3055729675574597004n).map((s) => s.snapshotId),
    [3055729675574597004n, 3051729675574597004n],
  );
  assert.equal(snapshotAsOf(v2, 1515100955770n)?.snapshotId, 3051729675574597004n);
  assert.equal(snapshotAsOf(v2, 1555100955769n)?.snapshotId, 3051729675574597004n);
  assert.equal(snapshotAsOf(v2, 1555100955770n)?.snapshotId, 3055729675574597004n);
  assert.equal(snapshotAsOf(v2, 1515100955769n), undefined);

  const v1 = read('apache-iceberg/TableMetadataV1Valid.json');
  assert.equal(v1.formatVersion, 1);
  assert.equal(v1.currentSnapshotId, undefined);
  assert.equal('currentSnapshotId' in v1, false);
  assert.deepEqual(v1.refs, {});
  assert.equal(v1.lastPartitionId, 1000);
  assert.equal(v1.lastSequenceNumber, 0n);
  assert.deepEqual(v1.sortOrders, [{ orderId: 0, fields: [] }]);
  assert.equal(specById(v1, 0)?.fields[0]?.name, 'x');

  const specs = read('iceberg-rust/table_metadata/TableMetadataV1PartitionSpecsWithoutDefaultId.json');
  assert.equal(specs.defaultSpecId, 2, 'default spec = the largest spec id');
  const pick = read('iceberg-rust/table_metadata/TableMetadataV1SchemasWithoutCurrentId.json');
  assert.equal(pick.currentSchemaId, 0);

  const stats = read('apache-iceberg/TableMetadataStatisticsFiles.json');
  assert.equal(stats.statistics.length, 1);
  assert.equal(stats.statistics[0]!.fileSizeInBytes, 413n);
  assert.equal(stats.statistics[0]!.extra['file-footer-size-in-bytes'], 42);
  const pstats = read('apache-iceberg/TableMetadataPartitionStatisticsFiles.json');
  assert.equal(pstats.partitionStatistics[0]!.statisticsPath, 's3://a/b/partition-stats.parquet');

  const v3 = read('apache-iceberg/TableMetadataV3ValidMinimal.json');
  assert.equal(v3.formatVersion, 3);
  assert.equal(currentSchema(v3).fields[0]!.initialDefault, 1n);
  assert.match(serializeTableMetadata(v3), /"current-snapshot-id": null/);
});

test('metadata: every metadata file of the five fixture tables parses and round trips', { skip: needsFixtures }, () => {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      // metadata_vectors are single files, not tables; duckdb_iceberg_persistent (added later)
      // has tests of its own (its tables' rows are checked through the CLI)
      if (e.isDirectory() && e.name !== 'metadata_vectors' && e.name !== 'duckdb_iceberg_persistent') walk(p);
      else if (e.name.endsWith('.metadata.json')) files.push(p);
    }
  };
  walk(icebergFixtures!);
  assert.equal(files.length, 19);
  const byName = new Map<string, TableMetadata>();
  for (const f of files) {
    const rel = path.relative(icebergFixtures!, f);
    const m = roundTrip(parseTableMetadata(readFileSync(f, 'utf8'), rel), rel);
    byName.set(rel, m);
    const cur = currentSnapshot(m);
    if (m.currentSnapshotId !== undefined) assert.ok(cur, `${rel}: current snapshot present`);
    for (const s of m.snapshots) {
      if (s.parentSnapshotId !== undefined) assert.ok(snapshotById(m, s.parentSnapshotId), `${rel}: parent of ${s.snapshotId}`);
    }
  }
  const spark = byName.get('icebird_spark_bunnies/bunnies/metadata/v5.metadata.json')!;
  assert.equal(spark.currentSchemaId, 1);
  assert.equal(currentSchema(spark).fields.length, 9);
  assert.equal(currentSchema(spark).fields[0]!.name, 'Breed Name');
  assert.equal(ancestors(spark, spark.currentSnapshotId!).length, 3);

  const java1 = byName.get('icebird_java_bunnies/bunnies/metadata/v1.metadata.json')!;
  assert.equal(java1.currentSnapshotId, undefined);
  assert.equal(java1.snapshots.length, 0);

  const rename = byName.get('icebird_spark_rename_column/rename_column/metadata/v3.metadata.json')!;
  assert.equal(rename.lastPartitionId, 1001);
  assert.equal(currentSchema(rename).fields[2]!.name, 'event_date');
  assert.deepEqual(currentSchema(rename).fields[3]!.type, { type: 'decimal', precision: 10, scale: 2 });

  const pyDir = 'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults/metadata/';
  const py0 = [...byName].find(([k]) => k.startsWith(`${pyDir}00000-`))![1];
  assert.equal(py0.currentSnapshotId, undefined, 'PyIceberg omits current-snapshot-id when there is none');
  assert.equal(py0.lastPartitionId, 999);
  const py3 = [...byName].find(([k]) => k.startsWith(`${pyDir}00003-`))![1];
  assert.equal(py3.currentSnapshotId, 1915606074736806848n);
  assert.equal(currentSchema(py3).fields[3]!.initialDefault, -9223372036854775808n);
});

test('metadata: random 64-bit ids (beyond 2^53, up to 2^63-1) survive serialize/parse exactly', () => {
  let seed = 0x9e3779b97f4a7c15n;
  const next = (): bigint => {
    // xorshift64*
    seed ^= seed >> 12n;
    seed ^= (seed << 25n) & 0xffffffffffffffffn;
    seed ^= seed >> 27n;
    return (seed * 0x2545f4914f6cdd1dn) & 0x7fffffffffffffffn;
  };
  const fixed = [1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 2n, 2n ** 63n - 1n, 7505300640432048841n];
  const base = newTableMetadata({ location: 'file:/tmp/t', schema: { schemaId: 0, fields: [{ id: 1, name: 'a', required: false, type: { type: 'long' } }] }, tableUuid: '00000000-0000-0000-0000-000000000001', nowMs: 1n });
  for (let round = 0; round < 50; round++) {
    const ids = round === 0 ? fixed : Array.from({ length: 7 }, next);
    const m: TableMetadata = structuredClone(base);
    let parent: bigint | undefined;
    ids.forEach((id, i) => {
      m.snapshots.push({
        snapshotId: id,
        ...(parent !== undefined ? { parentSnapshotId: parent } : {}),
        sequenceNumber: BigInt(i + 1),
        timestampMs: 1700000000000n + BigInt(i),
        manifestList: `file:/tmp/t/metadata/snap-${id}.avro`,
        summary: { operation: 'append', 'added-records': String(id) },
        schemaId: 0,
      });
      m.snapshotLog.push({ timestampMs: 1700000000000n + BigInt(i), snapshotId: id });
      parent = id;
    });
    m.currentSnapshotId = parent!;
    m.refs = { main: { snapshotId: parent!, type: 'branch', maxRefAgeMs: ids[0]!, maxSnapshotAgeMs: ids[1]! } };
    m.lastSequenceNumber = next();
    const text = serializeTableMetadata(m);
    for (const id of ids) assert.ok(text.includes(`"snapshot-id": ${id}`), `id ${id} written as exact digits`);
    assert.deepStrictEqual(parseTableMetadata(text, 'random.json'), m);
  }
});

test('metadata: a new v2 table serializes in Java key order with current-snapshot-id -1', () => {
  const schema: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: 'id', required: true, type: { type: 'long' } },
      { id: 2, name: 'tags', required: false, type: { type: 'list', elementId: 3, elementRequired: false, element: { type: 'string' } } },
    ],
  };
  const m = newTableMetadata({ location: 'file:/lake/t/', schema, properties: { owner: 'me' }, tableUuid: 'a1b2c3d4-0000-4000-8000-000000000000', nowMs: 1700000000000n });
  assert.equal(m.lastColumnId, 3);
  assert.equal(m.lastPartitionId, 999);
  assert.equal(m.location, 'file:/lake/t');
  const text = serializeTableMetadata(m);
  const keys = Object.keys(parseJson(text) as object);
  assert.deepEqual(keys, [
    'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'last-column-id',
    'current-schema-id', 'schemas', 'default-spec-id', 'partition-specs', 'last-partition-id',
    'default-sort-order-id', 'sort-orders', 'properties', 'current-snapshot-id', 'refs', 'snapshots',
    'statistics', 'partition-statistics', 'snapshot-log', 'metadata-log',
  ]);
  assert.match(text, /"current-snapshot-id": -1,/);
  assert.match(text, /^\{\n {2}"format-version": 2,/);
  assert.deepStrictEqual(parseTableMetadata(text, 'new.json'), m);

  const partitioned = newTableMetadata({ location: 'file:/x', schema, spec: { specId: 0, fields: [{ sourceId: 1, fieldId: 1000, name: 'id_bucket', transform: { kind: 'bucket', n: 8 } }] } });
  assert.equal(partitioned.lastPartitionId, 1000);
});

test('metadata: assignFreshIds renumbers 1..n, struct fields before their nested types', () => {
  const s: Schema = {
    schemaId: 0,
    identifierFieldIds: [50],
    fields: [
      { id: 50, name: 'a', required: true, type: { type: 'int' } },
      {
        id: 60, name: 'm', required: false,
        type: { type: 'map', keyId: 61, key: { type: 'string' }, valueId: 62, valueRequired: false, value: { type: 'struct', fields: [{ id: 70, name: 'x', required: false, type: { type: 'long' } }] } },
      },
      { id: 80, name: 'l', required: false, type: { type: 'list', elementId: 81, elementRequired: true, element: { type: 'double' } } },
    ],
  };
  const f = assignFreshIds(s);
  assert.deepEqual(f.fields.map((x) => x.id), [1, 2, 3]);
  assert.deepEqual(f.identifierFieldIds, [1]);
  const m = f.fields[1]!.type;
  assert.ok(m.type === 'map');
  assert.deepEqual([m.keyId, m.valueId], [4, 5]);
  assert.ok(m.value.type === 'struct');
  assert.equal(m.value.fields[0]!.id, 6);
  const l = f.fields[2]!.type;
  assert.ok(l.type === 'list');
  assert.equal(l.elementId, 7);
});

test('metadata: garbage and foreign JSON are refused with the file name', () => {
  assert.throws(() => parseTableMetadata('{"format-version": 2', 'bad.json'), /^MetadataError: bad\.json: not valid JSON/);
  assert.throws(() => parseTableMetadata('[]', 'list.json'), /list\.json: expected a JSON object/);
  assert.throws(() => parseTableMetadata('{}', 'empty.json'), /empty\.json: missing "format-version"/);
});
