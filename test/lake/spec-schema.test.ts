// Schemas, types, partition specs and sort orders as JSON; partition types, values and paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures, needsFixtures } from '../helpers.ts';
import { parseJson, stringifyJson } from '../../src/lake/spec/json.ts';
import { fieldsById, isPrimitive, parseSchema, parseType, schemaToJson, typeToJson, typeToString } from '../../src/lake/spec/schema.ts';
import {
  escapePathValue,
  parsePartitionSpec,
  parseSortOrder,
  partitionFieldsToJson,
  partitionPath,
  partitionSpecToJson,
  partitionType,
  partitionValues,
  sortOrderToJson,
  specsEquivalent,
} from '../../src/lake/spec/partition.ts';
import { currentSchema, parseTableMetadata, specById } from '../../src/lake/spec/metadata.ts';
import { coerceValue } from '../../src/lake/spec/values.ts';
import type { Json } from '../../src/lake/spec/json.ts';
import type { PartitionSpec, Schema, Value } from '../../src/lake/spec/types.ts';

test('schema: type strings parse with optional spaces and print in Java form', () => {
  assert.deepEqual(parseType('decimal(10,2)', 't'), { type: 'decimal', precision: 10, scale: 2 });
  assert.deepEqual(parseType('decimal( 38 , 0 )', 't'), { type: 'decimal', precision: 38, scale: 0 });
  assert.deepEqual(parseType('fixed[16]', 't'), { type: 'fixed', length: 16 });
  for (const s of ['timestamp_ns', 'timestamptz_ns', 'unknown', 'uuid', 'binary']) assert.deepEqual(parseType(s, 't'), { type: s });
  assert.equal(typeToString({ type: 'decimal', precision: 10, scale: 2 }), 'decimal(10, 2)');
  assert.equal(typeToJson({ type: 'fixed', length: 5 }), 'fixed[5]');
  assert.throws(() => parseType('decimal(39,2)', 'schemas[0].fields[3]'), /schemas\[0\]\.fields\[3\]: decimal precision must be 1\.\.38/);
  assert.throws(() => parseType('varchar', 'f'), /f: unsupported type "varchar"/);
  assert.throws(() => parseType({ type: 'set' }, 'f'), /expected a type object of type struct, list or map/);
});

test('schema: nested types round trip and fieldsById sees every nested id', () => {
  const j: Json = {
    type: 'struct',
    'schema-id': 3,
    'identifier-field-ids': [1],
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      {
        id: 2, name: 'points', required: false,
        type: { type: 'list', 'element-id': 4, element: { type: 'struct', fields: [{ id: 5, name: 'x', required: true, type: 'double', doc: 'abscissa' }] }, 'element-required': true },
      },
      {
        id: 3, name: 'attrs', required: false,
        type: { type: 'map', 'key-id': 6, key: 'string', 'value-id': 7, value: 'decimal(9, 3)', 'value-required': false },
      },
    ],
  };
  const s = parseSchema(j, 'schema');
  assert.deepEqual(schemaToJson(s), j);
  assert.deepEqual([...fieldsById(s).keys()].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7]);
  assert.equal(fieldsById(s).get(5)!.doc, 'abscissa');
  assert.ok(isPrimitive(fieldsById(s).get(7)!.type));
  assert.ok(!isPrimitive(fieldsById(s).get(4)!.type));
  // Py key order and a missing identifier list are accepted; without one none is written back
  const py = parseSchema({ type: 'struct', fields: [{ id: 1, name: 'a', type: 'int', required: false }], 'schema-id': 0 }, 'py');
  assert.equal('identifierFieldIds' in py, false);
  assert.deepEqual(Object.keys(schemaToJson(py) as object), ['type', 'schema-id', 'fields']);
});

test('schema: the PyIceberg fixture schema with v3 defaults round trips', { skip: needsFixtures }, () => {
  const dir = path.join(icebergFixtures!, 'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults/metadata');
  const file = readdirSync(dir).find((f) => f.startsWith('00003-'))!;
  const raw = parseJson(readFileSync(path.join(dir, file), 'utf8')) as { schemas: Json[] };
  const schemaJson = raw.schemas[1]!;
  const s = parseSchema(schemaJson, file);
  const again = parseSchema(schemaToJson(s), 'again');
  assert.deepStrictEqual(again, s);
  const byName = new Map(s.fields.map((f) => [f.name, f]));
  const expected: Record<string, Value> = {
    col_boolean: true,
    col_integer: 342342,
    col_long: -9223372036854775808n,
    col_float: 0.34234,
    col_double: 0.342343242342342,
    col_decimal: '12345.00',
    col_date: 12345,
    col_time: 12345n,
    col_timestamp: 12345n,
    col_timestamptz: 12345n,
    col_string: 'HELLO',
    col_uuid: 'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    col_fixed: Uint8Array.of(1, 2, 3, 255, 3),
    col_binary: Uint8Array.of(1, 2),
  };
  for (const [name, v] of Object.entries(expected)) {
    assert.deepStrictEqual(byName.get(name)!.initialDefault, v, `${name} initial-default`);
    assert.deepStrictEqual(byName.get(name)!.writeDefault, v, `${name} write-default`);
  }
  assert.deepEqual(byName.get('col_decimal')!.type, { type: 'decimal', precision: 16, scale: 2 });
  // the JSON written back equals the fixture's, field by field (key order aside)
  const norm = (j: Json): Json => parseJson(stringifyJson(j));
  const fieldsOut = (schemaToJson(s) as { fields: Json[] }).fields;
  const fieldsIn = (schemaJson as { fields: Json[] }).fields;
  assert.deepStrictEqual(fieldsOut.map(norm), fieldsIn.map(norm));
});

