// `npm run bench:truth`: Mimir's graph measured against the compiler (issue 7).
//
// For the crates of scripts/install-debian-crates.sh found in the Debian
// registry (no others: the rest of the registry is the held-out set), the
// oracle — rustdoc JSON and MIR with spans, built offline with nightly and
// cached (bench/truth/oracle.ts) — against the same crates ingested into a
// scratch lake with Mimir's own ingest, with their dependencies: the measured
// ones, and the others the Debian registry has (normal dependencies built on
// x86_64 linux with default features; never measured, given an oracle so that
// calls into them count as calls into the lake). Prints per crate and per kind: item
// recall and precision (written and macro-generated apart), `def` right and
// unique on every public path, call sites by syntax (right / wrong target /
// unresolved / missing), `callers` completeness, calls into other lake crates;
// each beside issue 7's target with ok/FAIL. A script, not a test.
//
// Flags:
//   --crates a,b      measure only these (their dependencies are ingested too)
//   --json            machine-readable output on stdout
//   --verbose         per-crate kind and call tables, oracle notes
//   --misses items|extra|calls|paths   list misses: items the graph lacks, nodes the compiler
//                     does not have, call sites, paths (with --crate REGEX, --limit N, and --class C:
//                     a call class such as method, lake for calls into other measured crates,
//                     or an item origin such as written)
//   --cache DIR       oracle cache (default $MIMIR_TRUTH_CACHE, else $XDG_CACHE_HOME or ~/.cache, /mimir/truth)
//   --rebuild         rebuild the oracle of the selected crates
//   --oracle-only     build the oracle and stop
//   --lake DIR        ingest into DIR and keep it (default: a temporary lake, removed)
//   --check N         ask the real `def`/`callers` on N sampled paths to check the emulation (default 12)
//   --real-queries    answer every `def` and `callers` with the real queries (slow: ~0.2 s each today)
//   --workers N       ingest worker threads (default 2)
//   --held-out a,b    also measure these registry crates that are not in the list (a held-out check:
//                     report their figures, never tune on them); their oracle is built on first use
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import * as path from 'node:path';
import { activeFeatures, Cfg, pickVersion, readCrateDir } from '../src/extract/index.ts';
import { crateModel, oracleCalls, type CrateModel, type OracleCall } from './truth/calls.ts';
import { checkCalls, checkPaths, matchItems, type CallContext, type CallMiss, type ItemMiss, type Matching, type PathMiss } from './truth/compare.ts';
import { loadDigest } from './truth/digest.ts';
import { CallersIndex, checkQueries, DefIndex, emulated, ingestGraph, realAnswers, recording, type Answers, type MEdge, type MNode } from './truth/mimir.ts';
import { buildOracle, measuredCrates, nightlyToolchain, oraclePaths, registryCrates, type CrateDir } from './truth/oracle.ts';
import { callTable, kindTable, summarize, summaryTable, toJson, type CrateFigures } from './truth/report.ts';
import { docModel, type DocCrate } from './truth/rustdoc.ts';
import type { MirBody } from './truth/mir.ts';
import { CrateSource } from './truth/source.ts';

