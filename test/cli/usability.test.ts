// The CLI's manners, run as real child processes: a mistyped command or
// option names the close one (exit 2); `repo list` and `universe list` say
// what a real ingested lake holds, now and as of a generation; ingest's
// progress off a terminal (lines, the time left); `--depth`/`--format`
// pictures of callers; answers are coloured and long ones paged only on a
// terminal (a real pseudo-terminal made by util-linux `script`; those tests
// skip without it), never through a pipe; `completion bash` loads in bash and
// completes.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { sampleLake } from '../query/sample.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-usability-');
after(work.cleanup);
type Obj = { [k: string]: Json };
/** The lake of the real ingest and its generation before the repo was removed (pictures are drawn as of it). */
let ingested: { lake: string; generation: string } | undefined;
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};

test('did you mean: a mistyped command names the close one, exit 2', async () => {
  const r = await runCli(['calers']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^mimir: unknown command "calers" for mimir — did you mean callers\?\n/);
  const g = await runCli(['universe', 'ad']);
  assert.equal(g.code, 2);
  assert.match(g.stderr, /unknown command "ad" for mimir universe — did you mean add\?/);
  const far = await runCli(['zzzzzz']);
  assert.equal(far.code, 2);
  assert.match(far.stderr, /unknown command "zzzzzz" for mimir \(commands: table, init, /, 'nothing close: the list of commands');
});

test('did you mean: a mistyped option names the close one, exit 2', async () => {
  const r = await runCli(['callers', 'x', '--limt', '5']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^mimir callers: unknown option --limt — did you mean --limit\?\nRun 'mimir callers --help' for usage\.\n$/);
  const eq = await runCli(['find', 'x', '--kidn=fn']);
  assert.equal(eq.code, 2);
  assert.match(eq.stderr, /unknown option --kidn — did you mean --kind\?/);
  const before = await runCli(['--jsn', 'find', 'x']);
  assert.equal(before.code, 2);
  assert.match(before.stderr, /unknown option --jsn \(before the command\) — did you mean --json\?/);
  const far = await runCli(['find', 'x', '--qqqqqqq']);
  assert.equal(far.code, 2);
  assert.match(far.stderr, /unknown option --qqqqqqq\n/, 'nothing close: no suggestion');
});

test('repo list and universe list: the repos and universe crates of a real ingest, --json, --as-of before a repo remove; progress lines with the time left off a terminal', async () => {
  const lake = path.join(work.dir, 'lists');
  const mimir = (...args: string[]): Promise<CliResult> => runCli(args, { lake });
  // MIMIR_PROGRESS_EVERY_MS=0 (test hook): every progress line, not one every 5 s
  const ing = ok(await runCli(['ingest', path.join(repoRoot, 'samples', 'workspace'), '--repo', 'sample', '--with-deps'], { lake, env: { MIMIR_PROGRESS_EVERY_MS: '0' } }));
  assert.match(ing.stderr, /^… extract tally@0\.1\.0 0\/2$/m);
  assert.match(ing.stderr, /^… write tally(-cli)?@0\.1\.0 1\/2, ~\d+s left$/m, 'the time left once a crate is done');
  assert.match(ing.stdout, /^ingest sample run /m);
  const r = ok(await mimir('repo', 'list'));
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines[0], 'REPO    CRATES  ITEMS  LAST RUN');
  assert.match(lines[1]!, /^sample +2 +14 +\d{8}T\d{6}Z-[0-9a-f]+ g\d+ \d{4}-\d\d-\d\dT[\d:.]+Z$/);
  assert.equal(lines.length, 2, 'the universe is not a repo');
  assert.match(r.stderr, /^1 repo at generation \d+\n$/);
  const j = parseJson(ok(await mimir('repo', 'list', '--json')).stdout) as Obj;
  const repo = (j.repos as Obj[])[0]!;
  const last = repo.lastRun as Obj;
  assert.deepEqual([repo.repo, repo.crates, repo.items, last.what, last.status], ['sample', 2, 14, 'ingest', 'ok']);
  assert.equal(last.generation, j.generation, 'the last run landed the current generation');
  const u = ok(await mimir('universe', 'list'));
  assert.deepEqual(u.stdout.split('\n').filter((l) => l !== ''), ['CRATE         ITEMS  USED BY', 'fnvish@0.2.1  5      sample (3)']);
  const uj = parseJson(ok(await mimir('universe', 'list', '--json')).stdout) as Obj;
  assert.deepEqual(uj.crates, [{ krate: 'fnvish@0.2.1', items: 5, pointedFrom: { sample: 3 } }]);

  const before = String(j.generation);
  ingested = { lake, generation: before };
  const rm = ok(await runCli(['repo', 'remove', 'sample'], { lake, env: { MIMIR_PROGRESS_EVERY_MS: '0' } }));
  assert.match(rm.stderr, /^… repo remove sample… \d+s$/m, 'elapsed time where there is no total');
  assert.equal(ok(await mimir('repo', 'list')).stdout, '', 'a removed repo is not listed');
  assert.deepEqual((parseJson(ok(await mimir('universe', 'list', '--json')).stdout) as Obj).crates, [{ krate: 'fnvish@0.2.1', items: 5, pointedFrom: {} }]);
  const then = parseJson(ok(await mimir('repo', 'list', '--as-of', before, '--json')).stdout) as Obj;
  assert.deepEqual((then.repos as Obj[]).map((x) => [x.repo, x.items]), [['sample', 14]]);
});

