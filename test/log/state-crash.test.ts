// The state tables survive SIGKILL: a real child process updating them (an
// ingest run, a generic append, state maintenance, a rebuild, the build of
// code_paths on a lake made before it, the rebuild that switches a former
// code_keys to the crate-keyed layout) is killed at
// every crash point it reaches (MIMIR_CRASH_AT). After each kill the lake
// opens and its state tables equal the fold of the log (the commit landed
// whole or not at all); rerunning the operation converges (equal again);
// and gc leaves no file of the dead attempt behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest } from '../../src/ingest/index.ts';
import { gc } from '../../src/log/gc.ts';
import { verifyState, formatVerifyReport } from '../../src/log/state/verify.ts';
import { StateView } from '../../src/log/state/view.ts';
import { CODE_KEYS, CODE_PATHS, PROP_KEYS } from '../../src/log/state/schema.ts';
import { formerKeys } from '../query/sample.ts';
import { ident } from '../../src/log/schema.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { unreferenced } from './reach.ts';

const work = scratch('mimir-state-crash-');
after(work.cleanup);

type Op = 'ingest' | 'append' | 'maintain' | 'rebuild' | 'remove' | 'build' | 'switch';
/** Points killed per operation at most, spread over all it reaches (every kind of point is among them). */
const PER_OP = 12;

/** The first time each named point is reached (every kind of point), plus others spread over the rest, `n` in all at least. */
function spread(xs: string[], n: number): string[] {
  const out = new Set<string>();
  const names = new Set<string>();
  for (const x of xs) {
    const name = x.split('#')[0]!;
    if (!names.has(name)) {
      names.add(name);
      out.add(x);
    }
  }
  const rest = xs.filter((x) => !out.has(x));
  const extra = Math.max(0, n - out.size);
  for (let i = 0; i < extra && i < rest.length; i++) out.add(rest[Math.floor((i * rest.length) / extra)]!);
  return xs.filter((x) => out.has(x));
}

function child(root: string, ws: string, op: Op, env: Record<string, string>): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/log/state-crash-child.ts'), root, ws, op], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

async function equal(root: string, what: string): Promise<void> {
  const log = await EventLog.open(root);
  try {
    const r = await verifyState(log);
    assert.ok(r.equal, `${what}:\n${formatVerifyReport(r).join('\n')}`);
  } finally {
    log.close();
  }
}

/** code_paths is built (read by questions, so compared by `equal`). */
async function built(root: string, what: string): Promise<void> {
  const log = await EventLog.open(root);
  try {
    assert.ok(await (await StateView.open(log))!.hasPaths(), `${what}: code_paths is built`);
  } finally {
    log.close();
  }
}

async function runGc(root: string): Promise<void> {
  const log = await EventLog.open(root);
  try {
    await gc(log, { retainMs: 0, keepLast: 1 });
  } finally {
    log.close();
  }
}

/** The lake in a fixed folder (locations are absolute), built once and restored before each kill. */
async function pristine(op: Op): Promise<{ dir: string; ws: string; restore: () => void }> {
  const base = path.join(work.dir, op);
  const dir = path.join(base, 'lake');
  const ws = path.join(base, 'ws');
  cpSync(path.join(repoRoot, 'test', 'ingest', 'fixtures', 'ws'), ws, { recursive: true });
  const log = await EventLog.open(dir);
  // switch: a lake whose code_keys has the former layout (main a715b8e's)
  if (op === 'switch') await formerKeys(log);
  await ingest(log, ws, { repo: 'demo', workers: 0 });
  log.close();
  // the run the ingest op makes: a line shift, a body edit and a rename
  const lib = path.join(ws, 'alpha', 'src', 'lib.rs');
  writeFileSync(lib, readFileSync(lib, 'utf8').replace('pub mod shapes;', '// shifted\npub mod shapes;').replace('    2\n', '    22\n').replace('pub fn other()', 'pub fn other2()').replace('+ other()', '+ other2()'));
  if (op === 'maintain' || op === 'rebuild' || op === 'remove' || op === 'build' || op === 'switch') {
    const l = await EventLog.open(dir);
    await ingest(l, ws, { repo: 'demo', workers: 0 });
    // build: a lake made before code_paths
    if (op === 'build') await l.lake.dropTable(ident(CODE_PATHS));
    l.close();
  }
  const saved = path.join(base, 'saved');
  cpSync(dir, saved, { recursive: true });
  return {
    dir,
    ws,
    restore: () => {
      rmSync(dir, { recursive: true, force: true });
      cpSync(saved, dir, { recursive: true });
    },
  };
}

/** code_keys is crate-keyed (PROP_KEYS set). */
async function crateKeyed(root: string, what: string): Promise<void> {
  const log = await EventLog.open(root);
  try {
    assert.equal((await log.lake.loadTable(ident(CODE_KEYS))).properties[PROP_KEYS], 'krate', `${what}: code_keys is crate-keyed`);
  } finally {
    log.close();
  }
}

for (const op of ['ingest', 'append', 'maintain', 'rebuild', 'remove', 'build', 'switch'] as Op[]) {
  test(`state crash: SIGKILL at every point of ${op} leaves state equal to the log; the rerun converges; gc collects the dead attempt's files`, { timeout: 1_200_000 }, async () => {
    const { dir, ws, restore } = await pristine(op);
    await equal(dir, `${op}: before`);
    const trace = path.join(work.dir, `trace-${op}.txt`);
    const r = child(dir, ws, op, { MIMIR_CRASH_TRACE: trace });
    assert.equal(r.status, 0, `${op} runs clean: ${r.stderr}`);
    const points = [...new Set(readFileSync(trace, 'utf8').trim().split('\n'))];
    const stateSide = points.filter((p) => p.startsWith('state') || p.startsWith('run:') || p.startsWith('lake:'));
    assert.ok(stateSide.length >= 4, `${op} reaches ${stateSide.length} crash points: ${points.join(', ')}`);
    for (const point of spread(stateSide, PER_OP)) {
      restore();
      const k = child(dir, ws, op, { MIMIR_CRASH_AT: point });
      assert.equal(k.signal, 'SIGKILL', `${op} killed at ${point} (status ${k.status}: ${k.stderr})`);
      await equal(dir, `${op} killed at ${point}`);
      const rerun = child(dir, ws, op, {});
      assert.equal(rerun.status, 0, `${op} rerun after ${point}: ${rerun.stderr}`);
      await equal(dir, `${op} rerun after ${point}`);
      if (op === 'build') await built(dir, `build rerun after ${point}`);
      if (op === 'switch') await crateKeyed(dir, `switch rerun after ${point}`);
      // gc removes what the dead attempt left (nothing of it is referenced)
      await runGc(dir);
      assert.deepEqual(await unreferenced(dir), [], `${op} at ${point}: gc leaves no unreferenced file`);
      await equal(dir, `${op} after gc (${point})`);
    }
    console.log(`# state crash ${op}: ${Math.min(PER_OP, stateSide.length)} kills over ${stateSide.length} points`);
  });
}

