// `mimir state rebuild`: the state tables refolded from the event log. The
// fold is taken at one generation G (a pinned read), group of crates by group
// of crates (memory bounded by the group budget); its rows replace exactly the
// files the tables held at G, in one multi-table commit whose new files carry
// the sequence numbers the tables had at G — so every run that committed
// after G stays newer: its rows are kept (and a lake made before position
// deletes: its equality deletes keep applying); a run after G whose position
// deletes name files the rebuild replaces would lose them, so the commit is
// refused then (DeletedFilesGone, nothing committed: run it again).
// When the groups leave overlapping files, a major maintenance pass then
// merges them into globally sorted files.
//
// A commit after G that changed the event tables without updating the state
// tables (a writer that started before they existed) would be lost: the
// commit checks the generation log for one and refuses ("run it again").
//
// code_keys is refolded in the crate-keyed layout (PROP_KEYS, schema.ts),
// and its commit sets the property: a lake made before it gets the layout
// here (its display columns added first, in a metadata commit of their own:
// rows written before read them as null). Switching layouts, the commit also
// refuses when code_keys changed after G (rows of the old layout would
// stay beside the fold's); runs that wrote the old layout and land after the
// switch fail their own check (delta.ts) and are redone.
// Crash story: files are written before the one commit; a crash leaves
// orphans for gc and the tables as they were (a crash after the columns'
// commit leaves them added and null, the layout unchanged: readable, and
// a rerun goes on from there); a rerun starts over.
// Idempotent: rebuilding a consistent lake rewrites the same rows.
import type { DataFile, NestedField, TableMetadata } from '../../lake/spec/types.ts';
import { addColumnsUpdate, type Table } from '../../lake/table/table.ts';
import { ValidationError, checkUpdate, type CommitTarget, type TableUpdate } from '../../lake/table/commit.ts';
import { identToString } from '../../lake/catalog/catalog.ts';
import { crashPoint } from '../../lake/testing/crash.ts';
import type { EventLog } from '../event-log.ts';
import { SOURCE_KINDS, ident, movesRowsOnly, qualified, ringTableName, tableName } from '../schema.ts';
import { CODE_KEYS, CODE_PATHS, KEYS_BY_CRATE, PROP_BUILDING, PROP_KEYS, STATE_TABLES, STATE_TABLE_PROPERTIES, keysLayout, stateSchema, stateSortOrder, type StateTable } from './schema.ts';
import { crateCounts, foldGroup, groupCrates } from './fold.ts';
import { sortedBatch } from './delta.ts';
import { maintainState } from './maintain.ts';

export interface RebuildOptions {
  /** Events folded at a time (bounds memory; default 400 000). */
  groupEvents?: number;
  onProgress?: (p: { done: number; total: number; krate: string }) => void;
  /**
   * The tables to refold (default every state table): `[code_paths]` builds
   * that one for a lake made before it (`mimir state maintain`), the others
   * untouched.
   */
  tables?: readonly StateTable[];
}

export interface RebuildReport {
  generation: bigint;
  /** Generation the rebuild committed. */
  committed: bigint;
  crates: number;
  groups: number;
  /** Rows written per rebuilt table. */
  rows: Partial<Record<StateTable, number>>;
  created: boolean;
  merged: boolean;
  ms: number;
}

/**
 * Create whichever state tables are missing (empty). Returns whether any was
 * created. `building`: the lake has events already, so a code_paths created
 * now is marked PROP_BUILDING until a rebuild's commit lands its fold (a new
 * lake's is complete as it is: empty).
 */
export async function createStateTables(log: EventLog, opts: { building?: boolean } = {}): Promise<boolean> {
  let created = false;
  for (const name of STATE_TABLES) {
    const id = ident(name);
    if (log.lake.tableExists(id)) continue;
    const building: Record<string, string> = opts.building === true && name === CODE_PATHS ? { [PROP_BUILDING]: 'true' } : {};
    // a code_keys created now is empty or about to be folded: in the crate-keyed layout
    const keys: Record<string, string> = name === CODE_KEYS ? { [PROP_KEYS]: KEYS_BY_CRATE } : {};
    try {
      await log.lake.createTable(id, stateSchema(name), { sortOrder: stateSortOrder(name), properties: { ...STATE_TABLE_PROPERTIES, ...building, ...keys } });
      created = true;
    } catch (e) {
      if (!log.lake.tableExists(id)) throw e; // created by another process meanwhile: fine
    }
  }
  return created;
}

