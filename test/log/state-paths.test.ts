// code_paths, history's index by qualified path: it holds every (qpath, id)
// pair of the node events — removed items, renames, an id whose qpath
// changed — at every generation (state verify folds it from the log), and
// history answered from it equals history answered by scanning the log, now
// and as of every generation, through generic appends, ingest runs (rename,
// crate gone, repo removed and back), ring split, unsplit, compaction and
// maintenance. A lake without it answers from the log; building it (state
// maintain's rebuild of that table) is marked until its fold lands: readers
// and writers leave a table being built alone, and a commit written while it
// was being built that would land after the build is refused (redone).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest, removeRepo } from '../../src/ingest/index.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import { compact } from '../../src/log/compact.ts';
import { ident } from '../../src/log/schema.ts';
import { ModeChanged } from '../../src/log/route.ts';
import { rowsToBatch } from '../../src/log/batch.ts';
import { kindSchema } from '../../src/log/schema.ts';
import { CODE_PATHS, PROP_BUILDING } from '../../src/log/state/schema.ts';
import { verifyState, formatVerifyReport } from '../../src/log/state/verify.ts';
import { createStateTables, rebuildState } from '../../src/log/state/rebuild.ts';
import { maintainState } from '../../src/log/state/maintain.ts';
import { StateView } from '../../src/log/state/view.ts';
import { StateDelta, pathRanges } from '../../src/log/state/delta.ts';
import { history } from '../../src/query/index.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { node } from '../query/sample.ts';

const work = scratch('mimir-state-paths-');
after(work.cleanup);
let n = 0;
const dir = (): string => path.join(work.dir, `lake-${n++}`);

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x), 1);

async function equalAt(log: EventLog, g: bigint, what: string): Promise<void> {
  const r = await verifyState(log, { generation: g });
  assert.ok(r.equal, `${what} (generation ${g}):\n${formatVerifyReport(r).join('\n')}`);
}

/** code_paths equals the fold, and history from it equals history from the log, at every generation from `from`. */
async function everywhere(log: EventLog, from: bigint, paths: string[], what: string): Promise<number> {
  const now = log.lake.catalog.pointerGeneration();
  let answered = 0;
  for (let g = from; g <= now; g++) {
    await equalAt(log, g, what);
    const view = await StateView.open(log, g);
    assert.ok(view && (await view.hasPaths()), `${what}: code_paths is read at generation ${g}`);
    for (const p of paths) {
      const asOf = g === now ? undefined : { generation: g };
      const a = await history(log, p, { asOf, from: 'state' });
      const b = await history(log, p, { asOf, from: 'log' });
      assert.equal(show(a), show(b), `${what}: history ${p} at generation ${g}`);
      if (a.ids.length > 0) answered++;
    }
  }
  return answered;
}

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} should contain ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

test('code_paths: generic appends (add, change of qpath under one id, remove, re-add) keep every pair; history from it equals the log at every generation', { timeout: 300_000 }, async () => {
  const log = await EventLog.open(dir());
  try {
    const g0 = log.readGeneration();
    const k = ['alpha', 'alpha@0.1.0'] as const;
    await log.append('node', [node(...k, 'a-1', 'alpha::one'), node(...k, 'a-2', 'alpha::two')]);
    // one id whose qpath changes: both paths name it, ever after
    await log.append('node', [node(...k, 'a-1', 'alpha::uno', { op: 'change' })]);
    await log.append('node', [node(...k, 'a-2', 'alpha::two', { op: 'remove' })]);
    // another id takes the removed one's path; then the first comes back
    await log.append('node', [node(...k, 'a-3', 'alpha::two')]);
    await log.append('node', [node(...k, 'a-2', 'alpha::two')]);
    const view = (await StateView.open(log))!;
    const pairs = (await view.paths(undefined)).map((r) => `${r.qpath as string} ${r.id as string}`).sort();
    assert.deepEqual(pairs, ['alpha::one a-1', 'alpha::two a-2', 'alpha::two a-3', 'alpha::uno a-1'], 'one row per pair, none twice');
    const now = await history(log, 'alpha::two');
    assert.deepEqual(now.ids, ['a-2', 'a-3']);
    assert.deepEqual((await history(log, 'alpha::one')).ids, ['a-1'], 'the former path still names the id');
    const answered = await everywhere(log, g0, ['alpha::one', 'alpha::uno', 'alpha::two', 'alpha::none'], 'appends');
    assert.ok(answered > 8, `${answered} answers compared`);
  } finally {
    log.close();
  }
});

