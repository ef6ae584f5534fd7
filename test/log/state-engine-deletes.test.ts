// Engine-safe state tables (DESIGN.md "Engines read what we write"): after
// ingests, line shifts, renames, removals (repo and universe crate) and
// maintenance, the serving state tables hold no equality delete file — runs
// write position deletes — and DuckDB reading the live data files named by
// the manifests (Python avro reads those), with the position delete files
// anti-joined on (`filename`, `file_row_number`) by the spec's sequence
// number rule, holds exactly the rows `mimir table scan` gives (multisets).
// A lake made before (equality deletes, written under the test hook
// MIMIR_STATE_DELETES=equality) keeps answering, and `state maintain`
// converts it to the same checked form.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { EventLog } from '../../src/log/event-log.ts';
import { ingest, removeUniverseCrate, universeAdd } from '../../src/ingest/index.ts';
import { removeRepo } from '../../src/ingest/remove.ts';
import { CODE_NODES, STATE_TABLES, stateSchema, type StateTable } from '../../src/log/state/schema.ts';
import { maintainState } from '../../src/log/state/maintain.ts';
import { verifyState } from '../../src/log/state/verify.ts';
import { find } from '../../src/query/index.ts';
import { parseJson } from '../../src/lake/spec/json.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { noIndependentReader, planIndependently, type PlannedFile } from '../independent-reader.ts';
import { jsonLines, runCli } from '../cli/run-cli.ts';
import { sampleLake } from '../query/sample.ts';
import { Lake } from '../../src/lake/lake.ts';
import { resolvePositions } from '../../src/log/state/positions.ts';

const work = scratch('mimir-engine-deletes-');
after(() => work.cleanup());

