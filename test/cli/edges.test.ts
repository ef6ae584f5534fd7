// The CLI's remaining rough edges (issue 27, item 3), on a real git history
// (test/ingest/git-history.ts: the sample workspace, one scripted change per
// commit, commits one minute apart from 2024-05-01T12:00Z) ingested with
// `ingest --git` long after those commits were made, and on the sample lake:
// - `--as-of` by the repo's history: `@{DATE}` and `REV@{DATE}` answer as the
//   ingested commit with the latest commit time at or before DATE (a plain
//   date means when the lake was written, before any ingest here); `HEAD` is
//   the repo's latest ingested commit; a branch that moved between ingests
//   answers where it pointed when last ingested; `--help` lists every form;
// - `callees --resolved` keeps the calls to items the lake holds; an
//   unresolved call prints the resolver's reason, in `callees` and in
//   `callers --unresolved`;
// - `uses` edges sit at the name they import (1-based line and column), also
//   inside a use list spread over lines;
// - `diff` does not call an impl's body changed when only a member was added
//   or a member's doc comment edited (its own small history and lake);
// - `diff`'s summary: one line when it fits, else a line per crate and per
//   note, wrapped at the width ($COLUMNS off a terminal, else 100);
// - errors name the option the value came in (`--from-rev`, `--to-rev`,
//   `--as-of`), and the server's name its `asOf` parameter.
// The CLI runs in this process (test/serve/cli-in-process.ts): the same
// `main` as bin/mimir.js without a process start per call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { ingestGit } from '../../src/ingest/index.ts';
import { diff, generationOfRev, type DiffResult } from '../../src/query/index.ts';
import { startServer } from '../../src/serve/server.ts';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { ingest } from '../../src/ingest/index.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { cli } from '../serve/cli-in-process.ts';
import { request } from '../serve/http.ts';
import { buildGitHistory, git, type GitHistory } from '../ingest/git-history.ts';
import type { CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-edges-');
const lake = path.join(work.dir, 'lake');
let h: GitHistory;
/** The generation each ingested commit's run landed at. */
const gen: Record<'base' | 'shift' | 'rename', bigint> = { base: 0n, shift: 0n, rename: 0n };

const MYSTERY = '\n/// Calls nothing the lake knows.\npub fn mystery(t: &Tally) -> usize {\n    undefined_helper(1);\n    let x = unknown_thing();\n    x.frobnicate();\n    t.frobnicate()\n}\n\nuse crate::bucket::{\n    Bucket as B2,\n};\n';

before(async () => {
  h = buildGitHistory(work.dir);
  const log = await EventLog.open(lake);
  try {
    // branch `dev` at base when base is ingested, moved to shift before shift is: both runs record `dev`
    git(h.dir, ['branch', '-f', 'dev', h.sha.base]);
    gen.base = (await ingestGit(log, h.dir, h.sha.base, { maintain: false })).runs[0]!.generation;
    git(h.dir, ['branch', '-f', 'dev', h.sha.shift]);
    const rest = await ingestGit(log, h.dir, `${h.sha.base}..${h.sha.rename}`, { maintain: false });
    gen.shift = rest.runs[0]!.generation;
    gen.rename = rest.runs[1]!.generation;
    // repo `extra` (no git): the sample with a function whose calls resolve to nothing, each for its own reason
    const extra = path.join(work.dir, 'extra');
    cpSync(path.join(repoRoot, 'samples', 'workspace'), extra, { recursive: true });
    const lib = path.join(extra, 'crates', 'tally', 'src', 'lib.rs');
    writeFileSync(lib, readFileSync(lib, 'utf8') + MYSTERY);
    await ingest(log, extra, { repo: 'extra', maintain: false });
  } finally {
    log.close();
  }
});
after(() => work.cleanup());

const mimir = (...args: string[]): Promise<CliResult> => cli(args, { MIMIR_LAKE: lake, MIMIR_SERVER: undefined, NO_COLOR: '1' });

async function revGen(rev: string, what?: string): Promise<bigint> {
  const log = await EventLog.open(lake);
  try {
    return await generationOfRev(log, rev, undefined, log.readGeneration(), what);
  } finally {
    log.close();
  }
}

test('--as-of @{DATE}: the repo as of a date in its history, where a plain date (ingest time) finds nothing', async () => {
  // shift was committed at 12:01, rename (tally_text -> count_words) at 12:02
  const at = '2024-05-01T12:01:30Z';
  const plain = await mimir('def', 'tally::tally_text', '--as-of', at);
  assert.notEqual(plain.code, 0, 'a plain date is ingest time: the lake was empty then');
  assert.match(plain.stderr, /at generation 0/);

  const dated = await mimir('def', 'tally::tally_text', '--as-of', `@{${at}}`);
  assert.equal(dated.code, 0, dated.stderr);
  assert.match(dated.stdout, /^tally tally@0\.1\.0 tally::tally_text {2}crates\/tally\/src\/lib\.rs:\d+:\d+ {2}fn$/m);
  assert.match(dated.stderr, new RegExp(`at generation ${gen.shift}\\b`));
  const renamed = await mimir('def', 'tally::count_words', '--as-of', `@{${at}}`);
  assert.notEqual(renamed.code, 0, 'count_words does not exist before 12:02');

  assert.equal(await revGen('@{2024-05-01T12:00:30Z}'), gen.base);
  assert.equal(await revGen('@{2024-05-01T12:02:00Z}'), gen.rename, 'a commit made exactly at DATE counts');
  assert.equal(await revGen('@{2030-01-01}'), gen.rename);
  // REV@{DATE}: REV picks the repo (dev was recorded by tally's runs)
  assert.equal(await revGen('dev@{2024-05-01T12:00:30Z}'), gen.base);
  await assert.rejects(revGen('@{2024-05-01T11:00:00Z}'), /--as-of @\{2024-05-01T11:00:00Z\}: repo tally has no ingested commit made at or before 2024-05-01T11:00:00\.000Z \(its earliest ingested commit is tally@[0-9a-f]{12} of 2024-05-01T12:00:00\.000Z\); nothing read/);
  await assert.rejects(revGen('nosuch@{2024-05-01}'), /no branch or tag of any ingested repo is named nosuch/);
  const bad = await mimir('def', 'tally::tally_text', '--as-of', '@{yesterday}');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--as-of: expected an ISO 8601 date or time inside @\{…\}/);
});

