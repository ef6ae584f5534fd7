// `mimir ring status|split|unsplit`, `compact`, `gc`, `log generations` run
// as real child processes on real lakes in a scratch folder (populated by
// test/cli/log-populate.ts through EventLog.append): status before/after a
// split, report JSON fields and types (bigints as JSON integers), the no-op
// reports, dry-run gc deleting nothing, generations newest first. init and the
// failures (exit 1 / 2) are in log-init.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { Lake } from '../../src/lake/lake.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-log-');
after(work.cleanup);
type Obj = { [k: string]: Json };

let n = 0;
const lakeDir = (): string => path.join(work.dir, `lake-${n++}`);
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};
const json = (r: CliResult): Obj => parseJson(ok(r).stdout) as Obj;

/** Append 6 ring + 4 acme rows per kind per round through EventLog.append, in a child process. */
function populate(lake: string, rounds = 2): Promise<void> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'log-populate.ts');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, lake, String(rounds)], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`log-populate exited ${code}: ${err}`))));
  });
}

/** A unified lake with 2 rounds of rows (48 ring rows over 3 crates, 32 acme rows: 12 and 8 of each kind). */
async function unifiedLake(): Promise<string> {
  const lake = lakeDir();
  ok(await runCli(['init', '--ring', 'unified'], { lake }));
  await populate(lake);
  return lake;
}

test('ring split: status before/after, --json report fields and types, second split is the no-op report', async () => {
  const lake = await unifiedLake();
  const before = json(await runCli(['ring', 'status', '--json'], { lake }));
  assert.equal(before.mode, 'unified');
  assert.equal(before.ringRows, 48);
  assert.deepEqual(before.ringRowsInSourceTables, { node: 12, edge: 12, file: 12, pos: 12, total: 48 });
  assert.deepEqual(before.ringCrates, { count: 3, first: ['dep0@1.0.0', 'dep1@1.0.0', 'dep2@1.0.0'] });

  const split = await runCli(['ring', 'split', '--json', '--chunk-rows', '5'], { lake });
  const r = json(split);
  assert.equal(split.stderr, '', 'no progress off a terminal');
  for (const k of ['copied', 'verified', 'recopied', 'ms']) assert.ok(Number.isInteger(r[k]), `${k} is a JSON integer: ${split.stdout}`);
  assert.equal(r.switched, true);
  assert.equal(r.copied, 48);
  assert.equal(r.verified, 48);
  assert.equal(r.recopied, 0);

  const after = json(await runCli(['ring', 'status', '--json'], { lake }));
  assert.equal(after.mode, 'split');
  assert.equal(after.ringRows, 48);
  const rows = new Map((after.tables as Obj[]).map((t) => [t.table, t.rows]));
  assert.equal(rows.get('mimir.code_node_events_ring'), 12);
  assert.equal(rows.get('mimir.code_edge_events_ring'), 12);
  assert.equal(rows.get('mimir.code_file_events_ring'), 12);
  assert.equal(rows.get('mimir.code_position_events_ring'), 12);
  assert.equal(rows.get('mimir.code_node_events'), 20, 'old ring rows stay in the source table until compaction');
  assert.equal((after.ringRowsInSourceTables as Obj).total, 48);

  const [again, againJson] = await Promise.all([runCli(['ring', 'split'], { lake }), runCli(['ring', 'split', '--json'], { lake })]);
  assert.match(ok(again).stdout, /^ring split: copied 0 row\(s\) .*not switched \(was split already\) in \d+ ms\n$/);
  assert.equal(json(againJson).switched, false);
});

test('ring unsplit: back to unified with every ring row in the source tables; again is the no-op report', async () => {
  const lake = await unifiedLake();
  ok(await runCli(['ring', 'split'], { lake }));
  await populate(lake, 1); // ring rows added after the split land in the ring tables
  const u = json(await runCli(['ring', 'unsplit', '--json'], { lake }));
  assert.equal(u.switched, true);
  assert.ok(Number.isInteger(u.copiedBack) && (u.copiedBack as number) >= 24, `copied back the new ring rows: ${JSON.stringify(u)}`);
  const s = json(await runCli(['ring', 'status', '--json'], { lake }));
  assert.equal(s.mode, 'unified');
  assert.equal(s.ringRows, 72);
  assert.equal((s.ringRowsInSourceTables as Obj).total, 72);
  const again = ok(await runCli(['ring', 'unsplit'], { lake }));
  assert.match(again.stdout, /^ring unsplit: copied back 0 row\(s\).*not switched \(was unified already\)/);
});

