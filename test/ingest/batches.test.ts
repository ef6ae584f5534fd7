// Columnar add rows (rows.ts addBatch) and EventLog.appendBatches: the same
// batch as rowsToBatch of diff's rows, and the same routing and read-back as
// `append` of those rows, in a split and a unified lake.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { EventLog, rowsToBatch, type EventRow } from '../../src/log/event-log.ts';
import { kindSchema, UNIVERSE_REPO } from '../../src/log/schema.ts';
import { addBatch, diff, type Fields, type RowContext } from '../../src/ingest/rows.ts';
import type { Value } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-batches-');
after(work.cleanup);
let n = 0;
const root = (): string => path.join(work.dir, `lake-${n++}`);

const ctx = (repo: string): RowContext => ({ repo, krate: 'k@1.0.0', run: 'run-1', ts: 1_700_000_000_000_000n });
const nodes = (): Map<string, Fields> => new Map<string, Fields>([
  ['a', { kind: 'fn', name: 'a', qpath: 'k::a', file: 'src/lib.rs', line_start: 1, line_end: 3, visibility: 'pub', signature: 'fn a()', parent: null, body_hash: 'h1' }],
  ['b', { kind: 'struct', name: 'B', qpath: 'k::B', file: 'src/lib.rs', line_start: 5, line_end: 9, visibility: null, signature: null, parent: 'a', body_hash: null }],
  ['c', { kind: 'mod', name: 'c', qpath: 'k::c', file: 'src/c.rs', line_start: 1, line_end: 1, visibility: 'pub(crate)', signature: null, parent: null, body_hash: 'h3' }],
]);

const sorted = (rows: Record<string, Value>[]) => rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).sort();

test('addBatch: the batch rowsToBatch makes of the all-add rows diff emits, in the same order', () => {
  const rows: EventRow[] = [];
  diff('node', ctx('r'), new Map(), nodes(), (r) => rows.push(r));
  const want = rowsToBatch(kindSchema('node'), rows, 'node');
  assert.deepEqual(addBatch('node', ctx('r'), nodes()), want);
});

test('addBatch: a value not in canonical form is coerced, and a bad one named', () => {
  const m = new Map<string, Fields>([['x', { src: 'a', dst: 'b', line: '7' }]]);
  const b = addBatch('edge', ctx('r'), m);
  assert.equal(b.columns[kindSchema('edge').fields.findIndex((f) => f.name === 'line')]![0], 7);
  assert.throws(() => addBatch('edge', ctx('r'), new Map<string, Fields>([['x', { line: 1.5 }]])), /edge row 0 column line/);
});

for (const mode of ['split', 'unified'] as const) {
  test(`appendBatches (${mode}): routes ring rows like append and reads back the same events`, async () => {
    const viaRows = await EventLog.open(root(), { init: mode });
    const viaBatches = await EventLog.open(root(), { init: mode });
    try {
      const mixed = addBatch('node', ctx('r'), nodes());
      const ringB = addBatch('node', ctx(UNIVERSE_REPO), nodes());
      // one batch mixing repos (ring and not), as appendBatches must split it
      const repoCol = mixed.fields.findIndex((f) => f.name === 'repo');
      mixed.columns[repoCol]![1] = UNIVERSE_REPO;
      const rowsOf = (b: typeof mixed): EventRow[] => Array.from({ length: b.numRows }, (_, i) => Object.fromEntries(b.fields.map((f, c) => [f.name, b.columns[c]![i]])));
      const r1 = await viaRows.append('node', [...rowsOf(mixed), ...rowsOf(ringB)]);
      const r2 = await viaBatches.appendBatches('node', [mixed, ringB]);
      assert.equal(r2.rows, r1.rows);
      assert.equal(r2.ring, r1.ring);
      assert.equal(r2.ring, mode === 'split' ? 4 : 0);
      assert.deepEqual(sorted(await viaBatches.rows('node')), sorted(await viaRows.rows('node')));
      assert.deepEqual([...(await viaBatches.state('node')).keys()].sort(), ['a', 'b', 'c']);
      // empty input commits nothing
      const g = viaBatches.lake.catalog.pointerGeneration();
      assert.equal((await viaBatches.appendBatches('node', [])).rows, 0);
      assert.equal(viaBatches.lake.catalog.pointerGeneration(), g);
      // a batch of another schema is refused, naming it
      await assert.rejects(viaBatches.appendBatches('edge', [mixed]), /appendBatches edge: batch 0 has columns/);
    } finally {
      viaRows.close();
      viaBatches.close();
    }
  });
}