test('--as-of HEAD is the repo\'s latest ingested commit; a branch that moved between ingests answers where it pointed last', async () => {
  assert.equal(await revGen('HEAD'), gen.rename);
  assert.equal(await revGen('dev'), gen.shift, 'dev was at base, then at shift');
  assert.equal(await revGen('base'), gen.base, 'a tag');
  const head = await mimir('def', 'tally::count_words', '--as-of', 'HEAD');
  assert.equal(head.code, 0, head.stderr);
  const d = await mimir('diff', '--from-rev', 'dev', '--to-rev', 'HEAD', '--json');
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, /"renamed"/);
});

test('--help lists every form --as-of and --from-rev take', async () => {
  for (const cmd of ['def', 'find', 'callers', 'history']) {
    const r = await mimir(cmd, '--help');
    assert.equal(r.code, 0);
    const text = r.stdout.replace(/\s+/g, ' ');
    for (const form of ['lake generation', 'ISO 8601', 'prefix of 4+ hex digits', 'tag or branch', 'HEAD', 'REV@{DATE}', '@{DATE}']) {
      assert.ok(text.includes(form), `${cmd} --help names ${form}: ${text}`);
    }
  }
  const diff = (await mimir('diff', '--help')).stdout.replace(/\s+/g, ' ');
  for (const form of ['HEAD', 'REV@{DATE}']) assert.ok(diff.includes(form), `diff --help names ${form}`);
});

test('errors name the option the value came in: --from-rev, --to-rev, --as-of; the server\'s name asOf', async () => {
  const from = await mimir('diff', '--from-rev', 'nosuch', '--to-rev', 'base');
  assert.notEqual(from.code, 0);
  assert.match(from.stderr, /--from-rev nosuch: no commit, tag or branch of any ingested repo is named nosuch/);
  assert.doesNotMatch(from.stderr, /--as-of/);
  const to = await mimir('diff', '--from-rev', 'base', '--to-rev', 'nosuch');
  assert.match(to.stderr, /--to-rev nosuch: no commit/);
  assert.doesNotMatch(to.stderr, /--as-of/);
  const dated = await mimir('diff', '--from-rev', '@{2020-01-01}', '--to-rev', 'base');
  assert.match(dated.stderr, /--from-rev @\{2020-01-01\}: repo tally has no ingested commit/);
  const asOf = await mimir('def', 'tally::Tally', '--as-of', 'nosuch');
  assert.match(asOf.stderr, /--as-of nosuch: no commit/);

  const server = await startServer({ lake, port: 0 });
  try {
    const r = await request(server.url, '/api/def?path=tally::Tally&asOf=nosuch');
    assert.equal(r.status, 400);
    assert.match(r.text, /asOf nosuch: no commit, tag or branch/);
    assert.doesNotMatch(r.text, /--as-of/);
    const future = await request(server.url, '/api/def?path=tally::Tally&asOf=999');
    assert.equal(future.status, 400);
    assert.match(future.text, /asOf 999: generation 999 is in the future/);
  } finally {
    await server.close();
  }
});

