// `npm run bench:ingest`: ingest Debian's librust-*-dev crate sources
// (/usr/share/cargo/registry, installed by scripts/install-debian-crates.sh)
// into an empty lake, end to end, and compare with parse-only speed of the
// same files with the same grammar in the same process.
//
// Prints: source MB, files, seconds, MB/s end to end, events written, peak
// RSS, parse-only MB/s (one thread) and the ratio. Installs nothing; skips with
// a message when the corpus is absent. Flags: --workers N (default 2),
// --compare (also time the same ingest with one worker thread), --dir D,
// --timeout-ms T (per-crate extraction limit, default 30000), --tsx (time the
// TypeScript sources instead of the build; `npm run bench:ingest` builds first).
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { IngestReport } from '../src/ingest/index.ts';
import { distStaleReason, importCode } from './built.ts';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const corpus = flag('--dir') ?? '/usr/share/cargo/registry';
const workers = Number(flag('--workers') ?? 2);
const compare = args.includes('--compare');
// the product's code (dist/) unless --tsx or the build is stale (then the sources, said in the report)
const stale = args.includes('--tsx') ? '--tsx given' : distStaleReason();
const useDist = stale === undefined;
const { decodeSource, DEFAULT_MAX_FILE_BYTES, parseOnly, readCrateDir } = await importCode<typeof import('../src/extract/index.ts')>('extract/index', useDist);
const { expandCrateDirs, formatIngestReport, universeAdd } = await importCode<typeof import('../src/ingest/index.ts')>('ingest/index', useDist);
const { EventLog } = await importCode<typeof import('../src/log/event-log.ts')>('log/event-log', useDist);
const { inList } = await importCode<typeof import('../src/lake/expr/expr.ts')>('lake/expr/expr', useDist);
/** Per-crate extraction limit: a crate that runs past it is reported and skipped (see the report's problems). */
const timeoutMs = Number(flag('--timeout-ms') ?? 30_000);
const MIN_CRATES = 40;

const { dirs } = await expandCrateDirs([corpus]);
if (dirs.length < MIN_CRATES) {
  console.log(`bench:ingest skipped: ${corpus} holds ${dirs.length} crate folders, fewer than ${MIN_CRATES}; run scripts/install-debian-crates.sh (as root, with apt) first`);
  process.exit(0);
}

const mb = (b: number) => b / (1024 * 1024);
const fmt = (x: number, d = 1) => x.toFixed(d);

/** Bytes of the files under `dir` (0 when absent). */
async function du(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await du(p);
    else if (e.isFile()) total += (await stat(p)).size;
  }
  return total;
}

async function timedIngest(w: number): Promise<{ report: IngestReport; s: number; written: bigint; parsed: { krate: string; path: string }[]; lakeBytes: number; sourcesBytes: number }> {
  const lakeDir = mkdtempSync(path.join(tmpdir(), 'mimir-bench-ingest-'));
  try {
    const log = await EventLog.open(lakeDir);
    const g0 = log.lake.catalog.pointerGeneration();
    const t0 = performance.now();
    const report = await universeAdd(log, [corpus], { workers: w, extractTimeoutMs: timeoutMs });
    const s = (performance.now() - t0) / 1000;
    const written = log.lake.catalog.pointerGeneration() - g0;
    const parsed = (await log.rows('file', { filter: inList('parse_status', ['ok', 'errors']), columns: ['krate', 'path'] }))
      .map((row) => ({ krate: row['krate'] as string, path: row['path'] as string }));
    log.close();
    // the lake on disk, and the part that is the stored file contents (mimir.code_sources)
    const lakeBytes = await du(lakeDir);
    const sourcesBytes = await du(path.join(lakeDir, 'mimir', 'code_sources'));
    return { report, s, written, parsed, lakeBytes, sourcesBytes };
  } finally {
    await rm(lakeDir, { recursive: true, force: true });
  }
}

const main = await timedIngest(workers);
const r = main.report;
const events = r.events.add + r.events.change + r.events.remove;
const rssMb = process.resourceUsage().maxRSS / 1024;
console.log(formatIngestReport(r));
for (const p of r.problems.filter((q) => q.kind === 'extract-failed')) console.log(`  ${p.message}`);

// Parse-only: exactly the files the ingest parsed (as its file rows say), same grammar, one thread.
const dirOf = new Map<string, string>();
for (const d of dirs) {
  const { pkg } = await readCrateDir(d);
  if (pkg && !dirOf.has(`${pkg.name}@${pkg.version}`)) dirOf.set(`${pkg.name}@${pkg.version}`, d);
}
const files = main.parsed.flatMap((f) => (dirOf.has(f.krate) ? [path.resolve(dirOf.get(f.krate)!, f.path)] : []));
const texts: string[] = [];
let parseBytes = 0;
for (const f of files) {
  const bytes = await readFile(f).catch(() => null);
  if (!bytes) continue;
  const dec = decodeSource(bytes, DEFAULT_MAX_FILE_BYTES);
  if (!dec.ok) continue;
  texts.push(dec.text);
  parseBytes += bytes.length;
}
const parse = await parseOnly();
const p0 = performance.now();
for (const t of texts) parse(t);
const parseS = (performance.now() - p0) / 1000;

const e2e = mb(r.bytes) / main.s;
const po = mb(parseBytes) / parseS;
console.log([
  `code          ${useDist ? 'compiled dist/ (what `mimir` runs)' : `TypeScript sources through tsx (${stale})`}`,
  `corpus        ${corpus}: ${dirs.length} crate folders, ${r.crates} crate versions, ${r.problems.length} problems`,
  `source        ${fmt(mb(r.bytes))} MB in ${r.parsed} parsed files (${r.files} files seen)`,
  `end to end    ${fmt(main.s, 2)} s, ${fmt(e2e, 2)} MB/s with ${workers} worker thread(s), ${events} events, ${main.written} commits`,
  `lake size     ${fmt(mb(main.lakeBytes))} MB on disk, of which sources (mimir.code_sources) ${fmt(mb(main.sourcesBytes))} MB `
    + `(${fmt((100 * main.sourcesBytes) / Math.max(1, main.lakeBytes))}%; ${r.sources?.blobs ?? 0} contents, ${fmt(mb(r.sources?.bytes ?? 0))} MB of text)`,
  `peak RSS      ${fmt(rssMb, 0)} MB (process, all threads; includes the parse-only pass)`,
  `parse only    ${fmt(mb(parseBytes))} MB in ${texts.length} files, ${fmt(parseS, 2)} s, ${fmt(po, 2)} MB/s (one thread)`,
  `ratio         end to end / parse only = ${fmt(e2e / po, 2)}`,
].join('\n'));

if (compare) {
  // one worker thread (not 0: only worker jobs have the extraction time limit)
  const single = await timedIngest(1);
  console.log(`compare       same ingest with 1 worker thread: ${fmt(single.s, 2)} s, ${fmt(mb(single.report.bytes) / single.s, 2)} MB/s; `
    + `${workers} workers are ${fmt(single.s / main.s, 2)}x as fast`);
}
