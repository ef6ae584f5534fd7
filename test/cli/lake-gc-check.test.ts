// gc and lake check as a user meets them, real `mimir` processes on a real
// lake: after many small appends, `gc --retain 0` leaves each table (event,
// ring, state tables, ingest_runs) at most its current metadata file and the
// 10 its metadata-log keeps, and one manifest list; a stranger's files placed in a table folder are listed and
// kept; a manifest with 16 flipped bytes is reported by `lake check` (exit 1)
// and by `table scan`, naming the file.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli, type CliResult } from './run-cli.ts';

const work = scratch('mimir-cli-gc-check-');
after(work.cleanup);
const ok = (r: CliResult, what: string): CliResult => {
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${r.stderr}`);
  return r;
};

/** Append ring and repo rows of every kind, `rounds` times (test/cli/log-populate.ts in a child). */
function populate(lake: string, rounds: number): Promise<void> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'log-populate.ts');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, lake, String(rounds)], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`log-populate exited ${code}: ${err}`))));
  });
}

const tableDir = (lake: string, t: string): string => path.join(lake, 'mimir', t);
const count = (dir: string, pred: (f: string) => boolean): number => (existsSync(dir) ? readdirSync(dir).filter(pred).length : 0);

test('gc: bounded metadata after many appends; a stranger\'s files listed and kept; a flipped manifest reported by check and scan', async () => {
  const lake = path.join(work.dir, 'lake');
  ok(await runCli(['init'], { lake }), 'init');
  await populate(lake, 12); // 12 appends of each kind: 13+ metadata files per event table
  const nodes = tableDir(lake, 'code_node_events');
  assert.ok(count(path.join(nodes, 'metadata'), (f) => f.endsWith('.metadata.json')) > 12);
  const stateMeta = count(path.join(tableDir(lake, 'code_nodes'), 'metadata'), (f) => f.endsWith('.metadata.json'));
  assert.ok(stateMeta > 12, `a state table committed to more than its log keeps (${stateMeta} metadata files)`);
  const strangers = [path.join(nodes, 'notes.txt'), path.join(nodes, 'data', 'mine.parquet'), path.join(nodes, 'metadata', 'backup.metadata.json')];
  for (const s of strangers) writeFileSync(s, 'not Mimir\'s');

  const gc = ok(await runCli(['gc', '--retain', '0'], { lake }), 'gc');
  for (const s of strangers) {
    assert.ok(existsSync(s), `${s} kept`);
    assert.ok(gc.stdout.includes(`kept ${s}: nothing references it, and Mimir does not write files of that name`), `${s} listed: ${gc.stdout}`);
  }
  assert.match(gc.stdout, /kept 3 file\(s\) Mimir did not write \(listed\)/);
  // every table of the lake — event, ring, state tables and ingest_runs alike
  const tables = readdirSync(path.join(lake, 'mimir'));
  assert.ok(tables.length >= 9 && tables.includes('code_nodes') && tables.includes('ingest_runs'), tables.join(', '));
  for (const t of tables) {
    const meta = path.join(tableDir(lake, t), 'metadata');
    const metadataFiles = count(meta, (f) => /^\d{5}-.*\.metadata\.json$/.test(f));
    assert.ok(metadataFiles <= 11, `${t}: ${metadataFiles} metadata files, at most the current and 10 in its log`);
    assert.ok(count(meta, (f) => f.startsWith('snap-')) <= 1, `${t}: one manifest list`);
  }
  ok(await runCli(['lake', 'check', '--footers'], { lake }), 'a clean lake checks clean');

  // 16 flipped bytes in the middle of a manifest of the ring node table
  const ring = path.join(tableDir(lake, 'code_node_events_ring'), 'metadata');
  const manifest = path.join(ring, readdirSync(ring).find((f) => /-m\d+\.avro$/.test(f))!);
  const bytes = readFileSync(manifest);
  const at = Math.floor(bytes.length / 2);
  for (let i = at; i < at + 16; i++) bytes[i] = bytes[i]! ^ 0x5a;
  writeFileSync(manifest, bytes);
  const check = await runCli(['lake', 'check'], { lake });
  assert.equal(check.code, 1, check.stderr);
  assert.ok(check.stdout.includes(`problem mimir.code_node_events_ring file://${manifest}`), check.stdout);
  assert.match(check.stderr, /1 problem\(s\)/);
  const scan = await runCli(['table', 'scan', 'lake:mimir.code_node_events_ring'], { lake });
  assert.equal(scan.code, 1);
  assert.ok(scan.stderr.includes(manifest), scan.stderr);
});
