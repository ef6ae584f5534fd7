// `mimir state verify|rebuild|maintain` run as real child processes on a real
// lake (test/query/sample.ts): verify exits 0 on a lake kept by its writers,
// 1 naming the (table, repo, krate) a foreign append put out of step, and
// rebuild brings it back; a lake whose state tables were dropped answers by
// folding the log with a note until `state rebuild` recreates them, and then
// answers the same; `--as-of G` answers as of G from the tables; --json and
// --help on each; usage errors exit 2.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { ident } from '../../src/log/schema.ts';
import { CODE_NODES, CODE_PATHS, STATE_TABLES } from '../../src/log/state/schema.ts';
import { toBatch } from '../../src/log/state/delta.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { sampleLake, type Sample } from '../query/sample.ts';

const work = scratch('mimir-cli-state-');
const lake = path.join(work.dir, 'lake');
let s: Omit<Sample, 'log'>;
before(async () => {
  const { log, ...gens } = await sampleLake(lake);
  log.close();
  s = gens;
});
after(work.cleanup);

type Obj = { [k: string]: Json };
const mimir = (...args: string[]): Promise<CliResult> => runCli(args, { lake });
const code = (r: CliResult, want: number): CliResult => {
  assert.equal(r.code, want, `exit ${r.code} (expected ${want}): ${r.stderr}`);
  return r;
};
const json = (r: CliResult): Obj => parseJson(code(r, 0).stdout) as Obj;

test('mimir state verify: exit 0 and the row counts on a lake its writers kept; --json; --generation at a past generation', async () => {
  const r = code(await mimir('state', 'verify'), 0);
  assert.match(r.stdout, /^state verify: equal to the log at generation \d+ \(3 crates; rows: code_nodes 5, /);
  const j = json(await mimir('state', 'verify', '--json'));
  assert.equal(j.equal, true);
  assert.deepEqual(j.differences, []);
  const past = json(await mimir('state', 'verify', '--generation', String(s.changed), '--json'));
  assert.equal(past.equal, true);
  assert.equal(past.generation, Number(s.changed));
  code(await mimir('state', 'verify', '--generation', 'soon'), 2);
  assert.match((await mimir('state', 'verify', '--help')).stdout, /--generation G/);
  assert.match((await mimir('state', 'rebuild', '--help')).stdout, /--group-events N/);
});

test('mimir state verify names a table out of step with the log (exit 1); state rebuild refolds it; answers are the same from the tables and the log', async () => {
  // another engine appends a node row to code_nodes: the tables no longer equal the fold
  const log = await EventLog.open(lake);
  try {
    const nodes = await log.lake.loadTable(ident(CODE_NODES));
    const row = (await nodes.scan().toArray()).find((r) => r.qpath === 'alpha::main');
    assert.ok(row, 'the sample has alpha::main');
    await nodes.append([toBatch(CODE_NODES, [{ ...row, id: 'stray', qpath: 'alpha::stray', name: 'stray' }])]);
  } finally {
    log.close();
  }
  const bad = code(await mimir('state', 'verify'), 1);
  assert.match(bad.stdout, /^differs: code_nodes alpha alpha@0\.1\.0: the log folds to 1 row\(s\) \(digest [0-9a-f]{16}\), the table holds 2 \(digest [0-9a-f]{16}\)$/m);
  assert.match(bad.stderr, /1 difference\(s\) with the log .*run 'mimir state rebuild' to refold/);
  const jbad = parseJson(code(await mimir('state', 'verify', '--json'), 1).stdout) as Obj;
  assert.equal(jbad.equal, false);
  assert.deepEqual((jbad.differences as Obj[]).map((d) => d.table), [CODE_NODES]);

  const rb = code(await mimir('state', 'rebuild'), 0);
  assert.match(rb.stdout, /^state rebuild: folded generation \d+ \(3 crates in 1 group\(s\)\), committed generation \d+; rows: code_nodes 5, /);
  code(await mimir('state', 'verify'), 0);
  for (const q of [['find', 'check'], ['def', 'regex::Regex::new'], ['callers', 'regex::Regex::new'], ['refs', 'regex::Regex'], ['callees', 'alpha::main']]) {
    const fromState = code(await mimir(...q, '--json'), 0).stdout;
    const fromLog = code(await runCli([...q, '--json'], { lake, env: { MIMIR_ANSWER_FROM: 'log' } }), 0).stdout;
    assert.equal(fromState, fromLog, q.join(' '));
  }
});

test('a lake without state tables: questions fold the log with a note; state rebuild creates the tables; --as-of G reads them at G', async () => {
  const before = code(await mimir('callers', 'regex::Regex::new', '--as-of', String(s.changed), '--json'), 0).stdout;
  const log = await EventLog.open(lake);
  try {
    for (const t of STATE_TABLES) await log.lake.dropTable(ident(t));
  } finally {
    log.close();
  }
  const folded = code(await mimir('callers', 'regex::Regex::new', '--json'), 0);
  assert.match(folded.stderr, /has no serving state tables \(it predates them\).*mimir state rebuild/);
  const missing = code(await mimir('state', 'verify'), 1);
  assert.match(missing.stderr, /has no state tables at generation \d+; build them with 'mimir state rebuild'/);
  const j = json(await mimir('state', 'rebuild', '--json'));
  assert.equal(j.created, true);
  code(await mimir('state', 'verify'), 0);
  const after = code(await mimir('callers', 'regex::Regex::new', '--json'), 0);
  assert.doesNotMatch(after.stderr, /predates/);
  const answer = (r: CliResult): Obj => {
    const { generation: _, ...rest } = parseJson(r.stdout) as Obj;
    return rest;
  };
  assert.deepEqual(answer(after), answer(folded), 'the same answer from the rebuilt tables as from the fold');
  // as of a generation before the rebuild the tables did not exist: the question folds the log there, and answers as then
  assert.equal(code(await mimir('callers', 'regex::Regex::new', '--as-of', String(s.changed), '--json'), 0).stdout, before);
});

test('a lake made before code_paths: history answers from the log; state maintain builds it (once) and history answers the same from it', async () => {
  const before = code(await mimir('history', 'alpha::helper', '--json'), 0).stdout;
  const log = await EventLog.open(lake);
  try {
    await log.lake.dropTable(ident(CODE_PATHS));
  } finally {
    log.close();
  }
  const answer = (r: CliResult): string => {
    const { generation: _, ...rest } = parseJson(r.stdout) as Obj;
    return JSON.stringify(rest);
  };
  const folded = code(await mimir('history', 'alpha::helper', '--json'), 0);
  assert.equal(answer(folded), answer({ ...folded, stdout: before }), 'the same history from the log');
  const m = code(await mimir('state', 'maintain'), 0);
  assert.match(m.stdout, /^state maintain: built code_paths \(\d+ rows, folded from the log\)/);
  assert.doesNotMatch(code(await mimir('state', 'maintain'), 0).stdout, /built code_paths/, 'built once');
  const v = code(await mimir('state', 'verify'), 0);
  assert.match(v.stdout, /code_paths \d+/);
  assert.equal(answer(code(await mimir('history', 'alpha::helper', '--json'), 0)), answer(folded));
});
