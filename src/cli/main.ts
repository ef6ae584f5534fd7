// `mimir`: resolve the command words against the registry (commands.ts),
// parse the rest with the command's options, run it. Exit codes: 0 done,
// 1 failed (message on stderr; the stack too when MIMIR_DEBUG=1), 2 usage
// error (message plus a hint to --help). Global options (--lake, --json,
// --help, --color, --no-pager) may appear anywhere; command options follow
// the command words. On a terminal, answers are coloured and long ones paged
// (output.ts; `pagerOf`, `colorOf` decide).
import * as nodePath from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { UsageError, formatOptions, formatPairs, meanCommand, meanOption, parseArgs, wantsHelp } from './args.ts';
import { GLOBAL_OPTIONS, SERVER_OPTION, type CommandSpec, type Context } from './command.ts';
import { COMMANDS, isGroup, type CommandEntry, type Entry } from './commands.ts';
import { Output, OutputClosed } from './output.ts';

const GLOBAL_HELP = formatOptions([...GLOBAL_OPTIONS, SERVER_OPTION, { name: 'version', kind: 'flag', help: 'print the version' }]);

/** --catalog's value: a server URI as given, a file path made absolute (the catalog module is not loaded here: startup stays light). */
function catalogOption(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  return /^postgres(ql)?:\/\//i.test(v) ? v : nodePath.resolve(v);
}

function topHelp(): string {
  return [
    'mimir — a versioned code-graph lake kept as Apache Iceberg v2 tables',
    '',
    'Usage: mimir <command> [options]',
    '',
    'Commands:',
    formatPairs(COMMANDS.map((e) => [e.name, e.summary])),
    '',
    'Global options:',
    GLOBAL_HELP,
    '',
    "Run 'mimir <command> --help' for a command's options.",
  ].join('\n');
}

function groupHelp(path: string, entries: Entry[], summary: string, description?: string): string {
  return [
    `Usage: mimir ${path} <command> [options]`,
    '',
    summary,
    ...(description ? ['', description] : []),
    '',
    'Commands:',
    formatPairs(entries.map((e) => [e.name, e.summary])),
    '',
    'Global options:',
    GLOBAL_HELP,
    '',
    `Run 'mimir ${path} <command> --help' for a command's options.`,
  ].join('\n');
}

function commandHelp(path: string, entry: CommandEntry, spec: CommandSpec): string {
  const lines = [`Usage: mimir ${path} ${spec.usage}`, '', entry.summary];
  if (spec.description) lines.push('', spec.description);
  if (spec.positionals.length > 0) lines.push('', 'Arguments:', formatPairs(spec.positionals.map((p) => [p.name, p.help])));
  if (spec.options.length > 0) lines.push('', 'Options:', formatOptions(spec.options));
  lines.push('', 'Global options:', formatOptions(GLOBAL_OPTIONS));
  if (spec.examples?.length) lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}

