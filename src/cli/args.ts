// Command-line arguments: the shape of a command (its positionals and
// options), a small parser for one command's arguments, and help text. No
// dependency. Conventions: `--name value` or `--name=value`, `-x value` for a
// short alias, flags take no value, list options repeat (`--where a --where
// b`), `--` ends the options and `-` is a positional (stdin). Any mistake is a
// UsageError, which main.ts turns into exit code 2 with a hint to --help; a
// mistyped option or command names the close ones ("did you mean --limit?").
import { didYouMean, editDistance } from '../query/suggest.ts';

export class UsageError extends Error {
  constructor(
    message: string,
    /** The command path the hint should name (`table scan`), '' for the top level. */
    readonly commandPath = '',
  ) {
    super(message);
  }
}

export interface OptionSpec {
  /** Long name without the dashes (`columns`). */
  name: string;
  /** One-letter alias without the dash. */
  short?: string;
  /** flag: no value; value: one value; list: repeatable, values collected in order. */
  kind: 'flag' | 'value' | 'list';
  /** Placeholder of the value in help text (`FILE`). */
  arg?: string;
  help: string;
}

export interface PositionalSpec {
  name: string;
  required: boolean;
  help: string;
}

/** Parsed arguments of one command. */
export class Args {
  constructor(
    readonly commandPath: string,
    readonly positionals: string[],
    private readonly values: Map<string, string[]>,
  ) {}

  has(name: string): boolean {
    return this.values.has(name);
  }

  flag(name: string): boolean {
    return this.values.has(name);
  }

  value(name: string): string | undefined {
    return this.values.get(name)?.[0];
  }

  list(name: string): string[] {
    return this.values.get(name) ?? [];
  }

  /** A non-negative integer option (`--limit 10`). */
  count(name: string): number | undefined {
    const v = this.value(name);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
      throw new UsageError(`--${name}: expected a non-negative integer, found "${v}"`, this.commandPath);
    }
    return Number(v);
  }

  /** A 64-bit integer option kept exact (`--snapshot 8656952484400131532`). */
  bigint(name: string): bigint | undefined {
    const v = this.value(name);
    if (v === undefined) return undefined;
    if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name}: expected an integer, found "${v}"`, this.commandPath);
    return BigInt(v);
  }

  /** Values of a list option, each also split on commas (`--columns a,b --columns c`). */
  commaList(name: string): string[] {
    return this.list(name)
      .flatMap((v) => v.split(','))
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }
}

/**
 * Parse `argv` (the tokens after the command words) against the options. A
 * value option given twice is an error; so is an unknown option, a missing
 * value, or a wrong number of positionals.
 */
export function parseArgs(commandPath: string, argv: string[], options: OptionSpec[], positionals: PositionalSpec[]): Args {
  const byLong = new Map(options.map((o) => [o.name, o]));
  const byShort = new Map(options.filter((o) => o.short).map((o) => [o.short!, o]));
  const values = new Map<string, string[]>();
  const pos: string[] = [];
  const fail = (msg: string): never => {
    throw new UsageError(msg, commandPath);
  };
  let i = 0;
  let optionsEnded = false;
  while (i < argv.length) {
    const tok = argv[i++]!;
    if (optionsEnded || tok === '-' || !tok.startsWith('-')) {
      pos.push(tok);
      continue;
    }
    if (tok === '--') {
      optionsEnded = true;
      continue;
    }
    let spec: OptionSpec | undefined;
    let inline: string | undefined;
    let shown = tok;
    if (tok.startsWith('--')) {
      const eq = tok.indexOf('=');
      const name = eq < 0 ? tok.slice(2) : tok.slice(2, eq);
      if (eq >= 0) inline = tok.slice(eq + 1);
      shown = `--${name}`;
      spec = byLong.get(name);
    } else if (tok.length === 2) {
      spec = byShort.get(tok.slice(1));
    }
    if (!spec) fail(`unknown option ${shown}${tok.startsWith('--') ? meanOption(shown.slice(2), options.map((o) => o.name)) : ''}`);
    const o = spec!;
    if (o.kind === 'flag') {
      if (inline !== undefined) fail(`--${o.name} takes no value, found "${inline}"`);
      values.set(o.name, ['true']);
      continue;
    }
    let v = inline;
    if (v === undefined) {
      const next = argv[i];
      if (next === undefined || (next.startsWith('--') && next.length > 2)) fail(`--${o.name} needs a value${o.arg ? ` (${o.arg})` : ''}`);
      v = next!;
      i++;
    }
    const prev = values.get(o.name);
    if (o.kind === 'value' && prev) fail(`--${o.name} given twice ("${prev[0]}" and "${v}")`);
    values.set(o.name, [...(prev ?? []), v!]);
  }
  const required = positionals.filter((p) => p.required).length;
  if (pos.length < required) {
    const missing = positionals.slice(pos.length).filter((p) => p.required).map((p) => p.name);
    fail(`missing ${missing.join(' and ')}`);
  }
  if (pos.length > positionals.length) fail(`unexpected argument "${pos[positionals.length]}"`);
  return new Args(commandPath, pos, values);
}

/** The known names close to `name` (query/suggest.ts), only those as close as the closest. */
function closest(name: string, known: string[]): string[] {
  const close = didYouMean(name, known);
  if (close.length === 0) return close;
  const best = editDistance(name.toLowerCase(), close[0]!.toLowerCase());
  return close.filter((c) => editDistance(name.toLowerCase(), c.toLowerCase()) === best);
}

/** ` — did you mean --limit?` (or `--a, --b`) when a known option is close to `name`, else ''. */
export function meanOption(name: string, known: string[]): string {
  const close = closest(name, known);
  return close.length === 0 ? '' : ` — did you mean ${close.map((c) => `--${c}`).join(', ')}?`;
}

/** ` — did you mean callers?` when a known command is close to `name`, else ''. */
export function meanCommand(name: string, known: string[]): string {
  const close = closest(name, known);
  return close.length === 0 ? '' : ` — did you mean ${close.join(', ')}?`;
}

/** Whether the tokens ask for help (before any `--`). */
export function wantsHelp(argv: string[]): boolean {
  for (const t of argv) {
    if (t === '--') return false;
    if (t === '--help' || t === '-h') return true;
  }
  return false;
}

/** Aligned `  --name ARG  help` lines. */
export function formatOptions(options: OptionSpec[]): string {
  const left = options.map((o) => {
    const names = `${o.short ? `-${o.short}, ` : '    '}--${o.name}`;
    return o.kind === 'flag' ? names : `${names} ${o.arg ?? 'VALUE'}`;
  });
  const width = Math.max(0, ...left.map((l) => l.length));
  return options.map((o, i) => `  ${left[i]!.padEnd(width)}  ${o.help}${o.kind === 'list' ? ' (repeatable)' : ''}`).join('\n');
}

/** Aligned `  name  text` lines. */
export function formatPairs(pairs: [string, string][], indent = 2): string {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${' '.repeat(indent)}${k.padEnd(width)}  ${v}`).join('\n');
}
