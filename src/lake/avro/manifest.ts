// Iceberg v2 manifests: the Avro files listing data or delete files with
// their partition tuple and column metrics. Writing uses Java's v2
// `manifest_entry` schema (record names r2, r102, k117_v118, …; every field
// carries its field-id) so other engines read our files as their own; reading
// goes by field id through the schema inside the file, never by name, so
// manifests of Spark, Java, Trino and PyIceberg of any version decode.
//
// Invariant: decodeManifest(encodeManifest(e).bytes) gives back `e` with the
// nulls (inheritance) resolved. Encoding is pure: the caller writes the bytes
// (FileIO.writeNew), so a crash leaves at most an unreferenced file for GC.
import type { Json } from '../spec/json.ts';
import { parseJson, stringifyJson } from '../spec/json.ts';
import type {
  DataFile,
  EntryStatus,
  FieldSummary,
  FileContent,
  ManifestEntry,
  ManifestFile,
  PartitionSpec,
  PrimitiveType,
  Schema,
  Value,
} from '../spec/types.ts';
import { schemaToJson } from '../spec/schema.ts';
import { partitionFieldsToJson, partitionType } from '../spec/partition.ts';
import { compareValues, decimalToUnscaled, toBinary, uuidToBytes } from '../spec/values.ts';
import { avroCompatibleName, readContainer, writeContainer, type WriteCodec } from './container.ts';
import { AvroSchemaIndex, asBigInt, asBytes, asNumber, avroToValue, type FieldMap } from './fields.ts';

export interface ManifestEntryToWrite {
  status: EntryStatus;
  /** Null: inherit the manifest's added snapshot id (not allowed for EXISTING). */
  snapshotId: bigint | null;
  /** Data sequence number; null (ADDED only): inherit the commit's sequence number. */
  sequenceNumber: bigint | null;
  /** File sequence number; null (ADDED only): inherit. */
  fileSequenceNumber: bigint | null;
  dataFile: DataFile;
}

export type ManifestSummary = Omit<
  ManifestFile,
  'manifestPath' | 'manifestLength' | 'sequenceNumber' | 'minSequenceNumber' | 'addedSnapshotId'
> & {
  /** Least explicit data sequence number of a live entry; null when every live entry inherits. */
  minDataSequenceNumber: bigint | null;
};

export interface EncodeManifestOptions {
  schema: Schema;
  spec: PartitionSpec;
  content: 0 | 1;
  /** Avro codec, `deflate` unless told otherwise. */
  codec?: WriteCodec;
}

const STATUS_ADDED = 1;
const STATUS_EXISTING = 0;
const STATUS_DELETED = 2;

// ---- the v2 writer schema -------------------------------------------------

const optional = (name: string, type: Json, id: number, doc: string): Json => ({
  name,
  type: ['null', type],
  doc,
  default: null,
  'field-id': id,
});

const intMap = (name: string, id: number, keyId: number, valueId: number, value: 'long' | 'bytes', doc: string): Json =>
  optional(
    name,
    {
      type: 'array',
      items: {
        type: 'record',
        name: `k${keyId}_v${valueId}`,
        fields: [
          { name: 'key', type: 'int', 'field-id': keyId },
          { name: 'value', type: value, 'field-id': valueId },
        ],
      },
      logicalType: 'map',
    },
    id,
    doc,
  );

/** Bytes needed for a decimal of `precision` digits in two's complement. */
export function decimalRequiredBytes(precision: number): number {
  const max = 10n ** BigInt(precision);
  let n = 1;
  while (1n << BigInt(8 * n - 1) < max) n++;
  return n;
}

