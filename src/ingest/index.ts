// Public API of ingest/: workspaces and universe crates into the event log as deltas.
export {
  IngestInputError, StrictIngestError, formatIngestReport, ingest, readValidWorkspace, universeAdd,
  type IngestOptions, type IngestProblem, type IngestProgress, type IngestReport, type MissingDep, type Substitution, type UniverseOptions,
} from './ingest.ts';
export { LocalCrates, defaultSearchDirs, expandCrateDirs, findCrate, nearestCompatible, parseCrateDirName } from './locate.ts';
export { UniverseRemoveRefused, formatUniverseRemoveReport, removeUniverseCrate, type UniverseRemoveOptions, type UniverseRemoveReport } from './universe-remove.ts';
export { ExtractPool, type ExtractJob, type ExtractResult } from './pool.ts';
export { FIELDS, MANIFEST_PATH, MANIFEST_STATUS, fileId } from './rows.ts';
export { NoSuchRepoError, formatRemoveReport, removeRepo, type RemoveRepoOptions, type RemoveRepoReport } from './remove.ts';
export { ingestGit, type GitIngestOptions, type GitIngestReport } from './git-ingest.ts';
export { GitError } from './git.ts';
