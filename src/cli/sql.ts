// `mimir sql 'SELECT …'`: SQL over the lake in process with DuckDB. Every table
// of the lake is a view (`code_node_events`, also `mimir.code_node_events`)
// built from its live files at one lake generation — the current one, or
// --as-of — with its position and equality deletes applied (src/lake/sql).
// Foreign tables join them with --table NAME=path/to/metadata.json. Output: an
// aligned table (numbers right-aligned), --json (JSON Lines, 64-bit integers
// exact), --csv, or --out FILE.parquet. Read-only: DuckDB runs in memory, may
// read only the views' files and runs one SELECT; the lake is never written.
import { existsSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandSpec, Context } from './command.ts';
import { UsageError, type Args } from './args.ts';
import { plural } from './output.ts';
import { AS_OF, parseAsOf } from './query/common.ts';
import { openLake } from './table/ref.ts';
import { lakeLocation } from './lake-location.ts';
import { openMetadataFile, type Lake } from '../lake/lake.ts';
import { SqlRefusedError, SqlSession, jsValue, type SqlColumn } from '../lake/sql/session.ts';
import { addLakeViews } from '../lake/sql/lake-views.ts';
import { stringifyJson } from '../lake/spec/json.ts';

export const command: CommandSpec = {
  usage: "'SELECT …' [options]",
  description: [
    'Every table of the lake is a view named like the table (code_node_events, code_nodes, ingest_runs, …;',
    'also namespace-qualified: mimir.code_node_events), built from the table\'s live data files at one lake',
    'generation with its deletes applied. `mimir table list` shows the tables, `mimir table describe` their columns.',
    'One SELECT statement runs, in an in-memory DuckDB that may read only those files: the lake is never',
    'written (COPY, ATTACH, INSTALL, LOAD, SET, CREATE … are refused; write a result with --out).',
  ].join('\n'),
  positionals: [{ name: 'SQL', required: true, help: 'one SELECT statement' }],
  options: [
    AS_OF,
    { name: 'table', kind: 'list', arg: 'NAME=META', help: 'also a view NAME over a foreign table, by its *.metadata.json (read-only)' },
    { name: 'location-root', kind: 'list', arg: 'NAME=DIR', help: "for --table NAME: local folder that holds the table's recorded location" },
    { name: 'csv', kind: 'flag', help: 'CSV with a header row on stdout' },
    { name: 'out', kind: 'value', arg: 'FILE.parquet', help: 'write the result to a new Parquet file (outside the lake)' },
    { name: 'stats', kind: 'flag', help: 'print the one-line report on stderr even when it is not a terminal' },
  ],
  examples: [
    "mimir sql 'select krate, count(*) as items from code_nodes group by krate order by items desc limit 10'",
    "mimir sql --as-of 12 'select count(*) from code_edge_events' --json",
    "mimir sql --table bunnies=path/to/metadata/v5.metadata.json 'select * from bunnies' --csv",
  ],
  run,
};

/** `NAME=VALUE` pairs of a list option. */
function pairs(args: Args, option: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of args.list(option)) {
    const eq = v.indexOf('=');
    const name = eq > 0 ? v.slice(0, eq) : '';
    if (!/^[A-Za-z_][\w]*$/.test(name) || eq === v.length - 1) throw new UsageError(`--${option} "${v}": expected NAME=${option === 'table' ? 'path/to/metadata.json' : 'DIR'} (NAME a plain SQL name)`, args.commandPath);
    if (out.has(name)) throw new UsageError(`--${option} ${name} is given twice`, args.commandPath);
    out.set(name, v.slice(eq + 1));
  }
  return out;
}

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/;

/** A value as a cell of text: NULL for null, JSON for lists, structs and maps. */
function cell(v: unknown, nullText: string): string {
  if (v === null || v === undefined) return nullText;
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return stringifyJson(v);
  return String(v);
}

