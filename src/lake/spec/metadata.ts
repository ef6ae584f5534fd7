// Table metadata JSON (spec "Table Metadata", App. C): parse v1, v2 and
// (leniently) v3 files into `TableMetadata`, write it back in Java's key order,
// build the metadata of a new v2 table, and look things up in it (schemas,
// specs, snapshots, time travel). Pure functions, no I/O.
// Invariants: 64-bit ids never pass through a JS number (lossless JSON);
// parseTableMetadata(serializeTableMetadata(m)) equals m; a file this reader
// cannot read faithfully (unknown format version, missing required v2 keys, a
// current schema that does not exist) is refused with a MetadataError naming
// the file and the reason, never half-read.

import { randomUUID } from 'node:crypto';
import { type Json, parseJson, stringifyJson, toBigInt } from './json.ts';
import { parsePartitionFields, parsePartitionSpec, parseSortOrder, partitionSpecToJson, partitionFieldsToJson, sortOrderToJson, UNSORTED_ORDER } from './partition.ts';
import { maxFieldId, parseSchema, schemaToJson } from './schema.ts';
import type {
  IcebergType,
  MetadataLogEntry,
  NestedField,
  Operation,
  PartitionSpec,
  Schema,
  Snapshot,
  SnapshotLogEntry,
  SnapshotRef,
  SortOrder,
  StatisticsFile,
  TableMetadata,
} from './types.ts';

/** The newest format version this reader understands. */
export const MAX_FORMAT_VERSION = 3;

/** A metadata file that cannot be read; the message starts with the file name. */
export class MetadataError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'MetadataError';
  }
}

type Obj = { [key: string]: Json };

const isObject = (j: Json | undefined): j is Obj => typeof j === 'object' && j !== null && !Array.isArray(j) && typeof j !== 'bigint';
const show = (j: Json | undefined): string => (j === undefined ? 'nothing' : stringifyJson(j));

