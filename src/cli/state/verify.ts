// `mimir state verify [--generation G]`: compare the serving state tables with
// a fold of the event log, per table and (repo, krate): counts and digests —
// src/log/state/verify.ts. Exit 1 naming each difference. Read-only: it works
// on a lake this process cannot write, and writes nothing but its pins' leases.
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { formatVerifyReport, verifyState } from '../../log/state/verify.ts';
import { openLog, withProgress } from '../log/common.ts';

export const command: CommandSpec = {
  usage: '[--generation G] [options]',
  description: 'Exit 0 when every state table holds exactly the fold of the log; 1 (with each difference on stdout) otherwise.',
  positionals: [],
  options: [{ name: 'generation', kind: 'value', arg: 'G', help: 'compare as of this lake generation (default: now)' }],
  examples: ['mimir state verify', 'mimir state verify --generation 12 --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<number> {
  const gv = args.value('generation');
  if (gv !== undefined && !/^\d+$/.test(gv)) throw new UsageError(`--generation: expected a generation number, found "${gv}"`, args.commandPath);
  // it only reads: opened as the questions are (no table evolved, nothing written but a pin's lease; a lake this
  // process cannot write is verified the same, with no lease; on a full disk a snapshot)
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  try {
    const r = await withProgress(ctx.out, 'verifying the state tables', () => verifyState(open.log, gv === undefined ? {} : { generation: BigInt(gv) }));
    if (ctx.json) await ctx.out.json(r);
    else {
      const lines = formatVerifyReport(r);
      for (const l of lines.slice(0, -1)) await ctx.out.line(l);
      if (r.equal) await ctx.out.line(lines[lines.length - 1]!);
      else ctx.out.err(lines[lines.length - 1]!);
    }
    return r.equal ? 0 : 1;
  } finally {
    open.close();
  }
}
