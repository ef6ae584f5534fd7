// `node --import tsx bench/growth.ts [--runs 160] [--every 40] [--gc-every 0] [--retain 0]`:
// how the lake's file count grows under alternating small edits. Copies
// samples/workspace to a scratch folder, then ingests it RUNS times, each run
// adding or removing one function in crates/tally/src/lib.rs (edit, revert,
// edit, …). Every EVERY runs it prints the files in the lake folder by kind
// (metadata.json, manifest lists, manifests, data files, other) and the
// bytes; at the end it runs gc (retain RETAIN, default 0) and prints the same
// again. --gc-every K also runs gc after every K-th run. A script that prints
// figures, not a test; the scratch folder is removed at the end.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../src/log/event-log.ts';
import { gc } from '../src/log/gc.ts';
import { ingest } from '../src/ingest/index.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const runs = flag('--runs', 160);
const every = flag('--every', 40);
const gcEvery = flag('--gc-every', 0);
const retainMs = flag('--retain', 0);

const here = path.dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'mimir-bench-growth-'));
const ws = path.join(work, 'ws');
const lakeDir = path.join(work, 'lake');
cpSync(path.join(here, '..', 'samples', 'workspace'), ws, { recursive: true });
const lib = path.join(ws, 'crates', 'tally', 'src', 'lib.rs');
const original = readFileSync(lib, 'utf8');

function census(): string {
  const c = { metadataJson: 0, manifestLists: 0, manifests: 0, data: 0, other: 0, bytes: 0 };
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        c.bytes += statSync(p).size;
        if (e.name.endsWith('.metadata.json')) c.metadataJson++;
        else if (e.name.startsWith('snap-') && e.name.endsWith('.avro')) c.manifestLists++;
        else if (e.name.endsWith('.avro')) c.manifests++;
        else if (e.name.endsWith('.parquet')) c.data++;
        else c.other++;
      }
    }
  };
  walk(lakeDir);
  const total = c.metadataJson + c.manifestLists + c.manifests + c.data + c.other;
  return `files ${total} (metadata.json ${c.metadataJson}, manifest lists ${c.manifestLists}, manifests ${c.manifests}, data ${c.data}, other ${c.other}), ${(c.bytes / 1e6).toFixed(2)} MB`;
}

const log = await EventLog.open(lakeDir);
try {
  const t0 = Date.now();
  for (let r = 1; r <= runs; r++) {
    writeFileSync(lib, r % 2 === 1 ? `${original}\n/// Added by run ${r}.\npub fn growth_${r}() -> u32 { ${r} }\n` : original);
    await ingest(log, ws, { repo: 'growth', workers: 0 });
    if (gcEvery > 0 && r % gcEvery === 0) await gc(log, { retainMs });
    if (r % every === 0 || r === runs) console.log(`run ${r}: ${census()} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  const report = await gc(log, { retainMs });
  console.log(`after gc --retain ${retainMs}ms: ${census()}; gc: ${report.orphans.length} orphans, ${report.tables.reduce((s, t) => s + t.deleted.length, 0)} files with expired snapshots`);
} finally {
  log.close();
  rmSync(work, { recursive: true, force: true });
}