/** Reads typed keys of one JSON object; every failure names the path of the key. */
class Reader {
  constructor(
    readonly o: Obj,
    readonly where: string,
  ) {}
  has(key: string): boolean {
    return this.o[key] !== undefined && this.o[key] !== null;
  }
  int(key: string): number {
    const v = this.o[key];
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${this.where}: expected integer "${key}", found ${show(v)}`);
    return v;
  }
  optInt(key: string): number | undefined {
    return this.has(key) ? this.int(key) : undefined;
  }
  long(key: string): bigint {
    return toBigInt(this.o[key], `${this.where}: "${key}"`);
  }
  optLong(key: string): bigint | undefined {
    return this.has(key) ? this.long(key) : undefined;
  }
  str(key: string): string {
    const v = this.o[key];
    if (typeof v !== 'string') throw new TypeError(`${this.where}: expected string "${key}", found ${show(v)}`);
    return v;
  }
  list(key: string): Json[] {
    const v = this.o[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new TypeError(`${this.where}: expected a list "${key}", found ${show(v)}`);
    return v;
  }
  obj(key: string): Obj | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (!isObject(v)) throw new TypeError(`${this.where}: expected an object "${key}", found ${show(v)}`);
    return v;
  }
  stringMap(key: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.obj(key) ?? {})) {
      if (typeof v !== 'string') throw new TypeError(`${this.where}: expected string values in "${key}", found ${k}=${show(v)}`);
      out[k] = v;
    }
    return out;
  }
}

const objectAt = (j: Json, where: string): Reader => {
  if (!isObject(j)) throw new TypeError(`${where}: expected an object, found ${show(j)}`);
  return new Reader(j, where);
};

// ---- parsing ------------------------------------------------------------------

function parseSnapshot(j: Json, where: string): Snapshot {
  const r = objectAt(j, where);
  if (!r.has('manifest-list')) {
    throw new TypeError(`${where}: expected "manifest-list" (v1 snapshots with an embedded "manifests" list are not supported)`);
  }
  const summaryObj = r.obj('summary') ?? {};
  const summary: Record<string, string> = {};
  for (const [k, v] of Object.entries(summaryObj)) {
    if (typeof v !== 'string') throw new TypeError(`${where}.summary: expected string values, found ${k}=${show(v)}`);
    summary[k] = v;
  }
  const operation = (summary.operation ?? 'append') as Operation;
  const s: Snapshot = {
    snapshotId: r.long('snapshot-id'),
    sequenceNumber: r.optLong('sequence-number') ?? 0n,
    timestampMs: r.long('timestamp-ms'),
    manifestList: r.str('manifest-list'),
    summary: { ...summary, operation },
  };
  const parent = r.optLong('parent-snapshot-id');
  if (parent !== undefined && parent !== -1n) s.parentSnapshotId = parent;
  const schemaId = r.optInt('schema-id');
  if (schemaId !== undefined) s.schemaId = schemaId;
  return s;
}

function parseRef(j: Json, where: string): SnapshotRef {
  const r = objectAt(j, where);
  const type = r.str('type').toLowerCase();
  if (type !== 'branch' && type !== 'tag') throw new TypeError(`${where}: expected type "branch" or "tag", found ${show(r.o.type)}`);
  const ref: SnapshotRef = { snapshotId: r.long('snapshot-id'), type };
  const min = r.optInt('min-snapshots-to-keep');
  if (min !== undefined) ref.minSnapshotsToKeep = min;
  const age = r.optLong('max-snapshot-age-ms');
  if (age !== undefined) ref.maxSnapshotAgeMs = age;
  const refAge = r.optLong('max-ref-age-ms');
  if (refAge !== undefined) ref.maxRefAgeMs = refAge;
  return ref;
}

function parseStatistics(j: Json, where: string): StatisticsFile {
  const r = objectAt(j, where);
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.o)) {
    if (k !== 'snapshot-id' && k !== 'statistics-path' && k !== 'file-size-in-bytes') extra[k] = v;
  }
  return { snapshotId: r.long('snapshot-id'), statisticsPath: r.str('statistics-path'), fileSizeInBytes: r.long('file-size-in-bytes'), extra };
}

/** Structural equality of two schemas' fields (ignoring schema ids), for v1's `schema` vs `schemas`. */
function sameFields(a: NestedField[], b: NestedField[]): boolean {
  return stringifyJson(schemaToJson({ schemaId: 0, fields: a })) === stringifyJson(schemaToJson({ schemaId: 0, fields: b }));
}

function parseMetadataObject(r: Reader): TableMetadata {
  if (!r.has('format-version')) throw new Error('missing "format-version"');
  const fv = r.int('format-version');
  if (fv > MAX_FORMAT_VERSION) throw new Error(`cannot read unsupported version ${fv} (this reader supports format versions 1 to ${MAX_FORMAT_VERSION})`);
  if (fv < 1) throw new Error(`cannot read unsupported version ${fv}`);
  const formatVersion = fv as 1 | 2 | 3;
  const v2 = formatVersion >= 2;

  const tableUuid = r.has('table-uuid') ? r.str('table-uuid') : '';
  if (v2 && tableUuid === '') throw new Error(`table-uuid must exist in format v${fv}`);
  const location = r.str('location');
  if (v2 && !r.has('last-sequence-number')) throw new Error(`last-sequence-number must exist in format v${fv}`);
  const lastSequenceNumber = r.optLong('last-sequence-number') ?? 0n;
  const lastUpdatedMs = r.long('last-updated-ms');
  const lastColumnId = r.int('last-column-id');

  // schemas
  let schemas: Schema[];
  let currentSchemaId: number;
  if (r.has('schemas')) {
    schemas = r.list('schemas').map((s, i) => parseSchema(s, `schemas[${i}]`));
    const cur = r.optInt('current-schema-id');
    if (cur !== undefined) currentSchemaId = cur;
    else if (!v2 && r.has('schema')) {
      const legacy = parseSchema(r.o.schema!, 'schema');
      const match = schemas.find((s) => sameFields(s.fields, legacy.fields));
      if (!match) throw new Error('No valid schema configuration found: "schema" is not among "schemas" and "current-schema-id" is missing');
      currentSchemaId = match.schemaId;
    } else throw new Error('No valid schema configuration found: "schemas" without "current-schema-id"');
  } else {
    if (v2) throw new Error(`schemas must exist in format v${fv}`);
    if (!r.has('schema')) throw new Error('No valid schema configuration found: neither "schemas" nor "schema"');
    const legacy = parseSchema(r.o.schema!, 'schema');
    schemas = [legacy];
    currentSchemaId = legacy.schemaId;
  }
  if (!schemas.some((s) => s.schemaId === currentSchemaId)) {
    throw new Error(`Cannot find schema with current-schema-id=${currentSchemaId} from schemas`);
  }

  // partition specs
  let partitionSpecs: PartitionSpec[];
  let defaultSpecId: number;
  if (r.has('partition-specs')) {
    partitionSpecs = r.list('partition-specs').map((s, i) => parsePartitionSpec(s, `partition-specs[${i}]`));
    if (partitionSpecs.length === 0) throw new Error('"partition-specs" is empty');
    defaultSpecId = r.optInt('default-spec-id') ?? Math.max(...partitionSpecs.map((s) => s.specId));
  } else {
    if (v2) throw new Error(`partition-specs must exist in format v${fv}`);
    if (!r.has('partition-spec')) throw new Error('missing both "partition-specs" and "partition-spec"');
    defaultSpecId = 0;
    partitionSpecs = [{ specId: 0, fields: parsePartitionFields(r.o['partition-spec']!, 'partition-spec') }];
  }
  if (!partitionSpecs.some((s) => s.specId === defaultSpecId)) throw new Error(`Cannot find partition spec with default-spec-id=${defaultSpecId}`);
  if (v2 && !r.has('last-partition-id')) throw new Error(`last-partition-id must exist in format v${fv}`);
  const lastPartitionId =
    r.optInt('last-partition-id') ?? Math.max(999, ...partitionSpecs.flatMap((s) => s.fields.map((f) => f.fieldId)));

  // sort orders
  let sortOrders: SortOrder[];
  let defaultSortOrderId: number;
  if (r.has('sort-orders')) {
    sortOrders = r.list('sort-orders').map((s, i) => parseSortOrder(s, `sort-orders[${i}]`));
    defaultSortOrderId = r.optInt('default-sort-order-id') ?? sortOrders[0]?.orderId ?? 0;
  } else {
    if (v2) throw new Error(`sort-orders must exist in format v${fv}`);
    sortOrders = [UNSORTED_ORDER];
    defaultSortOrderId = 0;
  }
  if (sortOrders.length > 0 && !sortOrders.some((o) => o.orderId === defaultSortOrderId)) {
    throw new Error(`Cannot find sort order with default-sort-order-id=${defaultSortOrderId}`);
  }

  const properties = r.stringMap('properties');
  const snapshots = r.list('snapshots').map((s, i) => parseSnapshot(s, `snapshots[${i}]`));

  let currentSnapshotId = r.optLong('current-snapshot-id');
  if (currentSnapshotId === -1n) currentSnapshotId = undefined;

  const refs: Record<string, SnapshotRef> = {};
  for (const [name, ref] of Object.entries(r.obj('refs') ?? {})) refs[name] = parseRef(ref, `refs.${name}`);
  if (currentSnapshotId !== undefined && refs.main === undefined) refs.main = { snapshotId: currentSnapshotId, type: 'branch' };
  if (currentSnapshotId === undefined && refs.main !== undefined) currentSnapshotId = refs.main.snapshotId;
  if (currentSnapshotId !== undefined && refs.main!.snapshotId !== currentSnapshotId) {
    throw new Error(`current-snapshot-id ${currentSnapshotId} differs from refs.main ${refs.main!.snapshotId}`);
  }

  const snapshotLog: SnapshotLogEntry[] = r.list('snapshot-log').map((e, i) => {
    const x = objectAt(e, `snapshot-log[${i}]`);
    return { timestampMs: x.long('timestamp-ms'), snapshotId: x.long('snapshot-id') };
  });
  const metadataLog: MetadataLogEntry[] = r.list('metadata-log').map((e, i) => {
    const x = objectAt(e, `metadata-log[${i}]`);
    return { timestampMs: x.long('timestamp-ms'), metadataFile: x.str('metadata-file') };
  });

  return {
    formatVersion,
    tableUuid,
    location,
    lastSequenceNumber,
    lastUpdatedMs,
    lastColumnId,
    schemas,
    currentSchemaId,
    partitionSpecs,
    defaultSpecId,
    lastPartitionId,
    sortOrders,
    defaultSortOrderId,
    properties,
    currentSnapshotId,
    snapshots,
    refs,
    snapshotLog,
    metadataLog,
    statistics: r.list('statistics').map((s, i) => parseStatistics(s, `statistics[${i}]`)),
    partitionStatistics: r.list('partition-statistics').map((s, i) => parseStatistics(s, `partition-statistics[${i}]`)),
  };
}

/** Parse a metadata file's text. `file` names it in every error. */
export function parseTableMetadata(text: string, file: string): TableMetadata {
  let j: Json;
  try {
    j = parseJson(text);
  } catch (e) {
    throw new MetadataError(file, `not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(j)) throw new MetadataError(file, `expected a JSON object, found ${Array.isArray(j) ? 'a list' : show(j)}`);
  try {
    const m = parseMetadataObject(new Reader(j, 'table metadata'));
    if (m.currentSnapshotId === undefined) delete m.currentSnapshotId;
    return m;
  } catch (e) {
    if (e instanceof MetadataError) throw e;
    throw new MetadataError(file, (e as Error).message);
  }
}

