// Reading the state tables at one lake generation: the lookups questions
// make (nodes by name or name prefix, keys by path or id, edges by target
// name or by source, files by crate) as filtered scans that prune on the
// tables' sort columns — file bounds, row-group statistics, page indexes —
// with the equality deletes applied. A view is fixed to one generation, so
// every lookup of one question sees one state: each table's metadata
// location is the one the generation log gives for that generation, read
// even when it is the current one (a commit elsewhere may land between any
// two catalog reads; a table's current pointer read after it would be a
// later generation's). Read-only.
import type { Expr } from '../../lake/expr/expr.ts';
import { and, eq, inList, isNull, or } from '../../lake/expr/expr.ts';
import { Table } from '../../lake/table/table.ts';
import { readMetadata } from '../../lake/table/commit.ts';
import { pausePoint } from '../../lake/testing/pause.ts';
import type { Value } from '../../lake/spec/types.ts';
import type { EventLog } from '../event-log.ts';
import { ident, qualified } from '../schema.ts';
import { CODE_EDGES_IN, CODE_EDGES_OUT, CODE_FILES, CODE_KEYS, CODE_NODES, CODE_PATHS, CORE_STATE_TABLES, KEY_NODE_COLUMNS, PROP_BUILDING, STATE_TABLES, idKey, keysLayout, type KeysLayout, type StateTable } from './schema.ts';

export type Row = Record<string, Value>;

/**
 * A node looked up by id, with the crate it lives in: an edge's `src` is in
 * the edge's `krate`, its `dst` in its `dst_krate` (ids hash their crate:
 * the extractor names the crate it computed a target's id in), an event's id
 * in the event's `krate`. In the crate-keyed layout a node is found only
 * under its own crate.
 */
export interface NodeRef {
  id: string;
  krate: string;
}

/** Above this many values an IN list is split into several scans' worth of lists (each prunes on its own range). */
const IN_CHUNK = 4000;

/** Does the lake have every core state table (now, or at `generation`)? (code_paths is optional.) */
export function hasStateTables(log: EventLog, generation?: bigint): boolean {
  if (generation === undefined) return CORE_STATE_TABLES.every((t) => log.lake.tableExists(ident(t)));
  const at = log.lake.catalog.pointersAt(generation);
  return CORE_STATE_TABLES.every((t) => at.has(qualified(t)));
}

export class StateView {
  private readonly loaded = new Map<StateTable, Promise<Table>>();

  private constructor(
    private readonly log: EventLog,
    readonly generation: bigint,
    /** Metadata location of each table at the generation. */
    private readonly locations: ReadonlyMap<StateTable, string>,
    private readonly current: boolean,
  ) {}

  private pathsUsable: Promise<boolean> | undefined;

  /**
   * The state tables as the lake held them at `generation` (default: the
   * handle's read generation). Undefined when any of them did not exist then,
   * or its metadata file is gone (expired), or the handle reads that
   * generation by runs (EventLog.runsReadOf): the caller folds the log. Tables
   * are loaded on first use.
   */
  static async open(log: EventLog, generation?: bigint): Promise<StateView | undefined> {
    const g = generation ?? log.readGeneration();
    // a generation read from the log by runs (its snapshots expired) never uses the state tables
    if (await log.runsReadOf(g)) return undefined;
    const catalog = log.lake.catalog;
    // `current` only spares the checks that g's files are still there; the
    // pointers are always g's, from the generation log — never the tables'
    // current ones: another process may commit between any two reads here,
    // and a current pointer read after it is a later generation's (an answer
    // naming g with the edges of g+1 and the nodes of g)
    const current = g === catalog.pointerGeneration();
    const locations = new Map<StateTable, string>();
    for (const name of STATE_TABLES) {
      const held = pausePoint(`state-view:pointer ${name}`); // a race test holds a read here (lake/testing/pause.ts)
      if (held) await held;
      const loc = catalog.pointerAt(ident(name), g);
      if (loc) locations.set(name, loc);
      else if (CORE_STATE_TABLES.includes(name)) return undefined;
    }
    const view = new StateView(log, g, locations, current);
    if (!current) {
      // the past: its metadata, or the snapshot it names, may have been expired by gc
      for (const name of CORE_STATE_TABLES) if (!(await view.readable(name))) return undefined;
    }
    return view;
  }

  /** The table's metadata at the generation and the snapshot it names are still there. */
  private async readable(name: StateTable): Promise<boolean> {
    if (!(await this.log.lake.io.exists(this.locations.get(name)!))) return false;
    const snap = (await this.table(name)).currentSnapshot();
    return !snap || (await this.log.lake.io.exists(snap.manifestList));
  }

  /**
   * Whether the view can answer from code_paths: the lake had it at the
   * generation, built (not PROP_BUILDING), and not expired there. Checked on
   * first use (a question that never asks costs nothing).
   */
  hasPaths(): Promise<boolean> {
    this.pathsUsable ??= (async () => {
      if (!this.locations.has(CODE_PATHS)) return false;
      if (!this.current && !(await this.readable(CODE_PATHS))) return false;
      return (await this.table(CODE_PATHS)).properties[PROP_BUILDING] === undefined;
    })();
    return this.pathsUsable;
  }

  /** A table as of the view's generation (read-only unless the view is of the current generation). */
  table(name: StateTable): Promise<Table> {
    let t = this.loaded.get(name);
    if (!t) {
      const loc = this.locations.get(name)!;
      const { io, catalog } = this.log.lake;
      t = readMetadata(io, loc).then((m) => new Table(io, loc, m, catalog, ident(name), `a view of lake generation ${this.generation}`));
      this.loaded.set(name, t);
    }
    return t;
  }

