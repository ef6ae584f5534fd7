// Ingest crash safety with real processes: a child ingest (and a child
// universe add) is killed with SIGKILL at every named crash point it reaches
// (every data file, manifest, manifest list and metadata file written, the
// catalog commit, the maintenance after it — MIMIR_CRASH_AT) and at random
// times. After each kill: at every generation the lake holds whole runs only
// (each run's events and its ingest_runs row together, the row's event count
// equal to the events landed, and the serving state tables equal to a fold of
// the log at that generation: a run's state rows land with its events); rerunning converges to the state of an
// uninterrupted run, with no event written twice; and orphan removal leaves
// no unreferenced file behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest, universeAdd } from '../../src/ingest/index.ts';
import { removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { INGEST_RUNS, PROP_MAINTAIN_SMALL_FILES, SOURCE_KINDS, tableName } from '../../src/log/schema.ts';
import { formatVerifyReport, verifyState } from '../../src/log/state/verify.ts';
import { repoRoot, runTsx, scratch } from '../helpers.ts';
import { syntheticCrate, syntheticWorkspace } from './helpers.ts';

const work = scratch('mimir-ingest-crash-');
after(work.cleanup);
const CHILD = path.join(repoRoot, 'test/ingest/crash-child.ts');
/** Kill points per operation at most: every distinct point name, then occurrences spread over the rest. */
const MAX_POINTS = { ingest: 30, universe: 16 } as const;
const RANDOM_KILLS = 4;

type Op = 'ingest' | 'universe';

/** The lake at `root` before the operation: one earlier ingest, maintenance thresholds low so the run's maintenance compacts. */
async function prepare(root: string, ws: string, reg: string): Promise<void> {
  syntheticWorkspace(ws, 'crashy', 60, 0);
  const log = await EventLog.open(root);
  for (const n of [...SOURCE_KINDS.map(tableName), INGEST_RUNS]) await (await log.table(n))!.setProperties({ [PROP_MAINTAIN_SMALL_FILES]: '2' });
  await ingest(log, ws, { repo: 'crashy' });
  log.close();
  syntheticWorkspace(ws, 'crashy', 70, 1); // the edit the crashing ingest writes
  syntheticCrate(path.join(reg, 'dep-1.0.0'), 'dep', '1.0.0', 50);
}

async function runOp(root: string, op: Op, ws: string, reg: string): Promise<void> {
  const log = await EventLog.open(root);
  try {
    if (op === 'ingest') await ingest(log, ws, { repo: 'crashy', batchRows: 40 });
    else await universeAdd(log, [reg], { batchRows: 40 });
  } finally {
    log.close();
  }
}

const childArgs = (root: string, op: Op, ws: string, reg: string): string[] => (op === 'ingest' ? [CHILD, root, 'ingest', ws, 'crashy'] : [CHILD, root, 'universe', reg]);

/**
 * At every generation from `from` on: each run id found in the event tables
 * has its ingest_runs row, and every run row's `events` equals the events of
 * that run id; from generation `stateFrom` on, the serving state tables equal
 * a fold of the log too. Returns the lake's current generation.
 */
async function wholeRunsOnly(root: string, from: bigint, stateFrom?: bigint): Promise<bigint> {
  const log = await EventLog.open(root);
  try {
    const now = log.lake.catalog.pointerGeneration();
    for (let g = from; g <= now; g++) {
      const events = new Map<string, number>();
      for (const k of SOURCE_KINDS) {
        for (const r of await log.rows(k, { generation: g, columns: ['run'] })) events.set(String(r['run']), (events.get(String(r['run'])) ?? 0) + 1);
      }
      const runs = await log.table(INGEST_RUNS, g);
      const rows = runs ? await runs.scan({ columns: ['run', 'events'] }).toArray() : [];
      const recorded = new Map(rows.map((r) => [String(r['run']), Number(r['events'])]));
      for (const [run, n] of events) assert.equal(recorded.get(run), n, `generation ${g}: run ${run} has ${n} events landed, its ingest_runs row says ${recorded.get(run)}`);
      for (const [run, n] of recorded) assert.equal(events.get(run) ?? 0, n, `generation ${g}: run ${run}'s row says ${n} events, ${events.get(run) ?? 0} landed`);
      if (stateFrom !== undefined && g >= stateFrom) {
        const v = await verifyState(log, { generation: g });
        assert.ok(v.equal, `generation ${g}: the state tables differ from the log's fold: ${formatVerifyReport(v).join('; ')}`);
      }
    }
    return now;
  } finally {
    log.close();
  }
}

/** Folded state of every kind without run columns, and the number of event rows. */
async function outcome(root: string): Promise<{ state: string[]; rows: number }> {
  const log = await EventLog.open(root);
  try {
    const state: string[] = [];
    let rows = 0;
    for (const k of SOURCE_KINDS) {
      rows += (await log.rows(k, { columns: ['id'] })).length;
      for (const r of (await log.state(k)).values()) state.push(JSON.stringify({ ...r, run: null, ts: null }, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
    }
    return { state: state.sort(), rows };
  } finally {
    log.close();
  }
}

function spread<T>(xs: T[], n: number): T[] {
  const first = new Map<string, T>();
  for (const x of xs) {
    const name = String(x).split('#')[0]!;
    if (!first.has(name)) first.set(name, x);
  }
  const out = [...first.values()];
  const rest = xs.filter((x) => !out.includes(x));
  const more = Math.max(0, n - out.length);
  for (let i = 0; i < Math.min(more, rest.length); i++) out.push(rest[Math.floor((i * rest.length) / Math.min(more, rest.length))]!);
  return out;
}

/** Spawn the child and SIGKILL it after `ms` (if still running). */
function killAfter(args: string[], ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: repoRoot });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), ms);
    p.on('error', reject);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