test('etaText: the time left at the pace so far; nothing before the first step or without a total', async () => {
  const { etaText, formatSeconds } = await import('../../src/cli/output.ts');
  assert.equal(etaText(0, 10, 5000), '');
  assert.equal(etaText(3, 0, 5000), '');
  assert.equal(etaText(10, 10, 5000), '');
  assert.equal(etaText(2, 10, 10_000), ', ~40s left');
  assert.equal(etaText(1, 40, 5000), ', ~3m15s left');
  assert.equal(formatSeconds(3_725_000), '1h02m');
});

// --- pictures -------------------------------------------------------------------

test('callers --depth 3 --format dot|mermaid: callers of callers of a real ingest, one node per item, caller -> callee; --depth alone a tree', async () => {
  assert.ok(ingested, 'runs after the repo list test, on its lake');
  const at = ['--as-of', ingested.generation];
  const mimir = (...args: string[]): Promise<CliResult> => runCli([...args, ...at], { lake: ingested!.lake });
  const dot = ok(await mimir('callers', 'fnvish::hash_str', '--depth', '3', '--format', 'dot'));
  assert.equal(dot.stdout, [
    'digraph callers {',
    '  node [shape=box, fontname="monospace"];',
    '  n0 [label="fnvish::hash_str", style=bold];',
    '  n1 [label="tally::Tally::add"];',
    '  n2 [label="tally::Tally::count"];',
    '  n3 [label="tally::tally_text"];',
    '  n4 [label="tally_cli::main"];',
    '  n1 -> n0;',
    '  n2 -> n0;',
    '  n3 -> n1;',
    '  n4 -> n2;',
    '  n4 -> n3;',
    '}',
    '',
  ].join('\n'));
  assert.match(dot.stderr, /^5 items, 5 edges within 3 levels of callers of fnvish::hash_str at generation \d+\n$/);
  const one = ok(await mimir('callers', 'fnvish::hash_str', '--format', 'mermaid'));
  assert.equal(one.stdout, 'graph TD\n  n0["fnvish::hash_str"]\n  n1["tally::Tally::add"]\n  n2["tally::Tally::count"]\n  n1 --> n0\n  n2 --> n0\n', 'depth 1 by default');
  const tree = ok(await mimir('callers', 'fnvish::hash_str', '--depth', '3'));
  assert.equal(tree.stdout, 'fnvish::hash_str\n  tally::Tally::add\n    tally::tally_text\n      tally_cli::main\n  tally::Tally::count\n    tally_cli::main\n');
  const j = parseJson(ok(await mimir('callees', 'tally::Tally::add', '--depth', '2', '--json')).stdout) as Obj;
  const labels = new Map((j.nodes as Obj[]).map((n) => [n.id as string, n.label as string]));
  const edges = (j.edges as Obj[]).map((e) => `${labels.get(e.from as string)} -> ${labels.get(e.to as string)}`);
  assert.ok(edges.includes('tally::Tally::add -> fnvish::hash_str') && edges.includes('fnvish::hash_str -> fnvish::hash_bytes'), edges.join('; '));
  const bad = await mimir('callers', 'fnvish::hash_str', '--format', 'svg');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--format: expected dot or mermaid, found "svg"/);
});

