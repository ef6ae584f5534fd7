// Iceberg single values: the binary serialization of bounds and partition
// summaries (spec App. D), the JSON single-value encoding (defaults), the
// ordering Iceberg uses for bounds, and the coercion of loose user input into
// the canonical in-memory `Value` of each type (see types.ts). Pure functions,
// no I/O. Invariant: for every primitive type, fromBinary(t, toBinary(t, v))
// equals v and valueFromJson(t, valueToJson(t, v)) equals v; anything that is
// not a valid value of the type is refused with an error, never guessed at.

import type { Json } from './json.ts';
import type { IcebergType, NestedField, PrimitiveType, Value } from './types.ts';

// ---- small helpers ----------------------------------------------------------

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

const showValue = (v: unknown): string => {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `bytes ${toHex(v)}`;
  if (v instanceof Date) return `Date ${Number.isNaN(v.getTime()) ? 'invalid' : v.toISOString()}`;
  if (typeof v === 'string') return JSON.stringify(v);
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v);
  } catch {
    return String(v);
  }
};

/**
 * What a field absent from a data file reads as: its initial default (v3), else
 * null. A float field's default is read as the float32 it is (the JSON of the
 * metadata may spell more digits than a float holds), as a float in a file is.
 */
export function initialValue(f: NestedField): Value {
  const v = f.initialDefault ?? null;
  return f.type.type === 'float' && typeof v === 'number' ? Math.fround(v) : v;
}

export function toHex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

