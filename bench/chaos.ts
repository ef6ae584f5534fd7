// `npm run chaos`: a chaos campaign over one lake, not a test. A seeded random
// sequence of real `mimir` CLI operations (ingest fresh and incremental of
// edited copies of two workspaces, ingest --git of a scripted repository,
// universe add/remove, repo remove, compact, gc, ring split/unsplit, state
// rebuild/maintain, a copied lake relocated), each SIGKILLed with probability
// p — at a random delay after its start, or at a crash point of its own
// (MIMIR_CRASH_AT=<point>#n, the points an operation kind reaches enumerated
// once with MIMIR_CRASH_TRACE and cached) — and run again after a kill (its
// caller cannot know the outcome) — that rerun killed again with probability p,
// up to --rekills times — and the last rerun must converge with exit 0. Readers
// run meanwhile: a `mimir serve` process and CLI questions (--json), each
// answer naming its generation.
//
// Invariants after every step (a violation stops the run, keeps the lake and
// exits 1 naming seed, step, operation and what differed):
//   - the lake opens; `mimir state verify` passes; `mimir lake check` is clean;
//   - every reader's answer equals an in-process read pinned at the
//     generation it names, made after the step;
//   - every --check-every K steps and at the end: the log's order-independent
//     digest (event rows of every kind as the log reads them, minus run ids
//     and timestamps, per kind/repo/krate) equals that of a reference lake
//     built serially, without kills, by replaying exactly the operations the
//     lake's own generation log says committed a run (each with its input
//     snapshot restored at the same path);
//   - after gc: nothing referenced was deleted (lake check) and nothing that
//     no metadata reaches is left (test/log/reach.ts).
// Readers pause during gc (gc --retain 0 expires the generations they would
// name) and maintenance operations are not replayed on the reference: they
// move rows only, and the digest reads the log, not its files.
//
// Flags: --seed S (default: random; printed), --kills N (stop after N kills,
// default 50), --steps N (stop after N steps, default unbounded), --p P (kill
// probability, 0.5), --check-every K (reference digest every K steps, 10),
// --rekills R (a rerun after a kill is itself killed with probability p, up to
// R times in a row: a crash in the middle of recovering a crash; default 2),
// --storage local (PostgreSQL + S3 is not there yet), --keep (keep the scratch
// folder even when clean), --quiet (no line per step).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomInt } from 'node:crypto';
import * as http from 'node:http';
import { EventLog } from '../src/log/event-log.ts';
import { COL_KRATE, COL_REPO, COL_RUN, COL_TS, SOURCE_KINDS, parseRunNote } from '../src/log/schema.ts';
import { fieldOrder, hash64, rowEncoding } from '../src/log/digest.ts';
import { parseJson, stringifyJson, type Json } from '../src/lake/spec/json.ts';
import { ask, parseQuestion, type QuestionName } from '../src/serve/questions.ts';
import { syntheticCrate } from '../test/ingest/helpers.ts';
import { buildGitHistory, STEPS } from '../test/ingest/git-history.ts';
import { unreferenced } from '../test/log/reach.ts';
import { LEASE_SLACK_MS } from '../src/lake/maintenance/orphans.ts';

// ---- options -------------------------------------------------------------------

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const storage = opt('--storage') ?? 'local';
if (storage !== 'local') {
  console.error(`chaos: --storage ${storage}: only "local" (a lake folder, SQLite catalog) is there; PostgreSQL + S3 is not there yet — nothing run`);
  process.exit(2);
}
const SEED = Number(opt('--seed') ?? randomInt(1, 2 ** 31));
const KILLS = Number(opt('--kills') ?? 50);
const MAX_STEPS = Number(opt('--steps') ?? Infinity);
const P = Number(opt('--p') ?? 0.5);
const CHECK_EVERY = Math.max(1, Number(opt('--check-every') ?? 10));
const REKILLS = Number(opt('--rekills') ?? 2);
const REPLAY = `npm run chaos -- --seed ${SEED} --p ${P} --rekills ${REKILLS} --check-every ${CHECK_EVERY}`;
const KEEP = argv.includes('--keep');
const QUIET = argv.includes('--quiet');
for (const [k, v] of [['--seed', SEED], ['--kills', KILLS], ['--p', P], ['--check-every', CHECK_EVERY], ['--rekills', REKILLS]] as const) {
  if (!Number.isFinite(v) || v < 0) {
    console.error(`chaos: ${k} expects a non-negative number; found ${opt(k)} — nothing run`);
    process.exit(2);
  }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(root, 'bin', 'mimir.js');

// ---- seeded randomness (mulberry32): the same seed, the same sequence ------------

let rngState = SEED >>> 0;
function rand(): number {
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

// ---- the scratch folder ----------------------------------------------------------

const dir = mkdtempSync(path.join(tmpdir(), 'mimir-chaos-'));
const LAKE = path.join(dir, 'lake');
const REF = path.join(dir, 'ref-lake');
const WORK = path.join(dir, 'work');
const SNAP = path.join(dir, 'snap');
const CRATES = path.join(dir, 'crates');
const TRACE = path.join(dir, 'trace');
for (const d of [WORK, SNAP, CRATES, TRACE]) mkdirSync(d, { recursive: true });

// ---- child processes ---------------------------------------------------------------

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** When the run reached its first crash point (its trace file's first line), ms after its start. */
  firstPointMs?: number;
}

function mimir(args: string[], opts: { env?: Record<string, string>; killAfterMs?: number; trace?: string; killFromFirstPoint?: boolean } = {}): Promise<Exit> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  delete env.MIMIR_DEBUG;
  delete env.MIMIR_SERVER;
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let timer: NodeJS.Timeout | undefined;
    let poll: NodeJS.Timeout | undefined;
    let firstPointMs: number | undefined;
    const arm = (): void => {
      if (opts.killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    };
    if (opts.trace) {
      // with killFromFirstPoint the delay counts from the first crash point the run reaches (its
      // trace file's first line): before it, node is starting and the command reads, with nothing to crash
      const trace = opts.trace;
      poll = setInterval(() => {
        if (existsSync(trace) && statSync(trace).size > 0) {
          clearInterval(poll);
          poll = undefined;
          firstPointMs = Date.now() - t0;
          if (opts.killFromFirstPoint) arm();
        }
      }, 10);
    }
    if (!opts.killFromFirstPoint) arm();
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (poll) clearInterval(poll);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, firstPointMs });
    });
  });
}

