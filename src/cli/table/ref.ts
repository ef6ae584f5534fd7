// Naming a table on the command line: `lake:<namespace>.<table>` (a table of
// the lake at --lake) or the path of a `*.metadata.json` (read-only, with
// --location-root to map its recorded location to a local folder). Also the
// options that pick a snapshot (--snapshot, --ref, --as-of, --generation),
// shared by the read commands.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import { UsageError, type Args, type OptionSpec } from '../args.ts';
import type { Context } from '../command.ts';
import { openMetadataFile, type Lake } from '../../lake/lake.ts';
import { catalogPresent, lakeLocation, openLakeAt } from '../lake-location.ts';
import { identToString, parseIdent, type TableIdent } from '../../lake/catalog/catalog.ts';
import type { Table, SnapshotSelector } from '../../lake/table/table.ts';

export const LAKE_PREFIX = 'lake:';

export const TABLE_ARG = {
  name: 'TABLE',
  required: true,
  help: 'lake:<namespace>.<table>, or the path of a *.metadata.json',
};

export const LOCATION_ROOT_OPTION: OptionSpec = {
  name: 'location-root',
  kind: 'value',
  arg: 'DIR',
  help: "for a metadata file: local folder that holds the table's recorded location",
};

export const GENERATION_OPTION: OptionSpec = {
  name: 'generation',
  kind: 'value',
  arg: 'G',
  help: 'for a lake: table: read it as the lake held it at generation G',
};

export const SNAPSHOT_OPTIONS: OptionSpec[] = [
  { name: 'snapshot', kind: 'value', arg: 'ID', help: 'read this snapshot id' },
  { name: 'ref', kind: 'value', arg: 'NAME', help: 'read the snapshot of this branch or tag' },
  { name: 'as-of', kind: 'value', arg: 'TIME', help: 'read the snapshot current at TIME (ISO 8601, UTC unless an offset is given, or epoch ms)' },
  GENERATION_OPTION,
];

export type TableRef = { kind: 'lake'; ident: TableIdent; text: string } | { kind: 'file'; path: string; text: string };

/** Parse a TABLE argument (no I/O beyond checking whether a path exists). */
export function parseTableRef(text: string, commandPath: string): TableRef {
  if (text.startsWith(LAKE_PREFIX)) {
    const name = text.slice(LAKE_PREFIX.length);
    let ident: TableIdent;
    try {
      ident = parseIdent(name);
    } catch {
      throw new UsageError(`table "${text}": expected lake:<namespace>.<table>`, commandPath);
    }
    if (ident.namespace.length === 0) throw new UsageError(`table "${text}": expected lake:<namespace>.<table>, found no namespace`, commandPath);
    return { kind: 'lake', ident, text };
  }
  if (!existsSync(text) && /^[A-Za-z_][\w-]*(\.[\w-]+)+$/.test(text) && !text.endsWith('.json')) {
    throw new UsageError(`table "${text}": no such file; a table of the lake is named lake:${text}`, commandPath);
  }
  return { kind: 'file', path: text, text };
}

/** Label used in messages and reports: `lake:ns.t` or the metadata path. */
export const refLabel = (r: TableRef): string => (r.kind === 'lake' ? `${LAKE_PREFIX}${identToString(r.ident)}` : r.path);

/** An open table and what to close when done. */
export interface OpenTable {
  table: Table;
  label: string;
  ref: TableRef;
  lake?: Lake;
  close(): void;
}

/**
 * Open the lake for a read (it must exist; `readOnly`: nothing is written to
 * its catalog) or a write (created when absent).
 */
export function openLake(ctx: Context, opts: { create: boolean; readOnly?: boolean | 'auto' }): Lake {
  if (!opts.create && !catalogPresent(lakeLocation(ctx))) {
    throw new Error(`no lake at ${ctx.lakeDir} (no catalog.db there); give --lake DIR (or a catalog file) or set MIMIR_LAKE`);
  }
  return openLakeAt(ctx, opts);
}

