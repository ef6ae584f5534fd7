// Crash matrix: a real child process running split, unsplit, compact or gc is
// killed with SIGKILL at every named step it reaches (MIMIR_CRASH_AT), at more
// than 60 distinct points in all. After each kill the lake opens, every kind's
// merged read returns exactly the rows it returned before, rerunning the
// command completes, and a following gc leaves no unreferenced file behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import { compact } from '../../src/log/compact.ts';
import { gc } from '../../src/log/gc.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, type Kind } from '../../src/log/schema.ts';
import { stringifyJson } from '../../src/lake/spec/json.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { unreferenced } from './reach.ts';

const work = scratch('mimir-crash-');
after(work.cleanup);

type Op = 'split' | 'unsplit' | 'compact' | 'gc';
/** Points killed per operation at most (spread over all it reaches). */
const PER_OP = 18;

function rowsOf(kind: Kind, repo: string, krate: string, from: number, n: number, run: string): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    repo,
    krate,
    run,
    ts: 1_700_000_000_000_000n + BigInt(from + i),
    op: 'add',
    id: `${kind}-${repo}-${krate}-${from + i}`,
    ...(kind === 'node' ? { kind: 'fn', name: `f${from + i}` } : kind === 'edge' ? { edge_kind: 'calls', dst_path: `x::f${i}` } : { path: `src/f${i}.rs` }),
  }));
}

async function fill(log: EventLog, round: number): Promise<void> {
  for (const kind of SOURCE_KINDS) {
    if (kind === 'pos') {
      // positions: fewer rows, in one append per round (the matrix's time goes to commits)
      const rows = [0, 1, 2, 3].flatMap((c) => rowsOf(kind, UNIVERSE_REPO, `crate${c}@1.${round}.0`, 0, 10, `r${round}`));
      await log.append(kind, [...rows, ...rowsOf(kind, 'app', 'app@0.1.0', round * 100, 10, `r${round}`)]);
      continue;
    }
    for (let c = 0; c < 4; c++) await log.append(kind, rowsOf(kind, UNIVERSE_REPO, `crate${c}@1.${round}.0`, 0, 60, `r${round}`));
    for (const repo of ['app', 'tool']) await log.append(kind, rowsOf(kind, repo, `${repo}@0.1.0`, round * 100, 40, `r${round}`));
  }
}

/** Digest of every kind's merged rows (a multiset: sorted canonical rows). */
async function digests(root: string): Promise<Record<string, string>> {
  const log = await EventLog.open(root);
  try {
    const out: Record<string, string> = {};
    for (const kind of SOURCE_KINDS) {
      const rows = (await log.rows(kind)).map((r) => stringifyJson(r)).sort();
      out[kind] = `${rows.length}:${createHash('sha256').update(rows.join('\n')).digest('hex').slice(0, 16)}`;
    }
    return out;
  } finally {
    log.close();
  }
}

async function runOp(root: string, op: Op): Promise<void> {
  const log = await EventLog.open(root);
  try {
    if (op === 'split') await splitRing(log, { chunkRows: 150 });
    else if (op === 'unsplit') await unsplitRing(log, { chunkRows: 150 });
    else if (op === 'compact') await compact(log, { targetFileRows: 200 });
    else await gc(log, { retainMs: 0, keepLast: 1 });
  } finally {
    log.close();
  }
}

function child(root: string, op: Op, env: Record<string, string>): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/log/crash-child.ts'), root, op], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

/**
 * Lakes record absolute table locations, so a copy of a lake still points at
 * the original. Each operation therefore works in one fixed folder: its
 * starting state is built there once, saved, and restored there before each
 * kill.
 */
async function pristine(op: Op): Promise<{ dir: string; restore: () => void }> {
  const dir = path.join(work.dir, `case-${op}`);
  const saved = path.join(work.dir, `saved-${op}`);
  // an event log only (the state tables have their own crash tests: state-crash.test.ts)
  const log = await EventLog.open(dir, { init: 'unified', stateTables: false });
  await fill(log, 0);
  await fill(log, 1);
  if (op !== 'split') {
    await splitRing(log, { chunkRows: 150 });
    await fill(log, 2); // ring rows added after the split: unsplit must copy them back
  }
  log.close();
  cpSync(dir, saved, { recursive: true });
  return {
    dir,
    restore: () => {
      rmSync(dir, { recursive: true, force: true });
      cpSync(saved, dir, { recursive: true });
    },
  };
}

function spread<T>(xs: T[], n: number): T[] {
  if (xs.length <= n) return xs;
  return Array.from({ length: n }, (_, i) => xs[Math.floor((i * xs.length) / n)]!);
}

test('crash matrix: SIGKILL at every step of split, unsplit, compact and gc converges', { timeout: 900_000 }, async () => {
  let killed = 0;
  const distinct = new Set<string>();
  for (const op of ['split', 'unsplit', 'compact', 'gc'] as Op[]) {
    const { dir, restore } = await pristine(op);
    const before = await digests(dir);
    // 1. where can this operation be killed? run it once, tracing its points
    const traceFile = path.join(work.dir, `trace-${op}.txt`);
    const r = child(dir, op, { MIMIR_CRASH_TRACE: traceFile });
    assert.equal(r.status, 0, `${op} runs clean: ${r.stderr}`);
    const points = readFileSync(traceFile, 'utf8').trim().split('\n');
    assert.ok(points.length >= 5, `${op} reaches ${points.length} crash points`);
    // 2. kill at each (spread) point, then check and converge
    for (const point of spread(points, PER_OP)) {
      restore();
      const k = child(dir, op, { MIMIR_CRASH_AT: point });
      assert.equal(k.signal, 'SIGKILL', `${op} killed at ${point} (status ${k.status}: ${k.stderr})`);
      killed++;
      distinct.add(`${op}:${point}`);
      assert.deepEqual(await digests(dir), before, `${op} at ${point}: the lake reads the same rows after the kill`);
      await runOp(dir, op);
      assert.deepEqual(await digests(dir), before, `${op} at ${point}: the rerun keeps every row`);
      await runOp(dir, 'gc');
      assert.deepEqual(await unreferenced(dir), [], `${op} at ${point}: gc leaves no unreferenced file`);
    }
  }
  console.log(`# crash matrix: ${killed} kills at ${distinct.size} distinct points`);
  assert.ok(distinct.size >= 60, `at least 60 distinct kill points (had ${distinct.size})`);
});
