// `mimir export scip` run as a real child process on a real lake: the
// sample workspace (with its vendored dependency in the universe) and a
// Debian crate from /usr/share/cargo/registry ingested as repos, exported,
// and the bytes decoded back with our own reader (scip-wire.ts): every field
// written reads back (re-encoding gives the same bytes), every occurrence's
// range covers its symbol's name in the source, and for 20 sampled items the
// definition occurrences are `mimir def`'s places and the reference
// occurrences are `mimir refs`'s (same files and lines). Stdout: the same
// index when piped, refused on a terminal. No time limits asserted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot, scratch } from '../helpers.ts';
import { parseJson, type Json } from '../../src/lake/spec/json.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { ROLE_DEFINITION, decodeIndex, encodeIndex, type Index } from '../../src/query/scip-wire.ts';
import { exportScip, scipSymbol } from '../../src/query/scip.ts';
import { EventLog } from '../../src/log/event-log.ts';

const work = scratch('mimir-cli-scip-');
after(work.cleanup);
const lake = path.join(work.dir, 'lake');
const ws = path.join(repoRoot, 'samples', 'workspace');
const REGISTRY = '/usr/share/cargo/registry';
const CRATE = 'memchr-2.5.0';
const crateDir = path.join(REGISTRY, CRATE);
const haveCrate = existsSync(path.join(crateDir, 'Cargo.toml'));

type Obj = { [k: string]: Json };
const mimir = (...args: string[]): Promise<CliResult> => runCli(args, { lake });
const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};
const json = (r: CliResult): Obj => parseJson(ok(r).stdout) as Obj;

/** The CLI with stdout collected as bytes (runCli decodes it as UTF-8). */
function runRaw(args: string[]): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), ...args], { cwd: repoRoot, env: { ...process.env, MIMIR_LAKE: lake }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
  });
}

/** Export `repo` to a file; the report line and the decoded index. */
async function exported(repo: string): Promise<{ bytes: Buffer; index: Index; report: string }> {
  const file = path.join(work.dir, `${repo.replace(/\W/g, '_')}.scip`);
  const r = ok(await mimir('export', 'scip', '--repo', repo, '--out', file));
  const bytes = readFileSync(file);
  return { bytes, index: decodeIndex(bytes), report: r.stderr };
}

before(async () => {
  ok(await mimir('ingest', ws, '--repo', 'ws', '--with-deps'));
  if (haveCrate) ok(await mimir('ingest', crateDir, '--repo', 'memchr'));
});

/**
 * Every occurrence's range, read in the file under `root`, is one whole
 * identifier; nearly all spell their symbol's display name (the others name
 * it otherwise: `Self`, an import renamed with `as`).
 */
function assertRangesCoverNames(index: Index, root: string): void {
  const names = new Map<string, string>();
  for (const s of [...index.externalSymbols, ...index.documents.flatMap((d) => d.symbols)]) names.set(s.symbol, s.displayName);
  let checked = 0;
  const otherwise: string[] = [];
  for (const d of index.documents) {
    const lines = readFileSync(path.join(root, d.relativePath), 'utf8').split('\n');
    for (const o of d.occurrences) {
      assert.equal(o.range.length, 3, `${d.relativePath}: a one-line range ${JSON.stringify(o.range)}`);
      const [line, start, end] = o.range as [number, number, number];
      const name = names.get(o.symbol);
      assert.ok(name !== undefined, `${o.symbol} has a SymbolInformation (document or external)`);
      const t = lines[line]!;
      const text = t.slice(start, end);
      const where = `${d.relativePath}:${line + 1} ${JSON.stringify(o.range)} ${JSON.stringify(t)} is ${o.symbol}`;
      assert.match(text, /^[A-Za-z_][A-Za-z0-9_]*$/, where);
      assert.ok(!/\w/.test(t[start - 1] ?? ' ') && !/\w/.test(t[end] ?? ' '), `a whole identifier: ${where}`);
      if (text !== name) otherwise.push(`${where} (text ${text})`);
      checked++;
    }
  }
  assert.ok(checked > 0);
  assert.ok(otherwise.length * 10 <= checked, `at most 1 in 10 ranges name the symbol otherwise: ${otherwise.length} of ${checked}:\n${otherwise.slice(0, 20).join('\n')}`);
}

