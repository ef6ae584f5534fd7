// Dependencies, honestly (issue 9 part 6): `--with-deps` says where it looked and which
// other versions of a missing crate are present; `--deps nearest` resolves into the nearest
// semver-compatible version present, one substitution (recorded on the run) each;
// `universe remove NAME@VERSION` undoes a universe add in one commit, state tables in step,
// refused while a repo's edges point into the crate unless forced.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { ingest, nearestCompatible, removeUniverseCrate, universeAdd, UniverseRemoveRefused } from '../../src/ingest/index.ts';
import { callers, def } from '../../src/query/index.ts';
import { INGEST_RUNS } from '../../src/log/schema.ts';
import { repoRoot } from '../helpers.ts';
import { freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

/** The sample workspace whose Cargo.lock asks for fnvish 0.2.3, while its vendor/ holds 0.2.1 only. */
async function setup() {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = path.join(lake.dir, 'workspace');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const lock = path.join(ws, 'Cargo.lock');
  writeFileSync(lock, readFileSync(lock, 'utf8').replace('version = "0.2.1"', 'version = "0.2.3"'));
  return { log: lake.log, ws, vendor: path.join(ws, 'vendor') };
}

test('nearestCompatible: same major (0.x: same minor), lowest above else highest below', () => {
  assert.equal(nearestCompatible('0.2.3', ['0.2.1', '0.2.5', '0.2.9', '0.3.0']), '0.2.5');
  assert.equal(nearestCompatible('0.2.3', ['0.2.1', '0.2.0', '0.3.0', '1.0.0']), '0.2.1');
  assert.equal(nearestCompatible('1.4.0', ['1.9.3', '2.0.0', '0.9.0']), '1.9.3');
  assert.equal(nearestCompatible('1.4.0', ['2.0.0']), null);
  assert.equal(nearestCompatible('0.0.3', ['0.0.4']), null);
});

test('--with-deps lists where it looked and the other versions present; --deps nearest substitutes, warns once and records it on the run', async () => {
  const { log, ws, vendor } = await setup();
  const exact = await ingest(log, ws, { repo: 'sample', withDeps: true, searchDirs: [vendor, path.join(ws, 'nowhere')], workers: 0 });
  assert.deepEqual(exact.deps!.notFound, ['fnvish@0.2.3']);
  assert.deepEqual(exact.deps!.searched, [vendor, path.join(ws, 'nowhere')]);
  assert.deepEqual(exact.deps!.missing, [{ krate: 'fnvish@0.2.3', local: ['0.2.1'], lake: [], substitute: null }]);
  assert.equal(exact.substitutions, undefined);
  // exact: the calls name the missing version (no item of the lake is their target)
  const unresolved = (await callers(log, 'fnvish::hash_str')).refs;
  assert.ok(unresolved.length >= 2 && unresolved.every((r) => r.dstKrate === 'fnvish@0.2.3'), JSON.stringify(unresolved.map((r) => [r.dstKrate, r.dst])));

  const near = await ingest(log, ws, { repo: 'sample', withDeps: true, deps: 'nearest', searchDirs: [vendor], workers: 0 });
  assert.deepEqual(near.substitutions, [{ wanted: 'fnvish@0.2.3', used: 'fnvish@0.2.1', from: 'local' }]);
  assert.equal(near.deps!.report.crates, 1, 'the substitute was added to the universe');
  assert.deepEqual(near.deps!.missing, [{ krate: 'fnvish@0.2.3', local: ['0.2.1'], lake: [], substitute: '0.2.1' }]);
  const c = await callers(log, 'fnvish::hash_str');
  assert.ok(c.refs.length >= 2 && c.refs.every((r) => r.dstKrate === 'fnvish@0.2.1' && r.repo === 'sample' && r.dst !== null), JSON.stringify(c.refs.map((r) => [r.repo, r.dstKrate])));
  // recorded on the repo's run row
  const runs = await (await log.table(INGEST_RUNS))!.scan({ filter: eq('run', near.run), columns: ['summary'] }).batches().next();
  const summary = JSON.parse(runs.value!.columns[0]![0] as string) as { substitutions: unknown };
  assert.deepEqual(summary.substitutions, near.substitutions);

  // without --with-deps, nearest substitutes from the lake's universe
  const lakeOnly = await ingest(log, ws, { repo: 'other', deps: 'nearest', workers: 0 });
  assert.deepEqual(lakeOnly.substitutions, [{ wanted: 'fnvish@0.2.3', used: 'fnvish@0.2.1', from: 'lake' }]);
});

test('universe remove: refused while a repo points into the crate, --force removes it in one generation with the state tables, a later add is not skipped', async () => {
  const { log, ws, vendor } = await setup();
  // the lock asks for 0.2.3: give it that version
  renameSync(path.join(vendor, 'fnvish-0.2.1'), path.join(vendor, 'fnvish-0.2.3'));
  const toml = path.join(vendor, 'fnvish-0.2.3', 'Cargo.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace('0.2.1', '0.2.3'));
  await ingest(log, ws, { repo: 'sample', withDeps: true, searchDirs: [vendor], workers: 0 });
  assert.ok((await def(log, 'fnvish::hash_str')).hits.length === 1);

  const g = log.lake.catalog.pointerGeneration();
  await assert.rejects(removeUniverseCrate(log, 'fnvish@0.2.3'), (e: unknown) => {
    assert.ok(e instanceof UniverseRemoveRefused);
    assert.match(e.message, /live edges of repos point into fnvish@0\.2\.3 \(sample: \d+\).*--force — nothing removed/);
    return true;
  });
  assert.equal(log.lake.catalog.pointerGeneration(), g, 'a refusal writes nothing');
  await assert.rejects(removeUniverseCrate(log, 'fnvish@9.9.9'), /the universe has no fnvish@9\.9\.9 .*versions present: fnvish@0\.2\.3.*nothing removed/);
  await assert.rejects(removeUniverseCrate(log, 'fnvish'), /expected NAME@VERSION/);

  const dry = await removeUniverseCrate(log, 'fnvish@0.2.3', { dryRun: true });
  assert.ok(dry.events > 0 && dry.pointedFrom['sample']! > 0);
  assert.equal(log.lake.catalog.pointerGeneration(), g);

  const r = await removeUniverseCrate(log, 'fnvish@0.2.3', { force: true, maintain: false });
  assert.equal(r.generation, g + 1n, 'one commit');
  assert.equal(r.forced, true);
  assert.equal(r.events, dry.events);
  const live = await log.state('node', and(eq('repo', '@universe'), eq('krate', 'fnvish@0.2.3')));
  assert.equal(live.size, 0);
  assert.equal((await def(log, 'fnvish::hash_str')).hits.length, 0, 'the state tables lost it in the same commit');
  assert.equal((await def(log, 'fnvish::hash_str', { from: 'log' })).hits.length, 0);

  // added again: not skipped as present
  const again = await universeAdd(log, [path.join(vendor, 'fnvish-0.2.3')], { workers: 0 });
  assert.equal(again.presentCrates, 0);
  assert.ok(again.events.add > 0);
  assert.equal((await def(log, 'fnvish::hash_str')).hits.length, 1);
});
