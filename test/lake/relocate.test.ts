// Relocating a copied lake for other engines: after relocateLake the copy's
// current metadata names only paths under the copy (location, manifest
// lists, manifests, data files), so a plain reader of its metadata file —
// what another engine does, no mapping — reads every row with the original
// folder gone; Mimir still reads generations from before the relocation
// (the old root stays mapped), the original's files are untouched, and a
// second run has nothing to do.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { Lake, openMetadataFile } from '../../src/lake/lake.ts';
import { localPath } from '../../src/lake/io/paths.ts';
import { relocateLake } from '../../src/lake/maintenance/relocate.ts';
import { readManifest, readManifestList } from '../../src/lake/scan/plan.ts';
import type { Value } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';
import { REPO_ID_SCHEMA, repoIdBatch } from './repo-id-rows.ts';
import { digests } from '../cli/digests.ts';

const work = scratch('mimir-relocate-');
after(work.cleanup);

const schema = REPO_ID_SCHEMA;
const batch = repoIdBatch;
const P = { namespace: ['m'], name: 'parted' };
const U = { namespace: ['m'], name: 'plain' };
const ids = (rows: Record<string, Value>[]): string[] => rows.map((r) => `${String(r.repo)}:${String(r.id)}`).sort();

test('relocate: a copy names only its own folder after relocation, and a plain reader reads it without the original', async () => {
  const original = path.join(work.dir, 'original');
  const lake = Lake.open(original);
  const p = await lake.createTable(P, schema, { partitionBy: [{ sourceId: 1, name: 'repo', transform: { kind: 'identity' } }] });
  const u = await lake.createTable(U, schema);
  await p.append([batch('a', 0, 10), batch('b', 10, 10)]);
  await u.append([batch('u', 0, 5)]);
  const gOld = lake.catalog.pointerGeneration();
  await p.overwrite([(await p.dataFiles())[0]!.file.filePath], await p.writeDataFiles([batch('a', 0, 2)]));
  await u.append([batch('u', 5, 5)]);
  const rowsP = ids(await p.scan().toArray());
  const rowsU = ids(await u.scan().toArray());
  const rowsOld = ids(await (await lake.loadTable(P, { generation: gOld })).scan().toArray());
  lake.close();
  const before = digests(original);

  const copy = path.join(work.dir, 'copy');
  cpSync(original, copy, { recursive: true });
  const moved = Lake.open(copy);
  assert.ok(moved.moved);
  const r = await relocateLake(moved);
  assert.deepEqual(r.tables.map((t) => [t.table, t.status]), [['m.parted', 'relocated'], ['m.plain', 'relocated']]);
  assert.ok(r.tables[0]!.manifests >= 2);
  moved.close();
  assert.deepEqual(digests(original), before, 'the original is untouched');

  const again = Lake.open(copy);
  assert.equal(again.moved, false, 'the copy is now recorded where it is');
  assert.deepEqual(again.formerRoots, [original]);
  for (const ident of [P, U]) {
    const t = await again.loadTable(ident);
    const names = [t.metadata.location, ...t.metadata.snapshots.map((s) => s.manifestList)];
    for (const s of t.metadata.snapshots) {
      for (const mf of await readManifestList(again.io, s)) {
        names.push(mf.manifestPath);
        for (const e of await readManifest(again.io, mf)) names.push(e.dataFile.filePath);
      }
    }
    for (const n of names) assert.ok(localPath(n).startsWith(copy + path.sep), `${n} is under the copy`);
    assert.ok(t.metadataLocation.includes(copy));
  }
  const second = await relocateLake(again);
  assert.deepEqual(second.tables.map((t) => t.status), ['already', 'already']);

  // another engine: the metadata file as it is, no mapping, the original gone
  const current = localPath((await again.loadTable(P)).metadataLocation);
  const currentU = localPath((await again.loadTable(U)).metadataLocation);
  rmSync(original, { recursive: true });
  assert.deepEqual(ids(await (await openMetadataFile(current)).scan().toArray()), rowsP);
  assert.deepEqual(ids(await (await openMetadataFile(currentU)).scan().toArray()), rowsU);
  assert.equal((JSON.parse(readFileSync(currentU, 'utf8')) as { location: string }).location, `file://${copy}/m/plain`);
  // Mimir still reads before the relocation: the old root maps onto the copy
  assert.deepEqual(ids(await (await again.loadTable(P, { generation: gOld })).scan().toArray()), rowsOld);
  again.close();
});
