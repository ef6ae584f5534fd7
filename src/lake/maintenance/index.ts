// Table maintenance: expire snapshots (and delete what only they reached) and
// remove orphan files (and the metadata files of expired generations). Both start from the catalog's current pointers and
// never delete a file a retained snapshot or a commit in flight may need.
export { expireSnapshots, planRetention, GcDisabledError, type ExpireOptions, type ExpireReport, type RetentionPlan } from './expire.ts';
export { removeOrphanFiles, LEASE_SLACK_MS, type OrphanOptions, type OrphanReport } from './orphans.ts';
export { pathKey } from './reachable.ts';
export { pruneMetadataFiles, prunedThrough, PRUNED_THROUGH_PREFIX } from './history.ts';
