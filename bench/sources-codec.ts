// `node --import tsx bench/sources-codec.ts [--dir D]`: the page compression of
// mimir.code_sources (log/blobs.ts) measured on a corpus of Rust sources (default:
// the Debian crates of /usr/share/cargo/registry): every distinct .rs content encoded
// as the table's Parquet file (hash, size, text; sorted by hash; 256-row groups) with
// each codec our writer supports (uncompressed, snappy, gzip, zstd at levels 1, 3, 9,
// 19). Prints bytes, ratio and encode time per codec. A benchmark prints; it asserts nothing.
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { encodeDataFile, type DataFileWriteOptions } from '../src/lake/parquet/write.ts';
import { SOURCES_SCHEMA, sha256Hex } from '../src/log/blobs.ts';

const args = process.argv.slice(2);
const i = args.indexOf('--dir');
const corpus = i >= 0 ? args[i + 1]! : '/usr/share/cargo/registry';

async function* rsFiles(dir: string): AsyncGenerator<string> {
  let entries;
  try { entries = await readdir(dir, { withFileTypes: true }); } catch { return; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'target') yield* rsFiles(p);
    else if (e.isFile() && e.name.endsWith('.rs')) yield p;
  }
}

const blobs = new Map<string, { text: string; size: number }>();
let seen = 0;
for await (const f of rsFiles(corpus)) {
  const bytes = await readFile(f);
  seen++;
  if (bytes.length > 4 << 20) continue;
  const text = bytes.toString('utf8');
  if (Buffer.byteLength(text) !== bytes.length) continue; // not UTF-8: not stored
  blobs.set(sha256Hex(bytes), { text, size: bytes.length });
}
if (blobs.size === 0) {
  console.log(`bench sources-codec skipped: no .rs file under ${corpus}`);
  process.exit(0);
}
const rows = [...blobs].sort(([a], [b]) => (a < b ? -1 : 1));
const raw = rows.reduce((n, [, b]) => n + b.size, 0);
const batch = { fields: SOURCES_SCHEMA.fields, numRows: rows.length, columns: [rows.map(([h]) => h), rows.map(([, b]) => BigInt(b.size)), rows.map(([, b]) => b.text)] };
console.log(`corpus   ${corpus}: ${seen} .rs files, ${blobs.size} distinct contents, ${(raw / 1048576).toFixed(1)} MB`);
const runs: [string, DataFileWriteOptions][] = [
  ['uncompressed', { codec: 'uncompressed' }], ['snappy', { codec: 'snappy' }], ['gzip', { codec: 'gzip' }],
  ['zstd 1', { codec: 'zstd', zstdLevel: 1 }], ['zstd 3', { codec: 'zstd', zstdLevel: 3 }], ['zstd 9', { codec: 'zstd', zstdLevel: 9 }], ['zstd 19', { codec: 'zstd', zstdLevel: 19 }],
];
for (const [name, opts] of runs) {
  const t0 = performance.now();
  const { bytes } = await encodeDataFile(SOURCES_SCHEMA, [batch], { ...opts, rowGroupRows: 256 });
  const s = (performance.now() - t0) / 1000;
  console.log(`${name.padEnd(13)} ${(bytes.length / 1048576).toFixed(2).padStart(7)} MB  ratio ${(raw / bytes.length).toFixed(2).padStart(5)}  encode ${s.toFixed(2)} s (${(raw / 1048576 / s).toFixed(1)} MB/s)`);
}
