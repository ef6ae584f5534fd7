// The module tree of one crate target: from its root file, follow `mod foo;`
// to `foo.rs` or `foo/mod.rs` (or `#[path = "…"]`), parse each file, and place
// every item under its module. cfg is applied as files are read (an inactive
// `mod` is never followed, an inactive twin never read), and item-position
// macro invocations are handed to the expander in textual order (each
// `macro_rules!` met is defined first), so a `mod x;` an expansion produces
// is followed like a written one.
//
// Invariant: never throws for bad input. A file that is missing, unreadable,
// a link loop, not UTF-8, binary (NUL bytes) or over the size limit gets a
// FileFact with that status and a Problem; its module stays in the tree, empty.
// A module that includes one of its own ancestors' files is a loop, not a
// recursion. Read-only.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { RustParser } from './parser.ts';
import { applyCfg, type Cfg } from './resolve/cfg.ts';
import type { FileFact, FileStatus, Item, MacroCall, ParsedFile, Problem, ProblemKind, UseDecl } from './types.ts';

/** What an item-position macro invocation expanded to (its items' `file` set by the caller). */
export interface Expansion {
  items: Item[];
  uses: UseDecl[];
  macroCalls: MacroCall[];
}

/**
 * Macro expansion as the module tree sees it (src/extract/macros implements
 * it). Calls arrive in textual order: every `macro_rules!` before a call in
 * the tree walk has been defined. `context` is where the call sits: among
 * items of a module, of an impl, or of a trait (items returned must be of the
 * kinds that context gives: `method` in an impl, `trait_item` in a trait).
 */
export interface ItemExpander {
  define(item: Item, modulePath: string): void;
  expandItems(call: MacroCall, modulePath: string, context: 'module' | 'impl' | 'trait'): Expansion | null;
  /** A module's items are about to be walked (`file`: where they are written). */
  enterModule?(module: Item, modulePath: string, file: string): void;
  /** Its items are done: its `macro_rules!` leave the textual scope unless it is `#[macro_use]`. */
  leaveModule?(module: Item, modulePath: string): void;
  /** A non-module item was placed (after its impl/trait members' expansions): the macro calls in its bodies. */
  bodies?(item: Item, modulePath: string): void;
  /**
   * A module-level call `expandItems` could not expand: should it be tried
   * again once the whole tree is walked (a path to a `#[macro_export]` macro
   * of the crate defined further on)? Asked during the walk only.
   */
  later?(call: MacroCall): boolean;
}

/** Expansions nested deeper than this (a macro expanding to its own call) stop, with a problem. */
const MAX_EXPANSION_DEPTH = 128;

export const DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface ModuleTreeInput {
  /** Absolute crate dir; file paths below are relative to it, '/'-separated. */
  rootDir: string;
  /** The target's root file (`src/lib.rs`). */
  target: string;
  /** Name given to the root module. */
  name: string;
  readFile(absPath: string): Promise<Buffer>;
  parser: RustParser;
  maxFileBytes?: number;
  /** The configuration items are filtered by. */
  cfg: Cfg;
  expander?: ItemExpander;
}

export interface ModuleTree {
  /** The root module with every item below it (`file` set on each). */
  root: Item;
  files: FileFact[];
  problems: Problem[];
}

