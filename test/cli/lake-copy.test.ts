// A copied lake is an independent lake: after `cp -a`, ingest, universe add,
// compact and `gc --retain 0` on the copy leave every file of the original
// byte for byte as it was (sha256 of each) and its answers unchanged, while
// the copy answers with what was written into it. Also for a lake made before
// the root was recorded (the catalog property removed before copying): the
// copy infers the original's root from its tables and maps it. Real `mimir`
// processes on real folders.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { SqlCatalog } from '../../src/lake/catalog/sql-catalog.ts';
import { PROP_LAKE_ROOT } from '../../src/lake/lake.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { digests } from './digests.ts';

const work = scratch('mimir-cli-copy-');
after(work.cleanup);
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};

function assertSameFiles(before: Map<string, string>, after: Map<string, string>, what: string): void {
  const added = [...after.keys()].filter((k) => !before.has(k));
  const removed = [...before.keys()].filter((k) => !after.has(k));
  const changed = [...before.keys()].filter((k) => after.has(k) && after.get(k) !== before.get(k));
  assert.deepEqual({ added, removed, changed }, { added: [], removed: [], changed: [] }, `${what}: the original's files changed`);
}

/** A copy of the sample workspace with one function added to crates/tally/src/lib.rs. */
function editedWorkspace(name: string): string {
  const ws = path.join(work.dir, name);
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const lib = path.join(ws, 'crates', 'tally', 'src', 'lib.rs');
  writeFileSync(lib, `${readFileSync(lib, 'utf8')}\n/// Only in the copy.\npub fn only_in_copy() -> u32 { 7 }\n`);
  return ws;
}

async function answers(lake: string): Promise<string[]> {
  // a name a lake never had fails (exit 1, did-you-mean on stderr): compare the exit code and stdout
  const f = await runCli(['find', 'only_in_copy'], { lake });
  const find = `exit ${f.code}\n${f.stdout}`;
  const tally = ok(await runCli(['find', 'Tally'], { lake })).stdout;
  const scan = ok(await runCli(['table', 'scan', 'lake:mimir.code_node_events_ring', '--columns', 'krate,id,op'], { lake })).stdout;
  return [find, tally, scan.split('\n').sort().join('\n')];
}

/** Ingest, universe add, compact and gc --retain 0 in `copy`; each prints the moved-lake note. */
async function writeInto(copy: string, original: string, ws: string): Promise<void> {
  for (const args of [
    ['ingest', ws, '--repo', 'sample'],
    ['universe', 'add', path.join(repoRoot, 'test', 'extract', 'fixtures', 'ws', 'vendor')],
    ['compact'],
    ['gc', '--retain', '0'],
  ]) {
    const r = ok(await runCli(args, { lake: copy }));
    assert.ok(r.stderr.includes(`note: the lake at ${copy} was created at ${original}`), `${args[0]} notes the move: ${r.stderr}`);
  }
}

test('copy: writing into and gc of a cp -a copy leave the original untouched; each lake answers for itself', async () => {
  const original = path.join(work.dir, 'original');
  ok(await runCli(['ingest', path.join(repoRoot, 'samples', 'workspace'), '--repo', 'sample', '--with-deps'], { lake: original }));
  const readsBefore = await answers(original);
  const before = digests(original);

  const copy = path.join(work.dir, 'copy');
  execFileSync('cp', ['-a', original, copy]);
  await writeInto(copy, original, editedWorkspace('ws1'));

  assertSameFiles(before, digests(original), 'after writing into the copy');
  assert.deepEqual(await answers(original), readsBefore, 'the original answers as before');
  const inCopy = await answers(copy);
  assert.match(inCopy[0]!, /only_in_copy/, 'the copy holds what was written into it');
  assert.notEqual(inCopy[2], readsBefore[2], 'the copy has the added universe crate');
  assert.equal(readsBefore[0], 'exit 1\n', 'the original never had it (an unknown name: exit 1, nothing on stdout)');

  // lake info names both roots
  const info = ok(await runCli(['lake', 'info', '--json'], { lake: copy }));
  const j = JSON.parse(info.stdout) as { root: string; recordedRoot: string; moved: boolean };
  assert.deepEqual([j.root, j.recordedRoot, j.moved], [copy, original, true]);
});

test('copy: a lake made before the root was recorded is mapped by the root its tables agree on', async () => {
  const original = path.join(work.dir, 'old-original');
  ok(await runCli(['ingest', path.join(repoRoot, 'samples', 'workspace'), '--repo', 'sample', '--with-deps'], { lake: original }));
  const cat = SqlCatalog.open(original, { create: false });
  assert.equal(cat.property(PROP_LAKE_ROOT), original, 'a new lake records its root');
  cat.setProperty(PROP_LAKE_ROOT, undefined);
  cat.close();
  const before = digests(original);

  const copy = path.join(work.dir, 'old-copy');
  execFileSync('cp', ['-a', original, copy]);
  await writeInto(copy, original, editedWorkspace('ws2'));
  assertSameFiles(before, digests(original), 'old lake, after writing into the copy');
  const recorded = SqlCatalog.open(copy, { readOnly: true });
  assert.equal(recorded.property(PROP_LAKE_ROOT), original, 'the copy recorded the inferred original root');
  recorded.close();
});
