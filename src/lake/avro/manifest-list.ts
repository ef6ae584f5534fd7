// Iceberg v2 manifest lists: one Avro file per snapshot naming its manifests
// with counts, sequence numbers and per-partition-field summaries. Written
// with Java's current v2 `manifest_file` schema (added_files_count…, summary
// record r508, every field with its field-id); read by field id, so lists of
// Java ≤1.4 (added_data_files_count…), PyIceberg, Trino and v1 tables decode.
//
// Invariant: decodeManifestList(encodeManifestList(f, m)) equals f. Encoding
// is pure; the caller writes the bytes once under a fresh name, so a crashed
// commit leaves only an unreferenced file for GC.
import { stringifyJson, type Json } from '../spec/json.ts';
import type { FieldSummary, ManifestFile } from '../spec/types.ts';
import { readContainer, writeContainer, type WriteCodec } from './container.ts';
import { AvroSchemaIndex, asBigInt, asBytes, asNumber } from './fields.ts';

export interface ManifestListMeta {
  snapshotId: bigint;
  parentSnapshotId?: bigint;
  sequenceNumber: bigint;
}

const opt = (name: string, type: Json, id: number, doc: string): Json => ({ name, type: ['null', type], doc, default: null, 'field-id': id });
const req = (name: string, type: Json, id: number, doc: string): Json => ({ name, type, doc, 'field-id': id });

/** Java's v2 `manifest_file` writer schema. */
export const MANIFEST_FILE_SCHEMA: Json = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    req('manifest_path', 'string', 500, 'Location URI with FS scheme'),
    req('manifest_length', 'long', 501, 'Total file size in bytes'),
    req('partition_spec_id', 'int', 502, 'Spec ID used to write'),
    req('content', 'int', 517, 'Contents of the manifest: 0=data, 1=deletes'),
    req('sequence_number', 'long', 515, 'Sequence number when the manifest was added'),
    req('min_sequence_number', 'long', 516, 'Lowest sequence number in the manifest'),
    req('added_snapshot_id', 'long', 503, 'Snapshot ID that added the manifest'),
    req('added_files_count', 'int', 504, 'Added entry count'),
    req('existing_files_count', 'int', 505, 'Existing entry count'),
    req('deleted_files_count', 'int', 506, 'Deleted entry count'),
    req('added_rows_count', 'long', 512, 'Added rows count'),
    req('existing_rows_count', 'long', 513, 'Existing rows count'),
    req('deleted_rows_count', 'long', 514, 'Deleted rows count'),
    opt(
      'partitions',
      {
        type: 'array',
        items: {
          type: 'record',
          name: 'r508',
          fields: [
            req('contains_null', 'boolean', 509, 'True if any file has a null partition value'),
            opt('contains_nan', 'boolean', 518, 'True if any file has a nan partition value'),
            opt('lower_bound', 'bytes', 510, 'Partition lower bound for all files'),
            opt('upper_bound', 'bytes', 511, 'Partition upper bound for all files'),
          ],
        },
        'element-id': 508,
      },
      507,
      'Summary for each partition',
    ),
    opt('key_metadata', 'bytes', 519, 'Encryption key metadata blob'),
  ],
};

/** Encodes a v2 manifest list (deflate unless `codec` says otherwise). */
export function encodeManifestList(files: ManifestFile[], meta: ManifestListMeta, codec: WriteCodec = 'deflate'): Uint8Array {
  const records = files.map((f) => ({
    manifest_path: f.manifestPath,
    manifest_length: f.manifestLength,
    partition_spec_id: f.partitionSpecId,
    content: f.content,
    sequence_number: f.sequenceNumber,
    min_sequence_number: f.minSequenceNumber,
    added_snapshot_id: f.addedSnapshotId,
    added_files_count: f.addedFilesCount,
    existing_files_count: f.existingFilesCount,
    deleted_files_count: f.deletedFilesCount,
    added_rows_count: f.addedRowsCount,
    existing_rows_count: f.existingRowsCount,
    deleted_rows_count: f.deletedRowsCount,
    partitions:
      f.partitions?.map((s) => ({
        contains_null: s.containsNull,
        contains_nan: s.containsNan ?? null,
        lower_bound: s.lowerBound ?? null,
        upper_bound: s.upperBound ?? null,
      })) ?? null,
    key_metadata: f.keyMetadata ?? null,
  }));
  return writeContainer(
    MANIFEST_FILE_SCHEMA,
    records,
    {
      'snapshot-id': meta.snapshotId.toString(),
      'parent-snapshot-id': meta.parentSnapshotId === undefined ? 'null' : meta.parentSnapshotId.toString(),
      'sequence-number': meta.sequenceNumber.toString(),
      'format-version': '2',
    },
    codec,
    { checksum: true },
  );
}

