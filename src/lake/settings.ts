// A lake's own settings: the optional file `<lake root>/mimir.toml`, read when
// the lake opens. Today it holds one setting, the catalog name to use in the
// catalog file (a SQL catalog file may hold several catalogs; PyIceberg's
// default is `default`, Java's is whatever the application names it):
//
//   [catalog]
//   name = "default"
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
  }
  return out;
}
