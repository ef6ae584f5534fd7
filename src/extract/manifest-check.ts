// Cargo.toml checked as cargo checks it before building: the keys Mimir reads
// (and their neighbours) must have the types cargo's manifest schema gives
// them, the required ones must be there, and workspace inheritance must find
// what it inherits. A manifest cargo would refuse is refused here too, so that
// a typo (`version = 1`) can never read as "a package of version ''" and
// rewrite a repo under new crate names.
//
// Invariant: pure — a parsed TOML document in, a list of mistakes out (each a
// dotted key path and a sentence saying what was expected and what was found);
// no I/O, no throwing. Unknown keys are not mistakes (cargo only warns).
//
// Facts followed (cargo's manifest format): `package.name` is required, a
// crate name (a letter or `_`, then letters, digits, `_`, `-`); `package.version`
// is a full semver version, optional since cargo 1.75 (absent means 0.0.0, and
// then `publish` must not be true); `edition` is one of 2015/2018/2021/2024;
// `[[bin]]`/`[[test]]`/`[[example]]`/`[[bench]]` need a `name`; a library name
// has no `-`; `{ workspace = true }` takes the key from `[workspace.package]` or
// `[workspace.dependencies]`, and `workspace = false` is refused.
type Table = Record<string, unknown>;

export interface ManifestMistake {
  /** Dotted key path in the manifest (`package.version`, `dependencies.serde.features`). */
  key: string;
  message: string;
}

export const EDITIONS = ['2015', '2018', '2021', '2024'] as const;

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const CRATE_NAME = /^[\p{XID_Start}_][\p{XID_Continue}-]*$/u;