const here = path.dirname(new URL(import.meta.url).pathname);
const repoRoot = path.resolve(here, '..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const has = (name: string) => args.includes(name);
if (has('--help')) {
  const text = (await import('node:fs')).readFileSync(new URL(import.meta.url), 'utf8');
  console.log(text.split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n'));
  process.exit(0);
}
const json = has('--json');
const verbose = has('--verbose');
// one cache for every checkout of the user (the oracle depends on the toolchain and the registry, not on Mimir)
const cache = path.resolve(flag('--cache') ?? process.env['MIMIR_TRUTH_CACHE']
  ?? path.join(process.env['XDG_CACHE_HOME'] ?? path.join(homedir(), '.cache'), 'mimir', 'truth'));
const only = flag('--crates')?.split(',').map(norm).filter((s) => s !== '');
const missesOf = flag('--misses');
if (missesOf !== undefined && !['items', 'extra', 'calls', 'paths'].includes(missesOf)) {
  console.error(`bench:truth: --misses expects items, extra, calls or paths, found ${missesOf}`);
  process.exit(2);
}
const missCrate = new RegExp(flag('--crate') ?? '.');
const limit = Number(flag('--limit') ?? 30);
const missClass = flag('--class');
const checkN = Number(flag('--check') ?? 12);
const workers = Number(flag('--workers') ?? 2);
const log = (s: string) => { if (!json) console.error(s); };

function norm(s: string): string {
  return s.trim().toLowerCase().replace(/_/g, '-');
}

const { crates: all, absent } = await measuredCrates(path.join(repoRoot, 'scripts', 'install-debian-crates.sh'));
const heldOutNames = (flag('--held-out')?.split(',').map(norm).filter((s) => s !== '') ?? []).filter((n) => !all.some((c) => norm(c.name) === n));
const heldOut = (await registryCrates(heldOutNames)).crates;
if (heldOut.length < heldOutNames.length) {
  console.error(`bench:truth: --held-out names crates not in the registry: ${heldOutNames.filter((n) => !heldOut.some((c) => norm(c.name) === n)).join(', ')}`);
  process.exit(2);
}
all.push(...heldOut);
if (all.length === 0) {
  console.log('bench:truth skipped: no crate of scripts/install-debian-crates.sh under /usr/share/cargo/registry (run the script as root first)');
  process.exit(0);
}
let toolchain: string;
try {
  toolchain = nightlyToolchain();
} catch (e) {
  console.log(`bench:truth skipped: ${(e as Error).message}`);
  process.exit(0);
}

// selection, plus the measured crates they depend on (so that calls into them can be checked)
const byNorm = new Map(all.map((c) => [norm(c.name), c] as const));
const unknown = (only ?? []).filter((n) => !byNorm.has(n));
if (unknown.length > 0) {
  console.error(`bench:truth: --crates names no measured crate: ${unknown.join(', ')} (measured: ${all.map((c) => c.name).join(', ')})`);
  process.exit(2);
}
const selected = only ? all.filter((c) => only.includes(norm(c.name)) || heldOut.includes(c)) : all;
const world: CrateDir[] = [];
/** Per crate: its lake name and its dependencies (normal and build: measured crates; normal and enabled by default features: registry crates). */
const pkgOf = new Map<CrateDir, { krate: string; deps: string[]; registryDeps: { name: string; req: string | null }[] }>();
const readPkg = async (c: CrateDir) => {
  const { pkg } = await readCrateDir(c.dir);
  const on = pkg ? new Set(activeFeatures(pkg)) : new Set<string>();
  const offTarget = offTargetDeps(await readFile(path.join(c.dir, 'Cargo.toml'), 'utf8').catch(() => ''));
  const byDep = pkg ? new Set(on.size === 0 ? [] : [...on].flatMap((f) => pkg.features[f] ?? []).filter((e) => e.startsWith('dep:')).map((e) => e.slice(4))) : new Set<string>();
  pkgOf.set(c, {
    krate: pkg ? `${pkg.name}@${pkg.version}` : `${c.name}@${c.version}`,
    deps: (pkg?.deps ?? []).filter((d) => d.kind !== 'dev').map((d) => norm(d.crateName)),
    registryDeps: (pkg?.deps ?? []).filter((d) => d.kind === 'normal' && (!d.optional || on.has(d.localName) || byDep.has(d.localName)) && !offTarget.has(d.localName))
      .map((d) => ({ name: norm(d.crateName), req: d.req })),
  });
};
for (const c of all) await readPkg(c);
// a world crate's dependencies: the measured ones, else (so that calls into them are calls into the lake, and a
// type of theirs has its methods) the newest matching folder of the Debian registry — ingested and given an
// oracle like a measured dependency, never measured itself
const fromRegistry = new Map<string, CrateDir | null>();
const addWorld = async (c: CrateDir) => {
  if (world.includes(c)) return;
  world.push(c);
  const p = pkgOf.get(c)!;
  for (const d of p.deps) { const dc = byNorm.get(d); if (dc) await addWorld(dc); }
  for (const d of p.registryDeps) {
    if (byNorm.has(d.name)) continue;
    if (!fromRegistry.has(d.name)) {
      const found = (await registryCrates([d.name])).crates[0];
      fromRegistry.set(d.name, found && pickVersion([found.version], d.req) !== null ? found : null);
      if (found && fromRegistry.get(d.name)) await readPkg(found);
    }
    const dc = fromRegistry.get(d.name);
    if (dc) await addWorld(dc);
  }
};
for (const c of selected) await addWorld(c);

/**
 * Normal dependencies a manifest declares only under `[target.SPEC.dependencies]` whose SPEC does not hold
 * on x86_64-unknown-linux-gnu (cargo does not build them there): `cfg(windows)`, `x86_64-pc-windows-gnu`.
 */
function offTargetDeps(toml: string): Set<string> {
  const linux = new Cfg({ features: [] });
  const off = new Set<string>();
  const on = new Set<string>();
  let section: { holds: boolean; table: boolean } | null = null;
  for (const raw of toml.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      section = null;
      const plain = /^\[dependencies(?:\.([A-Za-z0-9_-]+))?\]$/.exec(line);
      const target = /^\[target\.(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_.-]+?))\.dependencies(?:\.([A-Za-z0-9_-]+))?\]$/.exec(line);
      if (plain) {
        if (plain[1]) on.add(plain[1]);
        else section = { holds: true, table: true };
      } else if (target) {
        const spec = (target[1]?.replace(/\\"/g, '"') ?? target[2] ?? target[3])!;
        const holds = spec.startsWith('cfg(') ? linux.holds(spec.slice(4, -1)) : spec === 'x86_64-unknown-linux-gnu';
        if (target[4]) (holds ? on : off).add(target[4]);
        else section = { holds, table: true };
      }
      continue;
    }
    const key = section?.table ? /^([A-Za-z0-9_-]+)\s*[=.]/.exec(line) : null;
    if (key && section) (section.holds ? on : off).add(key[1]!);
  }
  for (const n of on) off.delete(n);
  return off;
}

// 1. the oracle
const t0 = performance.now();
const failed: { crate: string; error: string }[] = [];
const ok: CrateDir[] = [];
for (const c of world) {
  const s = await buildOracle(cache, toolchain, c, { rebuild: has('--rebuild') && selected.includes(c), log });
  if (s.ok) ok.push(c);
  else failed.push({ crate: c.dirName, error: s.error });
}
const oracleSeconds = (performance.now() - t0) / 1000;
for (const f of failed) log(`oracle: ${f.crate} skipped: ${f.error}`);
if (has('--oracle-only')) {
  console.log(`bench:truth oracle: ${ok.length} crates built or cached in ${cache}/${toolchain}, ${failed.length} failed, ${oracleSeconds.toFixed(1)} s`);
  process.exit(failed.length > 0 ? 1 : 0);
}

// 2. models of every crate in the world
const t1 = performance.now();
const models = new Map<string, CrateModel>();
const bodiesOf = new Map<string, MirBody[]>();
const sources = new Map<string, CrateSource>();
const dirOf = new Map<string, CrateDir>();
for (const c of ok) {
  const d = await loadDigest(oraclePaths(cache, toolchain, c));
  const src = await CrateSource.open(c.dir);
  const doc: DocCrate = d.doc;
  const m = crateModel(doc.name, pkgOf.get(c)!.krate, docModel(doc, src));
  models.set(doc.name, m);
  bodiesOf.set(doc.name, d.bodies);
  sources.set(doc.name, src);
  dirOf.set(doc.name, c);
}
const loadSeconds = (performance.now() - t1) / 1000;

// 3. Mimir: ingest into a scratch lake, read the graph
const keep = flag('--lake');
const lakeDir = keep ? path.resolve(keep) : mkdtempSync(path.join(tmpdir(), 'mimir-truth-'));
log(`bench:truth: ingesting ${ok.length} crates into ${lakeDir}`);
// registry dependencies go into the lake even without an oracle (as `ingest --with-deps` would put them there)
const registryWorld = world.filter((c) => !all.includes(c));
if (registryWorld.length > 0) log(`bench:truth: dependencies from the registry (in the lake, not measured): ${registryWorld.map((c) => c.dirName).join(', ')}`);
const { graph, log: eventLog } = await ingestGraph(lakeDir, [...ok, ...registryWorld.filter((c) => !ok.includes(c))].map((c) => c.dir), { workers });
for (const p of graph.report.problems.filter((q) => q.kind === 'extract-failed')) log(`ingest: ${p.message}`);

// 4. compare
const t2 = performance.now();
const nodesByKrate = new Map<string, MNode[]>();
for (const n of graph.nodes.values()) {
  const l = nodesByKrate.get(n.krate);
  if (l) l.push(n); else nodesByKrate.set(n.krate, [n]);
}
const matching = new Map<string, Matching>();
for (const [name, m] of models) matching.set(name, matchItems(m, nodesByKrate.get(m.krate) ?? [], graph.nodes, sources.get(name)!));
const defs = new DefIndex(graph.nodes.values());
const callersIdx = new CallersIndex(graph.calls, defs);
const krateOf = new Map([...models].map(([n, m]) => [n, m.krate] as const));
const unmeasured = new Set([...models].filter(([n]) => registryWorld.includes(dirOf.get(n)!)).map(([n]) => n));
const callsOf = new Map<string, OracleCall[]>();
const edgesOf = new Map<string, { at: Map<string, MEdge[]>; from: Map<string, MEdge[]> }>();
for (const c of selected) {
  const m = [...models.values()].find((x) => dirOf.get(x.name) === c);
  if (!m) continue;
  callsOf.set(m.name, oracleCalls(bodiesOf.get(m.name)!, { local: m, crates: models }, sources.get(m.name)!));
  const at = new Map<string, MEdge[]>();
  const from = new Map<string, MEdge[]>();
  const add = (map: Map<string, MEdge[]>, k: string, e: MEdge) => { const l = map.get(k); if (l) l.push(e); else map.set(k, [e]); };
  for (const e of graph.calls) {
    if (e.krate !== m.krate) continue;
    add(at, `${e.file}:${e.line}`, e);
    add(from, e.src, e);
  }
  edgesOf.set(m.name, { at, from });
}
const score = (answers: Answers): CrateFigures[] => {
  const callersMemo = new Map<string, Set<string>>();
  return [...callsOf].map(([name, calls]) => {
    const m = models.get(name)!;
    const ctx: CallContext = { local: m, models, matching, krateOf, nodes: graph.nodes, edgesAt: edgesOf.get(name)!.at, edgesFrom: edgesOf.get(name)!.from, callers: answers, callersMemo, unmeasured };
    return { crate: m.name, krate: m.krate, items: matching.get(m.name)!, paths: checkPaths(m, matching.get(m.name)!, answers), calls: checkCalls(calls, ctx) };
  });
};
let figures: CrateFigures[];
let answersBy = 'emulated';
if (has('--real-queries')) {
  // first pass: which paths the comparison asks; then every one of them through the real queries
  const rec = recording(emulated(defs, callersIdx));
  score(rec);
  log(`bench:truth: asking the real def (${rec.defPaths.size} paths) and callers (${rec.callerPaths.size} paths)`);
  const real = await realAnswers(eventLog, rec.defPaths, rec.callerPaths, (d, t) => { if (d % 500 === 0) log(`  ${d}/${t}`); });
  figures = score(real);
  answersBy = 'real queries';
} else {
  figures = score(emulated(defs, callersIdx));
}
const compareSeconds = (performance.now() - t2) / 1000;

// 5. the emulated queries against the real ones, on a sample of paths
const sample: string[] = [];
if (checkN > 0 && answersBy === 'emulated') {
  const pool = figures.flatMap((f) => [...models.get(f.crate)!.paths.keys()].filter((_, i) => i % 97 === 0));
  for (let i = 0; i < pool.length && sample.length < checkN; i += Math.max(1, Math.floor(pool.length / checkN))) sample.push(pool[i]!);
}
const check = await checkQueries(eventLog, emulated(defs, callersIdx), sample);
eventLog.close();
if (!keep) await rm(lakeDir, { recursive: true, force: true });

// 6. print
const meta = {
  toolchain, cache, measured: selected.map((c) => c.dirName), heldOut: heldOut.map((c) => c.dirName), world: world.map((c) => c.dirName), registryDeps: registryWorld.map((c) => c.dirName), absent, failed,
  seconds: { oracle: oracleSeconds, load: loadSeconds, ingest: graph.ingestSeconds, compare: compareSeconds },
  answers: answersBy,
  queryCheck: check,
};
if (json) {
  const extra = missesOf ? { misses: { kind: missesOf, crates: misses(missesOf).map(({ krate, total, entries }) => ({ krate, total, entries })) } } : {};
  console.log(JSON.stringify(toJson(figures, { ...meta, ...extra }), null, 1));
} else {
  console.log(`bench:truth — Mimir's graph vs the compiler (rustdoc JSON + MIR, ${toolchain}), default features`);
  console.log(`crates: ${figures.length} measured${world.length > selected.length ? ` (+${world.length - selected.length} dependencies in the lake)` : ''}; `
    + `oracle ${oracleSeconds.toFixed(1)} s, load ${loadSeconds.toFixed(1)} s, ingest ${graph.ingestSeconds.toFixed(1)} s, compare ${compareSeconds.toFixed(1)} s`);
  if (failed.length > 0) console.log(`oracle failed (skipped): ${failed.map((f) => `${f.crate}: ${f.error}`).join('\n  ')}`);
  if (absent.length > 0) console.log(`not in the registry: ${absent.join(', ')}`);
  if (heldOut.length > 0) console.log(`held out (--held-out: measured, not in the list, never tuned on): ${heldOut.map((c) => c.dirName).join(', ')}`);
  console.log('\nitems W/M = recall of written / macro-generated items; prec = precision; def = `def` right and unique on rustdoc paths and pub-use paths;');
  console.log('calls ok = in-crate written call sites with the right target; wrong = wrong / (right + wrong); callers = share of call sites `callers` lists\n');
  console.log(summaryTable(figures.map(summarize)));
  console.log('\nper kind (all measured crates):');
  console.log(kindTable(figures));
  console.log('\ncalls by syntax (all measured crates):');
  console.log(callTable(figures));
  if (verbose) {
    for (const f of figures) {
      console.log(`\n== ${f.krate}: per kind`);
      console.log(kindTable([f]));
      console.log(callTable([f]));
      const skipped = [...models.get(f.crate)!.doc.skipped].map(([k, v]) => `${k} ${v}`).join(', ');
      console.log(`not compared: ${skipped}`);
      if (f.calls.unmapped.length > 0) console.log(`oracle callees not mapped: ${f.calls.unmapped.slice(0, 5).join('; ')}`);
    }
  }
  if (answersBy === 'emulated' && check.checked > 0) {
    console.log(`\nquery check: the bench's def/callers agree with the real queries on ${check.checked - check.differ.length} of ${check.checked} sampled paths`);
    if (check.differ.length > 0) console.log('WARNING: the emulated def/callers no longer match src/query: update bench/truth/mimir.ts, or run with --real-queries');
    for (const d of check.differ) console.log(`  differs: ${d}`);
  } else if (answersBy !== 'emulated') {
    console.log('\ndef and callers answered by the real queries');
  }
}
if (missesOf && !json) for (const m of misses(missesOf)) {
  console.log(`\n== ${m.krate}: ${m.total} ${missesOf} misses${m.total > limit ? ` (first ${limit})` : ''}`);
  for (const l of m.lines) console.log(`  ${l}`);
}

/** The misses asked for, per crate: the first `limit` as text lines and as objects. */
function misses(what: string): { krate: string; total: number; lines: string[]; entries: object[] }[] {
  const out: { krate: string; total: number; lines: string[]; entries: object[] }[] = [];
  const order = (o: string) => ['written', 'macro', 'derive'].indexOf(o);
  const byOrigin = <T extends { origin: string }>(l: T[]) => [...l].sort((a, b) => order(a.origin) - order(b.origin));
  for (const f of figures) {
    if (!missCrate.test(f.crate) && !missCrate.test(f.krate)) continue;
    let entries: object[];
    let text: (e: never) => string;
    if (what === 'items') {
      entries = byOrigin(f.items.missed).filter((m) => !missClass || m.origin === missClass);
      text = (m: ItemMiss) => `${m.file}:${m.line}  ${m.kind} ${m.name}  (${m.origin}, in ${m.modPath || '(root)'})`;
    } else if (what === 'extra') {
      entries = byOrigin(f.items.extra).filter((m) => !missClass || m.origin === missClass);
      text = (m: ItemMiss) => `${m.file}:${m.line}  ${m.kind} ${m.name}  (${m.origin})`;
    } else if (what === 'paths') {
      entries = f.paths.misses;
      text = (m: PathMiss) => `${m.path}  ${m.why}: want ${m.want}; def gives ${m.got.join(' | ') || 'nothing'}`;
    } else {
      entries = f.calls.misses.filter((m) => !missClass || m.cls === missClass || (missClass === 'lake' && m.into !== undefined));
      text = (m: CallMiss) => `${m.file}:${m.line}  ${m.cls} ${m.outcome}: ${m.callee}${m.got ? `  (graph: ${m.got})` : ''}${m.macro ? `  [in ${m.macro}!]` : ''}${m.into ? `  [into ${m.into}]` : ''}${m.want ? `  [want ${m.want.slice(0, 3).join(' | ')}]` : ''}`;
    }
    const first = entries.slice(0, limit);
    out.push({ krate: f.krate, total: entries.length, lines: first.map((e) => text(e as never)), entries: first });
  }
  return out;
}
