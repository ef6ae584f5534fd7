// The graph questions over the event log (find, def, refs, callers, callees,
// history, diff), each answerable as of a generation or a time. Read-only:
// nothing under query/ writes to the lake.
export { find, nameMatcher, type FindOptions, type FindResult } from './find.ts';
export { def, type DefResult } from './def.ts';
export { refs, callers, callees, EDGE_KINDS, type EdgeKind, type RefsOptions, type RefHit, type CalleeHit, type RefsResult, type CalleesResult } from './refs.ts';
export { history, type HistoryEvent, type HistoryResult } from './history.ts';
export { diff, DiffRangeError, type DiffOptions, type DiffResult, type ItemChange, type Bump, type Stat, type ChangeKind, type Aspect, type Semver } from './diff.ts';
export { readSource, readSourceText, contextLines, SourceCache, type SourceFile, type SourceText } from './source.ts';
export { type AsOf, type QueryOptions, type NodeHit, type EdgeHit } from './read.ts';
export { AsOfError, generationOf, generationOfRev } from './as-of.ts';
