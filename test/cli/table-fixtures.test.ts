// `mimir table` on real tables written by Spark, Java, Trino (Athena) and
// PyIceberg (../shared/fixtures/iceberg), opened by metadata path with
// --location-root, run as a real child process; expected rows from the
// fixtures' README.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { icebergFixtures, needsFixtures } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { jsonLines, runCli } from './run-cli.ts';

const skip = needsFixtures;
type Obj = { [k: string]: Json };

/** The `[metadata.json, --location-root]` pair of a fixture table. */
function fixture(tableDir: string, metadataFile: string): [string, string, string] {
  const root = path.join(icebergFixtures ?? '', tableDir);
  return [path.join(root, 'metadata', metadataFile), '--location-root', root];
}

const JAVA_BUNNIES = fixture('icebird_java_bunnies/bunnies', 'v5.metadata.json');
const SPARK_BUNNIES = fixture('icebird_spark_bunnies/bunnies', 'v5.metadata.json');
const RENAME = fixture('icebird_spark_rename_column/rename_column', 'v3.metadata.json');
const ATHENA = fixture('icebird_athena_example/example', '00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json');
const PYICEBERG = fixture(
  'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults',
  '00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json',
);

async function scan(table: string[], ...more: string[]): Promise<{ lines: string[]; rows: Obj[]; stderr: string }> {
  const r = await runCli(['table', 'scan', ...table, ...more]);
  assert.equal(r.code, 0, r.stderr);
  const lines = jsonLines(r.stdout);
  return { lines, rows: lines.map((l) => parseJson(l) as Obj), stderr: r.stderr };
}

test('cli fixtures: java bunnies scan applies position and equality deletes (15 rows)', { skip }, async () => {
  const { rows } = await scan(JAVA_BUNNIES);
  const expected = [
    'New Zealand', 'Holland Lop', 'Netherland Dwarf', 'American Fuzzy Lop', 'Dutch', 'Polish', 'Californian', 'Mini Rex',
    'Satin Angora', 'Silver Fox', 'Thrianta', 'Himalayan', 'English Angora', 'Belgian Hare', 'Harlequin',
  ];
  assert.deepEqual(rows.map((r) => r['Breed Name']).sort(), [...expected].sort());
  assert.equal(Object.keys(rows[0]!).length, 9, 'all nine columns of the current schema, __happy__ included');
});

test('cli fixtures: spark bunnies scans 20 rows now, and 20 of 21 at snapshot seq 2 (--snapshot from snapshots --json)', { skip }, async () => {
  const now = await scan(SPARK_BUNNIES, '--columns', 'Breed Name');
  assert.equal(now.rows.length, 20);
  assert.deepEqual(Object.keys(now.rows[0]!), ['Breed Name']);
  assert.ok(!now.rows.some((r) => r['Breed Name'] === 'Holland Lop'));

  const snaps = await runCli(['table', 'snapshots', ...SPARK_BUNNIES, '--json']);
  assert.equal(snaps.code, 0, snaps.stderr);
  const list = parseJson(snaps.stdout) as Obj[];
  assert.deepEqual(list.map((s) => s.sequenceNumber), [1, 2, 3]);
  const seq2 = list[1]!.snapshotId;
  assert.equal(typeof seq2, 'bigint', 'a snapshot id beyond 2^53 stays exact in --json output');
  const then = await scan(SPARK_BUNNIES, '--snapshot', String(seq2), '--columns', 'Breed Name');
  assert.equal(then.rows.length, 20);
  assert.ok(!then.rows.some((r) => r['Breed Name'] === 'Holland Lop'), 'pos 0 (Holland Lop) is deleted at seq 2');
  assert.ok(then.rows.some((r) => r['Breed Name'] === 'New Zealand'));
});

