// The small two-column table (repo string, id long) that the lake tests write:
// its schema and a batch of `n` consecutive ids for one repo.
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';

export const REPO_ID_SCHEMA: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
  ],
};

/** Rows (repo, from), (repo, from + 1), … — `n` of them. */
export function repoIdBatch(repo: string, from: number, n: number): Batch {
  const rows: Value[][] = Array.from({ length: n }, (_, i) => [repo, BigInt(from + i)]);
  return { fields: REPO_ID_SCHEMA.fields, numRows: n, columns: [rows.map((r) => r[0]!), rows.map((r) => r[1]!)] };
}
