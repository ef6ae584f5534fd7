// Finding crate directories on disk: a `name-version/` folder, a folder of
// them (`cargo vendor` output, `~/.cargo/registry/src/<index>/`,
// `/usr/share/cargo/registry/`), and the local copies of the versions a
// Cargo.lock names. Read-only; an unreadable folder is reported, never thrown.
// A folder whose Cargo.toml cargo would refuse is still a crate folder here:
// reading it (ingest.ts universeAdd) reports the mistake and skips it.
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { compareVersions, readCrateDir } from '../extract/index.ts';

/** `name-1.2.3` (or `name-1.2.3-beta.1`) -> name and version; null when the folder is not named so. */
export function parseCrateDirName(base: string): { name: string; version: string } | null {
  const m = /^(.+?)-(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$/.exec(base);
  return m ? { name: m[1]!, version: m[2]! } : null;
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

async function subdirs(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.isDirectory() || e.isSymbolicLink()) out.push(path.join(dir, e.name));
  }
  return out;
}

/**
 * Crate directories under `paths`: a path holding a Cargo.toml is a crate;
 * otherwise its subfolders that hold one (and, one level further down, the
 * `~/.cargo/registry/src` layout of one folder per index).
 */
export async function expandCrateDirs(paths: string[]): Promise<{ dirs: string[]; problems: { path: string; message: string }[] }> {
  const dirs: string[] = [];
  const problems: { path: string; message: string }[] = [];
  const seen = new Set<string>();
  const push = (d: string) => {
    if (!seen.has(d)) {
      seen.add(d);
      dirs.push(d);
    }
  };
  for (const raw of paths) {
    const p = path.resolve(raw);
    if (await isFile(path.join(p, 'Cargo.toml'))) {
      push(p);
      continue;
    }
    let level1: string[];
    try {
      level1 = await subdirs(p);
    } catch (e) {
      problems.push({ path: p, message: `cannot read ${p}: ${(e as Error).message}` });
      continue;
    }
    let found = 0;
    for (const d of level1) {
      if (await isFile(path.join(d, 'Cargo.toml'))) {
        push(d);
        found++;
      }
    }
    if (found > 0) continue;
    for (const d of level1) {
      try {
        for (const dd of await subdirs(d)) {
          if (await isFile(path.join(dd, 'Cargo.toml'))) {
            push(dd);
            found++;
          }
        }
      } catch {
        // unreadable index folder: nothing there for us
      }
    }
    if (found === 0) problems.push({ path: p, message: `${p} holds no Cargo.toml, neither itself nor in its subfolders` });
  }
  return { dirs, problems };
}

/** Where local crate sources live: the workspace's vendor/, ~/.cargo/registry/src/*, Debian's registry. */
export async function defaultSearchDirs(workspaceRoot?: string): Promise<string[]> {
  const out: string[] = [];
  if (workspaceRoot) out.push(path.join(workspaceRoot, 'vendor'));
  const cargoHome = process.env['CARGO_HOME'] ?? path.join(homedir(), '.cargo');
  try {
    for (const d of await subdirs(path.join(cargoHome, 'registry', 'src'))) out.push(d);
  } catch {
    // no cargo registry here
  }
  out.push('/usr/share/cargo/registry');
  return out;
}

/**
 * Local copies of `name@version`: `<dir>/name-version/`, or (vendor layout)
 * `<dir>/name/` whose manifest declares that version. First hit wins. A
 * vendor `name/` whose manifest does not parse or cargo would refuse is
 * returned too (its version cannot be known): the universe add that reads it
 * reports why it is skipped, where "not found" would hide the reason.
 */
export async function findCrate(name: string, version: string, searchDirs: string[]): Promise<string | null> {
  for (const dir of searchDirs) {
    const versioned = path.join(dir, `${name}-${version}`);
    if (await isFile(path.join(versioned, 'Cargo.toml'))) return versioned;
    const plain = path.join(dir, name);
    if (await isFile(path.join(plain, 'Cargo.toml'))) {
      const { pkg, problems } = await readCrateDir(plain);
      if (pkg ? pkg.version === version : problems.some((p) => p.kind === 'bad-manifest')) return plain;
    }
  }
  return null;
}

/**
 * The versions of crates present in `searchDirs` (by folder name `name-version/`, or a
 * vendor `name/` folder's manifest), each folder listed once: for saying which other
 * versions of a missing dependency are present, and for `--deps nearest`.
 */
export class LocalCrates {
  private readonly listings = new Map<string, Map<string, { version: string; dir: string }[]>>();

  constructor(readonly searchDirs: readonly string[]) {}

  private async listing(dir: string): Promise<Map<string, { version: string; dir: string }[]>> {
    let m = this.listings.get(dir);
    if (m) return m;
    m = new Map();
    this.listings.set(dir, m);
    let names: string[] = [];
    try {
      names = await readdir(dir);
    } catch {
      return m; // absent or unreadable: nothing there
    }
    for (const n of names.sort()) {
      const parsed = parseCrateDirName(n);
      if (!parsed) continue;
      const list = m.get(parsed.name) ?? [];
      list.push({ version: parsed.version, dir: path.join(dir, n) });
      m.set(parsed.name, list);
    }
    return m;
  }

  /** Every version of `name` found (folder `name-version/`, or a vendor `name/` folder), first folder per version. */
  async versions(name: string): Promise<{ version: string; dir: string }[]> {
    const out = new Map<string, string>();
    for (const dir of this.searchDirs) {
      for (const v of (await this.listing(dir)).get(name) ?? []) if (!out.has(v.version) && await isFile(path.join(v.dir, 'Cargo.toml'))) out.set(v.version, v.dir);
      const plain = path.join(dir, name);
      if (await isFile(path.join(plain, 'Cargo.toml'))) {
        const { pkg } = await readCrateDir(plain);
        if (pkg?.version && !out.has(pkg.version)) out.set(pkg.version, plain);
      }
    }
    return [...out].map(([version, dir]) => ({ version, dir }));
  }
}

/**
 * The version of `candidates` nearest to `wanted` among the semver-compatible ones
 * (cargo's caret rule: same major; for 0.x the same minor; for 0.0.x the same patch):
 * the lowest one above `wanted`, else the highest below. Null when none is compatible.
 */
export function nearestCompatible(wanted: string, candidates: readonly string[]): string | null {
  const parts = (v: string): number[] | null => {
    const m = /^(\d+)\.(\d+)\.(\d+)/.exec(v);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
  };
  const w = parts(wanted);
  if (!w) return null;
  const lead = w[0] !== 0 ? 1 : w[1] !== 0 ? 2 : 3;
  const ok = candidates.filter((c) => {
    const p = parts(c);
    return p !== null && c !== wanted && p.slice(0, lead).every((x, i) => x === w[i]);
  }).sort(compareVersions);
  return ok.find((c) => compareVersions(c, wanted) > 0) ?? ok[ok.length - 1] ?? null;
}
