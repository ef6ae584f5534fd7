// The ingest pipeline's order of extraction (src/ingest/ingest.ts `pipeline`):
// a crate of the run waits for the crates of the run it depends on; a cycle
// among them goes on without the summaries it lacks; the rows written are
// the same whether the crates are extracted by worker threads (each
// dependant taking its dependencies' summaries from the worker that made
// them) or in the ingesting thread.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { universeAdd } from '../../src/ingest/index.ts';
import type { EventLog } from '../../src/log/event-log.ts';
import { freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

/** A registry folder: ring-a and ring-b depend on each other (a cycle), tip on ring-a, base under both. */
function registry(dir: string): string {
  const reg = path.join(dir, 'reg');
  const crate = (name: string, deps: string[], lib: string) => {
    const root = path.join(reg, `${name}-1.0.0`);
    mkdirSync(path.join(root, 'src'), { recursive: true });
    const depLines = deps.map((d) => `${d} = "1"`).join('\n');
    writeFileSync(path.join(root, 'Cargo.toml'), `[package]\nname = "${name}"\nversion = "1.0.0"\nedition = "2021"\n\n[dependencies]\n${depLines}\n`);
    writeFileSync(path.join(root, 'src', 'lib.rs'), lib);
  };
  const typ = (t: string, body: string) => `pub struct ${t};\nimpl ${t} {\n    pub fn new() -> ${t} { ${t} }\n    pub fn get(&self) -> usize { ${body} }\n}\n`;
  crate('base', [], typ('Base', '1'));
  // a method call on the other crate's type resolves only with that crate's summary
  crate('ring-a', ['base', 'ring-b'], typ('A', 'base::Base::new().get() + ring_b::B::new().get()'));
  crate('ring-b', ['base', 'ring-a'], typ('B', 'base::Base::new().get() + ring_a::A::new().get()'));
  crate('tip', ['ring-a', 'base'], 'pub fn tip() -> usize { ring_a::A::new().get() + base::Base::new().get() }\n');
  return reg;
}

/** Every node and edge row, without the run's id and time, sorted. */
async function rows(log: EventLog): Promise<string[]> {
  const out: string[] = [];
  for (const kind of ['node', 'edge'] as const) {
    for (const r of await log.rows(kind)) {
      const { run: _run, ts: _ts, ...rest } = r;
      out.push(`${kind} ${JSON.stringify(rest, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    }
  }
  return out.sort();
}

test('a cycle among the run\'s crates goes on; worker threads write the same rows as the ingesting thread', { timeout: 300_000 }, async () => {
  const got: string[][] = [];
  for (const workers of [0, 2]) {
    const lake = await freshLake();
    cleanups.push(lake.cleanup);
    const report = await universeAdd(lake.log, [registry(lake.dir)], { workers });
    assert.equal(report.crates, 4);
    assert.deepEqual(report.problems.filter((p) => p.kind === 'extract-failed'), [], `${workers} workers`);
    const calls = (await lake.log.rows('edge')).filter((r) => r['edge_kind'] === 'calls' && /[.:]get$/.test(String(r['dst_path'])));
    const into = (from: string, to: string) => calls.some((r) => r['krate'] === from && r['dst_krate'] === to && r['dst'] !== null);
    // the dependants resolve into base and into the cycle's crate extracted first; that one goes on without the other's summary
    assert.ok(into('tip@1.0.0', 'base@1.0.0') && into('tip@1.0.0', 'ring-a@1.0.0'), `${workers} workers: tip resolves into base and ring-a`);
    assert.ok(into('ring-a@1.0.0', 'base@1.0.0') && into('ring-b@1.0.0', 'base@1.0.0'), `${workers} workers: the cycle's crates resolve into base`);
    assert.notEqual(into('ring-a@1.0.0', 'ring-b@1.0.0'), into('ring-b@1.0.0', 'ring-a@1.0.0'), `${workers} workers: one crate of the cycle resolves into the other`);
    got.push(await rows(lake.log));
  }
  assert.ok(got[0]!.length > 0);
  assert.deepEqual(got[1], got[0]);
});
