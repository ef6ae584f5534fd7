// A lost catalog, with real `mimir` processes: after catalog.db is deleted,
// `ingest`, `init` and `table append` refuse (exit 1, naming `mimir lake
// recover`) and create nothing; `lake recover --dry-run` writes nothing;
// `lake recover` registers every table, deletes or changes no file (sha256 of
// every file but the catalog, before and after), and the lake answers exactly
// as before (find, callers, table scan of every table); a rerun of the ingest
// then writes no event. `init` into a non-empty folder that is not a lake refuses.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { digests } from './digests.ts';

const work = scratch('mimir-cli-recover-');
after(work.cleanup);
const ok = (r: CliResult, what: string): CliResult => {
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${r.stderr}`);
  return r;
};
const sample = path.join(repoRoot, 'samples', 'workspace');

/** The lake's tables (every one has its folder under mimir/), whatever this version creates. */
const tablesOf = (lake: string): string[] => readdirSync(path.join(lake, 'mimir')).sort();

async function reads(lake: string, tables: string[]): Promise<string[]> {
  const out = [ok(await runCli(['find', 'Tally'], { lake }), 'find').stdout, ok(await runCli(['callers', 'fnvish::hash_str'], { lake }), 'callers').stdout];
  for (const t of tables) {
    const scan = ok(await runCli(['table', 'scan', `lake:mimir.${t}`], { lake }), `scan ${t}`).stdout;
    out.push(scan.split('\n').sort().join('\n'));
  }
  return out;
}

test('lost catalog: commands refuse, lake recover restores every table and the answers are as before', async () => {
  const lake = path.join(work.dir, 'lake');
  ok(await runCli(['ingest', sample, '--repo', 'sample', '--with-deps'], { lake }), 'ingest');
  const TABLES = tablesOf(lake);
  assert.ok(TABLES.length >= 14 && TABLES.includes('ingest_runs') && TABLES.includes('code_nodes'), TABLES.join(', '));
  const before = await reads(lake, TABLES);
  assert.ok(before[0]!.includes('tally::Tally'));

  for (const f of ['catalog.db', 'catalog.db-wal', 'catalog.db-shm']) rmSync(path.join(lake, f), { force: true });
  const files = digests(lake);
  assert.ok(files.size > TABLES.length * 2, `${files.size} files in the lake without its catalog`);
  for (const args of [['ingest', sample, '--repo', 'sample'], ['init'], ['table', 'append', 'lake:demo.t', '--jsonl', '-']]) {
    const r = await runCli(args, { lake, input: '{"a":1}\n' });
    assert.equal(r.code, 1, `${args[0]} refuses: ${r.stderr}`);
    assert.match(r.stderr, /no catalog\.db: the lake's catalog was lost.*Run 'mimir lake recover/, args.join(' '));
    assert.ok(!existsSync(path.join(lake, 'catalog.db')), `${args[0]} created no catalog`);
  }

  const dry = ok(await runCli(['lake', 'recover', '--dry-run'], { lake }), 'recover --dry-run');
  assert.equal(dry.stdout.split('\n').filter((l) => l.includes(': would register ')).length, TABLES.length, dry.stdout);
  assert.ok(!existsSync(path.join(lake, 'catalog.db')), 'a dry run writes nothing');

  const rec = ok(await runCli(['lake', 'recover'], { lake }), 'recover');
  const afterRecovery = digests(lake);
  for (const f of ['catalog.db', 'catalog.db-wal', 'catalog.db-shm']) afterRecovery.delete(f);
  assert.deepEqual(afterRecovery, files, 'recovery wrote only the catalog: no file deleted, changed or added');
  for (const t of TABLES) assert.match(rec.stdout, new RegExp(`^mimir\\.${t}: registered .*metadata\\.json \\(version \\d+`, 'm'));
  assert.match(rec.stderr, new RegExp(`registered ${TABLES.length} table\\(s\\), 0 already in the catalog, 0 not recovered; .*nothing deleted`));
  assert.deepEqual(await reads(lake, TABLES), before, 'every answer as before the loss');

  const again = ok(await runCli(['ingest', sample, '--repo', 'sample', '--json'], { lake }), 'ingest after recovery');
  assert.deepEqual(JSON.parse(again.stdout).events, { add: 0, change: 0, remove: 0 }, 'nothing re-written');
  const second = ok(await runCli(['lake', 'recover'], { lake }), 'recover again');
  assert.match(second.stderr, new RegExp(`registered 0 table\\(s\\), ${TABLES.length} already in the catalog`));
});

test('init into a non-empty folder that is not a lake refuses and creates nothing', async () => {
  const dir = path.join(work.dir, 'stuff');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'notes.txt'), 'mine');
  const r = await runCli(['init'], { lake: dir });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is not a lake \(no catalog\.db\) and not empty \(1 entry: notes\.txt\)/);
  assert.ok(!existsSync(path.join(dir, 'catalog.db')));
  const ing = await runCli(['ingest', sample, '--repo', 'sample'], { lake: dir });
  assert.equal(ing.code, 1);
  assert.ok(!existsSync(path.join(dir, 'catalog.db')));
  ok(await runCli(['init'], { lake: path.join(work.dir, 'fresh') }), 'init into a new folder');
});
