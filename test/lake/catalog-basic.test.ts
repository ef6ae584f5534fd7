// The embedded SQL catalog on real SQLite files: namespaces, tables, CAS
// commits that land all or nothing, the standard layout, the PyIceberg
// fixture, and the generation log.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import {
  AlreadyExistsError,
  CommitConflictError,
  NamespaceNotEmptyError,
  NoSuchNamespaceError,
  NoSuchTableError,
  SqlCatalog,
  identToString,
  openForeignCatalog,
  parseIdent,
  type TableIdent,
} from '../../src/lake/catalog/sql-catalog.ts';
import { icebergFixtures, needsFixtures, scratch } from '../helpers.ts';

const tmp = scratch('mimir-catalog-');
after(tmp.cleanup);
let n = 0;
function fresh(): SqlCatalog {
  return SqlCatalog.open(path.join(tmp.dir, `lake${n++}`));
}

const t1: TableIdent = { namespace: ['mimir'], name: 't1' };
const t2: TableIdent = { namespace: ['mimir'], name: 't2' };

test('identifiers: a.b.t round-trips, the last dot-part is the name', () => {
  assert.deepEqual(parseIdent('a.b.t'), { namespace: ['a', 'b'], name: 't' });
  assert.equal(identToString({ namespace: ['a', 'b'], name: 't' }), 'a.b.t');
  assert.throws(() => parseIdent('a..t'), /non-empty/);
});

test('open: creates lake folder and catalog.db; a new catalog is at generation 0n', () => {
  const cat = fresh();
  try {
    assert.ok(existsSync(cat.path));
    assert.equal(path.basename(cat.path), 'catalog.db');
    assert.equal(cat.name, 'mimir');
    assert.equal(cat.pointerGeneration(), 0n);
    assert.deepEqual(cat.listNamespaces(), []);
  } finally {
    cat.close();
  }
});

test('open: create=false on a missing catalog and a non-catalog file are refused with the path', () => {
  const missing = path.join(tmp.dir, 'nolake');
  assert.throws(() => SqlCatalog.open(missing, { create: false }), /no catalog at .*catalog\.db/);
  const junkRoot = path.join(tmp.dir, 'junk');
  SqlCatalog.open(junkRoot).close();
  writeFileSync(path.join(junkRoot, 'catalog.db'), 'this is not sqlite at all, just text'.repeat(200));
  for (const f of ['catalog.db-wal', 'catalog.db-shm']) {
    if (existsSync(path.join(junkRoot, f))) writeFileSync(path.join(junkRoot, f), '');
  }
  assert.throws(() => SqlCatalog.open(junkRoot), /is not a catalog: expected a SQLite database/);
  const otherRoot = path.join(tmp.dir, 'other');
  SqlCatalog.open(otherRoot, { create: true }).close();
  const otherDb = path.join(tmp.dir, 'other.db');
  const raw = new Database(otherDb);
  raw.exec('CREATE TABLE stuff (x INTEGER)');
  raw.close();
  assert.throws(() => SqlCatalog.openFile(otherDb), /other\.db is not a catalog: expected table iceberg_tables, found tables stuff/);
});

test('namespaces: create (exists=true + props), list, properties, drop refuses when not empty', () => {
  const cat = fresh();
  try {
    cat.createNamespace(['mimir'], { owner: 'me' });
    cat.createNamespace(['a', 'b']);
    assert.throws(() => cat.createNamespace(['mimir']), AlreadyExistsError);
    assert.deepEqual(cat.listNamespaces(), [['a', 'b'], ['mimir']]);
    assert.ok(cat.namespaceExists(['a', 'b']));
    assert.ok(!cat.namespaceExists(['a']));
    assert.deepEqual(cat.namespaceProperties(['mimir']), { exists: 'true', owner: 'me' });
    assert.throws(() => cat.namespaceProperties(['nope']), NoSuchNamespaceError);

    cat.commit([{ ident: t1, expected: null, next: 'm/t1-0.json' }]);
    assert.throws(() => cat.dropNamespace(['mimir']), (e: unknown) => e instanceof NamespaceNotEmptyError && /1 table/.test(e.message));
    assert.ok(cat.namespaceExists(['mimir']));
    cat.commit([{ ident: t1, expected: 'm/t1-0.json', next: null }]);
    cat.dropNamespace(['mimir']);
    assert.ok(!cat.namespaceExists(['mimir']));
    assert.throws(() => cat.dropNamespace(['mimir']), NoSuchNamespaceError);
    assert.deepEqual(cat.listNamespaces(), [['a', 'b']]);
  } finally {
    cat.close();
  }
});