/** A file's bytes as text, or why not. */
export type Decoded =
  | { ok: true; text: string }
  | { ok: false; status: FileStatus; kind: ProblemKind; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeSource(bytes: Uint8Array, maxBytes: number): Decoded {
  if (bytes.length > maxBytes) {
    return { ok: false, status: 'skipped-too-large', kind: 'too-large', message: `${bytes.length} bytes, over the limit of ${maxBytes}` };
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    return { ok: false, status: 'skipped-binary', kind: 'binary', message: `NUL byte at offset ${nul}: binary, not Rust source` };
  }
  try {
    return { ok: true, text: utf8.decode(bytes) };
  } catch {
    return { ok: false, status: 'skipped-not-utf8', kind: 'not-utf8', message: 'not valid UTF-8' };
  }
}

/**
 * Where `mod name;` may live. `file` declares it (crate-relative), `dirOwner`
 * says whether that file owns its directory (crate root, `mod.rs`, a file
 * reached through `#[path]`), `inline` lists enclosing inline `mod x { … }`
 * names inside that file.
 */
export function moduleCandidates(file: string, dirOwner: boolean, inline: string[], name: string, pathAttr: string | null): string[] {
  const fileDir = path.posix.dirname(file);
  const own = dirOwner ? fileDir : path.posix.join(fileDir, path.posix.basename(file, '.rs'));
  if (pathAttr !== null) {
    const base = inline.length === 0 ? fileDir : path.posix.join(own, ...inline);
    return [path.posix.normalize(path.posix.join(base, pathAttr))];
  }
  const base = path.posix.join(own, ...inline);
  return [path.posix.join(base, `${name}.rs`), path.posix.join(base, name, 'mod.rs')];
}

function errCode(e: unknown): string {
  return (e as NodeJS.ErrnoException)?.code ?? '';
}

export async function loadModuleTree(input: ModuleTreeInput): Promise<ModuleTree> {
  const maxBytes = input.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const files: FileFact[] = [];
  const problems: Problem[] = [];
  const root: Item = {
    kind: 'module', name: input.name, visibility: 'pub', signature: `crate ${input.name}`,
    lineStart: 1, lineEnd: 1, col: 1, file: input.target, children: [], uses: [], refs: [], generics: [],
  };

  type Read = { parsed: ParsedFile | null; status: FileStatus | 'absent' };

  const readOne = async (rel: string, reportMissing: boolean): Promise<Read> => {
    const abs = path.resolve(input.rootDir, rel);
    let bytes: Buffer;
    try {
      bytes = await input.readFile(abs);
    } catch (e) {
      const code = errCode(e);
      if ((code === 'ENOENT' || code === 'ENOTDIR') && !reportMissing) return { parsed: null, status: 'absent' };
      const status: FileStatus = code === 'ELOOP' ? 'loop' : 'missing';
      const kind: ProblemKind = code === 'ELOOP' ? 'loop' : code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable';
      files.push({ path: rel, hash: '', size: 0, parseStatus: status });
      problems.push({ path: rel, kind, message: `cannot read ${rel}: ${(e as Error).message}` });
      return { parsed: null, status };
    }
    const hash = createHash('sha256').update(bytes).digest('hex');
    const decoded = decodeSource(bytes, maxBytes);
    if (!decoded.ok) {
      files.push({ path: rel, hash, size: bytes.length, parseStatus: decoded.status });
      problems.push({ path: rel, kind: decoded.kind, message: `${rel}: ${decoded.message}; skipped` });
      return { parsed: null, status: decoded.status };
    }
    const parsed = input.parser.parse(decoded.text);
    files.push({ path: rel, hash, size: bytes.length, parseStatus: parsed.status });
    if (parsed.status === 'errors') {
      problems.push({
        path: rel, kind: 'parse-errors',
        message: `${rel}: ${parsed.errorCount} syntax error(s), first at line ${parsed.firstErrorLine}; kept the items that parsed`,
      });
    }
    return { parsed, status: parsed.status };
  };

  /** A file's contents into its module; false when the file's own `#![cfg]` makes the module inactive. */
  const fill = (module: Item, parsed: ParsedFile): boolean => {
    if (!input.cfg.attrs(parsed.innerCfg).active) return false;
    module.children = parsed.items;
    module.uses = parsed.uses;
    if (parsed.macroCalls.length > 0) module.macroCalls = parsed.macroCalls;
    if (parsed.externCrates.length > 0) module.externCrates = parsed.externCrates;
    module.lineEnd = Math.max(module.lineEnd, parsed.lineCount);
    applyCfg(input.cfg, module);
    return true;
  };

  /** macro_rules! items already handed to the expander (expansions define theirs early). */
  const defined = new Set<Item>();
  const define = (item: Item, modPath: string) => {
    if (defined.has(item) || !input.expander) return;
    defined.add(item);
    input.expander.define(item, modPath);
  };

  /**
   * The items one invocation expands to, nested invocations in the expansion
   * expanded too, cfg applied, `file` set, its macros defined; its `use`s go
   * to `container`. Empty when the expander cannot expand it.
   */
  const expand = (call: MacroCall, container: Item, modPath: string, context: 'module' | 'impl' | 'trait', file: string, depth: number): Item[] => {
    const ex = input.expander?.expandItems(call, modPath, context) ?? null;
    if (!ex) return [];
    if (depth > MAX_EXPANSION_DEPTH) {
      problems.push({ path: file, kind: 'parse-errors', message: `${file}:${call.line}: ${call.path}! expands deeper than ${MAX_EXPANSION_DEPTH} levels; not expanded further` });
      return [];
    }
    const holder: Item = {
      kind: 'module', name: '', visibility: '', signature: '', lineStart: call.line, lineEnd: call.line, col: call.col, file,
      children: ex.items, uses: ex.uses, refs: [], generics: [], macroCalls: ex.macroCalls,
    };
    applyCfg(input.cfg, holder);
    setFile(holder.children, file);
    container.uses.push(...holder.uses);
    const out: Item[] = [];
    for (const item of holder.children) {
      out.push(item);
      if (item.kind === 'macro') define(item, modPath);
    }
    for (const nested of holder.macroCalls ?? []) out.push(...expand(nested, container, modPath, context, file, depth + 1));
    return out;
  };

  /** Item-position calls among the members of `item`'s impls and traits, and of the impls written in its bodies. */
  const expandMembers = (item: Item, modPath: string, file: string) => {
    if (item.kind === 'impl' || item.kind === 'trait') {
      for (const call of item.macroCalls ?? []) item.children.push(...expand(call, item, modPath, item.kind, file, 1));
    }
    for (const c of item.children) if (c.kind !== 'module' && c.kind !== 'variant') expandMembers(c, modPath, file);
  };

  // Walk a module's items in textual order: set `file`, define macros, expand
  // item-position invocations, load external modules (depth first).
  const visit = async (module: Item, modPath: string, file: string, dirOwner: boolean, inline: string[], ancestors: string[]) => {
    input.expander?.enterModule?.(module, modPath, file);
    const calls = module.macroCalls ?? [];
    let c = 0;
    const expandUpTo = async (line: number) => {
      for (; c < calls.length && calls[c]!.line <= line; c++) {
        const call = calls[c]!;
        const items = expand(call, module, modPath, 'module', file, 1);
        if (items.length === 0 && !late && input.expander?.later?.(call)) {
          retries.push(async () => {
            const again = expand(call, module, modPath, 'module', file, 1);
            module.children.push(...again);
            for (const item of again) await place(item);
          });
          continue;
        }
        module.children.push(...items);
        for (const item of items) await place(item);
      }
    };
    const place = async (item: Item) => {
      item.file = file;
      if (item.kind === 'macro') define(item, modPath);
      if (item.kind !== 'module' || !item.mod) {
        setFile(item.children, file);
        expandMembers(item, modPath, file);
        input.expander?.bodies?.(item, modPath);
        return;
      }
      const childPath = `${modPath}::${item.name}`;
      if (!item.mod.external) {
        await visit(item, childPath, file, dirOwner, [...inline, item.name], ancestors);
        return;
      }
      const candidates = moduleCandidates(file, dirOwner, inline, item.name, item.mod.pathAttr);
      let loaded = false;
      for (let i = 0; i < candidates.length && !loaded; i++) {
        const rel = candidates[i]!;
        if (ancestors.includes(rel)) {
          files.push({ path: rel, hash: '', size: 0, parseStatus: 'loop' });
          problems.push({ path: rel, kind: 'loop', message: `mod ${item.name} in ${file} includes ${rel}, which encloses it: module loop, not followed` });
          loaded = true;
          break;
        }
        const last = i === candidates.length - 1;
        const r = await readOne(rel, last && candidates.length === 1);
        if (r.status === 'absent') continue;
        loaded = true;
        if (!r.parsed) break;
        item.file = rel;
        item.lineStart = r.parsed.firstLine;
        item.lineEnd = 1;
        item.col = r.parsed.firstCol;
        if (!fill(item, r.parsed)) {
          inactive.add(item);
          break;
        }
        const owner = item.mod.pathAttr !== null || path.posix.basename(rel) === 'mod.rs';
        await visit(item, childPath, rel, owner, [], [...ancestors, rel]);
      }
      if (!loaded) {
        const shown = candidates.join(' or ');
        files.push({ path: candidates[0]!, hash: '', size: 0, parseStatus: 'missing' });
        problems.push({ path: candidates[0]!, kind: 'missing', message: `mod ${item.name} in ${file}: found neither ${shown}` });
      }
    };
    for (const item of [...module.children]) {
      await expandUpTo(item.lineStart - 1);
      await place(item);
    }
    await expandUpTo(Infinity);
    if (inactive.size > 0) module.children = module.children.filter((x) => !inactive.has(x));
    input.expander?.leaveModule?.(module, modPath);
  };
  /** File modules whose own `#![cfg]` is false: removed from their parent. */
  const inactive = new Set<Item>();
  /** Calls tried again after the walk (ItemExpander.later), in textual order; `late` while they run. */
  const retries: (() => Promise<void>)[] = [];
  let late = false;

  const r = await readOne(input.target, true);
  if (r.parsed && fill(root, r.parsed)) {
    root.lineStart = r.parsed.firstLine;
    root.col = r.parsed.firstCol;
    await visit(root, input.name, input.target, true, [], [input.target]);
    late = true;
    for (const retry of retries) await retry();
  }
  return { root, files, problems };
}

function setFile(items: Item[], file: string) {
  for (const it of items) {
    it.file = file;
    setFile(it.children, file);
  }
}
