// The graph questions of src/query on a real lake (test/query/sample.ts):
// refs and callers across two repos into a universe function, find by glob,
// substring and exact name, def with file and line (exact and by last
// segments), history in commit order, --as-of answers as before a change,
// diff between generations, and a scan filter that prunes.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { scratch } from '../helpers.ts';
import { find, def, refs, callers, callees, history, diff } from '../../src/query/index.ts';
import { A_HELPER, A_MAIN, B_CHECK, REGEX, U_NEW, sampleLake, type Sample } from './sample.ts';

const work = scratch('mimir-query-');
let s: Sample;
before(async () => {
  s = await sampleLake(work.dir);
});
after(() => {
  s?.log.close();
  work.cleanup();
});

test('refs: call sites in both repos into the universe function, by id and by path, with file and line', async () => {
  const r = await refs(s.log, 'regex::Regex::new');
  assert.equal(r.match, 'suffix');
  assert.deepEqual(r.targets.map((t) => [t.repo, t.krate, t.qpath, t.file, t.line]), [['@universe', REGEX, 'regex::regex::string::Regex::new', 'src/regex/string.rs', 180]]);
  const got = r.refs.map((h) => [h.repo, h.edgeKind, h.from?.qpath ?? null, h.file, h.line]);
  assert.deepEqual(got, [
    ['@universe', 'contains', 'regex::regex::string::Regex', 'src/regex/string.rs', 180],
    ['alpha', 'calls', 'alpha::main', 'src/main.rs', 5],
    ['beta', 'uses', 'beta::util', 'src/util.rs', 2],
    ['beta', 'calls', 'beta::util::check', 'src/util.rs', 12],
  ]);
});

test('callers: only calls edges, from both repos, each with the calling node', async () => {
  const r = await callers(s.log, 'regex::regex::string::Regex::new');
  assert.equal(r.match, 'exact');
  assert.deepEqual(r.refs.map((h) => [h.repo, h.krate, h.from?.id, h.from?.qpath, h.file, h.line]), [
    ['alpha', 'alpha@0.1.0', A_MAIN, 'alpha::main', 'src/main.rs', 5],
    ['beta', 'beta@0.2.0', B_CHECK, 'beta::util::check', 'src/util.rs', 12],
  ]);
});

test('callers --as-of: an earlier generation still sees the removed caller', async () => {
  const r = await callers(s.log, 'regex::Regex::new', { asOf: { generation: s.changed } });
  assert.deepEqual(r.refs.map((h) => [h.from?.qpath, h.line]), [['alpha::main', 5], ['alpha::helper', 31], ['beta::util::check', 12]]);
  assert.equal(r.generation, s.changed);
});

test('callees: calls out of an item, with the called node when resolved', async () => {
  const r = await callees(s.log, 'alpha::main');
  assert.deepEqual(r.callees.map((h) => [h.to?.qpath, h.to?.krate, h.file, h.line]), [['regex::regex::string::Regex::new', REGEX, 'src/main.rs', 5]]);
  const b = await callees(s.log, 'beta::util::check');
  assert.deepEqual(b.callees.map((h) => [h.to, h.dstPath, h.line]), [[null, 'regex::Regex::new', 12]]);
  const none = await callees(s.log, 'no::such::thing');
  assert.equal(none.match, 'none');
  assert.deepEqual(none.callees, []);
});

test('find: glob over names, exact name, substring, kind/repo/krate filters; removed items are gone', async () => {
  const g = await find(s.log, 'ch*');
  assert.deepEqual(g.hits.map((h) => h.qpath), ['beta::util::check']);
  const q = await find(s.log, '?ew');
  assert.deepEqual(q.hits.map((h) => [h.repo, h.qpath]), [['@universe', 'regex::regex::string::Regex::new']]);
  assert.deepEqual((await find(s.log, 'Regex', { exact: true })).hits.map((h) => h.kind), ['struct']);
  assert.deepEqual((await find(s.log, 'REGEX')).hits.map((h) => h.qpath), ['regex::regex::string::Regex']);
  assert.deepEqual((await find(s.log, 'e', { kind: 'method' })).hits.map((h) => h.qpath), ['regex::regex::string::Regex::new']);
  assert.deepEqual((await find(s.log, 'string::regex::new')).hits.map((h) => h.qpath), ['regex::regex::string::Regex::new']);
  assert.deepEqual((await find(s.log, '*', { repo: 'beta' })).hits.map((h) => h.qpath), ['beta::util', 'beta::util::check']);
  assert.deepEqual((await find(s.log, '*', { krate: 'alpha@0.1.0' })).hits.map((h) => h.qpath), ['alpha::main']);
  assert.deepEqual((await find(s.log, 'beta::*::check')).hits.map((h) => h.id), [B_CHECK]);
  assert.deepEqual((await find(s.log, 'helper')).hits, []);
  assert.deepEqual((await find(s.log, 'helper', { asOf: { generation: s.added } })).hits.map((h) => h.id), [A_HELPER]);
});