// ---- serialization ------------------------------------------------------------

function snapshotToJson(s: Snapshot, formatVersion: number): Json {
  const o: Obj = { 'snapshot-id': s.snapshotId };
  if (s.parentSnapshotId !== undefined) o['parent-snapshot-id'] = s.parentSnapshotId;
  if (formatVersion >= 2 || s.sequenceNumber !== 0n) o['sequence-number'] = s.sequenceNumber;
  o['timestamp-ms'] = s.timestampMs;
  const summary: Obj = { operation: s.summary.operation };
  for (const [k, v] of Object.entries(s.summary)) if (k !== 'operation') summary[k] = v;
  o.summary = summary;
  o['manifest-list'] = s.manifestList;
  if (s.schemaId !== undefined) o['schema-id'] = s.schemaId;
  return o;
}

function refToJson(r: SnapshotRef): Json {
  const o: Obj = { 'snapshot-id': r.snapshotId, type: r.type };
  if (r.minSnapshotsToKeep !== undefined) o['min-snapshots-to-keep'] = r.minSnapshotsToKeep;
  if (r.maxSnapshotAgeMs !== undefined) o['max-snapshot-age-ms'] = r.maxSnapshotAgeMs;
  if (r.maxRefAgeMs !== undefined) o['max-ref-age-ms'] = r.maxRefAgeMs;
  return o;
}

