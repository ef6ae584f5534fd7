// The extract pool's messages (src/ingest/pool.ts): a dependency summary goes
// to a worker whole once, then by id, and whole again after `forget`, and the
// job's result is the same each way; add-row batches cross the thread
// boundary as dictionaries where values repeat and come back equal.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { ExtractPool, fromWireResult, wireResult, type ExtractJob } from '../../src/ingest/pool.ts';
import { kindSchema } from '../../src/log/schema.ts';
import type { Batch, Value } from '../../src/lake/spec/types.ts';
import { repoRoot } from '../helpers.ts';

const ws = path.join(repoRoot, 'samples', 'workspace');
const base = { repo: '@universe', edition: '2021', features: [], buildScript: null, targets: ['src/lib.rs'] };
const fnvish: ExtractJob = { ...base, krate: 'fnvish@0.2.1', rootDir: path.join(ws, 'vendor', 'fnvish-0.2.1'), deps: [], summary: true };
const tally = (depCrates: ExtractJob['depCrates']): ExtractJob => ({
  ...base, krate: 'tally@0.1.0', rootDir: path.join(ws, 'crates', 'tally'), deps: [['fnvish', { krate: 'fnvish@0.2.1' }]], depCrates,
  addRows: { run: 'run-1', ts: 1_700_000_000_000_000n },
});

const pools: ExtractPool[] = [];
after(async () => { for (const p of pools) await p.close(); });

test('a summary sent whole, then by id, then whole again after forget gives the job the same result each time', { timeout: 120_000 }, async () => {
  const here = new ExtractPool(0);
  pools.push(here);
  const summary = (await here.run(fnvish)).summary!;
  assert.ok(summary.nodes.length > 0);
  const want = (await here.run(tally([summary]))).batches!;
  // the summary is used: an edge of tally resolves into fnvish
  const dstKrate = want.edge.columns[want.edge.fields.findIndex((f) => f.name === 'dst_krate')]!;
  assert.ok(dstKrate.includes('fnvish@0.2.1'), 'tally resolves a call into fnvish');

  const pool = new ExtractPool(1);
  pools.push(pool);
  const first = await pool.run(tally([summary])); // posted whole
  const second = await pool.run(tally([summary])); // by id: the worker holds it
  pool.forget(summary);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  const third = await pool.run(tally([summary])); // whole again: the worker dropped it
  for (const got of [first, second, third]) assert.deepEqual(got.batches, want);
});

test('batches cross as dictionaries where values repeat and come back equal', () => {
  const fields = kindSchema('edge').fields;
  const n = 300;
  const columns: Value[][] = fields.map((f, j) => Array.from({ length: n }, (_v, i): Value => {
    if (f.name === 'ts') return 5n;
    if (f.type.type === 'int') return f.required ? i % 3 : i % 7 === 0 ? null : i % 3;
    if (f.type.type === 'long') return BigInt(i % 2);
    return f.name === 'id' || f.name === 'src' ? `${f.name}-${i}-${j}` : i % 5 === 0 ? null : `v${i % 4}`;
  }));
  const batch: Batch = { fields, numRows: n, columns };
  const { result, transfer } = wireResult({ graph: { files: [], nodes: [], edges: [], problems: [] }, ms: 1, batches: { node: batch, edge: batch } });
  const kinds = result.batches!.edge.columns.map((c) => ('dict' in c ? 'dict' : 'values'));
  assert.ok(kinds.includes('dict') && kinds.includes('values'), `both forms used: ${kinds.join(',')}`);
  const back = fromWireResult(structuredClone(result, { transfer }));
  assert.deepEqual(back.batches!.edge, batch);
  assert.deepEqual(back.batches!.node, batch);
});
