// Types in one comparable shape, from the two ways the compiler prints them:
// rustdoc JSON's `Type` objects and MIR's type text (`&'a mut a::B<'_, T>`).
// Both become a small tree rendered canonically: paths shortened to their
// last segment, lifetimes dropped, array lengths erased (`[u8; _]`), trait
// objects reduced to their first trait. Two impls are told apart by this
// rendering (`From<&str>` vs `From<usize>`), which is as much as matching MIR
// callees to rustdoc impls needs. Pure functions.

export type TypeAst =
  | { k: 'path'; name: string; args: TypeAst[]; generic?: true }
  | { k: 'ref'; mut: boolean; t: TypeAst }
  | { k: 'ptr'; mut: boolean; t: TypeAst }
  | { k: 'slice'; t: TypeAst }
  | { k: 'array'; t: TypeAst }
  | { k: 'tuple'; ts: TypeAst[] }
  | { k: 'dyn'; t: TypeAst | null }
  | { k: 'impl'; t: TypeAst | null }
  | { k: 'fnptr' }
  | { k: 'qpath'; self: TypeAst; trait: TypeAst | null; name: string }
  | { k: 'never' }
  | { k: 'other'; text: string };

export function renderType(t: TypeAst): string {
  switch (t.k) {
    case 'path': return t.args.length > 0 ? `${t.name}<${t.args.map(renderType).join(', ')}>` : t.name;
    case 'ref': return `&${t.mut ? 'mut ' : ''}${renderType(t.t)}`;
    case 'ptr': return `*${t.mut ? 'mut' : 'const'} ${renderType(t.t)}`;
    case 'slice': return `[${renderType(t.t)}]`;
    case 'array': return `[${renderType(t.t)}; _]`;
    case 'tuple': return `(${t.ts.map(renderType).join(', ')}${t.ts.length === 1 ? ',' : ''})`;
    case 'dyn': return `dyn ${t.t ? renderType(t.t) : '?'}`;
    case 'impl': return `impl ${t.t ? renderType(t.t) : '?'}`;
    case 'fnptr': return 'fn';
    case 'qpath': return `<${renderType(t.self)}${t.trait ? ` as ${renderType(t.trait)}` : ''}>::${t.name}`;
    case 'never': return '!';
    case 'other': return t.text;
  }
}

/**
 * Does an impl's self type (rustdoc, with its generic parameters) take the
 * concrete type (MIR)? A parameter takes anything; paths compare by their
 * rendering (last segment) and arguments.
 */
export function implTakes(pattern: TypeAst, concrete: TypeAst): boolean {
  if (pattern.k === 'path' && pattern.generic) return true;
  if (pattern.k !== concrete.k) return false;
  switch (pattern.k) {
    case 'path': {
      const c = concrete as typeof pattern;
      return pattern.name === c.name && pattern.args.length === c.args.length && pattern.args.every((a, i) => implTakes(a, c.args[i]!));
    }
    case 'ref': case 'ptr': {
      const c = concrete as typeof pattern;
      return pattern.mut === c.mut && implTakes(pattern.t, c.t);
    }
    case 'slice': case 'array': return implTakes(pattern.t, (concrete as typeof pattern).t);
    case 'tuple': {
      const c = concrete as typeof pattern;
      return pattern.ts.length === c.ts.length && pattern.ts.every((a, i) => implTakes(a, c.ts[i]!));
    }
    default: return renderType(pattern) === renderType(concrete);
  }
}

// ---- rustdoc JSON ----------------------------------------------------------

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function lastSegment(path: string): string {
  const i = path.lastIndexOf('::');
  return i >= 0 ? path.slice(i + 2) : path;
}

/** Generic arguments of a rustdoc path (`args.angle_bracketed.args`), types only. */
export function rustdocArgs(args: unknown): TypeAst[] {
  if (!isObj(args) || !isObj(args['angle_bracketed'])) return [];
  const list = (args['angle_bracketed'] as Json)['args'];
  if (!Array.isArray(list)) return [];
  const out: TypeAst[] = [];
  for (const a of list) {
    if (isObj(a) && 'type' in a) out.push(fromRustdoc(a['type']));
    else if (isObj(a) && 'const' in a) out.push({ k: 'other', text: '_' });
  }
  return out;
}

/** A rustdoc path object (`{path, id, args}`) as a type. */
export function rustdocPath(p: unknown): TypeAst {
  if (!isObj(p)) return { k: 'other', text: '?' };
  return { k: 'path', name: lastSegment(String(p['path'] ?? '?')), args: rustdocArgs(p['args']) };
}

