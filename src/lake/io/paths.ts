// Path strings as the Iceberg spec means them: the string a metadata file,
// manifest list or manifest holds *is* the object's name. For the local file
// system that means the scheme is stripped and the rest taken literally —
// never percent-decoded — as Java's Hadoop FileIO, PyIceberg's PyArrowFileIO
// and DuckDB do. So a partition folder Java-escaped to `k=%3A` is a folder
// literally named `k=%3A`, and a value encoding to `%2F` is not a `/`.
//
// Relative locations (test tables of PyIceberg and DuckDB, written with a
// relative warehouse: `data/…`, `./t`, `file://data/…`) resolve against a base
// folder: the one the table's own metadata file shows (when the metadata file
// lies at `<base>/<location>/metadata/…`), else the working directory, as
// those tools resolve them. Pure functions, no I/O.
import * as nodePath from 'node:path';

const OTHER_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * The local path a path string names, taken literally: `file:///x`,
 * `file://localhost/x` and `file:/x` give `/x`; `file://data/x` gives the
 * relative `data/x` (the "host" is the first folder, as PyIceberg and DuckDB
 * read it); a plain path is unchanged. Other URIs (`s3://…`) are returned as
 * given: they name no local file.
 */
export function localPath(path: string): string {
  if (!path.startsWith('file:')) return path;
  let rest = path.slice('file:'.length);
  if (rest.startsWith('//')) {
    rest = rest.slice(2);
    if (rest.startsWith('localhost/')) rest = rest.slice('localhost'.length);
  }
  return rest;
}

/** Whether the string names a local path relative to some base (no scheme but `file:`, no leading `/`). */
export function isRelativePath(path: string): boolean {
  if (!path.startsWith('file:') && OTHER_SCHEME.test(path)) return false;
  const p = localPath(path);
  return p !== '' && !p.startsWith('/');
}

/**
 * The percent-decoded local path of a `file:` URL, when it differs from the
 * literal one: where lakes written before paths were taken literally put
 * their files. Undefined when there is nothing to decode or it is malformed.
 */
export function decodedLocalPath(path: string): string | undefined {
  if (!path.startsWith('file:') || !path.includes('%')) return undefined;
  const literal = localPath(path);
  try {
    const d = decodeURIComponent(literal);
    return d === literal ? undefined : d;
  } catch {
    return undefined;
  }
}

/** The `file:` location of an absolute local path, literal (`file:///a b/t`, not `%20`). */
export function fileLocation(absolute: string): string {
  if (!nodePath.isAbsolute(absolute)) throw new Error(`fileLocation(${absolute}): expected an absolute path`);
  return `file://${nodePath.normalize(absolute)}`;
}

/**
 * The folder a relative table location is relative to, read off where its
 * metadata file actually is: for location `data/x/t` and a metadata file at
 * `/repo/data/x/t/metadata/v3.metadata.json`, `/repo`. Undefined when the
 * location is not relative or the metadata file does not lie under it.
 */
export function relativeBaseOf(metadataFile: string, location: string): string | undefined {
  if (!isRelativePath(location)) return undefined;
  const rel = nodePath.normalize(localPath(location)).replace(/\/+$/, '');
  if (rel === '.' || rel === '..' || rel.startsWith(`..${nodePath.sep}`)) return undefined;
  const metaDir = nodePath.dirname(nodePath.resolve(metadataFile));
  if (nodePath.basename(metaDir) !== 'metadata') return undefined;
  const tableDir = nodePath.dirname(metaDir);
  const suffix = `${nodePath.sep}${rel}`;
  if (!tableDir.endsWith(suffix)) return undefined;
  return tableDir.slice(0, tableDir.length - suffix.length) || nodePath.sep;
}
