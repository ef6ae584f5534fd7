// Child for the state crash tests: one state-changing operation on a lake,
// exit 0 unless MIMIR_CRASH_AT kills it first.
//   node --import tsx test/log/state-crash-child.ts <lakeRoot> <workspace> ingest|append|maintain|rebuild|remove|build|switch
import { EventLog } from '../../src/log/event-log.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import { NoSuchRepoError, ingest, removeRepo } from '../../src/ingest/index.ts';
import { maintainState } from '../../src/log/state/maintain.ts';
import { rebuildState } from '../../src/log/state/rebuild.ts';
import { CODE_PATHS, PROP_BUILDING } from '../../src/log/state/schema.ts';
import { ident } from '../../src/log/schema.ts';

const [root, ws, op] = process.argv.slice(2);
const log = await EventLog.open(root!);
const common = { repo: 'demo', krate: 'alpha@0.1.0', run: 'crash', ts: 1_800_000_000_000_000n };
switch (op) {
  case 'ingest':
    await ingest(log, ws!, { repo: 'demo', workers: 0 });
    break;
  case 'append': {
    // add, or change when an earlier attempt landed (an `add` is for an id not live)
    const live = (await log.state('node', eq('id', 'crash-node'))).size > 0;
    await log.append('node', [{ ...common, op: live ? 'change' : 'add', id: 'crash-node', kind: 'fn', name: 'crashy', qpath: 'alpha::crashy', file: 'src/lib.rs', line_start: 90, line_end: 91 }]);
    break;
  }
  case 'maintain':
    await maintainState(log, { force: true, chunkRows: 7 });
    break;
  case 'rebuild':
  case 'switch':
    await rebuildState(log, { groupEvents: 40 });
    break;
  case 'remove':
    // a rerun after an attempt that landed finds nothing to remove: converged
    try {
      await removeRepo(log, 'demo');
    } catch (e) {
      if (!(e instanceof NoSuchRepoError)) throw e;
    }
    break;
  case 'build': {
    // what `mimir state maintain` does on a lake made before code_paths (or whose build was cut short)
    const id = ident(CODE_PATHS);
    if (!log.lake.tableExists(id) || (await log.lake.loadTable(id)).properties[PROP_BUILDING] !== undefined) {
      await rebuildState(log, { tables: [CODE_PATHS], groupEvents: 40 });
    }
    break;
  }
  default:
    throw new Error(`unknown op ${op}`);
}
log.close();
