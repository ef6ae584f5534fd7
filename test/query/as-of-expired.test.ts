// `--as-of` a generation whose snapshots gc expired: the answer comes from the
// current event log restricted to the runs landed by then (EventLog "runs
// reads"), and it is the answer the snapshots gave. A small workspace is
// ingested several times — a universe crate, a body edit with a line shift, a
// rename and a removal, a repo remove and a re-ingest, a universe remove —
// every question (find, def with source context, refs, callers, callees,
// history, diff) is recorded as of every generation; then every snapshot but the current is expired
// (`gc --retain-ms 0`) and each answer must be identical, positions included;
// again after compaction and after a ring unsplit + split (there only `seq`,
// the storage order those rewrites change by design, is left out). The server
// answers asOf the same way; `--as-of` a time and a rev still work; a log
// that cannot be told apart by runs refuses with a clear message.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { EventLog } from '../../src/log/event-log.ts';
import { gc } from '../../src/log/gc.ts';
import { compact } from '../../src/log/compact.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import { ingest, removeUniverseCrate, universeAdd } from '../../src/ingest/index.ts';
import { removeRepo } from '../../src/ingest/remove.ts';
import { ExpiredGenerationError } from '../../src/lake/lake.ts';
import { ask, questionKey, type Question } from '../../src/serve/questions.ts';
import { startServer } from '../../src/serve/server.ts';
import { stringifyJson } from '../../src/lake/spec/json.ts';
import { repoRoot, runTsx, scratch } from '../helpers.ts';
import { request } from '../serve/http.ts';

const work = scratch('mimir-asof-expired-');
after(work.cleanup);

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
/** The same, without the storage order of history events (compaction and ring moves rewrite files). */
const showNoSeq = (v: unknown): string => JSON.stringify(v, (k, x: unknown) => (k === 'seq' ? undefined : typeof x === 'bigint' ? `${x}n` : x));

const PATHS = [
  'tally::Tally::add',
  'tally::Tally::count',
  'tally::tally_text',
  'tally::bucket::Bucket::count',
  'tally::bucket::Bucket::count_of',
  'tally::bucket::Bucket::push',
  'tally::helper',
  'fnvish::hash_str',
  'fnvish::hash_bytes',
];

/** After compaction and ring moves: the paths whose answers change along the runs (fewer questions, same coverage of edits, renames, removals). */
const FEW = new Set(['tally::Tally::add', 'tally::bucket::Bucket::count', 'tally::bucket::Bucket::count_of', 'tally::bucket::Bucket::push', 'tally::helper', 'fnvish::hash_str']);

function questions(g: bigint, runGens: bigint[], few = false): Question[] {
  const asOf = { generation: g };
  const out: Question[] = [
    { q: 'find', name: 'count*', asOf },
    { q: 'find', name: 'Tally', asOf, abs: true },
    { q: 'find', name: 'hash', asOf, repo: '@universe' },
  ];
  for (const p of PATHS.filter((x) => !few || FEW.has(x))) {
    out.push({ q: 'def', path: p, asOf, context: 1 }, { q: 'refs', path: p, asOf }, { q: 'callers', path: p, asOf }, { q: 'callees', path: p, asOf }, { q: 'history', path: p, asOf });
  }
  const prev = runGens.filter((x) => x < g).at(-1);
  if (prev !== undefined) out.push({ q: 'diff', from: prev, to: g, moves: true }, { q: 'diff', from: runGens[0]!, to: g, repo: 'w' });
  return out;
}

/** Every question's answer (or its refusal) as text, keyed by question. */
async function record(log: EventLog, gens: bigint[], runGens: bigint[], few = false): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const g of gens) {
    for (const q of questions(g, runGens, few)) {
      let a: unknown;
      try {
        a = await ask(log, q);
      } catch (e) {
        a = { error: (e as Error).name, message: (e as Error).message };
      }
      out.set(`${g} ${questionKey(q)}`, a);
    }
  }
  return out;
}

/** Every answer of `now` is the one recorded `before` (`now` may ask fewer generations). */
function same(before: Map<string, unknown>, now: Map<string, unknown>, fmt: (v: unknown) => string, what: string): void {
  assert.ok(now.size > 100, `${now.size} answers compared`);
  let differ = 0;
  const first: string[] = [];
  for (const [k, w] of now) {
    const v = before.get(k);
    assert.ok(before.has(k), `${k} was recorded before`);
    if (fmt(v) !== fmt(w)) {
      differ++;
      if (first.length < 3) {
        const [x, y] = [fmt(v), fmt(w)];
        let i = 0;
        while (i < x.length && x[i] === y[i]) i++;
        first.push(`${k}\n  before: …${x.slice(Math.max(0, i - 200), i + 300)}\n  ${what}: …${y.slice(Math.max(0, i - 200), i + 300)}`);
      }
    }
  }
  assert.equal(differ, 0, `${differ} of ${now.size} answers differ ${what}:\n${first.join('\n')}`);
}

