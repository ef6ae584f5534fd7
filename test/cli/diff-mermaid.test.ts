// `mimir diff --format mermaid` (issue 27: a crate-level summary picture of a
// diff) on a real git history (test/ingest/git-history.ts), ingested with
// `ingest --git` and its dependencies, asked of the real CLI: a node per
// crate with its counts of added, removed and changed items, a bump named
// `name@old..new`, no edges (the lake keeps no crate dependency table), and
// the flag's errors. No wall-clock limits beyond node:test's generous one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { ingestGit } from '../../src/ingest/index.ts';
import { scratch } from '../helpers.ts';
import { buildGitHistory, type GitHistory } from '../ingest/git-history.ts';
import { runCli } from './run-cli.ts';

const work = scratch('mimir-diff-mermaid-');
const lake = path.join(work.dir, 'lake');
let h: GitHistory;

before(async () => {
  h = buildGitHistory(work.dir);
  const log = await EventLog.open(lake);
  try {
    await ingestGit(log, h.dir, h.sha.base, { withDeps: true, maintain: false });
    await ingestGit(log, h.dir, `${h.sha.base}..${h.sha.bump}`, { withDeps: true, maintain: false });
  } finally {
    log.close();
  }
});
after(() => work.cleanup());

test('mimir diff --format mermaid: a node per crate with its added/removed/changed counts, a bump as name@old..new, no edges', { timeout: 300_000 }, async () => {
  // body -> bump: Bucket::count becomes pub(crate) (tally), fnvish 0.2.1 -> 0.2.2 (hash_bytes' body, hash_u64 added)
  const r = await runCli(['--lake', lake, 'diff', '--from-rev', 'body', '--to-rev', 'bump', '--format', 'mermaid']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines[0], 'graph LR');
  assert.match(lines[1]!, /^ {2}%% 3 changes from body \(generation \d+\) to bump \(generation \d+\)/);
  assert.deepEqual(lines.slice(2), [
    '  c0["fnvish@0.2.1..0.2.2<br/>+1 added, -0 removed, ~1 changed"]',
    '  c1["tally@0.1.0<br/>+0 added, -0 removed, ~1 changed"]',
  ]);
  assert.ok(!r.stdout.includes('-->'), 'no edges');
  assert.match(r.stderr, /3 changes from body/, 'the summary still goes to stderr');

  // the same range, nothing changed
  const none = await runCli(['--lake', lake, 'diff', '--from-rev', 'bump', '--to-rev', 'bump', '--format', 'mermaid']);
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(none.stdout.trimEnd().split('\n').slice(2), ['  none["no change"]']);
});

test('mimir diff --format: only mermaid, and not with --stat (exit 2, nothing printed)', { timeout: 120_000 }, async () => {
  const dot = await runCli(['--lake', lake, 'diff', '--from-rev', 'body', '--to-rev', 'bump', '--format', 'dot']);
  assert.equal(dot.code, 2);
  assert.match(dot.stderr, /--format: expected mermaid, found "dot"/);
  assert.equal(dot.stdout, '');
  const both = await runCli(['--lake', lake, 'diff', '--from-rev', 'body', '--to-rev', 'bump', '--format', 'mermaid', '--stat']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--stat .* --format mermaid/);
});
