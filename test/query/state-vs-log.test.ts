// Answers from the serving state tables equal answers from a fold of the log:
// on real crates (a few of the Debian corpus, when installed) plus the sample
// workspace, for def, find (exact, glob — `*` too, more matches than an IN list holds —, substring, by path), refs, callers,
// callees and history of items picked across every kind — now and as of an earlier
// generation.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { expandCrateDirs, ingest, universeAdd } from '../../src/ingest/index.ts';
import { callees, callers, def, find, history, refs, type QueryOptions } from '../../src/query/index.ts';
import { repoRoot, scratch } from '../helpers.ts';

const CORPUS = '/usr/share/cargo/registry';
const WANT = ['regex-1', 'memchr-2', 'log-0', 'itoa-1', 'fnv-1', 'bitflags-1', 'smallvec-1', 'either-1'];

const work = scratch('mimir-state-vs-log-');
after(work.cleanup);

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x), 1);

test('state tables and the log fold give the same answers (Debian crates + sample, now and as of before)', { timeout: 600_000 }, async () => {
  const { dirs } = await expandCrateDirs([CORPUS]).catch(() => ({ dirs: [] as string[] }));
  const picked = WANT.map((w) => dirs.find((d) => path.basename(d).startsWith(w))).filter((d): d is string => d !== undefined);
  const log = await EventLog.open(path.join(work.dir, 'lake'));
  try {
    if (picked.length > 0) await universeAdd(log, picked, { workers: 1 });
    const before = log.readGeneration();
    await ingest(log, path.join(repoRoot, 'samples', 'workspace'), { repo: 'sample', withDeps: true, workers: 1 });
    // items to ask about: some of every kind, from the state of the lake
    const nodes = await log.state('node');
    const byKind = new Map<string, string[]>();
    for (const r of nodes.values()) {
      const k = r.kind as string;
      const list = byKind.get(k) ?? [];
      if (list.length < 6 && typeof r.qpath === 'string') list.push(r.qpath);
      byKind.set(k, list);
    }
    const paths = [...byKind.values()].flat();
    paths.push('fnvish::hash_str', 'regex::Regex::new', 'Regex::new', 'tally::Tally', 'no::such::thing');
    const both = async <T>(what: string, ask: (o: QueryOptions) => Promise<T>, o: QueryOptions = {}): Promise<void> => {
      const a = await ask({ ...o, from: 'state' });
      const b = await ask({ ...o, from: 'log' });
      assert.equal(show(a), show(b), what);
    };
    let asked = 0;
    for (const p of paths) {
      await both(`def ${p}`, (o) => def(log, p, o));
      await both(`refs ${p}`, (o) => refs(log, p, o));
      await both(`callers ${p}`, (o) => callers(log, p, o));
      await both(`callees ${p}`, (o) => callees(log, p, o));
      // history: code_paths (state) against a scan of every node event's qpath (log)
      await both(`history ${p}`, (o) => history(log, p, o));
      asked += 5;
    }
    for (const [name, o] of [['new', {}], ['new', { exact: true }], ['Regex*', {}], ['is_*', { kind: 'fn' }], ['regex::*::new', {}], ['hash', { repo: 'sample' }], ['Tally', { krate: 'tally@0.1.0' }], ['*', {}], ['*', { kind: 'fn' }], ['*_*', { repo: '@universe' }]] as const) {
      await both(`find ${name} ${JSON.stringify(o)}`, (q) => find(log, name, { ...o, ...q }));
      asked++;
    }
    // as of the generation before the sample's ingest
    for (const p of paths.slice(0, 10)) {
      await both(`def ${p} as of ${before}`, (o) => def(log, p, o), { asOf: { generation: before } });
      await both(`callers ${p} as of ${before}`, (o) => callers(log, p, o), { asOf: { generation: before } });
      await both(`history ${p} as of ${before}`, (o) => history(log, p, o), { asOf: { generation: before } });
      asked += 3;
    }
    assert.ok(asked > 40, `${asked} questions asked`);
    // `*` matches more names than an IN list carries (query/state.ts nodesMatching: a second scan of the scope instead)
    if (picked.length > 0) assert.ok((await find(log, '*')).hits.length > 2000, 'find * reads the many-matches path');
  } finally {
    log.close();
  }
});
