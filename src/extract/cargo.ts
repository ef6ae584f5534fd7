// Cargo manifests and lock files -> packages, targets and dependencies, read
// with a real TOML parser (smol-toml).
//
// Invariant: never throws on bad input. A malformed or unreadable Cargo.toml,
// one cargo would refuse (a key of the wrong type, a required key missing,
// an inherited key the workspace does not set: manifest-check.ts), a member
// that does not exist or a broken Cargo.lock becomes a Problem and the rest of
// the workspace is still read; a refused member is not read at all. A file
// name that is not UTF-8, met while discovering targets, is skipped and listed
// in its package's `skipped`. Read-only.
import { readdir, readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { checkManifest, inheritedOf, isTable, type Inherited } from './manifest-check.ts';
import type { Problem } from './types.ts';

/** `lib`/`bin` make the package's own crate; the others are crates of their own (cargo's targets). */
export type TargetKind = 'lib' | 'bin' | 'test' | 'example' | 'bench' | 'build';

export interface Target {
  kind: TargetKind;
  name: string;
  /** Relative to the package dir, '/'-separated. */
  path: string;
}

export interface Dependency {
  /** The name the code uses (`foo` in `foo = { package = "bar" }`), with `-` kept as written. */
  localName: string;
  /** The crate's real name (`bar` above). */
  crateName: string;
  /** Version requirement as written, or null (path/git dependencies without one). */
  req: string | null;
  /** Version picked from Cargo.lock, or null when the lock does not list the crate. */
  resolved: string | null;
  kind: 'normal' | 'dev' | 'build';
  /** Absolute dir of a path dependency, else null. */
  path: string | null;
  /** `optional = true`: only there when a feature enables it. */
  optional: boolean;
}

export interface Package {
  name: string;
  version: string;
  edition: string;
  /** Absolute package dir. */
  dir: string;
  /** The package's own crate: its lib (first, when there is one) and bins. */
  targets: Target[];
  /**
   * The targets that are crates of their own: tests, examples, benches (explicit and
   * discovered, as cargo) and the build script (kind `build`), in that order.
   */
  otherTargets: Target[];
  deps: Dependency[];
  /** The `[features]` table: feature -> what it enables (`feat`, `dep:x`, `x/feat`, `x?/feat`). */
  features: Record<string, string[]>;
  /** The build script relative to the package dir (`build.rs` when present), or null. */
  buildScript: string | null;
  /** Files left out: target files whose name is not UTF-8 (kind `not-utf8`, path relative to the package dir, bytes as \xNN). */
  skipped: Problem[];
}

/** Which features to enable, as `cargo build --features … [--all-features] [--no-default-features]`. */
export interface FeatureSelection {
  features?: readonly string[];
  allFeatures?: boolean;
  noDefaultFeatures?: boolean;
}

export interface Workspace {
  /** Absolute dir holding the top Cargo.toml. */
  root: string;
  packages: Package[];
  /** Cargo.lock versions per crate name (empty when there is no lock). */
  lock: Map<string, string[]>;
  problems: Problem[];
}

type Table = Record<string, unknown>;

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

function rel(from: string, p: string): string {
  return path.relative(from, p).split(path.sep).join('/') || '.';
}

async function readToml(file: string, problems: Problem[], shownFrom: string): Promise<Table | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    problems.push({ path: rel(shownFrom, file), kind: 'unreadable', message: `cannot read ${file}: ${(e as Error).message}` });
    return null;
  }
  try {
    // integers as bigint: a mistake reads `integer 1`, not a number that may have been 1.0
    return parseToml(text, { integersAsBigInt: true }) as Table;
  } catch (e) {
    const first = String((e as Error).message).split('\n')[0];
    problems.push({ path: rel(shownFrom, file), kind: 'bad-manifest', message: `${file} is not valid TOML: ${first}` });
    return null;
  }
}

/** Cargo.lock in `dir`: crate name -> versions listed (sorted ascending). Missing/bad lock: empty map. */
export async function lockVersions(dir: string, problems: Problem[] = []): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const file = path.join(dir, 'Cargo.lock');
  try {
    await stat(file);
  } catch {
    return out;
  }
  const doc = await readToml(file, problems, dir);
  const pkgs = doc?.['package'];
  if (!Array.isArray(pkgs)) return out;
  for (const p of pkgs) {
    if (!isTable(p)) continue;
    const name = str(p['name']);
    const version = str(p['version']);
    if (!name || !version) continue;
    const list = out.get(name) ?? [];
    if (!list.includes(version)) list.push(version);
    out.set(name, list);
  }
  for (const list of out.values()) list.sort(compareVersions);
  return out;
}

