// `mimir sql`: every table of a real lake (samples/workspace ingested with its
// deps, then edited and ingested twice more, so the state tables carry
// position deletes) reads through DuckDB exactly as `mimir table scan` reads
// it — count(*) and every row, as multisets of canonical JSON — at the
// current generation and two earlier ones; the same for the foreign fixtures
// of ../shared/fixtures/iceberg (every snapshot). The per-table comparison
// runs in process (one CLI process per table and generation would be slow);
// the CLI itself is run for its output formats, --as-of and its refusals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { icebergFixtures, repoRoot, scratch } from '../helpers.ts';
import { runCli, jsonLines } from './run-cli.ts';
import { Lake, openMetadataFile } from '../../src/lake/lake.ts';
import { identToString } from '../../src/lake/catalog/sql-catalog.ts';
import { SqlSession, jsValue } from '../../src/lake/sql/session.ts';
import { addLakeViews } from '../../src/lake/sql/lake-views.ts';
import { quoteIdent } from '../../src/lake/sql/view.ts';
import type { SnapshotSelector, Table } from '../../src/lake/table/table.ts';
import { displayValue } from '../../src/lake/spec/values.ts';
import { parseJson, stringifyJson, type Json } from '../../src/lake/spec/json.ts';

const work = scratch('mimir-cli-sql-');
const lakeDir = path.join(work.dir, 'lake');
const ws = path.join(work.dir, 'ws');

/** Canonical JSON of a row: keys sorted. */
function canonical(o: Record<string, unknown>): string {
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) sorted[k] = o[k];
  return stringifyJson(sorted);
}

/** `mimir table scan`'s rows (in process: the same scan and rendering), canonical and sorted. */
async function scanRows(table: Table, sel: SnapshotSelector = {}): Promise<string[]> {
  const out: string[] = [];
  for await (const b of table.scan(sel).batches()) {
    for (let i = 0; i < b.numRows; i++) {
      const o: Record<string, unknown> = {};
      b.fields.forEach((f, c) => {
        const v = b.columns[c]![i] ?? null;
        // a float is a float32: the scan hands an initial default over unrounded, DuckDB (rightly) as a float
        o[f.name] = f.type.type === 'float' && typeof v === 'number' ? Math.fround(v) : displayValue(f.type, v);
      });
      out.push(canonical(o));
    }
  }
  return out.sort();
}

/** Rows of a query through the session, canonical and sorted. */
async function sqlRows(session: SqlSession, sql: string): Promise<string[]> {
  const { columns, chunks } = await session.query(sql);
  const out: string[] = [];
  for await (const chunk of chunks) {
    for (const r of chunk) {
      const o: Record<string, unknown> = {};
      columns.forEach((c, i) => (o[c.name] = jsValue(r[i]!)));
      out.push(canonical(o));
    }
  }
  return out.sort();
}

async function sqlCount(session: SqlSession, view: string): Promise<bigint> {
  const { chunks } = await session.query(`select count(*) from ${view}`);
  for await (const chunk of chunks) return chunk[0]![0] as bigint;
  throw new Error('no row');
}

async function mimir(...args: string[]) {
  return runCli(['--lake', lakeDir, ...args]);
}

