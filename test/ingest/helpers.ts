// Helpers for the ingest tests: a fresh lake, a copy of a fixture workspace
// to edit, and the events one run wrote.
import { cpSync } from 'node:fs';
import * as path from 'node:path';
import { eq } from '../../src/lake/expr/expr.ts';
import type { Value } from '../../src/lake/spec/types.ts';
import { EventLog } from '../../src/log/event-log.ts';
import type { Kind } from '../../src/log/schema.ts';
import { repoRoot, scratch } from '../helpers.ts';

export const fixtures = path.join(repoRoot, 'test', 'ingest', 'fixtures');

export async function freshLake(): Promise<{ log: EventLog; dir: string; cleanup: () => void }> {
  const s = scratch('mimir-ingest-');
  const log = await EventLog.open(path.join(s.dir, 'lake'));
  return { log, dir: s.dir, cleanup: () => { log.close(); s.cleanup(); } };
}

/** Copy fixture `name` into `dir` and return the copy's path. */
export function copyFixture(name: string, dir: string): string {
  const dst = path.join(dir, name);
  cpSync(path.join(fixtures, name), dst, { recursive: true });
  return dst;
}

/** The rows of one kind written by run `run`. */
export async function runRows(log: EventLog, kind: Kind, run: string): Promise<Record<string, Value>[]> {
  return log.rows(kind, { filter: eq('run', run) });
}

export async function countRunEvents(log: EventLog, run: string): Promise<number> {
  let n = 0;
  for (const k of ['node', 'edge', 'file'] as const) n += (await runRows(log, k, run)).length;
  return n;
}
