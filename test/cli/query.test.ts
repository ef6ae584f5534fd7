// `mimir find|def|refs|callers|callees|history|diff` run as real child
// processes on a real lake (test/query/sample.ts, written through
// EventLog.append): human lines (`repo krate qpath  file:line`) and the
// summary on stderr, --json that parses with the same answers, --as-of by
// generation and by time, and usage errors (exit 2) and failures (exit 1).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { sampleLake, type Sample } from '../query/sample.ts';

const work = scratch('mimir-cli-query-');
const lake = path.join(work.dir, 'lake');
let s: Omit<Sample, 'log'>;
before(async () => {
  const { log, ...gens } = await sampleLake(lake);
  log.close();
  s = gens;
});
after(work.cleanup);

type Obj = { [k: string]: Json };
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};
const lines = (r: CliResult): string[] => ok(r).stdout.split('\n').filter((l) => l !== '');
const json = (r: CliResult): Obj => parseJson(ok(r).stdout) as Obj;
const mimir = (...args: string[]): Promise<CliResult> => runCli(args, { lake });

test('mimir callers: one line per call site in both repos, summary on stderr; --json parses', async () => {
  const r = await mimir('callers', 'regex::Regex::new');
  assert.deepEqual(lines(r), ['alpha alpha@0.1.0 alpha::main  src/main.rs:5  calls', 'beta beta@0.2.0 beta::util::check  src/util.rs:12  calls']);
  assert.match(r.stderr, /^2 call sites to regex::regex::string::Regex::new from 2 repos at generation \d+\n$/);
  const j = json(await mimir('callers', 'regex::Regex::new', '--json'));
  const refs = j.refs as Obj[];
  assert.deepEqual(refs.map((h) => [h.repo, (h.from as Obj).qpath, h.file, h.line]), [['alpha', 'alpha::main', 'src/main.rs', 5], ['beta', 'beta::util::check', 'src/util.rs', 12]]);
  assert.equal(typeof j.generation, 'number', 'generation is a JSON integer');
});

test('mimir refs: every edge kind into the item; --kind filters', async () => {
  assert.equal(lines(await mimir('refs', 'regex::Regex::new')).length, 4);
  assert.deepEqual(lines(await mimir('refs', 'regex::Regex::new', '--kind', 'uses')), ['beta beta@0.2.0 beta::util  src/util.rs:2  uses']);
});

test('mimir find and def: lines with repo, krate, qpath, file:line; glob, exact, filters', async () => {
  assert.deepEqual(lines(await mimir('find', 'ch*')), ['beta beta@0.2.0 beta::util::check  src/util.rs:10  fn']);
  assert.deepEqual(lines(await mimir('find', 'Regex', '--exact', '--repo', '@universe')), ['@universe regex@1.10.0 regex::regex::string::Regex  src/regex/string.rs:100  struct']);
  const f = json(await mimir('find', '*', '--krate', 'beta@0.2.0', '--kind', 'fn', '--json'));
  assert.deepEqual((f.hits as Obj[]).map((h) => h.qpath), ['beta::util::check']);
  const d = await mimir('def', 'regex::Regex::new');
  assert.deepEqual(lines(d), ['@universe regex@1.10.0 regex::regex::string::Regex::new  src/regex/string.rs:180  method']);
  assert.match(d.stderr, /1 definition of regex::Regex::new \(by its last segments\)/);
});

test('mimir def/callees --as-of: a generation and an ISO time answer as before the change', async () => {
  assert.deepEqual(lines(await mimir('def', 'alpha::helper', '--as-of', String(s.added))), ['alpha alpha@0.1.0 alpha::helper  src/main.rs:20  fn']);
  assert.deepEqual(lines(await mimir('def', 'alpha::helper', '--as-of', String(s.changed))), ['alpha alpha@0.1.0 alpha::helper  src/main.rs:30  fn']);
  assert.deepEqual(lines(await mimir('def', 'alpha::helper')), []);
  assert.deepEqual(lines(await mimir('callees', 'alpha::helper', '--as-of', String(s.added))), ['@universe regex@1.10.0 regex::regex::string::Regex::new  src/main.rs:21']);
  const gens = json(await mimir('log', 'generations', '--json', '--limit', '0')) as unknown as Obj[];
  const t = gens.find((g) => BigInt(g.generation as number) === s.added)!.time as string;
  const j = json(await mimir('def', 'alpha::helper', '--as-of', t, '--json'));
  assert.equal(BigInt(j.generation as number), s.added);
  assert.deepEqual((j.hits as Obj[]).map((h) => h.line), [20]);
});

