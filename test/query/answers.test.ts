// Answers people can act on (issue 9 part 4), through the CLI's own main:
// every unknown name, kind, repo or crate fails (exit 1) with a did-you-mean
// or a plain "no such …", while a path an item had once answers empty (exit
// 0); --repo, --krate, --limit and --exclude-tests narrow every question
// (find, def, refs, callers, callees, history); `find` ranks fuzzy matches;
// a zero refs/callers answer counts the unresolved sites named like the item
// and --unresolved lists them; a real ingest prints repo-relative
// path:line:col (absolute with --abs); every --json answer validates against
// its schemas/<question>.schema.json.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { edge, node, sampleLake, REGEX, type Sample } from './sample.ts';
import { cli } from '../serve/cli-in-process.ts';
import type { CliResult } from '../cli/run-cli.ts';
import { validate } from './json-schema.ts';

const work = scratch('mimir-answers-');
const lake = path.join(work.dir, 'lake');
const real = path.join(work.dir, 'real');
const workspace = path.join(repoRoot, 'samples', 'workspace');
let s: Omit<Sample, 'log'>;

before(async () => {
  const { log, ...gens } = await sampleLake(lake);
  s = gens;
  // gamma: a call from test code and one from the library; an unresolved call; names for fuzzy find
  await log.append('node', [
    node('gamma', 'gamma@0.3.0', 'g-tests-mod', 'gamma::tests', { kind: 'module', file: 'src/lib.rs', line: 40 }),
    node('gamma', 'gamma@0.3.0', 'g-it', 'gamma::it_works', { file: 'tests/it.rs', line: 3 }),
    node('gamma', 'gamma@0.3.0', 'g-unit', 'gamma::tests::unit', { file: 'src/lib.rs', line: 42, parent: 'g-tests-mod' }),
    node('gamma', 'gamma@0.3.0', 'g-run', 'gamma::run', { file: 'src/lib.rs', line: 10 }),
    node('gamma', 'gamma@0.3.0', 'g-rsb', 'gamma::RegexSetBuilder', { kind: 'struct', file: 'src/lib.rs', line: 20 }),
    node('gamma', 'gamma@0.3.0', 'g-rsb2', 'gamma::regex_set_builder', { file: 'src/lib.rs', line: 30 }),
    node('gamma', 'gamma@0.3.0', 'g-rs', 'gamma::ReaderSet', { kind: 'struct', file: 'src/lib.rs', line: 35 }),
    node('alpha', 'alpha@0.1.0', 'a-run', 'alpha::run', { file: 'src/main.rs', line: 50 }),
    // a test target of gamma's package (flagged by its krate, not by its folder)
    node('gamma', 'gamma@0.3.0/test/smoke', 'g-smoke', 'smoke::smoke_run', { file: 'it/smoke.rs', line: 2 }),
  ]);
  await log.append('edge', [
    edge('gamma', 'gamma@0.3.0', 'e-g-it', 'g-it', null, 'regex::Regex::new', 'calls', 'tests/it.rs', 4, { dstKrate: REGEX }),
    edge('gamma', 'gamma@0.3.0', 'e-g-unit', 'g-unit', null, 'regex::Regex::new', 'calls', 'src/lib.rs', 43, { dstKrate: REGEX }),
    edge('gamma', 'gamma@0.3.0', 'e-g-run', 'g-run', null, 'regex::Regex::new', 'calls', 'src/lib.rs', 11, { dstKrate: REGEX }),
    edge('alpha', 'alpha@0.1.0', 'e-a-run', A_MAIN_ID, null, 'run', 'calls', 'src/main.rs', 6),
    edge('gamma', 'gamma@0.3.0/test/smoke', 'e-g-smoke', 'g-smoke', null, 'regex::Regex::new', 'calls', 'it/smoke.rs', 3, { dstKrate: REGEX }),
  ]);
  log.close();
  const r = await cli(['ingest', workspace, '--repo', 'sample', '--with-deps'], { MIMIR_LAKE: real, MIMIR_SERVER: undefined });
  assert.equal(r.code, 0, r.stderr);
});
after(work.cleanup);