/** The Avro type Java writes for a primitive Iceberg type; named types are defined once, then referenced. */
function avroPrimitive(t: PrimitiveType, defined: Set<string>): Json {
  const named = (name: string, def: Json): Json => {
    if (defined.has(name)) return name;
    defined.add(name);
    return def;
  };
  switch (t.type) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return t.type;
    case 'binary':
      return 'bytes';
    case 'date':
      return { type: 'int', logicalType: 'date' };
    case 'time':
      return { type: 'long', logicalType: 'time-micros' };
    case 'timestamp':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false };
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true };
    case 'timestamp_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false };
    case 'timestamptz_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true };
    case 'uuid':
      return named('uuid_fixed', { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' });
    case 'fixed':
      return named(`fixed_${t.length}`, { type: 'fixed', name: `fixed_${t.length}`, size: t.length });
    case 'decimal': {
      const name = `decimal_${t.precision}_${t.scale}`;
      return named(name, {
        type: 'fixed',
        name,
        size: decimalRequiredBytes(t.precision),
        logicalType: 'decimal',
        precision: t.precision,
        scale: t.scale,
      });
    }
    case 'unknown':
      return 'null';
  }
}

interface PartitionColumn {
  fieldId: number;
  key: string;
  type: PrimitiveType;
}

function partitionColumns(spec: PartitionSpec, schema: Schema): PartitionColumn[] {
  return partitionType(spec, schema).fields.map((f) => ({
    fieldId: f.id,
    key: avroCompatibleName(f.name),
    type: f.type as PrimitiveType,
  }));
}

/** Java's v2 `manifest_entry` schema with `partition` as the spec's partition record. */
export function manifestEntrySchema(columns: PartitionColumn[]): Json {
  const defined = new Set<string>();
  const partition: Json = {
    type: 'record',
    name: 'r102',
    fields: columns.map((c) => {
      const t = avroPrimitive(c.type, defined);
      return t === 'null'
        ? { name: c.key, type: 'null', default: null, 'field-id': c.fieldId }
        : { name: c.key, type: ['null', t], default: null, 'field-id': c.fieldId };
    }),
  };
  const dataFile: Json = {
    type: 'record',
    name: 'r2',
    fields: [
      { name: 'content', type: 'int', doc: 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes', 'field-id': 134 },
      { name: 'file_path', type: 'string', doc: 'Location URI with FS scheme', 'field-id': 100 },
      { name: 'file_format', type: 'string', doc: 'File format name: avro, orc, or parquet', 'field-id': 101 },
      { name: 'partition', type: partition, doc: 'Partition data tuple, schema based on the partition spec', 'field-id': 102 },
      { name: 'record_count', type: 'long', doc: 'Number of records in the file', 'field-id': 103 },
      { name: 'file_size_in_bytes', type: 'long', doc: 'Total file size in bytes', 'field-id': 104 },
      intMap('column_sizes', 108, 117, 118, 'long', 'Map of column id to total size on disk'),
      intMap('value_counts', 109, 119, 120, 'long', 'Map of column id to total count, including null and NaN'),
      intMap('null_value_counts', 110, 121, 122, 'long', 'Map of column id to null value count'),
      intMap('nan_value_counts', 137, 138, 139, 'long', 'Map of column id to number of NaN values in the column'),
      intMap('lower_bounds', 125, 126, 127, 'bytes', 'Map of column id to lower bound'),
      intMap('upper_bounds', 128, 129, 130, 'bytes', 'Map of column id to upper bound'),
      optional('key_metadata', 'bytes', 131, 'Encryption key metadata blob'),
      optional('split_offsets', { type: 'array', items: 'long', 'element-id': 133 }, 132, 'Splittable offsets'),
      optional('equality_ids', { type: 'array', items: 'int', 'element-id': 136 }, 135, 'Equality comparison field IDs'),
      optional('sort_order_id', 'int', 140, 'Sort order ID'),
      optional(
        'referenced_data_file',
        'string',
        143,
        'Fully qualified location (URI with FS scheme) of a data file that all deletes reference',
      ),
    ],
  };
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      { name: 'status', type: 'int', 'field-id': 0 },
      { name: 'snapshot_id', type: ['null', 'long'], default: null, 'field-id': 1 },
      { name: 'sequence_number', type: ['null', 'long'], default: null, 'field-id': 3 },
      { name: 'file_sequence_number', type: ['null', 'long'], default: null, 'field-id': 4 },
      { name: 'data_file', type: dataFile, 'field-id': 2 },
    ],
  };
}

// ---- encoding -------------------------------------------------------------

