// What a command is: its arguments, help text and a `run` that gets parsed
// arguments and a context (lake folder, --json, output streams). Commands are
// registered in commands.ts and loaded only when used, so `mimir --help`
// and each command start without loading what the others need.
import type { Args, OptionSpec, PositionalSpec } from './args.ts';
import type { Output } from './output.ts';

export interface Context {
  /** Lake folder: --lake, else $MIMIR_LAKE, else ./mimir-lake (absolute). */
  lakeDir: string;
  /** --catalog-name, else $MIMIR_CATALOG_NAME (undefined: the lake's setting, else 'mimir'). */
  catalogName?: string;
  /**
   * --catalog, else $MIMIR_CATALOG: where the lake's catalog is when not its
   * catalog.db — a `postgresql://` URI or a SQLite file (undefined: the
   * lake's mimir.toml `[catalog] uri`, else catalog.db). Files stay in lakeDir.
   */
  catalog?: string;
  /**
   * --warehouse, else $MIMIR_WAREHOUSE: an `s3://bucket/prefix` the lake's
   * tables live under instead of lakeDir (taken when the lake is made and
   * recorded in its catalog; undefined: the recorded one, else lakeDir).
   */
  warehouse?: string;
  /**
   * A running `mimir serve` the questions go to: --server, else $MIMIR_SERVER
   * unless --lake was given; undefined = read the lake directly.
   */
  server?: string;
  /** --json: machine-readable output on stdout. */
  json: boolean;
  out: Output;
  env: NodeJS.ProcessEnv;
}

export interface CommandSpec {
  /** Arguments after the command words, e.g. `TABLE [options]`. */
  usage: string;
  /** Paragraphs printed by --help below the summary. */
  description?: string;
  positionals: PositionalSpec[];
  options: OptionSpec[];
  examples?: string[];
  /** false: never page this command's stdout (a server's, long-lived output). */
  pager?: false;
  /** Returns the exit code (0 when nothing is returned). Throws on failure (exit 1). */
  run(args: Args, ctx: Context): Promise<number | void>;
}

/** The question commands' option (find, def, refs, callers, callees, history, diff). */
export const SERVER_OPTION: OptionSpec = {
  name: 'server',
  kind: 'value',
  arg: 'URL',
  help: 'ask a running `mimir serve` instead of reading the lake (default $MIMIR_SERVER unless --lake is given)',
};

/** Options every command accepts. */
export const GLOBAL_OPTIONS: OptionSpec[] = [
  { name: 'lake', kind: 'value', arg: 'DIR', help: 'lake folder, or a SQLite catalog file (default $MIMIR_LAKE, else ./mimir-lake)' },
  { name: 'catalog', kind: 'value', arg: 'URI', help: "the lake's catalog: postgresql://… or a SQLite file; the files stay in --lake (default $MIMIR_CATALOG, the lake's mimir.toml, else catalog.db in the lake)" },
  { name: 'warehouse', kind: 'value', arg: 'URI', help: "where a new lake's tables live: s3://bucket/prefix (default $MIMIR_WAREHOUSE, else the lake folder; recorded in the catalog)" },
  { name: 'catalog-name', kind: 'value', arg: 'NAME', help: "catalog name in the catalog file (default $MIMIR_CATALOG_NAME, the lake's mimir.toml, else mimir)" },
  { name: 'json', kind: 'flag', help: 'machine-readable JSON on stdout' },
  { name: 'color', kind: 'value', arg: 'WHEN', help: 'colour places and kinds: auto (a terminal without $NO_COLOR), always, never' },
  { name: 'no-pager', kind: 'flag', help: 'never page long answers (default on a terminal: $MIMIR_PAGER, else $PAGER, else less -FRX)' },
  { name: 'help', short: 'h', kind: 'flag', help: 'show this help' },
];
