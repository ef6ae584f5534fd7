// The Catalog interface's promises, one test body run against both
// implementations: SQLite (a file per case) and PostgreSQL (a throwaway server
// started by this file, a database per case; test/pg.ts). Pointers CAS,
// multi-table commits all or nothing, the generation log and pointersAt,
// commit keys CAS, leases (live, expired, swept; a dead machine's lease
// expires), and several real processes committing at once, each with its own
// connection: no update lost, every generation distinct.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CommitConflictError, KeyConflictError, identToString, type Catalog, type TableIdent } from '../../src/lake/catalog/catalog.ts';
import { openCatalog } from '../../src/lake/catalog/open.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { needPostgres, type PgServer } from '../pg.ts';

const tmp = scratch('mimir-catalog-matrix-');
let server: PgServer | undefined;
before(async () => {
  server = await needPostgres();
});
after(() => {
  server?.stop();
  tmp.cleanup();
});

const t1: TableIdent = { namespace: ['mimir'], name: 't1' };
const t2: TableIdent = { namespace: ['mimir'], name: 't2' };
const childScript = path.join(repoRoot, 'test', 'lake', 'catalog-child.ts');

/** One implementation: where a new catalog is, and raw SQL on it (for what the interface does not show). */
interface Backend {
  kind: 'sqlite' | 'postgresql';
  /** The location of a new, empty catalog (a file path or a URI). */
  fresh(label: string): Promise<string>;
  /** Rows of a query on the catalog's store, bypassing Mimir ('?' placeholders). */
  raw(location: string, sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

let n = 0;
const sqlite: Backend = {
  kind: 'sqlite',
  fresh: (label) => Promise.resolve(path.join(tmp.dir, `${label}-${n++}`, 'catalog.db')),
  raw: (location, sql, params = []) => {
    const db = new Database(location);
    try {
      db.defaultSafeIntegers(true);
      const st = db.prepare(sql);
      return Promise.resolve(st.reader ? (st.all(...params) as Record<string, unknown>[]) : (st.run(...params), []));
    } finally {
      db.close();
    }
  },
};
const postgres: Backend = {
  kind: 'postgresql',
  fresh: (label) => {
    if (server === undefined) throw new Error('no PostgreSQL server');
    return server.database(label);
  },
  raw: async (location, sql, params = []) => {
    let i = 0;
    const c = new pg.Client({ connectionString: location });
    await c.connect();
    try {
      return (await c.query(sql.replace(/\?/g, () => `$${++i}`), params)).rows as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  },
};

/** `name` for both backends; the PostgreSQL one is skipped (loudly, by needPostgres) when no server could start. */
function matrix(name: string, body: (b: Backend, t: { diagnostic(m: string): void }) => Promise<void>): void {
  for (const b of [sqlite, postgres]) {
    test(`[${b.kind}] ${name}`, { timeout: 600_000 }, async (t) => {
      if (b.kind === 'postgresql' && server === undefined) {
        t.skip('PostgreSQL could not be started (see the message above)');
        return;
      }
      await body(b, t);
    });
  }
}

async function withCatalog(b: Backend, label: string, fn: (cat: Catalog, location: string) => Promise<void> | void): Promise<void> {
  const location = await b.fresh(label);
  const cat = openCatalog(location);
  try {
    assert.equal(cat.kind, b.kind);
    await fn(cat, location);
  } finally {
    cat.close();
  }
}

matrix('pointers: CAS moves a pointer and bumps the generation (a bigint); a stale expected location changes nothing', (b) =>
  withCatalog(b, 'cas', (cat) => {
    assert.equal(cat.pointerGeneration(), 0n);
    cat.createNamespace(['mimir']);
    assert.equal(cat.commit([{ ident: t1, expected: null, next: 'v0' }], 'create'), 1n);
    const g = cat.commit([{ ident: t1, expected: 'v0', next: 'v1' }], 'append');
    assert.equal(g, 2n);
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'v1', previousMetadataLocation: 'v0' });
    assert.throws(
      () => cat.commit([{ ident: t1, expected: 'v0', next: 'v2' }]),
      (e: unknown) => e instanceof CommitConflictError && e.expected === 'v0' && e.actual === 'v1' && /mimir\.t1/.test(e.message),
    );
    assert.throws(() => cat.commit([{ ident: t2, expected: 'gone', next: 'v9' }]), /found \(no table\)/);
    assert.throws(() => cat.commit([{ ident: t1, expected: null, next: 'again' }]), /already exists/);
    assert.equal(cat.pointerGeneration(), 2n);
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'v1', previousMetadataLocation: 'v0' });
    assert.deepEqual(cat.listAllTables(), [t1]);
  }),
);

