// The source in the lake (issue 9 part 7): file contents are stored once per content hash
// (across repos, crates and versions) in mimir.code_sources, zstd Parquet, in the run's own
// commit, only for hashes the lake does not hold; any generation's text reads back without
// the checkout.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ingest, universeAdd } from '../../src/ingest/index.ts';
import { CODE_SOURCES, ensureSourcesTable, sha256Hex, SourcesWriter } from '../../src/log/blobs.ts';
import { contextLines, readSource, readSourceText } from '../../src/query/index.ts';
import { parquetMetadata } from 'hyparquet';
import { repoRoot } from '../helpers.ts';
import { copyFixture, freshLake } from './helpers.ts';

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

async function blobs(log: Awaited<ReturnType<typeof freshLake>>['log']): Promise<Map<string, string>> {
  const t = await log.table(CODE_SOURCES);
  assert.ok(t, 'the lake has mimir.code_sources');
  const out = new Map<string, string>();
  let rows = 0;
  for await (const b of t.scan({ columns: ['hash', 'text'] }).batches()) {
    for (let i = 0; i < b.numRows; i++) out.set(b.columns[0]![i] as string, b.columns[1]![i] as string);
    rows += b.numRows;
  }
  assert.equal(rows, out.size, 'no content is stored twice');
  return out;
}

test('each distinct content is stored once, in the run\'s commit, and only when new; every generation reads back without the checkout', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const ws = copyFixture('ws', lake.dir);
  const lib = path.join(ws, 'alpha', 'src', 'lib.rs');
  const original = readFileSync(lib, 'utf8');
  const first = await ingest(lake.log, ws, { repo: 'demo', workers: 0 });
  assert.ok(first.sources && first.sources.blobs === first.parsed, JSON.stringify(first.sources));
  const stored = await blobs(lake.log);
  assert.equal(stored.size, first.parsed);
  for (const [h, text] of stored) assert.equal(sha256Hex(text), h, 'a row is keyed by the sha256 of its text');
  assert.equal(stored.get(sha256Hex(original)), original);
  // the table's rows landed with the run: the generation before it has no sources yet
  const before = lake.log.pin({ generation: first.generation - 1n });
  try {
    const t = await before.table(CODE_SOURCES);
    let n = 0;
    if (t) for await (const b of t.scan({ columns: ['hash'] }).batches()) n += b.numRows;
    assert.equal(n, 0);
  } finally {
    before.close();
  }
  // zstd pages
  const t = (await lake.log.table(CODE_SOURCES))!;
  const [file] = await t.dataFiles();
  const bytes = readFileSync(file!.file.filePath.replace(/^file:(\/\/)?/, ''));
  const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  assert.deepEqual([...new Set(meta.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data!.codec)))], ['ZSTD']);

  // unchanged: nothing stored; the same files in another repo: present, nothing stored
  const again = await ingest(lake.log, ws, { repo: 'demo', workers: 0 });
  assert.equal(again.sources!.blobs, 0);
  const other = await ingest(lake.log, ws, { repo: 'demo2', workers: 0 });
  assert.equal(other.sources!.blobs, 0);
  assert.equal(other.sources!.present, first.parsed);
  assert.equal((await blobs(lake.log)).size, first.parsed);

  // an edit stores the new content only; both generations read back after the checkout is gone
  writeFileSync(lib, original.replace('pub fn', '// edited\npub fn'));
  const edited = await ingest(lake.log, ws, { repo: 'demo', workers: 0 });
  assert.equal(edited.sources!.blobs, 1);
  const edit = readFileSync(lib, 'utf8');
  rmSync(ws, { recursive: true });
  const file0 = { repo: 'demo', krate: 'alpha@0.1.0', path: 'src/lib.rs' };
  assert.equal(await readSourceText(lake.log, file0, { asOf: { generation: first.generation } }), original);
  assert.equal(await readSourceText(lake.log, file0), edit);
  const at = await readSource(lake.log, file0, { asOf: { generation: edited.generation } });
  assert.equal(at?.hash, sha256Hex(edit));
  assert.equal(await readSourceText(lake.log, { ...file0, path: 'src/nosuch.rs' }), null);
  assert.equal(await readSourceText(lake.log, { ...file0, repo: 'nosuch' }), null);
});

test('universe crates share contents across versions: an identical file in two versions is stored once', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const vendor = path.join(repoRoot, 'samples', 'workspace', 'vendor', 'fnvish-0.2.1');
  const v1 = path.join(lake.dir, 'reg', 'fnvish-0.2.1');
  const v2 = path.join(lake.dir, 'reg', 'fnvish-0.2.2');
  cpSync(vendor, v1, { recursive: true });
  cpSync(vendor, v2, { recursive: true });
  const toml = path.join(v2, 'Cargo.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace('0.2.1', '0.2.2'));
  const r = await universeAdd(lake.log, [path.join(lake.dir, 'reg')], { workers: 0 });
  assert.equal(r.crates, 2);
  assert.equal(r.sources!.blobs * 2, r.parsed, JSON.stringify(r.sources));
  assert.equal(r.sources!.present, r.sources!.blobs);
});

test('contextLines: N lines around a line, clipped to the file', () => {
  const text = 'a\nb\nc\nd\ne\n';
  assert.deepEqual(contextLines(text, 3, 1), [{ line: 2, text: 'b' }, { line: 3, text: 'c' }, { line: 4, text: 'd' }]);
  assert.deepEqual(contextLines(text, 1, 2).map((l) => l.line), [1, 2, 3]);
  assert.deepEqual(contextLines(text, 5, 3).map((l) => l.line), [2, 3, 4, 5]);
  assert.deepEqual(contextLines('x\r\ny', 2, 0), [{ line: 2, text: 'y' }]);
});

test('a run reads the new contents READ_AHEAD at a time: every readable file that still hashes as extracted is stored once, a missing or changed one is counted and not stored', async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  await ensureSourcesTable(lake.log.lake);
  const dir = path.join(lake.dir, 'files');
  mkdirSync(dir);
  const writer = await SourcesWriter.open(lake.log, lake.log, () => {});
  assert.ok(writer);
  const expected = new Map<string, string>();
  // 40 files, more than the reads in flight: every 7th removed and every 5th changed after hashing
  for (let i = 0; i < 40; i++) {
    const file = path.join(dir, `f${i}.rs`);
    const text = `pub fn f${i}() {}\n`;
    writeFileSync(file, text);
    const hash = sha256Hex(Buffer.from(text));
    if (i % 7 === 3) rmSync(file);
    else if (i % 5 === 1) writeFileSync(file, `pub fn changed${i}() {}\n`);
    else expected.set(hash, text);
    await writer.want(hash, file);
    if (i % 10 === 0) await writer.want(hash, file); // wanted twice: present once more, stored once
  }
  const target = await writer.finish();
  assert.ok(target);
  await lake.log.lake.commit([{ ident: target.ident, update: target.update() }]);
  assert.deepEqual(await blobs(lake.log), expected);
  const lost = [...Array(40).keys()].filter((i) => i % 7 === 3 || i % 5 === 1).length;
  assert.equal(writer.written.changed, lost);
  assert.equal(writer.written.present, 4);
  assert.equal(writer.written.blobs, 40 - lost);
});
