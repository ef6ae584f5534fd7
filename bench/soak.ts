// `npm run soak`: does a lake that is ingested often stay small and fast?
// 500 alternating edit/revert ingests of one small generated crate (a body
// edit of one function plus a function added, then reverted) with default
// settings (maintenance after each run included), into a fresh lake. Every 50
// runs it prints: files and bytes under the lake, the node table's current
// metadata.json size, its live data files and manifests, the live data and
// delete files of the serving state tables (what a lookup opens), and the latency of
// `find` and `callers` in-process (median of 3) and through the CLI (one
// process each, start-up included). At the end: run-500 / run-50 ratios
// (aim: files and latency within 1.5x).
//
// Not a test: it prints figures. Flags: --runs N (500), --every N (50),
// --fns N (functions in the crate, 120), --gc (also run `gc` every --every
// runs, as a user's cron would; default retention 7 days, so its age bound
// expires nothing during a soak), --retain-ms N (that gc's retention),
// --keep-snapshots N (history kept per table, written to the lake's
// mimir.toml; default: the lake's default, 32), --keep (leave the scratch
// folder and print its path).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ingest } from '../src/ingest/index.ts';
import { EventLog } from '../src/log/event-log.ts';
import { gc } from '../src/log/gc.ts';
import { callers, find } from '../src/query/index.ts';
import { readManifestList } from '../src/lake/scan/plan.ts';
import { CODE_NODE_EVENTS } from '../src/log/schema.ts';
import { STATE_TABLES } from '../src/log/state/schema.ts';

const args = process.argv.slice(2);
const num = (name: string, d: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : d;
};
const RUNS = num('--runs', 500);
const EVERY = num('--every', 50);
const FNS = num('--fns', 120);
const withGc = args.includes('--gc');
const retainMs = args.includes('--retain-ms') ? num('--retain-ms', 0) : undefined;
const keep = args.includes('--keep');
const keepSnapshots = args.includes('--keep-snapshots') ? num('--keep-snapshots', 32) : undefined;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const dir = mkdtempSync(path.join(tmpdir(), 'mimir-soak-'));
const ws = path.join(dir, 'soak');
const lakeDir = path.join(dir, 'lake');

/** The crate: modules of 20 functions each calling the one before; `edited` changes f7's body and adds a function. */
function writeCrate(edited: boolean): void {
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  writeFileSync(path.join(ws, 'Cargo.toml'), '[package]\nname = "soak"\nversion = "0.1.0"\nedition = "2021"\n');
  const mods: string[] = [];
  for (let m = 0; m * 20 < FNS; m++) {
    const fns: string[] = [];
    for (let i = m * 20; i < Math.min(FNS, (m + 1) * 20); i++) {
      const call = i % 20 === 0 ? '' : `f${i - 1}(x) + `;
      const body = edited && i === 7 ? `${call}x * ${i} + 1` : `${call}x * ${i}`;
      fns.push(`    pub fn f${i}(x: u64) -> u64 { ${body} }`);
    }
    if (edited && m === 0) fns.push('    pub fn added_in_edit(x: u64) -> u64 { f3(x) }');
    mods.push(`pub mod m${m} {\n${fns.join('\n')}\n}`);
  }
  writeFileSync(path.join(ws, 'src', 'lib.rs'), mods.join('\n\n') + '\n');
}

function walk(d: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) {
      const s = walk(p);
      files += s.files;
      bytes += s.bytes;
    } else {
      files++;
      bytes += statSync(p).size;
    }
  }
  return { files, bytes };
}

async function median(fn: () => Promise<unknown>, n = 3): Promise<number> {
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    ts.push(performance.now() - t0);
  }
  return ts.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

function cliMs(...cmd: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'mimir.js'), '--lake', lakeDir, ...cmd], { encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`mimir ${cmd.join(' ')} failed: ${r.stderr}`);
  return ms;
}

interface Point {
  run: number;
  files: number;
  mb: number;
  metaKb: number;
  liveFiles: number;
  manifests: number;
  stateFiles: number;
  findMs: number;
  callersMs: number;
  cliFindMs: number;
  cliCallersMs: number;
  ingestMs: number;
}

