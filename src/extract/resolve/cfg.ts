// cfg: which items exist. Evaluates `#[cfg(…)]` and `#[cfg_attr(…)]` on
// items, modules, `mod` declarations, impl and trait members, enum variants,
// `use`s, `extern crate`s, item-position macro invocations and statements in
// bodies, the way rustc does for one target and one feature set.
//
// Invariant: the first phase of resolution and the only one that removes
// written items. After `applyCfg`, every item, use, extern crate and macro
// call left in a container is active; what was inactive is gone (never kept
// flagged, so an inactive twin can never duplicate its active one), and the
// effects of active `cfg_attr`s (`path = "…"`, `macro_export`, `macro_use`,
// nested `cfg`) are applied. Pure: no I/O.
//
// The configuration (see `TARGET`): x86_64-unknown-linux-gnu; the dev
// profile, as `cargo build`, `cargo check` and rust-analyzer see a crate by
// default: `debug_assertions` on, unless the release profile is asked
// (`release`, ingest `--release`); `test`, `doc`, `miri` off (the library,
// not its tests); features as given (see cargo.ts `activeFeatures`); cfg names a
// build script sets literally (`cargo:rustc-cfg=NAME`, or through autocfg's
// `emit*` probes, under the names autocfg gives them) are on unless they
// read as the absence of something (`no_…`, `…_no_…`) or as nightly-only, or
// are set on the success of a probe program that enables unstable features
// (`#![feature(…)]` in the build script's text: such a probe fails on a
// stable compiler, and anyhow's and thiserror's `provide_any` probes fail on
// this machine's nightly too) — build scripts are never run, so this is the
// stand-in for a current stable compiler. Unknown names and predicates (`accessible(…)`, `version(…)`) are false.
import type { Item, MacroCall, UseDecl } from '../types.ts';

/** key -> values set for x86_64-unknown-linux-gnu (a name without value: key -> ['']). */
const TARGET: Record<string, string[]> = {
  unix: [''],
  target_os: ['linux'],
  target_family: ['unix'],
  target_arch: ['x86_64'],
  target_pointer_width: ['64'],
  target_endian: ['little'],
  target_env: ['gnu'],
  target_vendor: ['unknown'],
  target_has_atomic: ['8', '16', '32', '64', 'ptr'],
  target_has_atomic_load_store: ['8', '16', '32', '64', 'ptr'],
  target_has_atomic_equal_alignment: ['8', '16', '32', '64', 'ptr'],
  target_feature: ['fxsr', 'sse', 'sse2'],
  target_thread_local: [''],
  panic: ['unwind'],
  relocation_model: ['pic'],
};

export interface CfgOptions {
  /** Active features (already expanded through `[features]`). */
  features: readonly string[];
  /** Extra cfg names set (a build script's `rustc-cfg`s). */
  names?: readonly string[];
  /** The release profile: `debug_assertions` off (default false: the dev profile, `debug_assertions` on). */
  release?: boolean;
}

/** A compiled configuration: `holds(text)` for a predicate's text. */
export class Cfg {
  private readonly set = new Map<string, Set<string>>();
  private readonly memo = new Map<string, boolean>();

  constructor(opts: CfgOptions) {
    for (const [k, vs] of Object.entries(TARGET)) this.set.set(k, new Set(vs));
    this.set.set('feature', new Set(opts.features));
    if (!opts.release) this.set.set('debug_assertions', new Set(['']));
    for (const n of opts.names ?? []) this.set.set(n, new Set(['']));
  }

  /** Does a cfg predicate (`all(unix, feature = "std")`) hold? */
  holds(pred: string): boolean {
    let v = this.memo.get(pred);
    if (v === undefined) {
      v = evalPred(pred.trim(), this.set);
      this.memo.set(pred, v);
    }
    return v;
  }

  /**
   * The effect of an attribute list (`cfg(…)` / `cfg_attr(…)` texts): whether
   * the thing is active, and the attributes active `cfg_attr`s add.
   */
  attrs(texts: readonly string[] | undefined): { active: boolean; added: string[] } {
    const added: string[] = [];
    if (!texts) return { active: true, added };
    const queue = [...texts];
    while (queue.length > 0) {
      const t = queue.shift()!;
      const call = splitCall(t);
      if (!call) continue;
      if (call.name === 'cfg') {
        if (!this.holds(call.args)) return { active: false, added };
      } else if (call.name === 'cfg_attr') {
        const parts = splitTop(call.args);
        if (parts.length < 2 || !this.holds(parts[0]!)) continue;
        for (const a of parts.slice(1)) {
          const inner = splitCall(a);
          if (inner && (inner.name === 'cfg' || inner.name === 'cfg_attr')) queue.push(a);
          else added.push(a);
        }
      }
    }
    return { active: true, added };
  }
}

