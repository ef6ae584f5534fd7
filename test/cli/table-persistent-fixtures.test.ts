// `mimir table scan` on the harder real tables of duckdb-iceberg's
// data/persistent (../shared/fixtures/iceberg/duckdb_iceberg_persistent):
// Parquet files without field ids read through the name mapping (at six
// versions of it), partition folders literally named with %3A, relative and
// `file://data/…` locations, struct fields added with initial defaults, null
// counts and equality deletes. Expected rows are those of duckdb-iceberg's own
// tests (the fixtures README). Every filtered scan must return exactly the
// unfiltered scan's rows that match: pruning (manifest metrics, row-group
// stats) may never disagree with what the reader reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { jsonLines, runCli } from './run-cli.ts';

const ROOT = icebergFixtures ? path.join(icebergFixtures, 'duckdb_iceberg_persistent') : '';
const skip = ROOT && existsSync(ROOT) ? false : 'skipped: ../shared/fixtures/iceberg/duckdb_iceberg_persistent is absent';
const P = (rel: string): string => path.join(ROOT, 'data', 'persistent', rel);
type Row = { [k: string]: Json };

async function scan(metadata: string, more: string[] = [], opts: { cwd?: string } = {}): Promise<Row[]> {
  const r = await runCli(['table', 'scan', metadata, ...more], opts);
  assert.equal(r.code, 0, r.stderr);
  return jsonLines(r.stdout).map((l) => parseJson(l) as Row);
}

/** The key of a row for order-free comparison. */
const key = (r: Row): string => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
const sorted = (rows: Row[]): string[] => rows.map(key).sort();

/** A filtered scan returns exactly the unfiltered rows that `keep` accepts. */
async function agrees(metadata: string, all: Row[], where: string, keep: (r: Row) => boolean, more: string[] = []): Promise<Row[]> {
  const got = await scan(metadata, [...more, '--where', where]);
  assert.deepEqual(sorted(got), sorted(all.filter(keep)), `--where ${where} on ${path.basename(metadata)} agrees with the unfiltered scan`);
  return got;
}

test('persistent fixtures: column_mapping — files without field ids read through the name mapping (map, list, struct), filtered alike', { skip }, async () => {
  const meta = P('column_mapping/warehouse/default.db/my_table/metadata/00001-75643dae-a7a7-46ae-ab30-ea80d3793f3f.metadata.json');
  const all = await scan(meta);
  const byId = new Map(all.map((r) => [r.id, r]));
  assert.equal(all.length, 3);
  assert.deepEqual(byId.get(1), {
    id: 1, name: 'Alice', age: 25,
    attributes: [{ key: 'height', value: '5.5' }, { key: 'weight', value: '130' }],
    scores: [85, 90], profile: { email: 'alice@example.com', verified: true },
  });
  assert.deepEqual(byId.get(2), {
    id: 2, name: 'Bob', age: 30,
    attributes: [{ key: 'height', value: '6.0' }, { key: 'weight', value: '180' }],
    scores: [78, 82, 88], profile: { email: 'bob@example.com', verified: false },
  });
  assert.deepEqual(byId.get(3), {
    id: 3, name: 'Charlie', age: 35,
    attributes: [{ key: 'height', value: '5.8' }, { key: 'weight', value: '160' }],
    scores: [92], profile: { email: 'charlie@example.com', verified: true },
  });
  assert.equal((await agrees(meta, all, 'name=Bob', (r) => r.name === 'Bob')).length, 1);
  assert.equal((await agrees(meta, all, 'age>=30', (r) => (r.age as number) >= 30)).length, 2);
  assert.equal((await agrees(meta, all, 'id=7', () => false)).length, 0);
  assert.equal((await agrees(meta, all, 'name~null', () => false)).length, 0);
});