export { hasStateTables } from './view.ts';

export async function rebuildState(log: EventLog, opts: RebuildOptions = {}): Promise<RebuildReport> {
  if (log.isPinned) throw new Error('a pinned read handle cannot rebuild the state tables');
  const t0 = Date.now();
  const created = await createStateTables(log, { building: true });
  const which = opts.tables ?? STATE_TABLES;
  if (which.includes(CODE_KEYS)) await addKeyColumns(log);
  const g = log.lake.catalog.pointerGeneration();
  const pin = log.pin({ generation: g });
  const tables = new Map<StateTable, Table>();
  const written = new Map<StateTable, { file: DataFile; specId: number }[]>(which.map((t) => [t, []]));
  const rows = Object.fromEntries(which.map((t) => [t, 0])) as Record<StateTable, number>;
  const all = (): string[] => [...written.values()].flat().map((f) => f.file.filePath);
  try {
    for (const t of which) tables.set(t, await log.lake.loadTable(ident(t)));
    const counts = await crateCounts(pin, g);
    const groups = groupCrates(counts, opts.groupEvents ?? 400_000);
    let done = 0;
    for (const group of groups) {
      opts.onProgress?.({ done, total: counts.size, krate: group[0]!.krate });
      const folded = await foldGroup(pin, g, group, which, 'krate');
      for (const [t, list] of folded) {
        if (list.length === 0) continue;
        written.get(t)!.push(...(await tables.get(t)!.writeDataFiles([sortedBatch(t, list)])));
        rows[t] += list.length;
        crashPoint('state-rebuild:file-written');
      }
      folded.clear();
      done += group.length;
    }
    const committed = await log.commit('state rebuild', async () => {
      const targets: Omit<CommitTarget, 'io'>[] = [];
      for (const t of which) {
        const at = await pin.table(t, g);
        const snap = at?.currentSnapshot();
        const live = at && snap ? (await at.liveFiles()).map((f) => f.file.filePath) : [];
        const seq = snap?.sequenceNumber ?? 0n;
        const table = tables.get(t)!;
        const update = table.rewriteUpdate(live, written.get(t)!, [], { dataSequenceNumber: seq }, { 'mimir.state': 'rebuild' });
        const keyed = t === CODE_KEYS ? crateKeyed(update, at && keysLayout(at.properties) === 'krate' ? undefined : (snap?.snapshotId ?? null)) : update;
        targets.push({ ident: ident(t), update: t === CODE_PATHS ? built(update) : keyed });
      }
      for (const guard of await eventGuards(log, g, which)) targets.push(guard);
      crashPoint('state-rebuild:before-commit');
      return (await log.lake.commit(targets, 'state rebuild')).generation;
    });
    const overlapping = groups.length > 1;
    if (overlapping) await maintainState(log, { force: true, tables: [...which] });
    return { generation: g, committed, crates: counts.size, groups: groups.length, rows, created, merged: overlapping, ms: Date.now() - t0 };
  } catch (e) {
    for (const p of all()) await log.lake.io.delete(p).catch(() => undefined);
    if (e instanceof ValidationError) {
      throw new Error(`state rebuild: the state tables changed under the rebuild (${e.message}); nothing committed — run it again`);
    }
    throw e;
  } finally {
    pin.close();
  }
}

/** The update, and the table no longer marked as being built (code_paths: its fold lands with it). */
function built(update: TableUpdate): TableUpdate {
  return {
    apply: async (base, attempt) => {
      const m = await update.apply(base, attempt);
      const { [PROP_BUILDING]: _gone, ...properties } = m.properties;
      return { ...m, properties };
    },
    attemptFiles: () => update.attemptFiles(),
    sharedFiles: () => update.sharedFiles(),
  };
}

/**
 * The update, and code_keys marked crate-keyed (its fold's layout). `switchFrom`:
 * the snapshot id code_keys had at the folded generation when it was in the
 * other layout (null: no snapshot) — the table must not have changed since.
 */
function crateKeyed(update: TableUpdate, switchFrom: bigint | null | undefined): TableUpdate {
  return {
    apply: async (base, attempt) => {
      if (switchFrom !== undefined && (base.currentSnapshotId ?? null) !== switchFrom) {
        throw new ValidationError(`${CODE_KEYS} was written in its former layout after the generation folded`);
      }
      const m = await update.apply(base, attempt);
      return { ...m, properties: { ...m.properties, [PROP_KEYS]: KEYS_BY_CRATE } };
    },
    attemptFiles: () => update.attemptFiles(),
    sharedFiles: () => update.sharedFiles(),
  };
}