test('code_paths: ingest runs (rename, crate gone, repo removed and back), ring split, unsplit, compaction and maintenance keep it equal to the log', { timeout: 600_000 }, async () => {
  const d = dir();
  const log = await EventLog.open(path.join(d, 'lake'));
  try {
    const ws = path.join(d, 'ws');
    cpSync(path.join(repoRoot, 'test', 'ingest', 'fixtures', 'ws'), ws, { recursive: true });
    const lib = path.join(ws, 'alpha', 'src', 'lib.rs');
    const g0 = log.readGeneration();
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    const before = log.readGeneration();
    edit(lib, 'pub fn other()', 'pub fn other_renamed()');
    edit(lib, 'helper() + other()', 'helper() + other_renamed()');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    edit(path.join(ws, 'Cargo.toml'), '"beta"', '');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    await removeRepo(log, 'demo');
    await ingest(log, ws, { repo: 'demo', workers: 0 });
    const paths = ['alpha::other', 'alpha::other_renamed', 'alpha::helper', 'alpha::total'];
    // beta's items: gone with their crate, still found by path
    const beta = (await (await StateView.open(log, before))!.paths(undefined)).map((r) => r.qpath as string).filter((q) => q.startsWith('beta::'));
    assert.ok(beta.length > 0, 'beta has items');
    paths.push(...beta.slice(0, 3));
    const gone = await history(log, 'alpha::other');
    assert.ok(gone.ids.length === 1 && gone.events.some((e) => e.op === 'remove'), 'the renamed item: its history, removal included');
    await everywhere(log, g0, paths, 'ingest');
    // the re-ingest after the repo remove wrote no pair twice
    const rows = await (await StateView.open(log))!.paths(undefined);
    assert.equal(new Set(rows.map((r) => `${r.qpath as string} ${r.id as string}`)).size, rows.length, 'no pair twice');
    const g1 = log.readGeneration();
    await unsplitRing(log);
    await compact(log);
    await splitRing(log);
    await compact(log);
    await maintainState(log, { force: true });
    await everywhere(log, g1, paths, 'ring moves, compaction, maintenance');
  } finally {
    log.close();
  }
});

test('code_paths: a lake without it answers history from the log; building it is marked until its fold lands, and a commit written meanwhile that lands after is refused', { timeout: 300_000 }, async () => {
  const log = await EventLog.open(dir());
  try {
    const k = ['alpha', 'alpha@0.1.0'] as const;
    await log.append('node', [node(...k, 'a-1', 'alpha::one'), node(...k, 'a-2', 'alpha::two')]);
    await log.append('node', [node(...k, 'a-2', 'alpha::two', { op: 'remove' })]);
    await log.lake.dropTable(ident(CODE_PATHS));
    const expected = show(await history(log, 'alpha::two', { from: 'log' }));
    // an old lake: questions answer from the log, writers keep the other tables in step
    assert.equal(await (await StateView.open(log))!.hasPaths(), false);
    assert.equal(show(await history(log, 'alpha::two')), expected);
    await log.append('node', [node(...k, 'a-3', 'alpha::three')]);
    await equalAt(log, log.readGeneration(), 'without code_paths (the other tables)');
    // being built: created marked, neither read nor written
    await createStateTables(log, { building: true });
    const t = await log.lake.loadTable(ident(CODE_PATHS));
    assert.equal(t.properties[PROP_BUILDING], 'true');
    assert.equal(await (await StateView.open(log))!.hasPaths(), false, 'a table being built is not read');
    await log.append('node', [node(...k, 'a-4', 'alpha::four')]);
    assert.equal((await log.lake.loadTable(ident(CODE_PATHS))).currentSnapshot(), undefined, 'nor written');
    // a delta written while it is being built, committed after the build landed: refused (the run is redone)
    const late = (await StateDelta.open(log))!;
    await late.events('node', [rowsToBatch(kindSchema('node'), [node(...k, 'a-5', 'alpha::five')], 'a late node')]);
    const targets = await late.finish();
    const report = await rebuildState(log, { tables: [CODE_PATHS] });
    assert.ok((report.rows[CODE_PATHS] ?? 0) >= 4, `the fold's pairs: ${show(report.rows)}`);
    assert.equal((await log.lake.loadTable(ident(CODE_PATHS))).properties[PROP_BUILDING], undefined, 'the build landed: no longer marked');
    await assert.rejects(
      log.lake.commit(targets.map((x) => ({ ident: x.ident, update: x.update(), assertOnly: x.assertOnly })), 'late'),
      (e: unknown) => e instanceof ModeChanged,
    );
    await late.abort();
    // built: read, written, equal to the fold, and history answers the same
    const view = (await StateView.open(log))!;
    assert.ok(await view.hasPaths());
    await log.append('node', [node(...k, 'a-2', 'alpha::two')]);
    await equalAt(log, log.readGeneration(), 'built');
    assert.equal(show(await history(log, 'alpha::two')), show(await history(log, 'alpha::two', { from: 'log' })));
    assert.deepEqual((await history(log, 'alpha::four')).ids, ['a-4'], 'a pair written while it was being built is in the fold');
  } finally {
    log.close();
  }
});

test('code_paths: a delta looks its pairs up by one qpath range per first path segment (a single path by equality)', () => {
  const show2 = (xs: unknown[]): string => JSON.stringify(xs);
  assert.equal(
    show2(pathRanges(['beta::x', 'alpha', 'alpha::z', 'alpha::b', 'gamma::only'])),
    show2([
      { op: 'and', args: [{ op: 'ge', col: 'qpath', value: 'alpha' }, { op: 'le', col: 'qpath', value: 'alpha::z' }] },
      { op: 'eq', col: 'qpath', value: 'beta::x' },
      { op: 'eq', col: 'qpath', value: 'gamma::only' },
    ]),
  );
});
