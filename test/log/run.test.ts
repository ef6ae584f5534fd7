// Runs (src/log/run.ts): one run lands in one generation with its run row and
// any extra targets; a stale key or a ring mode change is a RunConflict that
// lands nothing and leaves no file behind; an abort deletes every file the run
// wrote or tracked; the run's lease keeps its files from gc while it is open.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog, rowsToBatch } from '../../src/log/event-log.ts';
import { RunConflict } from '../../src/log/run.ts';
import { gc } from '../../src/log/gc.ts';
import { removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { CODE_NODE_EVENTS, INGEST_RUNS, PROP_RING, UNIVERSE_REPO, ident, kindSchema, ringTableName, tableName } from '../../src/log/schema.ts';
import type { Schema } from '../../src/lake/spec/types.ts';
import { nodeRow } from './rows.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-run-');
after(work.cleanup);
let n = 0;
const root = (): string => path.join(work.dir, `lake-${n++}`);

const nodes = (repo: string, ids: string[]) => rowsToBatch(kindSchema('node'), ids.map((id) => nodeRow(repo, `${repo}@0.1.0`, id)), 'test');
const runRow = (run: string, repo: string) => ({ run, repo, started: 1_700_000_000_000_000n, status: 'ok', events: 0n });

/** Orphans a gc would delete now (no lease, any age): files the lake does not reference. */
async function orphans(log: EventLog): Promise<string[]> {
  return (await removeOrphanFiles(log.lake, { olderThanMs: 0, dryRun: true })).deleted;
}

test('run: events of several tables, several writes, and the run row land in one generation', async () => {
  const log = await EventLog.open(root());
  const g0 = log.lake.catalog.pointerGeneration();
  const run = await log.beginRun({ repo: 'app', run: 'r1', keys: ['repo:app'] });
  assert.equal(run.generation, g0);
  assert.equal(run.key('repo:app'), null);
  await run.write('node', [nodes('app', ['a', 'b'])]);
  await run.write('node', [nodes('app', ['c'])]);
  await run.write('node', [nodes(UNIVERSE_REPO, ['u'])]);
  await run.write('file', [rowsToBatch(kindSchema('file'), [{ repo: 'app', krate: 'app@0.1.0', run: 'r1', ts: 1n, op: 'add', id: 'f', path: 'src/lib.rs' }], 'test')]);
  assert.equal(log.lake.catalog.pointerGeneration(), g0, 'nothing visible before the commit');
  const c = await run.commit(runRow('r1', 'app'), { keys: { 'repo:app': 'r1' } });
  assert.equal(c.generation, g0 + 1n);
  assert.deepEqual(c.rows, { node: 4, edge: 0, file: 1, pos: 0 });
  assert.equal(c.ring, 1);
  const [entry] = log.lake.catalog.generations({ limit: 1 });
  assert.deepEqual(
    entry!.tables.map((t) => t.ident.name).sort(),
    [INGEST_RUNS, tableName('file'), tableName('node'), ringTableName('node')].sort(),
  );
  assert.equal((await log.rows('node')).length, 4);
  assert.equal((await log.rows('node', { generation: g0 })).length, 0, 'the generation before holds none of it');
  assert.equal(log.lake.catalog.readKeys(['repo:app']).values.get('repo:app'), 'r1');
  const runs = await (await log.table(INGEST_RUNS))!.scan().toArray();
  assert.deepEqual(runs.map((r) => r.run), ['r1']);
  assert.deepEqual(await orphans(log), []);
  log.close();
});

test('run: a key that moved since the run began is a RunConflict; nothing lands and no file is left', async () => {
  const dir = root();
  const log = await EventLog.open(dir);
  const other = await EventLog.open(dir); // another handle with its own catalog connection
  const a = await log.beginRun({ repo: 'app', run: 'ra', keys: ['repo:app'] });
  const b = await other.beginRun({ repo: 'app', run: 'rb', keys: ['repo:app'] });
  await a.write('node', [nodes('app', ['x'])]);
  await b.write('node', [nodes('app', ['x'])]);
  await a.commit(runRow('ra', 'app'), { keys: { 'repo:app': 'ra' } });
  const g = log.lake.catalog.pointerGeneration();
  await assert.rejects(b.commit(runRow('rb', 'app'), { keys: { 'repo:app': 'rb' } }), (e: unknown) => {
    assert.ok(e instanceof RunConflict, String(e));
    assert.equal(e.reason, 'key');
    assert.match(e.message, /repo:app.*expected \(absent\), found ra/);
    return true;
  });
  assert.equal(log.lake.catalog.pointerGeneration(), g, 'the conflicting run did not land');
  assert.equal((await log.rows('node')).length, 1, 'the event once');
  assert.deepEqual(await orphans(log), [], 'the conflicting run deleted its files');
  // a run that begins now sees the first run's key and lands
  const c = await other.beginRun({ repo: 'app', run: 'rc', keys: ['repo:app'] });
  assert.equal(c.key('repo:app'), 'ra');
  await c.commit(runRow('rc', 'app'), { keys: { 'repo:app': 'rc' } });
  // different repos do not conflict
  const d = await log.beginRun({ repo: 'one', run: 'rd', keys: ['repo:one'] });
  const e = await other.beginRun({ repo: 'two', run: 're', keys: ['repo:two'] });
  await d.write('node', [nodes('one', ['p'])]);
  await e.write('node', [nodes('two', ['q'])]);
  await e.commit(runRow('re', 'two'), { keys: { 'repo:two': 're' } });
  await d.commit(runRow('rd', 'one'), { keys: { 'repo:one': 'rd' } });
  assert.equal((await log.rows('node')).length, 3);
  other.close();
  log.close();
});

