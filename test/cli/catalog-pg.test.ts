// `--catalog postgresql://…` / $MIMIR_CATALOG: a lake whose catalog is a
// PostgreSQL database (a throwaway server, test/pg.ts) while its files stay in
// the --lake folder. The real CLI ingests the sample workspace with its
// dependencies and answers `callers` exactly as the same lake with the
// embedded SQLite catalog does; a server that cannot be reached is named
// (password hidden) with what was not done.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import pg from 'pg';
import { scratch } from '../helpers.ts';
import { needPostgres, type PgServer } from '../pg.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-catalog-pg-');
let server: PgServer | undefined;
before(async () => {
  server = await needPostgres();
});
after(() => {
  server?.stop();
  work.cleanup();
});

const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};

test('--catalog postgresql://: ingest --with-deps and callers give the SQLite lake\'s answers; the catalog rows are in PostgreSQL, no catalog.db in the folder', { timeout: 600_000 }, async (t) => {
  if (server === undefined) {
    t.skip('PostgreSQL could not be started (see the message above)');
    return;
  }
  const uri = await server.database('cli');
  const pgLake = path.join(work.dir, 'lake-pg');
  const sqLake = path.join(work.dir, 'lake-sqlite');
  const ingest = ['ingest', 'samples/workspace', '--repo', 'sample', '--with-deps'];
  ok(await runCli([...ingest, '--lake', pgLake, '--catalog', uri]));
  ok(await runCli([...ingest, '--lake', sqLake]));
  assert.equal(existsSync(path.join(pgLake, 'catalog.db')), false, 'no SQLite catalog beside the files');
  assert.equal(existsSync(path.join(pgLake, 'mimir')), true, 'the table files are in the lake folder');

  const fromPg = ok(await runCli(['callers', 'fnvish::hash_str', '--lake', pgLake, '--catalog', uri]));
  const fromSqlite = ok(await runCli(['callers', 'fnvish::hash_str', '--lake', sqLake]));
  assert.notEqual(fromSqlite.stdout, '');
  assert.equal(fromPg.stdout, fromSqlite.stdout);
  assert.equal(fromPg.stderr, fromSqlite.stderr);
  // $MIMIR_CATALOG says the same as --catalog
  const fromEnv = ok(await runCli(['callers', 'fnvish::hash_str', '--lake', pgLake], { env: { MIMIR_CATALOG: uri } }));
  assert.equal(fromEnv.stdout, fromSqlite.stdout);

  const c = new pg.Client({ connectionString: uri });
  await c.connect();
  try {
    const tables = await c.query(`SELECT count(*)::int AS n FROM iceberg_tables WHERE catalog_name = 'mimir'`);
    assert.ok((tables.rows[0] as { n: number }).n >= 8, 'the lake\'s tables are registered in PostgreSQL');
    const gens = await c.query(`SELECT max(generation)::text AS g FROM mimir_generations`);
    assert.match(fromPg.stderr, new RegExp(`at generation ${(gens.rows[0] as { g: string }).g}\\n`));
  } finally {
    await c.end();
  }
});

test('--catalog: a server that cannot be reached is named, without its password, and nothing is done', { timeout: 120_000 }, async () => {
  const r = await runCli(['callers', 'fnvish::hash_str', '--lake', path.join(work.dir, 'nowhere'), '--catalog', 'postgresql://bob:s3cret@127.0.0.1:1/lake']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot connect to the PostgreSQL catalog at postgresql:\/\/bob:\*\*\*@127\.0\.0\.1:1\/lake: .*ECONNREFUSED.* — nothing read or written/);
  assert.doesNotMatch(r.stderr, /s3cret/);
});
