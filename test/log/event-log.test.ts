// The event log's core: tables, modes, handles, routing and merged reads.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { EventLog, PinnedError, excludesRepo } from '../../src/log/event-log.ts';
import * as fs from 'node:fs';
import { Lake } from '../../src/lake/lake.ts';
import { and, eq, inList, or } from '../../src/lake/expr/expr.ts';
import {
  CODE_NODE_EVENTS,
  PROP_RING,
  RING_SPLIT,
  SOURCE_KINDS,
  UNIVERSE_REPO,
  ident,
  ringTableName,
  tableName,
} from '../../src/log/schema.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-log-');
after(work.cleanup);
let n = 0;
const root = (): string => path.join(work.dir, `lake-${n++}`);

const node = (repo: string, krate: string, id: string, op = 'add', name = id) => ({
  repo,
  krate,
  run: 'run-1',
  ts: 1_700_000_000_000_000n,
  op,
  id,
  kind: 'fn',
  name,
});

test('log: open creates every table; a new lake is split, init unified makes a legacy lake', async () => {
  const a = await EventLog.open(root());
  for (const k of SOURCE_KINDS) {
    assert.ok(a.lake.tableExists(ident(tableName(k))));
    assert.ok(a.lake.tableExists(ident(ringTableName(k))));
  }
  assert.equal(await a.ringSplit(), true);
  a.close();
  const r = root();
  const b = await EventLog.open(r, { init: 'unified' });
  assert.equal(await b.ringSplit(), false);
  b.close();
  await assert.rejects(EventLog.open(r, { init: 'split' }), /is unified; it cannot be initialised as split/);
});

test('log: no table location lies inside another', async () => {
  const log = await EventLog.open(root());
  const locs = log.lake.catalog.listAllTables().map((t) => log.lake.tableLocation(t));
  for (const a of locs) for (const b of locs) if (a !== b) assert.ok(!b.startsWith(a + '/'), `${b} inside ${a}`);
  log.close();
});

test('log: split lake routes ring rows to the ring table and repo rows to the source', async () => {
  const log = await EventLog.open(root());
  const rep = await log.append('node', [node(UNIVERSE_REPO, 'serde@1.0.0', 'u1'), node('app', 'app@0.1.0', 'a1')]);
  assert.equal(rep.rows, 2);
  assert.equal(rep.ring, 1);
  const ring = await log.lake.loadTable(ident(ringTableName('node')));
  const src = await log.lake.loadTable(ident(tableName('node')));
  assert.deepEqual((await ring.scan().toArray()).map((r) => r.id), ['u1']);
  assert.deepEqual((await src.scan().toArray()).map((r) => r.id), ['a1']);
  assert.equal((await log.rows('node')).length, 2);
  log.close();
});

test('log: a split read whose filter pins repo to other repos never opens the ring table', async () => {
  const log = await EventLog.open(root());
  await log.append('node', [node(UNIVERSE_REPO, 'serde@1.0.0', 'u1'), node('app', 'app@0.1.0', 'a1'), node('lib', 'lib@0.1.0', 'l1')]);
  // the ring's manifest list gone: any read of the ring table fails, so an answer proves it was not read
  const ring = await log.lake.loadTable(ident(ringTableName('node')));
  fs.rmSync(new URL(ring.metadata.snapshots.at(-1)!.manifestList).pathname.replace(/^\/\/?/, '/'), { force: true });
  const ids = async (filter: Parameters<typeof excludesRepo>[0]) => (await log.rows('node', { filter })).map((x) => x.id).sort();
  assert.deepEqual(await ids(eq('repo', 'app')), ['a1']);
  assert.deepEqual(await ids(inList('repo', ['app', 'lib'])), ['a1', 'l1']);
  assert.deepEqual(await ids(and(inList('repo', ['app']), eq('id', 'a1'))), ['a1']);
  assert.deepEqual(await ids(or(eq('repo', 'app'), eq('repo', 'lib'))), ['a1', 'l1']);
  // a filter that may hold a ring row reads it (and here fails on the missing manifest list)
  await assert.rejects(log.rows('node', { filter: inList('repo', ['app', UNIVERSE_REPO]) }));
  await assert.rejects(log.rows('node', { filter: or(eq('repo', 'app'), eq('id', 'u1')) }));
  log.close();
});

test('log: excludesRepo reads the shape of a filter', () => {
  assert.equal(excludesRepo(eq('repo', 'app'), UNIVERSE_REPO), true);
  assert.equal(excludesRepo(eq('repo', UNIVERSE_REPO), UNIVERSE_REPO), false);
  assert.equal(excludesRepo(inList('repo', ['a', 'b']), UNIVERSE_REPO), true);
  assert.equal(excludesRepo(inList('repo', ['a', UNIVERSE_REPO]), UNIVERSE_REPO), false);
  assert.equal(excludesRepo(and(eq('id', 'x'), inList('repo', ['a'])), UNIVERSE_REPO), true);
  assert.equal(excludesRepo(or(eq('repo', 'a'), eq('id', 'x')), UNIVERSE_REPO), false);
  assert.equal(excludesRepo(eq('krate', 'app'), UNIVERSE_REPO), false);
  assert.equal(excludesRepo({ op: 'not', arg: eq('repo', UNIVERSE_REPO) }, UNIVERSE_REPO), false);
});

test('log: unified lake keeps ring rows in the source table', async () => {
  const log = await EventLog.open(root(), { init: 'unified' });
  await log.append('edge', [{ repo: UNIVERSE_REPO, krate: 'serde@1.0.0', run: 'r', ts: 1n, op: 'add', id: 'e1', edge_kind: 'calls' }]);
  const src = await log.lake.loadTable(ident(tableName('edge')));
  assert.equal((await src.scan().toArray()).length, 1);
  assert.equal((await log.rows('edge')).length, 1);
  log.close();
});

