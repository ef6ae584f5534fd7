// `npm run bench:serve`: warm-server figures. A `mimir serve` process over a
// lake holding Debian's crate corpus in the universe plus the sample
// workspace as a repo (built on first use in .bench/serve-lake, reused after;
// --lake DIR to use another), asked a fixed mix of questions — def, find by
// prefix, callers, callees, refs, history — about 40 functions picked from
// the lake by a hash of their path (the same ones every run) and the
// sample's own.
//
// Phases, each bounded in time: (1) cold: every request of the mix once, one
// client, cache empty — what one answer costs on this lake, per question
// (bounded by --cold-seconds: the requests answered by then are the ones the
// next phase asks); (2) warm: 32 concurrent clients on loopback for --seconds
// over the answers now in the cache (the serving path: generation check,
// cache, HTTP); (3) uncached: 32 clients over the whole mix on a server
// started with --cache-mb 0 (every answer read from the lake; identical
// concurrent requests still share one read). Prints p50/p90/p99/max, requests/s, the
// statuses seen, and the server's RSS (now and peak, from /proc). Figures,
// not a test: nothing fails on a slow run. Flags: --lake DIR, --clients N
// (32), --seconds S (10), --cold-seconds S (120, bound of phase 1),
// --timeout D (the server's per-request limit, 30s), --skip-uncached.
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, eq, inList } from '../src/lake/expr/expr.ts';
import { EventLog, batchRows } from '../src/log/event-log.ts';
import { UNIVERSE_REPO } from '../src/log/schema.ts';
import { expandCrateDirs, formatIngestReport, ingest, universeAdd } from '../src/ingest/index.ts';
import { load, percentile } from './load.ts';
import { startServeProcess, type ServeProcess } from './serve-process.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const clients = Number(flag('--clients') ?? 32);
const seconds = Number(flag('--seconds') ?? 10);
const coldSeconds = Number(flag('--cold-seconds') ?? 120);
const timeout = flag('--timeout') ?? '30s';
const corpus = '/usr/share/cargo/registry';
const lakeDir = path.resolve(flag('--lake') ?? path.join(root, '.bench', 'serve-lake'));
const TARGETS = 40;

// ---- the lake ------------------------------------------------------------------

