// The SQL layout of the embedded catalog: every table and column name the
// catalog spells lives here, nowhere else.
//
// Two groups of tables share one SQLite file:
// - the standard JDBC / SQL-catalog tables (`iceberg_tables`,
//   `iceberg_namespace_properties`), laid out as Java's JdbcCatalog (schema V1)
//   and PyIceberg's SqlCatalog create them, so either can open the lake as is;
// - Mimir's own tables beside them (all prefixed `mimir_`): the generation
//   counter, the generation log, the leases of commits in flight and the
//   commit keys (compare-and-swapped with the table pointers). Other
//   catalogs ignore tables they do not know.
//
// Invariant: the DDL is idempotent (`IF NOT EXISTS`), so two processes creating
// the same catalog at once both succeed; it runs inside one IMMEDIATE
// transaction, so a crash leaves either no table or all of them.

export const T = {
  tables: 'iceberg_tables',
  namespaceProps: 'iceberg_namespace_properties',
  catalog: 'mimir_catalog',
  generations: 'mimir_generations',
  log: 'mimir_commit_log',
  leases: 'mimir_leases',
  keys: 'mimir_commit_keys',
  properties: 'mimir_properties',
} as const;

/** Catalog property (`mimir_properties`): the folder the lake was created at (absolute local path). */
export const PROP_LAKE_ROOT = 'lake.root';
/** Catalog property: roots the lake had before a relocation, one per line (their paths still map onto the lake). */
export const PROP_FORMER_ROOTS = 'lake.former-roots';
/** Catalog property: the object-storage prefix (`s3://bucket/prefix`) the lake's tables live under, when not its folder. */
export const PROP_WAREHOUSE = 'lake.warehouse';

/** Columns of `iceberg_tables` (the V1 layout; `iceberg_type` may be absent in V0 files). */
export const TABLE_COLUMNS = [
  'catalog_name',
  'table_namespace',
  'table_name',
  'metadata_location',
  'previous_metadata_location',
  'iceberg_type',
] as const;

/** Columns of `iceberg_namespace_properties`. */
export const NAMESPACE_COLUMNS = ['catalog_name', 'namespace', 'property_key', 'property_value'] as const;

/** Value written to `iceberg_type` for tables (NULL is read as a table too). */
export const ICEBERG_TYPE_TABLE = 'TABLE';

/** Column of `mimir_generations` added after layout 1 (ALTER TABLE on a writable open when missing). */
export const FOREIGN_COLUMN = 'foreign_commit';

/** Layout version of the `mimir_` tables, stored per catalog in `mimir_catalog`. */
export const MIMIR_LAYOUT_VERSION = 1;