function ok(r: { code: number | null; stdout: string; stderr: string }): string {
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

const LIB = () => path.join(ws, 'crates', 'tally', 'src', 'lib.rs');

before(async () => {
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  ok(await mimir('ingest', ws, '--repo', 'demo', '--with-deps'));
  // an edit: a new function, a changed body; then another that removes the new function again
  const lib = readFileSync(LIB(), 'utf8');
  writeFileSync(LIB(), `${lib}\npub fn extra_sql_test(x: u32) -> u32 {\n    x + 1\n}\n`);
  ok(await mimir('ingest', ws, '--repo', 'demo'));
  writeFileSync(LIB(), `${lib.replace(/\{\n/, '{\n    // edited\n')}\npub fn other_sql_test() -> u64 {\n    7\n}\n`);
  ok(await mimir('ingest', ws, '--repo', 'demo'));
});

after(() => work.cleanup());

test('sql: every lake table reads as table scan does (count and rows), now and at two earlier generations', { timeout: 600_000 }, async () => {
  const lake = Lake.open(lakeDir, { readOnly: true });
  try {
    const now = lake.catalog.pointerGeneration();
    // the state tables carry position deletes after the edits: the view must apply them
    const nodes = await lake.loadTable({ namespace: ['mimir'], name: 'code_nodes' });
    assert.ok((await nodes.deleteFiles()).some((f) => f.file.content === 1), 'code_nodes has position delete files');
    const gens = [now, now - 2n, now - 5n];
    let compared = 0;
    for (const g of gens) {
      const session = await SqlSession.open();
      try {
        const { views } = await addLakeViews(session, lake, g);
        assert.ok(views.length >= 14, `lake tables at generation ${g}: ${views.length}`);
        for (const v of views) {
          const table = await lake.loadTable(v.ident, { generation: g });
          const expected = await scanRows(table);
          for (const n of v.names) {
            const name = n.schema === undefined ? quoteIdent(n.name) : `${quoteIdent(n.schema)}.${quoteIdent(n.name)}`;
            const label = `${identToString(v.ident)} as ${name} at generation ${g}`;
            assert.equal(await sqlCount(session, name), BigInt(expected.length), `count(*) of ${label}`);
            assert.deepEqual(await sqlRows(session, `select * from ${name}`), expected, `rows of ${label}`);
            compared++;
          }
        }
      } finally {
        session.close();
      }
    }
    assert.ok(compared >= 3 * 28, `views compared: ${compared}`);
  } finally {
    lake.close();
  }
});

test('sql cli: --json, --csv, aligned text, --as-of and --out agree with table scan', { timeout: 300_000 }, async () => {
  const lake = Lake.open(lakeDir, { readOnly: true });
  const g = lake.catalog.pointerGeneration() - 2n;
  lake.close();
  const scanNow = jsonLines(ok(await mimir('table', 'scan', 'lake:mimir.code_nodes')));
  const scanThen = jsonLines(ok(await mimir('table', 'scan', 'lake:mimir.code_nodes', '--generation', String(g))));
  assert.notEqual(scanNow.length, scanThen.length, 'the edit changed the item count');

  const j = jsonLines(ok(await mimir('sql', 'select count(*) as n from code_nodes', '--json')));
  assert.deepEqual(j, [`{"n":${scanNow.length}}`]);
  const jThen = jsonLines(ok(await mimir('sql', 'select count(*) as n from mimir.code_nodes', '--as-of', String(g), '--json')));
  assert.deepEqual(jThen, [`{"n":${scanThen.length}}`]);
  const all = jsonLines(ok(await mimir('sql', 'select * from code_nodes', '--json')));
  const canon = (ls: string[]) => ls.map((l) => canonical(parseJson(l) as Record<string, Json>)).sort();
  assert.deepEqual(canon(all), canon(scanNow));

  // a 64-bit value beyond 2^53 stays exact
  assert.deepEqual(jsonLines(ok(await mimir('sql', 'select 9007199254740993::BIGINT as big', '--json'))), ['{"big":9007199254740993}']);

  const csv = ok(await mimir('sql', "select 'a,b' as s, 3 as n union all select null, 4 order by n", '--csv'));
  assert.equal(csv, 's,n\n"a,b",3\n,4\n');
  const text = ok(await mimir('sql', "select 'x' as name, 12345 as n union all select 'longer', 7 order by n"));
  assert.equal(text, 'name        n\nlonger      7\nx       12345\n');

  const out = path.join(work.dir, 'out.parquet');
  ok(await mimir('sql', 'select id, krate from code_nodes', '--out', out));
  assert.ok(existsSync(out));
  const back = jsonLines(ok(await mimir('sql', 'select count(*) as n from code_nodes', '--json')));
  assert.deepEqual(back, [`{"n":${scanNow.length}}`]);
});

test('sql cli: statements that could write, and reads of other files, are refused; the lake is untouched', { timeout: 300_000 }, async () => {
  const before = ok(await mimir('table', 'list', '--json'));
  for (const stmt of [
    `copy (select 1) to '${path.join(lakeDir, 'x.parquet')}' (format parquet)`,
    `attach '${path.join(work.dir, 'x.db')}' as x`,
    'install httpfs',
    'load httpfs',
    'create table t as select 1',
    'set enable_external_access = true',
    'select 1; select 2',
  ]) {
    const r = await mimir('sql', stmt);
    assert.equal(r.code, 2, `${stmt}: ${r.stderr}`);
    assert.match(r.stderr, /nothing run/, stmt);
  }
  const r = await mimir('sql', "select * from read_csv('/etc/passwd')");
  assert.equal(r.code, 1);
  assert.match(r.stderr, /disabled by configuration/);
  assert.equal(existsSync(path.join(lakeDir, 'x.parquet')), false);
  assert.equal(existsSync(path.join(work.dir, 'x.db')), false);
  const inLake = await mimir('sql', 'select 1', '--out', path.join(lakeDir, 'y.parquet'));
  assert.equal(inLake.code, 1);
  assert.match(inLake.stderr, /inside the lake/);
  assert.equal(ok(await mimir('table', 'list', '--json')), before);
});

// ---- foreign tables ----------------------------------------------------------

const F = icebergFixtures ?? '';
const P = (rel: string): string => path.join(F, 'duckdb_iceberg_persistent', 'data', 'persistent', rel);
const FOREIGN: { label: string; meta: string; root?: string }[] = [
  { label: 'java bunnies', meta: path.join(F, 'icebird_java_bunnies/bunnies/metadata/v5.metadata.json'), root: path.join(F, 'icebird_java_bunnies/bunnies') },
  { label: 'spark bunnies', meta: path.join(F, 'icebird_spark_bunnies/bunnies/metadata/v5.metadata.json'), root: path.join(F, 'icebird_spark_bunnies/bunnies') },
  { label: 'rename column', meta: path.join(F, 'icebird_spark_rename_column/rename_column/metadata/v3.metadata.json'), root: path.join(F, 'icebird_spark_rename_column/rename_column') },
  { label: 'athena', meta: path.join(F, 'icebird_athena_example/example/metadata/00001-aaf0d033-d06b-43c7-be60-67f83abd4aca.metadata.json'), root: path.join(F, 'icebird_athena_example/example') },
  {
    label: 'pyiceberg defaults',
    meta: path.join(F, 'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json'),
    root: path.join(F, 'duckdb_pyiceberg_add_columns_with_defaults/default.db/add_columns_with_defaults'),
  },
  { label: 'persistent equality deletes', meta: P('equality_deletes/warehouse/mydb/mytable/metadata/v7.metadata.json') },
  { label: 'persistent equality deletes, partitioned', meta: P('equality_deletes/warehouse/mydb/mytable_partitioned/metadata/v6.metadata.json') },
  { label: 'persistent partition timestamptz', meta: P('partition_timestamptz/default.db/partition_timestamptz/metadata/00001-ffeadb58-2a9e-46ba-8b4f-f363f05de68c.metadata.json') },
  { label: 'persistent map stats (file://data/… paths)', meta: P('map_stats/default.db/map_stats/metadata/00002-0e059d4b-e5e8-41af-a763-76cbf3a3d0bc.metadata.json') },
  { label: 'persistent column mapping', meta: P('column_mapping/warehouse/default.db/my_table/metadata/00001-75643dae-a7a7-46ae-ab30-ea80d3793f3f.metadata.json') },
  { label: 'persistent null stats', meta: P('null_stats/default/test_nulls/metadata/00003-9d6a621e-8a72-4190-a880-f6ca02e32b86.metadata.json') },
  // fields added inside a struct with initial defaults: older files read them as the default
  { label: 'persistent struct defaults', meta: P('add_columns_with_defaults_in_struct/default.db/add_columns_with_defaults_in_struct/metadata/00003-21a957f9-c2ee-431a-9d18-bf257b561198.metadata.json') },
  // a name mapping, a column dropped and another of the same name added (a new field id)
  { label: 'persistent name mapping', meta: P('name_mapping/warehouse_1/mydb/t1/metadata/v7.metadata.json') },
];
const foreignSkip = icebergFixtures && existsSync(F) ? false : 'skipped: ../shared/fixtures/iceberg is absent';

test('sql: foreign fixture tables read as table scan does, at every snapshot', { skip: foreignSkip, timeout: 300_000 }, async () => {
  for (const fx of FOREIGN) {
    if (!existsSync(fx.meta)) assert.fail(`fixture ${fx.label}: ${fx.meta} is missing`);
    const table = await openMetadataFile(fx.meta, fx.root === undefined ? {} : { locationRoot: fx.root });
    const sels: SnapshotSelector[] = [{}, ...table.metadata.snapshots.map((s) => ({ snapshotId: s.snapshotId }))];
    for (const sel of sels) {
      const snap = table.snapshot(sel);
      // a fixture keeps the manifest lists of its newest snapshots only
      if (snap && !existsSync((table.io as unknown as { local(p: string): string }).local(snap.manifestList))) continue;
      const session = await SqlSession.open();
      try {
        await session.addTable([{ name: 't' }], table, sel);
        const expected = await scanRows(table, sel);
        const label = `${fx.label} at ${sel.snapshotId ?? 'current'}`;
        assert.equal(await sqlCount(session, 't'), BigInt(expected.length), `count(*) of ${label}`);
        assert.deepEqual(await sqlRows(session, 'select * from t'), expected, `rows of ${label}`);
      } finally {
        session.close();
      }
    }
  }
});

test('sql cli: --table NAME=metadata.json with --location-root, no lake needed', { skip: foreignSkip, timeout: 120_000 }, async () => {
  const fx = FOREIGN[0]!;
  const r = await runCli(['--lake', path.join(work.dir, 'no-lake'), 'sql', '--table', `bunnies=${fx.meta}`, '--location-root', `bunnies=${fx.root}`, 'select count(*) as n from bunnies', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(jsonLines(r.stdout), ['{"n":15}']);
});
