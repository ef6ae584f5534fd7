// Child process for the ring split tests:
//   build <root> <ringRows> <repoRows>   a unified lake (node ring rows in appends of 50k; a few of each other kind)
//   split <root> <chunkRows> [freezeAfter]  split, printing the report and peak RSS (sampled) as JSON
//   unsplit <root> [freezeAfter]            unsplit, printing the report as JSON
// (freezeAfter 0 freezes appends before the first switch attempt.)
// Crash tests run it with MIMIR_CRASH_AT set.
import { EventLog } from '../../src/log/event-log.ts';
import { splitRing, unsplitRing, reportJson } from '../../src/log/ring-split.ts';
import { SOURCE_KINDS } from '../../src/log/schema.ts';
import { ring, rowsOf } from './ring-split-helpers.ts';

async function main(): Promise<void> {
  const [op, root, a, b] = process.argv.slice(2);
  if (!op || !root) throw new Error('usage: ring-split-child.ts build|split|unsplit <root> …');
  if (op === 'build') {
    const log = await EventLog.open(root, { init: 'unified', stateTables: false });
    const n = Number(a ?? '1000');
    for (let s = 0; s < n; s += 50_000) await log.append('node', ring('node', Math.min(50_000, n - s), s, 40));
    for (const k of SOURCE_KINDS) await log.append(k, [...rowsOf(k, 'acme', Number(b ?? '10')), ...(k === 'node' ? [] : ring(k, 20))]);
    log.close();
    return;
  }
  const log = await EventLog.open(root);
  if (op === 'split') {
    let peak = process.memoryUsage().rss;
    const base = peak;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const t0 = Date.now();
    const r = await splitRing(log, { chunkRows: Number(a ?? String(1 << 20)), freezeAfter: b === undefined ? undefined : Number(b) });
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    process.stdout.write(JSON.stringify({ report: JSON.parse(reportJson(r)), baseRss: base, peakRss: peak, ms: Date.now() - t0 }) + '\n');
  } else if (op === 'unsplit') {
    const r = await unsplitRing(log, { freezeAfter: a === undefined ? undefined : Number(a) });
    process.stdout.write(reportJson(r) + '\n');
  } else throw new Error(`unknown op ${op}`);
  log.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