test('run: a key never read at the start cannot be set', async () => {
  const log = await EventLog.open(root());
  const run = await log.beginRun({ repo: 'app', run: 'r', keys: ['repo:app'] });
  await assert.rejects(run.commit(null, { keys: { 'repo:other': 'r' } }), /key repo:other was not read at the run's start/);
  log.close();
});

test('run: a ring mode change between the writes and the commit is a RunConflict (mode); nothing lands', async () => {
  const log = await EventLog.open(root());
  const run = await log.beginRun({ repo: UNIVERSE_REPO, run: 'r', keys: [] });
  assert.equal(run.split, true);
  await run.write('node', [nodes(UNIVERSE_REPO, ['u1', 'u2'])]);
  const node = await log.lake.loadTable(ident(CODE_NODE_EVENTS));
  await node.removeProperties([PROP_RING]); // switched to unified behind the run's back
  const g = log.lake.catalog.pointerGeneration();
  await assert.rejects(run.commit(runRow('r', UNIVERSE_REPO)), (e: unknown) => e instanceof RunConflict && e.reason === 'mode');
  assert.equal(log.lake.catalog.pointerGeneration(), g);
  assert.deepEqual(await orphans(log), []);
  log.close();
});

test('run: extra targets (the state tables\' hook) land in the run\'s commit; an abort deletes tracked files', async () => {
  const log = await EventLog.open(root());
  const schema: Schema = { schemaId: 0, fields: [{ id: 1, name: 'id', required: true, type: { type: 'string' } }] };
  await log.lake.createTable(ident('extra_state'), schema);
  const extra = async (ids: string[]) => {
    const t = await log.lake.loadTable(ident('extra_state'));
    const files = await t.writeDataFiles([{ fields: schema.fields, numRows: ids.length, columns: [ids] }]);
    return { t, files };
  };

  const run = await log.beginRun({ repo: 'app', run: 'r1', keys: [] });
  await run.write('node', [nodes('app', ['a'])]);
  const { t, files } = await extra(['a']);
  run.track(files.map((f) => f.file.filePath));
  run.addTarget({ ident: ident('extra_state'), update: () => t.appendUpdate(files) });
  const c = await run.commit(runRow('r1', 'app'));
  const [entry] = log.lake.catalog.generations({ limit: 1 });
  assert.equal(entry!.generation, c.generation);
  assert.ok(entry!.tables.some((x) => x.ident.name === 'extra_state'), 'the extra table is in the run\'s generation');
  assert.deepEqual((await (await log.lake.loadTable(ident('extra_state'))).scan().toArray()).map((r) => r.id), ['a']);

  const g = log.lake.catalog.pointerGeneration();
  const aborted = await log.beginRun({ repo: 'app', run: 'r2', keys: [] });
  await aborted.write('node', [nodes('app', ['b'])]);
  const more = await extra(['b']);
  const paths = more.files.map((f) => f.file.filePath);
  aborted.track(paths);
  await aborted.abort();
  for (const p of paths) assert.ok(!existsSync(fileURLToPath(p)), `tracked file ${p} deleted`);
  assert.equal(log.lake.catalog.pointerGeneration(), g);
  assert.deepEqual(await orphans(log), []);
  await assert.rejects(aborted.write('node', [nodes('app', ['c'])]), /the run is aborted/);
  log.close();
});

test('run: while a run is open, gc (in the same lake) keeps its files and the snapshots it reads', async () => {
  const dir = root();
  const log = await EventLog.open(dir);
  await log.append('node', [nodeRow('app', 'app@0.1.0', 'old')]);
  const run = await log.beginRun({ repo: 'app', run: 'r', keys: [] });
  await run.write('node', [nodes('app', ['new'])]);
  // another writer moves the table on, then gc with no retention runs in another handle
  await log.append('node', [nodeRow('app', 'app@0.1.0', 'later')]);
  const other = await EventLog.open(dir);
  await gc(other, { retainMs: 0, keepLast: 1 });
  other.close();
  assert.deepEqual((await run.view.rows('node')).map((r) => r.id), ['old'], 'the run still reads its generation');
  await run.commit(runRow('r', 'app'));
  assert.deepEqual((await log.rows('node')).map((r) => r.id).sort(), ['later', 'new', 'old']);
  log.close();
});
