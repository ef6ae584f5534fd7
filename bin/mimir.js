#!/usr/bin/env node
// The `mimir` command. Runs the compiled CLI in dist/ (built by `npm run
// build`, which `npm ci` and `npm install` run through `prepare`): no
// TypeScript compiler at start. dist/ is used only while it is the build of
// src/ as it is: its stamp (dist/BUILD) lists every source file's size and
// crc32, and src/ holds the same files (a stat of each, about 2 ms; a file
// modified after the build started is read and compared, so a fresh clone
// beside a copied dist/ still runs it). A stamp of an older build, without
// that list, is held against the files' mtimes. Otherwise — a checkout edited
// or pulled since the last build, or never built — the TypeScript sources run
// through tsx, for development only: correct but slower to start. A build that
// is there but stale is announced on stderr every time; no build at all is
// announced on a terminal, or always with MIMIR_DEBUG=1.
//
// A question read from a lake (find, def, refs, callers, callees, history,
// diff; not with --server or $MIMIR_SERVER, not --help) runs the one-file
// bundle of the CLI the build made (dist/BUILD names it), compiled through
// node:vm with V8's code cache: the functions a question ran are kept
// compiled in dist/.code-cache/<key>, written atomically after the first
// answer (exit 0) and keyed by the node and V8 versions, the platform and the bundle's
// hash, size and mtime (a file of another key is never read; a key change
// writes a new file and removes the old). A cache that is missing, corrupt
// (its own checksum) or rejected by V8 is rebuilt after the answer; a folder
// that cannot be written just means no cache. MIMIR_CODE_CACHE=0 turns the
// cache off; a missing or unloadable bundle falls back to dist/'s modules.
// With MIMIR_DEBUG=1 a line on stderr says which ran and what the cache did.
// Everything else runs dist/'s modules (each command's loaded on demand).
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { crc32 } from 'node:zlib';

const root = new URL('../', import.meta.url);

/** dist/BUILD, or why dist/ cannot be used. */
function readStamp() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(new URL('dist/BUILD', root), 'utf8'));
  } catch {
    return { reason: 'no build (dist/BUILD is missing or unreadable)' };
  }
  if (typeof stamp?.startedMs !== 'number') return { reason: 'dist/BUILD has no start time' };
  const src = fileURLToPath(new URL('src', root));
  if (!existsSync(src)) return { stamp }; // no sources beside the build: nothing it could be stale against
  if (stamp.sources && typeof stamp.sources === 'object') return { stamp, reason: changedReason(src, stamp.startedMs, stamp.sources), stale: true };
  return { stamp, reason: staleReason(src, stamp.startedMs), stale: true };
}

/**
 * Why dist/ is not the build of src/ as it is (undefined when it is): a file
 * added, removed, or of another size than the build read; a file modified
 * after the build started is read and its crc32 compared (the same bytes in a
 * newer file — a fresh clone beside a copied dist/ — is the same build).
 */
function changedReason(src, built, sources) {
  const seen = new Set();
  let reason;
  const walk = (dir, rel) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (reason) return;
      const p = `${dir}/${e.name}`;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        walk(p, r);
        continue;
      }
      seen.add(r);
      const known = sources[r];
      if (!Array.isArray(known)) {
        reason = `src/${r} was added since the build`;
        return;
      }
      const st = statSync(p);
      if (st.size !== known[0]) reason = `src/${r} changed since the build`;
      else if (st.mtimeMs > built && (crc32(readFileSync(p)) >>> 0).toString(16).padStart(8, '0') !== known[1]) reason = `src/${r} changed since the build`;
    }
  };
  try {
    walk(src, '');
  } catch (e) {
    return `src/ could not be checked (${e.message})`;
  }
  if (reason) return reason;
  const gone = Object.keys(sources).find((r) => !seen.has(r));
  return gone ? `src/${gone} was removed since the build` : undefined;
}

/** Why dist/ cannot be used (undefined when it is fresh), for a stamp of a build before the sources' digests: by mtimes. */
function staleReason(src, built) {
  let newer;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (newer) return;
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (statSync(p).mtimeMs > built) newer = p;
    }
  };
  try {
    walk(src);
  } catch (e) {
    return `src/ could not be checked (${e.message})`;
  }
  return newer ? `${newer.slice(src.length - 3)} is newer than the build` : undefined;
}

const debug = (line) => {
  if (process.env.MIMIR_DEBUG === '1') process.stderr.write(`mimir: ${line}\n`);
};

const QUESTIONS = new Set(['find', 'def', 'refs', 'callers', 'callees', 'history', 'diff']);

/** Is argv a question read from the lake directly (the bundle's work)? */
function asksLake(argv) {
  if (process.env.MIMIR_SERVER) return false;
  let command;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h' || a === '--server' || a.startsWith('--server=')) return false;
    if (a === '--lake' || a === '--catalog-name') i++;
    else if (!a.startsWith('-') && command === undefined) command = a;
  }
  return command !== undefined && QUESTIONS.has(command);
}

