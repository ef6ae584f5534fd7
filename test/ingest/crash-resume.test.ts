// A crate whose node events landed but whose file rows did not (a crash
// mid-crate) is not new to the lake: the rerun diffs against what landed,
// so a node already written is not added again and a stale one is removed.
// A crate with no event at all is diffed against an empty state unread.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ingest } from '../../src/ingest/index.ts';
import { copyFixture, freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

async function setup() {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  return { log: lake.log, ws: copyFixture('ws', lake.dir) };
}

function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
}

test('a crate with node events but no file rows (crash before its file rows) is diffed against what landed', async () => {
  const ref = await setup();
  const full = await ingest(ref.log, ref.ws, { repo: 'demo' });
  const nodes = [...(await ref.log.state('node')).values()];
  const landed = nodes[0]!;

  const b = await setup();
  const crashed = { ...landed, run: 'crashed-run', op: 'add' };
  const stale = { ...landed, run: 'crashed-run', op: 'add', id: 'stale-node-id', name: 'gone' };
  await b.log.append('node', [crashed, stale]);
  const r = await ingest(b.log, b.ws, { repo: 'demo' });
  assert.deepEqual(r.events, { add: full.events.add - 1, change: 0, remove: 1 });

  const strip = (m: Map<string, Record<string, unknown>>) => [...m.values()].map((x) => show({ ...x, run: 0, ts: 0 })).sort();
  for (const k of ['node', 'edge', 'file'] as const) {
    assert.deepEqual(strip(await b.log.state(k)), strip(await ref.log.state(k)), `${k} state`);
  }
});