test('tables: create, load, list, drop; create needs the namespace; a duplicate create is AlreadyExists', () => {
  const cat = fresh();
  try {
    assert.throws(() => cat.commit([{ ident: t1, expected: null, next: 'x' }]), NoSuchNamespaceError);
    assert.equal(cat.pointerGeneration(), 0n);
    cat.createNamespace(['mimir']);
    const g1 = cat.commit([{ ident: t1, expected: null, next: 'm/t1-0.json' }], 'create t1');
    assert.equal(g1, 1n);
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'm/t1-0.json', previousMetadataLocation: null });
    assert.throws(() => cat.commit([{ ident: t1, expected: null, next: 'm/t1-x.json' }]), AlreadyExistsError);
    cat.commit([{ ident: t2, expected: null, next: 'm/t2-0.json' }]);
    assert.deepEqual(cat.listTables(['mimir']).map(identToString), ['mimir.t1', 'mimir.t2']);
    assert.deepEqual(cat.listAllTables().map(identToString), ['mimir.t1', 'mimir.t2']);
    const g3 = cat.commit([{ ident: t2, expected: 'm/t2-0.json', next: null }]);
    assert.equal(g3, 3n);
    assert.equal(cat.loadTable(t2), undefined);
    assert.throws(() => cat.requireTable(t2), NoSuchTableError);
    assert.deepEqual(cat.listAllTables().map(identToString), ['mimir.t1']);
  } finally {
    cat.close();
  }
});

test('commit: CAS succeeds, sets previous location and bumps the generation as a bigint', () => {
  const cat = fresh();
  try {
    cat.createNamespace(['mimir']);
    cat.commit([{ ident: t1, expected: null, next: 'v0' }]);
    const g = cat.commit([{ ident: t1, expected: 'v0', next: 'v1' }], 'append');
    assert.equal(typeof g, 'bigint');
    assert.equal(g, 2n);
    assert.equal(cat.pointerGeneration(), 2n);
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'v1', previousMetadataLocation: 'v0' });
    const [latest] = cat.generations({ limit: 1 });
    assert.equal(latest.generation, 2n);
    assert.equal(latest.note, 'append');
    assert.deepEqual(latest.tables, [{ ident: t1, metadataLocation: 'v1' }]);
  } finally {
    cat.close();
  }
});

test('commit: a stale expected location throws CommitConflictError naming the table; nothing changes', () => {
  const cat = fresh();
  try {
    cat.createNamespace(['mimir']);
    cat.commit([{ ident: t1, expected: null, next: 'v0' }]);
    cat.commit([{ ident: t1, expected: 'v0', next: 'v1' }]);
    assert.throws(
      () => cat.commit([{ ident: t1, expected: 'v0', next: 'v2' }]),
      (e: unknown) =>
        e instanceof CommitConflictError &&
        e.expected === 'v0' &&
        e.actual === 'v1' &&
        /mimir\.t1/.test(e.message) &&
        /expected metadata location v0, found v1/.test(e.message),
    );
    assert.equal(cat.pointerGeneration(), 2n);
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'v1', previousMetadataLocation: 'v0' });
    assert.throws(() => cat.commit([{ ident: t2, expected: 'gone', next: 'v9' }]), /found \(no table\)/);
  } finally {
    cat.close();
  }
});

test('commit: a two-table commit whose second CAS fails leaves the first table and the generation unchanged', () => {
  const cat = fresh();
  try {
    cat.createNamespace(['mimir']);
    cat.commit([
      { ident: t1, expected: null, next: 'a0' },
      { ident: t2, expected: null, next: 'b0' },
    ]);
    assert.equal(cat.pointerGeneration(), 1n);
    assert.throws(
      () =>
        cat.commit([
          { ident: t1, expected: 'a0', next: 'a1' },
          { ident: t2, expected: 'stale', next: 'b1' },
        ]),
      (e: unknown) => e instanceof CommitConflictError && identToString(e.ident) === 'mimir.t2',
    );
    assert.deepEqual(cat.loadTable(t1), { metadataLocation: 'a0', previousMetadataLocation: null });
    assert.deepEqual(cat.loadTable(t2), { metadataLocation: 'b0', previousMetadataLocation: null });
    assert.equal(cat.pointerGeneration(), 1n);
    assert.equal(cat.generations().length, 1);
    // Both swaps valid: one generation, two log rows.
    const g = cat.commit([
      { ident: t1, expected: 'a0', next: 'a1' },
      { ident: t2, expected: 'b0', next: 'b1' },
    ]);
    assert.equal(g, 2n);
    assert.deepEqual(
      cat.generations({ limit: 1 })[0].tables.map((t) => [identToString(t.ident), t.metadataLocation]),
      [
        ['mimir.t1', 'a1'],
        ['mimir.t2', 'b1'],
      ],
    );
  } finally {
    cat.close();
  }
});