matrix('commit: a two-table commit whose second CAS fails keeps nothing (first table, generation, log, keys unchanged)', (b) =>
  withCatalog(b, 'atomic', (cat) => {
    cat.createNamespace(['mimir']);
    cat.commit([
      { ident: t1, expected: null, next: 'a0' },
      { ident: t2, expected: null, next: 'b0' },
    ]);
    assert.throws(
      () =>
        cat.commit(
          [
            { ident: t1, expected: 'a0', next: 'a1' },
            { ident: t2, expected: 'stale', next: 'b1' },
          ],
          'half',
          [{ key: 'repo:x', expected: null, next: 'run-1' }],
        ),
      (e: unknown) => e instanceof CommitConflictError && identToString(e.ident) === 'mimir.t2',
    );
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'a0', previousMetadataLocation: null });
    assert.equal(cat.pointerGeneration(), 1n);
    assert.equal(cat.generations().length, 1);
    assert.deepEqual(cat.readKeys(['repo:x']).values, new Map());
    assert.equal(cat.generationNoted('half', 0n), undefined);
    const g = cat.commit(
      [
        { ident: t1, expected: 'a0', next: 'a1' },
        { ident: t2, expected: 'b0', next: 'b1' },
      ],
      'both',
    );
    assert.equal(g, 2n);
    assert.equal(cat.generationNoted('both', 0n), 2n);
    assert.deepEqual(
      cat.generations({ limit: 1 })[0].tables.map((t) => [identToString(t.ident), t.metadataLocation]),
      [
        ['mimir.t1', 'a1'],
        ['mimir.t2', 'b1'],
      ],
    );
  }),
);

matrix('generations: pointersAt / pointerAt / generationAt give the state as of an older generation, drops included', (b) =>
  withCatalog(b, 'log', async (cat) => {
    cat.createNamespace(['mimir']);
    const g1 = cat.commit([{ ident: t1, expected: null, next: 'a0' }]);
    await new Promise((r) => setTimeout(r, 20));
    const afterG1 = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    const g2 = cat.commit([
      { ident: t1, expected: 'a0', next: 'a1' },
      { ident: t2, expected: null, next: 'b0' },
    ]);
    const g3 = cat.commit([{ ident: t2, expected: 'b0', next: null }]);
    const g4 = cat.commit([{ ident: t1, expected: 'a1', next: 'a2' }]);
    assert.deepEqual([g1, g2, g3, g4], [1n, 2n, 3n, 4n]);
    assert.deepEqual(Object.fromEntries(cat.pointersAt(0n)), {});
    assert.deepEqual(Object.fromEntries(cat.pointersAt(1n)), { 'mimir.t1': 'a0' });
    assert.deepEqual(Object.fromEntries(cat.pointersAt(2n)), { 'mimir.t1': 'a1', 'mimir.t2': 'b0' });
    assert.deepEqual(Object.fromEntries(cat.pointersAt(3n)), { 'mimir.t1': 'a1' });
    assert.deepEqual(Object.fromEntries(cat.pointersAt(4n)), { 'mimir.t1': 'a2' });
    assert.throws(() => cat.pointersAt(5n), RangeError);
    const never = { namespace: ['mimir'], name: 'never' };
    for (let g = 0n; g <= 4n; g++) {
      const map = cat.pointersAt(g);
      for (const id of [t1, t2, never]) assert.equal(cat.pointerAt(id, g), map.get(identToString(id)), `${identToString(id)} at ${g}`);
    }
    assert.throws(() => cat.pointerAt(t1, 5n), RangeError);
    assert.equal(cat.generationAt(0), 0n);
    assert.equal(cat.generationAt(afterG1), 1n);
    assert.equal(cat.generationAt(Date.now() + 60_000), 4n);
    const gens = cat.generations();
    assert.deepEqual(gens.map((g) => g.generation), [4n, 3n, 2n, 1n]);
    assert.ok(gens.every((g, i) => i === 0 || gens[i - 1].timeMs >= g.timeMs), 'commit times are monotone');
    assert.deepEqual(gens[1].tables, [{ ident: t2, metadataLocation: null }]);
    assert.deepEqual(cat.generations({ before: 3n, limit: 1 }).map((g) => g.generation), [2n]);
    assert.deepEqual(cat.everMetadataLocations(t1), ['a0', 'a1', 'a2']);
    assert.deepEqual(cat.metadataLocationsSince(t1, 2n), ['a1', 'a2']);
    assert.deepEqual(cat.loggedLocationsAfter(t2, 1n), [
      { generation: 2n, metadataLocation: 'b0' },
      { generation: 3n, metadataLocation: null },
    ]);
  }),
);