export function fromRustdoc(t: unknown): TypeAst {
  if (!isObj(t)) return { k: 'other', text: '?' };
  const [kind, v] = Object.entries(t)[0] ?? ['', null];
  switch (kind) {
    case 'resolved_path': return rustdocPath(v);
    case 'generic': return { k: 'path', name: String(v), args: [], generic: true };
    case 'primitive': return { k: 'path', name: String(v), args: [] };
    case 'borrowed_ref': return { k: 'ref', mut: Boolean((v as Json)['is_mutable']), t: fromRustdoc((v as Json)['type']) };
    case 'raw_pointer': return { k: 'ptr', mut: Boolean((v as Json)['is_mutable']), t: fromRustdoc((v as Json)['type']) };
    case 'slice': return { k: 'slice', t: fromRustdoc(v) };
    case 'array': return { k: 'array', t: fromRustdoc((v as Json)['type']) };
    case 'tuple': return { k: 'tuple', ts: Array.isArray(v) ? v.map(fromRustdoc) : [] };
    case 'dyn_trait': {
      const traits = isObj(v) && Array.isArray(v['traits']) ? v['traits'] : [];
      const first = traits[0];
      return { k: 'dyn', t: isObj(first) ? rustdocPath(first['trait']) : null };
    }
    case 'impl_trait': {
      const bounds = Array.isArray(v) ? v : [];
      const tb = bounds.find((b) => isObj(b) && 'trait_bound' in b) as Json | undefined;
      return { k: 'impl', t: tb ? rustdocPath((tb['trait_bound'] as Json)['trait']) : null };
    }
    case 'function_pointer': return { k: 'fnptr' };
    case 'qualified_path': {
      const q = v as Json;
      return { k: 'qpath', self: fromRustdoc(q['self_type']), trait: q['trait'] ? rustdocPath(q['trait']) : null, name: String(q['name'] ?? '?') };
    }
    case 'infer': return { k: 'other', text: '_' };
    default: return { k: 'other', text: kind };
  }
}

// ---- MIR text --------------------------------------------------------------

