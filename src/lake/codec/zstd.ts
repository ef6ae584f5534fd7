// The one zstd (libzstd compiled to wasm) of the process. Initialising the
// wasm module twice swaps its heap under any caller, so every user goes
// through here: the module is made once, synchronously, at the first
// compression or decompression (nothing at import: a command that reads no
// zstd data pays nothing, and no module of the CLI needs a top-level await,
// which the one-file CLI bundle cannot hold — scripts/build.ts).
//
// The package's own `init()` is asynchronous only because it compiles the
// wasm with WebAssembly.instantiate; its Emscripten runtime takes an
// `instantiateWasm` hook, through which the same wasm file is compiled and
// instantiated synchronously (allowed in Node for any size). A failure is kept
// and reported by every call, as before: "zstd is unavailable (…)".
import * as wasm from '@bokuweb/zstd-wasm';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as nodePath from 'node:path';

/** The WebAssembly global as used here (the TypeScript setup declares no DOM lib). */
interface WasmInstance {
  exports: object;
}
const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object; Instance: new (module: object, imports: object) => WasmInstance } }).WebAssembly;

/** The package's Emscripten module object (dist/common/module.js, shared with the functions `wasm` exports). */
interface EmscriptenModule {
  instantiateWasm?: (imports: object, receive: (instance: WasmInstance) => void) => object;
  init(wasmBytes: Uint8Array): void;
  calledRun?: boolean;
  /** The wasm memory as bytes: a new view after the memory grows (read it after every call that may allocate). */
  HEAPU8: Uint8Array;
  _malloc(n: number): number;
  _free(p: number): void;
  _ZSTD_createDCtx(): number;
  _ZSTD_createCCtx(): number;
  _ZSTD_compress_usingDict(cctx: number, dst: number, dstCapacity: number, src: number, srcSize: number, dict: number, dictSize: number, level: number): number;
  _ZSTD_decompress_usingDict(dctx: number, dst: number, dstCapacity: number, src: number, srcSize: number, dict: number, dictSize: number): number;
  _ZSTD_isError(code: number): number;
}

let state: 'ready' | { failure: unknown } | undefined;
/** The runtime module, once ready: the sized decompression below calls its exports directly. */
let M: EmscriptenModule | undefined;

function init(): void {
  try {
    const require = createRequire(import.meta.url);
    // the package's entry (dist/common/index.node.js) and its runtime module beside it: the one `wasm` uses
    const dir = nodePath.dirname(require.resolve('@bokuweb/zstd-wasm'));
    const { Module } = require(nodePath.join(dir, 'module.js')) as { Module: EmscriptenModule };
    const bytes = readFileSync(nodePath.join(dir, 'zstd.wasm'));
    Module.instantiateWasm = (imports, receive) => {
      const instance = new Wasm.Instance(new Wasm.Module(bytes), imports);
      receive(instance);
      return instance.exports;
    };
    Module.init(bytes);
    if (Module.calledRun !== true) throw new Error(`the wasm runtime of ${dir} did not start`);
    M = Module;
    state = 'ready';
  } catch (e) {
    state = { failure: e };
  }
}

function ready(what: string): void {
  if (state === undefined) init();
  if (state !== 'ready') throw new Error(`${what}: zstd is unavailable (${String(state?.failure)})`);
}

/** A buffer in the wasm memory, kept across calls and grown when a call needs more. */
class WasmBuffer {
  ptr = 0;
  cap = 0;
  /** Room for `n` bytes: grows at least doubling (by at most 8 MiB a step), never under 64 KiB; false when the wasm memory has none. */
  fit(m: EmscriptenModule, n: number): boolean {
    if (this.ptr !== 0 && n <= this.cap) return true;
    if (this.ptr !== 0) m._free(this.ptr);
    this.cap = Math.max(n, Math.min(this.cap * 2, this.cap + (8 << 20)), 64 << 10);
    this.ptr = m._malloc(this.cap);
    if (this.ptr === 0) this.cap = 0;
    return this.ptr !== 0;
  }
}