/** Read a workspace (`[workspace]` members) or a single package at `dir`. */
export async function readWorkspace(dir: string): Promise<Workspace> {
  const root = path.resolve(dir);
  const problems: Problem[] = [];
  const lock = await lockVersions(root, problems);
  const ws: Workspace = { root, packages: [], lock, problems };
  const manifest = await readToml(path.join(root, 'Cargo.toml'), problems, root);
  if (!manifest) return ws;
  const home = await workspaceOf(root, manifest);
  if (!checked(manifest, home, path.join(root, 'Cargo.toml'), root, problems)) return ws;
  const workspace = isTable(manifest['workspace']) ? manifest['workspace'] : null;
  const memberDirs: string[] = [];
  if (manifest['package'] !== undefined) memberDirs.push(root);
  if (workspace) {
    const exclude = new Set(
      (Array.isArray(workspace['exclude']) ? workspace['exclude'] : [])
        .map((e) => str(e)).filter((e): e is string => e !== null).map((e) => path.resolve(root, e)));
    const members = Array.isArray(workspace['members']) ? workspace['members'] : [];
    for (const m of members) {
      const pattern = str(m);
      if (pattern === null) continue;
      const dirs = await expandGlob(root, pattern, problems);
      if (dirs.length === 0 && !/[*?[]/.test(pattern)) {
        problems.push({ path: pattern, kind: 'missing', message: `workspace member ${pattern} has no Cargo.toml` });
      }
      for (const d of dirs) if (!exclude.has(d) && !memberDirs.includes(d)) memberDirs.push(d);
    }
  }
  for (const d of memberDirs) {
    const file = path.join(d, 'Cargo.toml');
    const doc = d === root ? manifest : await readToml(file, problems, root);
    if (!doc) continue;
    // a member inherits from the root's [workspace]; the root from itself (or a workspace above it)
    const from = d === root ? home : { dir: root, inherit: inheritedOf(workspace) };
    if (d !== root && !checked(doc, from, file, root, problems)) continue;
    const pkg = await packageOf(d, doc, from, lock, problems, root);
    if (pkg) {
      if (!pkg.version) pkg.version = '0.0.0'; // cargo >= 1.75: a package without a version is 0.0.0
      ws.packages.push(pkg);
    }
  }
  return ws;
}

/**
 * A crate directory as found in a registry or vendor layout (`name-version/`
 * holding a Cargo.toml). `lock` resolves its dependencies when given. A
 * manifest cargo would refuse gives no package, and says why in `problems`.
 */
export async function readCrateDir(dir: string, lock: Map<string, string[]> = new Map()): Promise<{ pkg: Package | null; problems: Problem[] }> {
  const d = path.resolve(dir);
  const problems: Problem[] = [];
  const file = path.join(d, 'Cargo.toml');
  const doc = await readToml(file, problems, d);
  if (!doc) return { pkg: null, problems };
  const home = await workspaceOf(d, doc);
  if (!checked(doc, home, file, d, problems)) return { pkg: null, problems };
  const pkg = await packageOf(d, doc, home, lock, problems, d);
  if (pkg && !pkg.version) {
    // no version in the manifest: the folder's name gives it, else cargo's 0.0.0
    const m = /-(\d+\.\d+\.\d+[^/]*)$/.exec(path.basename(d));
    pkg.version = m ? m[1]! : '0.0.0';
  }
  return { pkg, problems };
}

/** Where a manifest inherits `{ workspace = true }` keys from: its own [workspace], else the nearest one above its folder. */
interface Home {
  dir: string;
  inherit: Inherited;
}

async function workspaceOf(dir: string, doc: Table): Promise<Home | null> {
  if (isTable(doc['workspace'])) return { dir, inherit: inheritedOf(doc['workspace']) };
  if (!inherits(doc)) return null;
  // cargo looks upward for the workspace root (`package.workspace` names it when it is elsewhere)
  const pkg = isTable(doc['package']) ? doc['package'] : {};
  const named = str(pkg['workspace']);
  const candidates: string[] = [];
  if (named !== null) candidates.push(path.resolve(dir, named));
  else for (let p = path.dirname(dir); ; p = path.dirname(p)) {
    candidates.push(p);
    if (path.dirname(p) === p) break;
  }
  for (const c of candidates) {
    let text: string;
    try { text = await readFile(path.join(c, 'Cargo.toml'), 'utf8'); } catch { continue; }
    let up: Table;
    try { up = parseToml(text, { integersAsBigInt: true }) as Table; } catch { continue; }
    if (isTable(up['workspace'])) return { dir: c, inherit: inheritedOf(up['workspace']) };
  }
  return null;
}

/** Does the manifest take any key `{ workspace = true }`? */
function inherits(doc: Table): boolean {
  const ref = (v: unknown) => isTable(v) && v['workspace'] === true;
  const pkg = isTable(doc['package']) ? doc['package'] : {};
  if (Object.values(pkg).some(ref)) return true;
  const sections = [doc, ...(isTable(doc['target']) ? Object.values(doc['target']).filter(isTable) : [])];
  for (const t of sections) {
    for (const key of ['dependencies', 'dev-dependencies', 'build-dependencies']) {
      if (isTable(t[key]) && Object.values(t[key]).some(ref)) return true;
    }
  }
  return false;
}

/** `doc` is a manifest cargo accepts; else each mistake is a `bad-manifest` problem naming the file and the key. */
function checked(doc: Table, home: Home | null, file: string, shownFrom: string, problems: Problem[]): boolean {
  const mistakes = checkManifest(doc, home?.inherit ?? null);
  const shown = rel(shownFrom, file);
  for (const m of mistakes) problems.push({ path: shown, kind: 'bad-manifest', message: `${shown}: ${m.message}` });
  return mistakes.length === 0;
}

/** `crates/*`-style member patterns: `*` and `?` within one path segment. A folder name that is not UTF-8 is a problem. */
async function expandGlob(root: string, pattern: string, problems: Problem[]): Promise<string[]> {
  const segs = pattern.split('/').filter((s) => s !== '' && s !== '.');
  let dirs = [root];
  for (const seg of segs) {
    const next: string[] = [];
    if (!/[*?[]/.test(seg)) {
      for (const d of dirs) next.push(path.join(d, seg));
    } else {
      const re = new RegExp('^' + seg.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
      for (const d of dirs) {
        let names: Name[] = [];
        try { names = await readNames(d); } catch { /* unreadable: nothing matches */ }
        for (const n of names) {
          if (!re.test(n.text)) continue;
          if (n.escaped === null) next.push(path.join(d, n.text));
          else if (await existsRaw(d, n.raw, 'Cargo.toml')) {
            const shown = rel(root, path.join(d, n.escaped));
            problems.push({ path: shown, kind: 'not-utf8', message: `workspace member ${shown} (matched by ${pattern}): its folder name is not valid UTF-8; Mimir cannot name its files` });
          }
        }
      }
    }
    dirs = next;
  }
  const out: string[] = [];
  for (const d of dirs) {
    try {
      if ((await stat(path.join(d, 'Cargo.toml'))).isFile()) out.push(d);
    } catch { /* not a package */ }
  }
  return out;
}

async function packageOf(
  dir: string, doc: Table, home: Home | null, lock: Map<string, string[]>, problems: Problem[], shownFrom: string,
): Promise<Package | null> {
  const pkg = isTable(doc['package']) ? doc['package'] : null;
  const manifest = rel(shownFrom, path.join(dir, 'Cargo.toml'));
  if (!pkg || !str(pkg['name'])) {
    problems.push({ path: manifest, kind: 'bad-manifest', message: `${manifest}: expected [package] with a name, found none` });
    return null;
  }
  const wsPackage = home?.inherit.package ?? {};
  const inherited = (key: string): string => {
    const v = pkg[key];
    if (isTable(v) && v['workspace'] === true) return str(wsPackage[key]) ?? '';
    return str(v) ?? '';
  };
  const name = str(pkg['name'])!;
  const skipped: Problem[] = [];
  const out: Package = {
    name,
    version: inherited('version'),
    edition: inherited('edition') || '2015',
    dir,
    targets: [],
    otherTargets: [],
    deps: [],
    features: featuresTable(doc['features']),
    buildScript: await buildScriptOf(dir, pkg),
    skipped,
  };
  const all = await targetsOf(dir, name, doc, pkg, out.edition, skipped);
  out.targets = all.filter((t) => t.kind === 'lib' || t.kind === 'bin');
  out.otherTargets = all.filter((t) => t.kind !== 'lib' && t.kind !== 'bin');
  if (out.buildScript) out.otherTargets.push({ kind: 'build', name: 'build-script-build', path: out.buildScript });
  const wsDeps = home?.inherit.dependencies ?? {};
  const sections: [string, Dependency['kind']][] = [['dependencies', 'normal'], ['dev-dependencies', 'dev'], ['build-dependencies', 'build']];
  const tables: [Table, Dependency['kind']][] = [];
  for (const [key, kind] of sections) if (isTable(doc[key])) tables.push([doc[key] as Table, kind]);
  // [target.'cfg(..)'.dependencies] count as well.
  if (isTable(doc['target'])) {
    for (const t of Object.values(doc['target'])) {
      if (!isTable(t)) continue;
      for (const [key, kind] of sections) if (isTable(t[key])) tables.push([t[key] as Table, kind]);
    }
  }
  for (const [table, kind] of tables) {
    for (const [localName, spec] of Object.entries(table)) {
      let s: unknown = spec;
      // an inherited path is relative to the workspace root, the member's own to its folder
      let base = dir;
      if (isTable(s) && s['workspace'] === true) {
        const from = wsDeps[localName];
        s = isTable(from) ? { ...from, ...s } : from ?? s;
        if (home && isTable(from) && str(from['path'])) base = home.dir;
      }
      const crateName = (isTable(s) ? str(s['package']) : null) ?? localName;
      const req = typeof s === 'string' ? s : isTable(s) ? str(s['version']) : null;
      const depPath = isTable(s) && str(s['path']) ? path.resolve(base, str(s['path'])!) : null;
      const optional = isTable(s) && s['optional'] === true;
      out.deps.push({ localName, crateName, req, resolved: pickVersion(lock.get(crateName) ?? [], req), kind, path: depPath, optional });
    }
  }
  return out;
}

function featuresTable(v: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!isTable(v)) return out;
  for (const [k, list] of Object.entries(v)) {
    out[k] = Array.isArray(list) ? list.map((x) => str(x)).filter((x): x is string => x !== null) : [];
  }
  return out;
}

async function buildScriptOf(dir: string, pkg: Table): Promise<string | null> {
  const b = pkg['build'];
  if (b === false) return null;
  if (typeof b === 'string') return b;
  return (await exists(path.join(dir, 'build.rs'))) ? 'build.rs' : null;
}

/**
 * The features a selection enables, expanded through `[features]` as cargo
 * does: `default` unless `noDefaultFeatures`; a feature enables what it
 * lists; `dep:x` and `x/f` enable optional dependency `x` (and its implicit
 * feature `x`, which exists when no `dep:x` is written anywhere); `x?/f`
 * enables nothing by itself. Feature names of dependencies (`x/f`) concern
 * `x`'s own build and are not returned. Sorted.
 */
export function activeFeatures(pkg: Pick<Package, 'features' | 'deps'>, sel: FeatureSelection = {}): string[] {
  const table = pkg.features;
  const optional = new Set(pkg.deps.filter((d) => d.optional && d.kind !== 'dev').map((d) => d.localName));
  const explicitDep = new Set<string>();
  for (const list of Object.values(table)) for (const e of list) if (e.startsWith('dep:')) explicitDep.add(e.slice(4));
  const implicit = new Set([...optional].filter((d) => !explicitDep.has(d) && !(d in table)));
  const on = new Set<string>();
  const queue: string[] = [];
  const enable = (f: string) => {
    if (on.has(f)) return;
    if (!(f in table) && !implicit.has(f)) return; // unknown feature: cargo would refuse; ignored here
    on.add(f);
    queue.push(f);
  };
  if (!sel.noDefaultFeatures && 'default' in table) enable('default');
  for (const f of sel.features ?? []) enable(f);
  if (sel.allFeatures) {
    for (const f of Object.keys(table)) enable(f);
    for (const d of implicit) enable(d);
  }
  while (queue.length > 0) {
    const f = queue.shift()!;
    for (const e of table[f] ?? []) {
      if (e.startsWith('dep:')) continue; // enables the dependency, not a feature
      const slash = e.indexOf('/');
      if (slash >= 0) {
        const dep = e.slice(0, slash);
        if (!dep.endsWith('?')) enable(dep);
        continue;
      }
      enable(e);
    }
  }
  return [...on].sort();
}

async function exists(p: string): Promise<boolean> {
  try { return (await stat(p)).isFile(); } catch { return false; }
}

async function targetsOf(dir: string, name: string, doc: Table, pkg: Table, edition: string, skipped: Problem[]): Promise<Target[]> {
  const targets: Target[] = [];
  const ident = name.replace(/-/g, '_');
  const lib = isTable(doc['lib']) ? doc['lib'] : null;
  const libPath = (lib && str(lib['path'])) ?? 'src/lib.rs';
  if ((lib && str(lib['path'])) || await exists(path.join(dir, libPath))) {
    targets.push({ kind: 'lib', name: (lib && str(lib['name'])) ?? ident, path: libPath });
  }
  const bins = Array.isArray(doc['bin']) ? doc['bin'].filter(isTable) : [];
  const seen = new Set<string>();
  for (const b of bins) {
    const bname = str(b['name']) ?? name;
    const bpath = str(b['path']) ?? (await exists(path.join(dir, 'src/bin', `${bname}.rs`)) ? `src/bin/${bname}.rs` : bname === name ? 'src/main.rs' : `src/bin/${bname}/main.rs`);
    targets.push({ kind: 'bin', name: bname, path: bpath });
    seen.add(bpath);
  }
  if (pkg['autobins'] !== false) {
    if (!seen.has('src/main.rs') && await exists(path.join(dir, 'src/main.rs'))) targets.push({ kind: 'bin', name, path: 'src/main.rs' });
    for (const t of await discovered(dir, 'src/bin', skipped)) {
      if (!seen.has(t.path)) {
        targets.push({ kind: 'bin', ...t });
        seen.add(t.path);
      }
    }
  }
  // tests, examples, benches: the explicit [[test]]… entries, then the discovered files (cargo's
  // autotests/autoexamples/autobenches; edition 2015 turns discovery off for a kind with entries)
  const kinds: [Target['kind'], string, string][] = [['test', 'test', 'tests'], ['example', 'example', 'examples'], ['bench', 'bench', 'benches']];
  for (const [kind, key, folder] of kinds) {
    const explicit = Array.isArray(doc[key]) ? (doc[key] as unknown[]).filter(isTable) : [];
    const names = new Set<string>();
    for (const t of explicit) {
      const tname = str(t['name']);
      if (!tname) continue;
      const tpath = str(t['path']) ?? (await exists(path.join(dir, folder, `${tname}.rs`)) ? `${folder}/${tname}.rs` : `${folder}/${tname}/main.rs`);
      if (seen.has(tpath) || names.has(tname)) continue;
      targets.push({ kind, name: tname, path: tpath });
      seen.add(tpath);
      names.add(tname);
    }
    const auto = pkg[`auto${folder}`];
    if (auto === false || (auto === undefined && edition === '2015' && explicit.length > 0)) continue;
    for (const t of await discovered(dir, folder, skipped)) {
      if (seen.has(t.path) || names.has(t.name)) continue;
      targets.push({ kind, ...t });
      seen.add(t.path);
      names.add(t.name);
    }
  }
  return targets;
}

/**
 * Cargo's target discovery in `folder`: `x.rs` and `x/main.rs`, sorted by name. A candidate
 * whose name is not UTF-8 is left out and listed in `skipped` (its bytes shown as \xNN).
 */
async function discovered(dir: string, folder: string, skipped: Problem[]): Promise<{ name: string; path: string }[]> {
  let entries: Name[] = [];
  try { entries = await readNames(path.join(dir, folder)); } catch { /* no such folder */ }
  const out: { name: string; path: string }[] = [];
  for (const n of entries) {
    if (n.escaped !== null) {
      const rs = n.raw.subarray(n.raw.length - 3).toString('latin1') === '.rs';
      if (await existsRaw(path.join(dir, folder), n.raw, rs ? '' : 'main.rs')) {
        const shown = `${folder}/${n.escaped}${rs ? '' : '/main.rs'}`;
        skipped.push({ path: shown, kind: 'not-utf8', message: `${shown}: file name is not valid UTF-8; skipped (not read as a target)` });
      }
      continue;
    }
    const p = n.text.endsWith('.rs') ? `${folder}/${n.text}` : `${folder}/${n.text}/main.rs`;
    if (await exists(path.join(dir, p))) out.push({ name: n.text.replace(/\.rs$/, ''), path: p });
  }
  return out;
}

/** A folder entry: its name as text (lossy when not UTF-8), its bytes, and, when not UTF-8, the name with bad bytes as \xNN. */
interface Name {
  text: string;
  raw: Buffer;
  escaped: string | null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The entries of `dir` read as bytes (Node would otherwise mangle a name that is not UTF-8), sorted by text. Throws when unreadable. */
async function readNames(dir: string): Promise<Name[]> {
  const raws = await readdir(dir, { encoding: 'buffer' });
  const out = raws.map((raw): Name => {
    try {
      return { text: utf8.decode(raw), raw, escaped: null };
    } catch {
      return { text: raw.toString('utf8'), raw, escaped: escapeName(raw) };
    }
  });
  return out.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}

/** `bytes` as text, each byte that is not part of a valid UTF-8 sequence written \xNN. */
export function escapeName(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len > 0 && i + len <= bytes.length) {
      try {
        out += utf8.decode(bytes.subarray(i, i + len));
        i += len;
        continue;
      } catch { /* not a valid sequence: escape the byte */ }
    }
    out += `\\x${b.toString(16).padStart(2, '0')}`;
    i++;
  }
  return out;
}

/** Is `dir`/`raw`/`file` (raw: a name's bytes; `file` '' for the entry itself) a file? */
async function existsRaw(dir: string, raw: Buffer, file: string): Promise<boolean> {
  const p = Buffer.concat([Buffer.from(dir + path.sep), raw, Buffer.from(file === '' ? '' : path.sep + file)]);
  try { return (await stat(p)).isFile(); } catch { return false; }
}

// --- versions -------------------------------------------------------------

type Ver = [number, number, number, string];

function parseVersion(v: string): Ver | null {
  const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?/.exec(v.trim());
  if (!m) return null;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0), m[4] ?? ''];
}

