// The Iceberg v2 format as plain data: schemas, partition specs, snapshots,
// table metadata, manifests. No I/O and no behaviour live here; parsers,
// serializers and evaluators are in sibling modules. Every 64-bit id or count
// that can exceed 2^53 is a `bigint`.

/** Primitive type names as Iceberg spells them (decimal and fixed carry parameters). */
export type PrimitiveType =
  | { type: 'boolean' }
  | { type: 'int' }
  | { type: 'long' }
  | { type: 'float' }
  | { type: 'double' }
  | { type: 'decimal'; precision: number; scale: number }
  | { type: 'date' }
  | { type: 'time' }
  | { type: 'timestamp' }
  | { type: 'timestamptz' }
  | { type: 'timestamp_ns' }
  | { type: 'timestamptz_ns' }
  | { type: 'string' }
  | { type: 'uuid' }
  | { type: 'fixed'; length: number }
  | { type: 'binary' }
  | { type: 'unknown' };

export interface StructType {
  type: 'struct';
  fields: NestedField[];
}
export interface ListType {
  type: 'list';
  elementId: number;
  elementRequired: boolean;
  element: IcebergType;
}
export interface MapType {
  type: 'map';
  keyId: number;
  key: IcebergType;
  valueId: number;
  valueRequired: boolean;
  value: IcebergType;
}
export type IcebergType = PrimitiveType | StructType | ListType | MapType;

export interface NestedField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
  /** JSON single-value encoding, already decoded to a `Value` of the field's type. */
  initialDefault?: Value;
  writeDefault?: Value;
}

export interface Schema {
  schemaId: number;
  fields: NestedField[];
  identifierFieldIds?: number[];
}

/**
 * In-memory value of a field, by type:
 * boolean -> boolean; int, date -> number (date = days since epoch);
 * long -> bigint; time, timestamp(tz) -> bigint micros (`_ns`: nanos);
 * float, double -> number; decimal -> string in canonical form with exactly
 * `scale` digits after the point ("9.99", "-5.00", "0.00"); string -> string;
 * uuid -> lowercase hyphenated string; fixed, binary -> Uint8Array;
 * struct -> { [fieldName]: Value }; list -> Value[]; map -> Map<Value, Value>.
 * A missing value is `null`.
 */
export type Value =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | Value[]
  | Map<Value, Value>
  | { [name: string]: Value };

export type TransformName =
  | { kind: 'identity' }
  | { kind: 'bucket'; n: number }
  | { kind: 'truncate'; width: number }
  | { kind: 'year' }
  | { kind: 'month' }
  | { kind: 'day' }
  | { kind: 'hour' }
  | { kind: 'void' }
  | { kind: 'unknown'; text: string };

export interface PartitionField {
  sourceId: number;
  fieldId: number;
  name: string;
  transform: TransformName;
}
export interface PartitionSpec {
  specId: number;
  fields: PartitionField[];
}

export interface SortField {
  sourceId: number;
  transform: TransformName;
  direction: 'asc' | 'desc';
  nullOrder: 'nulls-first' | 'nulls-last';
}
export interface SortOrder {
  orderId: number;
  fields: SortField[];
}

export type Operation = 'append' | 'replace' | 'overwrite' | 'delete';

export interface Snapshot {
  snapshotId: bigint;
  parentSnapshotId?: bigint;
  sequenceNumber: bigint;
  timestampMs: bigint;
  manifestList: string;
  /** `operation` plus string-valued summary keys. */
  summary: { operation: Operation } & Record<string, string>;
  schemaId?: number;
}

export interface SnapshotRef {
  snapshotId: bigint;
  type: 'branch' | 'tag';
  minSnapshotsToKeep?: number;
  maxSnapshotAgeMs?: bigint;
  maxRefAgeMs?: bigint;
}

