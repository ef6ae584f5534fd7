// Every name of the event log: namespace, tables, columns, properties and
// their values. Nothing else in Mimir spells them. Each source kind (node,
// edge, file, pos) has a source table and a ring table with the same schema
// and field ids; `ingest_runs` has no ring. `pos` rows record where a node or
// an edge sits (docs/design.md, "Events vs positions"). Field ids are fixed here forever:
// files written by any version read by id.
import type { NestedField, Schema } from '../lake/spec/types.ts';
import type { TableIdent } from '../lake/catalog/catalog.ts';

export const NAMESPACE = 'mimir';
/** The `repo` of every ring row: the dependency crates shared by all repos. */
export const UNIVERSE_REPO = '@universe';
/** Table property on the node source table that says the lake is split. */
export const PROP_RING = 'mimir.ring';
export const RING_SPLIT = 'split';
/**
 * Table property on the node source table set while a ring split or unsplit
 * makes its final catch-up and switch: the catalog lease id (decimal) of the
 * process holding it. Appends wait while that lease is live; a freeze whose
 * lease is dead (the holder was killed) is ignored, and cleared by the next
 * split or unsplit.
 */
export const PROP_RING_FREEZE = 'mimir.ring.freeze';

/**
 * Table property: `false` turns off the maintenance ingest runs after each
 * run for this table (log/maintain.ts); anything else (or absent) = on.
 */
export const PROP_MAINTAIN = 'mimir.maintain';
/**
 * Table property: how many small files (files no compaction wrote) a table may
 * hold before the maintenance after a run compacts it (default
 * DEFAULT_MAINTAIN_SMALL_FILES).
 */
export const PROP_MAINTAIN_SMALL_FILES = 'mimir.maintain.small-files';
export const DEFAULT_MAINTAIN_SMALL_FILES = 16;

export type Kind = 'node' | 'edge' | 'file' | 'pos';
/** The kinds that have a ring table. */
export const SOURCE_KINDS: readonly Kind[] = ['node', 'edge', 'file', 'pos'];
/** The kinds whose rows have a position (a `pos` row names one of them in `entity`). */
export type Entity = 'node' | 'edge';

export const CODE_NODE_EVENTS = 'code_node_events';
export const CODE_EDGE_EVENTS = 'code_edge_events';
export const CODE_FILE_EVENTS = 'code_file_events';
export const CODE_POSITION_EVENTS = 'code_position_events';
export const INGEST_RUNS = 'ingest_runs';
const RING_SUFFIX = '_ring';

const SOURCE_TABLE: Record<Kind, string> = { node: CODE_NODE_EVENTS, edge: CODE_EDGE_EVENTS, file: CODE_FILE_EVENTS, pos: CODE_POSITION_EVENTS };

export function tableName(kind: Kind): string {
  return SOURCE_TABLE[kind];
}
export function ringTableName(kind: Kind): string {
  return SOURCE_TABLE[kind] + RING_SUFFIX;
}
export function ident(name: string): TableIdent {
  return { namespace: [NAMESPACE], name };
}
export function qualified(name: string): string {
  return `${NAMESPACE}.${name}`;
}

// ---- crates of a package ------------------------------------------------------

/** A crate made of one non-library target of its package (a repo's tests, examples, benches, build script). */
export type TargetKind = 'test' | 'example' | 'bench' | 'build';
export const TARGET_KINDS: readonly TargetKind[] = ['test', 'example', 'bench', 'build'];

/**
 * The krate of a package's target crate: `name@version/<kind>/<target>`
 * (`ripgrep@14.1.0/test/integration`); the package's own lib and bins are
 * `name@version`. The one place that spells it (with `targetKindOf`).
 */
export function targetKrate(pkgKrate: string, kind: TargetKind, target: string): string {
  return `${pkgKrate}/${kind}/${target}`;
}

