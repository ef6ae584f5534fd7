// Avro object-container files (the format of Iceberg manifests and manifest
// lists): a reader of our own and a writer around avsc. Every Avro `long` is a
// `bigint` on both sides (avsc's own long would round above 2^53). The header
// schema is the caller's JSON written verbatim, so Iceberg's `field-id`,
// `element-id`, `key-id` and `value-id` attributes survive (avsc itself would
// drop unknown attributes); the records are decoded with the writer schema
// found in the file (no schema resolution), by decoders compiled once per
// schema text (decode.ts). avsc is loaded only when a file is written, so a
// question (which only reads) never pays for its import and type building.
//
// Codecs read: null, deflate (raw RFC 1951), snappy (block + big-endian CRC32)
// and zstandard; written: null and deflate (default), plus snappy and
// zstandard for tests of other readers.
//
// Invariant: `readContainer(writeContainer(s, r, m))` returns `s`, `r` (with
// bytes as Buffers) and `m`; a file whose magic, block framing, sync markers,
// codec or record bytes are wrong is refused with an error that names the
// file and the byte offset, never read as other values. Writing is pure
// (bytes in memory); the caller decides where and how they land.
//
// Checksum: deflate has none, so a few flipped bytes can decode into other
// values without any error. `writeContainer(…, { checksum: true })` (our
// manifests and manifest lists) adds the file metadata key `mimir.sha256`,
// last in the header: the SHA-256 of the whole file with that value's 64
// characters written as '0'. Reading verifies it when present, so any change
// to the file — header, blocks or the checksum itself — is an error naming the
// file. Other readers ignore the key, as Avro lets them.
import type avro from 'avsc';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { AvroDecodeError, AvroReader, compileDecoder, type Compiled } from './decode.ts';
import { zstdCompress, zstdDecompress as zstdInflate } from '../codec/zstd.ts';
import { parseJson, stringifyJson, type Json } from '../spec/json.ts';

export type WriteCodec = 'null' | 'deflate' | 'snappy' | 'zstandard';

export interface Container {
  /** The writer schema of the header (`avro.schema`), attributes kept. */
  schemaJson: Json;
  /** File metadata other than `avro.schema` / `avro.codec`, values read as UTF-8. */
  meta: Map<string, string>;
  /** Decoded records (plain objects) keyed by Avro field name, names Avro refuses made valid
   * by `avroCompatibleName`; longs are bigint, bytes/fixed are Buffers viewing the block (see decode.ts). */
  records: unknown[];
  /** Did the file carry (and match) Mimir's whole-file checksum, i.e. Mimir wrote it? */
  checksummed: boolean;
  /** The codec the file's blocks use. */
  codec: string;
}

const MAGIC = [0x4f, 0x62, 0x6a, 0x01]; // "Obj" 1
const BLOCK_TARGET_BYTES = 1 << 20;


// ---- bigint longs ---------------------------------------------------------

/** Zig-zag varint bytes of a 64-bit signed value. */
function encodeLong(v: bigint): Buffer {
  let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return Buffer.from(out);
}

function decodeLong(buf: Uint8Array): bigint {
  let z = 0n;
  let shift = 0n;
  for (let i = 0; i < buf.length; i++) {
    z |= BigInt(buf[i]! & 0x7f) << shift;
    shift += 7n;
  }
  z = BigInt.asUintN(64, z);
  return BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n));
}

/** avsc, loaded on the first write (it is CommonJS, so a synchronous require works from here). */
let avscModule: typeof avro | undefined;
let bigLongType: avro.Type | undefined;

function avsc(): { lib: typeof avro; bigLong: avro.Type } {
  if (!avscModule || !bigLongType) {
    const lib = createRequire(import.meta.url)('avsc') as typeof avro;
    bigLongType = lib.types.LongType.__with(
      {
        fromBuffer: (buf: Buffer): bigint => decodeLong(buf),
        toBuffer: (v: bigint): Buffer => encodeLong(v),
        fromJSON: (v: unknown): bigint => BigInt(v as string | number | bigint),
        toJSON: (v: bigint): number | string => (v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v.toString()),
        isValid: (v: unknown): boolean => typeof v === 'bigint' && BigInt.asIntN(64, v) === v,
        compare: (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0),
      },
      true, // raw varint bytes in and out: no lossy unpacking through numbers
    );
    avscModule = lib;
  }
  return { lib: avscModule, bigLong: bigLongType };
}

// ---- avsc types, cached per schema text ----------------------------------

