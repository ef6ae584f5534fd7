// The extract pool's messages (src/ingest/pool.ts): a dependency summary goes
// to a worker whole once, then by id, and whole again after `forget`, and the
// job's result is the same each way; a job that awaits the summary another
// job makes gets it from that job's worker (through the pool for a worker
// started to replace one; when that job fails, what the caller provides);
// a job awaiting a summary already forgotten is refused; the room bounds the
// results the workers hold; a job done within its limit
// while this thread was busy is not failed, and the job its worker claimed
// meanwhile settles; add-row batches cross the
// thread boundary as dictionaries where values repeat and come back equal; on
// Linux the workers run at a lower priority than the main thread.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { ExtractPool, WORKER_NICE, fromWireResult, wireResult, type ExtractJob } from '../../src/ingest/pool.ts';
import type { DepCrate } from '../../src/extract/index.ts';
import { kindSchema } from '../../src/log/schema.ts';
import type { Batch, Value } from '../../src/lake/spec/types.ts';
import { repoRoot, scratch } from '../helpers.ts';

const ws = path.join(repoRoot, 'samples', 'workspace');
const base = { repo: '@universe', edition: '2021', features: [], buildScript: null, targets: ['src/lib.rs'] };
const fnvish: ExtractJob = { ...base, krate: 'fnvish@0.2.1', rootDir: path.join(ws, 'vendor', 'fnvish-0.2.1'), deps: [], summary: true };
const tally = (depCrates: ExtractJob['depCrates']): ExtractJob => ({
  ...base, krate: 'tally@0.1.0', rootDir: path.join(ws, 'crates', 'tally'), deps: [['fnvish', { krate: 'fnvish@0.2.1' }]], depCrates,
  addRows: { run: 'run-1', ts: 1_700_000_000_000_000n },
});

const pools: ExtractPool[] = [];
after(async () => { for (const p of pools) await p.close(); });

