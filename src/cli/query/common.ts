// Shared pieces of the query commands (`mimir find`, `def`, `refs`,
// `callers`, `callees`, `history`, `diff`): the `--as-of` option (a generation
// number or an ISO 8601 time), the one-line forms of nodes and edges, and the
// run wrapper that opens the existing lake's log, prints JSON or lines, and
// ends with a one-line summary on stderr. Read-only.
import { UsageError, type Args, type OptionSpec } from '../args.ts';
import type { Context } from '../command.ts';
import type { EventLog } from '../../log/event-log.ts';
import type { AsOf, NodeHit } from '../../query/index.ts';
import { openLog } from '../log/common.ts';

export const AS_OF: OptionSpec = { name: 'as-of', kind: 'value', arg: 'GEN|TIME', help: 'answer as of a lake generation (a number) or a time (ISO 8601, e.g. 2024-05-01T12:00:00Z)' };

/** `--as-of`: digits = a generation; otherwise an ISO 8601 date or time. */
export function parseAsOf(args: Args): AsOf | undefined {
  const v = args.value('as-of');
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v)) return { generation: BigInt(v) };
  const ms = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--as-of: expected a generation number or an ISO 8601 time such as 2024-05-01T12:00:00Z, found "${v}"`, args.commandPath);
  return { time: new Date(ms) };
}

/** A required generation option (`--from 3`). */
export function generationOption(args: Args, name: string): bigint {
  const v = args.value(name);
  if (v === undefined) throw new UsageError(`missing --${name} GEN`, args.commandPath);
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name}: expected a generation number, found "${v}"`, args.commandPath);
  return BigInt(v);
}

/** `file:line`, `file`, or `-`. */
export function place(file: string | null, line: number | null): string {
  if (file === null) return '-';
  return line === null ? file : `${file}:${line}`;
}

/** `repo krate qpath  file:line`. */
export function nodeLine(n: NodeHit): string {
  return `${n.repo} ${n.krate} ${n.qpath ?? n.id}  ${place(n.file, n.line)}`;
}

/** Open the log, run the question, print JSON or the lines, then the summary on stderr. */
export async function answer<T>(ctx: Context, ask: (log: EventLog) => Promise<T>, lines: (r: T) => string[], summary: (r: T) => string): Promise<number> {
  const open = await openLog(ctx, { write: false });
  try {
    const result = await ask(open.log);
    if (ctx.json) {
      await ctx.out.json(result);
      return 0;
    }
    for (const l of lines(result)) await ctx.out.line(l);
    ctx.out.err(summary(result));
    return 0;
  } finally {
    open.close();
  }
}

/** ` at generation G` for the summary line. */
export const atGen = (g: bigint): string => `at generation ${g}`;