/** A partition value in the Avro form of its result type (see `avroPrimitive`). */
function partitionToAvro(t: PrimitiveType, v: Value, what: string): unknown {
  if (v === null) return null;
  const bad = (): never => {
    throw new TypeError(`${what}: expected a ${t.type} partition value, found ${typeof v === 'bigint' ? `${v}n` : JSON.stringify(v)}`);
  };
  switch (t.type) {
    case 'boolean':
      return typeof v === 'boolean' ? v : bad();
    case 'int':
    case 'date':
      return typeof v === 'number' && Number.isInteger(v) ? v : bad();
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : bad();
    case 'float':
    case 'double':
      return typeof v === 'number' ? v : bad();
    case 'string':
      return typeof v === 'string' ? v : bad();
    case 'uuid':
      return typeof v === 'string' ? uuidToBytes(v) : bad();
    case 'binary':
      return v instanceof Uint8Array ? v : bad();
    case 'fixed':
      return v instanceof Uint8Array && v.length === t.length ? v : bad();
    case 'decimal': {
      if (typeof v !== 'string') return bad();
      const size = decimalRequiredBytes(t.precision);
      let x = BigInt.asUintN(8 * size, decimalToUnscaled(v, t.scale));
      const out = new Uint8Array(size);
      for (let i = size - 1; i >= 0; i--) {
        out[i] = Number(x & 0xffn);
        x >>= 8n;
      }
      return out;
    }
    case 'unknown':
      return bad();
  }
}

const mapToAvro = <V>(m: Map<number, V> | undefined): { key: number; value: V }[] | null =>
  m === undefined ? null : [...m].map(([key, value]) => ({ key, value }));

function dataFileToAvro(f: DataFile, columns: PartitionColumn[], what: string): unknown {
  if (f.partition.length !== columns.length) {
    throw new TypeError(`${what}: partition tuple has ${f.partition.length} values, the spec has ${columns.length} fields`);
  }
  const partition: Record<string, unknown> = {};
  columns.forEach((c, i) => {
    partition[c.key] = partitionToAvro(c.type, f.partition[i] ?? null, `${what}, partition field ${c.fieldId}`);
  });
  return {
    content: f.content,
    file_path: f.filePath,
    file_format: f.fileFormat,
    partition,
    record_count: f.recordCount,
    file_size_in_bytes: f.fileSizeInBytes,
    column_sizes: mapToAvro(f.columnSizes),
    value_counts: mapToAvro(f.valueCounts),
    null_value_counts: mapToAvro(f.nullValueCounts),
    nan_value_counts: mapToAvro(f.nanValueCounts),
    lower_bounds: mapToAvro(f.lowerBounds),
    upper_bounds: mapToAvro(f.upperBounds),
    key_metadata: f.keyMetadata ?? null,
    split_offsets: f.splitOffsets ?? null,
    equality_ids: f.equalityIds ?? null,
    sort_order_id: f.sortOrderId ?? null,
    referenced_data_file: f.referencedDataFile ?? null,
  };
}

/** Java's PartitionSummary: over every entry written (DELETED ones too), per spec field. */
function summarizePartitions(columns: PartitionColumn[], files: DataFile[]): FieldSummary[] {
  return columns.map((c, i) => {
    let containsNull = false;
    let containsNan = false;
    let min: Value = null;
    let max: Value = null;
    for (const f of files) {
      const v = f.partition[i] ?? null;
      if (v === null) containsNull = true;
      else if (typeof v === 'number' && Number.isNaN(v)) containsNan = true;
      else {
        if (min === null || compareValues(c.type, v, min) < 0) min = v;
        if (max === null || compareValues(c.type, v, max) > 0) max = v;
      }
    }
    const s: FieldSummary = { containsNull, containsNan };
    if (min !== null) s.lowerBound = toBinary(c.type, min);
    if (max !== null) s.upperBound = toBinary(c.type, max);
    return s;
  });
}