/**
 * code_keys made before its display columns (a lake made before the
 * crate-keyed layout): the missing trailing columns added with the ids
 * schema.ts fixes, in a metadata commit (nothing else changes; checked again
 * inside the commit).
 */
async function addKeyColumns(log: EventLog): Promise<void> {
  const want = stateSchema(CODE_KEYS).fields;
  const where = `table ${qualified(CODE_KEYS)} of the lake at ${log.lake.root}`;
  const missing = (m: TableMetadata): NestedField[] => {
    const have = m.schemas.find((x) => x.schemaId === m.currentSchemaId)?.fields ?? [];
    for (const [i, h] of have.entries()) {
      const w = want[i];
      if (!w || w.id !== h.id || w.name !== h.name) throw new Error(`${where}: column ${h.name} (field ${h.id}) is not field ${i + 1} of the code_keys schema (${w ? `${w.name}, ${w.id}` : 'none'}); not evolved, nothing rebuilt`);
    }
    const rest = want.slice(have.length);
    if (rest.length > 0 && m.lastColumnId !== rest[0]!.id - 1) {
      throw new Error(`${where}: its last column id is ${m.lastColumnId}, expected ${rest[0]!.id - 1} so that ${rest[0]!.name} gets id ${rest[0]!.id}; not evolved, nothing rebuilt`);
    }
    return rest;
  };
  const table = await log.lake.loadTable(ident(CODE_KEYS));
  const rest = missing(table.metadata);
  if (rest.length === 0) return;
  const names = rest.map((f) => f.name).join(', ');
  await log.commit(`add ${names} to ${CODE_KEYS}`, () =>
    table.commit({
      apply: async (base, attempt) => {
        const now = missing(base);
        return now.length === 0 ? base : addColumnsUpdate(now.map((f) => ({ name: f.name, type: f.type }))).apply(base, attempt);
      },
      attemptFiles: () => [],
      sharedFiles: () => [],
    }, `add columns ${names}`),
  );
}

/**
 * Assert-only targets on every event table: each must still be where it is
 * now, and no generation after `g` may have changed one without updating the
 * rebuilt state tables (its changes would be in neither the fold nor the
 * tables: a writer that opened its delta before a table existed).
 */
async function eventGuards(log: EventLog, g: bigint, which: readonly StateTable[]): Promise<Omit<CommitTarget, 'io'>[]> {
  const stateNames = new Set(which.filter((t) => t !== CODE_PATHS).map((t) => qualified(t)));
  const eventNames = new Set(SOURCE_KINDS.flatMap((k) => [qualified(tableName(k)), qualified(ringTableName(k))]));
  const nodeNames = new Set([qualified(tableName('node')), qualified(ringTableName('node'))]);
  const now = log.lake.catalog.pointerGeneration();
  for (const gen of now > g ? log.lake.catalog.generations({ limit: Number(now - g), before: now + 1n }) : []) {
    if (gen.generation <= g) break;
    if (movesRowsOnly(gen.note)) continue; // compaction, ring moves: the same events
    const touched = gen.tables.map((t) => identToString(t.ident));
    // code_paths: a commit of node events that did not touch it may have carried a pair it lacks
    // (conservative: one whose pairs the table held already is refused too — run it again)
    const pathsMissed = which.includes(CODE_PATHS) && touched.some((t) => nodeNames.has(t)) && !touched.includes(qualified(CODE_PATHS));
    const stateMissed = stateNames.size > 0 && touched.some((t) => eventNames.has(t)) && !touched.some((t) => stateNames.has(t));
    if (pathsMissed || stateMissed) {
      throw new Error(
        `state rebuild: generation ${gen.generation} (${gen.note ?? 'no note'}) changed the event log without updating the state tables while the rebuild folded generation ${g}; nothing committed — run it again`,
      );
    }
  }
  const out: Omit<CommitTarget, 'io'>[] = [];
  for (const k of SOURCE_KINDS) {
    for (const name of [tableName(k), ringTableName(k)]) {
      const t = await log.table(name);
      if (!t) continue;
      const seen = t.metadata.currentSnapshotId;
      out.push({
        ident: ident(name),
        assertOnly: true,
        update: checkUpdate((base) => {
          if (base.currentSnapshotId !== seen) throw new ValidationError(`${qualified(name)} changed after the check`);
        }),
      });
    }
  }
  return out;
}
