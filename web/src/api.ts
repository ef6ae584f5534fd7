// The server's JSON API as the web UI sees it (src/serve/server.ts): typed
// shapes of the answers it reads, and one fetch helper that adds the page's
// `asOf` to every call, so a page kept as of a past generation asks every
// question as of it. Errors come back as ApiError with the server's message,
// status and (for an unknown name) its did-you-mean suggestions. The UI only
// talks to the server over HTTP/JSON: nothing here imports src/.

/** An item (a node) as answers place it. Generations and counts arrive as JSON numbers. */
export interface Item {
  id: string;
  repo: string;
  krate: string;
  kind: string | null;
  name: string | null;
  qpath: string | null;
  /** Relative to the crate's folder (what /api/source takes). */
  file: string | null;
  line: number | null;
  col: number | null;
  lineEnd: number | null;
  visibility: string | null;
  signature: string | null;
  /** Repo-relative path, for people. */
  path: string | null;
}

export interface Edge {
  id: string;
  repo: string;
  krate: string;
  edgeKind: string | null;
  dstPath: string | null;
  file: string | null;
  line: number | null;
  col: number | null;
  path: string | null;
}

export type Ref = Edge & { from: Item | null };
export type Callee = Edge & { to: Item | null };

export interface FindAnswer {
  generation: number;
  total: number;
  hits: Item[];
}
export interface DefAnswer {
  generation: number;
  hits: Item[];
}
export interface RefsAnswer {
  generation: number;
  total: number;
  refs: Ref[];
  unresolved: number | null;
}
export interface CalleesAnswer {
  generation: number;
  total: number;
  callees: Callee[];
}
export interface SourceAnswer {
  generation: number;
  lineCount: number;
  lines: { line: number; text: string }[];
}
export interface LakeAnswer {
  root: string;
  generation: number;
  pointerGeneration: number;
  ringMode: string;
  tables: { table: string; snapshots: number; records: number | null; dataFiles: number | null; deleteFiles: number | null }[];
  generations: { generation: number; timeMs: number; note: string | null; tables: string[] }[];
  runs: { run: string; repo: string; rev: string | null; started: number | null; status: string | null; events: number | null }[];
  crates: { repo: string; krate: string }[];
}

/** A node's row as history and diff carry it (query/read.ts NodeHit, placed: `path` for people). */
export interface NodeRow {
  id: string;
  repo: string;
  krate: string;
  kind: string | null;
  name: string | null;
  qpath: string | null;
  file: string | null;
  line: number | null;
  lineEnd: number | null;
  visibility: string | null;
  signature: string | null;
  path?: string | null;
}

/** One event of an item (query/history.ts HistoryEvent). */
export interface HistoryEvent {
  kind: 'node' | 'edge';
  op: string;
  id: string;
  repo: string;
  krate: string;
  generation: number | null;
  committedMs: number | null;
  run: string | null;
  rev: string | null;
  subject: string | null;
  node?: NodeRow;
  edge?: Edge & { dst: string | null };
}
export interface HistoryAnswer {
  generation: number;
  ids: string[];
  total: number;
  events: HistoryEvent[];
}

/** One item's change between two states (query/diff.ts ItemChange). */
export interface ItemChange {
  change: 'added' | 'removed' | 'renamed' | 'changed' | 'moved';
  aspects: string[];
  before: NodeRow | null;
  after: NodeRow | null;
  public: boolean;
  semver: string | null;
  bump: string | null;
}
export interface DiffAnswer {
  from: number;
  to: number;
  fromRev: string | null;
  toRev: string | null;
  repo: string | null;
  changes: ItemChange[];
  total: number;
  stat: Record<string, number>;
  hiddenMoves: number;
}

/** A refused or failed call: status 0 when the server did not answer at all. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly suggestions: string[] = [],
  ) {
    super(message);
  }
}

/** The `asOf` of the page's URL (kept in every link), if any. */
export function currentAsOf(): string | null {
  const v = new URLSearchParams(location.search).get('asOf');
  return v === null || v === '' ? null : v;
}

/**
 * GET /api/<route> with `params` (undefined and empty ones left out) and the
 * page's asOf, unless `opts.asOf` names another (a generation a change is
 * shown at) or null (a question that takes none: diff).
 */
export async function api<T>(route: string, params: Record<string, string | number | undefined>, signal?: AbortSignal, opts: { asOf?: string | null } = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const asOf = opts.asOf === undefined ? currentAsOf() : opts.asOf;
  if (asOf !== null) q.set('asOf', asOf);
  let r: Response;
  try {
    r = await fetch(`/api/${route}?${q}`, { signal, headers: { accept: 'application/json' } });
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ApiError(`the server did not answer (${(e as Error).message}); is mimir serve still running?`, 0);
  }
  const text = await r.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(`the server answered ${r.status} with something that is not JSON: ${text.slice(0, 200)}`, r.status);
  }
  if (!r.ok) {
    const b = body as { error?: string; suggestions?: string[] };
    throw new ApiError(b.error ?? `status ${r.status}`, r.status, b.suggestions ?? []);
  }
  return body as T;
}