const csvField = (s: string): string => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** Rows as aligned columns: numbers right-aligned, the last column unpadded when left-aligned. */
function alignedTable(columns: SqlColumn[], rows: string[][]): string {
  const right = columns.map((c) => NUMERIC.test(c.type));
  const all = [columns.map((c) => c.name), ...rows];
  const widths = columns.map((_c, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  const pad = (s: string, i: number): string => {
    const fill = ' '.repeat(widths[i]! - [...s].length);
    return right[i] ? fill + s : i === columns.length - 1 ? s : s + fill;
  };
  return all.map((r) => r.map((s, i) => pad(s.replace(/\r?\n/g, '\\n'), i)).join('  ').trimEnd()).join('\n');
}

async function run(args: Args, ctx: Context): Promise<void> {
  const started = performance.now();
  const sql = args.positionals[0]!;
  const formats = ['json', 'csv', 'out'].filter((f) => (f === 'json' ? ctx.json : args.has(f)));
  if (formats.length > 1) throw new UsageError(`give at most one of ${formats.map((f) => `--${f}`).join(', ')}`, args.commandPath);
  const foreign = pairs(args, 'table');
  const roots = pairs(args, 'location-root');
  for (const name of roots.keys()) if (!foreign.has(name)) throw new UsageError(`--location-root ${name}=…: no --table ${name}=… names that table`, args.commandPath);
  const asOf = parseAsOf(args);
  if (asOf && 'rev' in asOf) throw new UsageError(`--as-of ${asOf.rev}: mimir sql takes a lake generation (a number) or a time (ISO 8601)`, args.commandPath);
  let outFile = args.value('out');
  if (outFile !== undefined) {
    outFile = nodePath.resolve(outFile);
    if (existsSync(outFile)) throw new Error(`--out ${outFile}: the file exists; nothing written (give a new file)`);
    const rel = nodePath.relative(ctx.lakeDir, outFile);
    if (!rel.startsWith('..') && !nodePath.isAbsolute(rel)) throw new Error(`--out ${outFile}: inside the lake ${ctx.lakeDir}, which SQL never writes; nothing written`);
  }

  // the lake is optional when foreign tables are named and there is none
  const haveLake = foreign.size === 0 || existsSync(lakeLocation(ctx).catalogFile);
  if (!haveLake && asOf) throw new UsageError(`--as-of: no lake at ${ctx.lakeDir} to read as of a generation`, args.commandPath);
  const lake: Lake | undefined = haveLake ? openLake(ctx, { create: false, readOnly: true }) : undefined;
  const session = await SqlSession.open();
  try {
    let generation: bigint | undefined;
    let tables = 0;
    if (lake) {
      const now = lake.catalog.pointerGeneration();
      if (asOf) {
        generation = 'generation' in asOf ? asOf.generation : lake.catalog.generationAt(asOf.time.getTime());
        if (generation > now) throw new Error(`--as-of ${generation}: the lake is at generation ${now}; nothing run`);
      }
      const made = await addLakeViews(session, lake, generation ?? now);
      generation = made.generation;
      tables += made.views.length;
    }
    for (const [name, meta] of foreign) {
      if (!existsSync(meta)) throw new Error(`--table ${name}=${meta}: no such file (expected a *.metadata.json)`);
      const root = roots.get(name);
      if (root !== undefined && !existsSync(root)) throw new Error(`--location-root ${name}=${root}: no such folder`);
      const table = await openMetadataFile(meta, root === undefined ? {} : { locationRoot: root });
      await session.addTable([{ name }], table);
      tables++;
    }

    let rows = 0n;
    if (outFile !== undefined) {
      rows = await session.copyTo(sql, outFile);
    } else {
      const { columns, chunks } = await session.query(sql);
      if (ctx.json) {
        for await (const chunk of chunks) {
          let buf = '';
          for (const r of chunk) {
            const o: Record<string, unknown> = {};
            columns.forEach((c, i) => (o[c.name] = jsValue(r[i]!)));
            buf += `${stringifyJson(o)}\n`;
          }
          rows += BigInt(chunk.length);
          await ctx.out.write(buf);
        }
      } else if (args.flag('csv')) {
        await ctx.out.line(columns.map((c) => csvField(c.name)).join(','));
        for await (const chunk of chunks) {
          await ctx.out.write(chunk.map((r) => `${r.map((v) => csvField(cell(jsValue(v), ''))).join(',')}\n`).join(''));
          rows += BigInt(chunk.length);
        }
      } else {
        // aligned columns need every row's width: the result is held in memory
        const cells: string[][] = [];
        for await (const chunk of chunks) for (const r of chunk) cells.push(r.map((v) => cell(jsValue(v), 'NULL')));
        rows = BigInt(cells.length);
        await ctx.out.line(alignedTable(columns, cells));
      }
    }
    if (ctx.out.stderrIsTTY || args.flag('stats')) {
      const ms = Math.round(performance.now() - started);
      const at = generation === undefined ? '' : ` at lake generation ${generation}`;
      if (ctx.json) ctx.out.err(stringifyJson({ rows, generation: generation ?? null, tables, ms, ...(outFile ? { out: outFile } : {}) }));
      else ctx.out.err(`sql: ${plural(rows, 'row')}${outFile ? ` written to ${outFile}` : ''}; ${plural(tables, 'table')}${at}; ${ms} ms`);
    }
  } catch (e) {
    if (e instanceof SqlRefusedError) throw new UsageError(e.message, args.commandPath);
    throw e;
  } finally {
    session.close();
    lake?.close();
  }
}
