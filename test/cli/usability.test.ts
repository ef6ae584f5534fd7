// The CLI's manners, run as real child processes: a mistyped command or
// option names the close one (exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './run-cli.ts';

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