test('mimir history: add, change, remove in order; --json events', async () => {
  const l = lines(await mimir('history', 'alpha::helper'));
  assert.deepEqual(l.map((x) => x.split(' ')[2]!.trim() + ' ' + x.split(/\s+/)[3]), ['add alpha', 'add alpha', 'change alpha', 'change alpha', 'remove alpha', 'remove alpha']);
  assert.match(l[0]!, /^g\d+ \d{4}-\d\d-\d\dT[\d:.]+Z add +alpha alpha@0\.1\.0 node fn alpha::helper {2}src\/main\.rs:20$/);
  const j = json(await mimir('history', 'alpha::helper', '--json'));
  assert.deepEqual((j.events as Obj[]).map((e) => [e.kind, e.op]), [['node', 'add'], ['edge', 'add'], ['node', 'change'], ['edge', 'change'], ['node', 'remove'], ['edge', 'remove']]);
});

test('mimir diff: one line per changed item and the summary; --repo; --stat; a reversed range exits 1 naming the swap', async () => {
  const r = await mimir('diff', '--from', String(s.added), '--to', String(s.changed));
  assert.deepEqual(lines(r), ['signature  fn alpha::helper  alpha@0.1.0 src/main.rs:30  (was: fn helper())']);
  assert.match(r.stderr, /1 change from generation \d+ to generation \d+: signature 1; edges \+0 ~0 -0/);
  const j = json(await mimir('diff', '--from', String(s.changed), '--to', String(s.removed), '--repo', 'beta', '--json'));
  assert.deepEqual(j.changes, []);
  const st = lines(await mimir('diff', '--from', String(s.base), '--to', String(s.changed), '--stat'));
  assert.deepEqual(st, ['alpha@0.1.0  added 1', 'total        1 item: added 1']);
  const back = await mimir('diff', '--from', String(s.changed), '--to', String(s.added));
  assert.equal(back.code, 1);
  assert.match(back.stderr, new RegExp(`the range is reversed: --from ${s.changed} is after --to ${s.added} — nothing compared; swap them: --from ${s.added} --to ${s.changed}`));
});

test('usage errors exit 2, failures exit 1', async () => {
  const usage = [
    ['def'],
    ['find', 'x', '--as-of', 'last week'],
    ['diff', '--from', '1'],
    ['diff', '--from', 'a', '--to', '2'],
    ['callers', 'a', 'b'],
  ];
  const [future, noRev, noLake, ...rs] = await Promise.all([
    mimir('def', 'x', '--as-of', '999999'),
    mimir('find', 'x', '--as-of', 'yesterday'),
    runCli(['find', 'x'], { lake: path.join(work.dir, 'absent') }),
    ...usage.map((args) => mimir(...args)),
  ]);
  rs.forEach((r, i) => {
    assert.equal(r!.code, 2, `${usage[i]!.join(' ')}: exit ${r!.code} ${r!.stderr}`);
    assert.match(r!.stderr, /--help' for usage/);
  });
  assert.equal(future!.code, 1);
  assert.match(future!.stderr, /generation 999999 is in the future/);
  assert.equal(noRev!.code, 1, 'a name that could be a commit but is none fails (exit 1), it is not a usage error');
  assert.match(noRev!.stderr, /no commit, tag or branch of any ingested repo is named yesterday/);
  assert.equal(noLake!.code, 1);
  assert.match(noLake!.stderr, /no lake at/);
});
