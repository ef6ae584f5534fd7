// Child for the ingest crash tests: one ingest (or universe add) of a lake,
// exit 0 — unless MIMIR_CRASH_AT kills it first (or the test does).
//   node --import tsx test/ingest/crash-child.ts <lakeRoot> ingest <workspace> <repo>
//   node --import tsx test/ingest/crash-child.ts <lakeRoot> universe <dir>
// Small batches, so that a run writes several data files per table.
import { EventLog } from '../../src/log/event-log.ts';
import { ingest, universeAdd } from '../../src/ingest/index.ts';

const [root, op, a, b] = process.argv.slice(2);
const log = await EventLog.open(root!);
if (op === 'ingest') await ingest(log, a!, { repo: b!, batchRows: 40, workers: 1 });
else if (op === 'universe') await universeAdd(log, [a!], { batchRows: 40, workers: 1 });
else throw new Error(`unknown op ${op}`);
log.close();
