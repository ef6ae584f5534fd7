// A lake made before node rows had `body_hash` (field 16) and the later
// columns: opening it as an event log adds every missing trailing column to
// both node tables with the ids schema.ts fixes, old rows read them as null,
// and ingest then records body hashes; a node table whose columns are not a
// prefix of the node schema is refused with a clear error, never renumbered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { Lake } from '../../src/lake/lake.ts';
import { EventLog } from '../../src/log/event-log.ts';
import { CODE_NODE_EVENTS, COL_BODY_HASH, EVENT_TABLE_PROPERTIES, PROP_RING, RING_SPLIT, ident, kindSchema, ringTableName } from '../../src/log/schema.ts';
import { ingest } from '../../src/ingest/index.ts';
import type { NestedField } from '../../src/lake/spec/types.ts';
import { scratch } from '../helpers.ts';
import { copyFixture } from './helpers.ts';

/** The node tables as the first release made them (fields 1..15), plus `extra` columns. */
async function oldLake(dir: string, extra: NestedField[] = []): Promise<string> {
  const root = path.join(dir, 'lake');
  const lake = Lake.open(root);
  const fields = [...kindSchema('node').fields.filter((f) => f.id < 16), ...extra];
  await lake.createTable(ident(ringTableName('node')), { schemaId: 0, fields }, { properties: { ...EVENT_TABLE_PROPERTIES } });
  await lake.createTable(ident(CODE_NODE_EVENTS), { schemaId: 0, fields }, { properties: { ...EVENT_TABLE_PROPERTIES, [PROP_RING]: RING_SPLIT } });
  lake.close();
  return root;
}

test('opening a lake whose node tables lack body_hash and later columns adds them with their fixed ids to both; ingest then writes it', async () => {
  const s = scratch('mimir-evolve-');
  try {
    const root = await oldLake(s.dir);
    const log = await EventLog.open(root);
    try {
      for (const name of [CODE_NODE_EVENTS, ringTableName('node')]) {
        const t = await log.lake.loadTable(ident(name));
        const f = t.schema.fields.find((x) => x.name === COL_BODY_HASH);
        assert.ok(f, `${name} has no ${COL_BODY_HASH}`);
        assert.equal(f.id, 16);
        assert.equal(f.type.type, 'string');
        assert.deepEqual(t.schema.fields.map((x) => [x.id, x.name]), kindSchema('node').fields.map((x) => [x.id, x.name]));
        assert.equal(t.metadata.lastColumnId, kindSchema('node').fields.at(-1)!.id);
      }
      const ws = copyFixture('ws', s.dir);
      const r = await ingest(log, ws, { repo: 'demo' });
      assert.ok(r.events.add > 0);
      const helper = await log.state('node', and(eq('repo', 'demo'), eq('qpath', 'alpha::helper')));
      assert.match(String([...helper.values()][0]![COL_BODY_HASH]), /^[0-9a-f]{16}$/);
    } finally {
      log.close();
    }
    // a second open finds the column and changes nothing
    const again = await EventLog.open(root);
    try {
      const t = await again.lake.loadTable(ident(CODE_NODE_EVENTS));
      assert.equal(t.metadata.schemas.length, 2);
    } finally {
      again.close();
    }
  } finally {
    s.cleanup();
  }
});

test('a node table with a column of its own where body_hash belongs is refused with a clear error', async () => {
  const s = scratch('mimir-evolve-');
  try {
    const root = await oldLake(s.dir, [{ id: 16, name: 'local_extra', required: false, type: { type: 'string' } }]);
    await assert.rejects(EventLog.open(root), /expected column body_hash as field 16 of type string, found local_extra as field 16/);
  } finally {
    s.cleanup();
  }
});
