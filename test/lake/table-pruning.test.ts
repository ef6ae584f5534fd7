// Pruning is observable: a selective filter opens only the files and row
// groups that can hold matches (partition values, then column bounds, then
// Parquet row-group stats).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import { eq, and, ge, lt } from '../../src/lake/expr/expr.ts';
import type { Schema } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-pruning-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
    { id: 3, name: 'payload', required: false, type: { type: 'string' } },
  ],
};

test('pruning: a filter on the partition column opens only that partition\'s files', async () => {
  const lake = Lake.open(path.join(work.dir, 'p'));
  const t = await lake.createTable({ namespace: ['p'], name: 't' }, schema, {
    partitionBy: [{ sourceId: 1, name: 'repo', transform: { kind: 'identity' } }],
  });
  for (let a = 0; a < 3; a++) {
    const repos: string[] = [];
    const ids: bigint[] = [];
    for (let r = 0; r < 8; r++) for (let i = 0; i < 100; i++) {
      repos.push(`repo${r}`);
      ids.push(BigInt(a * 1000 + i));
    }
    await t.append([{ fields: schema.fields, numRows: repos.length, columns: [repos, ids, ids.map((x) => `p${x}`)] }]);
  }
  const files = await t.dataFiles();
  assert.equal(files.length, 24, '8 partitions x 3 appends');
  const s = t.scan({ filter: eq('repo', 'repo5'), columns: ['id'] });
  const rows = await s.toArray();
  assert.equal(rows.length, 300);
  assert.equal(s.metrics.filesOpened, 3, 'only repo5\'s three files are opened');
  assert.equal(s.metrics.dataFilesSkipped, 21);
  lake.close();
});

test('pruning: a range on a sorted column reads only the row groups that hold it', async () => {
  const lake = Lake.open(path.join(work.dir, 's'));
  const t = await lake.createTable({ namespace: ['p'], name: 's' }, schema, {
    properties: { 'write.parquet.row-group-limit': '1000' },
  });
  for (let f = 0; f < 4; f++) {
    const n = 10_000;
    const ids = Array.from({ length: n }, (_, i) => BigInt(f * n + i));
    await t.append([{ fields: schema.fields, numRows: n, columns: [ids.map(() => 'r'), ids, ids.map((x) => `p${x}`)] }]);
  }
  const s = t.scan({ filter: and(ge('id', 12_100), lt('id', 12_300)), columns: ['id'] });
  const rows = await s.toArray();
  assert.equal(rows.length, 200);
  assert.equal(s.metrics.dataFiles, 4);
  assert.equal(s.metrics.filesOpened, 1, 'column bounds prune three of four files');
  assert.equal(s.metrics.rowGroups, 1, 'row-group stats prune nine of ten row groups');
  assert.equal(s.metrics.rowGroupsSkipped, 9);
  lake.close();
});
