// Shared test rows for the event-log tests: a node event with the common
// columns, and a canonical text form of a read row for multiset comparisons.
import type { Value } from '../../src/lake/spec/types.ts';

export const nodeRow = (repo: string, krate: string, id: string, op = 'add', name = id): Record<string, unknown> => ({
  repo,
  krate,
  run: 'run-1',
  ts: 1_700_000_000_000_000n,
  op,
  id,
  kind: 'fn',
  name,
});

/** A row as text, bigints marked, for sorting and comparing. */
export const canonRow = (r: Record<string, Value>): string => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
