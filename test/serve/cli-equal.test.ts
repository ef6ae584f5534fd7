// The CLI through a running server prints exactly what it prints reading the
// lake itself — stdout, stderr and exit code, lines and --json — for every
// question (find, def, refs, callers, callees, history, diff, with --as-of by
// generation and by time, the filters --repo/--krate/--limit/--exclude-tests,
// --abs and --unresolved, and failing ones: unknown names and kinds), on the same lake at the same
// generation (the CLI's main runs in this process for those, to spare ~70
// process starts). `--server URL` and `MIMIR_SERVER` send the questions of a
// real `mimir` process to the server (proved by a MIMIR_LAKE that does not
// exist, and by the server's request count); `--lake` given explicitly reads
// the lake even when MIMIR_SERVER is set; an unreachable server is a failure
// (exit 1) naming it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { sampleLake, type Sample } from '../query/sample.ts';
import { runCli, type CliResult } from '../cli/run-cli.ts';
import { request } from './http.ts';
import { cli } from './cli-in-process.ts';

const work = scratch('mimir-serve-cli-');
const lake = path.join(work.dir, 'lake');
const nowhere = path.join(work.dir, 'no-lake-here');
let s: Omit<Sample, 'log'>;
let server: RunningServer;

before(async () => {
  const { log, ...gens } = await sampleLake(lake);
  log.close();
  s = gens;
  server = await startServer({ lake: lake, port: 0 });
});
after(async () => {
  await server?.close();
  work.cleanup();
});

const local = (args: string[]): Promise<CliResult> => cli(args, { MIMIR_LAKE: lake, MIMIR_SERVER: undefined });
const remote = (args: string[]): Promise<CliResult> => cli(args, { MIMIR_LAKE: nowhere, MIMIR_SERVER: server.url });

test('serve: the CLI through the server prints what it prints reading the lake, for every question', async () => {
  const gens = parseJson((await local(['log', 'generations', '--json', '--limit', '0'])).stdout) as { [k: string]: Json }[];
  const timeOfAdded = gens.find((g) => BigInt(g.generation as number) === s.added)!.time as string;
  const questions: string[][] = [
    ['find', 'ch*'],
    ['find', 'Regex', '--exact', '--repo', '@universe'],
    ['find', '*', '--krate', 'beta@0.2.0', '--kind', 'fn'],
    ['find', 'helper', '--as-of', String(s.added)],
    ['def', 'regex::Regex::new'],
    ['def', 'alpha::helper', '--as-of', String(s.changed)],
    ['def', 'alpha::helper', '--as-of', timeOfAdded],
    ['refs', 'regex::Regex::new'],
    ['refs', 'regex::Regex::new', '--kind', 'uses'],
    ['callers', 'regex::Regex::new'],
    ['callers', 'regex::Regex::new', '--as-of', String(s.base)],
    ['callees', 'alpha::helper', '--as-of', String(s.added)],
    ['callees', 'alpha::main'],
    ['history', 'alpha::helper'],
    ['history', 'alpha::helper', '--as-of', String(s.changed)],
    ['diff', '--from', String(s.added), '--to', String(s.changed)],
    ['diff', '--from', String(s.base), '--to', String(s.removed), '--repo', 'alpha'],
    ['def', 'x', '--as-of', '999999'],
    // the filters, --abs, --unresolved, and unknown names (exit 1, the same did-you-mean both ways)
    ['callers', 'regex::Regex::new', '--repo', 'beta', '--limit', '1'],
    ['refs', 'regex::Regex::new', '--exclude-tests', '--krate', 'regex'],
    ['def', 'regex::Regex::new', '--repo', '@universe', '--exclude-tests', '--abs'],
    ['callees', 'alpha::main', '--krate', 'alpha', '--limit', '1'],
    ['history', 'alpha::helper', '--limit', '2', '--krate', 'alpha@0.1.0'],
    ['find', 'ch', '--exclude-tests', '--limit', '1'],
    ['callers', 'alpha::main', '--unresolved'],
    ['callers', 'regex::Regex::new', '--context', '2'],
    ['find', 'chekc'],
    ['def', 'beta::util::chekc'],
    ['find', 'check', '--repo', 'bta'],
    ['callers', 'regex::Regex::new', '--krate', 'nosuch'],
    ['find', 'check', '--kind', 'strcut'],
  ];
  const before = server.stats().requests;
  const runs = questions.flatMap((q) => [q, [...q, '--json']]);
  for (const q of runs) {
    const a = await local(q);
    const b = await remote(q);
    const what = `mimir ${q.join(' ')}`;
    assert.equal(b.code, a.code, `${what}: exit ${b.code} through the server, ${a.code} locally (${b.stderr})`);
    assert.equal(b.stdout, a.stdout, `${what}: stdout`);
    assert.equal(b.stderr, a.stderr, `${what}: stderr`);
  }
  assert.equal(server.stats().requests - before, runs.length, 'every question went to the server');
  assert.equal((await local(['def', 'x', '--as-of', '999999'])).code, 1);
  for (const q of [['find', 'chekc'], ['def', 'beta::util::chekc'], ['find', 'check', '--repo', 'bta']]) {
    const r = await remote(q);
    assert.equal(r.code, 1, `mimir ${q.join(' ')} through the server: exit 1`);
    assert.match(r.stderr, /did you mean/);
  }
  const ok = await remote(['callers', 'regex::Regex::new']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout.split('\n').filter((l) => l !== '').length, 2);
});