test('callees --resolved keeps the calls to items the lake holds; unresolved calls print the resolver\'s reason (callees, callers --unresolved)', async () => {
  const lines = (r: CliResult): string[] => r.stdout.split('\n').filter(Boolean);
  const all = await mimir('callees', 'tally::Tally::add', '--repo', 'tally');
  assert.equal(all.code, 0, all.stderr);
  assert.deepEqual(lines(all), [
    '- - std::vec::Vec::len  crates/tally/src/lib.rs:26:58  (unresolved: in the standard library)',
    '- fnvish@0.2.1 fnvish::hash_str  crates/tally/src/lib.rs:26:18  (not in the lake)',
    'tally tally@0.1.0 tally::bucket::Bucket::push  crates/tally/src/lib.rs:27:25',
  ]);
  const resolved = await mimir('callees', 'tally::Tally::add', '--repo', 'tally', '--resolved');
  assert.equal(resolved.code, 0, resolved.stderr);
  assert.deepEqual(lines(resolved), ['tally tally@0.1.0 tally::bucket::Bucket::push  crates/tally/src/lib.rs:27:25']);
  assert.match(resolved.stderr, /^1 call from tally::Tally::add at generation \d+; 2 calls to no item the lake holds left out \(--resolved\)\n$/);
  const json = await mimir('callees', 'tally::Tally::add', '--repo', 'tally', '--resolved', '--json');
  assert.match(json.stdout, /"unresolved": 2\n/);

  const mystery = await mimir('callees', 'tally::mystery');
  assert.deepEqual(lines(mystery), [
    '- - undefined_helper  crates/tally/src/lib.rs:42:5  (unresolved: undefined_helper not found)',
    '- - unknown_thing  crates/tally/src/lib.rs:43:13  (unresolved: unknown_thing not found)',
    '- - .frobnicate  crates/tally/src/lib.rs:44:7  (unresolved: receiver type unknown: unknown_thing not found)',
    '- - .frobnicate  crates/tally/src/lib.rs:45:7  (unresolved: no method frobnicate found for &tally::Tally)',
  ]);
  const callers = await mimir('callers', 'tally::frobnicate', '--unresolved');
  assert.equal(callers.code, 0, callers.stderr);
  assert.deepEqual(lines(callers), [
    'extra tally@0.1.0 tally::mystery  crates/tally/src/lib.rs:44:7  calls  -> .frobnicate (unresolved: receiver type unknown: unknown_thing not found)',
    'extra tally@0.1.0 tally::mystery  crates/tally/src/lib.rs:45:7  calls  -> .frobnicate (unresolved: no method frobnicate found for &tally::Tally)',
  ]);
  // the same through the server (the reason travels in the answer's JSON)
  const server = await startServer({ lake, port: 0 });
  try {
    const remote = await cli(['callers', 'tally::frobnicate', '--unresolved'], { MIMIR_LAKE: path.join(work.dir, 'nowhere'), MIMIR_SERVER: server.url, NO_COLOR: '1' });
    assert.equal(remote.stdout, callers.stdout);
    const rr = await cli(['callees', 'tally::Tally::add', '--repo', 'tally', '--resolved'], { MIMIR_LAKE: path.join(work.dir, 'nowhere'), MIMIR_SERVER: server.url, NO_COLOR: '1' });
    assert.equal(rr.stdout, resolved.stdout);
  } finally {
    await server.close();
  }
});

test('diff: an impl is not "body" changed when a member is added or a member\'s doc comment edited; the member\'s own changes still are', async () => {
  const dir = path.join(work.dir, 'impls');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), dir, { recursive: true });
  const lib = path.join(dir, 'crates', 'tally', 'src', 'lib.rs');
  const edit = (from: string, to: string): void => {
    const text = readFileSync(lib, 'utf8');
    assert.ok(text.includes(from), `lib.rs holds ${from}`);
    writeFileSync(lib, text.replace(from, to));
  };
  git(dir, ['init', '-q', '-b', 'main']);
  const sha: Record<string, string> = {};
  let minute = 0;
  const commit = (name: string): void => {
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', name], `2024-06-01T09:${String(minute++).padStart(2, '0')}:00Z`);
    git(dir, ['tag', name]);
    sha[name] = git(dir, ['rev-parse', 'HEAD']);
  };
  commit('base');
  edit('    /// How often `word` was counted.\n', '    /// Whether nothing was counted.\n    pub fn is_empty(&self) -> bool {\n        self.buckets.iter().all(|b| b.count("") == 0)\n    }\n\n    /// How often `word` was counted.\n');
  commit('member');
  edit('    /// Count one word.\n', '    /// Count one word (case-sensitive).\n');
  commit('doc');
  edit('n.max(1)', 'n.max(2)');
  commit('body');

  const implLake = path.join(work.dir, 'impls-lake');
  const log = await EventLog.open(implLake);
  try {
    await ingestGit(log, dir, sha.base!, { maintain: false });
    await ingestGit(log, dir, `${sha.base}..${sha.body}`, { maintain: false });
    const listed = (d: DiffResult): string[] =>
      d.changes.map((c) => `${c.change === 'changed' ? c.aspects.join(',') : c.change} ${(c.after ?? c.before)!.kind} ${(c.after ?? c.before)!.qpath}`).sort();
    const between = async (a: string, b: string): Promise<string[]> => listed(await diff(log, { fromRev: a, toRev: b }));
    assert.deepEqual(await between('base', 'member'), ['added method tally::Tally::is_empty']);
    assert.deepEqual(await between('member', 'doc'), [], 'a doc comment of a member: no item changed');
    assert.deepEqual(await between('doc', 'body'), ['body method tally::Tally::new'], 'a member\'s body still is a body change');
    assert.deepEqual(await between('base', 'body'), ['added method tally::Tally::is_empty', 'body method tally::Tally::new']);
  } finally {
    log.close();
  }
});

