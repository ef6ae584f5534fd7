// `mimir table` on a real lake in a scratch folder, run as a real child
// process: append + scan round trips (longs beyond 2^53 exact), filters,
// projections, time travel by generation and snapshot, --json output, and
// the exit codes (2 usage, 1 failure with the message on stderr only).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { jsonLines, runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-');
after(work.cleanup);
type Obj = { [k: string]: Json };

const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'day', required: false, type: 'date' },
    { id: 4, name: 'score', required: false, type: 'double' },
    { id: 5, name: 'tags', required: false, type: { type: 'list', 'element-id': 6, element: 'string', 'element-required': false } },
  ],
};
const BIG = '9007199254740993'; // 2^53 + 1: a JS number would print ...992
const MAX = '9223372036854775807';

const ok = (r: CliResult): void => assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);

let n = 0;
function lakeDir(): string {
  return path.join(work.dir, `lake-${n++}`);
}
function file(name: string, text: string): string {
  const p = path.join(work.dir, name);
  writeFileSync(p, text);
  return p;
}
const schemaFile = file('schema.json', JSON.stringify(SCHEMA));
const rows1 = file(
  'rows1.jsonl',
  [
    `{"id": ${BIG}, "name": "big", "day": "2024-05-01", "score": 1.5, "tags": ["a", "b"]}`,
    `{"id": ${MAX}, "name": "max", "day": "2024-05-02", "score": null}`,
    '',
    `{"id": 7, "name": "seven", "tags": []}`,
  ].join('\n') + '\n',
);

test('cli: append creates the table from --schema, scan returns every row with longs exact', async () => {
  const lake = lakeDir();
  const a = await runCli(['table', 'append', 'lake:t.rows', '--schema', schemaFile, '--jsonl', rows1], { lake });
  assert.equal(a.code, 0, a.stderr);
  assert.match(a.stdout, /^created lake:t\.rows from .*; appended 3 rows to lake:t\.rows: 1 data file .*snapshot \d+, lake generation 2, \d+ ms\n$/);

  const s = await runCli(['table', 'scan', 'lake:t.rows'], { lake });
  assert.equal(s.code, 0, s.stderr);
  assert.equal(s.stderr, '', 'no report on a non-terminal stderr without --stats');
  const lines = jsonLines(s.stdout);
  assert.equal(lines.length, 3);
  assert.ok(lines.includes(`{"id":${BIG},"name":"big","day":"2024-05-01","score":1.5,"tags":["a","b"]}`), s.stdout);
  assert.ok(lines.includes(`{"id":${MAX},"name":"max","day":"2024-05-02","score":null,"tags":null}`), s.stdout);
  assert.ok(lines.includes('{"id":7,"name":"seven","day":null,"score":null,"tags":[]}'), s.stdout);
});

test('cli: --where (ANDed, on a long beyond 2^53), --columns, --limit, --stats', async () => {
  const lake = lakeDir();
  ok(await runCli(['table', 'append', 'lake:t.rows', '--schema', schemaFile, '--jsonl', rows1], { lake }));
  const [eqBig, range, cols, limited] = await Promise.all([
    runCli(['table', 'scan', 'lake:t.rows', '--where', `id=${BIG}`, '--columns', 'name,id'], { lake }),
    runCli(['table', 'scan', 'lake:t.rows', '--where', 'day>=2024-05-01', '--where', 'name!=max', '--columns', 'name', '--stats'], { lake }),
    runCli(['table', 'scan', 'lake:t.rows', '-c', 'name', '-c', 'day', '-w', 'day~null'], { lake }),
    runCli(['table', 'scan', 'lake:t.rows', '--limit', '1', '--columns', 'id'], { lake }),
  ]);
  assert.equal(eqBig.stdout, `{"name":"big","id":${BIG}}\n`, eqBig.stderr);
  assert.equal(range.stdout, '{"name":"big"}\n', range.stderr);
  assert.match(range.stderr, /^scan lake:t\.rows \(snapshot \d+\): 1 row; data files 1 read, 0 skipped of 1; row groups 1 read, 0 skipped; \d+ ms\n$/);
  assert.equal(cols.stdout, '{"name":"seven","day":null}\n', cols.stderr);
  assert.equal(jsonLines(limited.stdout).length, 1);
});

