// The ring freeze: a split (or unsplit) freezes appends for its final catch-up
// and switch; appends wait while the freeze's lease is live, resume after the
// switch, give up with a clear error past their bound, and ignore a freeze
// whose holder was killed (the next split or unsplit clears it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { EventLog, ringFreeze } from '../../src/log/event-log.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import { CODE_NODE_EVENTS, PROP_RING_FREEZE, SOURCE_KINDS, UNIVERSE_REPO, ident, tableName } from '../../src/log/schema.ts';
import { setPropertiesUpdate } from '../../src/lake/table/table.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import { buildUnified, ring, rowsOf } from './ring-split-helpers.ts';

const CHILD = path.join(repoRoot, 'test/log/ring-split-child.ts');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function withLake(fn: (root: string) => Promise<void>): Promise<void> {
  const s = scratch('mimir-freeze-');
  try {
    await fn(path.join(s.dir, 'lake'));
  } finally {
    s.cleanup();
  }
}

function runChild(args: string[], env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { cwd: repoRoot, env: { ...process.env, ...env } });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

async function freezeProp(log: EventLog): Promise<string | undefined> {
  return (await log.table(CODE_NODE_EVENTS))!.metadata.properties[PROP_RING_FREEZE];
}

/** Every kind's merged read holds each id once; returns the ids per kind. */
async function idsOnce(log: EventLog): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const kind of SOURCE_KINDS) {
    const ids = (await log.rows(kind)).map((x) => x['id'] as string);
    assert.equal(new Set(ids).size, ids.length, `${kind}: no row twice`);
    out.set(kind, new Set(ids));
  }
  return out;
}

test('split: appends wait while frozen and resume after the switch', () =>
  withLake(async (root) => {
    const log = await buildUnified(root);
    const other = await EventLog.open(root); // another handle: its own commit lock, like another process
    const rows = [...ring('edge', 3, 5000, 4, 'frozen'), ...rowsOf('edge', 'acme', 2, 5000, 4, 'frozen')];
    let pending: Promise<{ ring: number; generation: bigint }> | undefined;
    let settled = false;
    let started = 0;
    const r = await splitRing(log, {
      freezeAfter: 0,
      testHooks: {
        beforeSwitch: async () => {
          const prop = await freezeProp(log);
          assert.ok(prop !== undefined, 'the node table carries the freeze before the switch');
          const f = ringFreeze(log.lake, (await log.table(CODE_NODE_EVENTS))!.metadata)!;
          assert.equal(f.live, true, 'its lease is live');
          assert.ok(log.lake.catalog.liveLeases().some((l) => l.id === f.lease && l.note === 'ring split freeze'));
          started = Date.now();
          pending = other.append('edge', rows).then((a) => {
            settled = true;
            return a;
          });
          await sleep(400);
          assert.equal(settled, false, 'the append waits while the freeze is on');
        },
      },
    });
    assert.equal(r.switched, true);
    assert.equal(r.frozen, true);
    assert.equal(r.rounds, 1);
    const a = await pending!;
    assert.ok(Date.now() - started >= 400);
    assert.equal(a.ring, 3, 'after the switch its ring rows go to the ring table');
    assert.equal(await log.ringSplit(a.generation - 1n), true, 'it landed after the switch');
    assert.equal(await freezeProp(log), undefined, 'the switch removed the freeze');
    assert.ok(!log.lake.catalog.liveLeases().some((l) => l.note === 'ring split freeze'), 'the freeze lease ended');
    // the switch is still the last commit of the split: the freeze was an earlier one
    const sw = a.generation - 1n;
    assert.equal(await log.ringSplit(sw - 1n), false);
    const ids = await idsOnce(log);
    for (const x of rows) assert.ok(ids.get('edge')!.has(x['id'] as string));
    const src = (await log.table(tableName('edge')))!;
    const stray = (await src.scan({ filter: eq('repo', UNIVERSE_REPO) }).toArray()).filter((x) => (x['id'] as string).includes('frozen'));
    assert.equal(stray.length, 0, 'no ring row of the waiting append in the source table');
    other.close();
    log.close();
  }));