test('partition: specs and sort orders round trip; equivalence ignores ids', () => {
  const j = { 'spec-id': 2, fields: [{ name: 'id_bucket', transform: 'bucket[4]', 'source-id': 1, 'field-id': 1000 }, { name: 'ts_day', transform: 'day', 'source-id': 3, 'field-id': 1001 }] };
  const spec = parsePartitionSpec(j, 'spec');
  assert.deepEqual(partitionSpecToJson(spec), j);
  assert.deepEqual(partitionFieldsToJson(spec), j.fields);
  const other: PartitionSpec = { ...spec, specId: 7, fields: spec.fields.map((f) => ({ ...f, fieldId: f.fieldId + 10 })) };
  assert.ok(specsEquivalent(spec, other));
  assert.ok(!specsEquivalent(spec, { ...spec, fields: spec.fields.slice(1) }));
  assert.ok(!specsEquivalent(spec, { ...spec, fields: [{ ...spec.fields[0]!, transform: { kind: 'bucket', n: 8 } }, spec.fields[1]!] }));
  const o = { 'order-id': 3, fields: [{ transform: 'identity', 'source-id': 2, direction: 'asc', 'null-order': 'nulls-first' }, { transform: 'bucket[4]', 'source-id': 3, direction: 'desc', 'null-order': 'nulls-last' }] };
  assert.deepEqual(sortOrderToJson(parseSortOrder(o, 'order')), o);
  assert.throws(() => parseSortOrder({ 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 1, direction: 'up', 'null-order': 'nulls-first' }] }, 'o'), /o\.fields\[0\]: expected direction/);
});

test('partition: the rename_column fixture partitions rows into its real directories', { skip: needsFixtures }, () => {
  const table = path.join(icebergFixtures!, 'icebird_spark_rename_column/rename_column');
  const m = parseTableMetadata(readFileSync(path.join(table, 'metadata/v3.metadata.json'), 'utf8'), 'v3.metadata.json');
  const schema = currentSchema(m);
  const spec = specById(m, m.defaultSpecId)!;
  const type = partitionType(spec, schema);
  assert.deepEqual(type.fields, [
    { id: 1000, name: 'id_bucket', required: false, type: { type: 'int' } },
    { id: 1001, name: 'date', required: false, type: { type: 'date' } },
  ]);
  const rows: Array<[number, string | null]> = [[1, '2022-01-01'], [2, '2022-01-01'], [3, null], [4, '2022-01-02']];
  const dirs = rows.map(([id, date]) => {
    const values = partitionValues(spec, schema, (fid) => (fid === 1 ? id : fid === 3 ? coerceValue({ type: 'date' }, date, 'date') : null));
    return partitionPath(spec, schema, values);
  });
  assert.deepEqual(dirs, ['id_bucket=0/date=2022-01-01', 'id_bucket=0/date=2022-01-01', 'id_bucket=3/date=null', 'id_bucket=2/date=2022-01-02']);
  for (const d of dirs) assert.ok(existsSync(path.join(table, 'data', d)), d);
});

test('partition: paths escape values like Java and render temporal results as dates', () => {
  const schema: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: 'name', required: false, type: { type: 'string' } },
      { id: 2, name: 'ts', required: false, type: { type: 'timestamp' } },
    ],
  };
  const spec: PartitionSpec = {
    specId: 0,
    fields: [
      { sourceId: 1, fieldId: 1000, name: 'name', transform: { kind: 'identity' } },
      { sourceId: 2, fieldId: 1001, name: 'ts_year', transform: { kind: 'year' } },
      { sourceId: 2, fieldId: 1002, name: 'ts_month', transform: { kind: 'month' } },
      { sourceId: 2, fieldId: 1003, name: 'ts_day', transform: { kind: 'day' } },
      { sourceId: 2, fieldId: 1004, name: 'ts_hour', transform: { kind: 'hour' } },
    ],
  };
  const row = (fid: number): Value => (fid === 1 ? 'a b/c&d=é*' : coerceValue({ type: 'timestamp' }, '1969-12-31T23:59:59', 'ts'));
  const values = partitionValues(spec, schema, row);
  assert.deepEqual(values, ['a b/c&d=é*', -1, -1, -1, -1]);
  assert.equal(partitionPath(spec, schema, values), 'name=a+b%2Fc%26d%3D%C3%A9*/ts_year=1969/ts_month=1969-12/ts_day=1969-12-31/ts_hour=1969-12-31-23');
  assert.equal(escapePathValue("(it's)~!"), '%28it%27s%29%7E%21');
});

test('partition: a spec whose source column is gone still types, as unknown', () => {
  const schema: Schema = { schemaId: 1, fields: [{ id: 1, name: 'a', required: false, type: { type: 'int' } }] };
  const spec: PartitionSpec = { specId: 0, fields: [{ sourceId: 9, fieldId: 1000, name: 'gone', transform: { kind: 'void' } }] };
  assert.deepEqual(partitionType(spec, schema).fields[0]!.type, { type: 'unknown' });
  assert.deepEqual(partitionValues(spec, schema, () => 1), [null]);
  assert.equal(partitionPath(spec, schema, [null]), 'gone=null');
});