const A_MAIN_ID = 'a-main';

const mimir = (...args: string[]): Promise<CliResult> => cli(args, { MIMIR_LAKE: lake, MIMIR_SERVER: undefined });
const onReal = (...args: string[]): Promise<CliResult> => cli(args, { MIMIR_LAKE: real, MIMIR_SERVER: undefined });
const lines = (r: CliResult): string[] => r.stdout.split('\n').filter((l) => l !== '');
const ok = (r: CliResult, what: string): CliResult => {
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${r.stderr}`);
  return r;
};

test('answers: unknown paths, names, kinds, repos and crates fail with exit 1 and a did-you-mean, or a plain "no such …"', async () => {
  const cases: [string[], RegExp][] = [
    [['def', 'beta::util::chekc'], /no item has the path beta::util::chekc at generation \d+ — did you mean beta::util::check\?/],
    [['refs', 'beta::utl::check'], /did you mean beta::util::check\?/],
    [['callers', 'bta::util::check'], /did you mean beta::util::check\?/],
    [['callees', 'alpha::mian'], /did you mean alpha::main\?/],
    [['history', 'alpha::helpr'], /did you mean alpha::helper\?/],
    [['def', 'chekc'], /did you mean check\?/],
    [['find', 'chekc'], /no item matches "chekc" at generation \d+ — did you mean check\?/],
    [['def', 'nowhere::at::all'], /no such item: nowhere::at::all/],
    [['callers', 'nowhere::at::all'], /no such item: nowhere::at::all/],
    [['find', 'qqqqzzzz'], /no such item: nothing matches "qqqqzzzz"/],
    [['find', 'check', '--kind', 'strcut'], /no such kind "strcut" — did you mean struct\?/],
    [['find', 'check', '--kind', 'gizmo'], /no such kind "gizmo" \(kinds: module, fn/],
    [['refs', 'regex::Regex::new', '--kind', 'cals'], /no such edge kind "cals" — did you mean calls\?/],
    [['find', 'check', '--repo', 'bta'], /no such repo "bta" at generation \d+ — did you mean beta\?/],
    [['def', 'beta::util::check', '--repo', 'nosuchrepo'], /no such repo "nosuchrepo" at generation \d+ \(the lake has 4 repos\)/],
    [['refs', 'regex::Regex::new', '--repo', 'alpah'], /did you mean alpha\?/],
    [['callers', 'regex::Regex::new', '--krate', 'gmma'], /no such crate "gmma" at generation \d+ — did you mean gamma\?/],
    [['callees', 'alpha::main', '--krate', 'alpha@9.9.9'], /no such crate "alpha@9.9.9"/],
    [['history', 'alpha::helper', '--krate', 'zzzzzzzz'], /no such crate "zzzzzzzz"/],
    [['callers', 'regex::Regex::new', '--repo', 'alpha', '--krate', 'beta'], /no such crate "beta" .*it is not in repo alpha/],
  ];
  for (const [args, want] of cases) {
    const r = await mimir(...args);
    assert.equal(r.code, 1, `mimir ${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.equal(r.stdout, '', `mimir ${args.join(' ')}: nothing on stdout`);
    assert.match(r.stderr, want, `mimir ${args.join(' ')}`);
  }
  // a path an item had once (removed since) is not unknown: an empty answer, exit 0, and where to look
  const gone = ok(await mimir('def', 'alpha::helper'), 'def of a removed item');
  assert.equal(gone.stdout, '');
  assert.match(gone.stderr, /0 definitions of alpha::helper at generation \d+ \(no live item has it; `mimir history alpha::helper` shows when it went\)/);
  ok(await mimir('callees', 'alpha::helper'), 'callees of a removed item');
  ok(await mimir('callers', 'alpha::helper'), 'callers of a removed item');
  // through --json the error is the same failure
  const j = await mimir('def', 'beta::util::chekc', '--json');
  assert.equal(j.code, 1);
  assert.equal(j.stdout, '');
});