test('def: exact qpath and by last segments, with repo, krate, file and line', async () => {
  const e = await def(s.log, 'beta::util::check');
  assert.equal(e.match, 'exact');
  assert.deepEqual(e.hits.map((h) => [h.repo, h.krate, h.file, h.line]), [['beta', 'beta@0.2.0', 'src/util.rs', 10]]);
  const r = await def(s.log, 'regex::Regex::new');
  assert.equal(r.match, 'suffix');
  assert.deepEqual(r.hits.map((h) => [h.id, h.file, h.line]), [[U_NEW, 'src/regex/string.rs', 180]]);
  assert.deepEqual((await def(s.log, 'Regex::new')).hits.map((h) => h.id), [U_NEW]);
  assert.equal((await def(s.log, 'nothing::here')).match, 'none');
});

test('--as-of: an earlier generation answers as before the change (by generation and by time)', async () => {
  const before = await def(s.log, 'alpha::helper', { asOf: { generation: s.added } });
  assert.deepEqual(before.hits.map((h) => [h.line, h.signature]), [[20, 'fn helper()']]);
  const afterChange = await def(s.log, 'alpha::helper', { asOf: { generation: s.changed } });
  assert.deepEqual(afterChange.hits.map((h) => [h.line, h.signature]), [[30, 'fn helper(x: u8)']]);
  assert.equal((await def(s.log, 'alpha::helper')).match, 'none');
  const gens = s.log.lake.catalog.generations({ limit: 1000 });
  const at = gens.find((g) => g.generation === s.added)!;
  const byTime = await def(s.log, 'alpha::helper', { asOf: { time: new Date(at.timeMs) } });
  assert.equal(byTime.generation, s.added);
  assert.deepEqual(byTime.hits.map((h) => h.line), [20]);
});

test('history: add, change, remove of the node and its edge, oldest first, with generations', async () => {
  const h = await history(s.log, 'alpha::helper');
  assert.deepEqual(h.ids, [A_HELPER]);
  assert.deepEqual(
    h.events.map((e) => [e.kind, e.op, e.node?.line ?? e.edge?.line ?? null]),
    [['node', 'add', 20], ['edge', 'add', 21], ['node', 'change', 30], ['edge', 'change', 31], ['node', 'remove', null], ['edge', 'remove', null]],
  );
  const gens = h.events.map((e) => e.generation);
  assert.deepEqual(gens, [s.added - 1n, s.added, s.changed - 1n, s.changed, s.removed - 1n, s.removed]);
  for (const e of h.events) assert.ok(e.committedMs !== null && e.ts !== null);
  const early = await history(s.log, 'alpha::helper', { asOf: { generation: s.added } });
  assert.deepEqual(early.events.map((e) => e.op), ['add', 'add']);
});

test('diff: items added, changed (by aspect) and removed between generations; edges as counts', async () => {
  const what = (d: Awaited<ReturnType<typeof diff>>) => d.changes.map((c) => [c.change, c.aspects.join(','), (c.after ?? c.before)!.qpath]);
  const d1 = await diff(s.log, { from: s.base, to: s.changed });
  assert.deepEqual(what(d1), [['added', '', 'alpha::helper']]);
  assert.equal(d1.changes[0]!.after!.line, 30);
  assert.deepEqual(d1.edges, { added: 1, changed: 0, removed: 0 });
  const d2 = await diff(s.log, { from: s.added, to: s.changed });
  assert.deepEqual(what(d2), [['changed', 'signature', 'alpha::helper']]);
  assert.deepEqual([d2.changes[0]!.before!.line, d2.changes[0]!.after!.line], [20, 30]);
  assert.deepEqual(d2.edges, { added: 0, changed: 0, removed: 0 }, 'an edge whose only change is its line is not a change');
  const d3 = await diff(s.log, { from: s.changed, to: s.removed, repo: 'alpha' });
  assert.deepEqual(what(d3), [['removed', '', 'alpha::helper']]);
  assert.deepEqual(d3.edges, { added: 0, changed: 0, removed: 1 });
  const other = await diff(s.log, { from: s.changed, to: s.removed, repo: 'beta' });
  assert.deepEqual([other.changes.length, other.edges.removed], [0, 0]);
  const all = await diff(s.log, { from: 0n, to: s.base });
  assert.equal(all.changes.filter((c) => c.change === 'added').length, all.changes.length);
  assert.ok(all.changes.length >= 5, `${all.changes.length} items added`);
  await assert.rejects(diff(s.log, { from: s.removed, to: s.base }), /the range is reversed: --from \d+ is after --to \d+ — nothing compared; swap them: --from \d+ --to \d+/);
});

test('pushdown: the exact-name filter find uses opens only the file that holds the name', async () => {
  const { nameMatcher } = await import('../../src/query/index.ts');
  const files = async (filter?: import('../../src/lake/expr/expr.ts').Expr): Promise<Set<string>> => {
    const out = new Set<string>();
    for await (const b of s.log.scan('node', { filter })) out.add(b.source!.file);
    return out;
  };
  const all = await files();
  const pruned = await files(nameMatcher('check', true).filter);
  assert.ok(all.size >= 4, `node files: ${all.size}`);
  assert.equal(pruned.size, 1);
  assert.equal((await files(nameMatcher('hel*').filter)).size, 2, 'a glob prefix prunes by range (helper add and change)');
});