/** Tokens of printed type text: identifiers, lifetimes, `::`, `->`, punctuation, `{…}` blobs (closures). */
export function tokenize(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t') { i++; continue; }
    if (c === '{') {
      let depth = 0;
      let j = i;
      for (; j < s.length; j++) {
        if (s[j] === '{') depth++;
        else if (s[j] === '}' && --depth === 0) break;
      }
      out.push(s.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
      out.push(s.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    if (c === "'") {
      const m = /^'[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i));
      if (m) { out.push(m[0]); i += m[0].length; continue; }
    }
    if (/[A-Za-z0-9_]/.test(c)) {
      const m = /^[A-Za-z0-9_]+/.exec(s.slice(i))!;
      out.push(m[0]);
      i += m[0].length;
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === '::' || two === '->') { out.push(two); i += 2; continue; }
    out.push(c);
    i++;
  }
  return out;
}

/** A recursive-descent reader over tokens of MIR's printed types and paths. */
export class TypeReader {
  i = 0;
  constructor(readonly toks: string[]) {}

  peek(o = 0): string | undefined { return this.toks[this.i + o]; }
  eat(t: string): boolean {
    if (this.toks[this.i] === t) { this.i++; return true; }
    return false;
  }
  get done(): boolean { return this.i >= this.toks.length; }

  type(): TypeAst {
    const t = this.peek();
    if (t === undefined) return { k: 'other', text: '?' };
    if (t === '&') {
      this.i++;
      if (this.peek()?.startsWith("'")) this.i++;
      const mut = this.eat('mut');
      return { k: 'ref', mut, t: this.type() };
    }
    if (t === '*') {
      this.i++;
      const mut = this.eat('mut');
      if (!mut) this.eat('const');
      return { k: 'ptr', mut, t: this.type() };
    }
    if (t === '[') {
      this.i++;
      const inner = this.type();
      if (this.eat(';')) {
        this.skipUntil(']');
        this.eat(']');
        return { k: 'array', t: inner };
      }
      this.eat(']');
      return { k: 'slice', t: inner };
    }
    if (t === '(') {
      this.i++;
      const ts: TypeAst[] = [];
      while (!this.done && !this.eat(')')) {
        ts.push(this.type());
        this.eat(',');
      }
      return ts.length === 1 && this.toks[this.i - 2] !== ',' ? ts[0]! : { k: 'tuple', ts };
    }
    if (t === '!') { this.i++; return { k: 'never' }; }
    if (t === 'dyn' || t === 'impl') {
      this.i++;
      const first = this.bound();
      while (this.eat('+')) this.bound();
      return { k: t, t: first };
    }
    if (t === 'for' && this.peek(1) === '<') {
      this.i++;
      this.skipAngles();
      return this.type();
    }
    if (t === 'unsafe' || t === 'extern' || t === 'fn') {
      while (!this.done && this.peek() !== '(') this.i++;
      this.skipParens();
      if (this.eat('->')) this.type();
      return { k: 'fnptr' };
    }
    if (t === '<') {
      this.i++;
      const self = this.type();
      const trait = this.eat('as') ? this.type() : null;
      this.eat('>');
      let name = '';
      if (this.eat('::')) name = this.peek() ?? '';
      this.i++;
      if (trait === null && name === '') return self;
      return { k: 'qpath', self, trait, name };
    }
    if (t.startsWith('{')) { this.i++; return { k: 'other', text: t.startsWith('{closure') ? '{closure}' : '{…}' }; }
    return this.path();
  }

  /** A trait bound in `dyn A + 'b`: lifetimes yield null. */
  private bound(): TypeAst | null {
    if (this.peek()?.startsWith("'")) { this.i++; return null; }
    if (this.peek() === 'for' && this.peek(1) === '<') { this.i++; this.skipAngles(); }
    if (this.eat('?')) { /* ?Sized */ }
    return this.path();
  }

  /** `a::b::C<'_, T>` or `a::C::<T>` -> last segment with its type arguments. */
  path(): TypeAst {
    let name = this.peek() ?? '?';
    this.i++;
    let args: TypeAst[] = [];
    for (;;) {
      if (this.peek() === '<') {
        args = this.genericArgs();
        continue;
      }
      if (this.peek() === '::' && this.peek(1) === '<') {
        this.i++;
        args = this.genericArgs();
        continue;
      }
      if (this.peek() === '::' && this.peek(1) !== undefined && /^[A-Za-z_]/.test(this.peek(1)!)) {
        this.i++;
        name = this.peek()!;
        this.i++;
        args = [];
        continue;
      }
      break;
    }
    // Fn sugar: `Fn(A) -> B`
    if (this.peek() === '(' && (name === 'Fn' || name === 'FnMut' || name === 'FnOnce')) {
      this.skipParens();
      if (this.eat('->')) this.type();
    }
    return { k: 'path', name, args };
  }

  /** `<'a, T, N = X>` -> the type arguments (lifetimes and associated constraints dropped). */
  genericArgs(): TypeAst[] {
    const out: TypeAst[] = [];
    this.eat('<');
    while (!this.done && !this.eat('>')) {
      const t = this.peek()!;
      if (t.startsWith("'")) { this.i++; this.eat(','); continue; }
      if (/^[A-Za-z_]/.test(t) && this.peek(1) === '=') {
        this.i += 2;
        this.type();
        this.eat(',');
        continue;
      }
      if (/^[0-9]/.test(t) || t === '_' || t.startsWith('"')) {
        this.i++;
        while (!this.done && this.peek() !== ',' && this.peek() !== '>') this.i++;
        out.push({ k: 'other', text: '_' });
        this.eat(',');
        continue;
      }
      const before = this.i;
      out.push(this.type());
      if (this.i === before) this.i++;
      this.eat(',');
    }
    return out;
  }

  skipAngles(): void {
    let depth = 0;
    while (!this.done) {
      const t = this.toks[this.i++]!;
      if (t === '<') depth++;
      else if (t === '>' && --depth === 0) return;
    }
  }

  skipParens(): void {
    let depth = 0;
    while (!this.done) {
      const t = this.toks[this.i++]!;
      if (t === '(') depth++;
      else if (t === ')' && --depth === 0) return;
    }
  }

  private skipUntil(stop: string): void {
    let depth = 0;
    while (!this.done) {
      const t = this.peek()!;
      if (depth === 0 && t === stop) return;
      if (t === '[' || t === '(' || t === '<') depth++;
      else if (t === ']' || t === ')' || t === '>') depth--;
      this.i++;
    }
  }
}

/** MIR's printed type text -> the canonical tree. */
export function fromMirType(text: string): TypeAst {
  return stdAliases(new TypeReader(tokenize(text)).type());
}

/**
 * New std prints the atomics as the generic `Atomic<T>` they are aliases of
 * (`AtomicUsize` = `Atomic<usize>`); crates and rustdoc name the alias. Back
 * to the alias, so an impl for `AtomicUsize` matches.
 */
function stdAliases(t: TypeAst): TypeAst {
  switch (t.k) {
    case 'path': {
      const args = t.args.map(stdAliases);
      const a = args[0];
      if (t.name === 'Atomic' && args.length === 1 && a) {
        if (a.k === 'path' && a.args.length === 0 && /^(u|i)(8|16|32|64|128|size)$/.test(a.name)) return { k: 'path', name: `Atomic${a.name[0]!.toUpperCase()}${a.name.slice(1)}`, args: [] };
        if (a.k === 'path' && a.name === 'bool') return { k: 'path', name: 'AtomicBool', args: [] };
        if (a.k === 'ptr') return { k: 'path', name: 'AtomicPtr', args: [a.t] };
      }
      return { ...t, args };
    }
    case 'ref': case 'ptr': return { ...t, t: stdAliases(t.t) };
    default: return t;
  }
}
