// What every command's lake open shares (called by cli/lake-location.ts):
// the lake's notes — a lake moved or copied from elsewhere, a lake this user
// cannot write — one line each on stderr, and the refusal to create a lake in
// a folder that holds files but no lake. Nothing here writes.
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Context } from '../command.ts';
import type { Lake } from '../../lake/lake.ts';
import { CATALOG_FILE } from '../../lake/catalog/sql-catalog.ts';
import { findTableFolders } from '../../lake/catalog/folders.ts';

/** Print the lake's notes on stderr, one line each. */
export function noteLake(ctx: Context, lake: Lake): void {
  for (const n of lake.notes()) ctx.out.err(`note: ${n}`);
}

/** A folder that exists, holds files and no catalog is not a lake: never make one there. */
export function refuseForeignFolder(dir: string): void {
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
