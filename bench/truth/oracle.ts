// The oracle: for each measured crate, the compiler's own view of it —
// rustdoc JSON (items, public paths) and MIR with spans (calls) — built
// offline with the nightly toolchain from a writable copy of the Debian
// registry folder, then digested into small JSON files the comparison reads.
//
// Cache layout (outside git; default `~/.cache/mimir/truth`, shared by every checkout):
//   <cache>/<toolchain>/<crate-dir>/status.json      ok or the reason it failed
//   <cache>/<toolchain>/<crate-dir>/rustdoc.json.gz  rustdoc's output, as written
//   <cache>/<toolchain>/<crate-dir>/mir.txt.gz       MIR text, as written
//   <cache>/<toolchain>/<crate-dir>/digest-v<N>.json.gz  the digest (see digest.ts)
//   <cache>/<toolchain>/target/                      one shared cargo target dir
//   <cache>/work/<crate-dir>/                        the writable copies
// A crate is built once per toolchain; a failure is recorded with its reason
// and reported on every run (delete status.json, or pass --rebuild, to retry).
// Crash story: every file is written to a temporary name and renamed, and
// status.json is written last, so an interrupted build is simply redone.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { compareVersions } from '../../src/extract/index.ts';
import { parseCrateDirName } from '../../src/ingest/index.ts';

export const REGISTRY = '/usr/share/cargo/registry';

export interface CrateDir {
  /** Crate name as its folder spells it (`serde_json`, `regex-syntax`). */
  name: string;
  version: string;
  /** `name-version`, the folder's name. */
  dirName: string;
  dir: string;
}

export interface OracleStatus {
  ok: boolean;
  /** Why the build failed (the first error lines of cargo's output), '' when ok. */
  error: string;
  toolchain: string;
  seconds: number;
  /** The features built with (cargo's default set). */
  features: 'default';
  /** RUSTFLAGS the build needed ('' for none). */
  rustflags?: string;
}

/**
 * The measured crates: every `librust-<name>-dev` package of the install
 * script whose crate folder is in the registry (highest version when several
 * are). Crates of the registry not named there are never measured: they are
 * the held-out set. Returns the crates found and the package names without a
 * folder.
 */
export async function measuredCrates(installScript: string, registry = REGISTRY): Promise<{ crates: CrateDir[]; absent: string[] }> {
  const text = await readFile(installScript, 'utf8');
  const wanted = [...new Set([...text.matchAll(/\blibrust-([a-z0-9-]+?)-dev\b/g)].map((m) => m[1]!))];
  return registryCrates(wanted, registry);
}

/** The newest registry folder of each named crate (names as Debian spells them: `-` for `_`, lower case); the names found in none. */
export async function registryCrates(wanted: readonly string[], registry = REGISTRY): Promise<{ crates: CrateDir[]; absent: string[] }> {
  let entries: string[] = [];
  try {
    entries = await readdir(registry);
  } catch {
    return { crates: [], absent: [...wanted] };
  }
  const byName = new Map<string, CrateDir>();
  for (const e of entries) {
    const m = parseCrateDirName(e);
    if (!m || !existsSync(path.join(registry, e, 'Cargo.toml'))) continue;
    const key = m.name.replace(/_/g, '-').toLowerCase();
    const prev = byName.get(key);
    if (!prev || compareVersions(m.version, prev.version) > 0) {
      byName.set(key, { name: m.name, version: m.version, dirName: e, dir: path.join(registry, e) });
    }
  }
  const crates: CrateDir[] = [];
  const absent: string[] = [];
  for (const w of wanted) {
    const c = byName.get(w);
    if (c) crates.push(c);
    else absent.push(w);
  }
  return { crates, absent };
}

/** `1.97.0-nightly-e50aa6fba` from `rustc +nightly -vV`; throws with the reason when nightly is not usable. */
export function nightlyToolchain(): string {
  const r = spawnSync('rustc', ['+nightly', '-vV'], { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`expected a nightly toolchain (rustup toolchain list), but \`rustc +nightly -vV\` failed: ${(r.stderr || r.error?.message || '').trim().split('\n')[0]}`);
  }
  const release = /release: (\S+)/.exec(r.stdout)?.[1] ?? 'unknown';
  const commit = /commit-hash: (\S+)/.exec(r.stdout)?.[1]?.slice(0, 9) ?? 'unknown';
  return `${release}-${commit}`;
}

export interface OraclePaths {
  dir: string;
  status: string;
  rustdoc: string;
  mir: string;
}

export function oraclePaths(cache: string, toolchain: string, crate: CrateDir): OraclePaths {
  const dir = path.join(cache, toolchain, crate.dirName);
  return {
    dir,
    status: path.join(dir, 'status.json'),
    rustdoc: path.join(dir, 'rustdoc.json.gz'),
    mir: path.join(dir, 'mir.txt.gz'),
  };
}

export async function readStatus(p: OraclePaths): Promise<OracleStatus | null> {
  try {
    return JSON.parse(await readFile(p.status, 'utf8')) as OracleStatus;
  } catch {
    return null;
  }
}

