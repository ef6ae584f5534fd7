// Where the lake of a command is: --lake names a lake folder (its catalog is
// `catalog.db` inside) or a SQLite catalog file itself (a PyIceberg or Java
// catalog such as `pyiceberg_catalog.db`; the lake root is then its folder).
// --catalog (else $MIMIR_CATALOG, else the lake's mimir.toml `[catalog] uri`)
// puts the catalog elsewhere: a `postgresql://` URI or a SQLite file; the
// table files stay in the lake folder.
// --warehouse (else $MIMIR_WAREHOUSE) puts a new lake's tables in object
// storage (`s3://bucket/prefix`); the catalog records it, so later commands
// need not repeat it (Lake.open).
// The catalog name comes from --catalog-name, else $MIMIR_CATALOG_NAME, else
// the lake's own setting (mimir.toml, read by Lake.open), else `mimir`.
import { existsSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Context } from './command.ts';
import { Lake } from '../lake/lake.ts';
import { CATALOG_FILE } from '../lake/catalog/catalog.ts';
import { isServerCatalog } from '../lake/catalog/open.ts';
import { readLakeSettings } from '../lake/settings.ts';
import { noteLake, refuseForeignFolder } from './lake/open.ts';

export interface LakeLocation {
  root: string;
  catalogFile: string;
  /** --lake named the catalog file itself. */
  namedFile: boolean;
  /** The catalog, when it is not catalogFile: --catalog / $MIMIR_CATALOG, else the lake's mimir.toml. */
  catalog?: string;
}

export function lakeLocation(ctx: Context): LakeLocation {
  const p = ctx.lakeDir;
  if (existsSync(p) && statSync(p).isFile()) return { root: nodePath.dirname(p), catalogFile: p, namedFile: true };
  const catalog = ctx.catalog ?? (existsSync(p) ? readLakeSettings(p).catalogUri : undefined);
  if (catalog !== undefined && !isServerCatalog(catalog)) return { root: p, catalogFile: nodePath.resolve(p, catalog), namedFile: false, catalog };
  return { root: p, catalogFile: nodePath.join(p, CATALOG_FILE), namedFile: false, ...(catalog !== undefined ? { catalog } : {}) };
}

/**
 * Whether the lake's catalog is there to open: its file exists, or it is on a
 * server (asked when opened: a database without the catalog is refused then).
 */
export function catalogPresent(at: LakeLocation): boolean {
  return (at.catalog !== undefined && isServerCatalog(at.catalog)) || existsSync(at.catalogFile);
}

/**
 * Open the lake of ctx; `readOnly` opens its catalog without writing anything
 * to it ('auto': only when this process cannot write the lake); `reader`
 * writes nothing at open and only leases after (Lake.open). `create` makes
 * a missing lake — in a new or empty folder only. The lake's notes (moved,
 * read-only for this user) go to stderr, one line each.
 */
export function openLakeAt(ctx: Context, opts: { create: boolean; readOnly?: boolean | 'auto'; reader?: boolean }): Lake {
  const at = lakeLocation(ctx);
  if (opts.create && !at.namedFile) refuseForeignFolder(at.root);
  const lake = Lake.open(at.root, {
    create: opts.create,
    readOnly: opts.readOnly ?? false,
    reader: opts.reader === true,
    ...(at.namedFile ? { catalogFile: at.catalogFile } : {}),
    ...(at.catalog !== undefined ? { catalog: at.catalog } : {}),
    ...(ctx.catalogName ? { catalogName: ctx.catalogName } : {}),
    ...(ctx.warehouse !== undefined ? { warehouse: ctx.warehouse } : {}),
  });
  noteLake(ctx, lake);
  return lake;
}
