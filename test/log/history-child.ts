// Child process for history.test.ts (not a test itself).
//   pin <lakeRoot>: pin the lake's current generation (a catalog lease, as
//     `mimir serve` does), print `ready <generation> <digest>`, wait for a line
//     on stdin, read again and print `again <digest>`, then close and exit.
//     The digest: the node events and the code_nodes state rows read through
//     the pinned handle, and `find f1` answered at its generation.
//   maintain <lakeRoot>: run the maintenance after a run (history task
//     included) and exit; killed at MIMIR_CRASH_AT by the crash test.
//   ingest <lakeRoot> <wsDir> <repo> <n>: n alternating-edit ingests of a small
//     generated crate as repo <repo> (maintenance and its expiry after each).
import { createInterface } from 'node:readline';
import { EventLog } from '../../src/log/event-log.ts';
import { maintain } from '../../src/log/maintain.ts';
import { find } from '../../src/query/index.ts';
import { ingest } from '../../src/ingest/index.ts';
import { syntheticWorkspace } from '../ingest/helpers.ts';
import { canonRow } from './rows.ts';

const [mode, lakeRoot] = process.argv.slice(2);

async function digest(log: EventLog): Promise<string> {
  const events = (await log.rows('node')).map(canonRow).sort();
  const state = (await (await log.table('code_nodes'))!.scan().toArray()).map(canonRow).sort();
  const answer = JSON.stringify(await find(log, 'f1'), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  return JSON.stringify([events, state, answer]);
}

if (mode === 'pin') {
  const log = await EventLog.open(lakeRoot!);
  const g = log.lake.catalog.pointerGeneration();
  const pin = log.pin({ generation: g });
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
  process.stdout.write(`ready ${g} ${await digest(pin)}\n`);
  await go;
  process.stdout.write(`again ${await digest(pin)}\n`);
  lines.close();
  pin.close();
  log.close();
} else if (mode === 'maintain') {
  const log = await EventLog.open(lakeRoot!);
  await maintain(log);
  log.close();
} else if (mode === 'ingest') {
  const [, , ws, repo, count] = process.argv.slice(2);
  const log = await EventLog.open(lakeRoot!);
  for (let i = 0; i < Number(count); i++) {
    syntheticWorkspace(ws!, repo!, 12, i % 2);
    const r = await ingest(log, ws!, { repo: repo! });
    if (r.maintenanceError) throw new Error(`run ${i}: maintenance failed: ${r.maintenanceError}`);
  }
  log.close();
} else throw new Error(`history-child: unknown mode '${mode}'`);