test('append: a live freeze held past frozenWaitMs fails with a clear error; an ended one is ignored', () =>
  withLake(async (root) => {
    const log = await buildUnified(root, 6, 2, 1);
    const { catalog } = log.lake;
    const lease = catalog.beginLease({ releaseBase: catalog.pointerGeneration(), note: 'test freeze' });
    await log.commit('test: freeze', async () => {
      await log.lake.commit([{ ident: ident(CODE_NODE_EVENTS), update: setPropertiesUpdate({ [PROP_RING_FREEZE]: String(lease.id) }) }], 'test: freeze');
    });
    const other = await EventLog.open(root);
    const t0 = Date.now();
    const err = await other.append('file', ring('file', 2, 100), { frozenWaitMs: 300 }).catch((e: Error) => e);
    assert.ok(err instanceof Error);
    assert.ok(Date.now() - t0 >= 300);
    assert.match(err.message, new RegExp(`^append file: the ring is frozen by lease ${lease.id} \\(a ring split or unsplit is switching\\), and it stayed frozen for \\d+ ms \\(limit 300 ms\\) — nothing appended`));
    assert.equal((await other.rows('file')).length, 8, 'nothing appended');
    lease.end();
    const a = await other.append('file', ring('file', 2, 100), { frozenWaitMs: 300 });
    assert.equal(a.rows, 2, 'a freeze whose lease ended is ignored');
    other.close();
    log.close();
  }));

test('split: a freeze left by a killed splitter is ignored by appenders and cleared by the next split', () =>
  withLake(async (root) => {
    (await buildUnified(root, 30, 5, 3)).close();
    const killed = await runChild(['split', root, '8', '0'], { MIMIR_CRASH_AT: 'split:frozen' });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const log = await EventLog.open(root);
    const left = ringFreeze(log.lake, (await log.table(CODE_NODE_EVENTS))!.metadata);
    assert.ok(left, 'the killed split left its freeze');
    assert.equal(left.live, false, 'its lease died with the process');
    assert.equal(await log.ringSplit(), false);
    const t0 = Date.now();
    const a = await log.append('node', [...ring('node', 4, 700, 4, 'after-kill'), ...rowsOf('node', 'acme', 2, 700, 4, 'after-kill')]);
    // a wait for the freeze would last its full limit (10 min); 60 s holds at load 16 on 2 cores
    assert.ok(Date.now() - t0 < 60_000, 'the append did not wait for a dead freeze');
    assert.equal(a.ring, 0, 'unified: ring rows stay in the source table');
    const r = await splitRing(log, { chunkRows: 8 });
    assert.equal(r.switched, true);
    assert.equal(await freezeProp(log), undefined, 'the rerun cleared the dead freeze');
    const ids = await idsOnce(log);
    assert.equal(ids.get('node')!.size, 30 + 5 + 6);
    assert.ok(ids.get('node')!.has(`node-${UNIVERSE_REPO}-after-kill-700`));
    log.close();
  }));

test('unsplit: a freeze left by a killed unsplit is ignored by appenders and cleared by the next unsplit', () =>
  withLake(async (root) => {
    const log = await buildUnified(root, 30, 5, 3);
    await splitRing(log, { chunkRows: 8 });
    await log.append('node', ring('node', 4, 500, 6, 'late'));
    log.close();
    const killed = await runChild(['unsplit', root, '0'], { MIMIR_CRASH_AT: 'unsplit:frozen' });
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    const again = await EventLog.open(root);
    const left = ringFreeze(again.lake, (await again.table(CODE_NODE_EVENTS))!.metadata);
    assert.ok(left && !left.live, 'a dead freeze was left');
    const a = await again.append('edge', ring('edge', 2, 800, 4, 'after-kill'));
    assert.equal(a.ring, 2, 'still split: ring rows go to the ring table, not waiting');
    const u = await unsplitRing(again);
    assert.equal(u.switched, true);
    assert.equal(await again.ringSplit(), false);
    assert.equal(await freezeProp(again), undefined, 'the rerun cleared the dead freeze');
    const ids = await idsOnce(again);
    assert.equal(ids.get('node')!.size, 30 + 5 + 4);
    assert.equal(ids.get('edge')!.size, 30 + 5 + 2);
    again.close();
  }));