function version(): string {
  const here = nodePath.dirname(fileURLToPath(import.meta.url));
  const pkg = JSON.parse(readFileSync(nodePath.join(here, '..', '..', 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

/**
 * The pager command for stdout, or null: only on a terminal, never with
 * --json, --no-pager or a command that opts out; $MIMIR_PAGER if set (empty
 * or `cat`: none), else $PAGER (the same), else `less -FRX`.
 */
export function pagerOf(o: { tty: boolean; json: boolean; noPager: boolean; spec: CommandSpec }, env: NodeJS.ProcessEnv): string | null {
  if (!o.tty || o.json || o.noPager || o.spec.pager === false) return null;
  const cmd = (env.MIMIR_PAGER ?? env.PAGER ?? 'less -FRX').trim();
  return cmd === '' || cmd === 'cat' ? null : cmd;
}

/** --color WHEN (auto: a terminal and no non-empty $NO_COLOR). */
export function colorOf(when: string | undefined, tty: boolean, env: NodeJS.ProcessEnv, path: string): boolean {
  const w = when ?? 'auto';
  if (w === 'always') return true;
  if (w === 'never') return false;
  if (w !== 'auto') throw new UsageError(`--color: expected auto, always or never, found "${w}"`, path);
  return tty && !env.NO_COLOR;
}

/** Run the CLI on `argv` (without `node` and the script); resolves to the exit code once output is written (and a pager quit). */
export async function main(argv: string[], out = new Output()): Promise<number> {
  try {
    return await run(argv, out);
  } finally {
    await out.finish();
  }
}

async function run(argv: string[], out: Output): Promise<number> {
  let path = '';
  try {
    // Leading tokens: global options and command words, up to a leaf command.
    let lake: string | undefined;
    let server: string | undefined;
    let json = false;
    let help = false;
    let noPager = false;
    let color: string | undefined;
    let entries: Entry[] = COMMANDS;
    let group: { name: string; summary: string; description?: string } | undefined;
    let leaf: CommandEntry | undefined;
    let i = 0;
    while (i < argv.length && !leaf) {
      const tok = argv[i++]!;
      if (tok === '--help' || tok === '-h') help = true;
      else if (tok === '--json') json = true;
      else if (tok === '--no-pager') noPager = true;
      else if (tok === '--color' || tok.startsWith('--color=')) {
        color = tok === '--color' ? argv[i++] : tok.slice('--color='.length);
        if (color === undefined || color === '') throw new UsageError('--color needs a value (auto, always or never)', path);
      } else if (tok === '--version') {
        await out.line(version());
        return 0;
      } else if (tok === '--lake' || tok.startsWith('--lake=')) {
        const v = tok === '--lake' ? argv[i++] : tok.slice('--lake='.length);
        if (v === undefined || v === '') throw new UsageError('--lake needs a value (DIR)', path);
        lake = v;
      } else if (tok === '--server' || tok.startsWith('--server=')) {
        const v = tok === '--server' ? argv[i++] : tok.slice('--server='.length);
        if (v === undefined || v === '') throw new UsageError('--server needs a value (URL)', path);
        server = v;
      } else if (tok.startsWith('-')) {
        const name = tok.split('=')[0]!;
        const mean = name.startsWith('--') ? meanOption(name.slice(2), ['lake', 'server', 'json', 'help', 'version', 'color', 'no-pager']) : '';
        throw new UsageError(`unknown option ${name}${path ? '' : ' (before the command)'}${mean}`, path);
      } else {
        const e = entries.find((x) => x.name === tok);
        if (!e) {
          const where = path ? `mimir ${path}` : 'mimir';
          const names = entries.map((x) => x.name);
          const mean = meanCommand(tok, names);
          throw new UsageError(`unknown command "${tok}" for ${where}${mean || ` (commands: ${names.join(', ')})`}`, path);
        }
        path = path ? `${path} ${e.name}` : e.name;
        if (isGroup(e)) {
          entries = e.commands;
          group = e;
        } else leaf = e;
      }
    }
    if (!leaf) {
      if (!group && !help) {
        out.err(topHelp());
        return 2;
      }
      const text = group ? groupHelp(path, entries, group.summary, group.description) : topHelp();
      if (help) {
        await out.line(text);
        return 0;
      }
      out.err(text);
      return 2;
    }
    const spec = await leaf.load();
    const rest = argv.slice(i);
    if (help || wantsHelp(rest)) {
      await out.line(commandHelp(path, leaf, spec));
      return 0;
    }
    const args = parseArgs(path, rest, [...spec.options, ...GLOBAL_OPTIONS], spec.positionals);
    const asks = spec.options.some((o) => o.name === 'server');
    if (server !== undefined && !asks) throw new UsageError(`--server applies to the questions (find, def, refs, callers, callees, history, diff), not to ${path}`, path);
    const explicitLake = args.value('lake') ?? lake;
    const explicitServer = args.value('server') ?? server;
    if (explicitLake !== undefined && explicitServer !== undefined) throw new UsageError('give --lake (read the lake directly) or --server (ask a running mimir serve), not both', path);
    const asJson = json || args.flag('json');
    out.configure({
      color: !asJson && colorOf(args.value('color') ?? color, out.stdoutIsTTY, process.env, path),
      pager: pagerOf({ tty: out.stdoutIsTTY, json: asJson, noPager: noPager || args.flag('no-pager'), spec }, process.env),
      statusEveryMs: /^\d+$/.test(process.env.MIMIR_PROGRESS_EVERY_MS ?? '') ? Number(process.env.MIMIR_PROGRESS_EVERY_MS) : undefined,
    });
    const ctx: Context = {
      lakeDir: nodePath.resolve(explicitLake ?? process.env.MIMIR_LAKE ?? 'mimir-lake'),
      catalogName: args.value('catalog-name') ?? (process.env.MIMIR_CATALOG_NAME || undefined),
      catalog: catalogOption(args.value('catalog') ?? (process.env.MIMIR_CATALOG || undefined)),
      warehouse: args.value('warehouse') ?? (process.env.MIMIR_WAREHOUSE || undefined),
      server: asks ? (explicitServer ?? (explicitLake === undefined && process.env.MIMIR_SERVER ? process.env.MIMIR_SERVER : undefined)) : undefined,
      json: asJson,
      out,
      env: process.env,
    };
    return (await spec.run(args, ctx)) ?? 0;
  } catch (e) {
    if (e instanceof OutputClosed) return 0;
    if (e instanceof UsageError) {
      const p = e.commandPath || path;
      out.err(`mimir${p ? ` ${p}` : ''}: ${e.message}`);
      out.err(`Run 'mimir${p ? ` ${p}` : ''} --help' for usage.`);
      return 2;
    }
    const err = e as Error;
    // a disk-full failure names its file and operation (loaded here only: startup stays light)
    const { describeFailure } = await import('../lake/disk-full.ts');
    out.err(`mimir${path ? ` ${path}` : ''}: ${describeFailure(e)}`);
    if (process.env.MIMIR_DEBUG === '1' && err?.stack) out.err(err.stack);
    return 1;
  }
}

// Run as a script itself (`node dist/cli/main.js`, `tsx src/cli/main.ts`);
// bin/mimir.js imports it (or the bundle made of it) and calls main itself.
const isEntry = (() => {
  const argv1 = process.argv[1];
  return argv1 !== undefined && nodePath.resolve(argv1) === fileURLToPath(import.meta.url);
})();

if (isEntry) {
  // no top-level await: the CLI bundle (CommonJS) is made of this module too
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
