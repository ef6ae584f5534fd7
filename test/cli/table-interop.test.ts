// Interop through the real `mimir` CLI: a table partitioned by values that
// need escaping (ü + ✓ : % and a binary truncate encoding to '/') whose
// manifest paths DuckDB reads as they are and which reads again after `cp -a`;
// a PyIceberg catalog (V0 layout, catalog name `default`) listed and read by
// every read-only command with its bytes unchanged; and a foreign commit (a
// raw SQL UPDATE of metadata_location, as PyIceberg commits) that `log
// generations` records as a generation and `--generation` reads.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergFixtures, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { localPath } from '../../src/lake/io/paths.ts';
import { jsonLines, runCli } from './run-cli.ts';

const work = scratch('mimir-cli-interop-');
after(work.cleanup);
type Obj = { [k: string]: Json };
const sha = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');

async function ok(args: string[], opts: Parameters<typeof runCli>[1] = {}): Promise<string> {
  const r = await runCli(args, opts);
  assert.equal(r.code, 0, `mimir ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 's', required: true, type: 'string' },
    { id: 2, name: 'b', required: true, type: 'binary' },
    { id: 3, name: 'n', required: true, type: 'int' },
  ],
};
const VALUES = ['ü', '+', '✓', ':', '%'];

test('cli interop: escaped partition folders are literal; DuckDB reads the manifest paths as they are; cp -a of the lake reads every row', async () => {
  const lake = path.join(work.dir, 'esc');
  const schemaFile = path.join(work.dir, 'esc-schema.json');
  const rowsFile = path.join(work.dir, 'esc.jsonl');
  writeFileSync(schemaFile, JSON.stringify(SCHEMA));
  // b = ff ff ff ..: its 3-byte truncation is base64 "////", a partition value made of '/'
  writeFileSync(rowsFile, VALUES.map((s, n) => JSON.stringify({ s, b: `ffffff${String(n).padStart(2, '0')}`, n })).join('\n') + '\n');
  await ok(['table', 'append', 'lake:x.esc', '--schema', schemaFile, '--partition-by', 's', '--partition-by', 'truncate[3](b)', '--jsonl', rowsFile], { lake });

  const files = parseJson(await ok(['table', 'files', 'lake:x.esc', '--json'], { lake })) as Obj[];
  assert.equal(files.length, VALUES.length);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const seen: string[] = [];
  for (const f of files) {
    const p = f.path as string;
    assert.match(p, /\/data\/s=(%C3%BC|%2B|%E2%9C%93|%3A|%25)\/b_trunc=%2F%2F%2F%2F\/[^/]+\.parquet$/, p);
    const rows = (await c.runAndReadAll(`SELECT s FROM read_parquet('${p.replaceAll("'", "''")}', hive_partitioning = false)`)).getRows();
    seen.push(...rows.map((r) => r[0] as string));
  }
  c.closeSync();
  assert.deepEqual(seen.sort(), [...VALUES].sort(), 'DuckDB read every row from the paths exactly as the manifests hold them');

  const copy = path.join(work.dir, 'esc-copy');
  execFileSync('cp', ['-a', lake, copy]);
  execFileSync('rm', ['-rf', lake]);
  const meta = readdirSync(path.join(copy, 'x', 'esc', 'metadata')).filter((n) => n.endsWith('.metadata.json')).sort().pop()!;
  const scanned = jsonLines(await ok(['table', 'scan', path.join(copy, 'x', 'esc', 'metadata', meta), '--location-root', path.join(copy, 'x', 'esc')]));
  assert.deepEqual(scanned.map((l) => (parseJson(l) as Obj).s).sort(), [...VALUES].sort());
  const one = jsonLines(await ok(['table', 'scan', path.join(copy, 'x', 'esc', 'metadata', meta), '--location-root', path.join(copy, 'x', 'esc'), '--where', 's=✓']));
  assert.deepEqual(one.map((l) => (parseJson(l) as Obj).n), [2]);
});

const PY = icebergFixtures ? path.join(icebergFixtures, 'duckdb_iceberg_persistent') : '';
const pySkip = PY && existsSync(PY) ? false : 'skipped: ../shared/fixtures/iceberg/duckdb_iceberg_persistent is absent';

