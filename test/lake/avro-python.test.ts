// Our manifests and manifest lists read by an independent Avro implementation:
// the Debian `python3-avro` module in a child process.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { encodeManifest } from '../../src/lake/avro/manifest.ts';
import { encodeManifestList } from '../../src/lake/avro/manifest-list.ts';
import type { DataFile, PartitionSpec, Schema } from '../../src/lake/spec/types.ts';

const PY = '/usr/bin/python3';
const probe = spawnSync(PY, ['-c', 'import avro.datafile, avro.io'], { encoding: 'utf8' });
const noPythonAvro: string | false =
  probe.status === 0 ? false : `skipped: ${PY} -c 'import avro' failed (install the Debian package python3-avro): ${(probe.stderr || String(probe.error)).trim()}`;

// Dumps header metadata and records as JSON: ints stay exact (Python ints), bytes as hex,
// dates/decimals/uuids as strings.
const DUMP = `
import sys, json, warnings, datetime, decimal, uuid
warnings.simplefilter('ignore')
import avro.datafile, avro.io
def enc(o):
    if isinstance(o, (bytes, bytearray)): return {'hex': o.hex()}
    if isinstance(o, (datetime.date, datetime.datetime, datetime.time)): return o.isoformat()
    if isinstance(o, (decimal.Decimal, uuid.UUID)): return str(o)
    raise TypeError(repr(o))
out = {}
for f in sys.argv[1:]:
    with open(f, 'rb') as fh:
        r = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
        meta = {k: v.decode('utf-8') for k, v in r.meta.items()}
        out[f] = {'meta': meta, 'records': list(r)}
print(json.dumps(out, default=enc))
`;

const sc = scratch('mimir-avro-py-');
after(() => sc.cleanup());

const schema: Schema = {
  schemaId: 1,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'day', required: false, type: { type: 'date' } },
    { id: 3, name: 'price', required: false, type: { type: 'decimal', precision: 10, scale: 2 } },
    { id: 4, name: 'Breed Name', required: false, type: { type: 'string' } },
    { id: 5, name: 'tags', required: false, type: { type: 'list', elementId: 6, elementRequired: true, element: { type: 'string' } } },
  ],
};
const spec: PartitionSpec = {
  specId: 1,
  fields: [
    { sourceId: 1, fieldId: 1000, name: 'id_bucket', transform: { kind: 'bucket', n: 8 } },
    { sourceId: 2, fieldId: 1001, name: 'day', transform: { kind: 'identity' } },
    { sourceId: 3, fieldId: 1002, name: 'price', transform: { kind: 'identity' } },
    { sourceId: 4, fieldId: 1003, name: 'Breed Name', transform: { kind: 'identity' } },
    { sourceId: 1, fieldId: 1004, name: 'id', transform: { kind: 'identity' } },
  ],
};
const SNAP = 7505300640432048841n;
const BIG = 2n ** 62n + 7n;
const dataFile = (i: number, partition: DataFile['partition']): DataFile => ({
  content: 0,
  filePath: `s3://bucket/t/data/f${i}.parquet`,
  fileFormat: 'PARQUET',
  partition,
  recordCount: 10n + BigInt(i),
  fileSizeInBytes: BIG,
  columnSizes: new Map([[1, 5n]]),
  valueCounts: new Map([[1, 10n]]),
  nullValueCounts: new Map([[2, 1n]]),
  nanValueCounts: new Map(),
  lowerBounds: new Map([[1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]]),
  upperBounds: new Map([[1, Uint8Array.of(2, 0, 0, 0, 0, 0, 0, 0)]]),
  splitOffsets: [4n],
  sortOrderId: 0,
});

/** Every record field has a field-id; arrays have element-id or are int-keyed maps; Avro maps have key-id and value-id. */
function checkIds(t: Json, where: string, problems: string[]): void {
  if (Array.isArray(t)) return t.forEach((b, i) => checkIds(b, `${where}|${i}`, problems));
  if (t === null || typeof t !== 'object') return;
  const o = t as Record<string, Json>;
  if (o['type'] === 'record') {
    for (const f of o['fields'] as Record<string, Json>[]) {
      if (typeof f['field-id'] !== 'number') problems.push(`${where}.${String(f['name'])}: no field-id`);
      checkIds(f['type']!, `${where}.${String(f['name'])}`, problems);
    }
  } else if (o['type'] === 'array') {
    const items = o['items'] as Record<string, Json>;
    if (o['logicalType'] === 'map') {
      const kv = items['fields'] as Record<string, Json>[];
      if (kv.length !== 2 || kv.some((f) => typeof f['field-id'] !== 'number')) problems.push(`${where}: map entry without key/value field-ids`);
    } else if (typeof o['element-id'] !== 'number') problems.push(`${where}: array without element-id`);
    checkIds(items, `${where}[]`, problems);
  } else if (o['type'] === 'map') {
    if (typeof o['key-id'] !== 'number' || typeof o['value-id'] !== 'number') problems.push(`${where}: map without key-id/value-id`);
    checkIds(o['values']!, `${where}{}`, problems);
  }
}