test('compact --json and text; gc --dry-run deletes nothing and lists files, gc --json deletes them', async () => {
  const lake = await unifiedLake();
  ok(await runCli(['ring', 'split'], { lake }));
  const c = json(await runCli(['compact', '--json', '--target-file-rows', '1000'], { lake }));
  const tables = c.tables as Obj[];
  assert.equal(tables.length, 9, 'four kinds, each with a ring table, and ingest_runs');
  assert.ok(Number.isInteger(c.ms));
  for (const t of tables) {
    for (const side of ['before', 'after'] as const) {
      const s = t[side] as Obj;
      assert.ok(Number.isInteger(s.files) && Number.isInteger(s.rows) && Number.isInteger(s.bytes), JSON.stringify(t));
    }
  }
  const node = tables.find((t) => t.table === 'mimir.code_node_events')!;
  assert.equal(node.droppedRingRows, 12);
  assert.equal((node.after as Obj).rows, 8);
  assert.equal((json(await runCli(['ring', 'status', '--json'], { lake })).ringRowsInSourceTables as Obj).total, 0);
  assert.match(ok(await runCli(['compact'], { lake })).stdout, /^compacted 0 of 9 tables in \d+ ms — .*skipped/);

  const dryText = ok(await runCli(['gc', '--dry-run', '--retain', '0'], { lake }));
  assert.match(dryText.stdout, /^gc \(dry run\): would expire \d+ snapshot\(s\)/);
  const listed = [...dryText.stdout.matchAll(/^would delete (file:\S+)$/gm)].map((m) => fileURLToPath(m[1]!));
  assert.ok(listed.length > 0, dryText.stdout);
  const dry = json(await runCli(['gc', '--dry-run', '--retain=0', '--json'], { lake }));
  assert.equal(dry.dryRun, true);
  const dryDeleted = (dry.tables as Obj[]).flatMap((t) => t.deleted as string[]);
  assert.ok(dryDeleted.length > 0);
  assert.ok((dry.tables as Obj[]).some((t) => (t.expired as Json[]).length > 0 && (t.expired as Json[]).every((id) => typeof id === 'number' || typeof id === 'bigint')));
  for (const f of dryDeleted) assert.ok(existsSync(fileURLToPath(f)), `dry run kept ${f}`);

  const real = json(await runCli(['gc', '--retain', '0', '--keep-last', '1', '--json'], { lake }));
  assert.equal(real.dryRun, false);
  const deleted = (real.tables as Obj[]).flatMap((t) => t.deleted as string[]);
  assert.deepEqual([...deleted].sort(), [...dryDeleted].sort(), 'gc deleted what the dry run listed');
  for (const f of deleted) assert.ok(!existsSync(fileURLToPath(f)), `gc deleted ${f}`);
  const s = json(await runCli(['ring', 'status', '--json'], { lake }));
  assert.equal(s.ringRows, 48, 'the merged ring read is unchanged');
});

test('log generations: every commit newest first with ISO time, note and tables touched; --limit', async () => {
  const lake = await unifiedLake();
  ok(await runCli(['ring', 'split'], { lake }));
  const [all, top, text] = await Promise.all([
    runCli(['log', 'generations', '--limit', '0', '--json'], { lake }),
    runCli(['log', 'generations', '--limit', '2', '--json'], { lake }),
    runCli(['log', 'generations'], { lake }),
  ]);
  const gens = parseJson(ok(all).stdout) as Obj[];
  const nums = gens.map((g) => g.generation as number);
  assert.deepEqual(nums, [...nums].sort((a, b) => b - a), 'newest first');
  const lake0 = Lake.open(lake, { create: false });
  const current = lake0.catalog.pointerGeneration();
  lake0.close();
  assert.equal(BigInt(nums[0]!), current);
  for (const g of gens) assert.match(g.time as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const appends = gens.filter((g) => typeof g.note === 'string' && g.note.startsWith('append '));
  assert.equal(appends.length, 8, 'one generation per EventLog.append (2 rounds of 4 kinds)');
  assert.ok(appends.every((g) => (g.tables as Obj[]).some((t) => String(t.table).startsWith('mimir.code_'))));
  assert.ok(gens.some((g) => (g.tables as Obj[]).some((t) => t.table === 'mimir.code_node_events_ring')), 'the split copy is listed');
  assert.deepEqual((parseJson(ok(top).stdout) as Obj[]).map((g) => g.generation), nums.slice(0, 2));
  const lines = ok(text).stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^generation\s+time\s+note\s+tables$/);
  assert.match(lines[1]!, new RegExp(`^${nums[0]}\\s+\\d{4}-`));
});