/**
 * The crate's manifest made buildable offline on its own: dev-dependencies,
 * benches, tests and examples removed (Debian ships few dev-dependencies), an
 * empty `[workspace]` so cargo does not look upward, and optional
 * dependencies that `available` does not have removed with the feature
 * entries naming them (cargo resolves optional dependencies even when no
 * feature enables them; ryu's `no-panic` is not packaged).
 */
export function offlineManifest(text: string, available: (crate: string) => boolean = () => true): string {
  const doc = parseToml(text) as Record<string, unknown>;
  delete doc['dev-dependencies'];
  delete doc['dev_dependencies'];
  for (const k of ['bench', 'test', 'example']) delete doc[k];
  const tables: Record<string, unknown>[] = [];
  const depTables = (t: Record<string, unknown>) => {
    for (const k of ['dependencies', 'build-dependencies', 'build_dependencies']) {
      const d = t[k];
      if (d && typeof d === 'object') tables.push(d as Record<string, unknown>);
    }
  };
  depTables(doc);
  const target = doc['target'];
  if (target && typeof target === 'object') {
    for (const t of Object.values(target as Record<string, unknown>)) {
      if (t && typeof t === 'object') {
        delete (t as Record<string, unknown>)['dev-dependencies'];
        delete (t as Record<string, unknown>)['dev_dependencies'];
        depTables(t as Record<string, unknown>);
      }
    }
  }
  const dropped = new Set<string>();
  for (const t of tables) {
    for (const [name, spec] of Object.entries(t)) {
      if (!spec || typeof spec !== 'object') continue;
      const sp = spec as Record<string, unknown>;
      const real = typeof sp['package'] === 'string' ? sp['package'] : name;
      if (sp['optional'] === true && !available(real)) {
        delete t[name];
        dropped.add(name);
      }
    }
  }
  const features = doc['features'];
  if (dropped.size > 0 && features && typeof features === 'object') {
    const f = features as Record<string, unknown>;
    const names = (e: string) => e.replace(/^dep:/, '').split('/')[0]!.replace(/\?$/, '');
    for (const [k, list] of Object.entries(f)) {
      if (dropped.has(k)) { delete f[k]; continue; }
      if (Array.isArray(list)) f[k] = list.filter((e) => typeof e !== 'string' || !dropped.has(names(e)));
    }
  }
  doc['workspace'] = {};
  return stringifyToml(doc);
}

/** Crate names with a folder in the registry (`-` and `_` alike). */
async function registryNames(registry: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const e of await readdir(registry).catch(() => [] as string[])) {
    const m = parseCrateDirName(e);
    if (m) out.add(m.name.replace(/_/g, '-'));
  }
  return out;
}

const CARGO_CONFIG = [
  '[source.crates-io]', 'replace-with = "debian"',
  '[source.debian]', `directory = "${REGISTRY}"`,
  '[net]', 'offline = true', '',
].join('\n');

const RUSTDOC_ARGS = ['+nightly', 'rustdoc', '--lib', '--', '--cap-lints=allow', '-Z', 'unstable-options', '--output-format', 'json', '--document-private-items', '--document-hidden-items'];
const MIR_ARGS = ['+nightly', 'rustc', '--lib', '--', '--cap-lints=allow', '-Zunpretty=mir', '-Zmir-include-spans=yes', '-Zmir-opt-level=0', '-Ztrim-diagnostic-paths=false'];
/** One cargo command may run this long before it is stopped and the crate reported failed. */
const CARGO_TIMEOUT_MS = 20 * 60_000;

const FLAG_SETS: string[][] = [[], ['-Zallow-features=proc_macro_span']];

function cargoEnv(target: string, flags: string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CARGO_TARGET_DIR: target, CARGO_TERM_COLOR: 'never' };
  delete env['RUSTFLAGS'];
  delete env['RUSTDOCFLAGS'];
  if (flags.length > 0) {
    env['RUSTFLAGS'] = flags.join(' ');
    env['RUSTDOCFLAGS'] = flags.join(' ');
  }
  return env;
}

/** Run cargo in `cwd`; stdout to `stdoutFile` (or discarded). Resolves with the exit code and stderr's tail. */
function cargo(args: string[], cwd: string, env: NodeJS.ProcessEnv, stdoutFile: string | null): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const out = stdoutFile ? createWriteStream(stdoutFile) : null;
    const child = spawn('cargo', args, { cwd, env, stdio: ['ignore', out ? 'pipe' : 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
      if (stderr.length > 400_000) stderr = stderr.slice(-200_000);
    });
    if (out) child.stdout!.pipe(out);
    const timer = setTimeout(() => child.kill('SIGKILL'), CARGO_TIMEOUT_MS);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const done = () => resolve({ code: code ?? (signal ? 128 : 1), stderr });
      if (out) out.end(done);
      else done();
    });
  });
}

