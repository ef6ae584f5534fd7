// Every `mimir` command, in one place. A group (`table`) holds commands; a
// command's module is imported only when it runs or shows its help. A new
// command (`mimir init`, `mimir ring …`, `mimir gc`) is one file plus one
// entry here.
import type { CommandSpec } from './command.ts';

export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<CommandSpec>;
}

export interface GroupEntry {
  name: string;
  summary: string;
  /** Text printed by `mimir <group> --help` above the command list. */
  description?: string;
  commands: CommandEntry[];
}

export type Entry = CommandEntry | GroupEntry;

export const isGroup = (e: Entry): e is GroupEntry => 'commands' in e;

export const COMMANDS: Entry[] = [
  {
    name: 'table',
    summary: 'generic Iceberg tools, usable on any table',
    description: [
      'A TABLE is either lake:<namespace>.<table>, a table of the lake given by --lake',
      '(default $MIMIR_LAKE, else ./mimir-lake), or the path of a *.metadata.json file',
      '(read-only; --location-root DIR maps the table\'s recorded location to a local folder).',
    ].join('\n'),
    commands: [
      { name: 'list', summary: 'namespaces and tables of the lake', load: async () => (await import('./table/list.ts')).command },
      { name: 'describe', summary: 'location, schema, partition spec, properties, refs of a table', load: async () => (await import('./table/describe.ts')).command },
      { name: 'snapshots', summary: 'the snapshots of a table, oldest first', load: async () => (await import('./table/snapshots.ts')).command },
      { name: 'files', summary: 'live data and delete files of a snapshot', load: async () => (await import('./table/files.ts')).command },
      { name: 'scan', summary: 'rows as JSON Lines, filtered, projected, as of any snapshot', load: async () => (await import('./table/scan.ts')).command },
      { name: 'append', summary: 'append JSON Lines rows (creating the table from a schema file)', load: async () => (await import('./table/append.ts')).command },
      { name: 'create', summary: 'create an empty table from an Iceberg schema file', load: async () => (await import('./table/create.ts')).command },
      { name: 'drop', summary: 'remove a table from the lake catalog (its files stay for gc)', load: async () => (await import('./table/drop.ts')).command },
    ],
  },
  { name: 'init', summary: 'create the event-log tables on the lake (--ring split|unified)', load: async () => (await import('./log/init.ts')).command },
  {
    name: 'ring',
    summary: 'the ring (dependency crates, repo @universe): status, split, unsplit',
    description: 'A split lake keeps ring rows in their own ring tables; a unified lake keeps them in the source tables.',
    commands: [
      { name: 'status', summary: 'ring mode, rows per table, ring rows left in source tables, ring crates', load: async () => (await import('./log/ring-status.ts')).command },
      { name: 'split', summary: 'copy the ring into the ring tables, verify, switch to split', load: async () => (await import('./log/ring-split.ts')).command },
      { name: 'unsplit', summary: 'copy new ring rows back to the source tables, switch to unified', load: async () => (await import('./log/ring-unsplit.ts')).command },
    ],
  },
  { name: 'ingest', summary: 'index a Rust workspace into the lake as a repo (only the deltas are written)', load: async () => (await import('./query/ingest.ts')).command },
  {
    name: 'repo',
    summary: 'the repos of the lake',
    commands: [
      { name: 'list', summary: 'the repos: crates, live items, last run (its generation, time, rev)', load: async () => (await import('./query/repo-list.ts')).command },
      { name: 'remove', summary: 'remove every item of a repo, as events in one run (--dry-run to preview)', load: async () => (await import('./query/repo-remove.ts')).command },
    ],
  },
  {
    name: 'universe',
    summary: 'the dependency crates shared by all repos (repo @universe)',
    commands: [
      { name: 'list', summary: 'the universe crates: live items, which repos point into each', load: async () => (await import('./query/universe-list.ts')).command },
      { name: 'add', summary: 'add crate folders (name-version/, vendor/, a cargo registry) to the universe', load: async () => (await import('./query/universe-add.ts')).command },
      { name: 'remove', summary: 'remove one crate version from the universe (refused while repos point into it, unless --force)', load: async () => (await import('./query/universe-remove.ts')).command },
    ],
  },
  { name: 'find', summary: 'items by name, glob or exact (--kind, --repo, --krate)', load: async () => (await import('./query/find.ts')).command },
  { name: 'def', summary: 'where the item at a qualified path is defined: repo, crate, file, line', load: async () => (await import('./query/def.ts')).command },
  { name: 'refs', summary: 'every edge into an item, across repos and the universe, with file and line', load: async () => (await import('./query/refs.ts')).command },
  { name: 'callers', summary: 'the call sites of an item, with the calling item, file and line', load: async () => (await import('./query/callers.ts')).command },
  { name: 'callees', summary: 'the calls an item makes', load: async () => (await import('./query/callees.ts')).command },
  { name: 'graph', summary: 'the call graph of an item: callers above, callees below (--svg FILE: a picture)', load: async () => (await import('./query/graph.ts')).command },
  { name: 'history', summary: 'every event of an item, oldest first', load: async () => (await import('./query/history.ts')).command },
  { name: 'diff', summary: 'items added, removed, renamed or changed between two commits or generations', load: async () => (await import('./query/diff.ts')).command },
  {
    name: 'state',
    summary: 'the serving state tables (current nodes, edges, files laid out for lookups)',
    description: 'Derived from the event log and updated in the same commit as every change; questions are answered from them.',
    commands: [
      { name: 'rebuild', summary: 'refold the state tables from the event log (creates them on an older lake)', load: async () => (await import('./state/rebuild.ts')).command },
      { name: 'verify', summary: 'compare the state tables with a fold of the log (exit 1 naming differences)', load: async () => (await import('./state/verify.ts')).command },
      { name: 'maintain', summary: 'merge delta and delete files into sorted files past a threshold', load: async () => (await import('./state/maintain.ts')).command },
    ],
  },
  {
    name: 'export',
    summary: 'the graph in other tools\' formats',
    commands: [{ name: 'scip', summary: 'one repo as a SCIP index (protobuf) for Sourcegraph and other SCIP consumers', load: async () => (await import('./query/export-scip.ts')).command }],
  },
  { name: 'sql', summary: 'SQL over every table of the lake (DuckDB in process, read-only), as of any generation', load: async () => (await import('./sql.ts')).command },
  { name: 'serve', summary: 'a read-only HTTP server over the lake: the JSON API, the web UI and an Iceberg REST catalog', load: async () => (await import('./serve.ts')).command },
  { name: 'compact', summary: 'rewrite the event tables: partitioned by repo, sorted, ring rows dropped when split', load: async () => (await import('./log/compact.ts')).command },
  { name: 'gc', summary: 'expire old snapshots and remove orphan files (honours pins and commits in flight)', load: async () => (await import('./log/gc.ts')).command },
  {
    name: 'lake',
    summary: 'the lake as a whole: where it is, moving, copying and recovering it, checking its files',
    description: 'A copied or moved lake folder is an independent lake; see docs/operations.md, "Moving, copying and recovering a lake".',
    commands: [
      { name: 'info', summary: 'the folder the lake is opened at, the root it was created at, its tables', load: async () => (await import('./lake/info.ts')).command },
      { name: 'relocate', summary: 'make a moved or copied lake name its new folder in its metadata, for other engines', load: async () => (await import('./lake/relocate.ts')).command },
      { name: 'recover', summary: 'a lost catalog: re-register every table folder from its newest valid metadata (deletes nothing)', load: async () => (await import('./lake/recover.ts')).command },
      { name: 'check', summary: 'read every manifest and data file and check each against the metadata (exit 1 on a problem)', load: async () => (await import('./lake/check.ts')).command },
    ],
  },
  { name: 'completion', summary: 'a shell completion script: source <(mimir completion bash|zsh), or fish', load: async () => (await import('./completion.ts')).command },
  {
    name: 'log',
    summary: 'the lake\'s history',
    commands: [{ name: 'generations', summary: 'lake generations newest first: time, note, tables touched', load: async () => (await import('./log/generations.ts')).command }],
  },
];
