// Foreign catalogs and foreign commits on real SQLite files: a read-only open
// writes nothing (the file's bytes are unchanged), catalog names choose the
// catalog, Java's JDBC layouts (V0 without iceberg_type, V1 with views) list
// and load, tables found when Mimir's tables are added are generation 0, and
// pointers another engine moves (raw SQL, as PyIceberg commits) become
// generations marked foreign — at the next commit or on request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { SqlCatalog, openForeignCatalog, type TableIdent } from '../../src/lake/catalog/sql-catalog.ts';
import { scratch } from '../helpers.ts';

const tmp = scratch('mimir-catalog-foreign-');
after(tmp.cleanup);
let n = 0;
const sha = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');
const t1: TableIdent = { namespace: ['ns'], name: 't1' };
const t2: TableIdent = { namespace: ['ns'], name: 't2' };

/** A catalog file laid out as PyIceberg (V0: no iceberg_type) or Java JdbcCatalog V1 creates it, with rows. */
function foreignFile(layout: 'pyiceberg' | 'java-v1', rows: [string, string, string, string, string | null][]): string {
  const file = path.join(tmp.dir, `foreign${n++}.db`);
  const db = new Database(file);
  const typeCol = layout === 'java-v1' ? ', iceberg_type VARCHAR(5)' : '';
  db.exec(`CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000)${typeCol},
    PRIMARY KEY (catalog_name, table_namespace, table_name))`);
  db.exec(`CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255), property_value VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, property_key))`);
  for (const [cat, ns, name, loc, type] of rows) {
    if (layout === 'java-v1') db.prepare('INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, NULL, ?)').run(cat, ns, name, loc, type);
    else db.prepare('INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, NULL)').run(cat, ns, name, loc);
  }
  db.close();
  return file;
}

test('foreign: a read-only open of a PyIceberg (V0) file lists and loads by catalog name and leaves its bytes unchanged', () => {
  const file = foreignFile('pyiceberg', [
    ['default', 'ns', 't1', 'w/ns.db/t1/metadata/00001-a.metadata.json', null],
    ['other', 'ns', 't2', 'w/ns.db/t2/metadata/00000-b.metadata.json', null],
  ]);
  const before = sha(file);
  const cat = SqlCatalog.openFile(file, { name: 'default', readOnly: true });
  try {
    assert.deepEqual(cat.listAllTables(), [t1]);
    assert.deepEqual(cat.catalogNames(), ['default', 'other']);
    assert.equal(cat.loadTable(t1)?.metadataLocation, 'w/ns.db/t1/metadata/00001-a.metadata.json');
    assert.equal(cat.loadTable(t2), undefined, 'a table of another catalog name is not this catalog\'s');
    assert.deepEqual(cat.foreignMoves(), [], 'no Mimir log, nothing to differ from');
    assert.deepEqual(cat.generations(), []);
    assert.throws(() => cat.recordForeignCommits(), /read-only/);
  } finally {
    cat.close();
  }
  const other = SqlCatalog.openFile(file, { name: 'other', readOnly: true });
  assert.deepEqual(other.listAllTables(), [t2]);
  other.close();
  assert.equal(sha(file), before, 'the file is byte for byte what it was');
});

test('foreign: Java JDBC V1 layout — views are not tables; opened writable, the tables found are generation 0', () => {
  const file = foreignFile('java-v1', [
    ['prod', 'ns', 't1', 'loc/t1-0', 'TABLE'],
    ['prod', 'ns', 'v', 'loc/v-0', 'VIEW'],
    ['prod', 'ns', 't2', 'loc/t2-0', null],
  ]);
  const ro = SqlCatalog.openFile(file, { name: 'prod', readOnly: true });
  assert.deepEqual(ro.listAllTables(), [t1, t2]);
  ro.close();
  const w = openForeignCatalog(file, 'prod', { writable: true });
  try {
    assert.equal(w.pointerGeneration(), 0n);
    assert.deepEqual(w.foreignMoves(), [], 'tables present when Mimir arrived are adopted, not foreign commits');
    assert.deepEqual([...w.pointersAt(0n)].sort(), [['ns.t1', 'loc/t1-0'], ['ns.t2', 'loc/t2-0']]);
    const g = w.commit([{ ident: t1, expected: 'loc/t1-0', next: 'loc/t1-1' }], 'mimir commit');
    assert.equal(g, 1n, 'no foreign generation before the first Mimir commit');
    assert.equal(w.pointersAt(0n).get('ns.t1'), 'loc/t1-0');
  } finally {
    w.close();
  }
});