/** The standard tables, with the types and keys PyIceberg emits (plus V1 `iceberg_type`). */
export const STANDARD_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ${T.tables} (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.namespaceProps} (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255) NOT NULL,
    property_value VARCHAR(1000) NOT NULL,
    PRIMARY KEY (catalog_name, namespace, property_key)
  )`,
];

/**
 * Mimir's tables.
 * - `mimir_catalog`: one row per catalog name; `generation` is the counter every
 *   commit bumps once; `last_time_ms` keeps commit times monotone even when
 *   clocks of several processes disagree.
 * - `mimir_generations`: one row per generation (time, note, committer);
 *   `foreign_commit` = 1 for a generation that records pointers another engine
 *   moved (observed, not made, by Mimir; added to older files by ALTER).
 * - `mimir_commit_log`: one row per table a generation touched. A create logs
 *   (new, NULL), an update (new, old), a drop (NULL, old). Generation 0 holds
 *   the tables a foreign catalog already had when Mimir's tables were added.
 * - `mimir_leases`: commits in flight; a row is removed when the lease ends.
 * - `mimir_commit_keys`: a generic key -> value map that a commit may
 *   compare-and-swap in the same transaction as its table pointers (the log
 *   keeps `repo:<name>` -> last run id there). A missing row is an absent key.
 *   Added after the first layout: created on open (IF NOT EXISTS) and read as
 *   empty where it does not exist yet (a read-only catalog).
 * - `mimir_properties`: the catalog's own key/value properties (e.g. `lake.root`,
 *   the folder the lake was created at: see lake/io/rooted.ts). Added after
 *   layout 1 shipped; created by the idempotent DDL on the next writable open.
 */
export const MIMIR_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ${T.catalog} (
    catalog_name VARCHAR(255) NOT NULL PRIMARY KEY,
    generation INTEGER NOT NULL,
    last_time_ms INTEGER NOT NULL,
    layout_version INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.generations} (
    catalog_name VARCHAR(255) NOT NULL,
    generation INTEGER NOT NULL,
    time_ms INTEGER NOT NULL,
    note TEXT,
    pid INTEGER,
    host TEXT,
    foreign_commit INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (catalog_name, generation)
  )`,
  `CREATE INDEX IF NOT EXISTS ${T.generations}_by_time ON ${T.generations} (catalog_name, time_ms)`,
  `CREATE TABLE IF NOT EXISTS ${T.log} (
    catalog_name VARCHAR(255) NOT NULL,
    generation INTEGER NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    PRIMARY KEY (catalog_name, generation, table_namespace, table_name)
  )`,
  `CREATE INDEX IF NOT EXISTS ${T.log}_by_table ON ${T.log} (catalog_name, table_namespace, table_name, generation)`,
  `CREATE TABLE IF NOT EXISTS ${T.leases} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    catalog_name VARCHAR(255) NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    release_base INTEGER NOT NULL,
    started_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    note TEXT
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.keys} (
    catalog_name VARCHAR(255) NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (catalog_name, key)
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.properties} (
    catalog_name VARCHAR(255) NOT NULL,
    key VARCHAR(255) NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (catalog_name, key)
  )`,
];

/**
 * The same tables on PostgreSQL (pg/): the standard ones as Java's
 * JdbcCatalog and PyIceberg's SqlCatalog create them there, Mimir's with
 * 64-bit integers (BIGINT: pg returns them as strings, read as bigint) and a
 * BIGSERIAL lease id. Run in one transaction under an advisory lock, since
 * PostgreSQL's `IF NOT EXISTS` is not safe against a concurrent creator.
 */
export const PG_DDL: readonly string[] = [
  ...STANDARD_DDL,
  `CREATE TABLE IF NOT EXISTS ${T.catalog} (
    catalog_name VARCHAR(255) NOT NULL PRIMARY KEY,
    generation BIGINT NOT NULL,
    last_time_ms BIGINT NOT NULL,
    layout_version INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.generations} (
    catalog_name VARCHAR(255) NOT NULL,
    generation BIGINT NOT NULL,
    time_ms BIGINT NOT NULL,
    note TEXT,
    pid INTEGER,
    host TEXT,
    ${FOREIGN_COLUMN} INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (catalog_name, generation)
  )`,
  `CREATE INDEX IF NOT EXISTS ${T.generations}_by_time ON ${T.generations} (catalog_name, time_ms)`,
  `CREATE TABLE IF NOT EXISTS ${T.log} (
    catalog_name VARCHAR(255) NOT NULL,
    generation BIGINT NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    PRIMARY KEY (catalog_name, generation, table_namespace, table_name)
  )`,
  `CREATE INDEX IF NOT EXISTS ${T.log}_by_table ON ${T.log} (catalog_name, table_namespace, table_name, generation)`,
  `CREATE TABLE IF NOT EXISTS ${T.leases} (
    id BIGSERIAL PRIMARY KEY,
    catalog_name VARCHAR(255) NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    release_base BIGINT NOT NULL,
    started_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    note TEXT
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.keys} (
    catalog_name VARCHAR(255) NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    generation BIGINT NOT NULL,
    PRIMARY KEY (catalog_name, key)
  )`,
  `CREATE TABLE IF NOT EXISTS ${T.properties} (
    catalog_name VARCHAR(255) NOT NULL,
    key VARCHAR(255) NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (catalog_name, key)
  )`,
];
