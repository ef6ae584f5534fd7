// bench:ring — the ring split on unified lakes of 1M and 4M ring rows (about
// 1k crates) plus repo rows. For each size, in fresh child processes: the
// split's rows/s and peak RSS, and a plain read-and-rewrite of the same ring
// rows with the lake layer (the reference the split's copy is held to); then
// DuckDB copying the same ring rows out of the same Parquet files.
//
//   npm run bench:ring [-- --sizes 1000000,4000000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const role = process.argv[2];

// ---- children -------------------------------------------------------------

async function build(root: string, ringRows: number): Promise<void> {
  const { EventLog } = await import('../src/log/event-log.ts');
  const log = await EventLog.open(root, { init: 'unified' });
  const chunk = 200_000;
  const repoRows = Math.round(ringRows / 4);
  const make = (repo: string, from: number, n: number, crates: number): Record<string, unknown>[] =>
    Array.from({ length: n }, (_, j) => {
      const i = from + j;
      const c = i % crates;
      return {
        repo,
        krate: repo === '@universe' ? `crate${c}@1.${c % 7}.0` : `${repo}@0.1.0`,
        run: 'bench',
        ts: 1_700_000_000_000_000n + BigInt(i),
        op: 'add',
        id: `${repo}:${i.toString(36)}`,
        kind: 'fn',
        name: `item_${i.toString(36)}`,
        qpath: `crate${c}::module_${i % 97}::item_${i.toString(36)}`,
        file: `src/module_${i % 97}.rs`,
        line_start: i % 5000,
        line_end: (i % 5000) + 12,
        visibility: 'pub',
        signature: `pub fn item_${i.toString(36)}(x: u32) -> u32`,
      };
    });
  for (let from = 0; from < ringRows; from += chunk) await log.append('node', make('@universe', from, Math.min(chunk, ringRows - from), 1000));
  for (let from = 0; from < repoRows; from += chunk) await log.append('node', make(`repo${from % 3}`, from, Math.min(chunk, repoRows - from), 1));
  log.close();
}

function sampler(): { peak: () => number; stop: () => void } {
  let peak = process.memoryUsage().rss;
  const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  return { peak: () => Math.max(peak, process.memoryUsage().rss), stop: () => clearInterval(t) };
}

async function split(root: string): Promise<void> {
  const { EventLog } = await import('../src/log/event-log.ts');
  const { splitRing } = await import('../src/log/ring-split.ts');
  const log = await EventLog.open(root);
  const s = sampler();
  const t0 = performance.now();
  const r = await splitRing(log);
  const ms = performance.now() - t0;
  s.stop();
  log.close();
  console.log(JSON.stringify({ ms, rows: String(r.copied), peak: s.peak() }));
}

/** The reference: stream the ring rows from the source table and append them to a fresh table, chunk by chunk. */
async function rewrite(root: string): Promise<void> {
  const { Lake } = await import('../src/lake/lake.ts');
  const { eq } = await import('../src/lake/expr/expr.ts');
  const lake = Lake.open(root);
  const src = await lake.loadTable({ namespace: ['mimir'], name: 'code_node_events' });
  const dst = await lake.createTable({ namespace: ['bench'], name: 'copy' }, src.schema);
  const s = sampler();
  const t0 = performance.now();
  let rows = 0;
  let buf: import('../src/lake/spec/types.ts').Batch[] = [];
  let buffered = 0;
  for await (const b of src.scan({ filter: eq('repo', '@universe') }).batches()) {
    buf.push(b);
    buffered += b.numRows;
    if (buffered >= 1 << 20) {
      await dst.append(buf);
      rows += buffered;
      buf = [];
      buffered = 0;
    }
  }
  if (buffered > 0) await dst.append(buf);
  rows += buffered;
  const ms = performance.now() - t0;
  s.stop();
  lake.close();
  console.log(JSON.stringify({ ms, rows: String(rows), peak: s.peak() }));
}

async function duck(root: string): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const { Lake } = await import('../src/lake/lake.ts');
  const lake = Lake.open(root);
  const src = await lake.loadTable({ namespace: ['mimir'], name: 'code_node_events' });
  const files = (await src.dataFiles()).map((f) => `'${fileURLToPath(f.file.filePath)}'`);
  lake.close();
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const out = path.join(root, 'duck-ring.parquet');
  const t0 = performance.now();
  await c.run(`copy (select * from read_parquet([${files.join(',')}]) where repo = '@universe') to '${out}' (format parquet, compression zstd)`);
  const ms = performance.now() - t0;
  const n = (await c.runAndReadAll(`select count(*) from read_parquet('${out}')`)).getRows()[0]![0];
  console.log(JSON.stringify({ ms, rows: String(n) }));
}

// ---- parent ---------------------------------------------------------------

function runChild(args: string[]): { ms: number; rows: string; peak?: number } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(here, 'ring.ts'), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop()!) as { ms: number; rows: string; peak?: number };
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--sizes');
  const sizes = i > 0 ? process.argv[i + 1]!.split(',').map(Number) : [1_000_000, 4_000_000];
  const mb = (x: number): string => `${(x / 2 ** 20).toFixed(0)} MB`;
  const rate = (rows: number, ms: number): string => `${Math.round(rows / (ms / 1000)).toLocaleString('en-US')} rows/s`;
  console.log(`bench:ring — unified lakes of ${sizes.map((s) => s.toLocaleString('en-US')).join(' and ')} ring rows (1,000 crates) plus 25% repo rows; node ${process.version}`);
  const peaks: number[] = [];
  for (const n of sizes) {
    const dir = mkdtempSync(path.join(tmpdir(), 'mimir-bench-ring-'));
    try {
      const t0 = performance.now();
      execFileSync(process.execPath, ['--import', 'tsx', path.join(here, 'ring.ts'), 'build', dir, String(n)], { stdio: 'inherit' });
      const buildMs = performance.now() - t0;
      const ref = runChild(['rewrite', dir]);
      const d = runChild(['duck', dir]);
      const s = runChild(['split', dir]);
      peaks.push(s.peak!);
      const rows = Number(s.rows);
      console.log(`${n.toLocaleString('en-US')} ring rows (built in ${(buildMs / 1000).toFixed(0)} s):`);
      console.log(`  split        ${rate(rows, s.ms).padStart(16)}  ${(s.ms / 1000).toFixed(1)} s  peak RSS ${mb(s.peak!)}  (copied ${rows.toLocaleString('en-US')}, then verified)`);
      console.log(`  read+rewrite ${rate(Number(ref.rows), ref.ms).padStart(16)}  ${(ref.ms / 1000).toFixed(1)} s  peak RSS ${mb(ref.peak!)}  (lake layer, same rows)`);
      console.log(`  duckdb copy  ${rate(Number(d.rows), d.ms).padStart(16)}  ${(d.ms / 1000).toFixed(1)} s  (COPY … WHERE repo = '@universe')`);
      console.log(`  ratios: split / read+rewrite ${(ref.ms / s.ms).toFixed(2)}x speed; split / duckdb ${(d.ms / s.ms).toFixed(2)}x speed`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (peaks.length === 2) console.log(`peak RSS difference between the two splits: ${mb(Math.abs(peaks[1]! - peaks[0]!))} (target < 64 MB)`);
}

if (role === 'build') await build(process.argv[3]!, Number(process.argv[4]));
else if (role === 'split') await split(process.argv[3]!);
else if (role === 'rewrite') await rewrite(process.argv[3]!);
else if (role === 'duck') await duck(process.argv[3]!);
else await main();
