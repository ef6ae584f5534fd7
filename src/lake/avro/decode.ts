// Avro binary decoding for the read path: a writer schema (the JSON of a
// container's `avro.schema`) is compiled once into a tree of closures, cached
// by the caller per schema text, that turn the bytes of one record into plain
// objects. No schema resolution: records come back as the writer wrote them,
// keyed by field name made Avro-valid (`avroCompatibleName`), and the callers
// look fields up by Iceberg field id (fields.ts).
//
// Values: null -> null; boolean -> boolean; int, float, double -> number;
// long -> bigint (a 64-bit value never passes through a JS number); string and
// enum -> string; bytes and fixed -> Buffers viewing the block (callers copy);
// array -> array; map -> plain object; union -> the branch's value, unwrapped;
// logical types -> their underlying type (as avsc read them before).
//
// Invariant: every read checks the block's end, so truncated or damaged data
// is an `AvroDecodeError` naming the byte offset in the block, never a value
// made of bytes past it; a boolean other than 0/1, a union branch out of
// range, an overlong varint or an int outside 32 bits is refused too.
import { stringifyJson, type Json } from '../spec/json.ts';

/** A decoding failure at `pos` (a byte offset in the decoded block). */
export class AvroDecodeError extends Error {
  constructor(
    readonly what: string,
    readonly pos: number,
  ) {
    super(`${what} at byte ${pos} of the block`);
  }
}

/** The bytes of one block and a position in them. */
export class AvroReader {
  pos = 0;
  readonly end: number;
  private readonly view: DataView;