test('persistent fixtures: name_mapping — the same file read at six versions of the mapping; b null / not null filters agree', { skip }, async () => {
  const dir = P('name_mapping/warehouse_1/mydb/t1/metadata');
  const FIRST = '6597550917742534971';
  const cases: { version: string; snapshot: string; b: 'values' | 'null'; a: 'values' | 'null' }[] = [
    { version: 'v3', snapshot: FIRST, b: 'values', a: 'values' },
    { version: 'v3.1', snapshot: FIRST, b: 'null', a: 'values' },
    { version: 'v3.2', snapshot: FIRST, b: 'null', a: 'null' },
    { version: 'v4', snapshot: FIRST, b: 'values', a: 'values' },
    { version: 'v4.1', snapshot: FIRST, b: 'null', a: 'values' },
    { version: 'v7', snapshot: '2651609110244230974', b: 'null', a: 'values' },
  ];
  for (const c of cases) {
    const meta = path.join(dir, `${c.version}.metadata.json`);
    // as duckdb-iceberg's test does: the snapshot's own schema (b is dropped from v4's current schema)
    const at = ['--snapshot', c.snapshot];
    const all = await scan(meta, at);
    assert.equal(all.length, 10_000, `${c.version}: 10,000 rows`);
    const bNull = all.filter((r) => r.b === null).length;
    assert.equal(bNull, c.b === 'null' ? 10_000 : 0, `${c.version}: b ${c.b}`);
    assert.equal(all.filter((r) => r.a === null).length, c.a === 'null' ? 10_000 : 0, `${c.version}: a ${c.a}`);
    assert.equal((await scan(meta, [...at, '--where', 'b~null', '--columns', 'a'])).length, bNull, `${c.version}: b~null filtered = unfiltered`);
    assert.equal((await scan(meta, [...at, '--where', 'b!~null', '--columns', 'a'])).length, 10_000 - bNull, `${c.version}: b!~null filtered = unfiltered`);
  }
  const v3 = path.join(dir, 'v3.metadata.json');
  const all = await scan(v3);
  await agrees(v3, all, 'b>=990', (r) => BigInt(r.b as number) >= 990n);
  await agrees(v3, all, 'a=[1,9999,10000]', (r) => r.a === 1 || r.a === 9999);
  // the current schema of v4 no longer has b
  const now = await scan(path.join(dir, 'v4.metadata.json'), ['--limit', '1']);
  assert.deepEqual(Object.keys(now[0]!), ['a']);
});

test('persistent fixtures: partition_timestamptz — folders literally named with %3A and %2B read, the partition filter prunes', { skip }, async () => {
  const meta = P('partition_timestamptz/default.db/partition_timestamptz/metadata/00001-ffeadb58-2a9e-46ba-8b4f-f363f05de68c.metadata.json');
  const all = await scan(meta);
  assert.deepEqual(sorted(all), sorted([
    { partition_col: '2023-05-15T14:30:45.000000+00:00', user_id: 12345, event_type: 'click' },
    { partition_col: '2023-08-22T09:15:20.000000+00:00', user_id: 67890, event_type: 'purchase' },
  ]));
  const one = await agrees(meta, all, 'partition_col=2023-05-15T16:30:45+02:00', (r) => r.user_id === 12345);
  assert.equal(one[0]!.user_id, 12345);
});

test('persistent fixtures: map_stats — file://data/… paths resolve, from the repository root and from the fixture root alike', { skip }, async () => {
  const meta = P('map_stats/default.db/map_stats/metadata/00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json');
  const expected = [
    { timestamp: '2026-01-01T00:00:00.000000+00:00', input: 'hello', output: 'world', metadata: [{ key: 'key', value: 'value1' }] },
    { timestamp: '2026-01-02T00:00:00.000000+00:00', input: 'hello', output: 'world', metadata: [{ key: 'key', value: 'value1' }] },
  ];
  const all = await scan(meta);
  assert.deepEqual(sorted(all), sorted(expected));
  // as DuckDB's own tests run it: relative to the working directory
  assert.deepEqual(sorted(await scan(path.relative(ROOT, meta), [], { cwd: ROOT })), sorted(expected));
  const first = await agrees(meta, all, 'timestamp>=2026-01-01T00:00:00Z', (r) => r.timestamp === expected[0]!.timestamp, ['--where', 'timestamp<2026-01-02T00:00:00Z']);
  assert.equal(first.length, 1);
});