const typeCache = new Map<string, avro.Type>();

const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Java's rule for names Avro refuses: `_x<HEX>` per bad character (leading digit -> `_<digit>`). */
export function avroCompatibleName(name: string): string {
  if (VALID_NAME.test(name)) return name;
  let out = '';
  let first = true;
  for (const ch of name) {
    const ok = first ? /^[A-Za-z_]$/.test(ch) : /^[A-Za-z0-9_]$/.test(ch);
    if (ok) out += ch;
    else if (/^[0-9]$/.test(ch)) out += `_${ch}`;
    else out += `_x${ch.codePointAt(0)!.toString(16).toUpperCase()}`;
    first = false;
  }
  return out === '' ? '_' : out;
}

/** A copy of the schema whose record field names all satisfy avsc (names a sane writer wrote are kept). */
function avscSafe(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(avscSafe);
  if (s === null || typeof s !== 'object') return s;
  const o = s as Record<string, unknown>;
  const out: Record<string, unknown> = { ...o };
  if (o['type'] === 'record' || o['type'] === 'error') {
    out['fields'] = ((o['fields'] ?? []) as Record<string, unknown>[]).map((f) => ({
      ...f,
      name: typeof f['name'] === 'string' ? avroCompatibleName(f['name']) : f['name'],
      type: avscSafe(f['type']),
    }));
  } else if (o['type'] === 'array') {
    out['items'] = avscSafe(o['items']);
  } else if (o['type'] === 'map') {
    out['values'] = avscSafe(o['values']);
  } else if (typeof o['type'] === 'object') {
    out['type'] = avscSafe(o['type']);
  }
  return out;
}

/** The avsc type of a schema (writing only). */
function avscType(schemaText: string, file: string): avro.Type {
  let t = typeCache.get(schemaText);
  if (t) return t;
  const { lib, bigLong } = avsc();
  try {
    const schema = avscSafe(JSON.parse(schemaText)) as avro.Schema;
    // every long, named (`"long"`) or in object form (`{"type":"long","logicalType":…}`), is a bigint
    const typeHook = (s: avro.Schema): avro.Type | undefined =>
      s === 'long' || (typeof s === 'object' && s !== null && !Array.isArray(s) && (s as { type?: unknown }).type === 'long') ? bigLong : undefined;
    t = lib.Type.forSchema(schema, { registry: { long: bigLong }, typeHook });
  } catch (e) {
    throw new Error(`${file}: Avro schema not usable: ${(e as Error).message}`);
  }
  if (typeCache.size > 256) typeCache.clear();
  typeCache.set(schemaText, t);
  return t;
}

// ---- compiled decoders, cached per schema text ------------------------------

const readerCache = new Map<string, { schemaJson: Json; decoder: Compiled }>();
const LONG_DIGITS = /\d{16}/;

/** The parsed writer schema and its compiled decoder (shared: callers must not change the schema). */
function readerOf(schemaText: string, file: string): { schemaJson: Json; decoder: Compiled } {
  let hit = readerCache.get(schemaText);
  if (hit) return hit;
  let schemaJson: Json;
  try {
    // the built-in parser is much faster on a cold start; it is exact unless an integer has 16+ digits
    schemaJson = LONG_DIGITS.test(schemaText) ? parseJson(schemaText) : (JSON.parse(schemaText) as Json);
  } catch (e) {
    throw new Error(`${file}: avro.schema is not JSON: ${(e as Error).message}`);
  }
  let decoder: Compiled;
  try {
    decoder = compileDecoder(schemaJson, avroCompatibleName);
  } catch (e) {
    throw new Error(`${file}: Avro schema not usable: ${(e as Error).message}`);
  }
  hit = { schemaJson, decoder };
  if (readerCache.size > 256) readerCache.clear();
  readerCache.set(schemaText, hit);
  return hit;
}

// ---- byte-level reading ---------------------------------------------------

class Cursor {
  pos = 0;
  constructor(
    readonly buf: Uint8Array,
    readonly file: string,
  ) {}

  fail(what: string): never {
    throw new Error(`${this.file}: not a valid Avro container: ${what} at byte ${this.pos} of ${this.buf.length}`);
  }

