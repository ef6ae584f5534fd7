// Page-level pruning: data files carry a column index (per-page min/max) for
// primitive columns, and a filtered scan reads only the row span of a row
// group whose filter-column pages might match — with exactly the same rows as
// a brute-force filter, whatever the page layout, nulls or predicate shape.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import { and, eq, ge, inList, isNull, lt, or } from '../../src/lake/expr/expr.ts';
import { ParquetDataFile } from '../../src/lake/parquet/read.ts';
import type { Schema, Value } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';

const work = scratch('mimir-pages-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: true, type: { type: 'long' } },
    { id: 2, name: 'n', required: false, type: { type: 'int' } },
    { id: 3, name: 'payload', required: false, type: { type: 'string' } },
  ],
};

const N = 40_000; // one row group; several 64 KB pages per column
const ids = Array.from({ length: N }, (_, i) => BigInt(i));
const ns: Value[] = ids.map((_x, i) => (i % 11 === 0 ? null : i % 1000));
const payloads: Value[] = ids.map((_x, i) => (i >= 20_000 && i < 24_000 ? null : `payload-${String(i).padStart(6, '0')}-${'x'.repeat(i % 17)}`));

async function table(name: string) {
  const lake = Lake.open(path.join(work.dir, name));
  const t = await lake.createTable({ namespace: ['p'], name }, schema);
  await t.append([{ fields: schema.fields, numRows: N, columns: [ids, ns, payloads] }]);
  return { lake, t };
}

test('pages: primitive columns carry a column index whose pages cover the group and bound its values', async () => {
  const { lake, t } = await table('ix');
  const [f] = await t.dataFiles();
  const pf = await ParquetDataFile.open(lake.io, f!.file.filePath);
  try {
    assert.equal(pf.rowGroupCount, 1);
    for (const field of schema.fields) {
      const pages = await pf.pageStats(0, field);
      assert.ok(pages && pages.length > 1, `field ${field.name} has a multi-page column index`);
      let next = 0;
      for (const p of pages) {
        assert.equal(p.firstRow, next, 'pages are contiguous');
        next += p.rows;
        const values = [ids, ns, payloads][field.id - 1]!.slice(p.firstRow, p.firstRow + p.rows);
        const live = values.filter((v) => v !== null);
        assert.equal(p.nullPage, live.length === 0);
        assert.equal(p.nullCount, BigInt(values.length - live.length));
        for (const v of live) {
          assert.ok(p.min !== undefined && p.max !== undefined);
          assert.ok((p.min as number | bigint | string) <= (v as number | bigint | string) && (v as number | bigint | string) <= (p.max as number | bigint | string), `${field.name}: ${String(v)} within page bounds`);
        }
      }
      assert.equal(next, N);
    }
  } finally {
    await pf.close();
  }
  lake.close();
});

test('pages: a narrow range on a sorted column reads only the pages that hold it, with exact results', async () => {
  const { lake, t } = await table('range');
  const s = t.scan({ filter: and(ge('id', 30_000), lt('id', 30_100)), columns: ['id', 'payload'] });
  const rows = await s.toArray();
  assert.deepEqual(rows.map((r) => r.id), ids.slice(30_000, 30_100));
  assert.deepEqual(rows.map((r) => r.payload), payloads.slice(30_000, 30_100));
  assert.equal(s.metrics.rowGroups, 1);
  assert.ok(s.metrics.rowsRead < N / 2, `page pruning narrows the group (read ${s.metrics.rowsRead} of ${N} rows)`);
  // a range no page holds (within the group's min/max would not be prunable by row-group stats)
  const none = t.scan({ filter: and(ge('id', 30_000), lt('id', 30_000)), columns: ['id'] });
  assert.equal((await none.toArray()).length, 0);
  lake.close();
});

test('pages: values far apart on a sorted column read the pages of each, not the rows between them', async () => {
  const { lake, t } = await table('apart');
  for (const columns of [['id'], ['id', 'payload']]) {
    const s = t.scan({ filter: inList('id', [100n, 39_000n]), columns });
    const rows = await s.toArray();
    assert.deepEqual(rows.map((r) => r.id), [100n, 39_000n]);
    if (columns.length === 2) assert.deepEqual(rows.map((r) => r.payload), [payloads[100], payloads[39_000]]);
    assert.equal(s.metrics.rowGroups, 1);
    assert.ok(s.metrics.rowsRead < N / 2, `two spans, not one from 100 to 39000 (read ${s.metrics.rowsRead} of ${N} rows)`);
  }
  lake.close();
});

test('pages: predicates over columns with different page boundaries, nulls and or/and give the brute-force rows', async () => {
  const { lake, t } = await table('mixed');
  const cases: { filter: Parameters<typeof t.scan>[0]; want: (i: number) => boolean }[] = [
    { filter: { filter: isNull('payload') }, want: (i) => payloads[i] === null },
    { filter: { filter: or(lt('id', 50), eq('payload', 'payload-039999-x')) }, want: (i) => i < 50 || payloads[i] === 'payload-039999-x' },
    { filter: { filter: and(ge('id', 19_990), eq('n', 5)) }, want: (i) => i >= 19_990 && ns[i] === 5 },
    { filter: { filter: and(ge('payload', 'payload-023990'), lt('id', 24_010)) }, want: (i) => i < 24_010 && payloads[i] !== null && (payloads[i] as string) >= 'payload-023990' },
    { filter: { filter: eq('n', 999) }, want: (i) => ns[i] === 999 },
  ];
  for (const c of cases) {
    const rows = await t.scan({ ...c.filter, columns: ['id'] }).toArray();
    const want = ids.filter((_x, i) => c.want(i));
    assert.deepEqual(rows.map((r) => r.id), want);
    // the filter columns alone as the projection take the other read path
    const all = await t.scan({ ...c.filter }).toArray();
    assert.deepEqual(all.map((r) => r.id), want);
  }
  lake.close();
});

test('pages: mimir.write.page-index.columns keeps page bounds to the columns it names; the others keep page locations and filter exactly', async () => {
  const lake = Lake.open(path.join(work.dir, 'named'));
  const t = await lake.createTable({ namespace: ['p'], name: 'named' }, schema, { properties: { 'mimir.write.page-index.columns': 'id, n' } });
  await t.append([{ fields: schema.fields, numRows: N, columns: [ids, ns, payloads] }]);
  const [f] = await t.dataFiles();
  const pf = await ParquetDataFile.open(lake.io, f!.file.filePath);
  try {
    assert.ok((await pf.pageStats(0, schema.fields[0]!))!.length > 1, 'id has page bounds');
    assert.ok((await pf.pageStats(0, schema.fields[1]!))!.length > 1, 'n has page bounds');
    assert.equal(await pf.pageStats(0, schema.fields[2]!), undefined, 'payload has none');
  } finally {
    await pf.close();
  }
  // a filter on the unindexed column, and one on both, still give exactly the matching rows
  for (const [filter, want] of [
    [eq('payload', 'payload-039999-x'), (i: number) => payloads[i] === 'payload-039999-x'],
    [and(ge('id', 30_000), isNull('payload')), (i: number) => i >= 30_000 && payloads[i] === null],
    [and(lt('id', 100), ge('payload', 'payload-000050')), (i: number) => i < 100 && (payloads[i] as string) >= 'payload-000050'],
  ] as const) {
    const rows = await t.scan({ filter, columns: ['id'] }).toArray();
    assert.deepEqual(rows.map((r) => r.id), ids.filter((_x, i) => want(i)));
  }
  lake.close();
});
