// How a PostgreSQL catalog commit should serialise: the catalog's statements
// (lake/catalog/pg/store.ts) under two disciplines, on a throwaway server
// (test/pg.ts), with N connections committing at once, each to its own table
// (no pointer conflicts: only the shared generation counter is contended):
// - rowlock: READ COMMITTED, `SELECT … FOR UPDATE` on the catalog row first
//   (what store.ts does): the second committer waits, nothing is aborted;
// - serializable: SERIALIZABLE without the lock, the whole transaction
//   retried on 40001 (serialization failure).
// Prints commits/s and aborted attempts for each. Usage:
//   node --import tsx bench/catalog-pg.ts [connections=4] [commits=100]
import pg from 'pg';
import { startPostgres } from '../test/pg.ts';
import { PG_DDL, T } from '../src/lake/catalog/schema.ts';

const conns = Number(process.argv[2] ?? 4);
const commits = Number(process.argv[3] ?? 100);
const NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

async function commitOnce(c: pg.Client, mode: 'rowlock' | 'serializable', table: string, i: number): Promise<number> {
  for (let aborted = 0; ; aborted++) {
    try {
      await c.query(mode === 'rowlock' ? 'BEGIN' : 'BEGIN ISOLATION LEVEL SERIALIZABLE');
      if (mode === 'rowlock') await c.query(`SELECT generation FROM ${T.catalog} WHERE catalog_name = 'mimir' FOR UPDATE`);
      const cur = await c.query(`SELECT metadata_location FROM ${T.tables} WHERE catalog_name = 'mimir' AND table_namespace = 'b' AND table_name = $1`, [table]);
      const expected = String(cur.rows[0].metadata_location);
      const r = await c.query(
        `UPDATE ${T.tables} SET metadata_location = $2, previous_metadata_location = $3 WHERE catalog_name = 'mimir' AND table_namespace = 'b' AND table_name = $1 AND metadata_location = $3`,
        [table, `${table}-${i}`, expected],
      );
      if (r.rowCount !== 1) throw new Error('unexpected CAS conflict');
      const g = await c.query(
        `UPDATE ${T.catalog} SET generation = generation + 1, last_time_ms = GREATEST(last_time_ms, ${NOW}) WHERE catalog_name = 'mimir' RETURNING generation, last_time_ms`,
      );
      const gen = String(g.rows[0].generation);
      await c.query(`INSERT INTO ${T.generations} (catalog_name, generation, time_ms, note) VALUES ('mimir', $1, $2, 'bench')`, [gen, String(g.rows[0].last_time_ms)]);
      await c.query(
        `INSERT INTO ${T.log} (catalog_name, generation, table_namespace, table_name, metadata_location, previous_metadata_location) VALUES ('mimir', $1, 'b', $2, $3, $4)`,
        [gen, table, `${table}-${i}`, expected],
      );
      await c.query('COMMIT');
      return aborted;
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      if ((e as { code?: string }).code !== '40001') throw e;
    }
  }
}

async function run(uri: string, mode: 'rowlock' | 'serializable'): Promise<void> {
  const setup = new pg.Client({ connectionString: uri });
  await setup.connect();
  for (const ddl of PG_DDL) await setup.query(ddl);
  await setup.query(`INSERT INTO ${T.catalog} VALUES ('mimir', 0, 0, 1)`);
  for (let k = 0; k < conns; k++) {
    await setup.query(`INSERT INTO ${T.tables} (catalog_name, table_namespace, table_name, metadata_location) VALUES ('mimir', 'b', $1, 'start')`, [`t${k}`]);
  }
  const clients = await Promise.all(
    Array.from({ length: conns }, async () => {
      const c = new pg.Client({ connectionString: uri });
      await c.connect();
      return c;
    }),
  );
  const t0 = process.hrtime.bigint();
  const aborted = await Promise.all(
    clients.map(async (c, k) => {
      let a = 0;
      for (let i = 0; i < commits; i++) a += await commitOnce(c, mode, `t${k}`, i);
      return a;
    }),
  );
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const gens = await setup.query(`SELECT count(*) AS n, count(DISTINCT generation) AS d, max(generation) AS m FROM ${T.generations}`);
  console.log(
    `${mode.padEnd(12)} ${conns} connections x ${commits} commits: ${((conns * commits) / s).toFixed(0)} commits/s, ` +
      `${aborted.reduce((x, y) => x + y, 0)} attempts aborted and retried; generations ${gens.rows[0].n} rows, ${gens.rows[0].d} distinct, max ${gens.rows[0].m}`,
  );
  await Promise.all(clients.map((c) => c.end()));
  await setup.end();
}

const server = await startPostgres();
if (!('port' in server)) throw new Error(`no PostgreSQL: ${server.reason}`);
try {
  for (const mode of ['rowlock', 'serializable', 'rowlock', 'serializable'] as const) await run(await server.database(mode), mode);
} finally {
  server.stop();
}
