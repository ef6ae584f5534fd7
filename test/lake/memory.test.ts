// Memory is bounded by one row group, not by the table: streaming 1M and 5M
// rows with a two-column projection peaks at about the same RSS.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';
import { repoRoot, scratch } from '../helpers.ts';

const work = scratch('mimir-memory-');
after(work.cleanup);

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'krate', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
    { id: 3, name: 'name', required: false, type: { type: 'string' } },
  ],
};

function* million(part: number): Generator<Batch> {
  const n = 100_000;
  for (let b = 0; b < 10; b++) {
    const cols: Value[][] = [new Array(n), new Array(n), new Array(n)];
    for (let i = 0; i < n; i++) {
      const k = part * 1_000_000 + b * n + i;
      cols[0]![i] = `crate_${k >> 12}@1.0.${k % 7}`;
      cols[1]![i] = BigInt(k);
      cols[2]![i] = `some::module::path::item_${k.toString(36)}`;
    }
    yield { fields: schema.fields, numRows: n, columns: cols };
  }
}

function measure(root: string, which: string): { rows: number; peak: number } {
  // a fixed old-space cap keeps V8 from growing its heap lazily with the
  // amount read (garbage, not live data); a leak would crash the child
  const out = execFileSync(process.execPath, ['--max-old-space-size=160', '--import', 'tsx', path.join(repoRoot, 'test/lake/memory-child.ts'), root, which], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop()!) as { rows: number; peak: number };
}

test('memory: streaming 5M rows with two columns peaks under 300 MB, within 64 MB of streaming 1M', { timeout: 600_000 }, async () => {
  const root = path.join(work.dir, 'lake');
  const lake = Lake.open(root);
  const t = await lake.createTable({ namespace: ['m'], name: 'big' }, schema);
  for (let p = 0; p < 5; p++) await t.append(million(p));
  lake.close();
  const one = measure(root, '0');
  const five = measure(root, 'current');
  const mb = (x: number): string => `${(x / 2 ** 20).toFixed(0)} MB`;
  console.log(`# memory: 1M rows peak ${mb(one.peak)}, 5M rows peak ${mb(five.peak)}`);
  assert.equal(one.rows, 1_000_000);
  assert.equal(five.rows, 5_000_000);
  assert.ok(five.peak < 300 * 2 ** 20, `5M rows peak ${mb(five.peak)} >= 300 MB`);
  assert.ok(Math.abs(five.peak - one.peak) < 64 * 2 ** 20, `peaks differ by ${mb(Math.abs(five.peak - one.peak))} >= 64 MB`);
});