test('foreign commits: a raw SQL pointer move, a create and a drop become one generation marked foreign', () => {
  const root = path.join(tmp.dir, `lake${n++}`);
  const cat = SqlCatalog.open(root);
  try {
    cat.createNamespace(['ns']);
    cat.commit([{ ident: t1, expected: null, next: 'm/t1-0' }], 'create t1');
    cat.commit([{ ident: t2, expected: null, next: 'm/t2-0' }], 'create t2');
    assert.deepEqual(cat.foreignMoves(), []);
    // another engine commits as the SQL catalog spec says: compare-and-swap on metadata_location
    const raw = new Database(cat.path);
    raw.prepare(`UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = 'mimir'
      AND table_namespace = 'ns' AND table_name = 't1' AND metadata_location = ?`).run('py/t1-1', 'm/t1-0', 'm/t1-0');
    raw.prepare(`INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
      VALUES ('mimir', 'ns', 't3', 'py/t3-0', NULL, 'TABLE')`).run();
    raw.prepare(`DELETE FROM iceberg_tables WHERE table_name = 't2'`).run();
    raw.close();
    const moves = cat.foreignMoves().map((m) => [`${m.ident.namespace.join('.')}.${m.ident.name}`, m.logged, m.current]);
    assert.deepEqual(moves, [['ns.t1', 'm/t1-0', 'py/t1-1'], ['ns.t3', null, 'py/t3-0'], ['ns.t2', 'm/t2-0', null]]);
    const g = cat.recordForeignCommits();
    assert.equal(g, 3n);
    assert.equal(cat.recordForeignCommits(), undefined, 'recorded once');
    const [head] = cat.generations({ limit: 1 });
    assert.equal(head!.foreign, true);
    assert.match(head!.note ?? '', /^foreign commit: ns\.t1, ns\.t3, ns\.t2$/);
    assert.deepEqual(head!.tables.map((t) => [t.ident.name, t.metadataLocation]).sort(), [['t1', 'py/t1-1'], ['t2', null], ['t3', 'py/t3-0']]);
    assert.equal(cat.generations()[1]!.foreign, false);
    // time travel by generation sees both sides of the foreign commit
    assert.deepEqual([...cat.pointersAt(2n)].sort(), [['ns.t1', 'm/t1-0'], ['ns.t2', 'm/t2-0']]);
    assert.deepEqual([...cat.pointersAt(3n)].sort(), [['ns.t1', 'py/t1-1'], ['ns.t3', 'py/t3-0']]);
  } finally {
    cat.close();
  }
});

test('foreign commits: the next Mimir commit first records the foreign move as its own generation, in the same transaction', () => {
  const root = path.join(tmp.dir, `lake${n++}`);
  const cat = SqlCatalog.open(root);
  try {
    cat.createNamespace(['ns']);
    cat.commit([{ ident: t1, expected: null, next: 'm/0' }]);
    const raw = new Database(cat.path);
    raw.prepare(`UPDATE iceberg_tables SET metadata_location = 'py/1' WHERE table_name = 't1' AND metadata_location = 'm/0'`).run();
    raw.close();
    // a commit that loses its compare-and-swap records nothing, the foreign move included
    assert.throws(() => cat.commit([{ ident: t1, expected: 'm/0', next: 'm/2' }]), /commit conflict/);
    assert.equal(cat.pointerGeneration(), 1n);
    const g = cat.commit([{ ident: t1, expected: 'py/1', next: 'm/2' }], 'built on the foreign state');
    assert.equal(g, 3n);
    const gens = cat.generations();
    assert.deepEqual(gens.map((e) => [e.generation, e.foreign]), [[3n, false], [2n, true], [1n, false]]);
    assert.equal(cat.pointersAt(2n).get('ns.t1'), 'py/1');
    assert.equal(cat.pointersAt(1n).get('ns.t1'), 'm/0');
    assert.ok(gens[1]!.timeMs <= gens[0]!.timeMs, 'commit times stay monotone');
  } finally {
    cat.close();
  }
});

test('foreign commits: a catalog file from before the foreign column gains it on a writable open and reads it as 0 read-only', () => {
  const root = path.join(tmp.dir, `lake${n++}`);
  const cat = SqlCatalog.open(root);
  cat.createNamespace(['ns']);
  cat.commit([{ ident: t1, expected: null, next: 'm/0' }]);
  const file = cat.path;
  cat.close();
  const raw = new Database(file);
  raw.exec('ALTER TABLE mimir_generations DROP COLUMN foreign_commit');
  raw.close();
  const ro = SqlCatalog.openFile(file, { readOnly: true });
  assert.deepEqual(ro.generations().map((g) => g.foreign), [false]);
  ro.close();
  const w = SqlCatalog.openFile(file);
  const cols = (new Database(file, { readonly: true }).pragma('table_info(mimir_generations)') as { name: string }[]).map((c) => c.name);
  assert.ok(cols.includes('foreign_commit'));
  assert.equal(w.commit([{ ident: t1, expected: 'm/0', next: 'm/1' }]), 2n);
  w.close();
});
