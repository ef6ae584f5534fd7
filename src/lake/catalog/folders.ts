// Table folders on disk, found without a catalog: a folder `T` is a table
// folder when `T/metadata/` holds at least one `*.metadata.json`. Used to
// refuse creating a catalog over the folders of a lake whose catalog was lost,
// and by recovery (recover.ts) to find what to re-register. Read-only.
import { readdirSync, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';

export interface TableFolder {
  /** Absolute path of the table folder. */
  dir: string;
  /** Its path below the searched root, split into parts (namespace levels, then the table name). */
  parts: string[];
  /** Names of the `*.metadata.json` files in its `metadata/` folder. */
  metadataFiles: string[];
}

/** Deepest folder searched below the root (namespace levels + table). */
const MAX_DEPTH = 8;

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * Table folders below `root` (not `root` itself), at most `limit` of them,
 * sorted by path. Hidden folders are skipped; a table folder is not searched
 * further (tables do not nest).
 */
export function findTableFolders(root: string, limit = Number.MAX_SAFE_INTEGER): TableFolder[] {
  const out: TableFolder[] = [];
  const walk = (dir: string, parts: string[]): void => {
    if (out.length >= limit || parts.length > MAX_DEPTH) return;
    const subdirs = entries(dir).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
    if (parts.length > 0 && subdirs.some((e) => e.name === 'metadata')) {
      const metadataFiles = entries(nodePath.join(dir, 'metadata'))
        .filter((e) => e.isFile() && e.name.endsWith('.metadata.json'))
        .map((e) => e.name)
        .sort();
      if (metadataFiles.length > 0) {
        out.push({ dir, parts, metadataFiles });
        return;
      }
    }
    for (const e of subdirs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) walk(nodePath.join(dir, e.name), [...parts, e.name]);
  };
  walk(nodePath.resolve(root), []);
  return out;
}
