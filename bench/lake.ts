// bench:lake — the lake layer's write and scan speed on 1M rows of about 200
// bytes, beside DuckDB doing the same work on the same machine in the same
// run (appender + COPY to zstd Parquet; full and filtered scans of the very
// files Mimir wrote). Prints figures and ratios; it is not a test.
//
//   npm run bench:lake [-- --rows N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { Lake } from '../src/lake/lake.ts';
import { and, ge, lt } from '../src/lake/expr/expr.ts';
import type { Batch, Schema, Value } from '../src/lake/spec/types.ts';

const argRows = process.argv.indexOf('--rows');
const N = argRows > 0 ? Number(process.argv[argRows + 1]) : 1_000_000;
const BATCH = 100_000;

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'krate', required: true, type: { type: 'string' } },
    { id: 3, name: 'run', required: true, type: { type: 'long' } },
    { id: 4, name: 'ts', required: true, type: { type: 'long' } },
    { id: 5, name: 'op', required: true, type: { type: 'string' } },
    { id: 6, name: 'id', required: true, type: { type: 'long' } },
    { id: 7, name: 'name', required: false, type: { type: 'string' } },
    { id: 8, name: 'qpath', required: false, type: { type: 'string' } },
    { id: 9, name: 'file', required: false, type: { type: 'string' } },
    { id: 10, name: 'line', required: false, type: { type: 'int' } },
  ],
};

/** Rows [from, from+n): sorted by id, ~200 bytes each. */
function makeBatch(from: number, n: number): Batch {
  const cols: Value[][] = schema.fields.map(() => new Array<Value>(n));
  const ops = ['add', 'change', 'remove'];
  for (let i = 0; i < n; i++) {
    const k = from + i;
    const crate = `crate_${(k >> 10) % 1000}`;
    cols[0]![i] = k % 5 === 0 ? '@universe' : `repo-${k % 7}`;
    cols[1]![i] = `${crate}@1.${k % 13}.0`;
    cols[2]![i] = BigInt(k >> 16);
    cols[3]![i] = 1_700_000_000_000_000n + BigInt(k) * 1000n;
    cols[4]![i] = ops[k % 3]!;
    cols[5]![i] = BigInt(k);
    cols[6]![i] = `item_${k.toString(36)}`;
    cols[7]![i] = `${crate}::module_${k % 97}::submodule::item_${k.toString(36)}`;
    cols[8]![i] = `src/module_${k % 97}/submodule_${k % 11}.rs`;
    cols[9]![i] = k % 5000;
  }
  return { fields: schema.fields, numRows: n, columns: cols };
}

function* batches(): Generator<Batch> {
  for (let from = 0; from < N; from += BATCH) yield makeBatch(from, Math.min(BATCH, N - from));
}

