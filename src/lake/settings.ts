// A lake's own settings: the optional file `<lake root>/mimir.toml`, read when
// the lake opens. It holds the catalog name to use in the catalog file (a SQL
// catalog file may hold several catalogs; PyIceberg's default is `default`,
// Java's is whatever the application names it) and the history kept:
//
//   [catalog]
//   name = "default"
//   uri = "postgresql://host/db"   # the catalog lives in PostgreSQL, not
//                                  # in catalog.db (the files stay here)
//
//   [history]
//   keep-snapshots = 32   # newest snapshots kept per table (0: no count bound);
//                         # a table's `mimir.history.keep-snapshots` wins
//
// An option given by the caller (the CLI's --catalog-name) wins over the
// file. Read-only: nothing here writes; a missing file means no settings.
import { existsSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { parse as parseToml } from 'smol-toml';

export const SETTINGS_FILE = 'mimir.toml';

export interface LakeSettings {
  /** `[catalog] name`: the catalog_name of the lake's tables in the catalog file. */
  catalogName?: string;
  /** `[catalog] uri`: where the catalog is when not `catalog.db` here (a `postgresql://` URI or a SQLite file). */
  catalogUri?: string;
  /** `[history] keep-snapshots`: the newest snapshots each table keeps (0: no count bound). */
  keepSnapshots?: number;
}

/** The settings of the lake at `root` (empty when it has no settings file). */
export function readLakeSettings(root: string): LakeSettings {
  const file = nodePath.join(root, SETTINGS_FILE);
  if (!existsSync(file)) return {};
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${file}: not valid TOML (${(e as Error).message}) — the lake was not opened`);
  }
  const out: LakeSettings = {};
  const catalog = doc.catalog;
  if (catalog !== undefined) {
    if (typeof catalog !== 'object' || catalog === null || Array.isArray(catalog)) throw new Error(`${file}: expected a [catalog] table, found ${typeof catalog}`);
    const name = (catalog as Record<string, unknown>).name;
    if (name !== undefined) {
      if (typeof name !== 'string' || name === '') throw new Error(`${file}: expected [catalog] name to be a non-empty string, found ${JSON.stringify(name)}`);
      out.catalogName = name;
    }
    const uri = (catalog as Record<string, unknown>).uri;
    if (uri !== undefined) {
      if (typeof uri !== 'string' || uri === '') throw new Error(`${file}: expected [catalog] uri to be a non-empty string, found ${JSON.stringify(uri)} — the lake was not opened`);
      out.catalogUri = uri;
    }
  }
  const history = doc.history;
  if (history !== undefined) {
    if (typeof history !== 'object' || history === null || Array.isArray(history)) throw new Error(`${file}: expected a [history] table, found ${typeof history}`);
    const keep = (history as Record<string, unknown>)['keep-snapshots'];
    if (keep !== undefined) {
      if (typeof keep !== 'number' || !Number.isSafeInteger(keep) || keep < 0) {
        throw new Error(`${file}: expected [history] keep-snapshots to be an integer >= 0, found ${JSON.stringify(keep)} — the lake was not opened`);
      }
      out.keepSnapshots = keep;
    }
  }
  return out;
}