test('toDot and toMermaid escape labels (quotes, backslashes, angle brackets, #)', async () => {
  const { toDot, toMermaid } = await import('../../src/cli/query/picture.ts');
  const g = {
    question: 'graph' as const, version: 1 as const, direction: 'refs' as const, generation: 1n, depth: 1, truncated: false,
    nodes: [{ id: 'a', label: '<Vec<T> as Trait>::f "q" \\ #1', repo: null, krate: null, level: 0 }, { id: 'b', label: 'm::g', repo: null, krate: null, level: 1 }],
    edges: [{ from: 'b', to: 'a', kind: 'uses' }],
  };
  assert.equal(toDot(g), 'digraph refs {\n  node [shape=box, fontname="monospace"];\n  n0 [label="<Vec<T> as Trait>::f \\"q\\" \\\\ #1", style=bold];\n  n1 [label="m::g"];\n  n1 -> n0 [label="uses"];\n}');
  assert.equal(toMermaid(g), 'graph TD\n  n0["#lt;Vec#lt;T#gt; as Trait#gt;::f #quot;q#quot; \\ #35;1"]\n  n1["m::g"]\n  n1 -->|"uses"| n0');
});

// --- colour and pager -------------------------------------------------------

const sample = path.join(work.dir, 'sample');
before(async () => {
  const { log } = await sampleLake(sample);
  log.close();
});
const ESC = '\x1b[';
const PAGER = "sed 's/^/PAGED: /'";
const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** `mimir args` with stdout and stderr on a real pseudo-terminal of `rows` rows (util-linux script); its output, \r\n as \n. */
function onTerminal(args: string[], env: Record<string, string>, rows = 40): Promise<string> {
  const cmd = `stty rows ${rows} cols 200; exec ${sh(process.execPath)} ${sh(path.join(repoRoot, 'bin', 'mimir.js'))} ${args.map(sh).join(' ')}`;
  return new Promise((resolve, reject) => {
    const e: NodeJS.ProcessEnv = { ...process.env, MIMIR_LAKE: sample, ...env };
    delete e.MIMIR_DEBUG;
    for (const k of ['NO_COLOR', 'MIMIR_PAGER', 'PAGER']) if (!(k in env)) delete e[k];
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: repoRoot, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.replace(/\r\n/g, '\n')) : reject(new Error(`script exited ${code}: ${out}`))));
  });
}

test('not a terminal: no pager and no escape codes, whatever $MIMIR_PAGER says; --color always colours places and kinds', async () => {
  const r = ok(await runCli(['refs', 'regex::Regex::new'], { lake: sample, env: { MIMIR_PAGER: PAGER } }));
  assert.equal(r.stdout.split('\n').filter((l) => l !== '').length, 4);
  assert.ok(!r.stdout.includes('PAGED') && !r.stderr.includes('PAGED'), 'no pager through a pipe');
  assert.ok(!r.stdout.includes(ESC) && !r.stderr.includes(ESC), 'no escape codes through a pipe');
  const c = ok(await runCli(['def', 'regex::Regex::new', '--color', 'always'], { lake: sample }));
  assert.equal(c.stdout, `@universe regex@1.10.0 regex::regex::string::Regex::new  ${ESC}36msrc/regex/string.rs:180${ESC}39m  ${ESC}33mmethod${ESC}39m\n`);
  assert.ok(!c.stderr.includes(ESC), 'the summary is not coloured');
  const j = ok(await runCli(['def', 'regex::Regex::new', '--color', 'always', '--json'], { lake: sample }));
  assert.ok(!j.stdout.includes(ESC), 'never in JSON');
  const bad = await runCli(['def', 'x', '--color', 'sometimes'], { lake: sample });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--color: expected auto, always or never, found "sometimes"/);
});

test('on a terminal: colour by default, none with NO_COLOR=1 (--color auto) or --color never', { skip: hasScript ? false : 'no util-linux script (pseudo-terminal)' }, async () => {
  const plain = { MIMIR_PAGER: 'cat' };
  assert.ok((await onTerminal(['def', 'regex::Regex::new'], plain)).includes(`${ESC}36msrc/regex/string.rs:180${ESC}39m`));
  const nc = await onTerminal(['def', 'regex::Regex::new', '--color', 'auto'], { ...plain, NO_COLOR: '1' });
  assert.match(nc, /regex::regex::string::Regex::new {2}src\/regex\/string\.rs:180 {2}method\n/);
  assert.ok(!nc.includes(ESC), `no escape codes with NO_COLOR: ${JSON.stringify(nc)}`);
  assert.ok(!(await onTerminal(['def', 'regex::Regex::new', '--color', 'never'], plain)).includes(ESC));
  assert.ok((await onTerminal(['def', 'regex::Regex::new', '--color', 'always'], { ...plain, NO_COLOR: '1' })).includes(ESC), '--color always wins over NO_COLOR');
});

