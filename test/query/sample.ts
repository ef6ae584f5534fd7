// A sample lake for the query tests, written through EventLog.append with rows
// shaped as ingest writes them: one universe crate (regex@1.10.0) and two repos
// (alpha, beta) that both call `regex::Regex::new` — alpha through a resolved
// id, beta through the path only — plus one item of alpha (`alpha::helper`)
// that is added, changed and removed in three later generations.
import { EventLog, type EventRow } from '../../src/log/event-log.ts';
import { UNIVERSE_REPO, ident } from '../../src/log/schema.ts';
import { CODE_KEYS, PROP_KEYS, stateSchema } from '../../src/log/state/schema.ts';
import { metadataUpdate } from '../../src/lake/table/commit.ts';

export const REGEX = 'regex@1.10.0';
export const U_NEW = 'u-regex-new';
export const U_REGEX = 'u-regex-struct';
export const A_MAIN = 'a-main';
export const A_HELPER = 'a-helper';
export const B_CHECK = 'b-check';
export const B_MOD = 'b-mod';

let tick = 0n;
const ts = (): bigint => 1_700_000_000_000_000n + tick++;

export function node(repo: string, krate: string, id: string, qpath: string, o: Partial<{ op: string; kind: string; file: string; line: number; signature: string; parent: string | null }> = {}): EventRow {
  const line = o.line ?? 1;
  return {
    repo, krate, run: 'run-test', ts: ts(), op: o.op ?? 'add', id,
    kind: o.kind ?? 'fn', name: qpath.split('::').pop(), qpath, file: o.file ?? 'src/lib.rs',
    line_start: line, line_end: line + 3, visibility: 'pub', signature: o.signature ?? `fn ${qpath.split('::').pop()}()`, parent: o.parent ?? null,
  };
}

export function edge(repo: string, krate: string, id: string, src: string, dst: string | null, dstPath: string, kind: string, file: string, line: number, o: Partial<{ op: string; dstKrate: string | null }> = {}): EventRow {
  return { repo, krate, run: 'run-test', ts: ts(), op: o.op ?? 'add', id, src, dst, dst_path: dstPath, dst_krate: o.dstKrate ?? null, edge_kind: kind, file, line };
}

export interface Sample {
  log: EventLog;
  /** Generation after the base graph, after helper's add, change and remove. */
  base: bigint;
  added: bigint;
  changed: bigint;
  removed: bigint;
}

/**
 * A new lake's (empty) code_keys made as a lake of main a715b8e had it: its 7
 * columns, no PROP_KEYS (id rows keyed by id, no display columns).
 */
export async function formerKeys(log: EventLog): Promise<void> {
  const t = await log.lake.loadTable(ident(CODE_KEYS));
  if (t.currentSnapshot()) throw new Error('formerKeys: code_keys has rows already');
  const fields = stateSchema(CODE_KEYS).fields.slice(0, 7);
  await t.commit(metadataUpdate((base) => {
    const { [PROP_KEYS]: _gone, ...properties } = base.properties;
    return { ...base, schemas: [{ schemaId: 0, fields }], currentSchemaId: 0, lastColumnId: 7, properties };
  }), 'former code_keys');
}

/** `formerKeys`: code_keys in the layout of lakes made before the crate-keyed one. */
export async function sampleLake(dir: string, opts: { formerKeys?: boolean } = {}): Promise<Sample> {
  const log = await EventLog.open(dir);
  if (opts.formerKeys) await formerKeys(log);
  await log.append('node', [
    node(UNIVERSE_REPO, REGEX, U_REGEX, 'regex::regex::string::Regex', { kind: 'struct', file: 'src/regex/string.rs', line: 100 }),
    node(UNIVERSE_REPO, REGEX, U_NEW, 'regex::regex::string::Regex::new', { kind: 'method', file: 'src/regex/string.rs', line: 180, parent: U_REGEX }),
    node('alpha', 'alpha@0.1.0', A_MAIN, 'alpha::main', { file: 'src/main.rs', line: 3 }),
    node('beta', 'beta@0.2.0', B_MOD, 'beta::util', { kind: 'module', file: 'src/util.rs', line: 1 }),
    node('beta', 'beta@0.2.0', B_CHECK, 'beta::util::check', { file: 'src/util.rs', line: 10, parent: B_MOD }),
  ]);
  await log.append('edge', [
    edge('alpha', 'alpha@0.1.0', 'e-a-call', A_MAIN, U_NEW, 'regex::regex::string::Regex::new', 'calls', 'src/main.rs', 5, { dstKrate: REGEX }),
    edge('beta', 'beta@0.2.0', 'e-b-call', B_CHECK, null, 'regex::Regex::new', 'calls', 'src/util.rs', 12, { dstKrate: REGEX }),
    edge('beta', 'beta@0.2.0', 'e-b-use', B_MOD, null, 'regex::Regex::new', 'uses', 'src/util.rs', 2, { dstKrate: REGEX }),
    edge('beta', 'beta@0.2.0', 'e-b-contains', B_MOD, B_CHECK, 'beta::util::check', 'contains', 'src/util.rs', 10),
    edge(UNIVERSE_REPO, REGEX, 'e-u-contains', U_REGEX, U_NEW, 'regex::regex::string::Regex::new', 'contains', 'src/regex/string.rs', 180),
  ]);
  const base = log.readGeneration();
  await log.append('node', [node('alpha', 'alpha@0.1.0', A_HELPER, 'alpha::helper', { file: 'src/main.rs', line: 20 })]);
  await log.append('edge', [edge('alpha', 'alpha@0.1.0', 'e-a-helper-call', A_HELPER, U_NEW, 'regex::regex::string::Regex::new', 'calls', 'src/main.rs', 21, { dstKrate: REGEX })]);
  const added = log.readGeneration();
  await log.append('node', [node('alpha', 'alpha@0.1.0', A_HELPER, 'alpha::helper', { op: 'change', file: 'src/main.rs', line: 30, signature: 'fn helper(x: u8)' })]);
  await log.append('edge', [edge('alpha', 'alpha@0.1.0', 'e-a-helper-call', A_HELPER, U_NEW, 'regex::regex::string::Regex::new', 'calls', 'src/main.rs', 31, { op: 'change', dstKrate: REGEX })]);
  const changed = log.readGeneration();
  // a remove row carries only what every row has: the fold must not depend on the other columns
  await log.append('node', [{ repo: 'alpha', krate: 'alpha@0.1.0', run: 'run-test', ts: ts(), op: 'remove', id: A_HELPER }]);
  await log.append('edge', [{ repo: 'alpha', krate: 'alpha@0.1.0', run: 'run-test', ts: ts(), op: 'remove', id: 'e-a-helper-call' }]);
  const removed = log.readGeneration();
  return { log, base, added, changed, removed };
}