test('answers: --repo, --krate, --limit and --exclude-tests narrow every question', async () => {
  const count = async (...args: string[]): Promise<number> => lines(ok(await mimir(...args), `mimir ${args.join(' ')}`)).length;
  const table: [string[], number][] = [
    [['find', 'un'], 4], // alpha::run, gamma::run, gamma::tests::unit, smoke::smoke_run (fuzzy: u..n)
    [['find', 'un', '--repo', 'gamma'], 3],
    [['find', 'un', '--krate', 'alpha'], 1],
    [['find', 'un', '--krate', 'gamma@0.3.0'], 3],
    [['find', 'un', '--krate', 'gamma@0.3.0/test/smoke'], 1],
    [['find', 'un', '--exclude-tests'], 2],
    [['find', 'un', '--limit', '1'], 1],
    [['def', 'regex::Regex::new'], 1],
    [['def', 'regex::Regex::new', '--repo', 'alpha'], 0],
    [['def', 'regex::Regex::new', '--repo', '@universe'], 1],
    [['def', 'regex::Regex::new', '--krate', 'regex'], 1],
    [['def', 'regex::Regex::new', '--limit', '0'], 0],
    [['def', 'gamma::it_works', '--exclude-tests'], 0],
    [['def', 'gamma::tests::unit', '--exclude-tests'], 0],
    [['callers', 'regex::Regex::new'], 6],
    [['callers', 'regex::Regex::new', '--repo', 'gamma'], 4],
    [['callers', 'regex::Regex::new', '--krate', 'gamma'], 4],
    [['callers', 'regex::Regex::new', '--krate', 'gamma@0.3.0/test/smoke'], 1],
    [['callers', 'regex::Regex::new', '--krate', 'beta@0.2.0'], 1],
    [['callers', 'regex::Regex::new', '--exclude-tests'], 3],
    [['callers', 'regex::Regex::new', '--limit', '2'], 2],
    [['refs', 'regex::Regex::new'], 8],
    [['refs', 'regex::Regex::new', '--repo', 'beta'], 2],
    [['refs', 'regex::Regex::new', '--krate', 'regex'], 1],
    [['refs', 'regex::Regex::new', '--exclude-tests', '--repo', 'gamma'], 1],
    [['refs', 'regex::Regex::new', '--limit', '3'], 3],
    [['callees', 'alpha::main'], 2],
    [['callees', 'alpha::main', '--repo', 'beta'], 0],
    [['callees', 'alpha::main', '--krate', 'alpha'], 2],
    [['callees', 'gamma::it_works'], 1],
    [['callees', 'gamma::it_works', '--exclude-tests'], 0],
    [['callees', 'alpha::main', '--limit', '1'], 1],
    [['history', 'alpha::helper'], 6],
    [['history', 'alpha::helper', '--repo', 'beta'], 0],
    [['history', 'alpha::helper', '--krate', 'alpha@0.1.0'], 6],
    [['history', 'alpha::helper', '--limit', '2'], 2],
    [['history', 'gamma::it_works'], 2],
    [['history', 'gamma::it_works', '--exclude-tests'], 0],
  ];
  for (const [args, n] of table) assert.equal(await count(...args), n, `mimir ${args.join(' ')}`);
  const limited = ok(await mimir('callers', 'regex::Regex::new', '--limit', '2'), 'limit');
  assert.match(limited.stderr, /^6 call sites to regex::regex::string::Regex::new \(2 shown: --limit\) at generation \d+\n$/);
  const j = parseJson(ok(await mimir('find', 'un', '--limit', '1', '--json'), 'find --json').stdout) as { [k: string]: Json };
  assert.equal(j.total, 4);
  assert.equal((j.hits as Json[]).length, 1);
  const usage = await mimir('find', 'un', '--limit', 'many');
  assert.equal(usage.code, 2, '--limit takes a count');
});