test('cli interop: a PyIceberg catalog copy — table list --catalog-name default lists it; no read-only command changes its bytes', { skip: pySkip }, async () => {
  const dir = path.join(work.dir, 'pycat');
  mkdirSync(dir);
  const file = path.join(dir, 'pyiceberg_catalog.db');
  copyFileSync(path.join(PY, 'data', 'persistent', 'partition_timestamptz', 'pyiceberg_catalog.db'), file);
  const before = sha(file);
  // its metadata locations are relative to duckdb-iceberg's root: run from there, as PyIceberg and DuckDB do
  const at = { cwd: PY };
  const check = (what: string): void => assert.equal(sha(file), before, `${what} left the catalog file byte for byte as it was`);

  const plain = await ok(['table', 'list', '--lake', file], at);
  assert.match(plain, /catalog 'mimir'\): 0 namespaces, 0 tables/);
  assert.match(plain, /also holds catalog 'default' \(choose with --catalog-name\)/);
  check('table list');
  const listed = parseJson(await ok(['table', 'list', '--lake', file, '--catalog-name', 'default', '--json'], at)) as Obj;
  assert.equal(listed.catalog, 'default');
  assert.deepEqual((listed.namespaces as Obj[]).map((ns) => [ns.namespace, (ns.tables as Obj[]).map((t) => t.table)]), [['default', ['lake:default.partition_timestamptz']]]);
  check('table list --catalog-name default');
  // the same through the environment and a folder lake whose catalog.db is the copy
  const folder = path.join(work.dir, 'pyfolder');
  mkdirSync(folder);
  copyFileSync(file, path.join(folder, 'catalog.db'));
  const viaEnv = parseJson(await ok(['table', 'list', '--json'], { ...at, lake: folder, env: { MIMIR_CATALOG_NAME: 'default' } })) as Obj;
  assert.equal(((viaEnv.namespaces as Obj[])[0]!.tables as Obj[]).length, 1);
  writeFileSync(path.join(folder, 'mimir.toml'), '[catalog]\nname = "default"\n');
  const viaSetting = parseJson(await ok(['table', 'list', '--json'], { ...at, lake: folder })) as Obj;
  assert.equal(viaSetting.catalog, 'default', 'the lake setting (mimir.toml) names the catalog');
  assert.equal(sha(path.join(folder, 'catalog.db')), before);

  const T = 'lake:default.partition_timestamptz';
  const args = ['--lake', file, '--catalog-name', 'default'];
  const rows = jsonLines(await ok(['table', 'scan', T, ...args], at));
  assert.equal(rows.length, 2);
  check('table scan');
  const f = jsonLines(await ok(['table', 'scan', T, ...args, '--where', 'partition_col=2023-05-15T14:30:45Z'], at));
  assert.deepEqual(f.map((l) => (parseJson(l) as Obj).user_id), [12345]);
  check('table scan --where');
  for (const cmd of [['table', 'describe', T], ['table', 'snapshots', T], ['table', 'files', T], ['table', 'scan', T, '--generation', '0'], ['log', 'generations']]) {
    await ok([...cmd, ...args], at);
    check(cmd.slice(0, 2).join(' '));
  }
  const ls = readdirSync(dir);
  assert.deepEqual(ls, ['pyiceberg_catalog.db'], 'no journal, WAL or shared-memory file was left beside it');
});

test('cli interop: a foreign commit (raw SQL UPDATE of metadata_location) is shown by log generations and read by --generation', async () => {
  const lake = path.join(work.dir, 'fc');
  const schemaFile = path.join(work.dir, 'fc-schema.json');
  writeFileSync(schemaFile, JSON.stringify({ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }));
  await ok(['table', 'append', 'lake:f.t', '--schema', schemaFile, '--jsonl', '-'], { lake, input: '{"id": 1}\n{"id": 2}\n' });
  const before = parseJson(await ok(['log', 'generations', '--json'], { lake })) as Obj[];
  const head = before[0]!.generation as number;

  // another engine: Mimir's table API writes its new metadata file through a second catalog (a copy),
  // then the pointer of this lake's catalog is moved with the SQL catalog's compare-and-swap
  const other = path.join(work.dir, 'fc-other');
  mkdirSync(other);
  const src = new Database(path.join(lake, 'catalog.db'));
  await src.backup(path.join(other, 'catalog.db'));
  const old = (src.prepare(`SELECT metadata_location AS m FROM iceberg_tables WHERE table_name = 't'`).get() as { m: string }).m;
  src.close();
  await ok(['table', 'append', 'lake:f.t', '--jsonl', '-'], { lake: other, input: '{"id": 3}\n' });
  const probe = new Database(path.join(other, 'catalog.db'), { readonly: true });
  const next = (probe.prepare(`SELECT metadata_location AS m FROM iceberg_tables WHERE table_name = 't'`).get() as { m: string }).m;
  probe.close();
  assert.notEqual(next, old);
  assert.ok(existsSync(localPath(next)), 'the new metadata file sits in the table folder of the first lake');
  const raw = new Database(path.join(lake, 'catalog.db'));
  const moved = raw
    .prepare(`UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`)
    .run(next, old, 'mimir', 'f', 't', old);
  raw.close();
  assert.equal(moved.changes, 1);

  const gens = parseJson(await ok(['log', 'generations', '--json'], { lake })) as Obj[];
  assert.equal(gens[0]!.generation, head + 1);
  assert.equal(gens[0]!.foreign, true);
  assert.deepEqual(gens[0]!.tables, [{ table: 'f.t', dropped: false }]);
  assert.equal(gens[1]!.foreign, false);
  const text = await ok(['log', 'generations'], { lake });
  assert.match(text, new RegExp(`${head + 1} \\(foreign\\)\\s+\\S+\\s+foreign commit: f\\.t`));
  const again = parseJson(await ok(['log', 'generations', '--json'], { lake })) as Obj[];
  assert.equal(again.length, gens.length, 'recorded once');

  const ids = async (gen: number): Promise<Json[]> =>
    jsonLines(await ok(['table', 'scan', 'lake:f.t', '--generation', String(gen)], { lake })).map((l) => (parseJson(l) as Obj).id!).sort();
  assert.deepEqual(await ids(head + 1), [1, 2, 3]);
  assert.deepEqual(await ids(head), [1, 2]);
  // Mimir builds on the foreign state with its next commit
  await ok(['table', 'append', 'lake:f.t', '--jsonl', '-'], { lake, input: '{"id": 4}\n' });
  assert.deepEqual(await ids(head + 2), [1, 2, 3, 4]);
});