  long(what: string): number {
    // a header or block varint: at most 7 bytes (49 bits) in number arithmetic, exact
    const start = this.pos;
    let z = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.buf.length) this.fail(`truncated ${what}`);
      const b = this.buf[this.pos++]!;
      z += (b & 0x7f) * mul;
      if (b < 0x80) {
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      }
      mul *= 128;
    }
    this.pos = start;
    this.fail(`${what} wider than 48 bits (or an overlong varint)`);
  }

  bytes(n: number, what: string): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) this.fail(`truncated ${what} (needs ${n} bytes)`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

const utf8 = new TextDecoder('utf-8');

/** File metadata key of the whole-file checksum (see the module comment). */
export const CHECKSUM_KEY = 'mimir.sha256';
const CHECKSUM_HEX = 64;

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const BLANK_SUM = Buffer.alloc(CHECKSUM_HEX, 0x30);

/** The SHA-256 of the file with its stored checksum (at `at`) read as '0' characters; no copy. */
function blankedSha256Hex(bytes: Uint8Array, at: number): string {
  return createHash('sha256')
    .update(bytes.subarray(0, at))
    .update(BLANK_SUM)
    .update(bytes.subarray(at + CHECKSUM_HEX))
    .digest('hex');
}

function readHeader(c: Cursor): { meta: Map<string, Uint8Array>; sync: Uint8Array; offsets: Map<string, number> } {
  if (c.buf.length < 4 || MAGIC.some((b, i) => c.buf[i] !== b)) {
    c.fail('bad magic (expected "Obj\\x01")');
  }
  c.pos = 4;
  const meta = new Map<string, Uint8Array>();
  const offsets = new Map<string, number>();
  for (;;) {
    let count = c.long('metadata block count');
    if (count === 0) break;
    if (count < 0) {
      count = -count;
      c.long('metadata block size');
    }
    for (let i = 0; i < count; i++) {
      const key = utf8.decode(c.bytes(c.long('metadata key length'), 'metadata key'));
      const len = c.long('metadata value length');
      offsets.set(key, c.pos);
      const value = c.bytes(len, 'metadata value');
      meta.set(key, value);
    }
  }
  const sync = c.bytes(16, 'sync marker');
  return { meta, sync, offsets };
}

// ---- codecs ---------------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Raw snappy (no framing) decompression. */
export function snappyDecompress(src: Uint8Array, what: string): Uint8Array {
  let p = 0;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    if (p >= src.length || shift > 28) throw new Error(`${what}: bad snappy length preamble`);
    const b = src[p++]!;
    len += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  const out = new Uint8Array(len);
  let o = 0;
  const bad = (why: string): never => {
    throw new Error(`${what}: corrupt snappy block (${why} at input byte ${p}, output byte ${o} of ${len})`);
  };
  while (p < src.length) {
    const tag = src[p++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >>> 2;
      if (n >= 60) {
        const extra = n - 59;
        if (p + extra > src.length) bad('truncated literal length');
        n = 0;
        for (let i = 0; i < extra; i++) n += src[p + i]! * 2 ** (8 * i);
        p += extra;
      }
      n += 1;
      if (p + n > src.length || o + n > len) bad('literal overruns');
      out.set(src.subarray(p, p + n), o);
      p += n;
      o += n;
      continue;
    }
    let n: number;
    let off: number;
    if (kind === 1) {
      if (p >= src.length) bad('truncated copy');
      n = ((tag >>> 2) & 7) + 4;
      off = ((tag >>> 5) << 8) | src[p++]!;
    } else if (kind === 2) {
      if (p + 2 > src.length) bad('truncated copy');
      n = (tag >>> 2) + 1;
      off = src[p]! | (src[p + 1]! << 8);
      p += 2;
    } else {
      if (p + 4 > src.length) bad('truncated copy');
      n = (tag >>> 2) + 1;
      off = (src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | (src[p + 3]! << 24)) >>> 0;
      p += 4;
    }
    if (off === 0 || off > o || o + n > len) bad('copy out of range');
    for (let i = 0; i < n; i++, o++) out[o] = out[o - off]!;
  }
  if (o !== len) bad('short output');
  return out;
}

/** Snappy "compression" that emits literals only: valid for every reader, no size gain. */
function snappyLiteral(src: Uint8Array): Uint8Array {
  const parts: number[] = [];
  let len = src.length;
  while (len >= 0x80) {
    parts.push((len & 0x7f) | 0x80);
    len = Math.floor(len / 128);
  }
  parts.push(len);
  const chunks: Uint8Array[] = [Uint8Array.from(parts)];
  for (let i = 0; i < src.length; i += 65536) {
    const piece = src.subarray(i, Math.min(src.length, i + 65536));
    const n = piece.length - 1;
    chunks.push(n < 60 ? Uint8Array.of(n << 2) : n < 256 ? Uint8Array.of(60 << 2, n) : Uint8Array.of(61 << 2, n & 0xff, n >>> 8));
    chunks.push(piece);
  }
  return Buffer.concat(chunks);
}

function zstdDecompress(data: Uint8Array, what: string): Uint8Array {
  return zstdInflate(data, undefined, what);
}

function decompress(codec: string, data: Uint8Array, what: string): Uint8Array {
  switch (codec) {
    case 'null':
      return data;
    case 'deflate':
      try {
        return inflateRawSync(data);
      } catch (e) {
        throw new Error(`${what}: corrupt deflate block (${(e as Error).message})`);
      }
    case 'snappy': {
      if (data.length < 4) throw new Error(`${what}: snappy block shorter than its CRC`);
      const body = snappyDecompress(data.subarray(0, data.length - 4), what);
      const tail = data.subarray(data.length - 4);
      const want = ((tail[0]! << 24) | (tail[1]! << 16) | (tail[2]! << 8) | tail[3]!) >>> 0;
      const got = crc32(body);
      if (want !== got) throw new Error(`${what}: snappy CRC mismatch (expected ${want.toString(16)}, found ${got.toString(16)})`);
      return body;
    }
    case 'zstandard':
      return zstdDecompress(data, what);
    default:
      throw new Error(`${what}: unknown Avro codec "${codec}" (expected null, deflate, snappy or zstandard)`);
  }
}

function compress(codec: WriteCodec, data: Uint8Array): Uint8Array {
  switch (codec) {
    case 'null':
      return data;
    case 'deflate':
      return deflateRawSync(data);
    case 'snappy': {
      const crc = crc32(data);
      return Buffer.concat([snappyLiteral(data), Uint8Array.of(crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff)]);
    }
    case 'zstandard':
      return zstdCompress(data, 3);
  }
}

// ---- public API -----------------------------------------------------------

/** Reads a whole container file held in memory. `file` names it in errors. */
export function readContainer(bytes: Uint8Array, file: string): Container {
  const c = new Cursor(bytes, file);
  const { meta: rawMeta, sync, offsets } = readHeader(c);
  const sum = rawMeta.get(CHECKSUM_KEY);
  if (sum !== undefined) {
    const stored = utf8.decode(sum);
    const at = offsets.get(CHECKSUM_KEY)!;
    const actual = sum.length === CHECKSUM_HEX ? blankedSha256Hex(bytes, at) : '(none: the stored value is not 64 characters)';
    if (actual !== stored) {
      throw new Error(
        `${file}: its content does not match the checksum written with it (${CHECKSUM_KEY} ${stored.slice(0, 16)}…, ` +
          `computed ${actual.slice(0, 16)}…): the file was altered or damaged after it was written; nothing read from it`,
      );
    }
  }
  const schemaBytes = rawMeta.get('avro.schema');
  if (!schemaBytes) c.fail('no avro.schema in the header');
  const { schemaJson, decoder } = readerOf(utf8.decode(schemaBytes), file);
  const codecBytes = rawMeta.get('avro.codec');
  const codec = codecBytes ? utf8.decode(codecBytes) : 'null';
  if (!['null', 'deflate', 'snappy', 'zstandard'].includes(codec)) {
    throw new Error(`${file}: unknown Avro codec "${codec}" (expected null, deflate, snappy or zstandard)`);
  }
  const meta = new Map<string, string>();
  for (const [k, v] of rawMeta) if (k !== 'avro.schema' && k !== 'avro.codec' && k !== CHECKSUM_KEY) meta.set(k, utf8.decode(v));

  const records: unknown[] = [];
  const decode = decoder.decode;
  let block = 0;
  while (c.pos < bytes.length) {
    const blockAt = c.pos;
    const what = `${file}: block ${block}`;
    const count = c.long('block record count');
    const size = c.long('block size');
    if (count < 0 || size < 0) c.fail(`negative block count or size (${count}, ${size})`);
    const data = decompress(codec, c.bytes(size, 'block data'), what);
    const marker = c.bytes(16, 'block sync marker');
    if (marker.some((b, i) => b !== sync[i])) c.fail(`sync marker of block ${block} differs from the header's`);
    // every record takes at least one byte unless the schema is all nulls: a count the block cannot hold is damage
    if (decoder.minBytes > 0 && count * decoder.minBytes > data.length) {
      throw new Error(`${what} (at file byte ${blockAt}): claims ${count} records but holds ${data.length} bytes; nothing read from the file`);
    }
    const r = new AvroReader(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    for (let i = 0; i < count; i++) {
      try {
        records.push(decode(r));
      } catch (e) {
        if (!(e instanceof AvroDecodeError)) throw e;
        throw new Error(
          `${what} (at file byte ${blockAt}, ${data.length} bytes${codec === 'null' ? '' : ` decompressed from ${size}`}): record ${i} of ${count} does not decode: ${e.message}; nothing read from the file`,
        );
      }
    }
    if (r.pos !== r.end) {
      throw new Error(`${what} (at file byte ${blockAt}): ${r.end - r.pos} bytes left over after ${count} records; nothing read from the file`);
    }
    block++;
  }
  return { schemaJson, meta, records, codec, checksummed: sum !== undefined };
}

/**
 * Encodes `records` (plain objects keyed by Avro field name; longs as bigint,
 * bytes/fixed as Uint8Array) under `schemaJson`, which is written to the
 * header verbatim. `avro.schema` and `avro.codec` in `meta` are ignored.
 */
export function writeContainer(
  schemaJson: Json,
  records: unknown[],
  meta: Record<string, string>,
  codec: WriteCodec = 'deflate',
  opts: { checksum?: boolean } = {},
): Uint8Array {
  const schemaText = stringifyJson(schemaJson);
  const type = avscType(schemaText, 'Avro writer');
  const header: Uint8Array[] = [Uint8Array.from(MAGIC)];
  const entries: [string, Uint8Array][] = [
    ['avro.schema', Buffer.from(schemaText, 'utf8')],
    ['avro.codec', Buffer.from(codec, 'utf8')],
  ];
  for (const [k, v] of Object.entries(meta)) {
    if (k !== 'avro.schema' && k !== 'avro.codec' && k !== CHECKSUM_KEY) entries.push([k, Buffer.from(v, 'utf8')]);
  }
  if (opts.checksum) entries.push([CHECKSUM_KEY, Buffer.alloc(CHECKSUM_HEX, 0x30)]);
  header.push(encodeLong(BigInt(entries.length)));
  let checksumAt = -1;
  let at = header.reduce((n, b) => n + b.length, 0);
  for (const [k, v] of entries) {
    const kb = Buffer.from(k, 'utf8');
    const parts = [encodeLong(BigInt(kb.length)), kb, encodeLong(BigInt(v.length))];
    for (const p of parts) at += p.length;
    if (k === CHECKSUM_KEY) checksumAt = at;
    at += v.length;
    header.push(...parts, v);
  }
  header.push(encodeLong(0n));
  const sync = randomBytes(16);
  header.push(sync);

  const out: Uint8Array[] = header;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = (): void => {
    if (pending.length === 0) return;
    const data = compress(codec, Buffer.concat(pending));
    out.push(encodeLong(BigInt(pending.length)), encodeLong(BigInt(data.length)), data, sync);
    pending = [];
    pendingBytes = 0;
  };
  records.forEach((r, i) => {
    let b: Buffer;
    const value = toAvsc(r);
    try {
      b = type.toBuffer(value);
    } catch (e) {
      throw new Error(`Avro writer: record ${i} does not match the schema: ${describeInvalid(type, value) ?? (e as Error).message}`);
    }
    pending.push(b);
    pendingBytes += b.length;
    if (pendingBytes >= BLOCK_TARGET_BYTES) flush();
  });
  flush();
  const file = Buffer.concat(out);
  if (checksumAt >= 0) file.write(sha256Hex(file), checksumAt, 'latin1');
  return file;
}

/** Where a value fails its schema: the first bad path, its Avro type and the value found. */
function describeInvalid(type: avro.Type, value: unknown): string | undefined {
  const bad: string[] = [];
  type.isValid(value, {
    errorHook: (path: string[], any: unknown, t: avro.Type) => {
      const shown = typeof any === 'bigint' ? `${any}n` : any instanceof Uint8Array ? `${any.length} bytes` : String(any);
      bad.push(`${path.join('.') || '(record)'} expects ${String(t.typeName)}, found ${shown}`);
    },
  });
  return bad.length > 0 ? bad.join('; ') : undefined;
}

/** avsc wants Buffers for bytes and fixed; accept any Uint8Array. */
function toAvsc(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map(toAvsc);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toAvsc(x);
    return out;
  }
  return v;
}