test('on a terminal: an answer longer than the screen goes through $MIMIR_PAGER, summary last; a short one, --no-pager, --json and MIMIR_PAGER=cat do not', { skip: hasScript ? false : 'no util-linux script (pseudo-terminal)' }, async () => {
  const env = { MIMIR_PAGER: PAGER, NO_COLOR: '1' };
  const paged = (await onTerminal(['refs', 'regex::Regex::new'], env, 4)).split('\n').filter((l) => l.startsWith('PAGED: '));
  assert.equal(paged.length, 5, `4 refs and the summary paged: ${JSON.stringify(paged)}`);
  assert.match(paged[4]!, /^PAGED: 4 references to regex::regex::string::Regex::new/);
  assert.ok(!(await onTerminal(['refs', 'regex::Regex::new'], env, 40)).includes('PAGED'), 'shorter than the screen');
  assert.ok(!(await onTerminal(['refs', 'regex::Regex::new', '--no-pager'], env, 4)).includes('PAGED'));
  assert.ok(!(await onTerminal(['refs', 'regex::Regex::new', '--json'], env, 4)).includes('PAGED'));
  const viaPager = await onTerminal(['refs', 'regex::Regex::new'], { PAGER, MIMIR_PAGER: 'cat', NO_COLOR: '1' }, 4);
  assert.ok(!viaPager.includes('PAGED') && viaPager.includes('alpha::main'), 'MIMIR_PAGER=cat: none, $PAGER not used');
  assert.ok((await onTerminal(['refs', 'regex::Regex::new'], { PAGER, NO_COLOR: '1' }, 4)).includes('PAGED: '), '$PAGER without $MIMIR_PAGER');
  const missing = await onTerminal(['refs', 'regex::Regex::new'], { MIMIR_PAGER: 'no-such-pager-here', NO_COLOR: '1' }, 4);
  assert.match(missing, /mimir: the pager "no-such-pager-here" could not be run \(exit 127\); the answer was not shown — set MIMIR_PAGER=cat or pass --no-pager/);
});

// --- completion ---------------------------------------------------------------

test('completion bash: the script loads in bash without errors and completes commands, group commands, options and --color values', async () => {
  const mimirCmd = `${sh(process.execPath)} ${sh(path.join(repoRoot, 'bin', 'mimir.js'))}`;
  const cases: [string, string][] = [
    ['mimir cal', 'callers callees'],
    ['mimir repo l', 'list'],
    ['mimir universe ', 'list add remove'],
    ['mimir --lake /tmp/x ta', 'table'],
    ['mimir callers --li', '--limit'],
    ['mimir callers regex::Regex::new --no-p', '--no-pager'],
    ['mimir table scan --col', '--columns --color'],
    ['mimir find x --color a', 'auto always'],
  ];
  const sim = cases
    .map(([line]) => `COMP_WORDS=(${line.split(' ').map(sh).join(' ')}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _mimir; echo "\${COMPREPLY[*]}"`)
    .join('\n');
  const script = `set -e\nsource <(${mimirCmd} completion bash)\ncomplete -p mimir\n${sim}\n`;
  const r = spawnSync('bash', ['-c', script], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, MIMIR_DEBUG: '' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr.replace(/^mimir: running the TypeScript sources.*\n/m, ''), '', 'no errors while loading or completing');
  const out = r.stdout.split('\n');
  assert.equal(out[0], 'complete -o default -F _mimir mimir');
  assert.deepEqual(out.slice(1, 1 + cases.length), cases.map(([, want]) => want));
  for (const shell of ['zsh', 'fish']) {
    const s = ok(await runCli(['completion', shell]));
    assert.match(s.stdout, shell === 'zsh' ? /bashcompinit[\s\S]*complete -o default -F _mimir mimir\n$/ : /complete -c mimir -n '__fish_use_subcommand' -a 'callers'/);
  }
  const bad = await runCli(['completion', 'tcsh']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /expected a shell: bash, zsh or fish, found "tcsh"/);
});