test('serve: the JSON the server sends is what `--json` prints locally', async () => {
  for (const [target, args] of [
    [`/api/callers?path=regex::Regex::new`, ['callers', 'regex::Regex::new']],
    [`/api/history?path=alpha::helper&asOf=${s.changed}`, ['history', 'alpha::helper', '--as-of', String(s.changed)]],
    [`/api/diff?from=${s.added}&to=${s.removed}`, ['diff', '--from', String(s.added), '--to', String(s.removed)]],
  ] as const) {
    const r = await request(server.url, target);
    assert.equal(r.status, 200, r.text);
    const l = await local([...args, '--json']);
    assert.deepEqual(parseJson(r.text), parseJson(l.stdout), target);
  }
});

test('serve: --server and MIMIR_SERVER send questions to the server; an explicit --lake reads the lake; unreachable is exit 1', async () => {
  const count = (): number => server.stats().requests;
  let n = count();
  const viaFlag = await runCli(['def', 'regex::Regex::new', '--server', server.url], { env: { MIMIR_LAKE: nowhere, MIMIR_SERVER: '' } });
  assert.equal(viaFlag.code, 0, viaFlag.stderr);
  assert.equal(count(), n + 1);
  n = count();
  const leading = await runCli(['--server', server.url.replace(/^http:\/\//, ''), 'find', 'check'], { env: { MIMIR_LAKE: nowhere, MIMIR_SERVER: '' } });
  assert.equal(leading.code, 0, leading.stderr);
  assert.equal(count(), n + 1, 'a leading --server HOST:PORT works too');
  n = count();
  const env = await runCli(['find', 'check'], { env: { MIMIR_LAKE: nowhere, MIMIR_SERVER: server.url } });
  assert.equal(env.code, 0, env.stderr);
  assert.equal(count(), n + 1);
  n = count();
  const explicit = await runCli(['find', 'check', '--lake', lake], { env: { MIMIR_SERVER: server.url } });
  assert.equal(explicit.code, 0, explicit.stderr);
  assert.equal(count(), n, '--lake reads the lake directly');
  const both = await runCli(['find', 'check', '--lake', lake, '--server', server.url]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /give --lake .* or --server .*, not both/);
  const notAQuestion = await runCli(['--server', server.url, 'log', 'generations'], { env: { MIMIR_LAKE: lake } });
  assert.equal(notAQuestion.code, 2);
  assert.match(notAQuestion.stderr, /--server applies to the questions/);
  const down = await runCli(['def', 'x'], { env: { MIMIR_LAKE: lake, MIMIR_SERVER: 'http://127.0.0.1:1' } });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /^mimir def: cannot reach a mimir server at http:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\): nothing was asked/);
});
