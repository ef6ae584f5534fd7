// An Iceberg reader that shares no code with Mimir, for tests that pin what
// other engines see: Python's json and avro modules (Debian python3-avro)
// read the table metadata, the manifest list and the manifests; DuckDB reads
// the Parquet data and delete files; the v2 merge-on-read rules are applied
// here in SQL, as the spec states them (an equality delete applies to data
// files of a strictly lower data sequence number, a position delete to those
// of a lower or equal one). DuckDB's own iceberg extension cannot be
// installed here (no network), so this stands in for it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const PY = '/usr/bin/python3';
const probe = spawnSync(PY, ['-c', 'import avro.datafile, avro.io'], { encoding: 'utf8' });
/** The `skip` option for tests that need the independent reader. */
export const noIndependentReader: string | false =
  probe.status === 0 ? false : `skipped: ${PY} -c 'import avro' failed (install the Debian package python3-avro): ${(probe.stderr || String(probe.error)).trim()}`;

// Prints the live entries of the current snapshot: path, content, data sequence
// number (inherited per the spec), equality field names.
const PLAN = `
import sys, json, warnings
warnings.simplefilter('ignore')
import avro.datafile, avro.io
def local(p):
    return p[7:] if p.startswith('file://') else p
def records(p):
    with open(local(p), 'rb') as fh:
        return list(avro.datafile.DataFileReader(fh, avro.io.DatumReader()))
meta = json.load(open(sys.argv[1]))
sid = meta.get('current-snapshot-id')
snap = next((s for s in meta.get('snapshots', []) if s['snapshot-id'] == sid), None)
schema = next(s for s in meta['schemas'] if s['schema-id'] == meta['current-schema-id'])
names = {f['id']: f['name'] for f in schema['fields']}
out = []
if snap is not None:
    for m in records(snap['manifest-list']):
        for e in records(m['manifest_path']):
            if e['status'] == 2:
                continue
            seq = e['sequence_number']
            if seq is None:
                seq = m['sequence_number']
            df = e['data_file']
            out.append({'path': local(df['file_path']), 'content': df['content'], 'seq': seq,
                        'eq': [names[i] for i in (df.get('equality_ids') or [])]})
print(json.dumps(out))
`;

export interface PlannedFile {
  path: string;
  content: 0 | 1 | 2;
  seq: number;
  eq: string[];
}

/** The live files of a table's current snapshot, as Python's avro module reads its manifests. */
export function planIndependently(metadataLocation: string): PlannedFile[] {
  const file = metadataLocation.startsWith('file:') ? fileURLToPath(metadataLocation) : metadataLocation;
  const r = spawnSync(PY, ['-c', PLAN, file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`python plan of ${file} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as PlannedFile[];
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/**
 * Every live row of the table's current snapshot, read by DuckDB with the
 * deletes applied, as objects of the given columns (values as DuckDB's JSON
 * form: strings, numbers; BIGINT as strings).
 */
export async function readIndependently(metadataLocation: string, columns: string[]): Promise<Record<string, unknown>[]> {
  const plan = planIndependently(metadataLocation);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const out: Record<string, unknown>[] = [];
    const cols = columns.map(ident).join(', ');
    for (const d of plan.filter((f) => f.content === 0)) {
      const where: string[] = [];
      for (const del of plan.filter((f) => f.content === 2 && f.seq > d.seq)) {
        const keys = del.eq.map(ident).join(', ');
        where.push(`(${keys}) NOT IN (SELECT (${keys}) FROM read_parquet(${quote(del.path)}))`);
      }
      const positions = plan.filter((f) => f.content === 1 && f.seq >= d.seq);
      let from = `read_parquet(${quote(d.path)}, file_row_number = true)`;
      if (positions.length > 0) {
        const list = positions.map((p) => quote(p.path)).join(', ');
        where.push(`file_row_number NOT IN (SELECT pos FROM read_parquet([${list}]) WHERE file_path = ${quote(d.path)} OR file_path = ${quote(`file://${d.path}`)})`);
      }
      const sql = `SELECT ${cols} FROM ${from}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
      from = '';
      const reader = await conn.runAndReadAll(sql);
      out.push(...(reader.getRowObjectsJson() as Record<string, unknown>[]));
    }
    return out;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
