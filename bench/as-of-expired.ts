// `npm run bench:as-of`: how much slower a question `--as-of` a generation
// whose snapshots gc expired is (a runs read: the current event log without
// the runs landed after it, folded — EventLog "runs reads") than the same
// question on the same generation while its snapshots are still there
// (answered from the state tables at it, as questions are by default, and
// also by folding the log at it, `from: 'log'`: the cost of the restriction
// alone).
//
// Builds a mid-size lake under --dir (default /tmp/mimir-bench-asof): a few
// Debian corpus crates (/usr/share/cargo/registry) added to the universe one
// run each, then the sample workspace ingested as repo `sample` with
// --with-deps; G = the generation after the third universe run (later runs
// are excluded by a runs read). Then copies the lake (`cp -a`: lakes are
// relocatable) and expires every snapshot of the copy but the current
// (`gc --retain-ms 0`), and times each question of a fixed mix in the same
// process, alternating lakes (A/B), --warm N times (default 5) each: median
// ms. Prints the load average too. A benchmark prints; it asserts nothing.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../src/log/event-log.ts';
import { gc } from '../src/log/gc.ts';
import { ingest, universeAdd } from '../src/ingest/index.ts';
import { ask, type Question } from '../src/serve/questions.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const dir = path.resolve(flag('--dir') ?? '/tmp/mimir-bench-asof');
const warm = Number(flag('--warm') ?? 5);
const corpus = flag('--corpus') ?? '/usr/share/cargo/registry';
const WANT = ['memchr-2', 'log-0', 'itoa-1', 'fnv-1', 'bitflags-1', 'smallvec-1', 'either-1', 'regex-syntax-0'];

async function build(lake: string): Promise<bigint> {
  const crates = readdirSync(corpus);
  const picked = WANT.map((w) => crates.find((c) => c.startsWith(w))).filter((c): c is string => c !== undefined).map((c) => path.join(corpus, c));
  if (picked.length < 4) throw new Error(`bench:as-of: expected at least 4 of ${WANT.join(', ')} under ${corpus}, found ${picked.length} — nothing built`);
  const log = await EventLog.open(lake);
  try {
    let g = 0n;
    for (const [i, c] of picked.entries()) {
      await universeAdd(log, [c], { workers: 1, maintain: false });
      if (i === 2) g = log.readGeneration();
    }
    await ingest(log, path.join(root, 'samples', 'workspace'), { repo: 'sample', withDeps: true, workers: 1, maintain: false });
    return g;
  } finally {
    log.close();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const lakeA = path.join(dir, 'snapshots');
  const lakeB = path.join(dir, 'expired');
  const t0 = Date.now();
  const g = await build(lakeA);
  cpSync(lakeA, lakeB, { recursive: true });
  const b = await EventLog.open(lakeB);
  const r = await gc(b, { retainMs: 0 });
  const expired = r.tables.reduce((s, t) => s + t.expired.length, 0);
  const a = await EventLog.open(lakeA);
  const now = a.readGeneration();
  const count = async (at: bigint): Promise<number> => {
    let n = 0;
    for (const k of ['node', 'edge', 'file', 'pos'] as const) for await (const x of a.scan(k, { columns: ['id'], generation: at })) n += x.numRows;
    return n;
  };
  console.log(`lake: ${await count(now)} events at generation ${now}, ${await count(g)} at ${g} (the generation asked; ${now - g} generations later); built in ${Date.now() - t0} ms; gc expired ${expired} snapshot(s) of the copy`);
  const pin = b.pin({ generation: g }, { history: true });
  const runs = await pin.runsReadOf();
  pin.close();
  if (!runs) throw new Error('bench:as-of: the copy still reads its snapshots at the generation asked — gc did not expire them');
  console.log(`runs read: at ${runs.at}, ${runs.exclude.size} run(s) excluded`);
  // the decision itself (each pin makes it once, at its first read): snapshots checked, generations listed
  const decide = async (log: EventLog): Promise<number> => {
    const t = performance.now();
    const p = log.pin({ generation: g }, { history: true });
    await p.runsReadOf();
    p.close();
    return performance.now() - t;
  };
  const [da, db]: [number[], number[]] = [[], []];
  for (let i = 0; i < warm; i++) {
    da.push(await decide(a));
    db.push(await decide(b));
  }
  console.log(`deciding how to read G (pin + runsReadOf + close), median ms: snapshots there ${median(da).toFixed(1)}, expired ${median(db).toFixed(1)}`);
  const asOf = { generation: g };
  const mix: Question[] = [
    { q: 'def', path: 'memchr::memchr', asOf },
    { q: 'find', name: 'is_*', asOf },
    { q: 'callers', path: 'memchr::memchr', asOf },
    { q: 'refs', path: 'log::Level', asOf },
    { q: 'callees', path: 'memchr::memchr', asOf },
    { q: 'history', path: 'memchr::memchr', asOf },
    { q: 'diff', from: g - 1n, to: g },
  ];
  console.log(`load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}; median of ${warm} warm calls, ms`);
  console.log('question                  state@G  log@G  runs-read  runs/state  runs/log');
  const time = async (log: EventLog, q: Question, from?: 'state' | 'log'): Promise<number> => {
    const t = performance.now();
    await ask(log, q, from);
    return performance.now() - t;
  };
  for (const q of mix) {
    const st: number[] = [];
    const lg: number[] = [];
    const rr: number[] = [];
    await time(a, q);
    await time(b, q);
    for (let i = 0; i < warm; i++) {
      st.push(await time(a, q, 'state'));
      rr.push(await time(b, q));
      lg.push(await time(a, q, 'log'));
    }
    const [s, l, x] = [median(st), median(lg), median(rr)];
    const name = q.q === 'diff' ? `diff ${q.from}..${q.to}` : `${q.q} ${'path' in q ? q.path : 'name' in q ? q.name : ''}`;
    console.log(`${name.padEnd(26)}${s.toFixed(0).padStart(7)}${l.toFixed(0).padStart(7)}${x.toFixed(0).padStart(11)}${(x / s).toFixed(1).padStart(12)}${(x / l).toFixed(2).padStart(10)}`);
  }
  a.close();
  b.close();
  if (!args.includes('--keep') && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}

await main();