function edit(file: string, from: string | RegExp, to: string): void {
  const t = readFileSync(file, 'utf8');
  const n = t.replace(from, to);
  assert.notEqual(n, t, `edit of ${file} changed nothing`);
  writeFileSync(file, n);
}

test('--as-of any generation answers the same after its snapshots are expired, compacted and moved by ring split', { timeout: 900_000 }, async () => {
  const ws = path.join(work.dir, 'ws');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const lib = path.join(ws, 'crates', 'tally', 'src', 'lib.rs');
  const bucket = path.join(ws, 'crates', 'tally', 'src', 'bucket.rs');
  const lakeDir = path.join(work.dir, 'lake');
  const log = await EventLog.open(lakeDir);
  const runGens: bigint[] = [];
  const ran = (): void => void runGens.push(log.readGeneration());
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    // 1. the universe crate, then the repo (rev v1)
    await universeAdd(log, [path.join(ws, 'vendor', 'fnvish-0.2.1')], { workers: 1, maintain: false });
    ran();
    await ingest(log, ws, { repo: 'w', rev: 'v1', workers: 1, maintain: false });
    ran();
    // 2. a body edit, a new fn, and every line of lib.rs shifted down by two
    edit(lib, '//! Word counts in a fixed number of buckets.\n', '//! Word counts in a fixed number of buckets.\n//!\n//! (shifted)\n');
    edit(lib, 'self.buckets[i].push(word);', 'self.buckets[i].push(word.trim());');
    edit(lib, /\n$/, '\n\n/// A helper.\npub fn helper() -> usize {\n    tally_text("a b", 2).count("a")\n}\n');
    await ingest(log, ws, { repo: 'w', rev: 'v2', workers: 1, maintain: false });
    ran();
    // 3. a rename (Bucket::count -> count_of, its callers follow) and a removal (helper)
    edit(bucket, 'pub fn count(&self', 'pub fn count_of(&self');
    edit(lib, 'self.buckets[i].count(word)', 'self.buckets[i].count_of(word)');
    edit(lib, /\n\/\/\/ A helper\.\npub fn helper\(\) -> usize \{\n[^}]*\}\n/, '\n');
    await ingest(log, ws, { repo: 'w', rev: 'v3', workers: 1, maintain: false });
    ran();
    // 4. the repo removed, then ingested again
    await removeRepo(log, 'w', { maintain: false });
    ran();
    await ingest(log, ws, { repo: 'w', rev: 'v4', workers: 1, maintain: false });
    ran();
    // 5. the universe crate removed (remove events in a run; the repo's edges into it stay, so --force)
    await removeUniverseCrate(log, 'fnvish@0.2.1', { force: true, maintain: false });
    ran();
    const now = log.readGeneration();
    const gens: bigint[] = [];
    for (let g = runGens[0]! - 1n; g <= now; g++) gens.push(g);

    const before = await record(log, gens, runGens);
    // the answers are not trivial: the edit, the rename and the removal are seen where they happened
    const defAt = (g: bigint, p: string) => before.get(`${g} ${questionKey({ q: 'def', path: p, asOf: { generation: g }, context: 1 })}`) as { hits?: { line: number }[]; error?: string };
    assert.equal(defAt(runGens[1]!, 'tally::Tally::add').hits?.[0]?.line, 19);
    assert.equal(defAt(runGens[2]!, 'tally::Tally::add').hits?.[0]?.line, 21, 'shifted by two lines');
    assert.equal(defAt(runGens[2]!, 'tally::helper').hits?.length, 1);
    assert.equal(defAt(runGens[3]!, 'tally::bucket::Bucket::count_of').hits?.length, 1);
    assert.equal(defAt(runGens[4]!, 'tally::Tally::add').hits?.length, 0, 'the repo removed');
    assert.equal(defAt(runGens[5]!, 'fnvish::hash_str').hits?.length, 1);
    assert.ok(defAt(runGens[6]!, 'fnvish::hash_str').error !== undefined || defAt(runGens[6]!, 'fnvish::hash_str').hits?.length === 0, 'the universe crate removed');
    for (const g of gens) {
      const p = log.pin({ generation: g }, { history: true });
      try {
        assert.equal(await p.runsReadOf(), undefined, `generation ${g} reads its own snapshots before gc`);
      } finally {
        p.close();
      }
    }

    // expire every snapshot but the current one
    const r = await gc(log, { retainMs: 0 });
    assert.ok(r.tables.reduce((s, t) => s + t.expired.length, 0) > 10, 'gc expired snapshots');
    // (the generation before the first run had empty tables only: nothing expired there)
    for (const g of runGens.slice(0, -1)) {
      const p = log.pin({ generation: g }, { history: true });
      try {
        const runs = await p.runsReadOf();
        assert.ok(runs !== undefined, `generation ${g} is read from the log by runs after gc`);
        assert.equal(runs.exclude.size, runGens.filter((x) => x > g).length, `generation ${g}: the runs after it are excluded`);
        if (g === runGens[2]) {
          await assert.rejects(p.table('code_node_events'), /read the log through EventLog\.scan/, 'the unfiltered table is refused on a runs read');
        }
      } finally {
        p.close();
      }
    }
    same(before, await record(log, gens, runGens), show, 'after gc');

    // --as-of a time and a rev name the same generations and answer alike
    const entries = log.lake.catalog.generations({ limit: 1000 });
    for (const [i, rev] of ['v1', 'v2', 'v3'].entries()) {
      const g = runGens[i + 1]!;
      const byGen = await ask(log, { q: 'callers', path: 'tally::bucket::Bucket::push', asOf: { generation: g } });
      assert.equal(show(await ask(log, { q: 'callers', path: 'tally::bucket::Bucket::push', asOf: { rev, repo: 'w' } })), show(byGen), `--as-of ${rev}`);
      const t = entries.find((e) => e.generation === g)!.timeMs;
      assert.equal(show(await ask(log, { q: 'callers', path: 'tally::bucket::Bucket::push', asOf: { time: new Date(t) } })), show(byGen), `--as-of the time of ${g}`);
    }
    // and through the CLI
    const cli = await runTsx([path.join(repoRoot, 'src', 'cli', 'main.ts'), 'def', 'tally::Tally::add', '--lake', lakeDir, '--as-of', 'v2', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal((JSON.parse(cli.stdout) as { hits: { line: number }[] }).hits[0]!.line, 21);

    // the server answers asOf the same way
    server = await startServer({ lake: lakeDir, port: 0 });
    for (const g of [runGens[1]!, runGens[2]!, runGens[3]!]) {
      for (const q of questions(g, runGens)) {
        const reply = await request(server.url, `/api/${questionKey(q)}`);
        const want = before.get(`${g} ${questionKey(q)}`) as { error?: string };
        if (want.error) assert.notEqual(reply.status, 200, `${questionKey(q)} refused as before`);
        else assert.equal(reply.text, stringifyJson(want as never), `server: ${questionKey(q)}`);
      }
    }
    await server.close();
    server = undefined;

    // compaction, then a ring unsplit and split, each followed by gc (the generations of runs: fewer questions)
    await compact(log, { targetFileRows: 50 });
    await gc(log, { retainMs: 0 });
    same(before, await record(log, runGens, runGens, true), showNoSeq, 'after compaction');
    await unsplitRing(log);
    await splitRing(log);
    await gc(log, { retainMs: 0 });
    same(before, await record(log, runGens, runGens, true), showNoSeq, 'after ring unsplit + split');

    // a generation after which events were appended outside a run: refused, never guessed
    const mid = runGens[2]!;
    await log.append('node', [{ repo: 'w', krate: 'tally@0.1.0', run: 'by-hand', ts: 0n, op: 'add', id: 'x-by-hand', kind: 'fn', name: 'by_hand', qpath: 'tally::by_hand' }]);
    await gc(log, { retainMs: 0 });
    await assert.rejects(
      ask(log, { q: 'def', path: 'tally::Tally::add', asOf: { generation: mid } }),
      (e: Error) => e instanceof ExpiredGenerationError && /outside a run/.test(e.message) && /append node/.test(e.message),
    );
    // the generation of that append and later ones still answer
    const last = log.readGeneration();
    assert.equal(((await ask(log, { q: 'def', path: 'tally::by_hand', asOf: { generation: last } })) as { hits: unknown[] }).hits.length, 1);
  } finally {
    await server?.close();
    log.close();
  }
});