export function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** A TOML value as an error message shows it: `integer 1`, `float 0.2`, `"rlib"`, `boolean true`, `an array`, `a table`. */
export function describe(v: unknown): string {
  if (typeof v === 'bigint') return `integer ${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `integer ${v}` : `float ${v}`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return `boolean ${v}`;
  if (Array.isArray(v)) return v.length === 0 ? 'an empty array' : `an array (${v.map(describe).slice(0, 3).join(', ')}${v.length > 3 ? ', …' : ''})`;
  if (isTable(v)) return 'a table';
  return `a date-time ${String(v)}`;
}

/** `[workspace.package]` / `[workspace.dependencies]` a member inherits from, when there is a workspace. */
export interface Inherited {
  package: Table;
  dependencies: Table;
}

/** What cargo would refuse in `doc` (a parsed Cargo.toml); `ws` is the workspace it inherits from, or null. */
export function checkManifest(doc: Table, ws: Inherited | null): ManifestMistake[] {
  const c = new Checker();
  c.manifest(doc, ws);
  return c.mistakes;
}

/** The workspace a `[workspace]` table gives its members to inherit. */
export function inheritedOf(workspace: unknown): Inherited {
  const w = isTable(workspace) ? workspace : {};
  return { package: isTable(w['package']) ? w['package'] : {}, dependencies: isTable(w['dependencies']) ? w['dependencies'] : {} };
}

const DEP_SECTIONS = ['dependencies', 'dev-dependencies', 'build-dependencies', 'dev_dependencies', 'build_dependencies'];
const TARGET_LISTS = ['bin', 'test', 'example', 'bench'];

class Checker {
  readonly mistakes: ManifestMistake[] = [];

  private add(key: string, message: string): void {
    this.mistakes.push({ key, message: `${key} ${message}` });
  }

  private optString(t: Table, key: string, at: string, what = 'a string'): void {
    const v = t[key];
    if (v !== undefined && typeof v !== 'string') this.add(`${at}${key}`, `must be ${what}, found ${describe(v)}`);
  }

  private optBool(t: Table, key: string, at: string): void {
    const v = t[key];
    if (v !== undefined && typeof v !== 'boolean') this.add(`${at}${key}`, `must be a boolean, found ${describe(v)}`);
  }

  private optStrings(t: Table, key: string, at: string): void {
    const v = t[key];
    if (v === undefined) return;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) this.add(`${at}${key}`, `must be an array of strings, found ${describe(v)}`);
  }

  private optTable(t: Table, key: string, at: string): Table | null {
    const v = t[key];
    if (v === undefined) return null;
    if (!isTable(v)) {
      this.add(`${at}${key}`, `must be a table, found ${describe(v)}`);
      return null;
    }
    return v;
  }

  manifest(doc: Table, ws: Inherited | null): void {
    const workspace = this.optTable(doc, 'workspace', '');
    if (workspace) this.workspace(workspace);
    // a manifest that holds [workspace] is its own workspace root
    const inherit = workspace ? inheritedOf(workspace) : ws;
    const pkg = this.optTable(doc, 'package', '');
    if (pkg) this.package(pkg, inherit);
    const lib = this.optTable(doc, 'lib', '');
    if (lib) this.target(lib, 'lib.', false, true);
    for (const key of TARGET_LISTS) {
      const v = doc[key];
      if (v === undefined) continue;
      if (!Array.isArray(v)) {
        this.add(key, `must be an array of tables ([[${key}]]), found ${describe(v)}`);
        continue;
      }
      v.forEach((t, i) => {
        if (!isTable(t)) this.add(`${key}[${i}]`, `must be a table, found ${describe(t)}`);
        else this.target(t, `${key}[${i}].`, true, false);
      });
    }
    for (const key of DEP_SECTIONS) {
      const deps = this.optTable(doc, key, '');
      if (deps) this.dependencies(deps, `${key}.`, inherit, false);
    }
    const target = this.optTable(doc, 'target', '');
    if (target) {
      for (const [cfg, t] of Object.entries(target)) {
        const at = `target.'${cfg}'.`;
        if (!isTable(t)) {
          this.add(`target.'${cfg}'`, `must be a table, found ${describe(t)}`);
          continue;
        }
        for (const key of DEP_SECTIONS) {
          const deps = this.optTable(t, key, at);
          if (deps) this.dependencies(deps, `${at}${key}.`, inherit, false);
        }
      }
    }
    const features = this.optTable(doc, 'features', '');
    if (features) for (const name of Object.keys(features)) this.optStrings(features, name, 'features.');
  }

  private workspace(w: Table): void {
    for (const key of ['members', 'exclude', 'default-members']) this.optStrings(w, key, 'workspace.');
    this.optString(w, 'resolver', 'workspace.');
    const pkg = this.optTable(w, 'package', 'workspace.');
    if (pkg) {
      const v = pkg['version'];
      if (v !== undefined) this.version(v, 'workspace.package.version');
      const e = pkg['edition'];
      if (e !== undefined) this.edition(e, 'workspace.package.edition');
    }
    const deps = this.optTable(w, 'dependencies', 'workspace.');
    if (deps) this.dependencies(deps, 'workspace.dependencies.', null, true);
  }

  private package(pkg: Table, ws: Inherited | null): void {
    const name = pkg['name'];
    if (name === undefined) this.add('package.name', 'is required (the crate name), found none');
    else if (typeof name !== 'string') this.add('package.name', `must be a string (a crate name), found ${describe(name)}`);
    else if (!CRATE_NAME.test(name)) this.add('package.name', `must be a crate name (a letter or _, then letters, digits, _ or -), found ${describe(name)}`);

    const version = this.inheritable(pkg, 'version', ws);
    if (version !== undefined) this.version(version, 'package.version');
    else if (pkg['version'] === undefined) {
      // cargo >= 1.75: no version means 0.0.0, and the package is not publishable
      const publish = pkg['publish'];
      if (publish === true || (Array.isArray(publish) && publish.length > 0)) {
        this.add('package.version', `is required when package.publish is set (found publish = ${describe(publish)}); without a version cargo treats the package as 0.0.0 and unpublishable`);
      }
    }
    const edition = this.inheritable(pkg, 'edition', ws);
    if (edition !== undefined) this.edition(edition, 'package.edition');
    const publish = pkg['publish'];
    if (publish !== undefined && typeof publish !== 'boolean' && !(Array.isArray(publish) && publish.every((x) => typeof x === 'string')) && !isWorkspaceRef(publish)) {
      this.add('package.publish', `must be a boolean or an array of registry names, found ${describe(publish)}`);
    }
    const build = pkg['build'];
    if (build !== undefined && typeof build !== 'string' && typeof build !== 'boolean') this.add('package.build', `must be a path string or a boolean, found ${describe(build)}`);
    for (const key of ['links', 'workspace', 'default-run']) this.optString(pkg, key, 'package.');
    for (const key of ['autolib', 'autobins', 'autotests', 'autoexamples', 'autobenches']) this.optBool(pkg, key, 'package.');
  }

  /** `pkg[key]` itself, or what `{ workspace = true }` takes from `[workspace.package]` (undefined: absent, or the mistake is already said). */
  private inheritable(pkg: Table, key: string, ws: Inherited | null): unknown {
    const v = pkg[key];
    if (!isTable(v)) return v;
    if (v['workspace'] !== true) {
      this.add(`package.${key}`, `must be a string or { workspace = true }, found a table${v['workspace'] !== undefined ? ` with workspace = ${describe(v['workspace'])}` : ''}`);
      return undefined;
    }
    const from = ws?.package[key];
    if (from === undefined) {
      this.add(`package.${key}`, `= { workspace = true }, but workspace.package.${key} is not set${ws ? '' : ' (no [workspace] found in this folder or above)'}`);
      return undefined;
    }
    return undefined; // the workspace's own value is checked as workspace.package.<key>
  }

  private version(v: unknown, key: string): void {
    if (typeof v !== 'string') this.add(key, `must be a string (semver, e.g. "0.1.0"), found ${describe(v)}`);
    else if (!SEMVER.test(v)) this.add(key, `must be a semver version (MAJOR.MINOR.PATCH, e.g. "0.1.0"), found ${describe(v)}`);
  }

  private edition(v: unknown, key: string): void {
    const list = EDITIONS.map((e) => `"${e}"`).join(', ');
    if (typeof v !== 'string') this.add(key, `must be a string (one of ${list}), found ${describe(v)}`);
    else if (!(EDITIONS as readonly string[]).includes(v)) this.add(key, `must be one of ${list}, found ${describe(v)}`);
  }

  private target(t: Table, at: string, nameRequired: boolean, lib: boolean): void {
    const name = t['name'];
    if (name === undefined) {
      if (nameRequired) this.add(`${at}name`, 'is required, found none');
    } else if (typeof name !== 'string') {
      this.add(`${at}name`, `must be a string, found ${describe(name)}`);
    } else if (name.trim() === '') {
      this.add(`${at}name`, 'must not be empty');
    } else if (lib && name.includes('-')) {
      this.add(`${at}name`, `must not contain "-" (a library name is a Rust identifier), found ${describe(name)}`);
    }
    this.optString(t, 'path', at, 'a string (a path relative to the package)');
    for (const key of ['crate-type', 'crate_type', 'required-features']) this.optStrings(t, key, at);
    for (const key of ['test', 'doctest', 'bench', 'doc', 'harness', 'proc-macro', 'proc_macro', 'plugin']) this.optBool(t, key, at);
    const edition = t['edition'];
    if (edition !== undefined) this.edition(edition, `${at}edition`);
  }

  private dependencies(deps: Table, at: string, ws: Inherited | null, inWorkspace: boolean): void {
    for (const [name, spec] of Object.entries(deps)) {
      const key = `${at}${name}`;
      if (typeof spec === 'string') continue;
      if (!isTable(spec)) {
        this.add(key, `must be a version string or a table, found ${describe(spec)}`);
        continue;
      }
      const w = spec['workspace'];
      // in [workspace.dependencies] the key means nothing (cargo warns of an unused key)
      if (w !== undefined && !inWorkspace) {
        if (w !== true) this.add(`${key}.workspace`, `must be true (to inherit from [workspace.dependencies]), found ${describe(w)}`);
        else if (ws?.dependencies[name] === undefined) this.add(key, `= { workspace = true }, but workspace.dependencies has no ${name}${ws ? '' : ' (no [workspace] found in this folder or above)'}`);
      }
      this.optString(spec, 'version', `${key}.`, 'a string (a version requirement, e.g. "1.2")');
      for (const k of ['path', 'package', 'git', 'branch', 'tag', 'rev', 'registry']) this.optString(spec, k, `${key}.`);
      for (const k of ['optional', 'default-features', 'default_features', 'public']) this.optBool(spec, k, `${key}.`);
      this.optStrings(spec, 'features', `${key}.`);
    }
  }
}

function isWorkspaceRef(v: unknown): boolean {
  return isTable(v) && v['workspace'] === true;
}
