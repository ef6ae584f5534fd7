// Child for the memory test: streams lake:<ns>.<t> (snapshot index given,
// or current) with a two-column projection and prints rows and peak RSS.
import { Lake } from '../../src/lake/lake.ts';

const [root, which] = process.argv.slice(2);
let peak = process.memoryUsage().rss;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const lake = Lake.open(root!);
const t = await lake.loadTable({ namespace: ['m'], name: 'big' });
const snap = which === 'current' ? undefined : t.metadata.snapshots[Number(which)]!.snapshotId;
let rows = 0;
for await (const b of t.scan({ columns: ['krate', 'id'], snapshotId: snap }).batches()) {
  rows += b.numRows;
  peak = Math.max(peak, process.memoryUsage().rss);
}
clearInterval(timer);
lake.close();
// sampled RSS, not getrusage's maxRSS: that one is inherited through
// fork+exec and would count the (large) parent test process
console.log(JSON.stringify({ rows, peak }));
