// Child for the crash matrix: runs one maintenance operation on a lake and
// exits 0 (unless MIMIR_CRASH_AT kills it first).
//   node --import tsx test/log/crash-child.ts <lakeRoot> split|unsplit|compact|gc
import { EventLog } from '../../src/log/event-log.ts';
import { splitRing, unsplitRing } from '../../src/log/ring-split.ts';
import { compact } from '../../src/log/compact.ts';
import { gc } from '../../src/log/gc.ts';

const [root, op] = process.argv.slice(2);
const log = await EventLog.open(root!);
switch (op) {
  case 'split':
    await splitRing(log, { chunkRows: 150 });
    break;
  case 'unsplit':
    await unsplitRing(log, { chunkRows: 150 });
    break;
  case 'compact':
    await compact(log, { targetFileRows: 200 });
    break;
  case 'gc':
    await gc(log, { retainMs: 0, keepLast: 1 });
    break;
  default:
    throw new Error(`unknown op ${op}`);
}
log.close();
