// Page checksums: every page Mimir writes carries the CRC32 of its stored
// bytes (flat writer and hyparquet-writer's generic path alike), and a read of
// a Mimir-written file whose page bytes were damaged fails naming the file —
// it never answers from damaged bytes. Also: DuckDB still reads the files.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { parquetMetadata } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { DuckDBInstance } from '@duckdb/node-api';
import { repoRoot, scratch } from '../helpers.ts';
import { encodeDataFile } from '../../src/lake/parquet/write.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest } from '../../src/ingest/index.ts';
import type { Batch, NestedField, Value } from '../../src/lake/spec/types.ts';
import type { Table } from '../../src/lake/table/table.ts';

const work = scratch('mimir-parquet-crc-');
after(work.cleanup);

interface Page {
  /** Where the page's header starts, and its stored bytes (after the header) begin and end. */
  at: number;
  body: number;
  end: number;
  crc: number | undefined;
}

/** Every page of every column chunk of a Parquet file, walked from the footer's chunk offsets. */
function pagesOf(bytes: Uint8Array): Page[] {
  const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
  const out: Page[] = [];
  for (const rg of md.row_groups) {
    for (const c of rg.columns) {
      const m = c.meta_data!;
      let at = Number(m.dictionary_page_offset ?? m.data_page_offset);
      const end = at + Number(m.total_compressed_size);
      while (at < end) {
        const reader = { view: new DataView(bytes.buffer, bytes.byteOffset + at, end - at), offset: 0 };
        const h = parquetHeader(reader);
        const body = at + reader.offset;
        out.push({ at, body, end: body + h.compressed_page_size, crc: h.crc });
        at = body + h.compressed_page_size;
      }
    }
  }
  return out;
}

const fields: NestedField[] = [
  { id: 1, name: 'name', required: true, type: { type: 'string' } },
  { id: 2, name: 'n', required: false, type: { type: 'long' } },
  { id: 3, name: 'ok', required: false, type: { type: 'boolean' } },
];

function sampleBatch(rows: number): Batch {
  const cols: Value[][] = [[], [], []];
  for (let i = 0; i < rows; i++) {
    cols[0]!.push(`item-${i % 37}-${i}`);
    cols[1]!.push(i % 5 === 0 ? null : BigInt(i * 7));
    cols[2]!.push(i % 3 === 0 ? null : i % 2 === 0);
  }
  return { fields, numRows: rows, columns: cols };
}

for (const generic of [false, true]) {
  test(`parquet checksum: every page the ${generic ? 'generic' : 'flat'} writer makes holds the CRC32 of its stored bytes`, async () => {
    const { bytes } = await encodeDataFile({ schemaId: 0, fields, identifierFieldIds: [] }, [sampleBatch(3000)], { pageBytes: 2048, rowGroupRows: 1000, genericWriter: generic });
    const pages = pagesOf(bytes);
    assert.ok(pages.length > 9, `several pages a chunk (found ${pages.length})`);
    for (const p of pages) {
      assert.notEqual(p.crc, undefined, `page at ${p.at} has a crc`);
      assert.equal(p.crc, crc32(bytes.subarray(p.body, p.end)) | 0, `page at ${p.at}: crc of its stored bytes`);
    }
  });
}

// ---- a real lake: every state and event table's files, damaged one byte at a time

let lakeDir = '';
let saved = '';

before(async () => {
  const ws = path.join(work.dir, 'ws');
  cpSync(path.join(repoRoot, 'test', 'ingest', 'fixtures', 'ws'), ws, { recursive: true });
  lakeDir = path.join(work.dir, 'lake');
  const log = await EventLog.open(lakeDir);
  try {
    await ingest(log, ws, { repo: 'demo', workers: 0 });
  } finally {
    log.close();
  }
  saved = path.join(work.dir, 'saved');
  cpSync(lakeDir, saved, { recursive: true });
});