test('cli fixtures: rename_column reads event_date by field id; --where on the renamed column', { skip }, async () => {
  const { rows } = await scan(RENAME);
  const byId = new Map(rows.map((r) => [r.id, r]));
  assert.equal(rows.length, 4);
  assert.deepEqual(byId.get(1), { id: 1, name: 'Flopsy 🐇', event_date: '2022-01-01', price: '9.99', active: true });
  assert.deepEqual(byId.get(2), { id: 2, name: 'Mopsy–Naïve', event_date: '2022-01-01', price: '-5.00', active: false });
  assert.deepEqual(byId.get(3), { id: 3, name: 'Cottontail', event_date: null, price: '0.00', active: true });
  assert.deepEqual(byId.get(4), { id: 4, name: 'Thumper', event_date: '2022-01-02', price: '99999999.99', active: false });

  const f = await scan(RENAME, '--where', 'event_date=2022-01-01', '--columns', 'id,event_date', '--stats');
  assert.deepEqual(f.rows.map((r) => r.id).sort(), [1, 2]);
  assert.deepEqual(Object.keys(f.rows[0]!), ['id', 'event_date']);
  assert.match(f.stderr, /2 rows; data files 1 read, 2 skipped of 3/, 'partition pruning shows in the report');
});

test('cli fixtures: athena (Trino) table scans (1, Alice), (2, Bob)', { skip }, async () => {
  const { rows } = await scan(ATHENA);
  assert.deepEqual(
    rows.sort((a, b) => Number(a.id) - Number(b.id)),
    [
      { id: 1, name: 'Alice' },
      { id: 2, name: 'Bob' },
    ],
  );
});

test('cli fixtures: pyiceberg rows of the first file take initial defaults; longs exact', { skip }, async () => {
  const { rows, lines } = await scan(PYICEBERG);
  assert.equal(rows.length, 3);
  const old = rows.filter((r) => r.col1 === 'click' || r.col1 === 'purchase');
  assert.equal(old.length, 2);
  for (const r of old) {
    assert.equal(r.col_integer, 342342);
    assert.equal(r.col_boolean, true);
    assert.equal(r.col_decimal, '12345.00');
    assert.equal(r.col_uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7');
  }
  const click = lines.find((l) => l.includes('"click"'))!;
  assert.match(click, /"col_long":-9223372036854775808[,}]/, 'the long minimum printed digit for digit');
  const test = rows.find((r) => r.col1 === 'test')!;
  assert.equal(test.col_long, 328725092345834);
  assert.equal(test.col_integer, 453243);
});

test('cli fixtures: describe, snapshots and files --json parse and agree', { skip }, async () => {
  const [d, s, f] = await Promise.all([
    runCli(['table', 'describe', ...JAVA_BUNNIES, '--json']),
    runCli(['table', 'snapshots', ...JAVA_BUNNIES, '--json']),
    runCli(['table', 'files', ...JAVA_BUNNIES, '--json']),
  ]);
  for (const r of [d, s, f]) assert.equal(r.code, 0, r.stderr);
  const desc = parseJson(d.stdout) as Obj;
  assert.equal(desc.location, 's3a://hyperparam-iceberg/java/bunnies');
  assert.equal(desc.formatVersion, 2);
  assert.equal((desc.schema as Obj).type, 'struct');
  assert.equal(((desc.schema as Obj).fields as Obj[]).length, 9);
  assert.deepEqual(Object.keys(desc.refs as Obj), ['main']);
  const snaps = parseJson(s.stdout) as Obj[];
  assert.equal(snaps.length, 3);
  assert.equal(snaps.find((x) => x.current === true)?.snapshotId, desc.currentSnapshotId);
  assert.equal(snaps[2]!.snapshotId, 9158179788527662767n);
  const files = parseJson(f.stdout) as Obj[];
  assert.deepEqual(files.map((x) => x.content).sort(), ['data', 'data', 'equality-deletes', 'position-deletes']);
  assert.deepEqual(files.find((x) => x.content === 'equality-deletes')?.equalityIds, [1]);
  assert.equal(files.filter((x) => x.content === 'data').reduce((n, x) => n + Number(x.records), 0), 22);

  const rename = parseJson((await runCli(['table', 'files', ...RENAME, '--json'])).stdout) as Obj[];
  assert.deepEqual(rename.map((x) => (x.partition as Obj).date).sort(), ['2022-01-01', '2022-01-02', null].sort());
});

test('cli fixtures: a table folder instead of its metadata file fails with a hint', { skip }, async () => {
  const r = await runCli(['table', 'scan', JAVA_BUNNIES[2]]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /is a folder: name a table by its \*\.metadata\.json file, e\.g\. .*v5\.metadata\.json/);
});