// ---- violations ---------------------------------------------------------------------

let step = 0;
let currentOp = '(setup)';
const t0 = Date.now();

class Violation extends Error {}

function violation(what: string): never {
  throw new Violation(what);
}

// ---- the inputs: workspaces edited at random, a git history, crate folders -------------

interface Workspace {
  repo: string;
  pristine: string;
  /** Where both lakes read it from (the same path, so recorded paths agree). */
  work: string;
  present: boolean;
  added: { file: string; root: string; line: string }[];
  /** The snapshot of the work folder as the last operation read it. */
  snap?: string;
}
const workspaces: Workspace[] = [
  { repo: 'tally', pristine: path.join(root, 'samples', 'workspace'), work: path.join(WORK, 'tally'), present: false, added: [] },
  { repo: 'wsfix', pristine: path.join(root, 'test', 'ingest', 'fixtures', 'ws'), work: path.join(WORK, 'wsfix'), present: false, added: [] },
];
for (const w of workspaces) cpSync(w.pristine, w.work, { recursive: true });

const GIT_REPO = 'hist';
const gitDir = buildGitHistory(path.join(dir, 'git')).dir;
/** Index in STEPS of the newest commit of the git repo the lake holds (-1: the repo is absent). */
let gitAt = -1;

interface Crate {
  key: string;
  dir: string;
  present: boolean;
}
const crates: Crate[] = [
  { key: 'fnvish@0.2.1', dir: path.join(root, 'samples', 'workspace', 'vendor', 'fnvish-0.2.1'), present: false },
  ...([['chaos_a', '0.1.0', 30], ['chaos_a', '0.2.0', 35], ['chaos_b', '1.0.0', 25]] as const).map(([n, v, fns]) => ({
    key: `${n}@${v}`,
    dir: syntheticCrate(path.join(CRATES, `${n}-${v}`), n, v, fns, v.length),
    present: false,
  })),
];

function rsFiles(d: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.name === 'vendor' || e.name === 'target' || e.name.startsWith('.')) continue;
    const p = path.join(d, e.name);
    if (e.isDirectory()) out.push(...rsFiles(p));
    else if (e.name.endsWith('.rs')) out.push(p);
  }
  return out.sort();
}

