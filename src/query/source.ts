// A file's text as the lake recorded it at a generation, from the
// content-addressed sources table (log/blobs.ts): the file row at that
// generation gives the hash, the hash gives the text. No checkout is read.
// Snippets for answers (`--context N`) are cut from it.
//
// Invariant: the text returned is the one whose sha256 the file row of that
// generation records (null when the lake did not store it: a lake or a file
// from before sources were kept, a file too large, not UTF-8 or unreadable).
// Read-only.
import { eq } from '../lake/expr/expr.ts';
import type { EventLog } from '../log/event-log.ts';
import { readBlob } from '../log/blobs.ts';
import { fileId } from '../ingest/rows.ts';
import { foldIds, isLive, readAt, str, type AsOf } from './read.ts';

export interface SourceFile {
  repo: string;
  krate: string;
  /** Relative to the crate's folder, as node and edge rows name files. */
  path: string;
}

export interface SourceText {
  /** The content hash the file row records at the generation read. */
  hash: string;
  text: string;
  generation: bigint;
}

/** The text of `file` at `asOf` (default: the handle's generation); null when the file is not live there or its text is not stored. */
export async function readSource(log: EventLog, file: SourceFile, opts: { asOf?: AsOf } = {}): Promise<SourceText | null> {
  return readAt(log, opts.asOf, async (r) => {
    const id = fileId(file.repo, file.krate, file.path);
    const rows = await foldIds(r, 'file', new Set([id]), [eq('repo', file.repo), eq('krate', file.krate)]);
    const row = rows.get(id);
    if (!isLive(row)) return null;
    const hash = str(row['hash']);
    if (!hash) return null;
    const text = await readBlob(r.log, hash);
    return text === null ? null : { hash, text, generation: r.generation };
  }, 'log');
}

/** Just the text (see readSource). */
export async function readSourceText(log: EventLog, file: SourceFile, opts: { asOf?: AsOf } = {}): Promise<string | null> {
  return (await readSource(log, file, opts))?.text ?? null;
}

/** Lines `line - n` .. `line + n` of `text` (1-based, clipped to the file), each with its number. */
export function contextLines(text: string, line: number, n: number): { line: number; text: string }[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '' && text.endsWith('\n')) lines.pop();
  const from = Math.max(1, line - Math.max(0, n));
  const to = Math.min(lines.length, line + Math.max(0, n));
  const out: { line: number; text: string }[] = [];
  for (let i = from; i <= to; i++) out.push({ line: i, text: lines[i - 1]!.replace(/\r$/, '') });
  return out;
}

/**
 * Texts of many files at one generation, each read once (an answer's hits
 * share files). `get` resolves to null for a file whose text is not stored.
 */
export class SourceCache {
  private readonly texts = new Map<string, Promise<string | null>>();
  constructor(private readonly log: EventLog, private readonly asOf?: AsOf) {}

  get(file: SourceFile): Promise<string | null> {
    const k = JSON.stringify([file.repo, file.krate, file.path]);
    let t = this.texts.get(k);
    if (!t) this.texts.set(k, (t = readSourceText(this.log, file, { asOf: this.asOf })));
    return t;
  }
}