/** A metadata file path, or a helpful error when a table folder was given instead. */
function checkMetadataFile(path: string): void {
  if (!existsSync(path)) throw new Error(`${path}: no such file (expected lake:<namespace>.<table> or the path of a *.metadata.json)`);
  if (statSync(path).isDirectory()) {
    const metaDir = nodePath.join(path, 'metadata');
    let hint = '';
    if (existsSync(metaDir)) {
      const hintFile = nodePath.join(metaDir, 'version-hint.text');
      const files = readdirSync(metaDir).filter((f) => f.endsWith('.metadata.json')).sort();
      let pick = files[files.length - 1];
      if (existsSync(hintFile)) {
        const v = readFileSync(hintFile, 'utf8').trim();
        if (files.includes(`v${v}.metadata.json`)) pick = `v${v}.metadata.json`;
      }
      if (pick) hint = `, e.g. ${nodePath.join(metaDir, pick)}`;
    }
    throw new Error(`${path} is a folder: name a table by its *.metadata.json file${hint}`);
  }
}

/**
 * Open the table a TABLE argument names, as of now or of a lake generation
 * (--generation). `args` supplies --location-root and --generation.
 */
export async function openTable(ctx: Context, args: Args, opts: { writable?: boolean } = {}): Promise<OpenTable> {
  const ref = parseTableRef(args.positionals[0]!, args.commandPath);
  const locationRoot = args.value('location-root');
  const generation = args.bigint('generation');
  if (ref.kind === 'lake') {
    if (locationRoot !== undefined) throw new UsageError('--location-root applies to a metadata file, not to a lake: table', args.commandPath);
    const lake = openLake(ctx, { create: false, readOnly: opts.writable !== true });
    try {
      const table = await lake.loadTable(ref.ident, generation === undefined ? {} : { generation });
      return { table, label: refLabel(ref), ref, lake, close: () => lake.close() };
    } catch (e) {
      lake.close();
      throw e;
    }
  }
  if (opts.writable) throw new UsageError(`${ref.path} is a metadata file, read-only; writes go to a lake: table`, args.commandPath);
  if (generation !== undefined) throw new UsageError('--generation applies to a lake: table, not to a metadata file', args.commandPath);
  checkMetadataFile(ref.path);
  if (locationRoot !== undefined && !existsSync(locationRoot)) throw new Error(`--location-root ${locationRoot}: no such folder`);
  const table = await openMetadataFile(ref.path, locationRoot === undefined ? {} : { locationRoot });
  return { table, label: refLabel(ref), ref, close: () => undefined };
}

/** Parse a TIME: epoch milliseconds, or ISO 8601 (a time without an offset is UTC). */
export function parseTime(text: string, option: string, commandPath: string): bigint {
  const s = text.trim();
  if (/^-?\d+$/.test(s)) return BigInt(s);
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s) ? `${s}Z` : s;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(s) ? Date.parse(iso) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--${option} "${text}": expected an ISO 8601 time (2024-05-01T12:00:00Z) or epoch milliseconds`, commandPath);
  return BigInt(ms);
}

/** The snapshot selector of --snapshot / --ref / --as-of (at most one; --generation is handled on open). */
export function snapshotSelector(args: Args): SnapshotSelector {
  const given = ['snapshot', 'ref', 'as-of', 'generation'].filter((n) => args.has(n));
  if (given.length > 1) throw new UsageError(`give at most one of ${given.map((n) => `--${n}`).join(', ')}`, args.commandPath);
  const sel: SnapshotSelector = {};
  const id = args.bigint('snapshot');
  if (id !== undefined) sel.snapshotId = id;
  const ref = args.value('ref');
  if (ref !== undefined) sel.ref = ref;
  const asOf = args.value('as-of');
  if (asOf !== undefined) sel.asOfMs = parseTime(asOf, 'as-of', args.commandPath);
  return sel;
}