export interface SnapshotLogEntry {
  timestampMs: bigint;
  snapshotId: bigint;
}
export interface MetadataLogEntry {
  timestampMs: bigint;
  metadataFile: string;
}
export interface StatisticsFile {
  snapshotId: bigint;
  statisticsPath: string;
  fileSizeInBytes: bigint;
  /** Everything else of the descriptor, kept verbatim for round trips. */
  extra: Record<string, unknown>;
}

export interface TableMetadata {
  formatVersion: 1 | 2 | 3;
  tableUuid: string;
  location: string;
  lastSequenceNumber: bigint;
  lastUpdatedMs: bigint;
  lastColumnId: number;
  schemas: Schema[];
  currentSchemaId: number;
  partitionSpecs: PartitionSpec[];
  defaultSpecId: number;
  lastPartitionId: number;
  sortOrders: SortOrder[];
  defaultSortOrderId: number;
  properties: Record<string, string>;
  /** Undefined when the table has no snapshot (-1, null and absent alike). */
  currentSnapshotId?: bigint;
  snapshots: Snapshot[];
  refs: Record<string, SnapshotRef>;
  snapshotLog: SnapshotLogEntry[];
  metadataLog: MetadataLogEntry[];
  statistics: StatisticsFile[];
  partitionStatistics: StatisticsFile[];
}

// ---- manifests -------------------------------------------------------------

export type FileContent = 0 | 1 | 2; // data, position deletes, equality deletes
export type EntryStatus = 0 | 1 | 2; // existing, added, deleted

/** One data or delete file as a manifest describes it (field ids 100..145). */
export interface DataFile {
  content: FileContent;
  filePath: string;
  fileFormat: string;
  /** Partition tuple in spec field order; values are transform results. */
  partition: Value[];
  recordCount: bigint;
  fileSizeInBytes: bigint;
  columnSizes?: Map<number, bigint>;
  valueCounts?: Map<number, bigint>;
  nullValueCounts?: Map<number, bigint>;
  nanValueCounts?: Map<number, bigint>;
  lowerBounds?: Map<number, Uint8Array>;
  upperBounds?: Map<number, Uint8Array>;
  keyMetadata?: Uint8Array;
  splitOffsets?: bigint[];
  equalityIds?: number[];
  sortOrderId?: number;
  referencedDataFile?: string;
}

export interface ManifestEntry {
  status: EntryStatus;
  /** Null in the file means: inherit the manifest's added snapshot id. Resolved on read. */
  snapshotId: bigint;
  /** Data sequence number; resolved on read by inheritance. */
  sequenceNumber: bigint;
  fileSequenceNumber: bigint;
  dataFile: DataFile;
}

export interface FieldSummary {
  containsNull: boolean;
  containsNan?: boolean;
  lowerBound?: Uint8Array;
  upperBound?: Uint8Array;
}

/** One entry of a manifest list (field ids 500..520). */
export interface ManifestFile {
  manifestPath: string;
  manifestLength: bigint;
  partitionSpecId: number;
  content: 0 | 1; // data, deletes
  sequenceNumber: bigint;
  minSequenceNumber: bigint;
  addedSnapshotId: bigint;
  addedFilesCount: number;
  existingFilesCount: number;
  deletedFilesCount: number;
  addedRowsCount: bigint;
  existingRowsCount: bigint;
  deletedRowsCount: bigint;
  partitions?: FieldSummary[];
  keyMetadata?: Uint8Array;
  /** Set when read from a list that lacks some entry count (early v1 writers): the counts read 0 and are not checked. */
  countsUnknown?: boolean;
}

/** A columnar batch of rows: `columns[i]` holds the values of `fields[i]`. */
export interface Batch {
  fields: NestedField[];
  numRows: number;
  columns: Value[][];
  /** Set by scans: the data file the rows come from and its data sequence number (commit order). */
  source?: { file: string; sequenceNumber: bigint };
  /** Set by scans asked for them (ScanOptions.positions): each row's position in its data file (from 0). */
  positions?: number[];
}