function statisticsToJson(s: StatisticsFile): Json {
  return { 'snapshot-id': s.snapshotId, 'statistics-path': s.statisticsPath, 'file-size-in-bytes': s.fileSizeInBytes, ...(s.extra as Obj) };
}

/** The metadata as pretty-printed JSON in Java's key order. v1 adds the legacy `schema` and
 * `partition-spec` keys; "no current snapshot" is -1 (v1, v2) or null (v3). */
export function serializeTableMetadata(m: TableMetadata): string {
  const v2 = m.formatVersion >= 2;
  const o: Obj = { 'format-version': m.formatVersion, 'table-uuid': m.tableUuid, location: m.location };
  if (v2) o['last-sequence-number'] = m.lastSequenceNumber;
  o['last-updated-ms'] = m.lastUpdatedMs;
  o['last-column-id'] = m.lastColumnId;
  if (!v2) o.schema = schemaToJson(currentSchema(m));
  o['current-schema-id'] = m.currentSchemaId;
  o.schemas = m.schemas.map(schemaToJson);
  if (!v2) o['partition-spec'] = partitionFieldsToJson(specById(m, m.defaultSpecId) ?? { specId: m.defaultSpecId, fields: [] });
  o['default-spec-id'] = m.defaultSpecId;
  o['partition-specs'] = m.partitionSpecs.map(partitionSpecToJson);
  o['last-partition-id'] = m.lastPartitionId;
  o['default-sort-order-id'] = m.defaultSortOrderId;
  o['sort-orders'] = m.sortOrders.map(sortOrderToJson);
  o.properties = { ...m.properties };
  o['current-snapshot-id'] = m.currentSnapshotId ?? (m.formatVersion >= 3 ? null : -1);
  const refs: Obj = {};
  for (const [name, r] of Object.entries(m.refs)) refs[name] = refToJson(r);
  o.refs = refs;
  o.snapshots = m.snapshots.map((s) => snapshotToJson(s, m.formatVersion));
  o.statistics = m.statistics.map(statisticsToJson);
  o['partition-statistics'] = m.partitionStatistics.map(statisticsToJson);
  o['snapshot-log'] = m.snapshotLog.map((e) => ({ 'timestamp-ms': e.timestampMs, 'snapshot-id': e.snapshotId }));
  o['metadata-log'] = m.metadataLog.map((e) => ({ 'timestamp-ms': e.timestampMs, 'metadata-file': e.metadataFile }));
  return stringifyJson(o, 2);
}

// ---- new tables ---------------------------------------------------------------

/**
 * The schema with field ids renumbered 1..n the way Java's assignFreshIds does: all
 * fields of a struct first, then their nested types (list element, map key then value).
 * Identifier field ids follow their fields.
 */
