// `mimir log generations [--limit N]`: the lake's generations (catalog
// commits), newest first: number, time (ISO 8601 UTC), note and the tables
// each one touched (a dropped table is marked); a run's generation names its
// repo, commit and run id (the note's parsed form in --json). Works on any lake made by
// Mimir, with or without the event log. Opens the catalog read-only; its one
// write: when another engine moved a table's pointer since the log last saw
// it, that state is recorded first as a generation marked foreign (so
// --generation reaches it). A foreign catalog (no Mimir tables) or one that
// cannot be written is never written: pending moves are only reported.
// A generation whose tables no longer all have its metadata file (history
// expiry or gc removed it: src/log/history.ts) is marked `(expired)`, `kept:
// false` in --json: reading the tables as of it fails; the catalog keeps its
// record. One existence check per distinct metadata file shown.
import type { CommandSpec, Context } from '../command.ts';
import type { Args } from '../args.ts';
import { formatTable, isoTime } from '../output.ts';
import { identToString } from '../../lake/catalog/catalog.ts';
import { openExistingLake } from './common.ts';
import type { GenerationEntry } from '../../lake/catalog/catalog.ts';
import type { Lake } from '../../lake/lake.ts';
import { parseRunNote } from '../../log/schema.ts';

const DEFAULT_LIMIT = 20;

export const command: CommandSpec = {
  usage: '[--limit N] [options]',
  positionals: [],
  options: [{ name: 'limit', kind: 'value', arg: 'N', help: `show the newest N generations (default ${DEFAULT_LIMIT}; 0 = all)` }],
  examples: ['mimir log generations', 'mimir log generations --limit 5 --json'],
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const n = args.count('limit') ?? DEFAULT_LIMIT;
  const lake = openExistingLake(ctx, { readOnly: true });
  try {
    const pending = lake.catalog.foreignMoves();
    if (pending.length > 0) {
      try {
        const w = openExistingLake(ctx);
        try {
          w.catalog.recordForeignCommits();
        } finally {
          w.close();
        }
      } catch (e) {
        const moved = pending.map((m) => `${identToString(m.ident)} (now ${m.current ?? 'dropped'})`).join(', ');
        ctx.out.err(`note: tables moved outside Mimir were not recorded as a generation (${(e as Error).message}): ${moved}`);
      }
    }
    const gens = lake.catalog.generations({ limit: n === 0 ? Number.MAX_SAFE_INTEGER : n });
    const kept = await keptGenerations(lake, gens);
    const rows = gens.map((g) => ({
      generation: g.generation,
      timeMs: g.timeMs,
      time: isoTime(g.timeMs),
      note: g.note,
      /** The run that landed in this generation (repo, commit, run id), when it was one. */
      run: parseRunNote(g.note) ?? null,
      foreign: g.foreign,
      /** Every table still has this generation's metadata file: it can be read from the tables. */
      kept: kept.get(g.generation) ?? false,
      tables: g.tables.map((t) => ({ table: identToString(t.ident), dropped: t.metadataLocation === null })),
    }));
    if (ctx.json) {
      await ctx.out.json(rows);
      return;
    }
    if (rows.length === 0) {
      await ctx.out.line(`lake ${lake.root}: no generations recorded`);
      return;
    }
    await ctx.out.line(
      formatTable(
        ['generation', 'time', 'note', 'tables'],
        rows.map((r) => [
          `${r.generation}${r.foreign ? ' (foreign)' : ''}${r.kept ? '' : ' (expired)'}`,
          r.time,
          r.note ?? '-',
          r.tables.map((t) => (t.dropped ? `${t.table} (dropped)` : t.table)).join(', ') || '-',
        ]),
      ),
    );
  } finally {
    lake.close();
  }
}

/**
 * For each generation listed (newest first, consecutive): whether every
 * table's metadata file at it still exists. The pointers are rebuilt from the
 * oldest one listed forward, one generation's changes at a time.
 */
async function keptGenerations(lake: Lake, gens: GenerationEntry[]): Promise<Map<bigint, boolean>> {
  const out = new Map<bigint, boolean>();
  if (gens.length === 0) return out;
  const exists = new Map<string, Promise<boolean>>();
  const present = (loc: string): Promise<boolean> => {
    let p = exists.get(loc);
    if (!p) exists.set(loc, (p = lake.io.exists(loc).catch(() => false)));
    return p;
  };
  const asc = [...gens].reverse();
  const pointers = lake.catalog.pointersAt(asc[0]!.generation);
  for (const [i, g] of asc.entries()) {
    if (i > 0) {
      for (const t of g.tables) {
        if (t.metadataLocation === null) pointers.delete(identToString(t.ident));
        else pointers.set(identToString(t.ident), t.metadataLocation);
      }
    }
    let all = true;
    for (const loc of pointers.values()) if (!(await present(loc))) all = false;
    out.set(g.generation, all);
  }
  return out;
}