test('export scip: the sample workspace as a SCIP index — metadata, a document per source file, every field reads back', async () => {
  const { bytes, index, report } = await exported('ws');
  assert.match(report, /^export scip repo ws at generation \d+: 3 documents, \d+ occurrences \(\d+ definitions, \d+ references\), \d+ symbols, 1 external symbols, \d+ edges skipped \(no target crate\), \d+ bytes to \S+ws\.scip\n$/);
  assert.equal(Buffer.compare(Buffer.from(encodeIndex(index)), bytes), 0, 're-encoding the decoded index gives the bytes written: every field read back');
  assert.equal(index.metadata.version, 0);
  assert.equal(index.metadata.toolInfo.name, 'mimir');
  assert.match(index.metadata.toolInfo.version, /^\d+\.\d+\.\d+/);
  assert.deepEqual(index.metadata.toolInfo.arguments.slice(0, 4), ['export', 'scip', '--repo', 'ws']);
  assert.equal(index.metadata.projectRoot, pathToFileURL(ws).href);
  assert.equal(index.metadata.textDocumentEncoding, 1, 'UTF8');
  assert.deepEqual(index.documents.map((d) => d.relativePath), ['crates/tally-cli/src/main.rs', 'crates/tally/src/bucket.rs', 'crates/tally/src/lib.rs']);
  for (const d of index.documents) {
    assert.equal(d.language, 'rust');
    assert.equal(d.positionEncoding, 2, 'UTF16 code units, as Mimir counts columns');
    // a definition has its SymbolInformation in its document
    const defined = new Set(d.symbols.map((s) => s.symbol));
    for (const o of d.occurrences) if (o.symbolRoles & ROLE_DEFINITION) assert.ok(defined.has(o.symbol), `${d.relativePath}: ${o.symbol} defined and described`);
  }
  const lib = index.documents.find((d) => d.relativePath === 'crates/tally/src/lib.rs')!;
  // the call `hash_str(word)` on line 20 (0-based 19), into the universe crate fnvish
  const hash = 'rust-analyzer cargo fnvish 0.2.1 hash_str().';
  assert.ok(lib.occurrences.some((o) => o.symbol === hash && o.symbolRoles === 0 && o.range[0] === 19), JSON.stringify(lib.occurrences));
  assert.deepEqual(index.externalSymbols, [{ symbol: hash, displayName: 'hash_str', kind: 17, documentation: ['```rust\npub fn hash_str(s: &str) -> u64\n```'] }]);
  const news = lib.symbols.find((s) => s.symbol === 'rust-analyzer cargo tally 0.1.0 Tally#new().');
  assert.deepEqual(news, { symbol: 'rust-analyzer cargo tally 0.1.0 Tally#new().', displayName: 'new', kind: 26, documentation: ['```rust\npub fn new(n: usize) -> Self\n```'] });
  assert.ok(lib.occurrences.some((o) => o.symbol === 'rust-analyzer cargo tally 0.1.0 bucket/Bucket#' && o.symbolRoles === 2), 'the `use bucket::Bucket` import');
  assertRangesCoverNames(index, ws);
});

test('export scip: a Debian crate exports, its ranges cover the names in the source', { skip: haveCrate ? false : `${crateDir} not installed` }, async () => {
  const { bytes, index, report } = await exported('memchr');
  assert.match(report, /^export scip repo memchr at generation \d+: \d+ documents/);
  assert.equal(Buffer.compare(Buffer.from(encodeIndex(index)), bytes), 0);
  assert.ok(index.documents.length >= 20, `${index.documents.length} documents`);
  assert.equal(index.metadata.projectRoot, pathToFileURL(crateDir).href);
  assertRangesCoverNames(index, crateDir);
});

