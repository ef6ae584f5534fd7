// The CLI's manners, run as real child processes: a mistyped command or
// option names the close one (exit 2); `repo list` and `universe list` say
// what a real ingested lake holds, now and as of a generation.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-usability-');
after(work.cleanup);
type Obj = { [k: string]: Json };
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};

test('did you mean: a mistyped command names the close one, exit 2', async () => {
  const r = await runCli(['calers']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^mimir: unknown command "calers" for mimir — did you mean callers\?\n/);
  const g = await runCli(['universe', 'ad']);
  assert.equal(g.code, 2);
  assert.match(g.stderr, /unknown command "ad" for mimir universe — did you mean add\?/);
  const far = await runCli(['zzzzzz']);
  assert.equal(far.code, 2);
  assert.match(far.stderr, /unknown command "zzzzzz" for mimir \(commands: table, init, /, 'nothing close: the list of commands');
});

test('did you mean: a mistyped option names the close one, exit 2', async () => {
  const r = await runCli(['callers', 'x', '--limt', '5']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^mimir callers: unknown option --limt — did you mean --limit\?\nRun 'mimir callers --help' for usage\.\n$/);
  const eq = await runCli(['find', 'x', '--kidn=fn']);
  assert.equal(eq.code, 2);
  assert.match(eq.stderr, /unknown option --kidn — did you mean --kind\?/);
  const before = await runCli(['--jsn', 'find', 'x']);
  assert.equal(before.code, 2);
  assert.match(before.stderr, /unknown option --jsn \(before the command\) — did you mean --json\?/);
  const far = await runCli(['find', 'x', '--qqqqqqq']);
  assert.equal(far.code, 2);
  assert.match(far.stderr, /unknown option --qqqqqqq\n/, 'nothing close: no suggestion');
});

test('repo list and universe list: the repos and universe crates of a real ingest, --json, --as-of before a repo remove', async () => {
  const lake = path.join(work.dir, 'lists');
  const mimir = (...args: string[]): Promise<CliResult> => runCli(args, { lake });
  ok(await mimir('ingest', path.join(repoRoot, 'samples', 'workspace'), '--repo', 'sample', '--with-deps'));
  const r = ok(await mimir('repo', 'list'));
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines[0], 'REPO    CRATES  ITEMS  LAST RUN');
  assert.match(lines[1]!, /^sample +2 +14 +\d{8}T\d{6}Z-[0-9a-f]+ g\d+ \d{4}-\d\d-\d\dT[\d:.]+Z$/);
  assert.equal(lines.length, 2, 'the universe is not a repo');
  assert.match(r.stderr, /^1 repo at generation \d+\n$/);
  const j = parseJson(ok(await mimir('repo', 'list', '--json')).stdout) as Obj;
  const repo = (j.repos as Obj[])[0]!;
  const last = repo.lastRun as Obj;
  assert.deepEqual([repo.repo, repo.crates, repo.items, last.what, last.status], ['sample', 2, 14, 'ingest', 'ok']);
  assert.equal(last.generation, j.generation, 'the last run landed the current generation');
  const u = ok(await mimir('universe', 'list'));
  assert.deepEqual(u.stdout.split('\n').filter((l) => l !== ''), ['CRATE         ITEMS  USED BY', 'fnvish@0.2.1  5      sample (3)']);
  const uj = parseJson(ok(await mimir('universe', 'list', '--json')).stdout) as Obj;
  assert.deepEqual(uj.crates, [{ krate: 'fnvish@0.2.1', items: 5, pointedFrom: { sample: 3 } }]);

  const before = String(j.generation);
  ok(await mimir('repo', 'remove', 'sample'));
  assert.equal(ok(await mimir('repo', 'list')).stdout, '', 'a removed repo is not listed');
  assert.deepEqual((parseJson(ok(await mimir('universe', 'list', '--json')).stdout) as Obj).crates, [{ krate: 'fnvish@0.2.1', items: 5, pointedFrom: {} }]);
  const then = parseJson(ok(await mimir('repo', 'list', '--as-of', before, '--json')).stdout) as Obj;
  assert.deepEqual((then.repos as Obj[]).map((x) => [x.repo, x.items]), [['sample', 14]]);
});