/** Rows of a table as a sorted list of their JSON forms (a multiset). */
async function rowsOf(t: Table): Promise<string[]> {
  const out: string[] = [];
  for await (const r of t.scan().rows()) out.push(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Array.from(v) : v)));
  return out.sort();
}

/** A small deterministic generator (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FLIPS = 50;

test('parquet checksum: a byte flipped at 50 random places in the pages of each state and event table\'s files: every read fails naming the file, none answers differently; DuckDB reads the undamaged files', { timeout: 20 * 60_000 }, async () => {
  const log = await EventLog.open(lakeDir);
  const names: string[] = [];
  const filesOf = new Map<string, string[]>();
  const baseline = new Map<string, string[]>();
  try {
    for (const id of log.lake.catalog.listTables(['mimir'])) {
      const t = await log.lake.loadTable(id);
      const files = (await t.dataFiles()).map((f) => f.file.filePath).filter((p) => p.endsWith('.parquet')).map((p) => (p.startsWith('file:') ? fileURLToPath(p) : p));
      if (files.length === 0) continue;
      names.push(id.name);
      filesOf.set(id.name, files);
      baseline.set(id.name, await rowsOf(t));
    }
  } finally {
    log.close();
  }
  // the event tables and the serving state tables, at least
  for (const must of ['code_node_events', 'code_edge_events', 'code_file_events', 'ingest_runs']) assert.ok(names.includes(must), `${must} has data files (tables: ${names.join(', ')})`);
  assert.ok(names.length >= 8, `event and state tables with data (found ${names.join(', ')})`);

  const rnd = prng(20261207);
  let failed = 0;
  let same = 0;
  for (const name of names) {
    const files = filesOf.get(name)!;
    // the stored bytes of every page of the table's files: where the CRC is the guard
    const spots: { file: string; offset: number }[] = [];
    for (const f of files) for (const p of pagesOf(new Uint8Array(readFileSync(f)))) for (let o = p.body; o < p.end; o++) spots.push({ file: f, offset: o });
    assert.ok(spots.length > 0, `${name}: page bytes to damage`);
    for (let i = 0; i < FLIPS; i++) {
      const { file, offset } = spots[Math.floor(rnd() * spots.length)]!;
      const good = readFileSync(file);
      const bad = Buffer.from(good);
      bad[offset] = bad[offset]! ^ (1 << Math.floor(rnd() * 8));
      writeFileSync(file, bad);
      const l = await EventLog.open(lakeDir, { readOnly: true });
      try {
        const rows = await rowsOf(await l.lake.loadTable({ namespace: ['mimir'], name }));
        assert.deepEqual(rows, baseline.get(name), `${name}: byte ${offset} of ${path.basename(file)} flipped, and the read answered differently`);
        same++;
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        assert.match((e as Error).message, new RegExp(path.basename(file).replace(/[.]/g, '\\.')), `${name}: the error names the damaged file`);
        failed++;
      } finally {
        l.close();
        writeFileSync(file, good);
      }
    }
  }
  // a flip inside a checked page can never pass: the reads that answered are none
  assert.equal(same, 0, `every damaged read failed (${failed} failed, ${same} answered the same)`);

  // DuckDB reads the undamaged files, CRCs and all, with the same row counts
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    for (const name of names) {
      let n = 0;
      for (const f of filesOf.get(name)!) {
        const r = await con.runAndReadAll(`select count(*) as n from read_parquet('${f.replace(/'/g, "''")}')`);
        n += Number(r.getRows()[0]![0]);
      }
      // data files minus deleted rows would differ for tables with deletes: compare the files' own rows
      const own = (await (async () => {
        let rows = 0;
        for (const f of filesOf.get(name)!) rows += Number(parquetMetadata(new Uint8Array(readFileSync(f)).buffer).num_rows);
        return rows;
      })());
      assert.equal(n, own, `${name}: DuckDB reads every row of its files`);
    }
  } finally {
    con.closeSync();
  }
});
