// Where the lake of a command is: --lake names a lake folder (its catalog is
// `catalog.db` inside) or a SQLite catalog file itself (a PyIceberg or Java
// catalog such as `pyiceberg_catalog.db`; the lake root is then its folder).
// The catalog name comes from --catalog-name, else $MIMIR_CATALOG_NAME, else
// the lake's own setting (mimir.toml, read by Lake.open), else `mimir`.
import { existsSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Context } from './command.ts';
import { Lake } from '../lake/lake.ts';
import { CATALOG_FILE } from '../lake/catalog/sql-catalog.ts';

export interface LakeLocation {
  root: string;
  catalogFile: string;
  /** --lake named the catalog file itself. */
  namedFile: boolean;
}

export function lakeLocation(ctx: Context): LakeLocation {
  const p = ctx.lakeDir;
  if (existsSync(p) && statSync(p).isFile()) return { root: nodePath.dirname(p), catalogFile: p, namedFile: true };
  return { root: p, catalogFile: nodePath.join(p, CATALOG_FILE), namedFile: false };
}

/** Open the lake of ctx; `readOnly` opens its catalog without writing anything to it. */
export function openLakeAt(ctx: Context, opts: { create: boolean; readOnly?: boolean }): Lake {
  const at = lakeLocation(ctx);
  return Lake.open(at.root, {
    create: opts.create,
    readOnly: opts.readOnly === true,
    ...(at.namedFile ? { catalogFile: at.catalogFile } : {}),
    ...(ctx.catalogName ? { catalogName: ctx.catalogName } : {}),
  });
}