test('answers: find ranks fuzzy matches as a symbol search does (camel humps, word starts, prefixes first)', async () => {
  const first = async (q: string): Promise<string> => lines(ok(await mimir('find', q), `find ${q}`))[0]!.split(/\s+/)[2]!;
  assert.equal(await first('RSB'), 'gamma::RegexSetBuilder');
  const rsb = lines(ok(await mimir('find', 'rsb'), 'find rsb')).map((l) => l.split(/\s+/)[2]);
  assert.deepEqual(rsb.slice(0, 2).sort(), ['gamma::RegexSetBuilder', 'gamma::regex_set_builder'], 'word starts in either spelling rank first');
  assert.equal(await first('ReaderS'), 'gamma::ReaderSet');
  assert.equal(await first('check'), 'beta::util::check');
  const all = lines(ok(await mimir('find', 'RSB'), 'find RSB')).map((l) => l.split(/\s+/)[2]);
  assert.ok(all.includes('gamma::regex_set_builder') && !all.includes('gamma::ReaderSet'), all.join(', '));
  // a glob and --exact keep their own meaning and the place order
  assert.deepEqual(lines(ok(await mimir('find', 'Regex*'), 'glob')).map((l) => l.split(/\s+/)[2]), ['regex::regex::string::Regex', 'gamma::RegexSetBuilder']);
});

test('answers: a zero callers/refs answer counts the unresolved sites named like the item; --unresolved lists them', async () => {
  const zero = ok(await mimir('callers', 'alpha::run'), 'callers alpha::run');
  assert.equal(zero.stdout, '');
  assert.match(zero.stderr, /^0 call sites to alpha::run from 0 repos at generation \d+; 1 unresolved call site is named run: mimir callers alpha::run --unresolved\n$/);
  const j = parseJson(ok(await mimir('refs', 'alpha::run', '--json'), 'refs --json').stdout) as { [k: string]: Json };
  assert.equal(j.unresolved, 1);
  const list = ok(await mimir('callers', 'alpha::run', '--unresolved'), 'callers --unresolved');
  assert.deepEqual(lines(list), ['alpha alpha@0.1.0 alpha::main  src/main.rs:6  calls  -> run (unresolved)']);
  assert.match(list.stderr, /^1 unresolved call site named run at generation \d+\n$/);
  assert.equal(lines(ok(await mimir('callers', 'alpha::run', '--unresolved', '--repo', 'beta'), 'scoped')).length, 0);
  const some = parseJson(ok(await mimir('callers', 'regex::Regex::new', '--json'), 'callers').stdout) as { [k: string]: Json };
  assert.equal(some.unresolved, null, 'counted on zero answers only');
});

test('answers: a real ingest prints repo-relative path:line:col; --abs joins the folder it was ingested from', async () => {
  const r = ok(await onReal('callers', 'fnvish::hash_str'), 'callers');
  const ls = lines(r);
  assert.ok(ls.length >= 1);
  for (const l of ls) assert.match(l, /^sample tally@0\.1\.0 \S+ {2}crates\/tally\/src\/lib\.rs:\d+:\d+ {2}calls$/);
  const abs = lines(ok(await onReal('callers', 'fnvish::hash_str', '--abs'), 'callers --abs'));
  assert.equal(abs.length, ls.length);
  for (const l of abs) assert.ok(l.includes(`  ${path.join(workspace, 'crates', 'tally', 'src', 'lib.rs')}:`), l);
  const d = lines(ok(await onReal('def', 'fnvish::hash_str'), 'def'));
  assert.match(d[0]!, /^@universe fnvish@0\.2\.1 fnvish::hash_str {2}src\/lib\.rs:\d+:\d+ {2}fn$/, 'universe crates stay crate-relative');
  const j = parseJson(ok(await onReal('callers', 'fnvish::hash_str', '--json'), 'json').stdout) as { refs: { file: string; path: string; context?: unknown }[] };
  assert.equal(j.refs[0]!.file, 'src/lib.rs');
  assert.equal(j.refs[0]!.path, 'crates/tally/src/lib.rs');
  assert.equal(j.refs[0]!.context, undefined, 'no context unless asked');
});