matrix('keys: a commit key is compare-and-swapped with the pointers; a stale one is KeyConflictError and nothing lands', (b) =>
  withCatalog(b, 'keys', (cat) => {
    cat.createNamespace(['mimir']);
    cat.commit([{ ident: t1, expected: null, next: 'a0' }], 'create', [{ key: 'repo:a', expected: null, next: 'run-1' }]);
    assert.deepEqual(cat.readKeys(['repo:a', 'repo:b']), { generation: 1n, values: new Map([['repo:a', 'run-1']]) });
    assert.throws(
      () => cat.commit([{ ident: t1, expected: 'a0', next: 'a1' }], 'stale', [{ key: 'repo:a', expected: null, next: 'run-2' }]),
      (e: unknown) => e instanceof KeyConflictError && e.key === 'repo:a' && e.expected === null && e.actual === 'run-1',
    );
    assert.deepEqual(cat.loadTable(t1)?.metadataLocation, 'a0');
    assert.equal(cat.pointerGeneration(), 1n);
    // an assertion-only key (next undefined) and a removal
    cat.commit([{ ident: t1, expected: 'a0', next: 'a1' }], 'assert', [{ key: 'repo:a', expected: 'run-1' }]);
    cat.commit([{ ident: t1, expected: 'a1', next: 'a2' }], 'remove', [{ key: 'repo:a', expected: 'run-1', next: null }]);
    assert.deepEqual(cat.readKeys(['repo:a']), { generation: 3n, values: new Map() });
  }),
);

matrix('leases: live with their releaseBase until ended; an expired one is not live, cannot be renewed, and is swept', (b) =>
  withCatalog(b, 'leases', async (cat, location) => {
    const a = cat.beginLease({ releaseBase: 7n, note: 'append to t1' });
    const e = cat.beginLease({ releaseBase: 8n, ttlMs: 1 });
    assert.equal(typeof a.id, 'bigint');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      cat.liveLeases().map((l) => [l.id, l.releaseBase, l.pid, l.note]),
      [[a.id, 7n, process.pid, 'append to t1']],
    );
    assert.throws(() => e.renew(), /cannot be renewed/);
    const rows = await b.raw(location, 'SELECT id FROM mimir_leases ORDER BY id');
    assert.deepEqual(rows.map((r) => BigInt(r.id as bigint)), [a.id], 'the expired lease was swept');
    a.renew();
    assert.equal(a.end(), undefined);
    assert.equal(a.end(), undefined);
    assert.deepEqual(cat.liveLeases(), []);
  }),
);

