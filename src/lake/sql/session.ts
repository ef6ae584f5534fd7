// SQL over Iceberg tables, in process, with DuckDB: an in-memory DuckDB (no
// database file anywhere) holding one view per table (view.ts), built from the
// table's live files at one snapshot with its deletes applied. A lake's tables
// are all pinned to ONE lake generation, so a query sees the lake as it was at
// that generation, whole.
//
// Read-only, and enforced: once the views are made, DuckDB's file access is
// limited to exactly the files the views read (`allowed_paths`), plus the one
// output file of `copyTo`; `enable_external_access` is off and the
// configuration locked, so a statement can neither read another file nor
// change those settings; extensions are never installed or loaded; and only a
// single SELECT (or EXPLAIN) statement is run — COPY, ATTACH, INSTALL, LOAD,
// SET, CREATE … are refused before they run. The lake is never written.
import { existsSync } from 'node:fs';
import * as nodePath from 'node:path';
import { DuckDBInstance, StatementType, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import {
  DuckDBBlobValue, DuckDBDateValue, DuckDBDecimalValue, DuckDBListValue, DuckDBArrayValue, DuckDBMapValue, DuckDBStructValue,
  DuckDBTimestampValue, DuckDBTimestampTZValue, DuckDBTimestampNanosecondsValue, DuckDBTimeValue,
} from '@duckdb/node-api';
import type { FileIO } from '../io/fileio.ts';
import { decodedLocalPath } from '../io/paths.ts';
import type { SnapshotSelector, Table } from '../table/table.ts';
import { displayValue } from '../spec/values.ts';
import type { Value } from '../spec/types.ts';
import { nameMappingOf } from '../spec/name-mapping.ts';
import { stringifyJson } from '../spec/json.ts';
import { nestedDefaultIds, quoteIdent, quoteString, viewSelect, type ViewDataFile, type ViewInput } from './view.ts';
import { ParquetDataFile } from '../parquet/read.ts';

/** A statement refused before it ran (not a single SELECT, or a write). */
export class SqlRefusedError extends Error {}

/** The local file a metadata path names, for DuckDB to read; an error for files on object storage. */
function localFile(io: FileIO, path: string): string {
  const local = (io as FileIO & { local?: (p: string) => string }).local;
  if (typeof local !== 'function') throw new Error(`${path}: SQL reads tables on the local file system only (this table's storage has no local files); no view made`);
  const l = local.call(io, path);
  if (!nodePath.isAbsolute(l)) throw new Error(`${path}: names no local file (resolved to "${l}"); SQL reads tables on the local file system only; no view made`);
  if (!existsSync(l)) {
    // lakes written before paths were taken literally hold the decoded name
    const decoded = decodedLocalPath(path);
    if (decoded !== undefined && existsSync(decoded)) return decoded;
  }
  return l;
}

/** What a view of `table` at `sel` reads: the view input and every local file it names. */
export async function viewInputOf(table: Table, sel: SnapshotSelector = {}): Promise<{ input: ViewInput; files: string[]; snapshotId?: bigint }> {
  const scan = table.scan(sel);
  const input: ViewInput = { schema: scan.schema, data: [], positionDeletes: [], equalityDeletes: [] };
  // footers are read only where the view must know a file's fields: defaults inside structs, files mapped by name
  const nameMapping = nameMappingOf(table.properties);
  const nested = nestedDefaultIds(scan.schema.fields);
  const needFooter = nameMapping !== undefined || nested.length > 0;
  if (!scan.snapshot) return { input, files: [] };
  const specs = new Map(table.metadata.partitionSpecs.map((s) => [s.specId, s]));
  const files: string[] = [];
  for (const f of await table.liveFiles({ snapshotId: scan.snapshot.snapshotId })) {
    if (f.file.fileFormat.toLowerCase() !== 'parquet') {
      throw new Error(`${table.name}: ${f.file.filePath} is a ${f.file.fileFormat} file; SQL reads Parquet files only; no view made`);
    }
    const local = localFile(table.io, f.file.filePath);
    files.push(local);
    const partitionKey = `${f.specId}:${stringifyJson(f.file.partition.map((v) => (v instanceof Uint8Array ? [...v] : v)))}`;
    if (f.file.content === 0) {
      const identity = new Map<number, Value>();
      specs.get(f.specId)?.fields.forEach((pf, i) => {
        if (pf.transform.kind === 'identity') identity.set(pf.sourceId, f.file.partition[i] ?? null);
      });
      const known: Pick<ViewDataFile, 'present' | 'columns'> = {};
      if (needFooter) {
        const pf = await ParquetDataFile.open(table.io, f.file.filePath, nameMapping ? { nameMapping } : {});
        try {
          if (nested.length > 0) known.present = new Set(nested.filter((id) => pf.hasField(id)));
          // a file with no field ids of its own is read by the names the mapping gives
          if (nameMapping !== undefined && !scan.schema.fields.some((x) => pf.hasOwnField(x.id))) {
            known.columns = new Map();
            for (const x of scan.schema.fields) {
              const name = pf.topColumnName(x.id);
              if (name !== undefined) known.columns.set(x.id, name);
            }
          }
        } finally {
          await pf.close();
        }
      }
      input.data.push({ local, uri: f.file.filePath, seq: f.sequenceNumber, partitionKey, ...(identity.size > 0 ? { identity } : {}), ...known });
    }
    else if (f.file.content === 1) input.positionDeletes.push({ local, seq: f.sequenceNumber });
    else {
      const unpartitioned = (specs.get(f.specId)?.fields.length ?? 0) === 0;
      input.equalityDeletes.push({ local, seq: f.sequenceNumber, equalityIds: f.file.equalityIds ?? [], ...(unpartitioned ? {} : { partitionKey }) });
    }
  }
  return { input, files, snapshotId: scan.snapshot.snapshotId };
}

/** A result column: its name and DuckDB type (as DuckDB spells it). */
export interface SqlColumn {
  name: string;
  type: string;
}

/** Result values for output: 64-bit integers stay bigint; dates, times and timestamps ISO text; decimals exact text; blobs hex; lists, structs, maps as JSON-ready values. */
export function jsValue(v: DuckDBValue): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string' || typeof v === 'bigint') return v;
  if (v instanceof DuckDBTimestampTZValue) return displayValue({ type: 'timestamptz' }, v.micros);
  if (v instanceof DuckDBTimestampValue) return displayValue({ type: 'timestamp' }, v.micros);
  if (v instanceof DuckDBTimestampNanosecondsValue) return displayValue({ type: 'timestamp_ns' }, v.nanos);
  if (v instanceof DuckDBDateValue) return displayValue({ type: 'date' }, v.days);
  if (v instanceof DuckDBTimeValue) return displayValue({ type: 'time' }, v.micros);
  if (v instanceof DuckDBBlobValue) return displayValue({ type: 'binary' }, v.bytes);
  if (v instanceof DuckDBDecimalValue) return v.toString();
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(jsValue);
  if (v instanceof DuckDBStructValue) return Object.fromEntries(Object.entries(v.entries).map(([k, x]) => [k, jsValue(x)]));
  if (v instanceof DuckDBMapValue) return v.entries.map((e) => ({ key: jsValue(e.key), value: jsValue(e.value) }));
  return v.toString();
}