test('generations: 64-bit generation numbers come back as bigint beyond 2^53', () => {
  const cat = fresh();
  try {
    cat.createNamespace(['mimir']);
    const raw = new Database(cat.path);
    raw.defaultSafeIntegers(true);
    raw.prepare(`UPDATE mimir_catalog SET generation = ? WHERE catalog_name = 'mimir'`).run(2n ** 60n);
    raw.close();
    const g = cat.commit([{ ident: t1, expected: null, next: 'v0' }]);
    assert.equal(g, 2n ** 60n + 1n);
    assert.equal(cat.pointerGeneration(), 2n ** 60n + 1n);
    assert.equal(cat.generations()[0].generation, 2n ** 60n + 1n);
    assert.deepEqual([...cat.pointersAt(2n ** 60n + 1n)], [['mimir.t1', 'v0']]);
    assert.deepEqual([...cat.pointersAt(2n ** 60n)], []);
  } finally {
    cat.close();
  }
});

test('layout: iceberg_tables and iceberg_namespace_properties have the standard JDBC/SQL-catalog columns', () => {
  const cat = fresh();
  cat.createNamespace(['mimir']);
  cat.commit([{ ident: t1, expected: null, next: 'v0' }]);
  cat.commit([{ ident: t1, expected: 'v0', next: 'v1' }]);
  cat.close();
  const raw = new Database(cat.path, { readonly: true });
  try {
    const cols = (t: string): string[] => (raw.pragma(`table_info(${t})`) as { name: string }[]).map((c) => c.name);
    assert.deepEqual(cols('iceberg_tables'), [
      'catalog_name',
      'table_namespace',
      'table_name',
      'metadata_location',
      'previous_metadata_location',
      'iceberg_type',
    ]);
    assert.deepEqual(cols('iceberg_namespace_properties'), ['catalog_name', 'namespace', 'property_key', 'property_value']);
    const pk = (raw.pragma('table_info(iceberg_tables)') as { name: string; pk: number }[])
      .filter((c) => c.pk > 0)
      .map((c) => c.name);
    assert.deepEqual(pk, ['catalog_name', 'table_namespace', 'table_name']);
    assert.deepEqual(raw.prepare('SELECT * FROM iceberg_tables').all(), [
      {
        catalog_name: 'mimir',
        table_namespace: 'mimir',
        table_name: 't1',
        metadata_location: 'v1',
        previous_metadata_location: 'v0',
        iceberg_type: 'TABLE',
      },
    ]);
    assert.deepEqual(raw.prepare('SELECT * FROM iceberg_namespace_properties').all(), [
      { catalog_name: 'mimir', namespace: 'mimir', property_key: 'exists', property_value: 'true' },
    ]);
    assert.equal((raw.pragma('journal_mode') as { journal_mode: string }[])[0].journal_mode, 'wal');
  } finally {
    raw.close();
  }
});