async function measure(log: EventLog, run: number, ingestMs: number): Promise<Point> {
  const { files, bytes } = walk(lakeDir);
  const node = (await log.table(CODE_NODE_EVENTS))!;
  const metaFile = await node.io.open(node.metadataLocation);
  const meta = await metaFile.size();
  await metaFile.close();
  const snap = node.currentSnapshot();
  const manifests = snap ? (await readManifestList(node.io, snap)).length : 0;
  const liveFiles = (await node.dataFiles()).length;
  let stateFiles = 0;
  for (const name of STATE_TABLES) stateFiles += (await (await log.table(name))?.liveFiles() ?? []).length;
  const findMs = await median(() => find(log, 'f7'));
  const callersMs = await median(() => callers(log, 'soak::m0::f6'));
  return {
    run, files, mb: bytes / 2 ** 20, metaKb: meta / 1024, liveFiles, manifests, stateFiles, findMs, callersMs,
    cliFindMs: cliMs('find', 'f7'), cliCallersMs: cliMs('callers', 'soak::m0::f6'), ingestMs,
  };
}

const header = 'run    files      MB  meta.json KB  node files  manifests  state files  find ms  callers ms  CLI find ms  CLI callers ms  ingest ms';
const row = (p: Point): string => [
  String(p.run).padStart(3), String(p.files).padStart(8), p.mb.toFixed(2).padStart(7), p.metaKb.toFixed(1).padStart(13),
  String(p.liveFiles).padStart(11), String(p.manifests).padStart(10), String(p.stateFiles).padStart(12), p.findMs.toFixed(1).padStart(8), p.callersMs.toFixed(1).padStart(11),
  p.cliFindMs.toFixed(0).padStart(12), p.cliCallersMs.toFixed(0).padStart(15), p.ingestMs.toFixed(0).padStart(10),
].join(' ');

console.log(`soak: ${RUNS} alternating edit/revert ingests of a ${FNS}-function crate into ${lakeDir}${withGc ? `, gc every ${EVERY} runs (retention ${retainMs ?? 'default'} ms)` : ''}${keepSnapshots === undefined ? '' : `, keep-snapshots ${keepSnapshots}`}`);
if (keepSnapshots !== undefined) {
  mkdirSync(lakeDir, { recursive: true });
  writeFileSync(path.join(lakeDir, 'mimir.toml'), `[history]\nkeep-snapshots = ${keepSnapshots}\n`);
}
console.log(header);
const points: Point[] = [];
const log = await EventLog.open(lakeDir);
try {
  let ingestTotal = 0;
  for (let run = 1; run <= RUNS; run++) {
    writeCrate(run % 2 === 0);
    const t0 = performance.now();
    const r = await ingest(log, ws, { repo: 'soak' });
    ingestTotal += performance.now() - t0;
    if (run > 1 && r.events.add + r.events.change + r.events.remove === 0) throw new Error(`run ${run} wrote no event: the edit did not register`);
    if (r.maintenanceError) console.log(`run ${run}: maintenance failed: ${r.maintenanceError}`);
    if (run % EVERY === 0 || run === 1) {
      if (withGc && run % EVERY === 0) await gc(log, { retainMs });
      const p = await measure(log, run, ingestTotal / (run % EVERY === 0 ? EVERY : 1));
      ingestTotal = 0;
      points.push(p);
      console.log(row(p));
    }
  }
} finally {
  log.close();
}
const at = (n: number): Point | undefined => points.find((p) => p.run === n);
const first = at(EVERY);
const last = at(RUNS - (RUNS % EVERY));
if (first && last && first !== last) {
  const r = (a: number, b: number): string => `${(b / a).toFixed(2)}x`;
  console.log(`run ${last.run} / run ${first.run}: files ${r(first.files, last.files)}, bytes ${r(first.mb, last.mb)}, metadata.json ${r(first.metaKb, last.metaKb)}, `
    + `find ${r(first.findMs, last.findMs)}, callers ${r(first.callersMs, last.callersMs)}, CLI find ${r(first.cliFindMs, last.cliFindMs)}, CLI callers ${r(first.cliCallersMs, last.cliCallersMs)} (aim: files and latency within 1.5x)`);
}
if (keep) console.log(`kept ${dir}`);
else rmSync(dir, { recursive: true, force: true });
