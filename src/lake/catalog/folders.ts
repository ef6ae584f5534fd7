// Table folders and lake folders on disk, found without a catalog: a folder
// `T` is a table folder when `T/metadata/` holds at least one
// `*.metadata.json`; a folder is a lake folder when it holds a lake's catalog
// file (`catalog.db`) or settings file (`mimir.toml`). Used to refuse creating
// a catalog over the folders of a lake whose catalog was lost, by recovery
// (recover.ts) to find what to re-register, and by maintenance to leave the
// tables of a lake nested in another alone.
//
// Invariant: a lake folder below the searched root belongs to that other
// lake — its table folders are never listed as the root's (they are reported
// as a nested lake instead), so no catalog at the root can adopt them.
// Read-only.
import { existsSync, readdirSync, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';
import { CATALOG_FILE } from './sql-catalog.ts';
import { SETTINGS_FILE } from '../settings.ts';

export interface TableFolder {
  /** Absolute path of the table folder. */
  dir: string;
  /** Its path below the searched root, split into parts (namespace levels, then the table name). */
  parts: string[];
  /** Names of the `*.metadata.json` files in its `metadata/` folder. */
  metadataFiles: string[];
}

/** Files that make a folder a lake of its own. */
export const LAKE_MARKERS: readonly string[] = [CATALOG_FILE, SETTINGS_FILE];

/** Deepest folder searched below the root (namespace levels + table). */
const MAX_DEPTH = 8;

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** `dir` holds a lake's catalog or settings file. */
export function isLakeFolder(dir: string): boolean {
  return LAKE_MARKERS.some((m) => existsSync(nodePath.join(dir, m)));
}

export interface FolderScan {
  tables: TableFolder[];
  /** Lake folders below the root (absolute paths), not searched further. */
  lakes: string[];
}

/**
 * Table folders below `root` (not `root` itself), at most `limit` of them,
 * sorted by path, and the lake folders below it. Hidden folders are skipped;
 * a table folder is not searched further (tables do not nest), nor is a lake
 * folder (its tables are its own).
 */
export function scanFolders(root: string, limit = Number.MAX_SAFE_INTEGER): FolderScan {
  const tables: TableFolder[] = [];
  const lakes: string[] = [];
  const walk = (dir: string, parts: string[]): void => {
    if (tables.length >= limit || parts.length > MAX_DEPTH) return;
    if (parts.length > 0 && isLakeFolder(dir)) {
      lakes.push(dir);
      return;
    }
    const subdirs = entries(dir).filter((e) => e.isDirectory() && !e.name.startsWith('.'));
    if (parts.length > 0 && subdirs.some((e) => e.name === 'metadata')) {
      const metadataFiles = entries(nodePath.join(dir, 'metadata'))
        .filter((e) => e.isFile() && e.name.endsWith('.metadata.json'))
        .map((e) => e.name)
        .sort();
      if (metadataFiles.length > 0) {
        tables.push({ dir, parts, metadataFiles });
        return;
      }
    }
    for (const e of subdirs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) walk(nodePath.join(dir, e.name), [...parts, e.name]);
  };
  walk(nodePath.resolve(root), []);
  return { tables, lakes };
}

/** The table folders of scanFolders (those of lakes nested below the root excluded). */
export function findTableFolders(root: string, limit = Number.MAX_SAFE_INTEGER): TableFolder[] {
  return scanFolders(root, limit).tables;
}

/**
 * The lake folder nearest `root` on the way from `root` (excluded) down to
 * `path` (included), or undefined: a local `path` inside `root` that lies in
 * a lake of its own. A path outside `root` gives undefined.
 */
export function nestedLakeOf(root: string, path: string): string | undefined {
  const base = nodePath.resolve(root);
  const rel = nodePath.relative(base, nodePath.resolve(path));
  if (rel === '' || rel.startsWith('..') || nodePath.isAbsolute(rel)) return undefined;
  let dir = base;
  for (const part of rel.split(nodePath.sep)) {
    dir = nodePath.join(dir, part);
    if (isLakeFolder(dir)) return dir;
  }
  return undefined;
}

/** The nearest folder above `dir` that is a lake folder, or undefined. */
export function enclosingLake(dir: string): string | undefined {
  let d = nodePath.resolve(dir);
  for (let up = nodePath.dirname(d); up !== d; d = up, up = nodePath.dirname(d)) {
    if (isLakeFolder(up)) return up;
  }
  return undefined;
}