test('log: split reads never count ring rows left in a source table twice', async () => {
  const r = root();
  const log = await EventLog.open(r, { init: 'unified' });
  await log.append('node', [node(UNIVERSE_REPO, 'serde@1.0.0', 'u1'), node('app', 'app@0.1.0', 'a1')]);
  // copy the ring row by hand and switch, as a split does, leaving the old row in the source
  const ring = await log.lake.loadTable(ident(ringTableName('node')));
  await ring.append([{ fields: ring.schema.fields, numRows: 1, columns: ring.schema.fields.map((f) => [({ repo: UNIVERSE_REPO, krate: 'serde@1.0.0', run: 'run-1', ts: 1_700_000_000_000_000n, op: 'add', id: 'u1', kind: 'fn', name: 'u1' } as Record<string, unknown>)[f.name] ?? null] as never) }]);
  const nodeT = await log.lake.loadTable(ident(CODE_NODE_EVENTS));
  await nodeT.setProperties({ [PROP_RING]: RING_SPLIT });
  const rows = await log.rows('node');
  assert.deepEqual(rows.map((x) => x.id).sort(), ['a1', 'u1']);
  log.close();
});

test('log: a pinned handle reads its generation and refuses every write', async () => {
  const log = await EventLog.open(root());
  const g1 = (await log.append('node', [node('app', 'app@0.1.0', 'a1')])).generation;
  await log.append('node', [node('app', 'app@0.1.0', 'a2')]);
  const pinned = log.pin({ generation: g1 });
  assert.equal(pinned.isPinned, true);
  assert.equal(log.isPinned, false);
  assert.deepEqual((await pinned.rows('node')).map((x) => x.id), ['a1']);
  await assert.rejects(pinned.append('node', [node('app', 'app@0.1.0', 'a3')]), (e: Error) => e instanceof PinnedError && /a pinned read handle cannot append/.test(e.message));
  await assert.rejects(pinned.commit('x', async () => 1), /a pinned read handle cannot/);
  // the pin holds a lease on its generation while open
  assert.ok(log.lake.catalog.liveLeases().some((l) => l.releaseBase === g1));
  pinned.close();
  assert.ok(!log.lake.catalog.liveLeases().some((l) => l.releaseBase === g1));
  const byTime = log.pin({ asOf: Date.now() });
  assert.equal((await byTime.rows('node')).length, 2);
  byTime.close();
  log.close();
});

test('log: state folds events per id in commit order; remove hides the id', async () => {
  const log = await EventLog.open(root());
  await log.append('node', [node('app', 'app@0.1.0', 'a1', 'add', 'first'), node('app', 'app@0.1.0', 'a2')]);
  await log.append('node', [node('app', 'app@0.1.0', 'a1', 'change', 'second')]);
  const g = log.readGeneration();
  await log.append('node', [node('app', 'app@0.1.0', 'a2', 'remove')]);
  const s = await log.state('node');
  assert.deepEqual([...s.keys()], ['a1']);
  assert.equal(s.get('a1')!.name, 'second');
  const before = await log.state('node', undefined, { generation: g });
  assert.deepEqual([...before.keys()].sort(), ['a1', 'a2']);
  const one = await log.state('node', eq('id', 'a1'));
  assert.equal(one.size, 1);
  log.close();
});

test('log: every commit records releaseBase and is in flight until it lands', async () => {
  const log = await EventLog.open(root());
  const base = log.lake.catalog.pointerGeneration();
  let seen: number | undefined;
  await log.commit('probe', async () => {
    seen = log.inFlight().length;
    assert.equal(log.releaseBase, base);
    assert.ok(log.lake.catalog.liveLeases().some((l) => l.note === 'probe'));
  });
  assert.equal(seen, 1);
  assert.equal(log.inFlight().length, 0);
  log.close();
});

test('log: commits of one log are serialised by the commit lock', async () => {
  const log = await EventLog.open(root());
  const order: string[] = [];
  await Promise.all([
    log.commit('a', async () => {
      order.push('a:start');
      await new Promise((r) => setTimeout(r, 30));
      order.push('a:end');
    }),
    log.commit('b', async () => {
      order.push('b:start');
      order.push('b:end');
    }),
  ]);
  assert.deepEqual(order, ['a:start', 'a:end', 'b:start', 'b:end']);
  log.close();
});

test('log: a switch between writing and committing re-routes ring rows (no ring row in a source table after the switch)', async () => {
  const r = root();
  const log = await EventLog.open(r, { init: 'unified' });
  // a second handle flips the mode while the first one's commit is being prepared
  const lake2 = Lake.open(r);
  const nodeT = await lake2.loadTable(ident(CODE_NODE_EVENTS));
  let flipped = false;
  const orig = log.lake.commit.bind(log.lake);
  log.lake.commit = async (targets, note) => {
    if (!flipped) {
      flipped = true;
      await nodeT.setProperties({ [PROP_RING]: RING_SPLIT });
    }
    return orig(targets, note);
  };
  await log.append('edge', [{ repo: UNIVERSE_REPO, krate: 'serde@1.0.0', run: 'r', ts: 1n, op: 'add', id: 'e1' }]);
  const src = await log.lake.loadTable(ident(tableName('edge')));
  const ring = await log.lake.loadTable(ident(ringTableName('edge')));
  assert.equal((await src.scan().toArray()).length, 0, 'the source table got no ring row');
  assert.equal((await ring.scan().toArray()).length, 1, 'the row went to the ring table');
  lake2.close();
  log.close();
});