/** A view to make: its DuckDB schema (undefined: the default schema) and name. */
export interface ViewName {
  schema?: string;
  name: string;
}

/** First words of statements that only read (SELECT and its DuckDB spellings). */
const READ_WORDS = new Set(['SELECT', 'WITH', 'FROM', 'VALUES', 'TABLE', 'EXPLAIN', 'DESCRIBE', 'SUMMARIZE', 'SHOW', 'PIVOT', 'UNPIVOT']);

export class SqlSession {
  private readonly allowed = new Set<string>();
  private locked = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  /** An in-memory DuckDB that never installs or loads an extension. */
  static async open(): Promise<SqlSession> {
    const instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
    try {
      return new SqlSession(instance, await instance.connect());
    } catch (e) {
      instance.closeSync();
      throw e;
    }
  }

  /** Make views named `names` over `table` at `sel` (before `lock`). */
  async addTable(names: ViewName[], table: Table, sel: SnapshotSelector = {}): Promise<{ snapshotId?: bigint; files: number }> {
    if (this.locked) throw new Error('SqlSession.addTable: the session is locked; add every view before the first query');
    const { input, files, snapshotId } = await viewInputOf(table, sel);
    const select = viewSelect(input);
    for (const n of names) {
      if (n.schema !== undefined) await this.conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(n.schema)}`);
      const qualified = n.schema === undefined ? quoteIdent(n.name) : `${quoteIdent(n.schema)}.${quoteIdent(n.name)}`;
      await this.conn.run(`CREATE VIEW ${qualified} AS ${select}`);
    }
    for (const f of files) this.allowed.add(f);
    return { ...(snapshotId === undefined ? {} : { snapshotId }), files: files.length };
  }

  /** Limit file access to the views' files (and `outFile`), lock the configuration. Idempotent; queries call it. */
  private async lock(outFile?: string): Promise<void> {
    if (this.locked) return;
    const paths = [...this.allowed, ...(outFile === undefined ? [] : [outFile])];
    await this.conn.run(`SET allowed_paths = [${paths.map(quoteString).join(', ')}]`);
    await this.conn.run('SET enable_external_access = false');
    await this.conn.run('SET lock_configuration = true');
    this.locked = true;
  }

  /** Prepare `sql`: exactly one SELECT or EXPLAIN statement, else SqlRefusedError. */
  private async prepareRead(sql: string) {
    const stmts = await this.conn.extractStatements(sql);
    if (stmts.count !== 1) throw new SqlRefusedError(`expected one SQL statement, found ${stmts.count}; nothing run`);
    // the first word, before DuckDB binds the statement (a COPY or ATTACH would be refused only later, by the file-access check)
    const word = /^[\s(]*([A-Za-z]+)/.exec(sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' '))?.[1]?.toUpperCase() ?? '';
    if (!READ_WORDS.has(word)) {
      throw new SqlRefusedError(`only a SELECT (or EXPLAIN) statement is run, over read-only views; this one starts with ${word || 'nothing'} — nothing run (the lake is never written; write a result with --out FILE.parquet)`);
    }
    const p = await stmts.prepare(0);
    const t = p.statementType;
    if (t !== StatementType.SELECT && t !== StatementType.EXPLAIN) {
      throw new SqlRefusedError(`only a SELECT (or EXPLAIN) statement is run, over read-only views; this is a ${StatementType[t] ?? t} statement — nothing run (the lake is never written; write a result with --out FILE.parquet)`);
    }
    return p;
  }

  /** Run one SELECT; rows come in chunks, values as DuckDB gives them (see jsValue). */
  async query(sql: string): Promise<{ columns: SqlColumn[]; chunks: AsyncIterable<DuckDBValue[][]> }> {
    await this.lock();
    const p = await this.prepareRead(sql);
    const result = await p.stream();
    const names = result.columnNames();
    const types = result.columnTypes();
    const columns = names.map((name, i) => ({ name, type: types[i]!.toString() }));
    async function* chunks(): AsyncIterable<DuckDBValue[][]> {
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) return;
        yield chunk.getRows();
      }
    }
    return { columns, chunks: chunks() };
  }

  /** Write the result of one SELECT to a new Parquet file `outFile` (absolute); the row count. */
  async copyTo(sql: string, outFile: string): Promise<bigint> {
    if (!nodePath.isAbsolute(outFile)) throw new Error(`copyTo: expected an absolute path, found ${outFile}`);
    await this.lock(outFile);
    await this.prepareRead(sql); // refuses anything but a SELECT before the COPY wraps it
    const inner = sql.trim().replace(/;\s*$/, '');
    const r = await this.conn.runAndReadAll(`COPY (${inner}) TO ${quoteString(outFile)} (FORMAT parquet)`);
    const v = r.getRows()[0]?.[0];
    return typeof v === 'bigint' ? v : BigInt(Number(v ?? 0));
  }

  /** Stop the statement running now (it fails with DuckDB's "interrupted" error); for time limits. */
  interrupt(): void {
    this.conn.interrupt();
  }

  close(): void {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

export { quoteIdent };
