// Name resolution through glob imports that import each other (2015-style
// `use common::*` in several modules, and `use super::x::*` rings) stays
// fast: each (module, name) lookup is visited once per resolution and
// memoised per crate. The fixture crate took exponential time before (a
// 24-level depth limit was the only brake) and must extract in well under
// two seconds, with the names that do resolve through the ring resolved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';
import { readCrateDir, type CrateGraph, type EdgeFact } from '../../src/extract/index.ts';
import { extractPackage } from './helpers.ts';

const fixture = path.join(repoRoot, 'test', 'extract', 'fixtures', 'glob-cycle');

function edge(g: CrateGraph, from: string, kind: EdgeFact['kind'], text: string): EdgeFact {
  const src = g.nodes.find((n) => n.qpath === from);
  assert.ok(src, `no node ${from}`);
  const hits = g.edges.filter((e) => e.src === src.id && e.kind === kind);
  const e = hits.find((x) => x.dstPath === text || x.dstPath.endsWith(`::${text}`));
  assert.ok(e, `no ${kind} edge ${from} -> ${text}; have ${hits.map((x) => x.dstPath).join(', ')}`);
  return e;
}

test('mutually glob-importing modules extract in well under two seconds, and names through the ring resolve', async () => {
  const { pkg } = await readCrateDir(fixture);
  assert.ok(pkg);
  await extractPackage(pkg); // warm the grammar: the limit is for resolution, not wasm start-up
  const t0 = performance.now();
  const g = await extractPackage(pkg);
  const ms = performance.now() - t0;
  assert.ok(ms < 2000, `extraction took ${ms.toFixed(0)} ms`);
  assert.deepEqual(g.problems, []);
  assert.equal(g.files.length, 13);

  // through `super::x::*` globs that form a cycle: found where they are defined
  assert.equal(edge(g, 'glob_cycle::linked::one::one_fn', 'calls', 'base').dstPath, 'glob_cycle::linked::base');
  assert.equal(edge(g, 'glob_cycle::linked::one::one_fn', 'calls', 'two_fn').dstPath, 'glob_cycle::linked::two::two_fn');
  assert.equal(edge(g, 'glob_cycle::linked::five::five_fn', 'calls', 'one_fn').dstPath, 'glob_cycle::linked::one::one_fn');
  assert.equal(edge(g, 'glob_cycle::linked::four::four_make', 'type_ref', 'OneItem').dstPath, 'glob_cycle::linked::one::OneItem');
  for (const e of [edge(g, 'glob_cycle::linked::one::one_fn', 'calls', 'two_fn'), edge(g, 'glob_cycle::entry', 'calls', 'alpha_fn')]) {
    assert.ok(e.dst, `${e.dstPath} resolved to a node`);
  }
  // a name defined nowhere in the cycle: not found, text kept
  const absent = edge(g, 'glob_cycle::linked::three::three_fn', 'calls', 'absent_fn');
  assert.equal(absent.dst, null);
  assert.equal(absent.dstPath, 'absent_fn');
  const missing = edge(g, 'glob_cycle::gamma::gamma_fn', 'calls', 'not_defined_anywhere');
  assert.equal(missing.dst, null);
});
