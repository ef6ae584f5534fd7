// Opening the lake at --lake for a command, in one place: a read opens
// read-only when this process cannot write the lake (queries, `table scan`,
// `ring status`, `log generations` work on a read-only lake or file system); a
// write that may create the lake refuses a non-empty folder that is not one;
// both print the lake's notes (a moved lake, a read-only open) as one line
// each on stderr. Nothing here writes beyond what Lake.open does.
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Context } from '../command.ts';
import { Lake } from '../../lake/lake.ts';
import { CATALOG_FILE } from '../../lake/catalog/sql-catalog.ts';
import { findTableFolders } from '../../lake/catalog/folders.ts';

/** Print the lake's notes on stderr, one line each. */
export function noteLake(ctx: Context, lake: Lake): void {
  for (const n of lake.notes()) ctx.out.err(`note: ${n}`);
}

function requireCatalog(ctx: Context): void {
  if (!existsSync(nodePath.join(ctx.lakeDir, CATALOG_FILE))) {
    throw new Error(`no lake at ${ctx.lakeDir} (no ${CATALOG_FILE} there); give --lake DIR or set MIMIR_LAKE, or create one with 'mimir init'`);
  }
}

/** The existing lake, for reading: read-only when this process cannot write it. */
export function openLakeToRead(ctx: Context): Lake {
  requireCatalog(ctx);
  const lake = Lake.open(ctx.lakeDir, { create: false, readOnly: 'auto' });
  noteLake(ctx, lake);
  return lake;
}

/**
 * The lake, for writing. `create`: a missing lake is created — in a new or
 * empty folder only (a lost catalog's table folders are refused by Lake.open).
 */
export function openLakeToWrite(ctx: Context, opts: { create: boolean }): Lake {
  if (opts.create) refuseForeignFolder(ctx.lakeDir);
  else requireCatalog(ctx);
  const lake = Lake.open(ctx.lakeDir, { create: opts.create });
  noteLake(ctx, lake);
  return lake;
}

/** A folder that exists, holds files and no catalog is not a lake: never make one there. */
function refuseForeignFolder(dir: string): void {
  if (!existsSync(dir) || existsSync(nodePath.join(dir, CATALOG_FILE))) return;
  if (!statSync(dir).isDirectory()) throw new Error(`--lake ${dir} is a file, not a folder — nothing created`);
  const entries = readdirSync(dir);
  if (entries.length === 0) return;
  // table folders without a catalog: Lake.open refuses them, naming the recovery
  if (findTableFolders(dir, 1).length > 0) return;
  const shown = entries.sort().slice(0, 3).join(', ') + (entries.length > 3 ? ', …' : '');
  throw new Error(
    `${dir} is not a lake (no ${CATALOG_FILE}) and not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}: ${shown}); ` +
      `give --lake a new or empty folder, or the folder of an existing lake — nothing created`,
  );
}