  constructor(readonly buf: Buffer) {
    this.end = buf.length;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  fail(what: string, at = this.pos): never {
    throw new AvroDecodeError(what, at);
  }

  /** An Avro long as a bigint; values of up to 7 varint bytes take a number fast path (exact below 2^49). */
  long(): bigint {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= this.end) this.fail('truncated long');
    let b = buf[pos++]!;
    if (b < 0x80) {
      this.pos = pos;
      return BigInt((b >>> 1) ^ -(b & 1));
    }
    let z = b & 0x7f;
    let mul = 128;
    for (let i = 1; i < 7; i++) {
      if (pos >= this.end) this.fail('truncated long', this.pos);
      b = buf[pos++]!;
      z += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = pos;
        return BigInt(z % 2 === 0 ? z / 2 : -(z + 1) / 2);
      }
      mul *= 128;
    }
    return this.longSlow();
  }

  private longSlow(): bigint {
    const start = this.pos;
    let z = 0n;
    let shift = 0n;
    for (let pos = start; ; ) {
      if (pos >= this.end) this.fail('truncated long', start);
      const b = this.buf[pos++]!;
      if (shift === 63n && b > 1) this.fail('long varint wider than 64 bits', start);
      z |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return BigInt.asIntN(64, (z >> 1n) ^ -(z & 1n));
      }
      shift += 7n;
      if (shift > 63n) this.fail('long varint longer than 10 bytes', start);
    }
  }

  /** An Avro int (32-bit zig-zag varint). */
  int(): number {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    let z = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      if (pos >= this.end) this.fail('truncated int', start);
      const b = buf[pos++]!;
      z += (b & 0x7f) * mul;
      if (b < 0x80) {
        if (z > 0xffffffff) break;
        this.pos = pos;
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      }
      mul *= 128;
    }
    return this.fail('int varint wider than 32 bits', start);
  }

  /** A length or count (an Avro long) that must fit a safe number. */
  size(what: string): number {
    const start = this.pos;
    const v = this.long();
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} out of range (${v})`, start);
    return Number(v);
  }

  boolean(): boolean {
    if (this.pos >= this.end) this.fail('truncated boolean');
    const b = this.buf[this.pos]!;
    if (b > 1) this.fail(`boolean byte ${b} (expected 0 or 1)`);
    this.pos++;
    return b === 1;
  }

  float(): number {
    if (this.pos + 4 > this.end) this.fail('truncated float');
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) this.fail('truncated double');
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  fixed(n: number, what: string): Buffer {
    if (this.pos + n > this.end) this.fail(`truncated ${what} (needs ${n} bytes, ${this.end - this.pos} left)`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  bytes(): Buffer {
    const start = this.pos;
    const n = this.size('bytes length');
    if (n < 0) this.fail(`negative bytes length ${n}`, start);
    return this.fixed(n, 'bytes');
  }

  string(): string {
    const start = this.pos;
    const n = this.size('string length');
    if (n < 0) this.fail(`negative string length ${n}`, start);
    if (this.pos + n > this.end) this.fail(`truncated string (needs ${n} bytes, ${this.end - this.pos} left)`, start);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** The item count of the next array or map block (0 ends it); a negative count is followed by the block's size. */
  blockCount(minItemBytes: number, what: string): number {
    const start = this.pos;
    let n = this.size(`${what} block count`);
    if (n < 0) {
      n = -n;
      this.size(`${what} block size`);
    }
    // every item takes at least `minItemBytes`: a count the block cannot hold is damage, not a huge allocation
    if (n * Math.max(minItemBytes, 1) > this.end - this.pos + (minItemBytes === 0 ? 1 << 24 : 0)) {
      this.fail(`${what} block count ${n} exceeds the ${this.end - this.pos} bytes left`, start);
    }
    return n;
  }
}

export type Decoder = (r: AvroReader) => unknown;

export interface Compiled {
  decode: Decoder;
  /** The fewest bytes a value of this type takes (0 for null and records of nulls). */
  minBytes: number;
}

type JsonObject = { [key: string]: Json };
const isObject = (j: Json | undefined): j is JsonObject => typeof j === 'object' && j !== null && !Array.isArray(j);

const PRIMITIVES: Record<string, Compiled> = {
  null: { decode: () => null, minBytes: 0 },
  boolean: { decode: (r) => r.boolean(), minBytes: 1 },
  int: { decode: (r) => r.int(), minBytes: 1 },
  long: { decode: (r) => r.long(), minBytes: 1 },
  float: { decode: (r) => r.float(), minBytes: 4 },
  double: { decode: (r) => r.double(), minBytes: 8 },
  bytes: { decode: (r) => r.bytes(), minBytes: 1 },
  string: { decode: (r) => r.string(), minBytes: 1 },
};

/**
 * Compiles the decoder of a writer schema. `keyOf` maps a record field's name
 * to the key of the decoded object. Throws (a plain Error) on a schema it
 * cannot read: unknown type names, records without fields, fixed without size.
 */
export function compileDecoder(schema: Json, keyOf: (name: string) => string): Compiled {
  const named = new Map<string, Compiled>();

  const fullName = (name: string, ns: string): string => (name.includes('.') || ns === '' ? name : `${ns}.${name}`);
  const spaceOf = (full: string): string => (full.includes('.') ? full.slice(0, full.lastIndexOf('.')) : '');

  const define = (t: JsonObject, ns: string, c: Compiled): string => {
    const name = typeof t['name'] === 'string' ? t['name'] : '';
    if (name === '') throw new Error(`Avro ${String(t['type'])} without a name: ${stringifyJson(t)}`);
    const space = typeof t['namespace'] === 'string' && !name.includes('.') ? t['namespace'] : ns;
    const full = fullName(name, space);
    named.set(full, c);
    // references by short name, as fields.ts resolves them: the first definition wins
    const short = full.slice(full.lastIndexOf('.') + 1);
    if (!named.has(short)) named.set(short, c);
    return full;
  };

  const compile = (t: Json | undefined, ns: string): Compiled => {
    if (typeof t === 'string') {
      const p = PRIMITIVES[t];
      if (p) return p;
      const c = named.get(fullName(t, ns)) ?? named.get(t) ?? named.get(t.slice(t.lastIndexOf('.') + 1));
      if (!c) throw new Error(`Avro type "${t}" is neither primitive nor defined before its use`);
      return c;
    }
    if (Array.isArray(t)) return union(t, ns);
    if (!isObject(t)) throw new Error(`not an Avro type: ${stringifyJson(t ?? null)}`);
    const kind = t['type'];
    if (isObject(kind) || Array.isArray(kind)) return compile(kind, ns);
    switch (kind) {
      case 'record':
      case 'error':
        return record(t, ns);
      case 'enum': {
        const symbols = t['symbols'];
        if (!Array.isArray(symbols) || !symbols.every((s): s is string => typeof s === 'string')) {
          throw new Error(`Avro enum without a list of symbols: ${stringifyJson(t)}`);
        }
        const c: Compiled = {
          decode: (r) => {
            const start = r.pos;
            const i = r.int();
            if (i < 0 || i >= symbols.length) r.fail(`enum index ${i} outside its ${symbols.length} symbols`, start);
            return symbols[i];
          },
          minBytes: 1,
        };
        define(t, ns, c);
        return c;
      }
      case 'fixed': {
        const size = t['size'];
        if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) throw new Error(`Avro fixed without a valid size: ${stringifyJson(t)}`);
        const c: Compiled = { decode: (r) => r.fixed(size, 'fixed'), minBytes: size };
        define(t, ns, c);
        return c;
      }
      case 'array': {
        const items = compile(t['items'], ns);
        const item = items.decode;
        const min = items.minBytes;
        return {
          decode: (r) => {
            const out: unknown[] = [];
            for (let n = r.blockCount(min, 'array'); n !== 0; n = r.blockCount(min, 'array')) {
              for (let i = 0; i < n; i++) out.push(item(r));
            }
            return out;
          },
          minBytes: 1,
        };
      }
      case 'map': {
        const values = compile(t['values'], ns);
        const value = values.decode;
        const min = values.minBytes + 1;
        return {
          decode: (r) => {
            const out: Record<string, unknown> = {};
            for (let n = r.blockCount(min, 'map'); n !== 0; n = r.blockCount(min, 'map')) {
              for (let i = 0; i < n; i++) {
                const k = r.string();
                const v = value(r);
                if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
                else out[k] = v;
              }
            }
            return out;
          },
          minBytes: 1,
        };
      }
      default:
        if (typeof kind === 'string') {
          // `{"type": "long", "logicalType": …}` and friends: the underlying type
          const p = PRIMITIVES[kind];
          if (p) return p;
          return compile(kind, ns);
        }
        throw new Error(`not an Avro type: ${stringifyJson(t)}`);
    }
  };

  const union = (branches: Json[], ns: string): Compiled => {
    const cs = branches.map((b) => compile(b, ns));
    if (cs.length === 0) throw new Error('empty Avro union');
    // the common Iceberg shape, ["null", T]: one comparison, no array lookup
    if (cs.length === 2 && cs[0] === PRIMITIVES['null']) {
      const other = cs[1]!.decode;
      return {
        decode: (r) => {
          const start = r.pos;
          const i = r.int();
          if (i === 0) return null;
          if (i === 1) return other(r);
          return r.fail(`union branch ${i} outside its 2 branches`, start);
        },
        minBytes: 1,
      };
    }
    const ds = cs.map((c) => c.decode);
    return {
      decode: (r) => {
        const start = r.pos;
        const i = r.int();
        const d = ds[i];
        if (d === undefined) return r.fail(`union branch ${i} outside its ${ds.length} branches`, start);
        return d(r);
      },
      minBytes: 1,
    };
  };

  const record = (t: JsonObject, ns: string): Compiled => {
    const fields = t['fields'];
    if (!Array.isArray(fields)) throw new Error(`Avro record without fields: ${stringifyJson(t)}`);
    // defined before its fields are compiled, so a field may refer to the record itself
    let keys: string[] = [];
    let decs: Decoder[] = [];
    const c: Compiled = {
      decode: (r) => {
        const out: Record<string, unknown> = {};
        for (let i = 0; i < decs.length; i++) out[keys[i]!] = decs[i]!(r);
        return out;
      },
      minBytes: 0,
    };
    const full = define(t, ns, c);
    const inner = spaceOf(full);
    const ks: string[] = [];
    const ds: Decoder[] = [];
    let min = 0;
    for (const f of fields) {
      if (!isObject(f) || typeof f['name'] !== 'string') throw new Error(`Avro record ${full}: a field without a name: ${stringifyJson(f ?? null)}`);
      const fc = compile(f['type'], inner);
      ks.push(keyOf(f['name']));
      ds.push(fc.decode);
      min += fc === c ? 0 : fc.minBytes;
    }
    keys = ks;
    decs = ds;
    c.minBytes = min;
    return c;
  };

  return compile(schema, '');
}
