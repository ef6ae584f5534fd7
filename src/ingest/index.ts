// Public API of ingest/: workspaces and universe crates into the event log as deltas.
export {
  StrictIngestError, formatIngestReport, ingest, universeAdd,
  type IngestOptions, type IngestProblem, type IngestProgress, type IngestReport, type UniverseOptions,
} from './ingest.ts';
export { defaultSearchDirs, expandCrateDirs, findCrate, parseCrateDirName } from './locate.ts';
export { ExtractPool, type ExtractJob, type ExtractResult } from './pool.ts';
export { FIELDS, MANIFEST_PATH, MANIFEST_STATUS, fileId } from './rows.ts';
export { ingestGit, type GitIngestOptions, type GitIngestReport } from './git-ingest.ts';
export { GitError } from './git.ts';
