// Catalog recovery on real lakes: the newest metadata file that parses, names
// its own folder and whose manifest list exists is registered, newer broken
// ones are passed over with the reason; two valid files at one version are
// both reported and the newer is taken unless told otherwise; tables still in
// the catalog are left alone; a lake moved before its catalog was lost
// records the root its tables were written under and reads through it; a new
// catalog is never created over table folders, and no table is created over a
// folder holding a table the catalog never knew. A catalog made over the lost
// one (no table, the wrong root) and a garbage catalog file (moved aside) do
// not stop recovery; a lake nested below the root, and tables a lake around
// it registers, are never taken.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Lake, LostCatalogError, PROP_LAKE_ROOT } from '../../src/lake/lake.ts';
import { localPath } from '../../src/lake/io/paths.ts';
import { SqlCatalog } from '../../src/lake/catalog/sql-catalog.ts';
import { recoverCatalog } from '../../src/lake/catalog/recover.ts';
import { scratch } from '../helpers.ts';
import { REPO_ID_SCHEMA, repoIdBatch } from './repo-id-rows.ts';

const work = scratch('mimir-recover-');
after(work.cleanup);

const schema = REPO_ID_SCHEMA;
const batch = repoIdBatch;
const A = { namespace: ['r'], name: 'a' };
const B = { namespace: ['r', 'deep'], name: 'b' };

let counter = 0;
async function twoTables(): Promise<string> {
  const dir = path.join(work.dir, `lake-${counter++}`);
  const lake = Lake.open(dir);
  const a = await lake.createTable(A, schema);
  const b = await lake.createTable(B, schema);
  for (let i = 0; i < 3; i++) {
    await a.append([batch('a', i * 10, 10)]);
    await b.append([batch('b', i * 10, 5)]);
  }
  lake.close();
  return dir;
}
const rowsOf = async (lake: Lake, ident: typeof A): Promise<number> => (await (await lake.loadTable(ident)).scan().toArray()).length;
const loseCatalog = (dir: string): void => {
  for (const f of ['catalog.db', 'catalog.db-wal', 'catalog.db-shm']) rmSync(path.join(dir, f), { force: true });
};
const metaDir = (dir: string, ident: typeof A): string => path.join(dir, ...ident.namespace, ident.name, 'metadata');

test('recover: every table from its newest valid metadata; newer broken files passed over with the reason', async () => {
  const dir = await twoTables();
  // a newer file that does not parse, and a newer one whose manifest list is gone
  writeFileSync(path.join(metaDir(dir, A), `00009-${randomUUID()}.metadata.json`), '{ not json');
  const bLatest = readdirSync(metaDir(dir, B)).filter((f) => f.startsWith('00003-'))[0]!;
  const text = readFileSync(path.join(metaDir(dir, B), bLatest), 'utf8').replace(/snap-(\d+)-/g, 'snap-$1-gone-');
  writeFileSync(path.join(metaDir(dir, B), `00004-${randomUUID()}.metadata.json`), text);
  loseCatalog(dir);
  assert.throws(() => Lake.open(dir), (e: unknown) => e instanceof LostCatalogError && /2 table folders \(r\/a, r\/deep\/b\)/.test((e as Error).message));

  const dry = await recoverCatalog(dir, { dryRun: true });
  assert.deepEqual(readdirSync(dir).sort(), ['r'], 'a dry run creates no catalog');
  assert.deepEqual(dry.tables.map((t) => [t.table, t.status]), [['r.a', 'registered'], ['r.deep.b', 'registered']]);

  const r = await recoverCatalog(dir);
  const [a, b] = r.tables;
  assert.equal(a!.version, 3);
  assert.match(a!.rejected[0]!.reason, /does not parse/);
  assert.equal(b!.version, 3);
  assert.match(b!.rejected[0]!.reason, /manifest list of its current snapshot \d+ is missing/);
  assert.equal(r.recordedRoot, dir);
  const lake = Lake.open(dir);
  assert.equal(await rowsOf(lake, A), 30);
  assert.equal(await rowsOf(lake, B), 15);
  await (await lake.loadTable(A)).append([batch('a', 100, 1)]);
  assert.equal(await rowsOf(lake, A), 31, 'writable again');
  lake.close();
  const again = await recoverCatalog(dir);
  assert.deepEqual(again.tables.map((t) => t.status), ['already', 'already']);
});

test('recover: two valid files at one version are reported; the newer is taken, --use takes the other', async () => {
  const dir = await twoTables();
  const latest = readdirSync(metaDir(dir, A)).filter((f) => f.startsWith('00003-'))[0]!;
  const twin = `00003-${randomUUID()}.metadata.json`;
  const text = readFileSync(path.join(metaDir(dir, A), latest), 'utf8');
  // an attempt that never landed: the same base, an older last-updated-ms
  writeFileSync(path.join(metaDir(dir, A), twin), text.replace(/"last-updated-ms"\s*:\s*(\d+)/, (_m, n: string) => `"last-updated-ms": ${BigInt(n) - 1000n}`));
  loseCatalog(dir);
  const r = await recoverCatalog(dir, { dryRun: true });
  assert.ok(r.tables[0]!.metadata!.endsWith(latest));
  assert.deepEqual(r.tables[0]!.sameVersion, [twin]);
  const u = await recoverCatalog(dir, { use: new Map([['r.a', twin]]) });
  assert.ok(u.tables[0]!.metadata!.endsWith(twin));
});

