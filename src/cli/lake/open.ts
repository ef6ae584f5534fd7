// What every command's lake open shares (called by cli/lake-location.ts):
// the lake's notes — a lake moved or copied from elsewhere, a lake this user
// cannot write — one line each on stderr, and the refusal to create a lake in
// a folder that holds files but no lake, naming the lake inside it or around
// it that was likely meant. Nothing here writes.
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Context } from '../command.ts';
import type { Lake } from '../../lake/lake.ts';
import { CATALOG_FILE } from '../../lake/catalog/catalog.ts';
import { enclosingLake, scanFolders } from '../../lake/catalog/folders.ts';

/** Print the lake's notes on stderr, one line each. */
export function noteLake(ctx: Context, lake: Lake): void {
  for (const n of lake.notes()) ctx.out.err(`note: ${n}`);
}

/**
 * The lakes inside `dir` (a folder that is not a lake), else the lake around
 * it, as a clause naming them and what to give --lake instead; '' when there
 * is none.
 */
export function nestedLakesHint(dir: string): string {
  const lakes = scanFolders(dir, 1).lakes;
  if (lakes.length === 0) {
    const around = enclosingLake(dir);
    return around === undefined ? '' : `; it lies inside the lake at ${around} — give --lake ${around} to use it`;
  }
  const shown = lakes.slice(0, 3).join(', ') + (lakes.length > 3 ? ', …' : '');
  return `; it holds ${lakes.length === 1 ? 'the lake' : `${lakes.length} lakes`} ${shown} — give --lake ${lakes[0]} to use ${lakes.length === 1 ? 'it' : 'one'}`;
}

/**
 * A folder that exists, holds files and no catalog is not a lake: never make
 * one there. Its hint names the lake a user most likely meant: one inside it
 * (`P/r0` when --lake P), or the lake it lies in (`P` when --lake P/mimir);
 * a recover is suggested (by Lake.open) only for table folders of its own.
 */
export function refuseForeignFolder(dir: string): void {
  if (!existsSync(dir) || existsSync(nodePath.join(dir, CATALOG_FILE))) return;
  if (!statSync(dir).isDirectory()) throw new Error(`--lake ${dir} is a file, not a folder — nothing created`);
  const entries = readdirSync(dir);
  if (entries.length === 0) return;
  const around = enclosingLake(dir);
  const scan = scanFolders(dir, 1);
  if (around !== undefined && scan.tables.length > 0) {
    throw new Error(
      `${dir} is not a lake (no ${CATALOG_FILE}): it lies inside the lake at ${around}, whose tables its folders hold; ` +
        `give --lake ${around} — nothing created`,
    );
  }
  // table folders without a catalog: Lake.open refuses them, naming the recovery
  if (scan.tables.length > 0) return;
  const shown = entries.sort().slice(0, 3).join(', ') + (entries.length > 3 ? ', …' : '');
  const hint = nestedLakesHint(dir);
  throw new Error(
    `${dir} is not a lake (no ${CATALOG_FILE}) and not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}: ${shown})` +
      (hint !== '' ? `${hint} — nothing created` : `; give --lake a new or empty folder, or the folder of an existing lake — nothing created`),
  );
}