export function assignFreshIds(schema: Schema): Schema {
  let next = 0;
  const mapping = new Map<number, number>();
  const take = (old: number): number => {
    const id = ++next;
    mapping.set(old, id);
    return id;
  };
  const visitStruct = (fields: NestedField[]): NestedField[] => {
    const ids = fields.map((f) => take(f.id));
    return fields.map((f, i) => ({ ...f, id: ids[i]!, type: visitType(f.type) }));
  };
  const visitType = (t: IcebergType): IcebergType => {
    switch (t.type) {
      case 'struct':
        return { type: 'struct', fields: visitStruct(t.fields) };
      case 'list': {
        const elementId = take(t.elementId);
        return { ...t, elementId, element: visitType(t.element) };
      }
      case 'map': {
        const keyId = take(t.keyId);
        const valueId = take(t.valueId);
        return { ...t, keyId, valueId, key: visitType(t.key), value: visitType(t.value) };
      }
      default:
        return t;
    }
  };
  const out: Schema = { schemaId: schema.schemaId, fields: visitStruct(schema.fields) };
  if (schema.identifierFieldIds !== undefined) out.identifierFieldIds = schema.identifierFieldIds.map((id) => mapping.get(id) ?? id);
  return out;
}

/** Metadata of a fresh v2 table with no snapshot. Field and partition field ids are used as
 * given (see assignFreshIds); an unpartitioned table gets spec 0 with no fields and
 * last-partition-id 999; the default sort order is the given one or unsorted (0). */
export function newTableMetadata(opts: {
  location: string;
  schema: Schema;
  spec?: PartitionSpec;
  sortOrder?: SortOrder;
  properties?: Record<string, string>;
  tableUuid?: string;
  nowMs?: bigint;
}): TableMetadata {
  const spec = opts.spec ?? { specId: 0, fields: [] };
  const sortOrder = opts.sortOrder ?? UNSORTED_ORDER;
  return {
    formatVersion: 2,
    tableUuid: opts.tableUuid ?? randomUUID(),
    location: opts.location.replace(/\/+$/, ''),
    lastSequenceNumber: 0n,
    lastUpdatedMs: opts.nowMs ?? BigInt(Date.now()),
    lastColumnId: maxFieldId(opts.schema),
    schemas: [opts.schema],
    currentSchemaId: opts.schema.schemaId,
    partitionSpecs: [spec],
    defaultSpecId: spec.specId,
    lastPartitionId: Math.max(999, ...spec.fields.map((f) => f.fieldId)),
    sortOrders: [sortOrder],
    defaultSortOrderId: sortOrder.orderId,
    properties: { ...(opts.properties ?? {}) },
    snapshots: [],
    refs: {},
    snapshotLog: [],
    metadataLog: [],
    statistics: [],
    partitionStatistics: [],
  };
}

// ---- lookups ------------------------------------------------------------------

export function schemaById(m: TableMetadata, id: number): Schema | undefined {
  return m.schemas.find((s) => s.schemaId === id);
}

/** The current schema (parseTableMetadata guarantees it exists). */
export function currentSchema(m: TableMetadata): Schema {
  const s = schemaById(m, m.currentSchemaId);
  if (!s) throw new Error(`table ${m.location}: no schema with current-schema-id=${m.currentSchemaId}`);
  return s;
}

export function specById(m: TableMetadata, id: number): PartitionSpec | undefined {
  return m.partitionSpecs.find((s) => s.specId === id);
}

export function snapshotById(m: TableMetadata, id: bigint): Snapshot | undefined {
  return m.snapshots.find((s) => s.snapshotId === id);
}

export function currentSnapshot(m: TableMetadata): Snapshot | undefined {
  return m.currentSnapshotId === undefined ? undefined : snapshotById(m, m.currentSnapshotId);
}

/** The snapshot and its ancestors, newest first, up to the first parent no longer in the metadata. */
export function ancestors(m: TableMetadata, snapshotId: bigint): Snapshot[] {
  const out: Snapshot[] = [];
  const seen = new Set<bigint>();
  let s = snapshotById(m, snapshotId);
  while (s && !seen.has(s.snapshotId)) {
    out.push(s);
    seen.add(s.snapshotId);
    s = s.parentSnapshotId === undefined ? undefined : snapshotById(m, s.parentSnapshotId);
  }
  return out;
}

/**
 * The snapshot that was current at `timestampMs`: the last snapshot-log entry at or before
 * that time (undefined if that snapshot has since expired); when the log has no such entry,
 * the newest ancestor of the current snapshot committed at or before that time.
 */
export function snapshotAsOf(m: TableMetadata, timestampMs: bigint): Snapshot | undefined {
  let hit: SnapshotLogEntry | undefined;
  for (const e of m.snapshotLog) if (e.timestampMs <= timestampMs) hit = e;
  if (hit) return snapshotById(m, hit.snapshotId);
  if (m.currentSnapshotId === undefined) return undefined;
  return ancestors(m, m.currentSnapshotId).find((s) => s.timestampMs <= timestampMs);
}
