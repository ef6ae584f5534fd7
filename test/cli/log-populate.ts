// Test helper run as a child process: `node --import tsx test/cli/log-populate.ts LAKE [APPENDS]`
// appends ring rows (repo @universe, krates dep0@1.0.0…dep2@1.0.0) and repo
// rows (repo acme) of every kind to the existing event log at LAKE, one append
// per kind per round (APPENDS rounds, default 2). Never creates the log.
import { EventLog, type EventRow } from '../../src/log/event-log.ts';
import { Lake } from '../../src/lake/lake.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, type Kind } from '../../src/log/schema.ts';

export function rows(kind: Kind, repo: string, n: number, start: number): EventRow[] {
  const out: EventRow[] = [];
  for (let i = start; i < start + n; i++) {
    const krate = repo === UNIVERSE_REPO ? `dep${i % 3}@1.0.0` : `${repo}-k${i % 2}`;
    const common = { repo, krate, run: 'cli-run', ts: 1_700_000_000_000_000n + BigInt(i), op: 'add', id: `${kind}-${repo}-${i}` };
    if (kind === 'node') out.push({ ...common, kind: 'fn', name: `f${i}`, qpath: `${krate}::f${i}`, file: 'src/lib.rs', line_start: i, line_end: i + 2, visibility: 'pub', signature: `fn f${i}()`, parent: null });
    else if (kind === 'edge') out.push({ ...common, src: `n${i}`, dst: `n${i + 1}`, dst_path: `p::${i}`, dst_krate: krate, edge_kind: 'calls', file: 'src/lib.rs', line: i });
    else if (kind === 'pos') out.push({ ...common, entity: 'node', file: 'src/lib.rs', line: i + 1, col: 5 });
    else out.push({ ...common, path: `src/f${i}.rs`, hash: `h${i}`, size: BigInt(100 + i), parse_status: 'ok' });
  }
  return out;
}

const [root, appendsArg] = process.argv.slice(2);
if (!root) throw new Error('usage: log-populate.ts LAKE [APPENDS]');
const appends = Number(appendsArg ?? '2');
const lake = Lake.open(root, { create: false });
const log = await EventLog.open(lake);
for (let a = 0; a < appends; a++) {
  for (const kind of SOURCE_KINDS) await log.append(kind, [...rows(kind, UNIVERSE_REPO, 6, a * 6), ...rows(kind, 'acme', 4, a * 4)]);
}
log.close();
lake.close();