export function fromHex(s: string, what: string): Uint8Array {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new TypeError(`${what}: expected a hex string, found ${JSON.stringify(s)}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const MICROS_PER_DAY = 86_400_000_000n;
const NANOS_PER_DAY = 86_400_000_000_000n;

const isNanos = (t: PrimitiveType): boolean => t.type === 'timestamp_ns' || t.type === 'timestamptz_ns';
const unitsPerDay = (t: PrimitiveType): bigint => (isNanos(t) ? NANOS_PER_DAY : MICROS_PER_DAY);

// ---- civil dates (proleptic Gregorian, any year) ----------------------------

/** Days since 1970-01-01 of a civil date (month 1..12). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Civil date of a day count since 1970-01-01. */
export function civilFromDays(days: number): { y: number; m: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

const pad = (n: number | bigint, w: number): string => n.toString().padStart(w, '0');

function yearText(y: number): string {
  if (y >= 0 && y <= 9999) return pad(y, 4);
  return (y < 0 ? '-' : '+') + pad(Math.abs(y), 4);
}

/** "YYYY-MM-DD" of a day count. */
export function formatDate(days: number): string {
  const { y, m, d } = civilFromDays(days);
  return `${yearText(y)}-${pad(m, 2)}-${pad(d, 2)}`;
}

const DATE_RE = /^([+-]?\d{4,})-(\d{2})-(\d{2})$/;
const TIME_RE = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;

function parseDate(s: string, what: string): number {
  const m = DATE_RE.exec(s);
  if (!m) throw new TypeError(`${what}: expected a date "YYYY-MM-DD", found ${JSON.stringify(s)}`);
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const days = daysFromCivil(y, mo, d);
  const back = civilFromDays(days);
  if (mo < 1 || mo > 12 || back.d !== d || back.m !== mo) throw new TypeError(`${what}: no such date ${JSON.stringify(s)}`);
  return days;
}

/** Time of day as units (micros or nanos) since midnight. */
function parseTimeOfDay(s: string, perSecond: bigint, what: string): bigint {
  const m = TIME_RE.exec(s);
  if (!m) throw new TypeError(`${what}: expected a time "HH:MM:SS[.ffffff]", found ${JSON.stringify(s)}`);
  const h = BigInt(m[1]!);
  const mi = BigInt(m[2]!);
  const sec = BigInt(m[3] ?? '0');
  if (h > 23n || mi > 59n || sec > 59n) throw new TypeError(`${what}: time out of range ${JSON.stringify(s)}`);
  const digits = perSecond === 1_000_000n ? 6 : 9;
  const frac = m[4] ?? '';
  if (frac.length > digits && /[1-9]/.test(frac.slice(digits))) {
    throw new TypeError(`${what}: time ${JSON.stringify(s)} has more than ${digits} fraction digits`);
  }
  const f = BigInt(frac.slice(0, digits).padEnd(digits, '0') || '0');
  return ((h * 60n + mi) * 60n + sec) * perSecond + f;
}

function formatTimeOfDay(units: bigint, perSecond: bigint): string {
  const digits = perSecond === 1_000_000n ? 6 : 9;
  const secs = units / perSecond;
  const frac = units % perSecond;
  const h = secs / 3600n;
  const mi = (secs / 60n) % 60n;
  const s = secs % 60n;
  return `${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(frac, digits)}`;
}

const floorDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
};

/** ISO timestamp text: "YYYY-MM-DDTHH:MM:SS[.f]" with optional zone "Z" or "+hh:mm". */
function parseTimestamp(s: string, t: PrimitiveType, what: string): bigint {
  const m = /^([+-]?\d{4,}-\d{2}-\d{2})[T ]([0-9:.]+)(Z|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (!m) throw new TypeError(`${what}: expected an ISO timestamp "YYYY-MM-DDTHH:MM:SS.ffffff", found ${JSON.stringify(s)}`);
  const perSecond = isNanos(t) ? 1_000_000_000n : 1_000_000n;
  const days = BigInt(parseDate(m[1]!, what));
  let units = days * unitsPerDay(t) + parseTimeOfDay(m[2]!, perSecond, what);
  const zone = m[3];
  if (zone !== undefined && zone !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const off = (BigInt(z[2]!) * 60n + BigInt(z[3]!)) * 60n * perSecond;
    units = z[1] === '+' ? units - off : units + off;
  }
  return units;
}

function formatTimestamp(units: bigint, t: PrimitiveType): string {
  const perDay = unitsPerDay(t);
  const perSecond = isNanos(t) ? 1_000_000_000n : 1_000_000n;
  const days = floorDiv(units, perDay);
  const rest = units - days * perDay;
  const zone = t.type === 'timestamptz' || t.type === 'timestamptz_ns' ? '+00:00' : '';
  return `${formatDate(Number(days))}T${formatTimeOfDay(rest, perSecond)}${zone}`;
}

// ---- decimals ---------------------------------------------------------------

/** Unscaled integer of a decimal text at `scale` ("9.99", 2 -> 999n). Refuses lost digits. */
export function decimalToUnscaled(s: string, scale: number): bigint {
  const m = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(s.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new TypeError(`expected a decimal number, found ${JSON.stringify(s)}`);
  let digits = (m[2] ?? '') + (m[3] ?? '');
  const exp = -(m[3] ?? '').length + Number(m[4] ?? '0');
  // value = digits * 10^exp; want digits * 10^(exp + scale)
  const shift = exp + scale;
  if (shift >= 0) digits += '0'.repeat(shift);
  else {
    const cut = digits.slice(digits.length + shift);
    if (/[1-9]/.test(cut)) throw new TypeError(`decimal ${JSON.stringify(s)} has more than ${scale} fraction digits`);
    digits = digits.slice(0, Math.max(0, digits.length + shift));
  }
  const u = BigInt(digits === '' ? '0' : digits);
  return m[1] === '-' ? -u : u;
}

/** Canonical text of an unscaled decimal: exactly `scale` fraction digits, no "-0". */
export function unscaledToDecimal(u: bigint, scale: number): string {
  const neg = u < 0n;
  const abs = (neg ? -u : u).toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${abs.slice(0, abs.length - scale)}.${abs.slice(abs.length - scale)}` : abs;
  return neg ? `-${text}` : text;
}

/** Minimal-length big-endian two's-complement bytes of an integer (0 -> 00). */
export function bigintToBytesBE(u: bigint): Uint8Array {
  let n = 1;
  while (u < -(1n << BigInt(8 * n - 1)) || u >= 1n << BigInt(8 * n - 1)) n++;
  let x = BigInt.asUintN(8 * n, u);
  const out = new Uint8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** Integer of big-endian two's-complement bytes (empty -> 0). */
export function bytesBEToBigint(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  let x = 0n;
  for (const byte of b) x = (x << 8n) | BigInt(byte);
  return BigInt.asIntN(8 * b.length, x);
}

// ---- uuid -------------------------------------------------------------------

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function uuidToBytes(s: string): Uint8Array {
  if (!UUID_RE.test(s)) throw new TypeError(`expected a UUID "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", found ${JSON.stringify(s)}`);
  return fromHex(s.replace(/-/g, ''), 'uuid');
}

export function bytesToUuid(b: Uint8Array): string {
  const h = toHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// ---- binary single-value serialization (App. D) -----------------------------

function expectType(ok: boolean, t: PrimitiveType, v: Value): void {
  if (!ok) throw new TypeError(`expected a value of type ${typeName(t)}, found ${showValue(v)}`);
}

function typeName(t: IcebergType): string {
  if (t.type === 'decimal') return `decimal(${t.precision}, ${t.scale})`;
  if (t.type === 'fixed') return `fixed[${t.length}]`;
  return t.type;
}

const asBigint = (v: Value): bigint | undefined =>
  typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;

/** Iceberg's binary serialization of one value (bounds, partition summaries). */
export function toBinary(t: PrimitiveType, v: Value): Uint8Array {
  switch (t.type) {
    case 'boolean':
      expectType(typeof v === 'boolean', t, v);
      return Uint8Array.of(v ? 1 : 0);
    case 'int':
    case 'date': {
      expectType(typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX, t, v);
      const out = new Uint8Array(4);
      new DataView(out.buffer).setInt32(0, v as number, true);
      return out;
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const x = asBigint(v);
      expectType(x !== undefined && x >= LONG_MIN && x <= LONG_MAX, t, v);
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigInt64(0, x!, true);
      return out;
    }
    case 'float': {
      expectType(typeof v === 'number', t, v);
      const out = new Uint8Array(4);
      new DataView(out.buffer).setFloat32(0, v as number, true);
      return out;
    }
    case 'double': {
      expectType(typeof v === 'number', t, v);
      const out = new Uint8Array(8);
      new DataView(out.buffer).setFloat64(0, v as number, true);
      return out;
    }
    case 'decimal':
      expectType(typeof v === 'string', t, v);
      return bigintToBytesBE(decimalToUnscaled(v as string, t.scale));
    case 'string':
      expectType(typeof v === 'string', t, v);
      return utf8.encode(v as string);
    case 'uuid':
      expectType(typeof v === 'string', t, v);
      return uuidToBytes(v as string);
    case 'fixed':
    case 'binary':
      expectType(v instanceof Uint8Array, t, v);
      return Uint8Array.from(v as Uint8Array);
    case 'unknown':
      throw new TypeError('type unknown has no binary serialization');
  }
}

function expectLength(t: PrimitiveType, b: Uint8Array, ...lengths: number[]): void {
  if (!lengths.includes(b.length)) {
    throw new TypeError(`binary ${typeName(t)} value: expected ${lengths.join(' or ')} bytes, found ${b.length} (${toHex(b)})`);
  }
}

/** Decode one binary-serialized value. Tolerates promoted types: a 4-byte bound under
 * long (was int), double (was float), or timestamp (was date). */
export function fromBinary(t: PrimitiveType, b: Uint8Array): Value {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  switch (t.type) {
    case 'boolean':
      expectLength(t, b, 1);
      return b[0] !== 0;
    case 'int':
    case 'date':
      expectLength(t, b, 4);
      return dv.getInt32(0, true);
    case 'long':
      expectLength(t, b, 4, 8);
      return b.length === 4 ? BigInt(dv.getInt32(0, true)) : dv.getBigInt64(0, true);
    case 'time':
      expectLength(t, b, 8);
      return dv.getBigInt64(0, true);
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      expectLength(t, b, 4, 8);
      return b.length === 4 ? BigInt(dv.getInt32(0, true)) * unitsPerDay(t) : dv.getBigInt64(0, true);
    case 'float':
      expectLength(t, b, 4);
      return dv.getFloat32(0, true);
    case 'double':
      expectLength(t, b, 4, 8);
      return b.length === 4 ? dv.getFloat32(0, true) : dv.getFloat64(0, true);
    case 'decimal':
      return unscaledToDecimal(bytesBEToBigint(b), t.scale);
    case 'string':
      return utf8Decoder.decode(b);
    case 'uuid':
      expectLength(t, b, 16);
      return bytesToUuid(b);
    case 'fixed':
    case 'binary':
      return Uint8Array.from(b);
    case 'unknown':
      throw new TypeError('type unknown has no binary serialization');
  }
}

// ---- ordering ---------------------------------------------------------------

/** Strings in Unicode code point order (= UTF-8 byte order), not UTF-16 unit order. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // surrogates (D800-DFFF) encode code points above FFFF: move them above E000-FFFF
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x < y ? -1 : 1;
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

/** Unsigned lexicographic byte order. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length < b.length ? -1 : a.length === b.length ? 0 : 1;
}

function compareFloats(a: number, b: number): number {
  // Java's Double.compare: -0.0 < +0.0, NaN above everything and equal to itself
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  if (an || bn) return an && bn ? 0 : an ? 1 : -1;
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === 0 && b === 0) {
    const az = Object.is(a, -0);
    const bz = Object.is(b, -0);
    return az === bz ? 0 : az ? -1 : 1;
  }
  return 0;
}

function compareIntegers(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  const x = asBigint(a);
  const y = asBigint(b);
  if (x === undefined || y === undefined) throw new TypeError(`cannot compare ${showValue(a)} with ${showValue(b)} as integers`);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Iceberg's order of two non-null values of one primitive type. */
export function compareValues(t: PrimitiveType, a: Value, b: Value): number {
  switch (t.type) {
    case 'boolean':
      return a === b ? 0 : a ? 1 : -1;
    case 'int':
    case 'date':
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return compareIntegers(a, b);
    case 'float':
    case 'double':
      return compareFloats(a as number, b as number);
    case 'decimal': {
      const x = decimalToUnscaled(a as string, t.scale);
      const y = decimalToUnscaled(b as string, t.scale);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'string':
      return compareStrings(a as string, b as string);
    case 'uuid': {
      // unsigned byte order of the 16 bytes = order of the lowercase hex text
      const x = (a as string).toLowerCase();
      const y = (b as string).toLowerCase();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'fixed':
    case 'binary':
      return compareBytes(a as Uint8Array, b as Uint8Array);
    case 'unknown':
      return 0;
  }
}

// ---- JSON single-value encoding ---------------------------------------------

const isJsonObject = (j: Json): j is { [key: string]: Json } =>
  typeof j === 'object' && j !== null && !Array.isArray(j);

/** Decode the spec's JSON single-value encoding (defaults) into a `Value`. */
export function valueFromJson(t: IcebergType, j: Json, what = 'JSON value'): Value {
  if (j === null) return null;
  const bad = (): never => {
    throw new TypeError(`${what}: expected a JSON ${typeName(t)} value, found ${showValue(j)}`);
  };
  switch (t.type) {
    case 'struct': {
      if (!isJsonObject(j)) return bad();
      const out: { [name: string]: Value } = {};
      for (const f of t.fields) {
        const x = j[String(f.id)];
        out[f.name] = x === undefined ? (f.initialDefault ?? null) : valueFromJson(f.type, x, `${what}.${f.name}`);
      }
      return out;
    }
    case 'list':
      if (!Array.isArray(j)) return bad();
      return j.map((x, i) => valueFromJson(t.element, x, `${what}[${i}]`));
    case 'map': {
      if (!isJsonObject(j) || !Array.isArray(j.keys) || !Array.isArray(j.values) || j.keys.length !== j.values.length) return bad();
      const vals = j.values;
      const out = new Map<Value, Value>();
      j.keys.forEach((k, i) => out.set(valueFromJson(t.key, k, `${what}.keys[${i}]`), valueFromJson(t.value, vals[i]!, `${what}.values[${i}]`)));
      return out;
    }
    case 'boolean':
      return typeof j === 'boolean' ? j : bad();
    case 'int':
      return typeof j === 'number' && Number.isInteger(j) && j >= INT_MIN && j <= INT_MAX ? j : bad();
    case 'long': {
      const x = typeof j === 'bigint' ? j : typeof j === 'number' && Number.isInteger(j) ? BigInt(j) : undefined;
      return x !== undefined && x >= LONG_MIN && x <= LONG_MAX ? x : bad();
    }
    case 'float':
    case 'double':
      if (typeof j === 'number') return j;
      if (typeof j === 'bigint') return Number(j);
      if (j === 'NaN') return NaN;
      if (j === 'Infinity') return Infinity;
      if (j === '-Infinity') return -Infinity;
      return bad();
    case 'decimal':
      if (typeof j !== 'string' && typeof j !== 'number' && typeof j !== 'bigint') return bad();
      return coerceValue(t, j, what);
    case 'date':
      return typeof j === 'string' ? parseDate(j, what) : bad();
    case 'time':
      return typeof j === 'string' ? parseTimeOfDay(j, 1_000_000n, what) : bad();
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof j === 'string' ? parseTimestamp(j, t, what) : bad();
    case 'string':
      return typeof j === 'string' ? j : bad();
    case 'uuid':
      return typeof j === 'string' && UUID_RE.test(j) ? j.toLowerCase() : bad();
    case 'fixed': {
      if (typeof j !== 'string') return bad();
      const b = fromHex(j, what);
      if (b.length !== t.length) throw new TypeError(`${what}: expected ${t.length} bytes for fixed[${t.length}], found ${b.length}`);
      return b;
    }
    case 'binary':
      return typeof j === 'string' ? fromHex(j, what) : bad();
    case 'unknown':
      return bad();
  }
}

/** Encode a `Value` in the spec's JSON single-value encoding (longs stay bigint). */
export function valueToJson(t: IcebergType, v: Value): Json {
  if (v === null) return null;
  switch (t.type) {
    case 'struct': {
      const o = v as { [name: string]: Value };
      const out: { [key: string]: Json } = {};
      for (const f of t.fields) {
        const x = o[f.name];
        if (x !== undefined && x !== null) out[String(f.id)] = valueToJson(f.type, x);
      }
      return out;
    }
    case 'list':
      return (v as Value[]).map((x) => valueToJson(t.element, x));
    case 'map': {
      const m = v as Map<Value, Value>;
      return { keys: [...m.keys()].map((k) => valueToJson(t.key, k)), values: [...m.values()].map((x) => valueToJson(t.value, x)) };
    }
    case 'long':
      return asBigint(v) ?? null;
    case 'float':
    case 'double': {
      const x = v as number;
      return Number.isFinite(x) ? x : Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
    }
    case 'date':
      return formatDate(v as number);
    case 'time':
      return formatTimeOfDay(asBigint(v)!, 1_000_000n);
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return formatTimestamp(asBigint(v)!, t);
    case 'fixed':
    case 'binary':
      return toHex(v as Uint8Array);
    case 'uuid':
      return (v as string).toLowerCase();
    default:
      return v as Json;
  }
}

// ---- coercion of loose input ------------------------------------------------

/**
 * The canonical `Value` of type `t` for loose user input (JSON Lines appends, CLI
 * filters): a number or numeric string for long/decimal, an ISO string or Date for
 * date/timestamp, hex for binary/fixed, and so on. null/undefined -> null. Throws a
 * TypeError naming `what`, the type and the input when the input does not fit.
 */
export function coerceValue(t: PrimitiveType, v: unknown, what: string): Value {
  if (v === null || v === undefined) return null;
  // fast paths: values already in their canonical form (the common case when
  // rows come from code rather than text) return without allocating
  switch (t.type) {
    case 'string':
      if (typeof v === 'string') return v;
      break;
    case 'int':
    case 'date':
      if (typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX) return v;
      break;
    case 'long':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof v === 'bigint' && v >= LONG_MIN && v <= LONG_MAX) return v;
      break;
    case 'boolean':
      if (typeof v === 'boolean') return v;
      break;
    case 'double':
      if (typeof v === 'number') return v;
      break;
    default:
      break;
  }
  const bad = (why = ''): never => {
    throw new TypeError(`${what}: expected a ${typeName(t)} value, found ${showValue(v)}${why ? ` (${why})` : ''}`);
  };
  const integer = (lo: bigint, hi: bigint): bigint => {
    let x: bigint | undefined;
    if (typeof v === 'bigint') x = v;
    else if (typeof v === 'number') {
      if (!Number.isInteger(v)) bad('not an integer');
      if (!Number.isSafeInteger(v)) bad('beyond 2^53: pass it as a string or bigint to keep every digit');
      x = BigInt(v);
    } else if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) x = BigInt(v.trim());
    else bad();
    if (x! < lo || x! > hi) bad('out of range');
    return x!;
  };
  switch (t.type) {
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true') return true;
      if (v === 'false') return false;
      return bad();
    case 'int':
      return Number(integer(BigInt(INT_MIN), BigInt(INT_MAX)));
    case 'long':
      return integer(LONG_MIN, LONG_MAX);
    case 'float':
    case 'double': {
      if (typeof v === 'number') return t.type === 'float' ? Math.fround(v) : v;
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'string') {
        const s = v.trim();
        const x = s === 'NaN' ? NaN : s === 'Infinity' || s === '+Infinity' ? Infinity : s === '-Infinity' ? -Infinity : /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : undefined;
        if (x === undefined) return bad();
        return t.type === 'float' ? Math.fround(x) : x;
      }
      return bad();
    }
    case 'decimal': {
      let text: string;
      if (typeof v === 'string') text = v;
      else if (typeof v === 'bigint') text = v.toString();
      else if (typeof v === 'number' && Number.isFinite(v)) text = String(v);
      else return bad();
      let u: bigint;
      try {
        u = decimalToUnscaled(text, t.scale);
      } catch (e) {
        return bad((e as Error).message);
      }
      if ((u < 0n ? -u : u).toString().length > t.precision) bad(`more than ${t.precision} digits`);
      return unscaledToDecimal(u, t.scale);
    }
    case 'date':
      if (typeof v === 'number') return Number(integer(BigInt(INT_MIN), BigInt(INT_MAX)));
      if (v instanceof Date) {
        if (Number.isNaN(v.getTime())) bad();
        return Math.floor(v.getTime() / 86_400_000);
      }
      if (typeof v === 'string') {
        try {
          return parseDate(v.trim(), what);
        } catch {
          return bad('expected "YYYY-MM-DD"');
        }
      }
      return bad();
    case 'time':
      if (typeof v === 'string' && !/^\s*\d+\s*$/.test(v)) return parseTimeOfDay(v.trim(), 1_000_000n, what);
      return integer(0n, MICROS_PER_DAY - 1n);
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      if (v instanceof Date) {
        if (Number.isNaN(v.getTime())) bad();
        return BigInt(v.getTime()) * (isNanos(t) ? 1_000_000n : 1000n);
      }
      if (typeof v === 'string' && !/^\s*[+-]?\d+\s*$/.test(v)) {
        const s = v.trim();
        if (DATE_RE.test(s)) return BigInt(parseDate(s, what)) * unitsPerDay(t);
        return parseTimestamp(s, t, what);
      }
      return integer(LONG_MIN, LONG_MAX);
    }
    case 'string':
      return typeof v === 'string' ? v : bad();
    case 'uuid':
      if (typeof v === 'string' && UUID_RE.test(v.trim())) return v.trim().toLowerCase();
      if (v instanceof Uint8Array && v.length === 16) return bytesToUuid(v);
      return bad();
    case 'fixed':
    case 'binary': {
      let b: Uint8Array;
      if (v instanceof Uint8Array) b = Uint8Array.from(v);
      else if (typeof v === 'string') b = fromHex(v, what);
      else if (Array.isArray(v) && v.every((x) => Number.isInteger(x) && x >= 0 && x <= 255)) b = Uint8Array.from(v as number[]);
      else return bad('expected bytes or a hex string');
      if (t.type === 'fixed' && b.length !== t.length) bad(`expected ${t.length} bytes, found ${b.length}`);
      return b;
    }
    case 'unknown':
      return bad('columns of type unknown hold only nulls');
  }
}

// ---- display ----------------------------------------------------------------

/**
 * A JSON-friendly rendering of a value for JSON Lines output (write it with
 * stringifyJson): longs stay bigint (written as exact integers); decimals, strings
 * and uuids stay strings; binary/fixed become lowercase hex; dates "YYYY-MM-DD";
 * times "HH:MM:SS.ffffff"; timestamps ISO text ("+00:00" for tz types); NaN and
 * infinities the strings "NaN", "Infinity", "-Infinity"; structs objects by field
 * name; lists arrays; maps arrays of `{key, value}`.
 */
export function displayValue(t: IcebergType, v: Value): unknown {
  if (v === null) return null;
  switch (t.type) {
    case 'struct': {
      const o = v as { [name: string]: Value };
      const out: Record<string, unknown> = {};
      for (const f of t.fields) out[f.name] = displayValue(f.type, o[f.name] ?? null);
      return out;
    }
    case 'list':
      return (v as Value[]).map((x) => displayValue(t.element, x));
    case 'map':
      return [...(v as Map<Value, Value>)].map(([k, x]) => ({ key: displayValue(t.key, k), value: displayValue(t.value, x) }));
    case 'long':
      return v;
    default:
      return valueToJson(t, v);
  }
}
