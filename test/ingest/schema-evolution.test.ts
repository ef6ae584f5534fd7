// A lake made before node rows had `body_hash` (field 16): opening it as an
// event log adds the column to both node tables with id 16, old rows read it
// as null, and ingest then records body hashes; a node table whose next free
// column id is not 16 is refused with a clear error, never renumbered.
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
  const fields = [...kindSchema('node').fields.filter((f) => f.name !== COL_BODY_HASH), ...extra];
  await lake.createTable(ident(ringTableName('node')), { schemaId: 0, fields }, { properties: { ...EVENT_TABLE_PROPERTIES } });
  await lake.createTable(ident(CODE_NODE_EVENTS), { schemaId: 0, fields }, { properties: { ...EVENT_TABLE_PROPERTIES, [PROP_RING]: RING_SPLIT } });
  lake.close();
  return root;
}

test('opening a lake whose node tables lack body_hash adds it as field 16 to both; ingest then writes it', async () => {
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
        assert.equal(t.metadata.lastColumnId, 16);
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

test('a node table without body_hash whose last column id is not 15 is refused with a clear error', async () => {
  const s = scratch('mimir-evolve-');
  try {
    const root = await oldLake(s.dir, [{ id: 16, name: 'local_extra', required: false, type: { type: 'string' } }]);
    await assert.rejects(EventLog.open(root), /has no column body_hash and its last column id is 16, expected 15/);
  } finally {
    s.cleanup();
  }
});