  /** Rows of one table matching `filter` (all columns, or `columns`). */
  async rows(name: StateTable, filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return (await this.table(name)).scan({ filter, columns }).toArray();
  }

  private layout: Promise<KeysLayout> | undefined;

  /** How code_keys lays out its `id` rows at the view's generation (its PROP_KEYS). */
  keysLayout(): Promise<KeysLayout> {
    this.layout ??= this.table(CODE_KEYS).then((t) => keysLayout(t.properties));
    return this.layout;
  }

  /**
   * Live node rows by id (all columns, or `columns`), keyed by id: their `id`
   * rows of code_keys — by (krate, id) in the crate-keyed layout, where those
   * rows carry what `columns` asks when it is within KEY_NODE_COLUMNS (then
   * code_nodes is not read) — else their names from there, then code_nodes by
   * (name, id).
   */
  async nodesById(refs: Iterable<NodeRef>, columns?: string[]): Promise<Map<string, Row>> {
    const layout = await this.keysLayout();
    const krateOf = new Map<string, string>();
    for (const r of refs) if (!krateOf.has(r.id)) krateOf.set(r.id, r.krate);
    const want = [...krateOf].map(([id, krate]) => idKey(layout, krate, id));
    const direct = layout === 'krate' && columns !== undefined && columns.every((c) => KEY_NODE_COLUMNS.includes(c));
    const out = new Map<string, Row>();
    for (let i = 0; i < want.length; i += IN_CHUNK) {
      const filter = and(inList('key', want.slice(i, i + IN_CHUNK)), eq('via', 'id'));
      if (direct) {
        for (const r of await this.rows(CODE_KEYS, filter, withId(columns))) out.set(r.id as string, r);
        continue;
      }
      const keys = await this.rows(CODE_KEYS, filter, ['id', 'name']);
      for (const [id, r] of await this.nodesOfKeys(keys, columns)) out.set(id, r);
    }
    return out;
  }

  /**
   * Live node rows of code_keys rows (their `id` and `name`, as any key row
   * of a node carries them): code_nodes by (name, id), without looking the
   * ids up in code_keys again.
   */
  async nodesOfKeys(keys: Row[], columns?: string[]): Promise<Map<string, Row>> {
    const out = new Map<string, Row>();
    for (let i = 0; i < keys.length; i += IN_CHUNK) {
      const chunk = keys.slice(i, i + IN_CHUNK);
      const names = [...new Set(chunk.map((k) => k.name).filter((n): n is string => typeof n === 'string'))];
      const nameless = chunk.some((k) => k.name === null || k.name === undefined);
      const found = [...new Set(chunk.map((k) => k.id as string))];
      if (found.length === 0) continue;
      const byName = names.length > 0 ? await this.rows(CODE_NODES, byNameAndId(chunk, names, found), withId(columns)) : [];
      for (const r of byName) out.set(r.id as string, r);
      if (nameless) for (const r of await this.rows(CODE_NODES, and(isNull('name'), inList('id', found)), withId(columns))) out.set(r.id as string, r);
    }
    return out;
  }

  /** Live edges by id (no index by edge id: a scan of the id column; for writers' rare lookups, not questions). */
  async edgesById(ids: Iterable<string>): Promise<Map<string, Row>> {
    const want = [...new Set(ids)];
    const out = new Map<string, Row>();
    for (let i = 0; i < want.length; i += IN_CHUNK) {
      for (const r of await this.rows(CODE_EDGES_OUT, inList('id', want.slice(i, i + IN_CHUNK)))) out.set(r.id as string, r);
    }
    return out;
  }

  // `columns`: the columns to read (all when absent) — a question reads only
  // what its answer shows, so a point lookup decodes few pages
  nodes(filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return this.rows(CODE_NODES, filter, columns);
  }
  keys(filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return this.rows(CODE_KEYS, filter, columns);
  }
  edgesIn(filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return this.rows(CODE_EDGES_IN, filter, columns);
  }
  edgesOut(filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return this.rows(CODE_EDGES_OUT, filter, columns);
  }
  files(filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return this.rows(CODE_FILES, filter, columns);
  }
  /** code_paths rows (check `hasPaths()` first). */
  paths(filter: Expr | undefined, columns?: string[]): Promise<Row[]> {
    return this.rows(CODE_PATHS, filter, columns);
  }
}

/** Above this many names, (name, id) pairs are looked up as `name IN … and id IN …` (one predicate each). */
const PAIRS_MAX = 64;

/**
 * The code_nodes filter for the named key rows: per name, `name = n and id IN
 * (its ids)` — code_nodes is sorted by (name, id), so each pair is a page or
 * two, where `name IN names and id IN ids` would also read the pages of one
 * name that hold another name's ids (cross pairs) — or, for many names, that.
 */
function byNameAndId(keys: Row[], names: string[], ids: string[]): Expr {
  if (names.length > PAIRS_MAX) return and(inList('name', names), inList('id', ids));
  const of = new Map<string, Set<string>>(names.map((n) => [n, new Set()]));
  for (const k of keys) if (typeof k.name === 'string') of.get(k.name)!.add(k.id as string);
  const pairs = names.map((n) => and(eq('name', n), inList('id', [...of.get(n)!])));
  return pairs.length === 1 ? pairs[0]! : or(...pairs);
}

/** `columns` with `id` (nodesById keys its answer by it). */
function withId(columns: string[] | undefined): string[] | undefined {
  return columns === undefined || columns.includes('id') ? columns : [...columns, 'id'];
}
