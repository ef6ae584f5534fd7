// Positions apart from content: a line shift writes pos rows only (zero node
// and edge events) and every answer gives the position true at its generation;
// a semantic change of an item that has a pos row moves it too; removing it
// removes its pos row; a lake whose rows predate pos rows reads unchanged.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { eq } from '../../src/lake/expr/expr.ts';
import { ingest } from '../../src/ingest/index.ts';
import { callers, def } from '../../src/query/index.ts';
import { copyFixture, freshLake, runRows } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

async function setup() {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = copyFixture('ws', lake.dir);
  return { log: lake.log, ws };
}

function edit(file: string, from: string, to: string) {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} should contain ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

test('a line shift writes zero node and edge events, pos rows for what moved, and each generation answers its own lines', async () => {
  const { log, ws } = await setup();
  const lib = path.join(ws, 'alpha', 'src', 'lib.rs');
  await ingest(log, ws, { repo: 'demo' });
  const g1 = log.readGeneration();
  const before = await def(log, 'alpha::total');
  assert.equal(before.hits[0]!.line, 12);
  const callsBefore = await callers(log, 'alpha::helper');
  assert.deepEqual(callsBefore.refs.filter((h) => h.repo === 'demo' && h.krate.startsWith('alpha')).map((h) => h.line), [13]);

  // three lines above everything in lib.rs
  edit(lib, 'pub mod shapes;', '// one\n// two\n// three\npub mod shapes;');
  const r = await ingest(log, ws, { repo: 'demo' });
  assert.deepEqual(r.events, { add: 0, change: 1, remove: 0 }, 'no semantic change: only the file row (its new hash)');
  assert.deepEqual((await runRows(log, 'file', r.run)).map((f) => f.path), ['src/lib.rs']);
  assert.equal((await runRows(log, 'node', r.run)).length, 0);
  assert.equal((await runRows(log, 'edge', r.run)).length, 0);
  const pos = await runRows(log, 'pos', r.run);
  assert.ok(pos.length > 0);
  assert.ok(pos.every((p) => p.op === 'add' && p.file === 'src/lib.rs'), 'only lib.rs items moved');
  const total = pos.find((p) => p.entity === 'node' && p.line === 15);
  assert.ok(total, 'alpha::total moved to line 15');
  assert.ok(pos.some((p) => p.entity === 'edge' && p.line === 16), 'the call to helper moved to line 16');

  assert.equal((await def(log, 'alpha::total')).hits[0]!.line, 15);
  assert.deepEqual((await callers(log, 'alpha::helper')).refs.filter((h) => h.krate.startsWith('alpha')).map((h) => h.line), [16]);
  // the earlier generation keeps its lines
  assert.equal((await def(log, 'alpha::total', { asOf: { generation: g1 } })).hits[0]!.line, 12);
  assert.deepEqual((await callers(log, 'alpha::helper', { asOf: { generation: g1 } })).refs.filter((h) => h.krate.startsWith('alpha')).map((h) => h.line), [13]);
  // shapes.rs did not move: no pos row for its items
  assert.ok(!pos.some((p) => p.file === 'src/shapes.rs'));

  // the same shift again moves from the pos rows: pos changes, still no event
  edit(lib, '// one\n', '// one\n// one and a half\n');
  const r2 = await ingest(log, ws, { repo: 'demo' });
  assert.deepEqual(r2.events, { add: 0, change: 1, remove: 0 });
  const pos2 = await runRows(log, 'pos', r2.run);
  assert.ok(pos2.length > 0 && pos2.every((p) => p.op === 'change'));
  assert.equal((await def(log, 'alpha::total')).hits[0]!.line, 16);
  // re-ingesting unchanged code writes nothing at all
  const r3 = await ingest(log, ws, { repo: 'demo' });
  assert.equal((await runRows(log, 'pos', r3.run)).length, 0);
});

test('a semantic change of an item with a pos row writes its event and a pos row; a removal removes its pos row', async () => {
  const { log, ws } = await setup();
  const lib = path.join(ws, 'alpha', 'src', 'lib.rs');
  await ingest(log, ws, { repo: 'demo' });
  edit(lib, 'pub mod shapes;', '// moved\npub mod shapes;');
  await ingest(log, ws, { repo: 'demo' });
  // helper's body changes and it moves one more line down
  edit(lib, 'pub fn helper() -> u32 {\n    1\n}', '\npub fn helper() -> u32 {\n    10\n}');
  const r = await ingest(log, ws, { repo: 'demo' });
  const nodes = await runRows(log, 'node', r.run);
  assert.deepEqual(nodes.map((n) => [n.qpath, n.op]), [['alpha::helper', 'change']]);
  const pos = await runRows(log, 'pos', r.run);
  const helperId = nodes[0]!.id;
  assert.deepEqual(pos.filter((p) => p.id === helperId).map((p) => [p.op, p.line]), [['change', 6]]);
  assert.equal((await def(log, 'alpha::helper')).hits[0]!.line, 6);
  // rename helper: the old id is removed, and so is its pos row
  edit(lib, 'pub fn helper()', 'pub fn helper2()');
  const r2 = await ingest(log, ws, { repo: 'demo' });
  const pos2 = await runRows(log, 'pos', r2.run);
  assert.deepEqual(pos2.filter((p) => p.id === helperId).map((p) => p.op), ['remove']);
  assert.equal((await log.state('pos', eq('id', helperId as string))).size, 0);
  assert.equal((await def(log, 'alpha::helper2')).hits[0]!.line, 6);
});
