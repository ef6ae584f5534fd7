// `/api/source`: lines of one file's text as the lake recorded it at the
// read generation (query/source.ts: the file row gives the content hash, the
// sources table the text; no checkout is read). The file is named as node
// and edge rows name it — repo, krate and the crate-relative `file` — and is
// matched against those columns, never opened as a path. A file not live at
// the generation, or whose text the lake did not keep, is a 404 saying so.
// Read-only, through the request's pinned handle.
import type { EventLog } from '../log/event-log.ts';
import { contextLines, readSource } from '../query/source.ts';
import { BadQuestion, parseAsOf, parseCount } from './questions.ts';
import type { AsOf } from '../query/index.ts';

/** At most this many lines in one answer (a window of a larger file is asked with from/to). */
export const MAX_SOURCE_LINES = 5000;

export interface SourceParams {
  repo: string;
  krate: string;
  file: string;
  /** First line (1-based; default 1). */
  from?: number;
  /** Last line (inclusive; default from + MAX_SOURCE_LINES - 1, clipped to the file). */
  to?: number;
  asOf?: AsOf;
}

export interface SourceAnswer {
  question: 'source';
  version: 1;
  generation: bigint;
  repo: string;
  krate: string;
  file: string;
  /** sha256 of the whole text, as the file row records it. */
  hash: string;
  /** Lines in the whole file. */
  lineCount: number;
  lines: { line: number; text: string }[];
}

/** A file or its text the lake does not have (the server's 404). */
export class SourceNotFound extends Error {
  override readonly name = 'SourceNotFound';
}

export const SOURCE_PARAMS = { required: ['repo', 'krate', 'file'], optional: ['from', 'to', 'asOf'] };

export function parseSourceParams(params: [string, string][]): SourceParams {
  const p = new Map<string, string>();
  const known = [...SOURCE_PARAMS.required, ...SOURCE_PARAMS.optional];
  for (const [k, v] of params) {
    if (!known.includes(k)) throw new BadQuestion(`unknown parameter "${k}" for source (expected ${known.join(', ')})`);
    if (p.has(k)) throw new BadQuestion(`parameter "${k}" given twice ("${p.get(k)}" and "${v}")`);
    p.set(k, v);
  }
  const missing = SOURCE_PARAMS.required.filter((k) => !p.get(k));
  if (missing.length > 0) throw new BadQuestion(`source: missing parameter ${missing.join(' and ')} (a file is named by repo, krate and its crate-relative file, as hits name it)`);
  const out: SourceParams = { repo: p.get('repo')!, krate: p.get('krate')!, file: p.get('file')! };
  const line = (k: 'from' | 'to'): void => {
    const v = p.get(k);
    if (v === undefined) return;
    const n = parseCount(v, k);
    if (n < 1) throw new BadQuestion(`${k}: expected a line number from 1, found "${v}"`);
    out[k] = n;
  };
  line('from');
  line('to');
  if (out.from !== undefined && out.to !== undefined && out.to < out.from) throw new BadQuestion(`source: to (${out.to}) is before from (${out.from})`);
  if (p.has('asOf')) out.asOf = parseAsOf(p.get('asOf')!);
  return out;
}

/** Lines from..to of the file at the pinned handle's generation. */
export async function answerSource(pinned: EventLog, q: Omit<SourceParams, 'asOf'>): Promise<SourceAnswer> {
  const src = await readSource(pinned, { repo: q.repo, krate: q.krate, path: q.file }, { asOf: { generation: pinned.readGeneration() } });
  if (src === null) {
    throw new SourceNotFound(`no text of ${q.file} in crate ${q.krate} of repo ${q.repo} at generation ${pinned.readGeneration()}: the file is not live there, or the lake did not keep its text (a file too large, not UTF-8, or ingested before sources were kept) — nothing shown`);
  }
  const from = q.from ?? 1;
  const to = Math.min(q.to ?? from + MAX_SOURCE_LINES - 1, from + MAX_SOURCE_LINES - 1);
  const all = contextLines(src.text, 1, Number.MAX_SAFE_INTEGER);
  return {
    question: 'source',
    version: 1,
    generation: src.generation,
    repo: q.repo,
    krate: q.krate,
    file: q.file,
    hash: src.hash,
    lineCount: all.length,
    lines: all.slice(from - 1, to),
  };
}