matrix('leases: another machine\'s lease holds until its expiry, whatever its pid, then is swept', (b) =>
  withCatalog(b, 'remote', async (cat, location) => {
    const l = cat.beginLease({ releaseBase: 3n, note: 'remote' });
    // as if taken by a process of another host: its pid means nothing here
    await b.raw(location, `UPDATE mimir_leases SET host = 'elsewhere', pid = 999999999 WHERE id = ?`, [l.id.toString()]);
    assert.deepEqual(cat.liveLeases().map((x) => [x.id, x.host]), [[l.id, 'elsewhere']]);
    // that machine died: nobody renews it, and it expires
    await b.raw(location, `UPDATE mimir_leases SET expires_ms = 1 WHERE id = ?`, [l.id.toString()]);
    assert.deepEqual(cat.liveLeases(), []);
    assert.deepEqual(await b.raw(location, 'SELECT id FROM mimir_leases'), []);
  }),
);

matrix('concurrency: three processes, each with its own connection, make 30 CAS commits each on one table; 90 distinct generations, an unbroken chain', async (b, t) => {
  const location = await b.fresh('conc');
  const cat = openCatalog(location);
  try {
    const ident: TableIdent = { namespace: ['mimir'], name: 'events' };
    cat.createNamespace(['mimir']);
    cat.commit([{ ident, expected: null, next: 'start.metadata.json' }], 'create');
    const labels = ['A', 'B', 'C'];
    const runs = labels.map((label) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', childScript, 'commit', location, identToString(ident), '30', label], { cwd: repoRoot });
      let out = '';
      let err = '';
      let went = false;
      proc.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('ready\n') && !went) {
          went = true;
          proc.stdin.write('go\n');
        }
      });
      proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
      return new Promise<{ code: number | null; out: string; err: string }>((resolve) => proc.on('exit', (code) => resolve({ code, out, err })));
    });
    const results = await Promise.all(runs);
    for (const r of results) assert.equal(r.code, 0, r.err);
    t.diagnostic(`conflicts retried: ${results.map((r) => r.out.trim().split('\n').pop()).join(' ')}`);
    assert.equal(cat.pointerGeneration(), 91n);
    const gens = cat.generations({ limit: 1000 }).reverse();
    assert.deepEqual(gens.map((g) => g.generation), Array.from({ length: 91 }, (_, i) => BigInt(i + 1)), 'every generation once, none skipped');
    const locs = gens.slice(1).map((g) => g.tables[0].metadataLocation as string);
    for (const label of labels) {
      assert.deepEqual(locs.filter((l) => l.startsWith(`${label}-`)), Array.from({ length: 30 }, (_, i) => `${label}-${i}.metadata.json`));
    }
    const log = await b.raw(location, 'SELECT metadata_location AS loc, previous_metadata_location AS prev FROM mimir_commit_log ORDER BY generation');
    assert.equal(log.length, 91);
    for (let i = 1; i < log.length; i++) assert.equal(log[i].prev, log[i - 1].loc, `chain broken at log row ${i}`);
    assert.equal(cat.loadTable(ident)?.metadataLocation, log[90].loc);
  } finally {
    cat.close();
  }
});

