// A copied lake whose catalog.db is an empty file, with real `mimir`
// processes: `ingest` and `init` refuse (exit 1, naming the file and `mimir
// lake recover`) and leave the file as it was (0 bytes, same inode and mtime);
// `lake recover` moves the empty file aside (catalog.db.damaged-<time>) and
// re-registers every table from its latest metadata, although the tables were
// written under the original lake's folder; the lake then lists the same
// tables and answers as before the damage, and a following ingest works.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-damaged-');
after(work.cleanup);
const ok = (r: CliResult, what: string): CliResult => {
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${r.stderr}`);
  return r;
};
const sample = path.join(repoRoot, 'samples', 'workspace');

async function reads(lake: string): Promise<string[]> {
  return [
    // the header names the generation, which recovery starts again
    ok(await runCli(['table', 'list'], { lake }), 'table list').stdout.split('\n').filter((l) => !l.startsWith('lake ')).join('\n'),
    ok(await runCli(['find', 'Tally'], { lake }), 'find').stdout,
    ok(await runCli(['callers', 'fnvish::hash_str'], { lake }), 'callers').stdout,
  ];
}

test('empty catalog.db: commands refuse without writing it, lake recover restores every table', async () => {
  const original = path.join(work.dir, 'original');
  ok(await runCli(['ingest', sample, '--repo', 'sample', '--with-deps'], { lake: original }), 'ingest');
  const lake = path.join(work.dir, 'copy');
  cpSync(original, lake, { recursive: true });
  const before = await reads(lake);
  assert.ok(before[0]!.split('\n').filter((l) => l.trim() !== '').length >= 14, before[0]);

  const catalog = path.join(lake, 'catalog.db');
  for (const f of ['catalog.db-wal', 'catalog.db-shm']) rmSync(path.join(lake, f), { force: true });
  truncateSync(catalog, 0);
  const st = statSync(catalog);
  for (const args of [['ingest', sample, '--repo', 'sample'], ['init']]) {
    const r = await runCli(args, { lake });
    assert.equal(r.code, 1, `${args[0]} refuses: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`${catalog.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*empty.*mimir lake recover --lake`), args[0]);
    const now = statSync(catalog);
    assert.equal(now.size, 0, `${args[0]} left the file empty`);
    assert.equal(now.ino, st.ino, `${args[0]} left the same file`);
    assert.equal(now.mtimeMs, st.mtimeMs, `${args[0]} did not write the file`);
  }

  const rec = ok(await runCli(['lake', 'recover'], { lake }), 'recover');
  assert.match(rec.stderr, /0 not recovered/, rec.stderr);
  const aside = readdirSync(lake).filter((f) => f.startsWith('catalog.db.damaged-'));
  assert.equal(aside.length, 1, `the empty file moved aside: ${readdirSync(lake).join(', ')}`);
  assert.equal(statSync(path.join(lake, aside[0]!)).size, 0);
  assert.match(rec.stderr, new RegExp(aside[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'the report names where the damaged file went');
  assert.deepEqual(await reads(lake), before, 'same tables, same answers as before the damage');

  ok(await runCli(['ingest', sample, '--repo', 'other'], { lake }), 'ingest after recovery');
  assert.match(ok(await runCli(['find', 'Tally', '--repo', 'other'], { lake }), 'find in the new repo').stdout, /Tally/);
});