for (const op of ['ingest', 'universe'] as Op[]) {
  test(`${op}: SIGKILL at every crash point and at random times leaves whole runs only; the rerun converges`, { timeout: 1_800_000 }, async () => {
    const dir = path.join(work.dir, op);
    const [root, saved, ws, reg] = ['lake', 'saved', 'ws', 'reg'].map((x) => path.join(dir, x)) as [string, string, string, string];
    await prepare(root, ws, reg);
    cpSync(root, saved, { recursive: true });
    const restore = (): void => {
      rmSync(root, { recursive: true, force: true });
      cpSync(saved, root, { recursive: true });
    };
    const opened = await EventLog.open(root);
    const g0 = opened.lake.catalog.pointerGeneration();
    opened.close();
    await wholeRunsOnly(root, 1n);

    // the uninterrupted run, traced: where it can be killed, how long it takes, what it leaves
    const trace = path.join(dir, 'trace.txt');
    const t0 = Date.now();
    const clean = await runTsx(childArgs(root, op, ws, reg), { env: { MIMIR_CRASH_TRACE: trace } });
    const cleanMs = Date.now() - t0;
    assert.equal(clean.code, 0, clean.stderr);
    const want = await outcome(root);
    const points = readFileSync(trace, 'utf8').trim().split('\n');
    for (const p of ['run:file-written', 'run:row-written', 'run:before-commit', 'lake:data-file-written', 'lake:manifest-written', 'lake:metadata-written', 'lake:before-catalog-commit', 'lake:after-catalog-commit', 'run:committed']) {
      assert.ok(points.some((x) => x.startsWith(`${p}#`)), `${op} reaches ${p}`);
    }

    const check = async (what: string): Promise<void> => {
      const killedAt = await wholeRunsOnly(root, g0 + 1n, g0 + 1n);
      await runOp(root, op, ws, reg);
      await wholeRunsOnly(root, g0 + 1n, killedAt + 1n);
      const got = await outcome(root);
      assert.deepEqual(got.state, want.state, `${what}: the rerun converges to the uninterrupted state`);
      assert.equal(got.rows, want.rows, `${what}: no event written twice (${got.rows} event rows, uninterrupted ${want.rows})`);
      const log = await EventLog.open(root);
      try {
        await removeOrphanFiles(log.lake, { olderThanMs: 0 });
        assert.deepEqual((await removeOrphanFiles(log.lake, { olderThanMs: 0, dryRun: true })).deleted, [], `${what}: no unreferenced file left`);
      } finally {
        log.close();
      }
    };

    let killed = 0;
    for (const point of spread(points, MAX_POINTS[op])) {
      restore();
      const k = await runTsx(childArgs(root, op, ws, reg), { env: { MIMIR_CRASH_AT: point } });
      assert.equal(k.signal, 'SIGKILL', `${op} killed at ${point} (exit ${k.code}: ${k.stderr})`);
      killed++;
      await check(`${op} killed at ${point}`);
    }
    for (let i = 0; i < RANDOM_KILLS; i++) {
      restore();
      const ms = Math.round(cleanMs * (0.3 + 0.7 * Math.random()));
      const k = await killAfter(childArgs(root, op, ws, reg), ms);
      assert.ok(k.signal === 'SIGKILL' || k.code === 0, `${op} killed after ${ms} ms or finished (exit ${k.code}: ${k.stderr})`);
      await check(`${op} killed after ${ms} ms`);
    }
    const names = [...new Set(points.map((p) => p.split('#')[0]!))];
    console.log(`# ${op}: ${killed} kills at crash points (of ${points.length} reached: ${names.join(', ')}), ${RANDOM_KILLS} at random times`);
  });
}