/** Encodes one manifest (all entries of one spec, data or deletes) and its manifest-list summary. */
export function encodeManifest(
  entries: ManifestEntryToWrite[],
  opts: EncodeManifestOptions,
): { bytes: Uint8Array; summary: ManifestSummary } {
  const columns = partitionColumns(opts.spec, opts.schema);
  let addedFiles = 0;
  let existingFiles = 0;
  let deletedFiles = 0;
  let addedRows = 0n;
  let existingRows = 0n;
  let deletedRows = 0n;
  let minDataSeq: bigint | null = null;
  const records = entries.map((e, i) => {
    const what = `manifest entry ${i} (${e.dataFile.filePath})`;
    const isData = e.dataFile.content === 0;
    if (isData !== (opts.content === 0)) {
      throw new TypeError(`${what}: file content ${e.dataFile.content} does not belong in a ${opts.content === 0 ? 'data' : 'delete'} manifest`);
    }
    if (e.status !== STATUS_ADDED && (e.sequenceNumber === null || e.fileSequenceNumber === null)) {
      throw new TypeError(`${what}: status ${e.status} needs explicit sequence numbers; only ADDED entries inherit them`);
    }
    if (e.status === STATUS_EXISTING && e.snapshotId === null) {
      throw new TypeError(`${what}: an EXISTING entry needs the snapshot id that added the file`);
    }
    if (e.status === STATUS_ADDED) {
      addedFiles++;
      addedRows += e.dataFile.recordCount;
    } else if (e.status === STATUS_EXISTING) {
      existingFiles++;
      existingRows += e.dataFile.recordCount;
    } else if (e.status === STATUS_DELETED) {
      deletedFiles++;
      deletedRows += e.dataFile.recordCount;
    } else {
      throw new TypeError(`${what}: status must be 0, 1 or 2, found ${String(e.status)}`);
    }
    if (e.status !== STATUS_DELETED && e.sequenceNumber !== null && (minDataSeq === null || e.sequenceNumber < minDataSeq)) {
      minDataSeq = e.sequenceNumber;
    }
    return {
      status: e.status,
      snapshot_id: e.snapshotId,
      sequence_number: e.sequenceNumber,
      file_sequence_number: e.fileSequenceNumber,
      data_file: dataFileToAvro(e.dataFile, columns, what),
    };
  });
  const meta: Record<string, string> = {
    schema: stringifyJson(schemaToJson(opts.schema)),
    'schema-id': String(opts.schema.schemaId),
    'partition-spec': stringifyJson(partitionFieldsToJson(opts.spec)),
    'partition-spec-id': String(opts.spec.specId),
    'format-version': '2',
    content: opts.content === 0 ? 'data' : 'deletes',
  };
  const bytes = writeContainer(manifestEntrySchema(columns), records, meta, opts.codec ?? 'deflate', { checksum: true });
  return {
    bytes,
    summary: {
      partitionSpecId: opts.spec.specId,
      content: opts.content,
      addedFilesCount: addedFiles,
      existingFilesCount: existingFiles,
      deletedFilesCount: deletedFiles,
      addedRowsCount: addedRows,
      existingRowsCount: existingRows,
      deletedRowsCount: deletedRows,
      partitions: summarizePartitions(
        columns,
        entries.map((e) => e.dataFile),
      ),
      minDataSequenceNumber: minDataSeq,
    },
  };
}

// ---- decoding -------------------------------------------------------------

/** How one file's schema lays out a data_file record: found once per file, used for every entry. */
interface DataFileLayout {
  fields: FieldMap;
  partFields: FieldMap;
  partitionIds: number[];
  /** Keys of the key/value records of each metric map (by field id) the schema has; a string says why
   * the schema's map is unreadable (an error only when an entry has a value there). */
  maps: Map<number, { key: string; value: string } | string>;
}

const METRIC_MAPS = [108, 109, 110, 137, 125, 128];

function dataFileLayout(fields: FieldMap, partFields: FieldMap, partitionIds: number[], index: AvroSchemaIndex): DataFileLayout {
  const maps = new Map<number, { key: string; value: string } | string>();
  for (const id of METRIC_MAPS) {
    const f = fields.field(id);
    if (!f) continue;
    const arr = index.nonNull(f.type);
    const items = typeof arr === 'object' && arr !== null && !Array.isArray(arr) ? arr['items'] : undefined;
    try {
      const kv = index.fields(items, `data_file field ${id} element`).list;
      maps.set(id, kv.length < 2 ? `key/value record has ${kv.length} fields` : { key: kv[0]!.key, value: kv[1]!.key });
    } catch (e) {
      maps.set(id, (e as Error).message);
    }
  }
  return { fields, partFields, partitionIds, maps };
}

