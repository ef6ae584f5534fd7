// Git-native ingest: `ingest --git A..B` indexes each commit of the range as
// its own run (one generation each) reading trees from git, records the
// commit id, time, subject and tags on the run; `--as-of` a commit id, a
// prefix or a tag answers as that commit; `history` names the commit of each
// event; a rerun of the range indexes nothing twice; the user's work tree is
// neither read nor touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { eq } from '../../src/lake/expr/expr.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { INGEST_RUNS } from '../../src/log/schema.ts';
import { ingestGit } from '../../src/ingest/index.ts';
import { def, find, history } from '../../src/query/index.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `${file} holds ${from}`);
  writeFileSync(file, text.replace(from, to));
}

test('git ingest: one run per commit with its id, --as-of a sha, a prefix or a tag answers as that commit, reruns converge', { timeout: 300_000 }, async () => {
  const s = scratch('mimir-git-ingest-');
  try {
    const repo = path.join(s.dir, 'tally');
    cpSync(path.join(repoRoot, 'samples', 'workspace'), repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    const c0 = git(repo, 'rev-parse', 'HEAD');
    const lib = path.join(repo, 'crates', 'tally', 'src', 'lib.rs');
    edit(lib, 'pub fn tally_text(', 'pub fn tally_words(');
    git(repo, 'commit', '-q', '-am', 'rename tally_text to tally_words');
    const c1 = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'tag', 'v1');
    edit(lib, 'pub fn tally_words(', 'pub fn count_words(');
    git(repo, 'commit', '-q', '-am', 'rename again');
    const c2 = git(repo, 'rev-parse', 'HEAD');
    writeFileSync(lib, 'uncommitted garbage that must never be read\n');

    const lakeDir = path.join(s.dir, 'lake');
    const log = await EventLog.open(lakeDir);
    try {
      const first = await ingestGit(log, repo, c0);
      assert.equal(first.repo, 'tally', 'the repo is named after the git top folder');
      assert.equal(first.runs.length, 1);
      assert.equal(first.runs[0]!.rev, c0);
      const r = await ingestGit(log, repo, `${c0}..main`);
      assert.deepEqual(r.commits, [c1, c2]);
      assert.equal(r.runs.length, 2);
      assert.deepEqual(r.runs.map((x) => x.rev), [c1, c2]);
      const again = await ingestGit(log, repo, `${c0}..${c2}`);
      assert.equal(again.skipped, 2);
      assert.equal(again.runs.length, 0, 'a rerun of an indexed range writes nothing');

      const runs = await (await log.table(INGEST_RUNS))!.scan({ filter: eq('repo', 'tally') }).toArray();
      assert.equal(runs.length, 3);
      const r1 = runs.find((x) => x['rev'] === c1)!;
      assert.equal(r1['subject'], 'rename tally_text to tally_words');
      assert.equal(r1['refs'], 'v1');
      assert.ok(typeof r1['rev_time'] === 'bigint' && r1['rev_time'] > 0n);

      const names = async (asOf: { rev: string } | undefined): Promise<string[]> =>
        (await find(log, '*_words', { repo: 'tally', asOf })).hits.map((h) => h.name!).sort();
      assert.deepEqual(await names(undefined), ['count_words']);
      assert.deepEqual(await names({ rev: c1 }), ['tally_words']);
      assert.deepEqual(await names({ rev: c1.slice(0, 7) }), ['tally_words']);
      assert.deepEqual(await names({ rev: 'v1' }), ['tally_words']);
      assert.equal((await def(log, 'tally::tally_text', { asOf: { rev: c0 } })).hits.length, 1);
      await assert.rejects(find(log, 'x', { asOf: { rev: 'v2' } }), /no commit, tag or branch .* is named v2 — did you mean v1\?/);

      const h = await history(log, 'tally::tally_words');
      const ops = h.events.filter((e) => e.kind === 'node').map((e) => [e.op, e.rev]);
      assert.deepEqual(ops, [['add', c1], ['remove', c2]]);
    } finally {
      log.close();
    }
    // the CLI: --git and --as-of a tag
    const cli = await runCli(['find', 'tally_words', '--as-of', 'v1', '--json'], { lake: lakeDir });
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(JSON.parse(cli.stdout).hits.length, 1);
    const bad = await runCli(['ingest', repo, '--git', `${c2}..${c0}`], { lake: lakeDir });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /holds no commit/);
    assert.equal(git(repo, 'status', '--porcelain'), 'M crates/tally/src/lib.rs', 'the work tree keeps its uncommitted edit');
  } finally {
    s.cleanup();
  }
});