/** Build-script cfg names taken as set (see the module comment). */
export function buildScriptCfgs(buildRs: string): string[] {
  const out = new Set<string>();
  const names: string[] = [];
  const unstableProbe = buildRs.includes('#![feature(');
  for (const m of buildRs.matchAll(/rustc-cfg=([A-Za-z_][A-Za-z0-9_]*)(?!\s*=)/g)) {
    // `Some(status) if status.success() => println!("cargo:rustc-cfg=x")` after compiling such a probe
    // (the guard: the text since the end of the previous statement, arm or block)
    if (unstableProbe) {
      const before = buildRs.slice(Math.max(0, m.index - 400), m.index);
      const from = Math.max(before.lastIndexOf(';'), before.lastIndexOf('}'), before.lastIndexOf(','));
      if (/\bsuccess\(\)/.test(before.slice(from + 1))) continue;
    }
    names.push(m[1]!);
  }
  // autocfg's probes, taken as succeeding (they probe what current toolchains have): `emit("x")`,
  // `emit_*_cfg(probe, "x")`, `emit_sysroot_crate("std")` -> has_std, `emit_has_type("i128")` -> has_i128,
  // `emit_has_path`/`emit_has_trait` (mangled: non-alphanumerics to `_`), `emit_rustc_version(1, 36)` -> rustc_1_36
  for (const m of buildRs.matchAll(/\bemit\(\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)/g)) names.push(m[1]!);
  for (const m of buildRs.matchAll(/\bemit_(?:expression|type|path|trait|constant)_cfg\(\s*(?:"(?:[^"\\]|\\.)*"|[^,()]*)\s*,\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*\)/g)) names.push(m[1]!);
  for (const m of buildRs.matchAll(/\bemit_(sysroot_crate|has_type|has_path|has_trait)\(\s*"([^"]*)"\s*\)/g)) names.push(`has_${m[2]!.replace(/[^A-Za-z0-9]/g, '_')}`);
  for (const m of buildRs.matchAll(/\bemit_rustc_version\(\s*(\d+)\s*,\s*(\d+)\s*\)/g)) names.push(`rustc_${m[1]!}_${m[2]!}`);
  for (const name of names) {
    if (/(^|_)no_|nightly|unstable|semver_exempt|disable|tsan|thumb|freebsd|wasm|span_locations|proc_macro_span/.test(name)) continue;
    out.add(name);
  }
  return [...out].sort();
}

/**
 * Drop the inactive members of `into` (items, recursively through impl,
 * trait, enum and inline-module members; uses; extern crates; macro calls;
 * refs and bindings inside inactive statements of bodies) and apply active
 * `cfg_attr`s. File modules' own contents are applied when their file is read.
 */
export function applyCfg(cfg: Cfg, into: Item): void {
  into.children = into.children.filter((item) => activate(cfg, item));
  into.uses = into.uses.filter((u: UseDecl) => cfg.attrs(u.cfg).active);
  if (into.externCrates) {
    into.externCrates = into.externCrates.filter((e) => {
      const r = cfg.attrs(e.cfg);
      if (r.added.includes('macro_use')) e.macroUse = true;
      return r.active;
    });
  }
  if (into.macroCalls) into.macroCalls = into.macroCalls.filter((m: MacroCall) => cfg.attrs(m.cfg).active);
}

/** Is `item` active? Applies its cfg_attrs, and cfg inside it. */
function activate(cfg: Cfg, item: Item): boolean {
  const r = cfg.attrs(item.cfg);
  if (!r.active) return false;
  for (const a of r.added) {
    const kv = /^path\s*=\s*"((?:[^"\\]|\\.)*)"$/.exec(a);
    if (kv && item.mod) item.mod.pathAttr = kv[1]!;
    else if (a === 'macro_export' && item.kind === 'macro') item.macroExport = true;
    else if (a === 'macro_use' && item.kind === 'module') item.macroUse = true;
  }
  if (item.cfgSpans) {
    const dead = item.cfgSpans.filter(([, , attrs]) => !cfg.attrs(attrs).active);
    if (dead.length > 0) {
      const live = (at: number | undefined) => at === undefined || !dead.some(([s, e]) => at >= s && at < e);
      item.refs = item.refs.filter((r2) => live(r2.at));
      // a `let`'s name is visible from the statement's end (`at`), which is no offset inside it: its start (`from`) is
      if (item.bindings) item.bindings = item.bindings.filter((b) => live(b.at) && live(b.from));
    }
  }
  if (item.kind !== 'module' || !item.mod?.external) applyCfg(cfg, item);
  return true;
}

/** `name(args)` -> { name, args }; a bare word -> { name, args: '' }; else null. */
function splitCall(text: string): { name: string; args: string } | null {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([\s\S]*)\))?\s*$/.exec(text);
  if (!m) {
    const kv = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(text);
    return kv ? { name: kv[1]!, args: '' } : null;
  }
  return { name: m[1]!, args: m[2] ?? '' };
}

/** Split on top-level commas (outside brackets and strings); empty parts dropped. */
function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      cur += text.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    if (c === ',' && depth === 0) {
      if (cur.trim() !== '') out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  if (cur.trim() !== '') out.push(cur.trim());
  return out;
}

function evalPred(text: string, set: Map<string, Set<string>>): boolean {
  const kv = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"$/.exec(text);
  if (kv) return set.get(kv[1]!)?.has(kv[2]!) ?? false;
  const call = splitCall(text);
  if (!call) return false;
  if (!/\(/.test(text)) return set.get(call.name)?.has('') ?? false;
  const parts = splitTop(call.args);
  switch (call.name) {
    case 'all': return parts.every((p) => evalPred(p, set));
    case 'any': return parts.some((p) => evalPred(p, set));
    case 'not': return parts.length === 1 && !evalPred(parts[0]!, set);
    default: return false;
  }
}
