// Which catalog a location names, and opening it: `postgresql://…` (or
// `postgres://…`) is a PostgreSQL catalog (pg/pg-catalog.ts), anything else
// the path of a SQLite catalog file (sql-catalog.ts, the embedded default).
// The one place outside the implementations that names them: the rest of the
// code holds a `Catalog` (catalog.ts).
//
// Nothing is written here; what an open may write is each implementation's
// (its DDL runs inside one transaction, so a crash leaves all or none).
import { mkdirSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Catalog } from './catalog.ts';
import { PgCatalog } from './pg/pg-catalog.ts';
import { SqlCatalog, type OpenOptions } from './sql-catalog.ts';

export type { OpenOptions } from './sql-catalog.ts';

/** Whether `location` names a PostgreSQL catalog (a `postgresql://` or `postgres://` URI). */
export function isServerCatalog(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** Open the catalog at `location`: a PostgreSQL URI or a SQLite file path (its folder made when creating). */
export function openCatalog(location: string, opts: OpenOptions = {}): Catalog {
  if (isServerCatalog(location)) return PgCatalog.open(location, opts);
  const file = nodePath.resolve(location);
  if (opts.create !== false && !opts.readOnly) mkdirSync(nodePath.dirname(file), { recursive: true });
  return SqlCatalog.openFile(file, opts);
}
