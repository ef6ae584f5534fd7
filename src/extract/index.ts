// Public API of extract/: Rust source and Cargo manifests -> plain-data code graphs.
export type {
  CrateGraph, EdgeFact, EdgeKind, FileFact, FileStatus, Item, NodeFact, NodeKind, ParsedFile, ParseStatus,
  Problem, ProblemKind, Ref, UseDecl,
} from './types.ts';
export { loadRust, parseOnly, type RustParser } from './parser.ts';
export {
  compareVersions, lockVersions, pickVersion, readCrateDir, readWorkspace,
  type Dependency, type Package, type Target, type Workspace,
} from './cargo.ts';
export { DEFAULT_MAX_FILE_BYTES, decodeSource, loadModuleTree, moduleCandidates, type Decoded, type ModuleTree, type ModuleTreeInput } from './modules.ts';
export { UNIVERSE, edgeId, extractCrate, namespaceOf, nodeId, universeNodeId, type ExtractInput, type Namespace } from './graph.ts';
