// Confined reads (`Lake.open(root, { confineReads: true })`, what `mimir
// serve` uses): every way a path can lead out of the lake folder — an
// absolute path elsewhere, `..` in a relative location, `%2E%2E` that only
// the decoded-name fallback of old lakes would turn into `..`, a symlink
// inside the lake pointing out — is refused with an OutsideLakeError naming
// the path and saying nothing was read, while the same reads through an
// unconfined lake reach the outside file (so each case would leak without the
// rule). Paths under the recorded root of a copied lake still map inside and
// read; a table whose metadata names files outside fails its scan. Real files.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import { OutsideLakeError } from '../../src/lake/io/rooted.ts';
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-confine-');
after(work.cleanup);

const SECRET = 'the secret outside the lake';
const schema: Schema = { schemaId: 0, fields: [{ id: 1, name: 's', required: true, type: { type: 'string' } }] };
const T = { namespace: ['demo'], name: 't' };

const refusedRead = (local: RegExp) => (e: unknown): boolean =>
  e instanceof OutsideLakeError && e.op === 'read' && local.test(e.message) && /outside the lake root .* — nothing read$/.test(e.message);

const batch = (s: string): Batch => ({ fields: schema.fields, numRows: 1, columns: [[s]] });

async function rows(lake: Lake): Promise<Record<string, Value>[]> {
  return (await lake.loadTable(T)).scan().toArray();
}

test('confined reads: outside paths, .., %2E%2E and symlinks out are refused, naming the path; an unconfined lake reads them', async () => {
  const root = path.join(work.dir, 'lake');
  const secret = path.join(work.dir, 'secret.txt');
  writeFileSync(secret, SECRET);
  mkdirSync(path.join(root, 'demo'), { recursive: true });
  writeFileSync(path.join(root, 'inside.txt'), 'inside');
  symlinkSync(secret, path.join(root, 'demo', 'link.txt'));
  Lake.open(root).close();

  const open = Lake.open(root, { create: false });
  const confined = Lake.open(root, { create: false, confineReads: true });
  try {
    assert.equal(open.io.readsConfined, false);
    assert.equal(confined.io.readsConfined, true);
    const cases: [string, RegExp][] = [
      [`file://${secret}`, /refusing to read file:\/\/\S+secret\.txt \(\S+secret\.txt\): it is outside/],
      [secret, /refusing to read \S+secret\.txt: it is outside/],
      ['../secret.txt', /refusing to read \.\.\/secret\.txt \(\S+secret\.txt\)/],
      [`file://${root}/%2E%2E/secret.txt`, /refusing to read file:\/\/\S+%2E%2E\/secret\.txt \(\S+\/\.\.\/secret\.txt\)/],
      [`file://${root}/demo/link.txt`, /refusing to read file:\/\/\S+link\.txt \(\S+link\.txt -> \S+secret\.txt\)/],
    ];
    for (const [p, msg] of cases) {
      // the same path through an unconfined lake: the secret (so the rule is what stops it)
      assert.equal(Buffer.from(await open.io.readAll(p)).toString(), SECRET, `${p} reaches the secret without confinement`);
      await assert.rejects(confined.io.readAll(p), refusedRead(msg), `readAll ${p}`);
      await assert.rejects(async () => {
        const f = await confined.io.open(p);
        try {
          await f.read(0, 4);
        } finally {
          await f.close();
        }
      }, refusedRead(msg), `open ${p}`);
      await assert.rejects(confined.io.exists(p), refusedRead(msg), `exists ${p}: refused, not "absent"`);
    }
    await assert.rejects(confined.io.list(work.dir), refusedRead(/refusing to read \S+: it is outside/), 'list outside');
    // inside: reads as usual; a symlinked file is not listed as one of the lake's files
    assert.equal(Buffer.from(await confined.io.readAll(`file://${root}/inside.txt`)).toString(), 'inside');
    assert.equal(await confined.io.exists(`file://${root}/absent.txt`), false);
    assert.deepEqual((await confined.io.list(`file://${root}/demo`)).map((f) => f.path), []);
  } finally {
    open.close();
    confined.close();
  }
});

test('confined reads: a copied lake reads its recorded-root paths inside the copy; a table whose metadata names files outside fails its scan', async () => {
  const original = path.join(work.dir, 'original');
  const lake = Lake.open(original);
  const t = await lake.createTable(T, schema);
  await t.append([batch('mine')]);
  lake.close();
  const copy = path.join(work.dir, 'copy');
  cpSync(original, copy, { recursive: true });

  // the copy's metadata names the original's folder: mapped into the copy, so it reads
  const c = Lake.open(copy, { create: false, confineReads: true });
  try {
    assert.ok(c.moved);
    assert.deepEqual(await rows(c), [{ s: 'mine' }]);
  } finally {
    c.close();
  }

  // an outside table; the copy's current metadata file rewritten to be that table's
  const outside = path.join(work.dir, 'outside');
  const o = Lake.open(outside);
  await (await o.createTable(T, schema)).append([batch(SECRET)]);
  const outsideMeta = o.io.local(o.catalog.loadTable(T)!.metadataLocation);
  o.close();
  const plain = Lake.open(copy, { create: false });
  const crafted = plain.io.local(plain.catalog.loadTable(T)!.metadataLocation);
  writeFileSync(crafted, readFileSync(outsideMeta));
  try {
    assert.deepEqual(await rows(plain), [{ s: SECRET }], 'unconfined, the crafted metadata reads the outside table');
  } finally {
    plain.close();
  }
  const confined = Lake.open(copy, { create: false, confineReads: true });
  try {
    await assert.rejects(rows(confined), refusedRead(new RegExp(`refusing to read file://${outside}/demo/t/metadata/snap-\\S+\\.avro \\(\\S+\\): it is outside the lake root ${copy}`)));
  } finally {
    confined.close();
  }
});
