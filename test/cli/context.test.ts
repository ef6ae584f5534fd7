// `--context N` prints N lines of source around each hit, read from the lake
// (mimir.code_sources) at the answer's generation: it works after the checkout is gone,
// and an older generation shows the text it had then.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from './run-cli.ts';

const work = scratch('mimir-cli-context-');
after(work.cleanup);

test('callers and def --context N print the source around each hit from the lake, at any generation, without the checkout', async () => {
  const lake = path.join(work.dir, 'lake');
  const ws = path.join(work.dir, 'workspace');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const first = await runCli(['ingest', ws, '--repo', 'sample', '--with-deps', '--no-maintain', '--json'], { lake });
  assert.equal(first.code, 0, first.stderr);
  const g1 = String((JSON.parse(first.stdout) as { generation: number }).generation);
  const lib = path.join(ws, 'crates', 'tally', 'src', 'lib.rs');
  writeFileSync(lib, '// a new first line\n' + readFileSync(lib, 'utf8'));
  const second = await runCli(['ingest', ws, '--repo', 'sample', '--no-maintain'], { lake });
  assert.equal(second.code, 0, second.stderr);
  rmSync(ws, { recursive: true });

  const now = await runCli(['callers', 'fnvish::hash_str', '--repo', 'sample', '--context', '1'], { lake });
  assert.equal(now.code, 0, now.stderr);
  const marked = now.stdout.split('\n').filter((l) => /^\s*\d+ > /.test(l));
  assert.ok(marked.length >= 2 && marked.every((l) => l.includes('hash_str(word)')), now.stdout);
  assert.match(now.stdout, /^\s+\d+ \| .*$/m, 'the lines around are printed too');

  // as of the first generation, the same call sits one line higher
  const then = await runCli(['callers', 'fnvish::hash_str', '--repo', 'sample', '--context', '1', '--as-of', g1], { lake });
  assert.equal(then.code, 0, then.stderr);
  const lineOf = (out: string) => out.split('\n').filter((l) => /^\s*\d+ > /.test(l)).map((l) => Number(/^\s*(\d+) > /.exec(l)![1]));
  assert.deepEqual(lineOf(now.stdout).map((n) => n - 1), lineOf(then.stdout), then.stdout + then.stderr);

  const d = await runCli(['def', 'tally::Tally', '--context', '1'], { lake });
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /^\s*\d+ > pub struct Tally/m);
  assert.equal((await runCli(['def', 'tally::Tally', '--context', 'x'], { lake })).code, 2);
});
