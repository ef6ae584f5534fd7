// Child process for the concurrent-append test: appends `count` one-row
// commits tagged with `writer` to lake:<ns>.<name>, then exits 0.
import { Lake } from '../../src/lake/lake.ts';

const [root, writer, countText] = process.argv.slice(2);
const lake = Lake.open(root!);
const t = await lake.loadTable({ namespace: ['c'], name: 'events' });
const fields = t.schema.fields;
for (let i = 0; i < Number(countText); i++) {
  await t.append([{ fields, numRows: 1, columns: [[writer!], [BigInt(i)]] }]);
}
lake.close();