/** The first error of cargo's output (lines from the first `error` on, at most 6). */
function firstError(stderr: string, code: number): string {
  const lines = stderr.split('\n');
  const at = lines.findIndex((l) => /^error(\[|:)/.test(l));
  const picked = at >= 0 ? lines.slice(at, at + 6) : lines.filter((l) => l.trim() !== '').slice(-6);
  return `exit ${code}: ${picked.join(' | ').replace(/\s+/g, ' ').slice(0, 600)}`;
}

async function gzipFile(src: string, dst: string): Promise<void> {
  await pipeline(createReadStream(src), createGzip({ level: 6 }), createWriteStream(`${dst}.tmp`));
  await rename(`${dst}.tmp`, dst);
}

/**
 * Build (or reuse) the oracle of one crate. Returns its status; on failure
 * nothing but status.json is kept.
 */
export async function buildOracle(cache: string, toolchain: string, crate: CrateDir, opts: { rebuild?: boolean; log?: (s: string) => void } = {}): Promise<OracleStatus> {
  const p = oraclePaths(cache, toolchain, crate);
  if (!opts.rebuild) {
    const s = await readStatus(p);
    if (s && (!s.ok || (existsSync(p.rustdoc) && existsSync(p.mir)))) return s;
  }
  const started = Date.now();
  await mkdir(p.dir, { recursive: true });
  await rm(p.status, { force: true });
  const work = path.join(cache, 'work', crate.dirName);
  await rm(work, { recursive: true, force: true });
  await cp(crate.dir, work, { recursive: true });
  const fail = async (error: string): Promise<OracleStatus> => {
    const s: OracleStatus = { ok: false, error, toolchain, seconds: (Date.now() - started) / 1000, features: 'default' };
    await writeFile(p.status, JSON.stringify(s, null, 2));
    return s;
  };
  try {
    const have = await registryNames(REGISTRY);
    const manifest = offlineManifest(await readFile(path.join(work, 'Cargo.toml'), 'utf8'), (c) => have.has(c.replace(/_/g, '-')));
    await writeFile(path.join(work, 'Cargo.toml'), manifest);
  } catch (e) {
    return fail(`Cargo.toml could not be made offline-buildable: ${(e as Error).message.split('\n')[0]}`);
  }
  await rm(path.join(work, 'Cargo.lock'), { force: true });
  await mkdir(path.join(work, '.cargo'), { recursive: true });
  await writeFile(path.join(work, '.cargo', 'config.toml'), CARGO_CONFIG);
  const target = path.join(cache, toolchain, 'target');
  // Plain first; then with the flag proc-macro2 1.0.47 needs on a current nightly (its build
  // script probes proc_macro_span). Not always: the flag forbids every other unstable feature,
  // which breaks crates that enable one on nightly (ahash's min_specialization under hashbrown).
  let used: string[] = [];
  let doc: { code: number; stderr: string } = { code: 1, stderr: '' };
  const attempts: string[] = [];
  for (const flags of FLAG_SETS) {
    const env = cargoEnv(target, flags);
    opts.log?.(`oracle: ${crate.dirName}: rustdoc JSON${flags.length ? ` (${flags.join(' ')})` : ''}`);
    doc = await cargo(RUSTDOC_ARGS, work, env, null);
    used = flags;
    if (doc.code === 0) break;
    attempts.push(`${flags.length ? `with RUSTFLAGS=${flags.join(' ')}` : 'plain'}: ${firstError(doc.stderr, doc.code)}`);
  }
  if (doc.code !== 0) return fail(`cargo rustdoc failed; ${attempts.join('; ')}`);
  const env = cargoEnv(target, used);
  const libName = await libTargetName(work, crate.name);
  const json = path.join(target, 'doc', `${libName}.json`);
  if (!existsSync(json)) return fail(`cargo rustdoc succeeded but wrote no ${json}`);
  await gzipFile(json, p.rustdoc);
  opts.log?.(`oracle: ${crate.dirName}: MIR`);
  const mirRaw = path.join(p.dir, 'mir.txt');
  const mir = await cargo(MIR_ARGS, work, env, mirRaw);
  if (mir.code !== 0) {
    await rm(mirRaw, { force: true });
    return fail(`cargo rustc -Zunpretty=mir failed, ${firstError(mir.stderr, mir.code)}`);
  }
  await gzipFile(mirRaw, p.mir);
  await rm(mirRaw, { force: true });
  await rm(work, { recursive: true, force: true });
  const s: OracleStatus = { ok: true, error: '', toolchain, seconds: (Date.now() - started) / 1000, features: 'default', rustflags: used.join(' ') };
  await writeFile(`${p.status}.tmp`, JSON.stringify(s, null, 2));
  await rename(`${p.status}.tmp`, p.status);
  return s;
}

/** The lib target's name (`[lib] name`, else the package name with `_`). */
async function libTargetName(dir: string, fallback: string): Promise<string> {
  try {
    const doc = parseToml(await readFile(path.join(dir, 'Cargo.toml'), 'utf8')) as Record<string, unknown>;
    const lib = doc['lib'] as Record<string, unknown> | undefined;
    const pkg = doc['package'] as Record<string, unknown> | undefined;
    const name = (typeof lib?.['name'] === 'string' ? lib['name'] : typeof pkg?.['name'] === 'string' ? pkg['name'] : fallback) as string;
    return name.replace(/-/g, '_');
  } catch {
    return fallback.replace(/-/g, '_');
  }
}