function intKeyedMap<V>(
  v: unknown,
  kv: { key: string; value: string },
  conv: (x: unknown, what: string) => V,
  file: string,
  what: string,
): Map<number, V> | undefined {
  if (v === null || v === undefined) return undefined;
  if (!Array.isArray(v)) throw new Error(`${file}: ${what}: expected an array of key/value records`);
  const out = new Map<number, V>();
  for (const e of v as Record<string, unknown>[]) out.set(asNumber(e[kv.key], what), conv(e[kv.value], what));
  return out;
}

function decodeDataFile(r: unknown, layout: DataFileLayout, index: AvroSchemaIndex, what: string): DataFile {
  const { fields, partFields, partitionIds } = layout;
  const get = (id: number): unknown => fields.get(r, id);
  const partRecord = fields.need(r, 102);
  const partition = partitionIds.map((id) => {
    const f = partFields.field(id);
    if (!f) return null;
    return avroToValue(partFields.get(partRecord, id), f.type, index, `${index.file}: ${what} partition field ${id}`);
  });
  const content = (get(134) ?? 0) as number;
  if (content !== 0 && content !== 1 && content !== 2) throw new Error(`${index.file}: ${what}: content must be 0, 1 or 2, found ${String(content)}`);
  const df: DataFile = {
    content: content as FileContent,
    filePath: String(fields.need(r, 100)),
    fileFormat: String(fields.need(r, 101)),
    partition,
    recordCount: asBigInt(fields.need(r, 103), `${index.file}: ${what} record_count`),
    fileSizeInBytes: asBigInt(fields.need(r, 104), `${index.file}: ${what} file_size_in_bytes`),
  };
  const long = (x: unknown, w: string): bigint => asBigInt(x, `${index.file}: ${w}`);
  const bytes = (x: unknown, w: string): Uint8Array => asBytes(x, `${index.file}: ${w}`);
  const metric = <V>(id: number, conv: (x: unknown, w: string) => V): Map<number, V> | undefined => {
    const kv = layout.maps.get(id);
    if (kv === undefined) return undefined;
    const v = get(id);
    if (v === null || v === undefined) return undefined;
    if (typeof kv === 'string') throw new Error(`${index.file}: ${what} field ${id}: ${kv}`);
    return intKeyedMap(v, kv, conv, index.file, `${what} field ${id}`);
  };
  const columnSizes = metric(108, long);
  if (columnSizes) df.columnSizes = columnSizes;
  const valueCounts = metric(109, long);
  if (valueCounts) df.valueCounts = valueCounts;
  const nullValueCounts = metric(110, long);
  if (nullValueCounts) df.nullValueCounts = nullValueCounts;
  const nanValueCounts = metric(137, long);
  if (nanValueCounts) df.nanValueCounts = nanValueCounts;
  const lowerBounds = metric(125, bytes);
  if (lowerBounds) df.lowerBounds = lowerBounds;
  const upperBounds = metric(128, bytes);
  if (upperBounds) df.upperBounds = upperBounds;
  const keyMetadata = get(131);
  if (keyMetadata !== null && keyMetadata !== undefined) df.keyMetadata = bytes(keyMetadata, `${what} key_metadata`);
  const splitOffsets = get(132);
  if (Array.isArray(splitOffsets)) df.splitOffsets = splitOffsets.map((x) => long(x, `${what} split_offsets`));
  const equalityIds = get(135);
  if (Array.isArray(equalityIds)) df.equalityIds = equalityIds.map((x) => asNumber(x, `${index.file}: ${what} equality_ids`));
  const sortOrderId = get(140);
  if (sortOrderId !== null && sortOrderId !== undefined) df.sortOrderId = asNumber(sortOrderId, `${index.file}: ${what} sort_order_id`);
  const referenced = get(143);
  if (typeof referenced === 'string') df.referencedDataFile = referenced;
  return df;
}