test('python avro reads our manifest and manifest list: values exact, every field with its field-id', { skip: noPythonAvro }, () => {
  const { bytes: manifest, summary } = encodeManifest(
    [
      { status: 1, snapshotId: SNAP, sequenceNumber: null, fileSequenceNumber: null, dataFile: dataFile(0, [5, 18993, '9.99', 'Flopsy 🐇', BIG]) },
      { status: 0, snapshotId: BIG, sequenceNumber: 3n, fileSequenceNumber: 4n, dataFile: dataFile(1, [null, null, '-5.00', null, -1n]) },
    ],
    { schema, spec, content: 0 },
  );
  const mPath = path.join(sc.dir, 'c0ffee-m0.avro');
  writeFileSync(mPath, manifest);
  const list = encodeManifestList(
    [
      {
        ...summary,
        manifestPath: `file:${mPath}`,
        manifestLength: BigInt(manifest.length),
        sequenceNumber: 5n,
        minSequenceNumber: summary.minDataSequenceNumber ?? 5n,
        addedSnapshotId: SNAP,
      },
    ],
    { snapshotId: SNAP, parentSnapshotId: BIG, sequenceNumber: 5n },
  );
  const lPath = path.join(sc.dir, `snap-${SNAP}-1-c0ffee.avro`);
  writeFileSync(lPath, list);

  const run = spawnSync(PY, ['-c', DUMP, mPath, lPath], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const out = parseJson(run.stdout) as Record<string, { meta: Record<string, string>; records: Record<string, Json>[] }>;

  // the manifest
  const m = out[mPath]!;
  assert.equal(m.meta['avro.codec'], 'deflate');
  assert.equal(m.meta['format-version'], '2');
  assert.equal(m.meta['content'], 'data');
  assert.equal(m.meta['partition-spec-id'], '1');
  assert.equal(m.records.length, 2);
  const [e0, e1] = m.records as Record<string, Record<string, Json>>[];
  assert.equal(e0!['status'], 1);
  assert.equal(e0!['snapshot_id'], SNAP);
  assert.equal(e0!['sequence_number'], null);
  assert.equal(e1!['snapshot_id'], BIG);
  assert.equal(e1!['sequence_number'], 3);
  assert.equal(e1!['file_sequence_number'], 4);
  const df0 = e0!['data_file'] as Record<string, Json>;
  assert.equal(df0['file_path'], 's3://bucket/t/data/f0.parquet');
  assert.equal(df0['file_size_in_bytes'], BIG);
  assert.equal(df0['record_count'], 10);
  assert.deepEqual(df0['column_sizes'], [{ key: 1, value: 5 }]);
  assert.deepEqual(df0['lower_bounds'], [{ key: 1, value: { hex: '0100000000000000' } }]);
  // partition values: bucket int, date (python shows the date), decimal, sanitized name, long
  assert.deepEqual(df0['partition'], { id_bucket: 5, day: '2022-01-01', price: '9.99', Breed_x20Name: 'Flopsy 🐇', id: BIG });
  assert.deepEqual((e1!['data_file'] as Record<string, Json>)['partition'], { id_bucket: null, day: null, price: '-5.00', Breed_x20Name: null, id: -1 });
  const problems: string[] = [];
  checkIds(parseJson(m.meta['avro.schema']!), 'manifest_entry', problems);
  assert.deepEqual(problems, []);
  assert.match(m.meta['avro.schema']!, /"element-id":133/);
  assert.match(m.meta['avro.schema']!, /"name":"k117_v118"/);
  // the table schema in the metadata keeps its nested ids
  assert.match(m.meta['schema']!, /"element-id":6/);

  // the manifest list
  const l = out[lPath]!;
  assert.equal(l.meta['snapshot-id'], SNAP.toString());
  assert.equal(l.meta['parent-snapshot-id'], BIG.toString());
  assert.equal(l.meta['sequence-number'], '5');
  assert.equal(l.meta['format-version'], '2');
  const r = l.records[0]!;
  assert.equal(r['manifest_path'], `file:${mPath}`);
  assert.equal(r['manifest_length'], manifest.length);
  assert.equal(r['added_snapshot_id'], SNAP);
  assert.equal(r['added_files_count'], 1);
  assert.equal(r['existing_files_count'], 1);
  assert.equal(r['added_rows_count'], 10);
  assert.equal(r['existing_rows_count'], 11);
  assert.equal(r['min_sequence_number'], 3);
  const parts = r['partitions'] as Record<string, Json>[];
  assert.equal(parts.length, 5);
  assert.deepEqual(parts[0], { contains_null: true, contains_nan: false, lower_bound: { hex: '05000000' }, upper_bound: { hex: '05000000' } });
  assert.deepEqual(parts[2], { contains_null: false, contains_nan: false, lower_bound: { hex: 'fe0c' }, upper_bound: { hex: '03e7' } });
  const listProblems: string[] = [];
  checkIds(parseJson(l.meta['avro.schema']!), 'manifest_file', listProblems);
  assert.deepEqual(listProblems, []);
});
