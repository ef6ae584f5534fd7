// `mimir ingest` and `mimir universe add` as thin wrappers over src/ingest, run
// as real child processes on the extract fixture workspace (two crates and a
// vendored dependency): the report line, a rerun that writes no event, a
// universe add of a present version that is skipped, and `callers` answering
// with the call sites ingest wrote (file and line).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-ingest-');
after(work.cleanup);
const lake = path.join(work.dir, 'lake');
const ws = path.join(repoRoot, 'test', 'extract', 'fixtures', 'ws');
const mimir = (...args: string[]): Promise<CliResult> => runCli(args, { lake });
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};
type Obj = { [k: string]: Json };

test('mimir ingest --with-deps, rerun, universe add, then callers of the vendored function', async () => {
  const first = ok(await mimir('ingest', ws, '--repo', 'demo', '--rev', 'r1', '--with-deps'));
  assert.match(first.stdout, /^ingest demo@r1 run \S+: 2 crates, \d+ files .* events \+\d+ ~0 -0, 0 problems/m);
  const again = parseJson(ok(await mimir('ingest', ws, '--repo', 'demo', '--json')).stdout) as Obj;
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
  const uni = ok(await mimir('universe', 'add', path.join(ws, 'vendor')));
  assert.match(uni.stdout, /1 crate \(1 already present\).*events \+0 ~0 -0/);
  const callers = ok(await mimir('callers', 'minidep::helper'));
  assert.deepEqual(callers.stdout.split('\n').filter((l) => l !== ''), [
    'demo app@0.1.0 app[bin tool]::main  crates/app/src/bin/tool.rs:2:22  calls',
    'demo app@0.1.0 app::main  crates/app/src/main.rs:7:22  calls',
    'demo shapes@0.2.0 shapes::uses_everything  crates/shapes/src/lib.rs:65:19  calls',
  ]);
  const usage = await mimir('ingest');
  assert.equal(usage.code, 2);
  const missing = await mimir('ingest', path.join(work.dir, 'nowhere'));
  assert.equal(missing.code, 1);
});
