// After real ingests, the questions see every step: `history` lists the add,
// the body change and the remove of a renamed function in commit order, and a
// question asked `--as-of` an earlier generation answers as before the change.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ingest } from '../../src/ingest/index.ts';
import { def, history, find } from '../../src/query/index.ts';
import { copyFixture, freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => {
  for (const c of cleanups) c();
});

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} should contain ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

test('ingest + query: history shows add, change and remove in order; --as-of an earlier generation answers as before', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const { log } = lake;
  const ws = copyFixture('ws', lake.dir);
  const lib = path.join(ws, 'alpha', 'src', 'lib.rs');

  await ingest(log, ws, { repo: 'demo' });
  const g1 = log.lake.catalog.pointerGeneration();
  edit(lib, 'pub fn helper() -> u32 {\n    1\n}\n', 'pub fn helper() -> u32 {\n    2\n}\n');
  await ingest(log, ws, { repo: 'demo' });
  const g2 = log.lake.catalog.pointerGeneration();
  const text = readFileSync(lib, 'utf8');
  writeFileSync(lib, text.replaceAll('helper', 'assist'));
  for (const f of [path.join(ws, 'beta', 'src', 'lib.rs')]) {
    try {
      writeFileSync(f, readFileSync(f, 'utf8').replaceAll('helper', 'assist'));
    } catch {
      // beta may not call it
    }
  }
  await ingest(log, ws, { repo: 'demo' });

  const h = await history(log, 'alpha::helper');
  const nodeOps = h.events.filter((e) => e.kind === 'node').map((e) => e.op);
  assert.deepEqual(nodeOps, ['add', 'change', 'remove'], 'the node events of alpha::helper, oldest first');
  const gens = h.events.filter((e) => e.kind === 'node').map((e) => e.generation);
  assert.ok(gens.every((g, i) => i === 0 || (g !== null && gens[i - 1] !== null && g > gens[i - 1]!)), `generations increase: ${gens.join(', ')}`);

  // now: helper is gone, assist exists
  assert.equal((await def(log, 'alpha::helper')).hits.length, 0);
  assert.equal((await def(log, 'alpha::assist')).hits.length, 1);
  // as of the first ingest: helper exists, assist does not, and its body hash is the first one
  const then = await def(log, 'alpha::helper', { asOf: { generation: g1 } });
  assert.equal(then.hits.length, 1);
  assert.equal((await def(log, 'alpha::assist', { asOf: { generation: g1 } })).hits.length, 0);
  assert.equal((await find(log, 'assist', { exact: true, asOf: { generation: g2 } })).hits.length, 0);
});