/** The target kind a krate is flagged with (null: a package's lib/bin crate, or a universe crate). */
export function targetKindOf(krate: string): TargetKind | null {
  const at = krate.lastIndexOf('@');
  const m = /^[^/]*\/(test|example|bench|build)\/[^/]+$/.exec(at < 0 ? krate : krate.slice(at));
  return m ? (m[1] as TargetKind) : null;
}

// ---- columns -----------------------------------------------------------------

export const COL_REPO = 'repo';
export const COL_KRATE = 'krate';
export const COL_RUN = 'run';
export const COL_TS = 'ts';
export const COL_OP = 'op';
export const COL_ID = 'id';
/** Node column 16 (added by schema evolution; see NODE). */
export const COL_BODY_HASH = 'body_hash';
/** Pos column 7: `node` or `edge`. */
export const COL_ENTITY = 'entity';

export type Op = 'add' | 'change' | 'remove';
export const OPS: readonly Op[] = ['add', 'change', 'remove'];

const str = (id: number, name: string, required = false): NestedField => ({ id, name, required, type: { type: 'string' } });
const int = (id: number, name: string): NestedField => ({ id, name, required: false, type: { type: 'int' } });
const long = (id: number, name: string): NestedField => ({ id, name, required: false, type: { type: 'long' } });

/** Columns every source row has (ids 1..6). */
const COMMON: NestedField[] = [
  str(1, COL_REPO, true),
  str(2, COL_KRATE, true),
  str(3, COL_RUN, true),
  { id: 4, name: COL_TS, required: true, type: { type: 'timestamptz' } },
  str(5, COL_OP, true),
  str(6, COL_ID, true),
];

const NODE: NestedField[] = [
  ...COMMON,
  str(7, 'kind'),
  str(8, 'name'),
  str(9, 'qpath'),
  str(10, 'file'),
  int(11, 'line_start'),
  int(12, 'line_end'),
  str(13, 'visibility'),
  str(14, 'signature'),
  str(15, 'parent'),
  // Added after the first release: a lake made before a column existed gains
  // it on open (EventLog.ensureTables adds missing trailing columns in id
  // order); its older rows read null. See docs/design.md for their meaning.
  str(16, COL_BODY_HASH),
  int(17, 'col'),
  str(18, 'origin'),
  str(19, 'public_paths'),
  str(20, 'type_info'),
];

const EDGE: NestedField[] = [
  ...COMMON,
  str(7, 'src'),
  str(8, 'dst'),
  str(9, 'dst_path'),
  str(10, 'dst_krate'),
  str(11, 'edge_kind'),
  str(12, 'file'),
  int(13, 'line'),
  // added later (see NODE)
  int(14, 'col'),
  str(15, 'unresolved_reason'),
  str(16, 'origin'),
  str(17, 'dispatch'),
];

const FILE: NestedField[] = [
  ...COMMON, str(7, 'path'), str(8, 'hash'), long(9, 'size'), str(10, 'parse_status'),
  // added later (see NODE)
  str(11, 'crate_dir'),
  // on a crate's `Cargo.toml` row: `test` | `example` | `bench` | `build` for a crate made of
  // one such target of its package (see targetKindOf); null for the package's lib/bin crate
  str(12, 'target_kind'),
];

/**
 * Where a node or an edge sits, written when that differs from where it sat
 * (a line shift writes these, no node or edge event). `line` is a node's
 * first line or an edge's line; columns are 1-based; `line_end`/`col_end`
 * null when unknown.
 */
const POS: NestedField[] = [
  ...COMMON,
  str(7, COL_ENTITY),
  str(8, 'file'),
  int(9, 'line'),
  int(10, 'col'),
  int(11, 'line_end'),
  int(12, 'col_end'),
];

const SCHEMAS: Record<Kind, Schema> = {
  node: { schemaId: 0, fields: NODE },
  edge: { schemaId: 0, fields: EDGE },
  file: { schemaId: 0, fields: FILE },
  pos: { schemaId: 0, fields: POS },
};

