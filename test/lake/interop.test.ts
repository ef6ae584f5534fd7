// What Mimir writes is read by independent readers: DuckDB reads every live
// data file of a Mimir table with the same rows, and Python's avro module
// (Debian python3-avro) decodes every manifest list and manifest with the
// field ids present in their schemas.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { Lake } from '../../src/lake/lake.ts';
import type { Schema, Value } from '../../src/lake/spec/types.ts';
import { ParquetDataFile } from '../../src/lake/parquet/read.ts';
import { readManifestList } from '../../src/lake/scan/plan.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-interop-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
    { id: 3, name: 'line', required: false, type: { type: 'int' } },
    { id: 4, name: 'score', required: false, type: { type: 'double' } },
    { id: 5, name: 'ok', required: false, type: { type: 'boolean' } },
    { id: 6, name: 'price', required: false, type: { type: 'decimal', precision: 12, scale: 2 } },
    { id: 7, name: 'day', required: false, type: { type: 'date' } },
    { id: 8, name: 'at', required: false, type: { type: 'timestamptz' } },
  ],
};

async function buildTable(): Promise<Lake> {
  const lake = Lake.open(path.join(work.dir, 'lake'));
  const t = await lake.createTable({ namespace: ['x'], name: 'events' }, schema, {
    partitionBy: [{ sourceId: 1, name: 'repo', transform: { kind: 'identity' } }],
  });
  for (let a = 0; a < 3; a++) {
    const n = 500;
    const cols: Value[][] = schema.fields.map(() => []);
    for (let i = 0; i < n; i++) {
      const k = a * n + i;
      cols[0]!.push(`repo-${k % 3}`);
      cols[1]!.push(2n ** 60n + BigInt(k));
      cols[2]!.push(k % 11 === 0 ? null : k);
      cols[3]!.push(k / 3);
      cols[4]!.push(k % 2 === 0);
      cols[5]!.push(`${k}.${String(k % 100).padStart(2, '0')}`);
      cols[6]!.push(19000 + (k % 400));
      cols[7]!.push(1_700_000_000_000_000n + BigInt(k) * 1_000_000n);
    }
    await t.append([{ fields: schema.fields, numRows: n, columns: cols }]);
  }
  // a replace: rewrite repo-1's files into one
  const files = (await t.dataFiles()).filter((f) => f.file.partition[0] === 'repo-1');
  const rows = await t.scan({ filter: { op: 'eq', col: 'repo', value: 'repo-1' } }).toArray();
  const newFiles = await t.writeDataFiles([{ fields: schema.fields, numRows: rows.length, columns: schema.fields.map((f) => rows.map((r) => r[f.name] ?? null)) }]);
  await t.overwrite(files.map((f) => f.file), newFiles, 'replace');
  return lake;
}

test('interop: DuckDB reads every live data file Mimir wrote with the same rows', async () => {
  const lake = await buildTable();
  const t = await lake.loadTable({ namespace: ['x'], name: 'events' });
  const live = await t.dataFiles();
  assert.ok(live.length >= 5);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  let total = 0;
  for (const { file } of live) {
    const local = fileURLToPath(file.filePath);
    const duck = (await c.runAndReadAll(`select repo, id, line, score, ok, cast(price as varchar), cast(datediff('day', DATE '1970-01-01', day) as integer), epoch_us("at") from read_parquet('${local}')`)).getRows();
    const pf = await ParquetDataFile.open(lake.io, file.filePath);
    const ours: Value[][] = [];
    for (let rg = 0; rg < pf.rowGroupCount; rg++) {
      const b = await pf.readRowGroup(rg, schema.fields);
      for (let i = 0; i < b.numRows; i++) ours.push(b.columns.map((col) => col[i] ?? null));
    }
    await pf.close();
    assert.equal(duck.length, Number(file.recordCount));
    assert.equal(duck.length, ours.length);
    for (let i = 0; i < duck.length; i++) {
      const d = duck[i]!;
      const o = ours[i]!;
      assert.deepEqual([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]], [o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]], `row ${i} of ${local}`);
    }
    total += duck.length;
  }
  assert.equal(total, 1500);
  c.closeSync();
  lake.close();
});

const pythonAvro = spawnSync('/usr/bin/python3', ['-c', 'import avro'], { encoding: 'utf8' }).status === 0;

test(
  'interop: Python avro decodes every manifest list and manifest, with field ids in the schema',
  { skip: pythonAvro ? false : 'skipped: /usr/bin/python3 has no avro module (Debian python3-avro; .ci/run installs it)' },
  async () => {
    const lake = Lake.open(path.join(work.dir, 'lake'));
    const t = await lake.loadTable({ namespace: ['x'], name: 'events' });
    const lists = t.metadata.snapshots.map((s) => fileURLToPath(s.manifestList));
    const manifests = new Set<string>();
    for (const s of t.metadata.snapshots) for (const m of await readManifestList(lake.io, s)) manifests.add(fileURLToPath(m.manifestPath));
    const script = `
import sys, json, avro.datafile, avro.io
out = []
for p in sys.argv[1:]:
    with open(p, 'rb') as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        schema = json.loads(r.get_meta('avro.schema').decode())
        recs = list(r)
        def ids(t, acc):
            if isinstance(t, dict):
                if t.get('type') == 'record':
                    for fl in t['fields']:
                        acc.append('field-id' in fl)
                        ids(fl['type'], acc)
                elif t.get('type') == 'array':
                    ids(t['items'], acc)
            elif isinstance(t, list):
                for x in t: ids(x, acc)
            return acc
        out.append({'path': p, 'records': len(recs), 'all_ids': all(ids(schema, [])),
                    'snapshot_ids': [str(x.get('added_snapshot_id', x.get('snapshot_id'))) for x in recs]})
print(json.dumps(out))
`;
    const res = JSON.parse(execFileSync('/usr/bin/python3', ['-W', 'ignore', '-c', script, ...lists, ...manifests], { encoding: 'utf8' })) as {
      path: string;
      records: number;
      all_ids: boolean;
      snapshot_ids: string[];
    }[];
    assert.equal(res.length, lists.length + manifests.size);
    for (const r of res) {
      assert.ok(r.records > 0, `${r.path} has records`);
      assert.ok(r.all_ids, `${r.path}: every record field carries a field-id`);
    }
    // exact 64-bit snapshot ids as Python reads them
    const known = new Set(t.metadata.snapshots.map((s) => String(s.snapshotId)));
    for (const r of res.filter((x) => lists.includes(x.path))) for (const id of r.snapshot_ids) assert.ok(known.has(id), `${id} is a snapshot id`);
    lake.close();
  },
);