/** The partition field ids of the file's spec (Avro metadata `partition-spec`), else of its partition record. */
function specFieldIds(meta: Map<string, string>, partFields: FieldMap, file: string): number[] {
  const text = meta.get('partition-spec');
  if (text !== undefined) {
    let j: Json;
    try {
      j = parseJson(text);
    } catch (e) {
      throw new Error(`${file}: metadata partition-spec is not JSON: ${(e as Error).message}`);
    }
    // v2 writes the field list; some v1 writers wrote the whole spec object
    const list = Array.isArray(j) ? j : typeof j === 'object' && j !== null && Array.isArray((j as { fields?: Json }).fields) ? ((j as { fields: Json[] }).fields) : undefined;
    if (list) {
      const ids = list.map((f) => (typeof f === 'object' && f !== null && !Array.isArray(f) ? f['field-id'] : undefined));
      if (ids.every((id): id is number => typeof id === 'number')) return ids;
    }
  }
  return partFields.list.map((f, i) => f.fieldId ?? 1000 + i);
}

/**
 * Decodes a manifest written by any engine. Inheritance is resolved: a null
 * snapshot id takes `inherit.addedSnapshotId`; null sequence numbers take
 * `inherit.sequenceNumber` (the manifest's, from the manifest list); manifests
 * without sequence-number fields (v1) read 0.
 */
export function decodeManifest(
  bytes: Uint8Array,
  file: string,
  inherit: { addedSnapshotId: bigint; sequenceNumber: bigint },
): { entries: ManifestEntry[]; specId: number | undefined; content: 0 | 1; checksummed: boolean } {
  const { schemaJson, meta, records, checksummed } = readContainer(bytes, file);
  const index = new AvroSchemaIndex(schemaJson, file);
  const top = index.fields(schemaJson, 'manifest_entry');
  if (!top.has(0) || !top.has(2)) {
    throw new Error(`${file}: not a manifest: the Avro schema lacks field 0 (status) or 2 (data_file)`);
  }
  const dfFields = index.fields(top.field(2)!.type, 'data_file');
  if (!dfFields.has(102)) throw new Error(`${file}: not a manifest: data_file lacks field 102 (partition)`);
  const partFields = index.fields(dfFields.field(102)!.type, 'partition');
  const layout = dataFileLayout(dfFields, partFields, specFieldIds(meta, partFields, file), index);
  const hasSeq = top.has(3);
  const hasFileSeq = top.has(4);

  const entries = records.map((r, i): ManifestEntry => {
    const what = `entry ${i}`;
    const status = asNumber(top.need(r, 0), `${file}: ${what} status`);
    if (status !== 0 && status !== 1 && status !== 2) throw new Error(`${file}: ${what}: status must be 0, 1 or 2, found ${status}`);
    const snap = top.get(r, 1);
    const seqOf = (present: boolean, v: unknown, name: string): bigint => {
      if (!present) return 0n; // v1: no sequence numbers at all
      if (v === null || v === undefined) return inherit.sequenceNumber; // ADDED inherits (lenient for others)
      return asBigInt(v, `${file}: ${what} ${name}`);
    };
    const dataFile = decodeDataFile(top.need(r, 2), layout, index, what);
    const sequenceNumber = seqOf(hasSeq, top.get(r, 3), 'sequence_number');
    return {
      status: status as EntryStatus,
      snapshotId: snap === null || snap === undefined ? inherit.addedSnapshotId : asBigInt(snap, `${file}: ${what} snapshot_id`),
      sequenceNumber,
      fileSequenceNumber: hasFileSeq ? seqOf(true, top.get(r, 4), 'file_sequence_number') : sequenceNumber,
      dataFile,
    };
  });
  const specText = meta.get('partition-spec-id');
  const specId = specText !== undefined && /^-?\d+$/.test(specText.trim()) ? Number(specText.trim()) : undefined;
  const content: 0 | 1 = meta.get('content') === 'deletes' ? 1 : 0;
  return { entries, specId, content, checksummed };
}