test('export scip: stdout piped holds the same index; a terminal is refused naming --out; an unknown repo fails, nothing written', async () => {
  const piped = await runRaw(['export', 'scip', '--repo', 'ws']);
  assert.equal(piped.code, 0, piped.stderr);
  assert.match(piped.stderr, /^export scip repo ws at generation \d+: 3 documents/);
  const fromPipe = decodeIndex(piped.stdout);
  const fromFile = (await exported('ws')).index;
  assert.deepEqual(fromPipe.documents, fromFile.documents);
  assert.deepEqual(fromPipe.externalSymbols, fromFile.externalSymbols);
  if (existsSync('/usr/bin/script')) {
    // a pseudo-terminal as stdout (util-linux `script`)
    const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repoRoot, 'bin', 'mimir.js'))} export scip --repo ws`;
    const tty = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const c = spawn('/usr/bin/script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, MIMIR_LAKE: lake }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      c.on('error', reject);
      c.on('close', (code) => resolve({ code, out }));
    });
    assert.equal(tty.code, 2, tty.out);
    assert.match(tty.out, /stdout is a terminal: give --out FILE/);
  }
  const missing = path.join(work.dir, 'nope.scip');
  const bad = await mimir('export', 'scip', '--repo', 'nope', '--out', missing);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /expected repo "nope" to have live files .* nothing written/);
  assert.ok(!existsSync(missing), 'no file for a failed export');
  assert.equal((await mimir('export', 'scip')).code, 2, 'no --repo: usage');
});


/** Items of `repo` with a symbol, one per symbol, sorted by qpath. */
async function items(repo: string): Promise<{ qpath: string; symbol: string }[]> {
  const hits = json(await mimir('find', '*', '--repo', repo, '--json')).hits as Obj[];
  const out = new Map<string, string>();
  for (const h of hits) {
    if (h.kind === 'module' || h.kind === 'impl') continue;
    const symbol = scipSymbol(h.krate as string, h.qpath as string, h.kind as string, h.signature as string | null);
    if (symbol !== null && !out.has(symbol)) out.set(symbol, h.qpath as string);
  }
  return [...out].map(([symbol, qpath]) => ({ qpath, symbol })).sort((a, b) => (a.qpath < b.qpath ? -1 : a.qpath > b.qpath ? 1 : 0));
}

interface Place { path: string; line: number }

/** Each symbol's definition and reference places (1-based lines) in the index. */
function placesOf(index: Index): Map<string, { defs: Place[]; refs: Place[] }> {
  const out = new Map<string, { defs: Place[]; refs: Place[] }>();
  for (const d of index.documents) {
    for (const o of d.occurrences) {
      let e = out.get(o.symbol);
      if (!e) out.set(o.symbol, (e = { defs: [], refs: [] }));
      (o.symbolRoles & ROLE_DEFINITION ? e.defs : e.refs).push({ path: d.relativePath, line: o.range[0]! + 1 });
    }
  }
  return out;
}

const text = (p: Place): string => `${p.path}:${p.line}`;

/**
 * Pair Mimir's references with the index's: the same file and line, except a
 * `uses` edge (Mimir answers the `use` item's first line; the index has the
 * name, which a `use` over several lines writes further down: up to 50
 * lines below). Returns what is left unpaired on either side.
 */
function pair(mimirRefs: (Place & { kind: string })[], index: Place[]): { mimir: string[]; index: string[] } {
  const left = [...index];
  const unpaired: string[] = [];
  const take = (i: number): boolean => (i >= 0 ? (left.splice(i, 1), true) : false);
  const exact = mimirRefs.filter((m) => !take(left.findIndex((p) => p.path === m.path && p.line === m.line)));
  for (const m of exact) {
    if (m.kind === 'uses' && take(left.findIndex((p) => p.path === m.path && p.line > m.line && p.line <= m.line + 50))) continue;
    unpaired.push(`${text(m)} ${m.kind}`);
  }
  return { mimir: unpaired, index: left.map(text) };
}

test('export scip: for 20 sampled items, definitions equal `mimir def` and references equal `mimir refs` (files and lines)', async () => {
  const repos = haveCrate ? ['ws', 'memchr'] : ['ws'];
  const samples: { repo: string; qpath: string; symbol: string; places: Map<string, { defs: Place[]; refs: Place[] }> }[] = [];
  for (const repo of repos) {
    const places = placesOf((await exported(repo)).index);
    const all = await items(repo);
    // deterministic: every item of the small workspace, then evenly spaced items of the crate up to 20 in all
    const want = repo === 'ws' ? all.length : 20 - samples.length;
    const step = all.length / Math.max(1, want);
    for (let i = 0; i < Math.min(want, all.length); i++) samples.push({ repo, ...all[Math.floor(i * step)]!, places });
  }
  if (haveCrate) assert.equal(samples.length, 20);
  let refsSeen = 0;
  for (const s of samples) {
    const def = json(await mimir('def', s.qpath, '--json'));
    const defs = (def.hits as Obj[]).filter((h) => h.repo === s.repo && h.qpath === s.qpath).map((h) => `${h.path as string}:${h.line as number}`).sort();
    const refs = (json(await mimir('refs', s.qpath, '--repo', s.repo, '--json')).refs as Obj[])
      .filter((h) => h.edgeKind !== 'contains' && h.line !== null && h.path !== null)
      .map((h) => ({ path: h.path as string, line: h.line as number, kind: h.edgeKind as string }));
    const got = s.places.get(s.symbol) ?? { defs: [], refs: [] };
    assert.deepEqual(got.defs.map(text).sort(), defs, `${s.repo} ${s.qpath} (${s.symbol}): definitions`);
    assert.deepEqual(pair(refs, got.refs), { mimir: [], index: [] }, `${s.repo} ${s.qpath} (${s.symbol}): references`);
    refsSeen += refs.length;
  }
  assert.ok(refsSeen >= 10, `the sample holds references (${refsSeen})`);
});

test('export scip --as-of: a generation before an edit exports the lines as they were then', async () => {
  const copy = path.join(work.dir, 'ws-copy');
  cpSync(ws, copy, { recursive: true });
  const lib = path.join(copy, 'crates', 'tally', 'src', 'lib.rs');
  const repoGen = async (): Promise<number> => {
    const repos = json(await mimir('repo', 'list', '--json')).repos as Obj[];
    return (repos.find((r) => r.repo === 'edited')!.lastRun as Obj).generation as number;
  };
  ok(await mimir('ingest', copy, '--repo', 'edited'));
  const before = await repoGen();
  writeFileSync(lib, `// one line added above everything\n${readFileSync(lib, 'utf8')}`);
  ok(await mimir('ingest', copy, '--repo', 'edited'));
  assert.ok((await repoGen()) > before);
  const newLine = async (asOf: string[]): Promise<number> => {
    const file = path.join(work.dir, `edited-${asOf.length}.scip`);
    ok(await mimir('export', 'scip', '--repo', 'edited', '--out', file, ...asOf));
    const doc = decodeIndex(readFileSync(file)).documents.find((d) => d.relativePath === 'crates/tally/src/lib.rs')!;
    const def = doc.occurrences.find((o) => o.symbol === 'rust-analyzer cargo tally 0.1.0 Tally#new().' && o.symbolRoles === ROLE_DEFINITION)!;
    return def.range[0]!;
  };
  assert.equal(await newLine(['--as-of', String(before)]), 13, 'as of the first ingest: `pub fn new` on line 14');
  assert.equal(await newLine([]), 14, 'now: one line further down');
});

test('export scip from the event log (no state tables read) writes the same bytes as from the state tables', async () => {
  const log = await EventLog.open(lake);
  try {
    for (const repo of haveCrate ? ['ws', 'memchr'] : ['ws']) {
      const run = async (from: 'state' | 'log'): Promise<Buffer> => {
        const parts: Uint8Array[] = [];
        await exportScip(log, { repo, from, tool: { name: 'mimir', version: 'test', arguments: [] } }, async (b) => {
          parts.push(b);
        });
        return Buffer.concat(parts);
      };
      const [state, folded] = [await run('state'), await run('log')];
      assert.ok(state.length > 1000, `${repo}: ${state.length} bytes`);
      assert.equal(Buffer.compare(state, folded), 0, `${repo}: the same index either way`);
    }
  } finally {
    log.close();
  }
});
