// The one zstd (libzstd compiled to wasm) of the process. Initialising the
// wasm module twice swaps its heap under any caller, so every user goes
// through here: the module loads once, at import.
import * as wasm from '@bokuweb/zstd-wasm';

let failure: unknown;
await wasm.init().catch((e: unknown) => {
  failure = e;
});

function ready(what: string): void {
  if (failure !== undefined) throw new Error(`${what}: zstd is unavailable (${String(failure)})`);
}

/**
 * One compression context for the thread, made on first use and kept: zstd's
 * one-shot `compress` makes and frees a context each call, which costs about
 * as much as compressing an 8 KiB page. The frames are the same bytes.
 */
let cctx: number | undefined;
const NO_DICT = new Uint8Array(0);

export function zstdCompress(data: Uint8Array, level = 3): Uint8Array {
  ready('zstd compress');
  cctx ??= wasm.createCCtx();
  return wasm.compressUsingDict(cctx, data, NO_DICT, level);
}

/**
 * Decompress one or more frames. `size` is the exact or an upper bound of the
 * output (Parquet pages know it); frames that omit their content size are
 * retried with a growing buffer up to 128 MiB.
 */
export function zstdDecompress(data: Uint8Array, size?: number, what = 'zstd'): Uint8Array {
  ready(what);
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