test('foreign: the PyIceberg SqlCatalog fixture opens read-only, loads its table, and is not altered', { skip: needsFixtures }, () => {
  const src = path.join(icebergFixtures as string, 'duckdb_pyiceberg_add_columns_with_defaults', 'pyiceberg_catalog.db');
  const dir = scratch('mimir-pycat-');
  try {
    const dbPath = path.join(dir.dir, 'pyiceberg_catalog.db');
    copyFileSync(src, dbPath);
    const cat = openForeignCatalog(dbPath, 'default');
    const ident = { namespace: ['default'], name: 'add_columns_with_defaults' };
    try {
      assert.deepEqual(cat.listNamespaces(), [['default']]);
      assert.deepEqual(cat.listAllTables(), [ident]);
      assert.deepEqual(cat.namespaceProperties(['default']), { exists: 'true' });
      const t = cat.loadTable(ident);
      assert.ok(t);
      assert.match(
        t.metadataLocation,
        /^data\/persistent\/add_columns_with_defaults\/default\.db\/add_columns_with_defaults\/metadata\/00003-.*\.metadata\.json$/,
      );
      assert.match(t.previousMetadataLocation ?? '', /\/00002-.*\.metadata\.json$/);
      assert.equal(cat.pointerGeneration(), 0n);
      assert.deepEqual([...cat.pointersAt(0n)], [['default.add_columns_with_defaults', t.metadataLocation]]);
      assert.deepEqual(cat.everMetadataLocations(ident), [t.previousMetadataLocation, t.metadataLocation]);
      assert.deepEqual(cat.liveLeases(), []);
      assert.throws(() => cat.commit([{ ident, expected: t.metadataLocation, next: 'x' }]), /read-only/);
    } finally {
      cat.close();
    }
    const raw = new Database(dbPath, { readonly: true });
    const names = (raw.prepare(`SELECT name FROM sqlite_master WHERE type='table' ORDER BY name`).all() as { name: string }[]).map(
      (r) => r.name,
    );
    raw.close();
    assert.deepEqual(names, ['iceberg_namespace_properties', 'iceberg_tables']);

    // Opened for writing, the same V0 file (no iceberg_type column) takes Mimir commits.
    const w = openForeignCatalog(dbPath, 'default', { writable: true });
    try {
      const old = (w.loadTable(ident) as { metadataLocation: string }).metadataLocation;
      const g = w.commit([{ ident, expected: old, next: 'new.metadata.json' }]);
      assert.equal(g, 1n);
      assert.deepEqual(w.loadTable(ident), { metadataLocation: 'new.metadata.json', previousMetadataLocation: old });
      // The table predates the log: as of generation 0 it stood at the location the first logged change replaced.
      assert.equal(w.pointersAt(0n).get('default.add_columns_with_defaults'), old);
      assert.equal(w.pointersAt(1n).get('default.add_columns_with_defaults'), 'new.metadata.json');
      assert.equal(w.pointerAt(ident, 0n), old);
      assert.equal(w.pointerAt(ident, 1n), 'new.metadata.json');
    } finally {
      w.close();
    }
  } finally {
    dir.cleanup();
  }
});

test('generations: pointersAt / generationAt give the state as of an older generation, drops included', async () => {
  const cat = fresh();
  try {
    cat.createNamespace(['mimir']);
    const g1 = cat.commit([{ ident: t1, expected: null, next: 'a0' }]);
    await new Promise((r) => setTimeout(r, 15));
    const afterG1 = Date.now();
    await new Promise((r) => setTimeout(r, 15));
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
    // one table's pointer at a generation: the map's entry, from index seeks (a pinned read of one table)
    const never = { namespace: ['mimir'], name: 'never' };
    for (let g = 0n; g <= 4n; g++) {
      const map = cat.pointersAt(g);
      for (const id of [t1, t2, never]) assert.equal(cat.pointerAt(id, g), map.get(identToString(id)), `${identToString(id)} at ${g}`);
    }
    assert.throws(() => cat.pointerAt(t1, 5n), RangeError);

    assert.equal(cat.generationAt(0), 0n);
    assert.equal(cat.generationAt(afterG1), 1n);
    assert.equal(cat.generationAt(Date.now() + 1000), 4n);

    const gens = cat.generations();
    assert.deepEqual(gens.map((g) => g.generation), [4n, 3n, 2n, 1n]);
    assert.ok(gens.every((g, i) => i === 0 || gens[i - 1].timeMs >= g.timeMs), 'commit times are monotone');
    assert.deepEqual(gens[1].tables, [{ ident: t2, metadataLocation: null }]);
    assert.deepEqual(cat.generations({ before: 3n, limit: 1 }).map((g) => g.generation), [2n]);

    assert.deepEqual(cat.everMetadataLocations(t1), ['a0', 'a1', 'a2']);
    assert.deepEqual(cat.everMetadataLocations(t2), ['b0']);
  } finally {
    cat.close();
  }
});

test('leases: an in-process lease is live with its releaseBase until ended; an expired one is not', async () => {
  const cat = fresh();
  try {
    const a = cat.beginLease({ releaseBase: 7n, note: 'append to t1' });
    const b = cat.beginLease({ releaseBase: 8n, ttlMs: 20 });
    assert.equal(typeof a.id, 'bigint');
    const live = cat.liveLeases();
    assert.deepEqual(
      live.map((l) => [l.releaseBase, l.pid, l.note]),
      [
        [7n, process.pid, 'append to t1'],
        [8n, process.pid, null],
      ],
    );
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(cat.liveLeases().map((l) => l.id), [a.id]);
    assert.throws(() => b.renew(), /cannot be renewed/);
    a.renew();
    a.end();
    a.end();
    assert.deepEqual(cat.liveLeases(), []);
  } finally {
    cat.close();
  }
});