function edit(file: string, from: string | RegExp, to: string): void {
  const t = readFileSync(file, 'utf8');
  const n = t.replace(from, to);
  assert.notEqual(n, t, `edit of ${file} changed nothing`);
  writeFileSync(file, n);
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;
const canonValue = (v: unknown): string => (v === null || v === undefined ? '∅' : String(v));

/**
 * The table's rows as DuckDB reads them: every live data file the manifests
 * name, minus the rows a live position delete file of an equal or later data
 * sequence number names (an anti-join on the file name and row number).
 */
async function duckRows(plan: PlannedFile[], cols: string[]): Promise<string[]> {
  const data = plan.filter((f) => f.content === 0);
  if (data.length === 0) return [];
  const dels = plan.filter((f) => f.content === 1);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const values = (fs: PlannedFile[]): string => fs.map((f) => `(${quote(f.path)}, ${f.seq})`).join(', ');
    const list = (fs: PlannedFile[]): string => `[${fs.map((f) => quote(f.path)).join(', ')}]`;
    const select = cols.map((c) => `d.${ident(c)}`).join(', ');
    const antiJoin =
      dels.length === 0
        ? ''
        : ` WHERE NOT EXISTS (SELECT 1 FROM read_parquet(${list(dels)}, filename = true) p JOIN (VALUES ${values(dels)}) ps(path, seq) ON p.filename = ps.path` +
          ` WHERE regexp_replace(p.file_path, '^file://', '') = d.filename AND p.pos = d.file_row_number AND ps.seq >= ds.seq)`;
    const sql =
      `SELECT ${select} FROM read_parquet(${list(data)}, filename = true, file_row_number = true, union_by_name = true) d` +
      ` JOIN (VALUES ${values(data)}) ds(path, seq) ON d.filename = ds.path${antiJoin}`;
    const rows = (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
    return rows.map((r) => cols.map((c) => canonValue(r[c])).join('|')).sort();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** `mimir table scan` of a state table (the real CLI), canonical rows. */
async function cliRows(lake: string, t: StateTable, cols: string[]): Promise<string[]> {
  const r = await runCli(['table', 'scan', `lake:mimir.${t}`], { lake });
  assert.equal(r.code, 0, `mimir table scan ${t}: ${r.stderr}`);
  return jsonLines(r.stdout).map((l) => {
    const o = parseJson(l) as Record<string, unknown>;
    return cols.map((c) => canonValue(o[c])).join('|');
  }).sort();
}

/**
 * Every state table: no equality delete file (and none at all when `noDeletes`),
 * and DuckDB's rows equal Mimir's scan (in process, and through the CLI when `cli`).
 */
async function check(log: EventLog, lake: string, what: string, opts: { cli?: boolean; noDeletes?: boolean } = {}): Promise<{ positionFiles: number }> {
  let positionFiles = 0;
  for (const t of STATE_TABLES) {
    const table = await log.table(t);
    if (!table) continue;
    const plan = planIndependently(table.metadataLocation);
    const eqFiles = plan.filter((f) => f.content === 2);
    assert.equal(eqFiles.length, 0, `${what}: ${t} holds ${eqFiles.length} equality delete file(s)`);
    if (opts.noDeletes) assert.equal(plan.filter((f) => f.content !== 0).length, 0, `${what}: ${t} holds delete files`);
    positionFiles += plan.filter((f) => f.content === 1).length;
    const have = new Set(table.schema.fields.map((f) => f.name));
    const cols = stateSchema(t).fields.map((f) => f.name).filter((c) => have.has(c));
    const mine = (await table.scan().toArray()).map((r) => cols.map((c) => canonValue(r[c])).join('|')).sort();
    assert.deepEqual(await duckRows(plan, cols), mine, `${what}: ${t} read by DuckDB differs from Mimir's scan`);
    if (opts.cli) assert.deepEqual(await cliRows(lake, t, cols), mine, `${what}: ${t} by mimir table scan`);
  }
  return { positionFiles };
}

/** The sample workspace's history: universe crate, three revisions (line shift, rename, removal), repo removed and re-added, universe crate removed. */
async function history(log: EventLog, ws: string, step: (what: string) => Promise<void>): Promise<void> {
  const lib = path.join(ws, 'crates', 'tally', 'src', 'lib.rs');
  const bucket = path.join(ws, 'crates', 'tally', 'src', 'bucket.rs');
  await universeAdd(log, [path.join(ws, 'vendor', 'fnvish-0.2.1')], { workers: 1, maintain: false });
  await ingest(log, ws, { repo: 'w', rev: 'v1', workers: 1, maintain: false });
  await step('v1');
  edit(lib, '//! Word counts in a fixed number of buckets.\n', '//! Word counts in a fixed number of buckets.\n//!\n//! (shifted)\n');
  edit(lib, 'self.buckets[i].push(word);', 'self.buckets[i].push(word.trim());');
  edit(lib, /\n$/, '\n\n/// A helper.\npub fn helper() -> usize {\n    tally_text("a b", 2).count("a")\n}\n');
  await ingest(log, ws, { repo: 'w', rev: 'v2', workers: 1, maintain: false });
  await step('v2 (lines shifted)');
  edit(bucket, 'pub fn count(&self', 'pub fn count_of(&self');
  edit(lib, 'self.buckets[i].count(word)', 'self.buckets[i].count_of(word)');
  edit(lib, /\n\/\/\/ A helper\.\npub fn helper\(\) -> usize \{\n[^}]*\}\n/, '\n');
  await ingest(log, ws, { repo: 'w', rev: 'v3', workers: 1, maintain: false });
  await step('v3 (rename, removal)');
  await removeRepo(log, 'w', { maintain: false });
  await step('repo removed');
  await ingest(log, ws, { repo: 'w', rev: 'v4', workers: 1, maintain: false });
  await removeUniverseCrate(log, 'fnvish@0.2.1', { force: true, maintain: false });
  await step('universe crate removed');
}

test('engine-safe state tables: no equality deletes after ingests, line shifts, removals and maintenance; DuckDB with position deletes anti-joined equals mimir table scan', { skip: noIndependentReader, timeout: 900_000 }, async () => {
  const ws = path.join(work.dir, 'ws-new');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const lake = path.join(work.dir, 'lake-new');
  const log = await EventLog.open(lake);
  try {
    let positionFiles = 0;
    await history(log, ws, async (what) => {
      positionFiles += (await check(log, lake, what)).positionFiles;
    });
    assert.ok(positionFiles > 0, 'the runs deleted rows with position delete files');
    await check(log, lake, 'before maintenance', { cli: true });
    const v = await verifyState(log);
    assert.ok(v.equal, `state verify before maintenance: ${JSON.stringify(v.differences.slice(0, 3))}`);
    const r = await maintainState(log, { force: true });
    assert.ok(r.tables.some((t) => t.action === 'major'), 'maintenance rewrote');
    await check(log, lake, 'after state maintain --force', { cli: true, noDeletes: true });
    assert.ok((await verifyState(log)).equal, 'state verify after maintenance');
  } finally {
    log.close();
  }
});

test('engine-safe state tables: a lake made with equality deletes answers, and state maintain converts it to the checked form', { skip: noIndependentReader, timeout: 900_000 }, async () => {
  const ws = path.join(work.dir, 'ws-old');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const lake = path.join(work.dir, 'lake-old');
  const log = await EventLog.open(lake);
  const was = process.env.MIMIR_STATE_DELETES;
  try {
    process.env.MIMIR_STATE_DELETES = 'equality';
    await history(log, ws, async () => undefined);
    await ingest(log, ws, { repo: 'w', rev: 'v5', workers: 1, maintain: false });
    if (was === undefined) delete process.env.MIMIR_STATE_DELETES;
    else process.env.MIMIR_STATE_DELETES = was;
    let eqFiles = 0;
    for (const t of STATE_TABLES) {
      const table = await log.table(t);
      if (table) eqFiles += planIndependently(table.metadataLocation).filter((f) => f.content === 2).length;
    }
    assert.ok(eqFiles > 0, 'the old lake holds equality delete files');
    // before conversion it answers (reads apply equality deletes)
    const before = JSON.stringify(await find(log, 'tally::*'), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    assert.ok((await verifyState(log)).equal, 'state verify on the old lake');
    // a run on the old lake adds position deletes beside the equality ones
    edit(path.join(ws, 'crates', 'tally', 'src', 'bucket.rs'), 'pub fn count_of(&self', 'pub fn count_again(&self');
    edit(path.join(ws, 'crates', 'tally', 'src', 'lib.rs'), 'self.buckets[i].count_of(word)', 'self.buckets[i].count_again(word)');
    await ingest(log, ws, { repo: 'w', rev: 'v6', workers: 1, maintain: false });
    let posFiles = 0;
    for (const t of STATE_TABLES) {
      const table = await log.table(t);
      if (table) posFiles += planIndependently(table.metadataLocation).filter((f) => f.content === 1).length;
    }
    assert.ok(posFiles > 0, 'the run on the old lake deleted with position delete files');
    assert.ok((await verifyState(log)).equal, 'state verify with both kinds of deletes');
    await maintainState(log);
    await check(log, lake, 'old lake after state maintain', { cli: true, noDeletes: true });
    assert.ok((await verifyState(log)).equal, 'state verify after conversion');
    const after = JSON.stringify(await find(log, 'tally::*'), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    assert.notEqual(after, before, 'the rename after is seen');
    assert.match(after, /count_again/);
  } finally {
    if (was === undefined) delete process.env.MIMIR_STATE_DELETES;
    else process.env.MIMIR_STATE_DELETES = was;
    log.close();
  }
});

test('engine-safe state tables: state maintain converts equality deletes even below its thresholds (a lake made before, few runs)', { skip: noIndependentReader, timeout: 300_000 }, async () => {
  const lake = path.join(work.dir, 'lake-sample');
  const was = process.env.MIMIR_STATE_DELETES;
  process.env.MIMIR_STATE_DELETES = 'equality';
  let s: Awaited<ReturnType<typeof sampleLake>>;
  try {
    s = await sampleLake(lake);
  } finally {
    if (was === undefined) delete process.env.MIMIR_STATE_DELETES;
    else process.env.MIMIR_STATE_DELETES = was;
  }
  const log = s.log;
  try {
    const nodes = (await log.table(CODE_NODES))!;
    const eq = planIndependently(nodes.metadataLocation).filter((f) => f.content === 2).length;
    assert.ok(eq > 0 && eq <= 8, `code_nodes holds a few equality delete files (${eq}), under the threshold of 8`);
    const r = await maintainState(log);
    assert.equal(r.tables.find((t) => t.table === CODE_NODES)?.action, 'major', 'code_nodes rewritten for its equality deletes');
    await check(log, lake, 'sample lake after state maintain', { noDeletes: true });
    assert.ok((await verifyState(log)).equal, 'state verify after conversion');
  } finally {
    log.close();
  }
});

test('engine-safe state tables: a delta resolves its ids to the same (file, position) pairs with an IN filter and, past 4000 ids, by reading the id column whole', async () => {
  const lake = Lake.open(path.join(work.dir, 'lake-resolve'));
  const schema = { schemaId: 0, fields: [{ id: 1, name: 'id', required: true, type: { type: 'string' as const } }, { id: 2, name: 'n', required: false, type: { type: 'int' as const } }] };
  const t = await lake.createTable({ namespace: ['s'], name: 't' }, schema);
  const ids = (from: number, to: number): string[] => Array.from({ length: to - from }, (_v, i) => `id${String(from + i).padStart(5, '0')}`);
  for (const [a, z] of [[0, 300], [300, 700]]) {
    const list = ids(a!, z!);
    await t.append([{ fields: schema.fields, numRows: list.length, columns: [list, list.map((_v, i) => i)] }]);
  }
  const wanted = ids(0, 700).filter((_v, i) => i % 7 === 3);
  const few = await resolvePositions(t, wanted);
  const many = await resolvePositions(t, [...wanted, ...ids(10_000, 15_000)]);
  const key = (r: { deletes: { path: string; pos: bigint }[] }): string[] => r.deletes.map((d) => `${path.basename(d.path)}@${d.pos}`).sort();
  assert.equal(few.deletes.length, wanted.length);
  assert.deepEqual(key(many), key(few));
  assert.deepEqual([...many.referenced].sort(), [...few.referenced].sort());
  assert.equal(few.referenced.size, 2);
});
