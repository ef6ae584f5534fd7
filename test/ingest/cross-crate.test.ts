// Resolution into dependencies through the lake (src/ingest/deps.ts): a
// crate's calls on a dependency's types resolve to that crate's nodes —
// from this run's results when the dependency is extracted in the same run
// (it goes first), from the lake's stored summaries (public paths,
// type_info) when it is not, without reading its sources again.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { ingest } from '../../src/ingest/index.ts';
import { def } from '../../src/query/def.ts';
import { callers, refs } from '../../src/query/refs.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { repoRoot } from '../helpers.ts';
import { freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

const fixture = path.join(repoRoot, 'test', 'extract', 'fixtures', 'resolve');

async function setup(): Promise<{ log: EventLog; ws: string }> {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = path.join(lake.dir, 'resolve');
  cpSync(fixture, ws, { recursive: true });
  return { log: lake.log, ws };
}

/** app's live call edges: line -> dst path (dst id, dst krate). */
async function appCalls(log: EventLog): Promise<Map<string, { dst: string | null; krate: string | null }>> {
  const out = new Map<string, { dst: string | null; krate: string | null }>();
  for (const r of (await log.state('edge', and(eq('krate', 'app@0.1.0'), eq('edge_kind', 'calls')))).values()) {
    out.set(`${r['line']} ${r['dst_path']}`, { dst: (r['dst'] as string | null) ?? null, krate: (r['dst_krate'] as string | null) ?? null });
  }
  return out;
}

async function depIds(log: EventLog): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of (await log.state('node', eq('krate', 'dep@1.0.0'))).values()) out.set(r['qpath'] as string, r['id'] as string);
  return out;
}

test('cross-crate: calls on a dependency\'s types resolve to its nodes, in the same run and later from the lake', async () => {
  const { log, ws } = await setup();
  const first = await ingest(log, ws, { repo: 'fx' });
  assert.deepEqual(first.problems, []);
  const dep = await depIds(log);
  const want = [
    ['4 dep::engine::Engine::new', 'dep::engine::Engine::new'], // `Engine::new` through `use dep::Engine` (a re-export)
    ['4 dep::engine::Engine::is_match', 'dep::engine::Engine::is_match'], // `…(p)?.is_match(text)`: the chain through `?`
    ['5 dep::start', 'dep::start'],
    ['6 dep::engine::Engine::find', 'dep::engine::Engine::find'], // `e` from dep::start's declared return type
    ['7 dep::engine::Match::end', 'dep::engine::Match::end'], // `m` from Option<Match>::unwrap
  ];
  const check = async () => {
    const calls = await appCalls(log);
    for (const [key, qpath] of want) {
      const e = calls.get(key!);
      assert.ok(e, `app call ${key}; have ${[...calls.keys()].join(', ')}`);
      assert.deepEqual(e, { dst: dep.get(qpath!), krate: 'dep@1.0.0' }, key);
    }
  };
  await check();

  // app alone changes: dep is not extracted again, its summary comes from the lake
  const lib = path.join(ws, 'app', 'src', 'lib.rs');
  writeFileSync(lib, readFileSync(lib, 'utf8').replace('usize::from(found)', 'usize::from(!found)'));
  const second = await ingest(log, ws, { repo: 'fx' });
  assert.equal(second.unchangedCrates, 6, 'names, old2015, calls, dep, ext and user are not parsed again');
  await check();
  assert.equal(second.events.add + second.events.remove, 0, 'a body edit adds and removes nothing');
});

test('cross-crate: def follows a facade (`pub use dep as depx;`, `pub extern crate dep as engine_crate;`) to the re-exported crate\'s items', async () => {
  const { log, ws } = await setup();
  await ingest(log, ws, { repo: 'fx' });
  const dep = await depIds(log);
  for (const path of ['ext::depx::Engine', 'ext::engine_crate::Engine', 'ext::engine_crate::start']) {
    const got = await def(log, path);
    const want = path.endsWith('start') ? 'dep::start' : 'dep::engine::Engine';
    assert.deepEqual([got.match, got.hits.map((h) => h.id)], ['exact', [dep.get(want)]], path);
  }
  // a method through the facade: `dep::Engine::new` then matches by its crate segment and tail, as without the facade
  assert.deepEqual((await def(log, 'ext::depx::Engine::new')).hits.map((h) => h.id), [dep.get('dep::engine::Engine::new')]);
  // the facade module itself, and a name it does not re-export
  assert.deepEqual((await def(log, 'ext::depx')).hits.map((h) => h.qpath), ['dep']);
  assert.equal((await def(log, 'ext::depx::Nothing')).match, 'none');
});

test('callers: a call of a free fn is never a caller of a method of the same name (ext::show beside ext::Show::show)', async () => {
  const { log, ws } = await setup();
  await ingest(log, ws, { repo: 'fx' });
  const lines = async (path: string) => (await callers(log, path)).refs.filter((h) => h.krate === 'ext@0.1.0').map((h) => h.line).sort((a, b) => (a ?? 0) - (b ?? 0));
  // the compiler (MIR of ext, by hand): 83 calls ext::show twice; 79 and 7 call <Engine as Show>::show and Show::show
  assert.deepEqual(await lines('ext::show'), [83, 83]);
  assert.ok(!(await lines('ext::Show::show')).includes(83), 'show(e) is no call of the method Show::show');
});

test('refs: an enum variant lists its uses in expressions and patterns (value_ref edges), with their lines', async () => {
  const { log, ws } = await setup();
  await ingest(log, ws, { repo: 'fx' });
  const r = await refs(log, 'ext::Walk::Quit');
  assert.deepEqual(r.refs.filter((h) => h.edgeKind === 'value_ref').map((h) => h.line), [100, 100, 104, 113]);
  assert.ok(r.refs.every((h) => h.from?.qpath === 'ext::walk' || h.from?.qpath === 'ext::walk_glob' || h.edgeKind === 'contains'), 'each from ext::walk or walk_glob (and the enum containing it)');
});
