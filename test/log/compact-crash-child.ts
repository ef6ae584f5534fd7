// Child process for gc.test.ts (not a test itself).
//   <lakeRoot> <targetFileRows>: open the log and compact it; print the report
//   line. Run with MIMIR_CRASH_AT=compact:<point> to be killed part way.
import { EventLog } from '../../src/log/event-log.ts';
import { compact, formatCompactReport } from '../../src/log/compact.ts';

const [root, target] = process.argv.slice(2);
const log = await EventLog.open(root!);
const r = await compact(log, { targetFileRows: Number(target) });
process.stdout.write(formatCompactReport(r) + '\n');
log.close();