/** Run the bundle named by the stamp; resolves to the exit code, or undefined when it cannot be loaded. */
async function runBundle(stamp, argv) {
  const b = stamp.bundle;
  if (typeof b?.file !== 'string' || typeof b.sha256 !== 'string') {
    debug('dist/BUILD names no CLI bundle; running dist/\'s modules');
    return undefined;
  }
  const file = fileURLToPath(new URL(`dist/${b.file}`, root));
  let source;
  let st;
  try {
    st = statSync(file);
    source = readFileSync(file, 'latin1'); // the build writes ASCII only: a one-byte string, no UTF-8 decode
  } catch (e) {
    debug(`the CLI bundle cannot be read (${e.message}); running dist/'s modules`);
    return undefined;
  }
  const useCache = process.env.MIMIR_CODE_CACHE !== '0';
  const cacheDir = fileURLToPath(new URL('dist/.code-cache/', root));
  // no node:crypto here: importing it from ESM runs its lazy getters (~15 ms), and a sha256 of the
  // cache's megabytes costs ~10 ms; the bundle's own sha256 comes from the stamp, and crc32s (zlib)
  // of the rest and of the cache data are enough to tell another key or a damaged file
  const parts = [process.version, process.versions.v8, process.platform, process.arch, b.sha256, st.size, st.mtimeMs].join('\0');
  const hex8 = (n) => (n >>> 0).toString(16).padStart(8, '0');
  const key = `${b.sha256.slice(0, 16)}${hex8(crc32(parts))}${hex8(crc32(parts, 0x9e3779b9))}`;
  const cacheFile = `${cacheDir}${key}`;
  let cachedData;
  let cache = useCache ? 'none' : 'off';
  if (useCache) {
    try {
      // the file: the crc32 of the V8 data (4 bytes, big-endian), then the data
      const bytes = readFileSync(cacheFile);
      const data = bytes.subarray(4);
      if (bytes.length > 4 && bytes.readUInt32BE(0) === crc32(data) >>> 0) cachedData = data;
      else cache = 'corrupt';
    } catch {
      // no cache yet
    }
  }
  // A question is a short process: V8's default tiering spends more CPU compiling optimized code
  // (TurboFan, on other threads) than that code saves before exit, so tier up later (8x the default
  // budget; measured: def 1x CPU 0.86x, callers 10x 0.77x, refs 10x 0.81x). Set before the Script is
  // compiled, in every bundle run alike: the flag is part of the code cache's check, so a cache
  // written under it is accepted only by processes that set it too.
  v8.setFlagsFromString('--interrupt-budget=1048576');
  // Nor does it gain from incremental marking: V8 starts marking the old generation at a soft limit
  // it reaches early in a question (~8 MB), then finishes with a mark-compact (~15 ms on a quiet box)
  // of a heap the process is about to drop. Without it a full GC still happens when the heap reaches
  // its limit (the same bound on memory), atomically (measured: callers and refs 1x CPU 0.93x, peak
  // RSS unchanged). Read by the GC when it decides, so setting it at run time takes effect.
  v8.setFlagsFromString('--no-incremental-marking');
  // And wasm stays on its baseline compiler (Liftoff): a question decompresses a few hundred zstd
  // pages, enough for V8 to start optimizing the wasm decoder's large functions with TurboFan, whose
  // compiles cost more CPU than they save before exit (measured: 150 pages of 8 KiB 33-47 ms -> 7-30
  // ms; callers, def and history 1x cold CPU 0.71-0.77x). Read when a wasm module is compiled (zstd's
  // is made at the first page), so setting it here takes effect; ingest does not run this bundle.
  v8.setFlagsFromString('--liftoff-only');
  let fn;
  let script;
  try {
    script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
      filename: file,
      cachedData,
      importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    fn = script.runInThisContext();
  } catch (e) {
    debug(`the CLI bundle ${file} did not load (${e.message}); running dist/'s modules`);
    return undefined;
  }
  if (cachedData !== undefined) cache = script.cachedDataRejected ? 'rejected' : 'used';
  const module = { exports: {} };
  fn.call(module.exports, module.exports, createRequire(file), module, file, fileURLToPath(new URL('dist', root)));
  const code = await module.exports.main(argv);
  if (useCache && code === 0 && (cachedData === undefined || script.cachedDataRejected)) {
    // after an answer (not a failure, which runs little): the cache then holds every function the question compiled
    try {
      const data = script.createCachedData();
      mkdirSync(cacheDir, { recursive: true });
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      const sum = Buffer.alloc(4);
      sum.writeUInt32BE(crc32(data) >>> 0);
      writeFileSync(tmp, Buffer.concat([sum, data]));
      renameSync(tmp, cacheFile);
      for (const f of readdirSync(cacheDir)) if (f !== key && !f.endsWith('.tmp')) rmSync(`${cacheDir}${f}`, { force: true });
      cache += ', written';
    } catch (e) {
      // a folder this user cannot write: no cache, same answers
      cache += `, not written (${e.message})`;
    }
  }
  debug(`ran the CLI bundle (code cache ${key}: ${cache})`);
  return code;
}

const argv = process.argv.slice(2);
const { stamp, reason, stale } = readStamp();
if (reason === undefined) {
  const code = asksLake(argv) ? await runBundle(stamp, argv) : undefined;
  if (code !== undefined) process.exitCode = code;
  else process.exitCode = await (await import('../dist/cli/main.js')).main(argv);
} else {
  // a build that is there but not of these sources is never bypassed silently; no build at all is development
  if (stale || process.stderr.isTTY || process.env.MIMIR_DEBUG === '1') {
    process.stderr.write(`mimir: running the TypeScript sources through tsx (${reason}; 'npm run build' makes start fast)\n`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  process.exitCode = await (await import('../src/cli/main.ts')).main(argv);
}
