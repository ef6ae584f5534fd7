// Lossless JSON for Iceberg metadata. `JSON.parse` rounds integers above 2^53
// (snapshot ids routinely are), so this parser returns every integer literal
// outside the safe range as a `bigint`, and `stringifyJson` writes bigints as
// plain digits. Everything else behaves as the built-in JSON.

export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json };

export class JsonSyntaxError extends Error {}

export function parseJson(text: string): Json {
  let i = 0;
  const n = text.length;

  const fail = (what: string): never => {
    throw new JsonSyntaxError(`invalid JSON at offset ${i}: ${what}`);
  };
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const str = (): string => {
    // fast path: no escapes
    const start = ++i;
    let j = text.indexOf('"', start);
    if (j < 0) fail('unterminated string');
    const slice = text.slice(start, j);
    if (slice.indexOf('\\') < 0) {
      i = j + 1;
      return slice;
    }
    // slow path: find the real end, let JSON.parse decode the escapes
    j = start;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) break;
      else j++;
    }
    if (j >= n) fail('unterminated string');
    const raw = text.slice(start - 1, j + 1);
    i = j + 1;
    return JSON.parse(raw) as string;
  };
  const num = (): number | bigint => {
    const start = i;
    if (text[i] === '-') i++;
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    let integer = true;
    if (text[i] === '.') {
      integer = false;
      i++;
      while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      integer = false;
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    }
    const lit = text.slice(start, i);
    if (lit === '' || lit === '-') fail('bad number');
    if (integer) {
      const v = Number(lit);
      return Number.isSafeInteger(v) ? v : BigInt(lit);
    }
    return Number(lit);
  };
  const value = (): Json => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: { [key: string]: Json } = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        out[k] = value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return out;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out: Json[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return out;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return num();
    return fail(c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(c)}`);
  };

  const v = value();
  ws();
  if (i !== n) fail('trailing characters');
  return v;
}

/** Like JSON.stringify, with bigints written as integer literals. */
export function stringifyJson(value: unknown, indent = 0): string {
  const pad = indent > 0 ? ' '.repeat(indent) : '';
  const walk = (v: unknown, depth: string): string | undefined => {
    if (v === null) return 'null';
    switch (typeof v) {
      case 'bigint':
        return v.toString();
      case 'number':
        return Number.isFinite(v) ? String(v) : 'null';
      case 'boolean':
        return v ? 'true' : 'false';
      case 'string':
        return JSON.stringify(v);
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
    }
    const inner = depth + pad;
    const nl = indent > 0 ? '\n' : '';
    const sep = indent > 0 ? ': ' : ':';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      const parts = v.map((x) => walk(x, inner) ?? 'null');
      return `[${nl}${parts.map((p) => inner + p).join(`,${nl}`)}${nl}${depth}]`;
    }
    const parts: string[] = [];
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const s = walk(x, inner);
      if (s !== undefined) parts.push(`${inner}${JSON.stringify(k)}${sep}${s}`);
    }
    if (parts.length === 0) return '{}';
    return `{${nl}${parts.join(`,${nl}`)}${nl}${depth}}`;
  };
  return walk(value, '') ?? 'null';
}

/** A JSON integer (number or bigint, or a decimal string) as a bigint. */
export function toBigInt(v: Json | undefined, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  throw new TypeError(`${what}: expected an integer, found ${v === undefined ? 'nothing' : stringifyJson(v)}`);
}