test('recover: a lake moved before its catalog was lost maps the root its tables were written under', async () => {
  const original = await twoTables();
  const moved = path.join(work.dir, `moved-${counter++}`);
  cpSync(original, moved, { recursive: true });
  rmSync(original, { recursive: true });
  loseCatalog(moved);
  const r = await recoverCatalog(moved);
  assert.equal(r.recordedRoot, original);
  const cat = SqlCatalog.open(moved, { create: false });
  assert.equal(cat.property(PROP_LAKE_ROOT), original);
  cat.close();
  const lake = Lake.open(moved);
  assert.ok(lake.moved);
  assert.equal(await rowsOf(lake, B), 15);
  lake.close();
});

test('recover: no table is created over a folder holding a table the catalog never recorded', async () => {
  const dir = await twoTables();
  // the catalog replaced by an empty one
  loseCatalog(dir);
  const hidden = path.join(work.dir, `hidden-${counter++}`);
  renameSync(path.join(dir, 'r'), hidden);
  const lake = Lake.open(dir);
  renameSync(hidden, path.join(dir, 'r'));
  await assert.rejects(lake.createTable(A, schema), /already holds 4 metadata file\(s\) of a table this catalog never recorded.*lake recover/);
  lake.close();
  const r = await recoverCatalog(dir);
  assert.deepEqual(r.tables.map((t) => t.status), ['registered', 'registered']);
  assert.equal(localPath(r.tables[0]!.metadata!).startsWith(dir), true);
});

test('recover: a catalog made over the lost one (no table, the copy\'s root recorded) and a garbage catalog file both give way to every table', async () => {
  const original = await twoTables();
  const copy = path.join(work.dir, `lake-${counter++}`);
  cpSync(original, copy, { recursive: true });
  loseCatalog(copy);
  // what a command made before it refused: an empty catalog recording the copy as its root
  const made = SqlCatalog.open(copy, { create: true });
  made.setProperty(PROP_LAKE_ROOT, copy);
  made.close();
  const r = await recoverCatalog(copy);
  assert.deepEqual(r.tables.map((t) => [t.table, t.status]), [['r.a', 'registered'], ['r.deep.b', 'registered']], r.tables.map((t) => t.reason).join('; '));
  assert.equal(r.recordedRoot, original, 'the root the tables were written under, mapped onto the copy');
  let lake = Lake.open(copy);
  assert.equal(await rowsOf(lake, A), 30);
  lake.close();

  loseCatalog(copy);
  writeFileSync(path.join(copy, 'catalog.db'), 'not a database at all\n'.repeat(100));
  assert.throws(() => Lake.open(copy), /catalog\.db is not a catalog: expected a SQLite database.*mimir lake recover --lake/);
  const again = await recoverCatalog(copy);
  assert.match(again.damagedMovedTo ?? '', /catalog\.db\.damaged-\d{8}T\d{6}Z$/);
  assert.equal(readFileSync(again.damagedMovedTo!, 'utf8'), 'not a database at all\n'.repeat(100), 'the damaged bytes kept aside');
  assert.equal(again.tables.filter((t) => t.status === 'registered').length, 2);
  lake = Lake.open(copy);
  assert.equal(await rowsOf(lake, B), 15);
  lake.close();
});

test('recover: a lake nested below the root is left alone, and tables a lake around the root registers are not taken', async () => {
  const outer = path.join(work.dir, `outer-${counter++}`);
  const inner = path.join(outer, 'inner');
  const lake = Lake.open(inner);
  await (await lake.createTable(A, schema)).append([batch('a', 0, 10)]);
  lake.close();
  await assert.rejects(recoverCatalog(outer), /no table folders under .*inner is a lake of its own .*give --lake .*inner to use or recover it — nothing to recover, nothing written/);
  assert.deepEqual(readdirSync(outer), ['inner'], 'no catalog written at the outer folder');

  // the inner lake loses its catalog while the outer one (made by an older recover) claims its table
  const claim = SqlCatalog.open(outer, { create: true });
  const pointer = SqlCatalog.open(inner, { readOnly: true });
  const loc = pointer.loadTable(A)!.metadataLocation;
  pointer.close();
  claim.createNamespace(['inner', 'r']);
  claim.commit([{ ident: { namespace: ['inner', 'r'], name: 'a' }, expected: null, next: loc }], 'an older recover at the outer folder');
  claim.close();
  loseCatalog(inner);
  const r = await recoverCatalog(inner);
  assert.equal(r.tables.length, 1);
  assert.equal(r.tables[0]!.status, 'unrecoverable');
  assert.match(r.tables[0]!.reason ?? '', /the catalog .*outer-\d+\/catalog\.db registers it as inner\.r\.a: it is that lake's table/);
});