test('persistent fixtures: add_columns_with_defaults_in_struct — struct fields added later read their initial-default', { skip }, async () => {
  const meta = P('add_columns_with_defaults_in_struct/default.db/add_columns_with_defaults_in_struct/metadata/00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json');
  const rows = (await scan(meta)).map((r) => r.a as Row);
  assert.equal(rows.length, 2);
  const old = rows.find((r) => r.col_boolean === true)!;
  assert.deepEqual(old, {
    // a float field reads as the float32 it is, its initial default too (the metadata spells 0.34234)
    col1: 'test', col_boolean: true, col_integer: 342342, col_long: -9223372036854775808n, col_float: Math.fround(0.34234),
    col_double: 0.342343242342342, col_decimal: '12345.00', col_date: '2003-10-20', col_time: '00:00:00.012345',
    col_timestamp: '1970-01-01T00:00:00.012345', col_timestamptz: '1970-01-01T00:00:00.012345+00:00', col_string: 'HELLO',
    col_uuid: 'f79c3e09-677c-4bbd-a479-3f349cb785e7', col_fixed: '010203ff03', col_binary: '0102',
  });
  const own = rows.find((r) => r.col_boolean === false)!;
  assert.equal(own.col_integer, 453243);
  assert.equal(own.col_long, 328725092345834);
  assert.equal(own.col_timestamptz, null);
  assert.equal(own.col_uuid, null);
  assert.equal(own.col_fixed, null);
  assert.equal(own.col_binary, '800080');
});

test('persistent fixtures: null_stats — flag null in 5 rows; null and not-null filters agree with the unfiltered scan', { skip }, async () => {
  const meta = P('null_stats/default/test_nulls/metadata/00003-9d6a621e-8a72-4190-a880-f6ca02e32b86.metadata.json');
  const all = await scan(meta);
  assert.deepEqual(all.map((r) => r.id).sort(), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(all.filter((r) => r.flag === null).map((r) => r.id).sort(), [4, 5, 7, 8, 9]);
  assert.deepEqual((await agrees(meta, all, 'flag~null', (r) => r.flag === null)).map((r) => r.id).sort(), [4, 5, 7, 8, 9]);
  assert.deepEqual((await agrees(meta, all, 'flag!~null', (r) => r.flag !== null)).map((r) => r.id).sort(), [1, 2, 3, 6]);
  await agrees(meta, all, 'flag=true', (r) => r.flag === true);
});

test('persistent fixtures: equality_deletes (Spark) — 2 rows unpartitioned, 3 partitioned, filters agree', { skip }, async () => {
  const flat = P('equality_deletes/warehouse/mydb/mytable/metadata/v7.metadata.json');
  const all = await scan(flat);
  assert.deepEqual(sorted(all), sorted([{ id: 4, name: 'd', bir: '2025-01-04' }, { id: 5, name: 'e', bir: '2025-01-05' }]));
  assert.equal((await agrees(flat, all, 'id=4', (r) => r.id === 4)).length, 1);
  await agrees(flat, all, 'bir>=2025-01-01', () => true);
  const parted = P('equality_deletes/warehouse/mydb/mytable_partitioned/metadata/v6.metadata.json');
  const pall = await scan(parted);
  assert.deepEqual(sorted(pall), sorted([
    { id: 1, name: 'a', bir: '2025-01-01' },
    { id: 4, name: 'd', bir: '2025-01-04' },
    { id: 5, name: 'e', bir: '2025-01-05' },
  ]));
  await agrees(parted, pall, 'name=[b,c,f,e]', (r) => r.name === 'e');
});
