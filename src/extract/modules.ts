// The module tree of one crate target: from its root file, follow `mod foo;`
// to `foo.rs` or `foo/mod.rs` (or `#[path = "…"]`), parse each file, and place
// every item under its module.
//
// Invariant: never throws for bad input. A file that is missing, unreadable,
// a link loop, not UTF-8, binary (NUL bytes) or over the size limit gets a
// FileFact with that status and a Problem; its module stays in the tree, empty.
// A module that includes one of its own ancestors' files is a loop, not a
// recursion. Read-only.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { RustParser } from './parser.ts';
import type { FileFact, FileStatus, Item, ParsedFile, Problem, ProblemKind } from './types.ts';

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
    lineStart: 1, lineEnd: 1, file: input.target, children: [], uses: [], refs: [], generics: [],
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

  const fill = (module: Item, parsed: ParsedFile) => {
    module.children = parsed.items;
    module.uses = parsed.uses;
    module.refs = parsed.refs;
    if (parsed.externCrates.length > 0) module.externCrates = parsed.externCrates;
    module.lineEnd = Math.max(module.lineEnd, parsed.lineCount);
  };

  // Walk a file's items: set `file`, load external modules (depth first).
  const visit = async (items: Item[], file: string, dirOwner: boolean, inline: string[], ancestors: string[]) => {
    for (const item of items) {
      item.file = file;
      if (item.kind !== 'module' || !item.mod) {
        setFile(item.children, file);
        continue;
      }
      if (!item.mod.external) {
        await visit(item.children, file, dirOwner, [...inline, item.name], ancestors);
        continue;
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
        item.lineStart = 1;
        item.lineEnd = 1;
        fill(item, r.parsed);
        const owner = item.mod.pathAttr !== null || path.posix.basename(rel) === 'mod.rs';
        await visit(item.children, rel, owner, [], [...ancestors, rel]);
      }
      if (!loaded) {
        const shown = candidates.join(' or ');
        files.push({ path: candidates[0]!, hash: '', size: 0, parseStatus: 'missing' });
        problems.push({ path: candidates[0]!, kind: 'missing', message: `mod ${item.name} in ${file}: found neither ${shown}` });
      }
    }
  };

  const r = await readOne(input.target, true);
  if (r.parsed) {
    fill(root, r.parsed);
    await visit(root.children, input.target, true, [], [input.target]);
  }
  return { root, files, problems };
}

function setFile(items: Item[], file: string) {
  for (const it of items) {
    it.file = file;
    setFile(it.children, file);
  }
}
