// The catalog's reader open (what questions use): nothing is written at open
// — no DDL, no transaction, so it opens while another process holds the
// write lock and leaves the file and its write-ahead log as they were —
// commits and properties are refused, and the leases of its pins are still
// recorded where gc in another process sees them. An older catalog is opened
// as a writer would open it, once, and is brought up to date.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { SqlCatalog } from '../../src/lake/catalog/sql-catalog.ts';
import { Lake } from '../../src/lake/lake.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { scratch } from '../helpers.ts';

const tmp = scratch('mimir-catalog-reader-');
after(tmp.cleanup);

const t1 = { namespace: ['mimir'], name: 't1' };

/** A catalog with one table at generation 1, closed (its WAL folded in). */
function made(name: string): string {
  const root = path.join(tmp.dir, name);
  const cat = SqlCatalog.open(root);
  cat.createNamespace(['mimir']);
  cat.commit([{ ident: t1, expected: null, next: '/m/t1/v1.metadata.json' }]);
  cat.close();
  return root;
}

/** The catalog file's bytes, mtime and WAL size (absent: -1). */
function fileState(root: string): { bytes: Buffer; mtimeMs: number; wal: number } {
  const f = path.join(root, 'catalog.db');
  return { bytes: readFileSync(f), mtimeMs: statSync(f).mtimeMs, wal: existsSync(`${f}-wal`) ? statSync(`${f}-wal`).size : -1 };
}

test('reader: opens while another connection holds the write lock, writes nothing at open, refuses writes', () => {
  const root = made('locked');
  const before = fileState(root);
  const holder = new Database(path.join(root, 'catalog.db'));
  holder.exec('BEGIN IMMEDIATE');
  try {
    // a writable open would wait for the lock (busy timeout 10 s) and fail
    const t0 = Date.now();
    const cat = SqlCatalog.open(root, { reader: true });
    try {
      // a wait would last the busy timeout (10 s) and then fail; an open takes milliseconds, also at load 16
      assert.ok(Date.now() - t0 < 9000, 'the reader did not wait for the write lock');
      assert.equal(cat.reader, true);
      assert.equal(cat.readOnly, false);
      assert.equal(cat.pointerGeneration(), 1n);
      assert.equal(cat.loadTable(t1)?.metadataLocation, '/m/t1/v1.metadata.json');
      assert.throws(() => cat.commit([{ ident: t1, expected: '/m/t1/v1.metadata.json', next: '/m/t1/v2.metadata.json' }]), /opened to read \(it takes leases only\) — nothing written/);
      assert.throws(() => cat.setProperty('x', 'y'), /opened to read/);
      assert.throws(() => cat.createNamespace(['other']), /opened to read/);
    } finally {
      cat.close();
    }
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  const now = fileState(root);
  assert.ok(now.bytes.equals(before.bytes), 'catalog.db has the same bytes');
  assert.equal(now.mtimeMs, before.mtimeMs);
  assert.ok(now.wal <= 0, `no write-ahead log frames (found ${now.wal} bytes)`);
});

test('reader: a lake and its log opened to read write nothing until a pin, whose lease gc in another process sees', async () => {
  const root = path.join(tmp.dir, 'lake');
  const w = await EventLog.open(root);
  w.close();
  w.lake.close();
  const before = fileState(root);
  const lake = Lake.open(root, { create: false, readOnly: 'auto', reader: true });
  const log = await EventLog.open(lake, { readOnly: true });
  try {
    assert.equal(lake.catalog.reader, true);
    assert.equal(lake.readOnly, false, 'a reader is not read-only: it records leases');
    const g = log.readGeneration();
    const opened = fileState(root);
    assert.ok(opened.bytes.equals(before.bytes) && opened.mtimeMs === before.mtimeMs && opened.wal <= 0, 'nothing written at open');
    const pin = log.pin({ generation: g }, { history: true });
    const other = SqlCatalog.open(root);
    try {
      assert.deepEqual(other.liveLeases().map((l) => [l.releaseBase, l.note, l.pid]), [[g, `pin ${g}`, process.pid]]);
      pin.close();
      assert.deepEqual(other.liveLeases(), []);
    } finally {
      other.close();
    }
  } finally {
    log.close();
    lake.close();
  }
});

test('reader: an older catalog (no mimir_properties, no foreign_commit column) gets the writable open once and is brought up to date', () => {
  const root = made('older');
  const db = new Database(path.join(root, 'catalog.db'));
  db.exec('DROP TABLE mimir_properties');
  db.exec('ALTER TABLE mimir_generations DROP COLUMN foreign_commit');
  db.close();
  const first = SqlCatalog.open(root, { reader: true });
  assert.equal(first.reader, false, 'opened as a writer');
  assert.equal(first.loadTable(t1)?.metadataLocation, '/m/t1/v1.metadata.json');
  first.close();
  const second = SqlCatalog.open(root, { reader: true });
  try {
    assert.equal(second.reader, true, 'up to date now: a reader');
    assert.equal(second.generations()[0]?.foreign, false);
  } finally {
    second.close();
  }
  // a catalog name the file does not hold yet is added by the writable open too
  const named = SqlCatalog.open(root, { reader: true, name: 'other' });
  assert.equal(named.reader, false);
  named.close();
  const again = SqlCatalog.open(root, { reader: true, name: 'other' });
  assert.equal(again.reader, true);
  again.close();
});