/** Decodes a manifest list of any writer and format version (v1: content 0, sequence numbers 0). */
export function decodeManifestList(bytes: Uint8Array, file: string): ManifestFile[] {
  const { schemaJson, records } = readContainer(bytes, file);
  const index = new AvroSchemaIndex(schemaJson, file);
  const top = index.fields(schemaJson, 'manifest_file');
  for (const id of [500, 501, 502, 503]) {
    if (!top.has(id)) throw new Error(`${file}: not a manifest list: the Avro schema lacks field ${id}`);
  }
  const summaryFields = top.has(507) ? index.fields(itemsOf(index, top.field(507)!.type), 'partitions element') : undefined;

  return records.map((r, i): ManifestFile => {
    const what = `${file}: manifest ${i}`;
    const long = (id: number, dflt?: bigint): bigint => {
      const v = top.get(r, id);
      if ((v === null || v === undefined) && dflt !== undefined) return dflt;
      return asBigInt(top.need(r, id), `${what} field ${id}`);
    };
    const int = (id: number, dflt?: number): number => {
      const v = top.get(r, id);
      if ((v === null || v === undefined) && dflt !== undefined) return dflt;
      return asNumber(top.need(r, id), `${what} field ${id}`);
    };
    const content = int(517, 0);
    if (content !== 0 && content !== 1) throw new Error(`${what}: content must be 0 or 1, found ${content}`);
    const sequenceNumber = long(515, 0n);
    const mf: ManifestFile = {
      manifestPath: String(top.need(r, 500)),
      manifestLength: long(501),
      partitionSpecId: int(502),
      content,
      sequenceNumber,
      minSequenceNumber: long(516, sequenceNumber),
      addedSnapshotId: long(503),
      addedFilesCount: int(504, 0),
      existingFilesCount: int(505, 0),
      deletedFilesCount: int(506, 0),
      addedRowsCount: long(512, 0n),
      existingRowsCount: long(513, 0n),
      deletedRowsCount: long(514, 0n),
    };
    const parts = top.get(r, 507);
    if (Array.isArray(parts) && summaryFields) {
      mf.partitions = parts.map((p, j): FieldSummary => {
        const w = `${what} partition summary ${j}`;
        const s: FieldSummary = { containsNull: Boolean(summaryFields.need(p, 509)) };
        const nan = summaryFields.get(p, 518);
        if (nan !== null && nan !== undefined) s.containsNan = Boolean(nan);
        const lo = summaryFields.get(p, 510);
        if (lo !== null && lo !== undefined) s.lowerBound = asBytes(lo, `${w} lower_bound`);
        const hi = summaryFields.get(p, 511);
        if (hi !== null && hi !== undefined) s.upperBound = asBytes(hi, `${w} upper_bound`);
        return s;
      });
    }
    if ([504, 505, 506, 512, 513, 514].some((id) => top.get(r, id) === null || top.get(r, id) === undefined)) mf.countsUnknown = true;
    const km = top.get(r, 519);
    if (km !== null && km !== undefined) mf.keyMetadata = asBytes(km, `${what} key_metadata`);
    return mf;
  });
}

function itemsOf(index: AvroSchemaIndex, t: Json): Json {
  const arr = index.nonNull(t);
  if (typeof arr !== 'object' || arr === null || Array.isArray(arr) || arr['type'] !== 'array') {
    throw new Error(`${index.file}: expected field 507 (partitions) to be an array, found ${stringifyJson(arr)}`);
  }
  return arr['items'] ?? null;
}