test('diff: a summary too long for the width is a line per crate and per note, wrapped; a short one stays one line', async () => {
  const narrow = await cli(['diff', '--from-rev', 'base', '--to-rev', 'rename'], { MIMIR_LAKE: lake, MIMIR_SERVER: undefined, NO_COLOR: '1', COLUMNS: '60' });
  assert.equal(narrow.code, 0, narrow.stderr);
  const lines = narrow.stderr.split('\n').filter(Boolean);
  assert.ok(lines.length >= 4, `several lines: ${narrow.stderr}`);
  for (const l of lines) assert.ok(l.length <= 60, `within 60 columns: ${JSON.stringify(l)}`);
  assert.match(lines[0]!, /^2 changes from base \(generation \d+\) to rename/);
  assert.ok(lines.some((l) => /^ {2}tally@0\.1\.0 +renamed 1$/.test(l)), `a line for tally: ${narrow.stderr}`);
  assert.ok(lines.some((l) => /^ {2}tally-cli@0\.1\.0 +body 1$/.test(l)), `a line for tally-cli: ${narrow.stderr}`);
  assert.ok(lines.some((l) => /^ {2}edges \+\d+ ~\d+ -\d+$/.test(l)), `the edges on their own line: ${narrow.stderr}`);

  const wide = await cli(['diff', '--from-rev', 'base', '--to-rev', 'rename'], { MIMIR_LAKE: lake, MIMIR_SERVER: undefined, NO_COLOR: '1', COLUMNS: '300' });
  assert.equal(wide.stderr.split('\n').filter(Boolean).length, 1, 'fits: one line');
  assert.match(wide.stderr, /^2 changes from base \(generation \d+\) to rename \(generation \d+\) in tally: renamed 1, body 1, moved 6; 6 moves not listed \(--moves lists them\); edges \+7 ~0 -7\n$/);
  const plain = await cli(['diff', '--from-rev', 'base', '--to-rev', 'rename'], { MIMIR_LAKE: lake, MIMIR_SERVER: undefined, NO_COLOR: '1', COLUMNS: undefined });
  for (const l of plain.stderr.split('\n')) assert.ok(l.length <= 100, `off a terminal without $COLUMNS: 100 columns: ${JSON.stringify(l)}`);
});

test('refs --kind uses: each import at the name it imports, line and 1-based column, also in a use list over several lines', async () => {
  const r = await mimir('refs', 'tally::bucket::Bucket', '--kind', 'uses');
  assert.equal(r.code, 0, r.stderr);
  const extraLib = readFileSync(path.join(work.dir, 'extra', 'crates', 'tally', 'src', 'lib.rs'), 'utf8').split('\n');
  const tallyLib = git(h.dir, ['show', `${h.sha.rename}:crates/tally/src/lib.rs`]).split('\n');
  const sites = r.stdout.split('\n').filter(Boolean).map((l) => {
    const m = /^(\S+) \S+ \S+ {2}crates\/tally\/src\/lib\.rs:(\d+):(\d+) {2}uses$/.exec(l);
    assert.ok(m, `a uses line with a place: ${l}`);
    return { repo: m[1]!, line: Number(m[2]), col: Number(m[3]) };
  });
  assert.deepEqual(sites.map((s) => s.repo).sort(), ['extra', 'extra', 'tally']);
  for (const s of sites) {
    const text = (s.repo === 'extra' ? extraLib : tallyLib)[s.line - 1] ?? '';
    assert.equal(text.slice(s.col - 1, s.col - 1 + 'Bucket'.length), 'Bucket', `${s.repo} line ${s.line} col ${s.col} is at the name: ${JSON.stringify(text)}`);
  }
  const listed = extraLib.indexOf('    Bucket as B2,') + 1;
  assert.ok(sites.some((s) => s.repo === 'extra' && s.line === listed && s.col === 5), `the name on its own line of the list (line ${listed}): ${r.stdout}`);
});