test('cli: a second append lands in a new snapshot; --generation and --snapshot read the first', async () => {
  const lake = lakeDir();
  ok(await runCli(['table', 'append', 'lake:t.rows', '--schema', schemaFile, '--jsonl', rows1], { lake }));
  // from stdin, no --schema needed now that the table exists
  const a2 = await runCli(['table', 'append', 'lake:t.rows', '--jsonl', '-', '--json'], { lake, input: '{"id": 8, "name": "eight"}\n' });
  assert.equal(a2.code, 0, a2.stderr);
  const rep = parseJson(a2.stdout) as Obj;
  assert.equal(rep.created, false);
  assert.equal(rep.rows, 1);
  assert.equal(rep.generation, 3);
  assert.equal(typeof rep.snapshotId === 'bigint' || typeof rep.snapshotId === 'number', true);

  const [now, atGen2, snaps, desc] = await Promise.all([
    runCli(['table', 'scan', 'lake:t.rows', '--columns', 'id'], { lake }),
    runCli(['table', 'scan', 'lake:t.rows', '--columns', 'id', '--generation', '2'], { lake }),
    runCli(['table', 'snapshots', 'lake:t.rows', '--json'], { lake }),
    runCli(['table', 'describe', 'lake:t.rows', '--json'], { lake }),
  ]);
  assert.equal(jsonLines(now.stdout).length, 4);
  assert.equal(jsonLines(atGen2.stdout).length, 3, atGen2.stderr);
  const list = parseJson(snaps.stdout) as Obj[];
  assert.equal(list.length, 2);
  assert.equal(list[1]!.parentSnapshotId, list[0]!.snapshotId);
  assert.equal(list[1]!.snapshotId, rep.snapshotId, 'ids exact across commands');
  assert.equal(list[1]!.totalRecords, 4);
  const d = parseJson(desc.stdout) as Obj;
  assert.equal(d.currentSnapshotId, rep.snapshotId);
  assert.equal(d.formatVersion, 2);
  assert.deepEqual(
    ((d.schema as Obj).fields as Obj[]).map((f) => [f.id, f.name, f.type]),
    SCHEMA.fields.map((f) => [f.id, f.name, f.type]),
    'describe --json prints the schema in Iceberg JSON, ids as given by the schema file',
  );
  const first = await runCli(['table', 'scan', 'lake:t.rows', '--snapshot', String(list[0]!.snapshotId), '--columns', 'id'], { lake });
  assert.equal(jsonLines(first.stdout).length, 3, first.stderr);
});

test('cli: create --partition-by, then files --json shows partition values; list shows the table', async () => {
  const lake = lakeDir();
  const c = await runCli(['table', 'create', 'lake:p.parts', '--schema', schemaFile, '--partition-by', 'day(day)', '--property', 'owner=cli-test'], { lake });
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stdout, /created lake:p\.parts \(5 columns, partitioned by day_day\)/);
  const again = await runCli(['table', 'create', 'lake:p.parts', '--schema', schemaFile], { lake });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already exists/);
  ok(await runCli(['table', 'append', 'lake:p.parts', '--jsonl', rows1], { lake }));
  const [files, list, desc] = await Promise.all([
    runCli(['table', 'files', 'lake:p.parts', '--json'], { lake }),
    runCli(['table', 'list', '--json'], { lake }),
    runCli(['table', 'describe', 'lake:p.parts'], { lake }),
  ]);
  const fs = parseJson(files.stdout) as Obj[];
  assert.deepEqual(fs.map((f) => (f.partition as Obj).day_day).sort(), ['2024-05-01', '2024-05-02', null].sort());
  assert.equal(fs.reduce((s, f) => s + Number(f.records), 0), 3);
  const l = parseJson(list.stdout) as Obj;
  assert.deepEqual((l.namespaces as Obj[]).map((x) => [x.namespace, (x.tables as Obj[]).map((t) => t.table)]), [['p', ['lake:p.parts']]]);
  assert.match(desc.stdout, /partition\s+spec 0: day\(day\) as day_day \[1000\]/);
  assert.match(desc.stdout, /owner = cli-test/);
});