export function kindSchema(kind: Kind): Schema {
  return SCHEMAS[kind];
}

export const INGEST_RUNS_SCHEMA: Schema = {
  schemaId: 0,
  fields: [
    str(1, 'run', true),
    str(2, 'repo', true),
    str(3, 'rev'),
    { id: 4, name: 'started', required: true, type: { type: 'timestamptz' } },
    { id: 5, name: 'finished', required: false, type: { type: 'timestamptz' } },
    str(6, 'status'),
    long(7, 'events'),
    str(8, 'summary'),
    // added later (EventLog.ensureTables evolves old lakes): the git commit a run
    // indexed (`rev` holds its full id), its committer time and subject, and the
    // tags and branches pointing at it when it was ingested (`\n`-joined)
    { id: 9, name: 'rev_time', required: false, type: { type: 'timestamptz' } },
    str(10, 'subject'),
    str(11, 'refs'),
  ],
};

/** What a run's generation note says; `parseRunNote` reads it back (the only two places that spell it). */
export interface RunNote {
  /** `ingest` (a repo), `universe` (a universe add), `remove` (a repo removed). */
  what: 'ingest' | 'universe' | 'remove';
  repo: string;
  rev: string | null;
  run: string;
}

/** `ingest semver@4649aa97… run 20261201T…-ab12cd34`, the note of a run's generation. */
export function runNote(n: RunNote): string {
  return `${n.what} ${n.repo}${n.rev ? `@${n.rev}` : ''} run ${n.run}`;
}

export function parseRunNote(note: string | null): RunNote | undefined {
  const m = note === null ? null : /^(ingest|universe|remove) (\S+?)(?:@(\S+))? run (\S+)$/.exec(note);
  if (!m) return undefined;
  return { what: m[1] as RunNote['what'], repo: m[2]!, rev: m[3] ?? null, run: m[4]! };
}

/**
 * Does a commit note (a generation that changed an event table or
 * `ingest_runs` without being a run) name an operation that only moves or
 * rewrites rows, never adds or drops an event? Compaction, ring split and
 * unsplit (their copies, switches, freezes), snapshot expiry, column
 * evolution, relocation, recovery, table creation. A read of an expired
 * generation (event-log.ts, "runs reads") trusts these and refuses any other
 * such generation — so a new operation that rewrites event tables outside a
 * run is added here, or its generations refuse those reads.
 */
export function movesRowsOnly(note: string | null): boolean {
  return note !== null && /^(compact |ring: |expire snapshots |gc |add columns |relocate |recover |create )/.test(note);
}

/** Every table of the log whose rows carry `run`: the source and ring tables of each kind, and `ingest_runs`. */
export function runTables(): string[] {
  return [...SOURCE_KINDS.flatMap((k) => [tableName(k), ringTableName(k)]), INGEST_RUNS];
}

/** Table properties every event table is created with. */
export const EVENT_TABLE_PROPERTIES: Record<string, string> = {
  'write.parquet.compression-codec': 'zstd',
  // level 1, not zstd's default 3: on bench:ingest's event files 13% less of the encoder's CPU, 2.4% smaller files
  'write.parquet.compression-level': '1',
  'mimir.table': 'event-log',
  // Iceberg's metadata-log: 10 previous files, not 100, so that a table keeps
  // few metadata files once gc's history window has passed; they are deleted
  // by gc, not at commit (`--as-of` needs them for gc's retention period)
  'write.metadata.previous-versions-max': '10',
  'write.metadata.delete-after-commit.enabled': 'false',
  // page bounds only on the columns reads filter by (positions, signatures, hashes,
  // type_info… are never filtered on: their bounds cost a comparison per value)
  'mimir.write.page-index.columns': 'repo,krate,id,run,ts,op,kind,name,qpath,src,dst,dst_path,dst_krate,edge_kind,entity,path,hash,rev,status',
};