test('[postgresql] open: opening a catalog while a commit holds the catalog row neither waits for it nor deadlocks it', { timeout: 600_000 }, async (t) => {
  if (server === undefined) {
    t.skip('PostgreSQL could not be started (see the message above)');
    return;
  }
  const location = await postgres.fresh('openlock');
  openCatalog(location).close();
  // a commit in flight, as store.ts makes it: the catalog row locked, the generation's row still to insert
  const committer = new pg.Client({ connectionString: location });
  const watcher = new pg.Client({ connectionString: location });
  await committer.connect();
  await watcher.connect();
  try {
    await committer.query('BEGIN');
    await committer.query(`SELECT generation FROM mimir_catalog WHERE catalog_name = 'mimir' FOR UPDATE`);
    await committer.query(`UPDATE mimir_catalog SET generation = generation + 1 WHERE catalog_name = 'mimir'`);
    const proc = spawn(process.execPath, ['--import', 'tsx', childScript, 'open', location], { cwd: repoRoot });
    let out = '';
    let err = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    // until the opener is done, or waits on a lock (what an open that writes did: then our next insert deadlocked)
    for (;;) {
      const waiting = await watcher.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'mimir' AND wait_event_type = 'Lock'`);
      if (done || (waiting.rows[0] as { n: number }).n > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await committer.query(`INSERT INTO mimir_generations (catalog_name, generation, time_ms, note) VALUES ('mimir', 1, 0, 'in flight')`);
    await committer.query('COMMIT');
    assert.equal(await exited, 0, err);
    assert.match(out, /^opened [01]\n$/);
  } finally {
    await committer.end();
    await watcher.end();
  }
});

matrix('foreign commits: a pointer another engine moved (a JDBC-style UPDATE) is recorded as a foreign generation before the next commit', (b) =>
  withCatalog(b, 'foreign', async (cat, location) => {
    cat.createNamespace(['mimir']);
    cat.commit([{ ident: t1, expected: null, next: 'a0' }]);
    // what Java's JdbcCatalog and PyIceberg's SqlCatalog do to commit
    await b.raw(
      location,
      `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`,
      ['spark-1', 'a0', 'mimir', 'mimir', 't1', 'a0'],
    );
    assert.deepEqual(cat.foreignMoves(), [{ ident: t1, logged: 'a0', current: 'spark-1' }]);
    const g = cat.commit([{ ident: t1, expected: 'spark-1', next: 'a2' }], 'after spark');
    assert.equal(g, 3n);
    const [mine, foreign] = cat.generations({ limit: 2 });
    assert.deepEqual([mine.generation, mine.foreign, foreign.generation, foreign.foreign], [3n, false, 2n, true]);
    assert.equal(cat.pointerAt(t1, 2n), 'spark-1');
    assert.deepEqual(cat.foreignMoves(), []);
    assert.equal(cat.recordForeignCommits(), undefined);
  }),
);

matrix('layout: iceberg_tables and iceberg_namespace_properties have the JDBC catalog columns; Mimir\'s tables beside them', (b) =>
  withCatalog(b, 'layout', async (_cat, location) => {
    const columns = async (table: string): Promise<string[]> => {
      const rows =
        b.kind === 'sqlite'
          ? await b.raw(location, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, [table])
          : await b.raw(location, `SELECT column_name AS name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position`, [table]);
      return rows.map((r) => String(r.name));
    };
    assert.deepEqual(await columns('iceberg_tables'), ['catalog_name', 'table_namespace', 'table_name', 'metadata_location', 'previous_metadata_location', 'iceberg_type']);
    assert.deepEqual(await columns('iceberg_namespace_properties'), ['catalog_name', 'namespace', 'property_key', 'property_value']);
    for (const t of ['mimir_catalog', 'mimir_generations', 'mimir_commit_log', 'mimir_leases', 'mimir_commit_keys', 'mimir_properties']) {
      assert.ok((await columns(t)).length > 0, `${t} exists`);
    }
  }),
);

matrix('open to read: leases only, every other write refused; read-only: not even a lease', (b) =>
  withCatalog(b, 'reader', (cat, location) => {
    cat.createNamespace(['mimir']);
    cat.commit([{ ident: t1, expected: null, next: 'a0' }]);
    const reader = openCatalog(location, { reader: true });
    try {
      assert.equal(reader.reader, true);
      assert.deepEqual(reader.loadTable(t1), { metadataLocation: 'a0', previousMetadataLocation: null });
      const l = reader.beginLease({ releaseBase: 1n, note: 'pin' });
      assert.deepEqual(cat.liveLeases().map((x) => x.id), [l.id]);
      assert.throws(() => reader.commit([{ ident: t1, expected: 'a0', next: 'a1' }]), /opened to read .* nothing written/);
      assert.throws(() => reader.setProperty('k', 'v'), /opened to read .* nothing written/);
      l.end();
    } finally {
      reader.close();
    }
    const ro = openCatalog(location, { readOnly: true });
    try {
      assert.equal(ro.pointerGeneration(), 1n);
      assert.throws(() => ro.beginLease({ releaseBase: 1n }), /read-only .* nothing written/);
      assert.throws(() => ro.commit([{ ident: t1, expected: 'a0', next: 'a1' }]), /read-only .* nothing written/);
    } finally {
      ro.close();
    }
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'a0', previousMetadataLocation: null });
  }),
);