/**
 * One compression context for the thread, made on first use and kept, and
 * kept input/output buffers in the wasm memory (as the sized decompression
 * below): zstd's one-shot `compress` makes and frees a context each call,
 * which costs about as much as compressing an 8 KiB page, and the package's
 * `compressUsingDict` mallocs and frees three buffers per call. Here: one
 * copy in, one call, one copy out. The frames are the same bytes.
 */
let cctx = 0;
const cIn = new WasmBuffer();
const cOut = new WasmBuffer();

/** zstd's ZSTD_COMPRESSBOUND: the largest frame one-shot compression of `n` bytes can make. */
function compressBound(n: number): number {
  return n + (n >>> 8) + (n < 128 << 10 ? ((128 << 10) - n) >>> 11 : 0);
}

export function zstdCompress(data: Uint8Array, level = 3): Uint8Array {
  ready('zstd compress');
  const m = M!;
  if (cctx === 0) cctx = m._ZSTD_createCCtx();
  if (cctx === 0) throw new Error(`zstd compress: no compression context could be made (wasm memory exhausted?); ${data.length} bytes not compressed`);
  if (!cIn.fit(m, data.length) || !cOut.fit(m, compressBound(data.length))) {
    throw new Error(`zstd compress: no ${data.length}-byte buffer in the wasm memory (exhausted?); not compressed`);
  }
  m.HEAPU8.set(data, cIn.ptr);
  const n = m._ZSTD_compress_usingDict(cctx, cOut.ptr, cOut.cap, cIn.ptr, data.length, 0, 0, level);
  if (m._ZSTD_isError(n) !== 0) throw new Error(`zstd compress: failed with code ${n} on ${data.length} bytes at level ${level}; not compressed`);
  return m.HEAPU8.slice(cOut.ptr, cOut.ptr + n);
}

/**
 * Decompress one or more frames. `size` is the exact or an upper bound of the
 * output (Parquet pages know it); frames that omit their content size are
 * retried with a growing buffer up to 128 MiB.
 */
export function zstdDecompress(data: Uint8Array, size?: number, what = 'zstd'): Uint8Array {
  ready(what);
  if (size !== undefined) {
    const out = sizedDecompress(data, size);
    if (out !== undefined) return out;
    // not within `size`, or not valid zstd: the general path below decides (and words the error)
  }
  let heap = Math.max(size ?? data.length * 8, 1024);
  for (;;) {
    try {
      return wasm.decompress(data, { defaultHeapSize: heap });
    } catch (e) {
      if (size !== undefined || heap >= 128 << 20) throw new Error(`${what}: invalid zstd data (${(e as Error).message})`);
      heap *= 4;
    }
  }
}

/**
 * Decompression into a known size (a Parquet page) through one kept
 * decompression context and kept input/output buffers in the wasm memory:
 * the package's one-shot `decompress` makes and frees a context (~100 KB,
 * initialised) and two buffers per call, in seven calls across the JS/wasm
 * boundary — per page, while the JIT is cold. Here: two calls and one copy
 * out. Undefined when the frames do not decompress into `size` bytes or
 * fewer (the caller then takes the general path, which reports errors).
 */
let dctx = 0;
const dIn = new WasmBuffer();
const dOut = new WasmBuffer();

function sizedDecompress(data: Uint8Array, size: number): Uint8Array | undefined {
  const m = M!;
  if (dctx === 0) dctx = m._ZSTD_createDCtx();
  if (dctx === 0) return undefined;
  if (!dIn.fit(m, data.length) || !dOut.fit(m, size)) return undefined;
  m.HEAPU8.set(data, dIn.ptr);
  const n = m._ZSTD_decompress_usingDict(dctx, dOut.ptr, size, dIn.ptr, data.length, 0, 0);
  if (m._ZSTD_isError(n) !== 0) return undefined;
  return m.HEAPU8.slice(dOut.ptr, dOut.ptr + n);
}