test('answers: --context N prints the source around each hit from the lake (no checkout), the hit line marked', async () => {
  const r = lines(ok(await onReal('callers', 'fnvish::hash_str', '--context', '1', '--limit', '1'), 'callers --context'));
  assert.equal(r.length, 4, r.join('\n'));
  const at = /:(\d+):\d+ {2}calls$/.exec(r[0]!)![1]!;
  assert.match(r[2]!, new RegExp(`^ +${at} > .*hash_str\\(`));
  assert.match(r[1]!, new RegExp(`^ +${Number(at) - 1} \\| `));
  const j = parseJson(ok(await onReal('def', 'fnvish::hash_str', '--context', '2', '--json'), 'def --context --json').stdout) as { hits: { line: number; context: { line: number; text: string }[] }[] };
  const h = j.hits[0]!;
  assert.deepEqual(h.context.map((c) => c.line), [h.line - 2, h.line - 1, h.line, h.line + 1, h.line + 2]);
  assert.match(h.context[2]!.text, /pub fn hash_str/);
  // a lake without the text (written without sources): the hit stands alone
  assert.equal(lines(ok(await mimir('def', 'beta::util::check', '--context', '3'), 'no sources')).length, 1);
});

test('answers: every --json answer validates against schemas/<question>.schema.json (and a wrong one does not)', async () => {
  const schema = (q: string): { [k: string]: Json } => parseJson(fs.readFileSync(path.join(repoRoot, 'schemas', `${q}.schema.json`), 'utf8')) as { [k: string]: Json };
  const runs: [(...a: string[]) => Promise<CliResult>, string[]][] = [
    [mimir, ['find', 'un']],
    [mimir, ['find', 'Regex*', '--limit', '1']],
    [mimir, ['def', 'regex::Regex::new']],
    [mimir, ['def', 'alpha::helper']],
    [mimir, ['refs', 'regex::Regex::new']],
    [mimir, ['refs', 'alpha::run']],
    [mimir, ['callers', 'regex::Regex::new', '--exclude-tests']],
    [mimir, ['callers', 'alpha::run', '--unresolved']],
    [mimir, ['callees', 'alpha::main']],
    [mimir, ['history', 'alpha::helper']],
    [mimir, ['history', 'alpha::helper', '--as-of', String(s.changed)]],
    [mimir, ['diff', '--from', String(s.base), '--to', String(s.removed)]],
    [onReal, ['find', 'hash']],
    [onReal, ['def', 'fnvish::hash_str', '--abs']],
    [onReal, ['callers', 'fnvish::hash_str', '--context', '2']],
    [onReal, ['history', 'tally::Tally::add', '--context', '1']],
    [onReal, ['callees', 'tally::Tally::add']],
    [onReal, ['history', 'tally::Tally::add']],
    [onReal, ['diff', '--from', '0', '--to', '1']],
  ];
  const seen = new Set<string>();
  for (const [run, args] of runs) {
    const r = ok(await run(...args, '--json'), `mimir ${args.join(' ')} --json`);
    const out = parseJson(r.stdout) as { [k: string]: Json };
    const q = args[0]!;
    assert.equal(out.question, q);
    assert.equal(typeof out.version, 'number');
    const errors = validate(schema(q), out);
    assert.deepEqual(errors, [], `mimir ${args.join(' ')} --json breaks schemas/${q}.schema.json`);
    seen.add(q);
  }
  assert.deepEqual([...seen].sort(), ['callees', 'callers', 'def', 'diff', 'find', 'history', 'refs']);
  for (const f of fs.readdirSync(path.join(repoRoot, 'schemas'))) assert.ok(seen.has(f.replace('.schema.json', '')), `${f} is checked`);
  // the check can fail: a changed field, a missing one, an extra one
  const good = parseJson(ok(await mimir('def', 'regex::Regex::new', '--json'), 'def').stdout) as { [k: string]: Json };
  const hit = (good.hits as { [k: string]: Json }[])[0]!;
  assert.notDeepEqual(validate(schema('def'), { ...good, version: 99 }), []);
  assert.notDeepEqual(validate(schema('def'), { ...good, hits: [{ ...hit, line: 'ten' }] }), []);
  const { path: _p, ...noPath } = hit;
  assert.notDeepEqual(validate(schema('def'), { ...good, hits: [noPath] }), []);
  assert.notDeepEqual(validate(schema('def'), { ...good, extra: 1 }), []);
});