export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  if (x[3] === y[3]) return 0;
  if (x[3] === '') return 1; // a release sorts after its pre-releases
  if (y[3] === '') return -1;
  return x[3] < y[3] ? -1 : 1;
}

/** Does `version` satisfy one comparator (`^1.2`, `~1`, `=1.2.3`, `>=1, <2`, `1.*`, `*`)? */
function satisfies(version: string, req: string): boolean {
  const v = parseVersion(version);
  if (!v) return false;
  for (const raw of req.split(',')) {
    const part = raw.trim();
    if (part === '' || part === '*') continue;
    const m = /^(\^|~|=|>=|<=|>|<)?\s*(.*)$/.exec(part)!;
    const op = m[1] ?? '^';
    const spec = m[2]!.replace(/\.\*$/, '').replace(/\.x$/i, '');
    const nums = spec.split('.').filter((s) => s !== '' && s !== '*');
    const r = parseVersion(spec);
    if (!r) return false;
    const cmp = compareVersions(version, spec.split('.').length < 3 ? `${r[0]}.${r[1]}.${r[2]}` : spec);
    const ok = (() => {
      switch (op) {
        case '=': return nums.length >= 3 ? cmp === 0 : prefixMatch(v, r, nums.length);
        case '>': return cmp > 0;
        case '>=': return cmp >= 0;
        case '<': return cmp < 0;
        case '<=': return cmp <= 0;
        case '~': return cmp >= 0 && prefixMatch(v, r, Math.min(Math.max(nums.length, 1), 2));
        default: {
          // caret: same left-most non-zero component
          if (cmp < 0) return false;
          const lead = r[0] !== 0 || nums.length === 1 ? 1 : r[1] !== 0 || nums.length === 2 ? 2 : 3;
          return prefixMatch(v, r, lead);
        }
      }
    })();
    if (!ok) return false;
  }
  return true;
}

function prefixMatch(v: Ver, r: Ver, n: number): boolean {
  for (let i = 0; i < n; i++) if (v[i] !== r[i]) return false;
  return true;
}

/** The highest locked version satisfying `req`; else the only/highest locked one; null if none is locked. */
export function pickVersion(locked: string[], req: string | null): string | null {
  if (locked.length === 0) return null;
  const sorted = [...locked].sort(compareVersions);
  if (req) {
    for (let i = sorted.length - 1; i >= 0; i--) if (satisfies(sorted[i]!, req)) return sorted[i]!;
  }
  return sorted[sorted.length - 1]!;
}