const rate = (rows: number, ms: number): string => `${Math.round(rows / (ms / 1000)).toLocaleString('en-US')} rows/s`;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mimir-bench-lake-'));
  try {
    console.log(`bench:lake — ${N.toLocaleString('en-US')} rows, ${schema.fields.length} columns (~200 B/row), node ${process.version}`);
    // --- Mimir
    const lake = Lake.open(path.join(dir, 'lake'));
    const t = await lake.createTable({ namespace: ['bench'], name: 'events' }, schema, {
      properties: { 'mimir.write.file-rows': String(N) },
    });
    // pre-generate outside the timer: we time the lake, not the generator
    const input = [...batches()];
    let t0 = performance.now();
    await t.append(input);
    const appendMs = performance.now() - t0;
    input.length = 0;

    const files = (await t.dataFiles()).map((f) => fileURLToPath(f.file.filePath));
    const bytes = (await t.dataFiles()).reduce((s, f) => s + Number(f.file.fileSizeInBytes), 0);

    t0 = performance.now();
    let full = 0;
    for await (const b of t.scan().batches()) full += b.numRows;
    const fullMs = performance.now() - t0;

    t0 = performance.now();
    let two = 0;
    for await (const b of t.scan({ columns: ['krate', 'id'] }).batches()) two += b.numRows;
    const twoMs = performance.now() - t0;

    const lo = Math.floor(N * 0.42);
    const hi = lo + Math.floor(N / 100);
    t0 = performance.now();
    const fs = t.scan({ filter: and(ge('id', lo), lt('id', hi)) });
    let filtered = 0;
    for await (const b of fs.batches()) filtered += b.numRows;
    const filtMs = performance.now() - t0;
    lake.close();

    // --- DuckDB on the same machine, same run
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(
      `create table ev (repo varchar, krate varchar, run bigint, ts bigint, op varchar, id bigint, name varchar, qpath varchar, file varchar, line integer)`,
    );
    const gen = [...batches()];
    t0 = performance.now();
    const app = await c.createAppender('ev');
    for (const b of gen) {
      const [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9] = b.columns as [string[], string[], bigint[], bigint[], string[], bigint[], string[], string[], string[], number[]];
      for (let i = 0; i < b.numRows; i++) {
        app.appendVarchar(c0[i]!);
        app.appendVarchar(c1[i]!);
        app.appendBigInt(c2[i]!);
        app.appendBigInt(c3[i]!);
        app.appendVarchar(c4[i]!);
        app.appendBigInt(c5[i]!);
        app.appendVarchar(c6[i]!);
        app.appendVarchar(c7[i]!);
        app.appendVarchar(c8[i]!);
        app.appendInteger(c9[i]!);
        app.endRow();
      }
    }
    app.closeSync();
    const duckParquet = path.join(dir, 'duck.parquet');
    await c.run(`copy ev to '${duckParquet}' (format parquet, compression zstd)`);
    const duckAppendMs = performance.now() - t0;
    gen.length = 0;

    const list = `[${files.map((f) => `'${f}'`).join(',')}]`;
    t0 = performance.now();
    const r1 = await c.runAndReadAll(
      `select count(*), max(repo), max(krate), max(run), max(ts), max(op), max(id), max(name), max(qpath), max(file), max(line) from read_parquet(${list})`,
    );
    const duckFullMs = performance.now() - t0;
    t0 = performance.now();
    await c.runAndReadAll(`select count(*), max(krate), max(id) from read_parquet(${list})`);
    const duckTwoMs = performance.now() - t0;
    t0 = performance.now();
    const r3 = await c.runAndReadAll(`select * from read_parquet(${list}) where id >= ${lo} and id < ${hi}`);
    const duckFiltMs = performance.now() - t0;
    const duckRows = Number(r1.getRows()[0]![0]);
    const duckFiltered = r3.getRows().length;

    const line = (what: string, rows: number, ms: number, dRows: number, dMs: number): void => {
      const ratio = (rows / ms) / (dRows / dMs);
      console.log(
        `${what.padEnd(26)} mimir ${rate(rows, ms).padStart(18)} (${ms.toFixed(0)} ms)   duckdb ${rate(dRows, dMs).padStart(18)} (${dMs.toFixed(0)} ms)   ratio ${ratio.toFixed(2)}x`,
      );
    };
    console.log(`data: ${files.length} file(s), ${(bytes / 1e6).toFixed(1)} MB zstd Parquet`);
    line('append (write+commit)', N, appendMs, N, duckAppendMs);
    line('full scan, all columns', full, fullMs, duckRows, duckFullMs);
    line('scan, 2 columns', two, twoMs, duckRows, duckTwoMs);
    line(`filtered scan (1%)`, filtered, filtMs, duckFiltered, duckFiltMs);
    console.log(
      `filtered scan: ${filtered} rows, ${fs.metrics.rowGroups} row group(s) read, ${fs.metrics.rowGroupsSkipped} skipped; duckdb ${duckFiltered} rows`,
    );
    console.log('(duckdb full scans aggregate inside the engine; Mimir materialises every value in JS)');
    if (full !== N || duckRows !== N || filtered !== duckFiltered) {
      console.error(`MISMATCH: mimir full ${full}, duckdb ${duckRows}; filtered ${filtered} vs ${duckFiltered}`);
      process.exitCode = 1;
    }
    c.closeSync();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
