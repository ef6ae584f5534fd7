// Public API of extract/: Rust source and Cargo manifests -> plain-data code graphs.
export type {
  CrateGraph, EdgeFact, EdgeKind, Expr, FileFact, FileStatus, Item, MacroCall, NodeFact, NodeKind, ParsedFile, ParseStatus,
  Problem, ProblemKind, Ref, TypeRef, UseDecl,
} from './types.ts';
export { loadRust, parseOnly, type RustParser } from './parser.ts';
export {
  activeFeatures, compareVersions, lockVersions, pickVersion, readCrateDir, readWorkspace,
  type Dependency, type FeatureSelection, type Package, type Target, type Workspace,
} from './cargo.ts';
export {
  DEFAULT_MAX_FILE_BYTES, decodeSource, loadModuleTree, moduleCandidates,
  type Decoded, type Expansion, type ItemExpander, type ModuleTree, type ModuleTreeInput,
} from './modules.ts';
export { Cfg, buildScriptCfgs } from './resolve/cfg.ts';
export { decodeTypeInfo, type DepCrate, type DepNode, type TypeInfo } from './resolve/summary.ts';
export { UNIVERSE, edgeId, extractCrate, namespaceOf, nodeId, universeNodeId, type ExtractInput, type Namespace } from './graph.ts';