if (!existsSync(path.join(lakeDir, 'catalog.db'))) {
  const { dirs } = await expandCrateDirs([corpus]);
  if (dirs.length < 20) {
    console.log(`bench:serve skipped: ${corpus} holds ${dirs.length} crate folders; run scripts/install-debian-crates.sh (as root, with apt) first, or give --lake DIR`);
    process.exit(0);
  }
  console.log(`building ${lakeDir}: ${dirs.length} crates of ${corpus} into the universe, samples/workspace as repo sample…`);
  const t0 = performance.now();
  const log = await EventLog.open(lakeDir);
  try {
    console.log(formatIngestReport(await universeAdd(log, [corpus], {})));
    console.log(formatIngestReport(await ingest(log, path.join(root, 'samples', 'workspace'), { repo: 'sample', withDeps: true })));
  } finally {
    log.close();
  }
  console.log(`built in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

/** FNV-1a of a string: a stable pick of targets, independent of file order. */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

async function pickTargets(): Promise<{ events: number; crates: number; picked: { qpath: string; name: string }[] }> {
  const log = await EventLog.open(lakeDir, { readOnly: true });
  try {
    const keep: { h: number; qpath: string; name: string }[] = [];
    const crates = new Set<string>();
    let events = 0;
    for await (const b of log.scan('node', { filter: and(eq('repo', UNIVERSE_REPO), inList('kind', ['fn', 'method'])), columns: ['qpath', 'name', 'krate', 'op'] })) {
      for (const r of batchRows(b)) {
        events++;
        crates.add(r.krate as string);
        if (r.op === 'remove' || typeof r.qpath !== 'string' || typeof r.name !== 'string' || r.name.length < 3) continue;
        const h = fnv(r.qpath);
        if (keep.length < TARGETS || h < keep[keep.length - 1]!.h) {
          if (keep.some((k) => k.qpath === r.qpath)) continue;
          keep.push({ h, qpath: r.qpath, name: r.name });
          keep.sort((a, b) => a.h - b.h);
          keep.length = Math.min(keep.length, TARGETS);
        }
      }
    }
    return { events, crates: crates.size, picked: [{ qpath: 'fnvish::hash_str', name: 'hash_str' }, { qpath: 'tally::tally_text', name: 'tally_text' }, ...keep] };
  } finally {
    log.close();
  }
}

const { events, crates, picked } = await pickTargets();
const q = (route: string, params: Record<string, string>): string => `/api/${route}?${new URLSearchParams(params)}`;
const mix: { kind: string; target: string }[] = [];
for (const t of picked) {
  mix.push({ kind: 'def', target: q('def', { path: t.qpath }) });
  mix.push({ kind: 'find', target: q('find', { name: `${t.name.slice(0, 4)}*` }) });
  mix.push({ kind: 'callers', target: q('callers', { path: t.qpath }) });
  mix.push({ kind: 'callees', target: q('callees', { path: t.qpath }) });
  mix.push({ kind: 'refs', target: q('refs', { path: t.qpath }) });
  mix.push({ kind: 'history', target: q('history', { path: t.qpath }) });
}
console.log(`lake ${lakeDir}: ${crates} universe crates, ${events} universe fn/method node events; mix: ${mix.length} requests (${picked.length} items x def, find prefix*, callers, callees, refs, history)`);

// ---- the server ------------------------------------------------------------------

const startServer = (extra: string[]): Promise<ServeProcess> => startServeProcess(lakeDir, ['--timeout', timeout, ...extra]);

const ms = (x: number): string => (Number.isNaN(x) ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1));
const statusText = (s: Record<number, number>): string =>
  Object.entries(s)
    .map(([k, v]) => `${k === '-1' ? 'conn-error' : k}:${v}`)
    .join(' ');
/** Run a load phase against `server` and print its row (with the server's CPU per request and its RSS). */
async function phase(name: string, server: ServeProcess, targets: string[]): Promise<void> {
  const cpu0 = server.cpuMs();
  const r = await load({ url: server.url, targets, clients, seconds });
  const cpu = (server.cpuMs() - cpu0) / r.requests;
  const rss = server.rss();
  console.log(
    `${name}\n  ${String(r.requests).padStart(7)} req ${r.perSecond.toFixed(0).padStart(6)}/s  p50 ${ms(r.p50).padStart(7)} ms  p90 ${ms(r.p90).padStart(7)}  p99 ${ms(r.p99).padStart(7)}  max ${ms(r.max).padStart(7)}  server cpu ${ms(cpu)} ms/req  rss ${rss.rssMb.toFixed(0)} MB (peak ${rss.peakMb.toFixed(0)})  ${statusText(r.statuses)}`,
  );
}

// ---- phase 1: cold, one client -----------------------------------------------------

const server = await startServer([]);
try {
  const per = new Map<string, number[]>();
  const answered: string[] = [];
  const coldEnd = performance.now() + coldSeconds * 1000;
  for (const m of mix) {
    if (performance.now() > coldEnd) break;
    const r = await load({ url: server.url, targets: [m.target], clients: 1, seconds: coldSeconds, requests: 1 });
    if (!per.has(m.kind)) per.set(m.kind, []);
    if (r.statuses[200]) {
      per.get(m.kind)!.push(r.p50);
      answered.push(m.target);
    }
  }
  console.log(`\ncold (cache empty, one client; ${answered.length} of ${mix.length} requests answered within ${coldSeconds} s): ms per answer`);
  for (const [kind, xs] of per) {
    xs.sort((a, b) => a - b);
    console.log(`  ${kind.padEnd(8)} n ${String(xs.length).padStart(3)}  p50 ${ms(percentile(xs, 50)).padStart(8)}  p90 ${ms(percentile(xs, 90)).padStart(8)}  max ${ms(xs[xs.length - 1] ?? NaN).padStart(8)}`);
  }
  // ---- phase 2: warm, 32 clients over the answers now cached -------------------------
  console.log(`\n${clients} clients on loopback, ${seconds} s a phase (load average now ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores):`);
  if (answered.length > 0) await phase(`warm (${answered.length} cached answers)`, server, answered);
} finally {
  await server.stop();
}

// ---- phase 3: no cache, the whole mix ------------------------------------------------
if (!args.includes('--skip-uncached')) {
  const nocache = await startServer(['--cache-mb', '0']);
  try {
    await phase(`uncached (${mix.length}-request mix)`, nocache, mix.map((m) => m.target));
  } finally {
    await nocache.stop();
  }
}