test('a summary sent whole, then by id, then whole again after forget gives the job the same result each time', { timeout: 600_000 }, async () => {
  const here = new ExtractPool(0);
  pools.push(here);
  const summary = (await here.run(fnvish)).summary as DepCrate;
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

test('a job that awaits the summary another job makes, offered before it is made, resolves into it as when given it', { timeout: 600_000 }, async () => {
  const here = new ExtractPool(0);
  pools.push(here);
  const want = (await here.run(tally([(await here.run(fnvish)).summary as DepCrate]))).batches!;
  for (const workers of [0, 1, 2]) {
    const pool = new ExtractPool(workers);
    pools.push(pool);
    const id = pool.summaryId();
    // both offered at once: the dependant waits for the summary, whichever worker makes it
    const [dep, got] = await Promise.all([pool.run({ ...fnvish, summaryId: id }), pool.run(tally([{ awaits: id }]))]);
    pool.forget(id);
    assert.ok(dep.summary, `${workers} workers: the maker returns its summary too`);
    assert.deepEqual(got.batches, want, `${workers} workers: same rows as with the summary given`);
  }
});

test('a job that awaits a summary forgotten already, or never made by the pool, is refused at once (it would wait forever)', { timeout: 600_000 }, async () => {
  const pool = new ExtractPool(1);
  pools.push(pool);
  const id = pool.summaryId();
  // a dependant still running keeps the forgotten summary in the pool: a new job must not count on it
  const [dep, got] = await Promise.all([pool.run({ ...fnvish, summaryId: id }), pool.run(tally([{ awaits: id }]))]);
  assert.ok(dep.summary && got.batches);
  const slow = pool.run(tally([{ awaits: id }]));
  pool.forget(id);
  await assert.rejects(pool.run(tally([{ awaits: id }])), /awaits summary \d+, which is no summaryId of this pool or was forgotten/);
  assert.ok((await slow).batches, 'the job offered before the forget still gets it');
  await assert.rejects(pool.run(tally([{ awaits: id + 100 }])), /no summaryId of this pool/);
});

test('a worker started to replace one gets the summaries other workers make through the pool', { timeout: 600_000 }, async () => {
  const here = new ExtractPool(0);
  pools.push(here);
  const want = (await here.run(tally([(await here.run(fnvish)).summary as DepCrate]))).batches!;
  const pool = new ExtractPool(2);
  pools.push(pool);
  // a worker dies (here: stopped from outside); its replacement has no peers
  const slots = (pool as unknown as { slots: { worker: Worker }[] }).slots;
  const dead = slots[0]!.worker;
  await dead.terminate();
  while (slots[0]!.worker === dead) await new Promise((r) => setImmediate(r));
  for (let round = 0; round < 3; round++) {
    const id = pool.summaryId();
    const [, got] = await Promise.all([pool.run({ ...fnvish, summaryId: id }), pool.run(tally([{ awaits: id }]))]);
    assert.deepEqual(got.batches, want, `round ${round}`);
    // made before it is offered: the job carries it to a worker that lacks it
    const later = await pool.run(tally([{ awaits: id }]));
    assert.deepEqual(later.batches, want, `round ${round}, offered after`);
    pool.forget(id);
  }
});

test('a dependant of a job that failed waits for what the caller provides, then goes on with it', { timeout: 600_000 }, async () => {
  const here = new ExtractPool(0);
  pools.push(here);
  const alone = (await here.run(tally([]))).batches!;
  const pool = new ExtractPool(2);
  pools.push(pool);
  const id = pool.summaryId();
  // `deps` that are no list of pairs: extraction throws in the worker
  const failing = pool.run({ ...fnvish, deps: 5 as unknown as ExtractJob['deps'], summaryId: id });
  let settled = false;
  const dependant = pool.run(tally([{ awaits: id }])).finally(() => { settled = true; });
  await assert.rejects(failing);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(settled, false, 'the dependant waits while its summary is neither made nor provided');
  pool.provide(id, null);
  assert.deepEqual((await dependant).batches, alone, 'without the summary: the rows of the crate resolved alone');
});

/** Two jobs on `pool`, whose room fits one result: the second settles only after the first result is consumed. */
async function secondWaitsForConsumed(pool: ExtractPool, why: string): Promise<void> {
  pools.push(pool);
  let settled = 0;
  const jobs = [pool.run(fnvish), pool.run(tally([]))].map((j) => j.finally(() => { settled++; }));
  const first = await Promise.race(jobs);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(settled, 1, why);
  pool.consumed(first);
  await Promise.all(jobs);
  assert.equal(settled, 2);
}

test('with a room of one result, a second job is claimed only once the first result is consumed', { timeout: 600_000 }, async () => {
  await secondWaitsForConsumed(new ExtractPool(2, undefined, { results: 1, facts: 1_000_000 }), 'no second job is claimed while the room holds an unconsumed result (2 workers, 1 idle)');
});

test('with a room of one fact, a second job waits for the first result to be consumed; with none held, one is always claimed', { timeout: 600_000 }, async () => {
  // one worker: with two, both may claim at once (neither result's facts are counted until it is made)
  await secondWaitsForConsumed(new ExtractPool(1, undefined, { results: 10, facts: 1 }), 'the first result holds more than one fact: no second claim');
});

test('a job done within its limit while this thread was busy is not failed as late, and the jobs its worker claimed meanwhile settle', { timeout: 600_000 }, async (t) => {
  const { dir, cleanup } = scratch('pool-busy-');
  t.after(cleanup);
  // a crate of a few hundred functions: tens to hundreds of milliseconds to extract
  mkdirSync(path.join(dir, 'src'));
  const fns = Array.from({ length: 400 }, (_, i) => `pub fn f${i}(x: u64) -> u64 { ${i > 0 ? `f${i - 1}(x) + ` : ''}x * ${i} }`);
  writeFileSync(path.join(dir, 'src', 'lib.rs'), fns.join('\n'));
  const mid: ExtractJob = { ...base, krate: 'mid@1.0.0', rootDir: dir, deps: [] };
  const limitMs = 4_000;
  const pool = new ExtractPool(1, limitMs);
  pools.push(pool);
  await pool.run(mid); // the worker has loaded the grammar
  const settled: string[] = [];
  const all = ['a', 'b', 'c'].map((name) => pool.run(mid).then(() => settled.push(`${name} ok`), (e: Error) => settled.push(`${name} failed: ${e.message}`)));
  await new Promise((r) => setTimeout(r, 50)); // the first claim is in: its timer runs
  // this thread busy (as in a long Parquet write) past the first job's limit; the worker
  // finishes it meanwhile and claims the next ones itself
  const t0 = Date.now();
  while (Date.now() - t0 < limitMs + 500) { /* busy */ }
  await Promise.race([Promise.all(all), new Promise((r) => setTimeout(r, 60_000))]);
  assert.deepEqual(settled.sort(), ['a ok', 'b ok', 'c ok']);
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

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // fields after the command name, which is in parentheses and may hold spaces
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

test('on Linux the worker threads run at a lower priority than the main thread, which keeps its own', { timeout: 600_000, skip: process.platform !== 'linux' && 'threads have no nice value of their own here' }, async () => {
  const before = threadNices();
  const mine = before[0]!; // the main thread's task is listed first (its id is the process id)
  const pool = new ExtractPool(2);
  pools.push(pool);
  await pool.run(fnvish);
  // each worker lowers itself as it starts: wait for both (a loaded machine starts threads slowly)
  const want = Math.min(19, mine + WORKER_NICE);
  for (let waited = 0; threadNices().filter((n) => n === want).length < 2 && waited < 60_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  assert.ok(threadNices().filter((n) => n === want).length >= 2, `two threads at nice ${want}, found nices ${threadNices().join(',')}`);
  assert.equal(threadNices()[0], mine, 'the main thread keeps its priority');
});

