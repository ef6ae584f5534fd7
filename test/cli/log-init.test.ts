// `mimir init` and the event-log commands' failures, run as real child
// processes on scratch lakes: init's modes and its refusal of the other mode,
// usage errors (exit 2, nothing created) and missing lakes or lakes without
// the event log (exit 1, nothing created). The commands' work is pinned in
// log.test.ts (split in two files so each stays fast).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
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

test('init: split by default, creating the lake and every event table', async () => {
  const lake = lakeDir();
  const r = json(await runCli(['init', '--json'], { lake }));
  assert.equal(r.mode, 'split');
  assert.equal(r.created, true);
  assert.deepEqual(r.tables, [
    'mimir.code_edge_events',
    'mimir.code_edge_events_ring',
    'mimir.code_edges_in',
    'mimir.code_edges_out',
    'mimir.code_file_events',
    'mimir.code_file_events_ring',
    'mimir.code_files',
    'mimir.code_keys',
    'mimir.code_node_events',
    'mimir.code_node_events_ring',
    'mimir.code_nodes',
    'mimir.code_paths',
    'mimir.code_position_events',
    'mimir.code_position_events_ring',
    'mimir.code_sources',
    'mimir.ingest_runs',
  ]);
  const s = json(await runCli(['ring', 'status', '--json', '--lake', lake]));
  assert.equal(s.mode, 'split');
  assert.deepEqual(s.ringCrates, { count: 0, first: [] });
});

test('init --ring unified; again in the same mode is a no-op, in the other mode refused with exit 1', async () => {
  const lake = lakeDir();
  const first = ok(await runCli(['init', '--ring', 'unified'], { lake }));
  assert.match(first.stdout, /^initialised event log at .* \(unified\)/);
  assert.equal(json(await runCli(['ring', 'status', '--json'], { lake })).mode, 'unified');
  const again = json(await runCli(['init', '--ring=unified', '--json'], { lake }));
  assert.equal(again.created, false);
  assert.equal(again.mode, 'unified');
  const refused = await runCli(['init'], { lake });
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /^mimir init: the lake at .* exists and is unified; it cannot be initialised as split/);
  assert.equal(json(await runCli(['ring', 'status', '--json'], { lake })).mode, 'unified', 'the refusal changed nothing');
});

test('usage errors exit 2 with a hint; nothing is created', async () => {
  const lake = lakeDir();
  const cases: string[][] = [
    ['init', '--ring', 'both'],
    ['ring'],
    ['ring', 'bogus'],
    ['ring', 'status', '--foo'],
    ['ring', 'split', '--chunk-rows', '0'],
    ['ring', 'split', '--chunk-rows', 'x'],
    ['ring', 'unsplit', 'extra'],
    ['compact', '--target-file-rows', '-1'],
    ['gc', '--retain', '5'],
    ['gc', '--retain', '7days'],
    ['gc', '--keep-last', '0'],
    ['gc', '--dry-run=yes'],
    ['log', 'generations', '--limit', 'ten'],
  ];
  const results = await Promise.all(cases.map((c) => runCli(c, { lake })));
  results.forEach((r, i) => {
    assert.equal(r.code, 2, `${cases[i]!.join(' ')}: exit ${r.code} ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /mimir/, cases[i]!.join(' '));
  });
  assert.ok(!existsSync(lake), 'no lake created by a usage error');
});

test('ring, compact, gc and log on a missing lake fail with exit 1 and create nothing; a lake without the log is refused', async () => {
  const missing = lakeDir();
  const cmds = [['ring', 'status'], ['ring', 'split'], ['ring', 'unsplit'], ['compact'], ['gc', '--dry-run'], ['log', 'generations']];
  const results = await Promise.all(cmds.map((c) => runCli(c, { lake: missing })));
  results.forEach((r, i) => {
    assert.equal(r.code, 1, `${cmds[i]!.join(' ')}: exit ${r.code}`);
    assert.match(r.stderr, /no lake at .*catalog\.db/);
  });
  assert.ok(!existsSync(missing));

  const bare = lakeDir();
  Lake.open(bare, { create: true }).close();
  const r = await runCli(['ring', 'status'], { lake: bare });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /has no event log .*mimir init/);
  const g = ok(await runCli(['log', 'generations', '--json'], { lake: bare }));
  assert.ok(Array.isArray(parseJson(g.stdout)));
});