test('cli: a bad line fails with file:line on stderr and creates nothing', async () => {
  const lake = lakeDir();
  const bad = file('bad.jsonl', '{"id": "x1"}\n');
  const r = await runCli(['table', 'append', 'lake:t.bad', '--schema', schemaFile, '--jsonl', bad], { lake });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /bad\.jsonl:1: column "id": expected a long value/);
  const unknown = file('unknown.jsonl', '{"id": 1, "nmae": "typo"}\n');
  const u = await runCli(['table', 'append', 'lake:t.bad', '--schema', schemaFile, '--jsonl', unknown], { lake });
  assert.equal(u.code, 1);
  assert.match(u.stderr, /no column "nmae"/);
  const s = await runCli(['table', 'scan', 'lake:t.bad'], { lake });
  assert.equal(s.code, 1, 'the table was never created');
});

test('cli: a missing table or lake exits 1 with a message on stderr and nothing on stdout', async () => {
  const lake = lakeDir();
  ok(await runCli(['table', 'create', 'lake:t.here', '--schema', schemaFile], { lake }));
  const results = await Promise.all([
    runCli(['table', 'scan', 'lake:t.nope'], { lake }),
    runCli(['table', 'describe', 'lake:t.nope', '--json'], { lake }),
    runCli(['table', 'list'], { lake: path.join(work.dir, 'no-such-lake') }),
    runCli(['table', 'append', 'lake:t.nope', '--jsonl', rows1], { lake }),
    runCli(['table', 'scan', path.join(work.dir, 'nope.metadata.json')], { lake }),
  ]);
  for (const r of results) {
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^mimir table \w+: /);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace without MIMIR_DEBUG=1');
  }
  assert.match(results[0]!.stderr, /t\.nope does not exist/);
  assert.match(results[3]!.stderr, /give --schema FILE to create it/);
});

test('cli: usage errors exit 2 with a hint to --help; --help exits 0', async () => {
  const lake = lakeDir();
  const usage = await Promise.all([
    runCli([], { lake }),
    runCli(['frob'], { lake }),
    runCli(['table', 'frob'], { lake }),
    runCli(['table', 'scan'], { lake }),
    runCli(['table', 'scan', 'lake:t.x', '--bogus'], { lake }),
    runCli(['table', 'scan', 'lake:t.x', '--limit', 'many'], { lake }),
    runCli(['table', 'scan', 'lake:t.x', '--where', 'no operator'], { lake }),
    runCli(['table', 'scan', 'lake:t.x', '--snapshot', '1', '--as-of', '2024-01-01'], { lake }),
    runCli(['table', 'scan', 't.x'], { lake }),
    runCli(['table', 'append', 'lake:t.x'], { lake }),
    runCli(['table', 'scan', 'lake:t.x', '--columns'], { lake }),
  ]);
  for (const r of usage) {
    assert.equal(r.code, 2, `${r.stderr}`);
    assert.equal(r.stdout, '');
  }
  assert.match(usage[2]!.stderr, /unknown command "frob".*\nRun 'mimir table --help' for usage\./);
  assert.match(usage[4]!.stderr, /unknown option --bogus\nRun 'mimir table scan --help' for usage\./);
  assert.match(usage[8]!.stderr, /lake:t\.x/);
  const help = await Promise.all([runCli(['--help']), runCli(['table', '--help']), runCli(['table', 'scan', '--help']), runCli(['table', 'append', 'lake:x.y', '-h'])]);
  for (const r of help) assert.equal(r.code, 0, r.stderr);
  assert.match(help[0]!.stdout, /table\s+generic Iceberg tools/);
  assert.match(help[1]!.stdout, /scan\s+rows as JSON Lines/);
  assert.match(help[2]!.stdout, /--where FILTER/);
  assert.match(help[3]!.stdout, /--jsonl FILE/);
});
