// Mistakes never remove data silently, tried as a user makes them with the
// real CLI: `mimir ingest` of a file, of an empty folder, of a workspace whose
// Cargo.toml (or a member's) does not parse, or that names no package, exits
// 1 with a message saying what was wrong and that nothing was written, and
// the lake's generation and the repo's items are unchanged. A whole repo
// leaves only by `mimir repo remove NAME` (one run, one generation; a dry run
// writes nothing; the universe is refused).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';
import { fixtures } from './helpers.ts';

const work = scratch('mimir-mistakes-');
after(work.cleanup);
const lake = path.join(work.dir, 'lake');
const mimir = (...args: string[]) => runCli(args, { lake });

function generation(root = lake): bigint {
  const l = Lake.open(root, { create: false });
  try {
    return l.catalog.pointerGeneration();
  } finally {
    l.close();
  }
}

async function liveNodes(repo: string): Promise<number> {
  const log = await EventLog.open(lake);
  try {
    return (await log.state('node', eq('repo', repo))).size;
  } finally {
    log.close();
  }
}

function workspace(name: string): string {
  const dir = path.join(work.dir, name);
  cpSync(path.join(fixtures, 'ws'), dir, { recursive: true });
  return dir;
}

test('ingest of a file, an empty folder, a broken or empty manifest: exit 1, nothing written, the repo unchanged', { timeout: 300_000 }, async () => {
  const ws = workspace('ws');
  const first = await mimir('ingest', ws, '--repo', 'demo');
  assert.equal(first.code, 0, first.stderr);
  const nodes = await liveNodes('demo');
  assert.ok(nodes > 3, `demo has ${nodes} nodes`);
  const g = generation();

  const file = path.join(work.dir, 'hostname');
  writeFileSync(file, 'box\n');
  const empty = path.join(work.dir, 'empty');
  mkdirSync(empty);
  const brokenRoot = workspace('broken-root');
  writeFileSync(path.join(brokenRoot, 'Cargo.toml'), '[workspace\nmembers = ["alpha"]\n');
  const brokenMember = workspace('broken-member');
  writeFileSync(path.join(brokenMember, 'beta', 'Cargo.toml'), '[package]\nname = "beta"\nversion = 0.1.0\n');
  const noMembers = workspace('no-members');
  writeFileSync(path.join(noMembers, 'Cargo.toml'), '[workspace]\nmembers = []\n');
  const missingMember = workspace('missing-member');
  writeFileSync(path.join(missingMember, 'Cargo.toml'), '[workspace]\nmembers = ["alpha", "gamma"]\n');

  const cases: [string, string, RegExp][] = [
    ['a file', file, /is a file, not a workspace or package folder.*nothing written/],
    ['an empty folder', empty, /not a workspace or package \(no Cargo.toml in it\).*nothing written/],
    ['a root Cargo.toml that does not parse', brokenRoot, /manifests are not valid \(1 problem: .*Cargo.toml is not valid TOML.*nothing written; repo demo is unchanged/],
    ['a member Cargo.toml that does not parse', brokenMember, /manifests are not valid .*beta.Cargo.toml is not valid TOML.*nothing written/],
    ['a workspace without members', noMembers, /names no package.*nothing written; to remove repo demo from the lake use `mimir repo remove demo`/],
    ['a member that is missing', missingMember, /manifests are not valid .*workspace member gamma has no Cargo.toml/],
  ];
  for (const [what, p, message] of cases) {
    const r = await mimir('ingest', p, '--repo', 'demo');
    assert.equal(r.code, 1, `${what}: exit 1 (stdout ${r.stdout})`);
    assert.match(r.stderr, message, `${what}: ${r.stderr}`);
    assert.equal(r.stdout, '', `${what}: no report`);
    assert.equal(generation(), g, `${what}: lake generation unchanged`);
    assert.equal(await liveNodes('demo'), nodes, `${what}: repo demo unchanged`);
  }

  // a mistaken path into a lake that does not exist yet creates nothing
  const none = path.join(work.dir, 'no-lake');
  const r = await runCli(['ingest', file, '--repo', 'x'], { lake: none });
  assert.equal(r.code, 1);
  assert.ok(!existsSync(none), 'no lake created');
});

test('repo remove: a dry run writes nothing; the removal is one generation of remove events; the universe is refused', { timeout: 300_000 }, async () => {
  const ws = workspace('ws-remove');
  assert.equal((await mimir('ingest', ws, '--repo', 'gone')).code, 0);
  assert.equal((await mimir('ingest', workspace('ws-keep'), '--repo', 'kept')).code, 0);
  const live = await liveNodes('gone');
  const keptNodes = await liveNodes('kept');
  const g = generation();

  const dry = await mimir('repo', 'remove', 'gone', '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^repo remove gone \(dry run\): would write \d+ remove events over 2 crates \(alpha@0.1.0: node \d+, edge \d+, file \d+(, pos \d+)?; beta@0.1.0: .*\) — nothing written/);
  assert.equal(generation(), g, 'dry run: generation unchanged');
  assert.equal(await liveNodes('gone'), live);

  const rm = await mimir('repo', 'remove', 'gone', '--json');
  assert.equal(rm.code, 0, rm.stderr);
  const report = parseJson(rm.stdout) as { [k: string]: Json };
  assert.equal(report['generation'], Number(g + 1n), 'one generation');
  assert.equal(generation(), g + 1n);
  assert.equal(await liveNodes('gone'), 0, 'every item of the repo removed');
  assert.equal(await liveNodes('kept'), keptNodes, 'other repos untouched');
  const hist = await mimir('history', 'alpha::helper');
  assert.match(hist.stdout, /remove +gone alpha@0.1.0 node fn alpha::helper/);

  // a rerun converges: exit 0, nothing written (test/cli/rerun.test.ts kills one after its commit)
  const again = await mimir('repo', 'remove', 'gone');
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^repo remove gone: already removed at generation ${g + 1n} by run \\S+ — nothing to do, nothing written`));
  const uni = await mimir('repo', 'remove', '@universe');
  assert.equal(uni.code, 1);
  assert.match(uni.stderr, /@universe is the universe, shared by every repo, and cannot be removed — nothing removed/);
  assert.equal(generation(), g + 1n);

  // the repo can come back
  assert.equal((await mimir('ingest', ws, '--repo', 'gone')).code, 0);
  assert.equal(await liveNodes('gone'), live);
});