let editNo = 0;
/** One random edit of a workspace's work folder; its one-word name. */
function editWorkspace(w: Workspace): string {
  const n = ++editNo;
  const files = rsFiles(w.work);
  const kind = pick(['shift', 'body', 'rename', 'add-file', 'remove-file'] as const);
  const f = pick(files);
  const text = readFileSync(f, 'utf8');
  switch (kind) {
    case 'shift':
      writeFileSync(f, `// chaos shift ${n}\n`.repeat(1 + Math.floor(rand() * 4)) + text);
      return kind;
    case 'body': {
      const fns = [...text.matchAll(/\bfn\s+\w+[^;{}]*\{/g)];
      if (fns.length === 0) return 'body (none)';
      const m = pick(fns);
      const at = m.index + m[0].length;
      writeFileSync(f, `${text.slice(0, at)}\n    let _chaos${n} = ${n};${text.slice(at)}`);
      return kind;
    }
    case 'rename': {
      const names = [...new Set([...text.matchAll(/\bfn\s+(\w+)/g)].map((m) => m[1]!))].filter((x) => x !== 'main').sort();
      if (names.length === 0) return 'rename (none)';
      const from = pick(names);
      const to = `${from.replace(/_r\d+$/, '')}_r${n}`;
      const re = new RegExp(`\\b${from}\\b`, 'g');
      for (const g of files) writeFileSync(g, readFileSync(g, 'utf8').replace(re, to));
      return kind;
    }
    case 'add-file': {
      const roots = files.filter((x) => /src[\\/](lib|main)\.rs$/.test(x));
      const rootFile = pick(roots);
      const file = path.join(path.dirname(rootFile), `chaos_${n}.rs`);
      writeFileSync(file, `pub fn chaos_${n}_a(x: u64) -> u64 {\n    x + ${n}\n}\n\npub fn chaos_${n}_b(x: u64) -> u64 {\n    chaos_${n}_a(x) * 2\n}\n`);
      const line = `pub mod chaos_${n};\n`;
      writeFileSync(rootFile, readFileSync(rootFile, 'utf8') + line);
      w.added.push({ file, root: rootFile, line });
      return kind;
    }
    case 'remove-file': {
      if (w.added.length === 0) return 'remove-file (none)';
      const i = Math.floor(rand() * w.added.length);
      const a = w.added.splice(i, 1)[0]!;
      rmSync(a.file, { force: true });
      if (existsSync(a.root)) writeFileSync(a.root, readFileSync(a.root, 'utf8').replace(a.line, ''));
      return kind;
    }
  }
}

let snapNo = 0;
function snapshot(w: Workspace): string {
  const s = path.join(SNAP, `${String(++snapNo).padStart(5, '0')}-${w.repo}`);
  cpSync(w.work, s, { recursive: true });
  w.snap = s;
  return s;
}
function restore(w: Workspace, snap: string): void {
  rmSync(w.work, { recursive: true, force: true });
  cpSync(snap, w.work, { recursive: true });
}

// ---- operations ---------------------------------------------------------------------

interface Op {
  /** The kind, as counted in the summary. */
  kind: string;
  args: string[];
  /** Does it commit runs (replayed on the reference lake)? */
  run: boolean;
  /** Restores its input before a replay on the reference lake. */
  input?: () => void;
  note: string;
  /** Pause the readers (gc --retain 0 expires the generations they name). */
  quiet?: boolean;
  /** A copied lake: the operation runs on the copy. */
  copy?: boolean;
}

let ringSplit = true;

/** The next operation, chosen by the seeded generator from the model of the lake. */
function nextOp(): Op {
  const r = rand();
  if (r < 0.34) {
    const w = pick(workspaces);
    let note: string;
    let kind: string;
    if (!w.present) {
      rmSync(w.work, { recursive: true, force: true });
      cpSync(w.pristine, w.work, { recursive: true });
      w.added = [];
      kind = 'ingest (fresh)';
      note = 'pristine copy';
    } else {
      const edits: string[] = [];
      const k = Math.floor(rand() * 3);
      for (let i = 0; i < k; i++) edits.push(editWorkspace(w));
      kind = 'ingest (incremental)';
      note = edits.length ? edits.join(', ') : 'unchanged';
    }
    w.present = true;
    const snap = snapshot(w);
    return { kind, args: ['ingest', w.work, '--repo', w.repo], run: true, input: () => restore(w, snap), note: `${w.repo}: ${note}` };
  }
  if (r < 0.44) {
    let spec: string;
    if (gitAt < 0 || gitAt === STEPS.length - 1 || rand() < 0.2) {
      // one commit: the first ingest of the repo, or back (or forth) in its history
      gitAt = Math.floor(rand() * STEPS.length);
      spec = STEPS[gitAt]!;
    } else {
      const j = gitAt + 1 + Math.floor(rand() * (STEPS.length - 1 - gitAt));
      spec = `${STEPS[gitAt]!}..${STEPS[j]!}`;
      gitAt = j;
    }
    return { kind: 'ingest --git', args: ['ingest', gitDir, '--repo', GIT_REPO, '--git', spec], run: true, note: spec };
  }
  if (r < 0.54) {
    const c = pick(crates);
    c.present = true;
    return { kind: 'universe add', args: ['universe', 'add', c.dir], run: true, note: c.key };
  }
  if (r < 0.59) {
    const present = crates.filter((c) => c.present);
    if (present.length) {
      const c = pick(present);
      c.present = false;
      return { kind: 'universe remove', args: ['universe', 'remove', c.key, '--force'], run: true, note: c.key };
    }
  }
  if (r < 0.64) {
    const repos = [...workspaces.filter((w) => w.present).map((w) => w.repo), ...(gitAt >= 0 ? [GIT_REPO] : [])];
    if (repos.length) {
      const repo = pick(repos);
      if (repo === GIT_REPO) gitAt = -1;
      for (const w of workspaces) if (w.repo === repo) w.present = false;
      return { kind: 'repo remove', args: ['repo', 'remove', repo], run: true, note: repo };
    }
  }
  if (r < 0.71) return { kind: 'compact', args: ['compact'], run: false, note: ringSplit ? 'split lake' : 'unified lake' };
  if (r < 0.78) return { kind: 'gc', args: ['gc', '--retain', '0'], run: false, note: '--retain 0', quiet: true };
  if (r < 0.85) {
    ringSplit = !ringSplit;
    return ringSplit ? { kind: 'ring split', args: ['ring', 'split', '--chunk-rows', '64'], run: false, note: '' } : { kind: 'ring unsplit', args: ['ring', 'unsplit'], run: false, note: '' };
  }
  if (r < 0.9) return { kind: 'state rebuild', args: ['state', 'rebuild', '--group-events', '200'], run: false, note: '' };
  if (r < 0.96) return rand() < 0.5 ? { kind: 'state maintain', args: ['state', 'maintain'], run: false, note: '' } : { kind: 'state maintain --force', args: ['state', 'maintain', '--force'], run: false, note: '' };
  return { kind: 'lake copy + relocate', args: ['lake', 'relocate'], run: false, note: 'on a cp -r of the lake', copy: true };
}

// ---- readers -------------------------------------------------------------------------

interface Answer {
  from: 'serve' | 'cli';
  q: QuestionName;
  params: [string, string][];
  text: string;
  generation: bigint;
}

const QUESTIONS: { q: QuestionName; params: [string, string][] }[] = [
  { q: 'callers', params: [['path', 'fnvish::hash_str']] },
  { q: 'callers', params: [['path', 'chaos_a::m0::f3']] },
  { q: 'refs', params: [['path', 'tally::Tally']] },
  { q: 'refs', params: [['path', 'fnvish::hash_bytes']] },
  { q: 'def', params: [['path', 'tally::Tally::new']] },
  { q: 'def', params: [['path', 'alpha::helper']] },
  { q: 'find', params: [['name', 'hash*']] },
  { q: 'find', params: [['name', 'chaos_*']] },
  { q: 'find', params: [['name', 'f1*']] },
  { q: 'history', params: [['path', 'tally::Tally::new']] },
  { q: 'history', params: [['path', 'fnvish::hash_bytes']] },
];

function cliArgs(q: QuestionName, params: [string, string][]): string[] {
  const [[, first]] = params as [[string, string]];
  return [q, first, '--json', '--lake', LAKE];
}

function httpGet(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const generationOf = (text: string): bigint | undefined => {
  const j = parseJson(text) as { [k: string]: Json };
  const g = j.generation;
  return typeof g === 'number' || typeof g === 'bigint' ? BigInt(g) : undefined;
};

let serveUrl = '';
let serveChild: ReturnType<typeof spawn> | undefined;
const stats = { answers: { serve: 0, cli: 0 }, notFound: 0 };

/** A "no such item" answer names its generation too: kept as `error: <message>`; any other failure is a violation. */
function notFound(from: Answer['from'], q: QuestionName, params: [string, string][], msg: string, what: string): Answer {
  const m = /^no such item: .* \(at generation (\d+)\)$/s.exec(msg);
  if (!m) violation(`reader: ${what}: ${msg.slice(0, 2000)}`);
  stats.notFound++;
  return { from, q, params, text: `error: ${msg}`, generation: BigInt(m[1]!) };
}

/** Readers until `stop` resolves: one CLI question at a time, one request to serve at a time. */
function readers(stop: Promise<void>): Promise<Answer[]> {
  const out: Answer[] = [];
  let stopped = false;
  void stop.then(() => (stopped = true));
  // the readers' questions are picked by Math.random: their timing is not replayable anyway
  const cliLoop = async (): Promise<void> => {
    while (!stopped) {
      const { q, params } = QUESTIONS[Math.floor(Math.random() * QUESTIONS.length)]!;
      const r = await mimir(cliArgs(q, params));
      if (r.code === 0) {
        const g = generationOf(r.stdout);
        if (g === undefined) violation(`reader: \`mimir ${cliArgs(q, params).join(' ')}\` answered without a generation: ${r.stdout.slice(0, 200)}`);
        out.push({ from: 'cli', q, params, text: r.stdout, generation: g });
      } else {
        const msg = r.stderr.trim().replace(/^mimir \w+: /, '');
        out.push(notFound('cli', q, params, msg, `\`mimir ${cliArgs(q, params).join(' ')}\` exited ${r.code ?? r.signal}`));
      }
      await new Promise((res) => setTimeout(res, 300));
    }
  };
  const serveLoop = async (): Promise<void> => {
    while (!stopped) {
      const { q, params } = QUESTIONS[Math.floor(Math.random() * QUESTIONS.length)]!;
      const target = `${serveUrl}/api/${q}?${new URLSearchParams(params).toString()}`;
      const r = await httpGet(target);
      if (r.status === 200) {
        const g = generationOf(r.text);
        if (g === undefined) violation(`reader: GET ${target} answered without a generation: ${r.text.slice(0, 200)}`);
        out.push({ from: 'serve', q, params, text: r.text, generation: g });
      } else {
        const body = parseJson(r.text) as { [k: string]: Json };
        out.push(notFound('serve', q, params, String(body.error), `GET ${target} answered ${r.status}`));
      }
      await new Promise((res) => setTimeout(res, 150));
    }
  };
  return Promise.all([cliLoop(), serveLoop()]).then(() => out);
}

/** Canonical text of a JSON value: object keys sorted. */
function canon(x: Json): string {
  if (x === null || typeof x !== 'object') return stringifyJson(x);
  if (Array.isArray(x)) return `[${x.map(canon).join(',')}]`;
  return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${canon(x[k]!)}`).join(',')}}`;
}

/** Every answer equals a read pinned at the generation it names (a fresh read-only handle, in this process). */
async function checkAnswers(answers: Answer[]): Promise<void> {
  if (answers.length === 0) return;
  const log = await EventLog.open(LAKE, { readOnly: true });
  try {
    const pinned = new Map<string, string>();
    for (const a of answers) {
      const key = `${a.q} ${JSON.stringify(a.params)} @${a.generation}`;
      let want = pinned.get(key);
      if (want === undefined) {
        try {
          want = canon(parseJson(stringifyJson(await ask(log, parseQuestion(a.q, [...a.params, ['asOf', String(a.generation)]])))));
        } catch (e) {
          want = `error: ${(e as Error).message}`;
        }
        pinned.set(key, want);
      }
      const have = a.text.startsWith('error: ') ? a.text : canon(parseJson(a.text));
      if (have !== want) violation(`reader (${a.from}) ${a.q} ${JSON.stringify(a.params)} answered at generation ${a.generation}:\n  ${have.slice(0, 1500)}\nbut the read pinned at ${a.generation}, made after, answers:\n  ${want.slice(0, 1500)}`);
      stats.answers[a.from]++;
    }
  } finally {
    log.close();
  }
}

// ---- invariants ---------------------------------------------------------------------

async function generationNotes(lake: string, after: bigint): Promise<{ generation: bigint; note: string | null }[]> {
  const log = await EventLog.open(lake, { readOnly: true });
  try {
    return log.lake.catalog
      .generations({ limit: Number.MAX_SAFE_INTEGER })
      .filter((g) => g.generation > after)
      .map((g) => ({ generation: g.generation, note: g.note }));
  } finally {
    log.close();
  }
}

async function currentGeneration(lake: string): Promise<bigint> {
  let log: EventLog;
  try {
    log = await EventLog.open(lake, { readOnly: true });
  } catch (e) {
    violation(`the lake does not open: ${(e as Error).message}`);
  }
  try {
    return log.lake.catalog.pointerGeneration();
  } finally {
    log.close();
  }
}

async function mustPass(args: string[], lake: string, what: string): Promise<void> {
  const r = await mimir([...args, '--lake', lake]);
  if (r.code !== 0) violation(`${what}: \`mimir ${args.join(' ')}\` exited ${r.code ?? r.signal}:\n${(r.stdout + r.stderr).trim().slice(0, 3000)}`);
}

/** Per kind/repo/krate: rows and the sum of row hashes (run and ts left out), as the log reads them. */
async function logDigest(lake: string): Promise<Map<string, { rows: number; hi: number; lo: number }>> {
  const log = await EventLog.open(lake, { readOnly: true });
  const acc = new Map<string, { rows: number; hi: number; lo: number }>();
  try {
    for (const kind of SOURCE_KINDS) {
      for await (const b of log.scan(kind)) {
        const order = fieldOrder(b).filter((c) => b.fields[c]!.name !== COL_RUN && b.fields[c]!.name !== COL_TS);
        const rc = b.fields.findIndex((f) => f.name === COL_REPO);
        const kc = b.fields.findIndex((f) => f.name === COL_KRATE);
        for (let i = 0; i < b.numRows; i++) {
          const key = `${kind} ${String(b.columns[rc]![i])} ${String(b.columns[kc]![i])}`;
          let a = acc.get(key);
          if (!a) acc.set(key, (a = { rows: 0, hi: 0, lo: 0 }));
          const [hi, lo] = hash64(rowEncoding(b, i, order));
          a.rows++;
          const l = a.lo + lo;
          a.lo = l % 0x1_0000_0000;
          a.hi = (a.hi + hi + Math.floor(l / 0x1_0000_0000)) % 0x1_0000_0000;
        }
      }
    }
  } finally {
    log.close();
  }
  return acc;
}

function digestDiff(a: Map<string, { rows: number; hi: number; lo: number }>, b: Map<string, { rows: number; hi: number; lo: number }>): string[] {
  const out: string[] = [];
  for (const k of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(k);
    const y = b.get(k);
    if (x?.rows !== y?.rows || x?.hi !== y?.hi || x?.lo !== y?.lo) out.push(`${k}: lake ${x?.rows ?? 0} rows, reference ${y?.rows ?? 0} rows${x?.rows === y?.rows ? ' (same count, different rows)' : ''}`);
  }
  return out;
}

/** The start times of the lake's live leases (pins of readers, commits in flight), ms. */
async function leaseStarts(): Promise<number[]> {
  const log = await EventLog.open(LAKE, { readOnly: true });
  try {
    return log.lake.catalog.liveLeases().map((l) => l.startedMs);
  } finally {
    log.close();
  }
}

/**
 * After gc --retain 0: lake check (run after every step) says nothing
 * referenced went; here, no file that no metadata reaches is left — but for
 * those newer than the start of a lease live while gc ran (orphans.ts keeps
 * files newer than any live lease, a reader's pin included), counted apart.
 */
async function checkGc(leasesBefore: number[]): Promise<void> {
  const starts = [...leasesBefore, ...(await leaseStarts())];
  const keepAfter = starts.length ? Math.min(...starts) - LEASE_SLACK_MS : Infinity;
  const left = await unreferenced(LAKE);
  const old = left.filter((f) => statSync(f).mtimeMs < keepAfter);
  if (old.length) violation(`gc --retain 0 left ${old.length} file(s) that no metadata reaches and no live lease protects (oldest live lease start ${Number.isFinite(keepAfter) ? new Date(keepAfter + LEASE_SLACK_MS).toISOString() : 'none'}): ${old.slice(0, 10).map((f) => path.relative(LAKE, f)).join(', ')}`);
  summary.gcKeptForLeases += left.length - old.length;
  summary.gcChecks++;
}

/** Operations whose runs committed (by the lake's generation log), not yet replayed on the reference. */
const toReplay: { step: number; op: Op }[] = [];
let replayed = 0;

async function referenceCheck(): Promise<void> {
  for (const { step: s, op } of toReplay.splice(0)) {
    op.input?.();
    const r = await mimir([...op.args, '--lake', REF]);
    if (r.code !== 0) violation(`reference replay of step ${s} (${op.kind} ${op.note}) exited ${r.code ?? r.signal}: ${r.stderr.trim().slice(0, 2000)}`);
    replayed++;
  }
  for (const w of workspaces) if (w.snap) restore(w, w.snap);
  const diff = digestDiff(await logDigest(LAKE), await logDigest(REF));
  if (diff.length) violation(`the log differs from the serial reference (${replayed} committed operations replayed):\n  ${diff.join('\n  ')}`);
  summary.referenceChecks++;
}

// ---- the campaign --------------------------------------------------------------------

const summary = {
  ops: new Map<string, number>(),
  kills: new Map<string, number>(),
  killsByPoint: new Map<string, number>(),
  killsByAttempt: new Map<string, number>(),
  pointNotReached: 0,
  kills_: 0,
  reruns: 0,
  referenceChecks: 0,
  gcChecks: 0,
  gcKeptForLeases: 0,
  removeRerunRefused: [] as string[],
};
const inc = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + 1);
/** The crash points (point#n) each operation kind reached when it ran to the end, cached. */
const points = new Map<string, string[]>();
/** The last uncrashed duration of each operation kind, ms (delays are drawn below it). */
const durations = new Map<string, number>();
/** The same, from its first crash point to its end, ms. */
const activeMs = new Map<string, number>();
let traceNo = 0;

async function startServe(): Promise<void> {
  const child = spawn(process.execPath, [BIN, 'serve', '--lake', LAKE, '--port', '0', '--json', '--readers', '2', '--cache-mb', '8'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  serveChild = child;
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  serveUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":\s*"([^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('close', (code) => reject(new Error(`mimir serve exited ${code}: ${err}`)));
  });
  child.on('close', (code, signal) => {
    if (!stopping) console.error(`chaos: mimir serve exited ${code ?? signal} during the run: ${err.trim().slice(0, 2000)}`);
  });
}
let stopping = false;

async function runOne(op: Op, before: bigint): Promise<void> {
  const lake = op.copy ? path.join(dir, `copy-${step}`) : LAKE;
  if (op.copy) cpSync(LAKE, lake, { recursive: true });
  const trace = path.join(TRACE, `${++traceNo}.txt`);
  /** A kill plan for one attempt (drawn with probability P): a crash point of the kind, or a delay. */
  const plan = (): { env: Record<string, string>; killAfterMs?: number; fromFirstPoint?: boolean; how: string } => {
    const env: Record<string, string> = { MIMIR_CRASH_TRACE: trace };
    if (rand() >= P) return { env, how: '' };
    const known = points.get(op.kind);
    const byPoint = rand() < 0.5;
    const at = rand();
    if (byPoint && known && known.length) {
      env.MIMIR_CRASH_AT = known[Math.floor(at * known.length)]!;
      return { env, how: `crash point ${env.MIMIR_CRASH_AT}` };
    }
    if (known && known.length) {
      // a delay after the first crash point, within its last clean run's time from there to its end
      const killAfterMs = Math.floor(at * (activeMs.get(op.kind) ?? 1000));
      return { env, killAfterMs, fromFirstPoint: true, how: `delay ${killAfterMs} ms after the first crash point` };
    }
    // in the last 80% of its last clean run: the first fifth is mostly node starting
    const killAfterMs = Math.floor((0.2 + 0.8 * at) * (durations.get(op.kind) ?? 1500));
    return { env, killAfterMs, how: `delay ${killAfterMs} ms` };
  };
  const reachedPoints = (): string[] => {
    const r = existsSync(trace) ? readFileSync(trace, 'utf8').trim().split('\n').filter(Boolean) : [];
    rmSync(trace, { force: true });
    return r;
  };
  let attempt = 0;
  let p = plan();
  let r = await mimir([...op.args, '--lake', lake], { env: p.env, killAfterMs: p.killAfterMs, trace, killFromFirstPoint: p.fromFirstPoint });
  let reached = reachedPoints();
  const parts: string[] = [];
  // A kill leaves the caller not knowing the outcome: it runs the command again, and that
  // rerun (recovering what the killed one left) may be killed too, up to --rekills times.
  while (r.signal === 'SIGKILL') {
    summary.kills_++;
    inc(summary.kills, op.kind);
    inc(summary.killsByAttempt, attempt === 0 ? 'the operation' : `rerun ${attempt}`);
    const last = reached.at(-1) ?? '(before the first point)';
    inc(summary.killsByPoint, p.env.MIMIR_CRASH_AT ? `point ${p.env.MIMIR_CRASH_AT}` : `delay, after ${last.replace(/#\d+$/, '')}`);
    parts.push(`${attempt === 0 ? 'killed' : `rerun ${attempt} killed`} (${p.env.MIMIR_CRASH_AT ? `at crash point ${p.env.MIMIR_CRASH_AT}` : `${p.how}, last point reached ${last}`})`);
    attempt++;
    summary.reruns++;
    // the last rerun runs to its end: its points are the kind's list when no clean run gave one yet (--p 1)
    p = attempt <= REKILLS ? plan() : { env: { MIMIR_CRASH_TRACE: trace }, how: '' };
    r = await mimir([...op.args, '--lake', lake], { env: p.env, killAfterMs: p.killAfterMs, trace, killFromFirstPoint: p.fromFirstPoint });
    reached = reachedPoints();
    if (r.signal !== 'SIGKILL' && p.how) summary.pointNotReached++;
    if (r.signal !== 'SIGKILL' && !points.has(op.kind) && r.code === 0 && !p.how) points.set(op.kind, [...new Set(reached)]);
    if (r.signal !== 'SIGKILL' && !activeMs.has(op.kind) && r.code === 0 && !p.how && r.firstPointMs !== undefined) activeMs.set(op.kind, r.ms - r.firstPointMs);
  }
  let outcome: string;
  if (attempt > 0) {
    outcome = `${parts.join('; ')}; rerun `;
    if (r.code !== 0 && op.args[1] === 'remove' && r.code === 1 && (await generationNotes(lake, before)).some((n) => parseRunNote(n.note)?.what === 'remove')) {
      // the killed attempt's remove committed (the generation log says so) and the rerun refuses: nothing left to remove.
      // Not convergence with exit 0 — counted and reported, not a stop (a question for the CLI: see the summary)
      summary.removeRerunRefused.push(`step ${step} ${op.kind} ${op.note}: ${r.stderr.trim().split('\n')[0]}`);
      outcome += `exit 1 after the remove committed (${r.ms} ms)`;
    } else if (r.code !== 0) violation(`the rerun after a kill (${parts.at(-1)}) exited ${r.code ?? r.signal}, expected 0 (convergence):\n${r.stderr.trim().slice(0, 3000)}`);
    else outcome += `exit 0 (${r.ms} ms)`;
  } else {
    if (r.code !== 0) violation(`exited ${r.code ?? r.signal} without a kill${p.how ? ` (a kill was planned: ${p.how})` : ''}:\n${r.stderr.trim().slice(0, 3000)}`);
    if (p.how) summary.pointNotReached++; // a crash point not reached, or a delay longer than the run
    else {
      durations.set(op.kind, r.ms);
      if (r.firstPointMs !== undefined) activeMs.set(op.kind, r.ms - r.firstPointMs);
      points.set(op.kind, [...new Set(reached)]);
    }
    outcome = `exit 0 (${r.ms} ms)${p.how ? `, planned kill not reached (${p.how})` : ''}`;
  }
  if (!QUIET) console.log(`step ${step}: ${op.kind}${op.note ? ` [${op.note}]` : ''}: ${outcome}`);
  if (op.copy) {
    // the copy is a lake of its own: it must pass the same checks and hold the same log
    await currentGeneration(lake);
    await Promise.all([mustPass(['state', 'verify'], lake, 'the relocated copy'), mustPass(['lake', 'check'], lake, 'the relocated copy')]);
    const diff = digestDiff(await logDigest(lake), await logDigest(LAKE));
    if (diff.length) violation(`the relocated copy's log differs from the lake's:\n  ${diff.join('\n  ')}`);
    rmSync(lake, { recursive: true, force: true });
  }
}

async function campaign(): Promise<void> {
  console.log(`chaos: seed ${SEED} (replay: ${REPLAY}), --kills ${KILLS}, --p ${P}, --check-every ${CHECK_EVERY}, --rekills ${REKILLS}, --storage local; scratch ${dir}`);
  for (const l of [LAKE, REF]) {
    const r = await mimir(['init', '--lake', l]);
    if (r.code !== 0) throw new Error(`mimir init ${l} exited ${r.code}: ${r.stderr}`);
  }
  await startServe();
  while (summary.kills_ < KILLS && step < MAX_STEPS) {
    step++;
    const op = nextOp();
    currentOp = `${op.kind} ${op.note}`;
    inc(summary.ops, op.kind);
    const before = await currentGeneration(LAKE);
    const leasesBefore = op.kind === 'gc' ? await leaseStarts() : [];
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const reading = op.quiet ? Promise.resolve([]) : readers(stopped);
    try {
      await runOne(op, before);
    } finally {
      stop();
    }
    const answers = await reading;
    // what committed, by the lake's own record: the runs its generation log names
    const notes = await generationNotes(LAKE, before);
    const runs = notes.filter((n) => parseRunNote(n.note) !== undefined);
    if (!op.run && runs.length) violation(`an operation that commits no run left run generations: ${runs.map((n) => `${n.generation} "${n.note}"`).join(', ')}`);
    if (op.run && runs.length) toReplay.push({ step, op });
    await currentGeneration(LAKE);
    await Promise.all([mustPass(['state', 'verify'], LAKE, 'state verify'), mustPass(['lake', 'check'], LAKE, 'lake check')]);
    await checkAnswers(answers);
    if (op.kind === 'gc') await checkGc(leasesBefore);
    if (step % CHECK_EVERY === 0) await referenceCheck();
  }
  await referenceCheck();
}

function printSummary(ok: boolean): void {
  const fmt = (m: Map<string, number>): string => [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `    ${k}: ${v}`).join('\n') || '    (none)';
  const opsTotal = [...summary.ops.values()].reduce((a, b) => a + b, 0);
  console.log(`\nchaos summary (seed ${SEED}, storage local)`);
  console.log(`  steps ${step}, operations run ${opsTotal} (+ ${summary.reruns} reruns after kills, ${replayed} replays on the reference):\n${fmt(summary.ops)}`);
  console.log(`  kills ${summary.kills_} by operation:\n${fmt(summary.kills)}`);
  console.log(`  kills by attempt (the operation itself, or the rerun after a kill):\n${fmt(summary.killsByAttempt)}`);
  console.log(`  kills by crash point reached / by delay:\n${fmt(summary.killsByPoint)}`);
  console.log(`  planned kills not reached (the run ended first): ${summary.pointNotReached}`);
  console.log(`  readers' answers checked against pinned reads: ${stats.answers.serve + stats.answers.cli} (serve ${stats.answers.serve}, cli ${stats.answers.cli}); of them "no such item" answers: ${stats.notFound}`);
  console.log(`  reference digest checks: ${summary.referenceChecks}; gc reachability checks: ${summary.gcChecks} (unreferenced files kept because newer than a live reader's pin or commit lease: ${summary.gcKeptForLeases})`);
  console.log(`  reruns of a committed remove that exit 1 ("nothing removed") instead of 0: ${summary.removeRerunRefused.length}${summary.removeRerunRefused.map((x) => `\n    ${x}`).join('')}`);
  console.log(`  invariant violations: ${ok ? 0 : 1}`);
  console.log(`  wall time: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

async function stopServe(): Promise<void> {
  stopping = true;
  const c = serveChild;
  if (!c || c.exitCode !== null || c.signalCode !== null) return;
  await new Promise<void>((res) => {
    c.once('close', () => res());
    c.kill('SIGTERM');
  });
}

try {
  await campaign();
  await stopServe();
  printSummary(true);
  if (KEEP) console.log(`scratch kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
} catch (e) {
  await stopServe();
  const v = e instanceof Violation;
  console.log(`\nchaos: ${v ? 'INVARIANT VIOLATION' : 'the campaign failed'} — seed ${SEED}, step ${step}, operation ${currentOp}\n${v ? (e as Error).message : ((e as Error).stack ?? String(e))}`);
  console.log(`lake kept for inspection: ${LAKE} (reference lake: ${REF}); replay: ${REPLAY}`);
  printSummary(false);
  process.exit(1);
}
