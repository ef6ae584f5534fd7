// An item's change shown as text: its signature and its source (body) before
// and after, side by side (stacked on a narrow window), each line marked as
// removed (before) or added (after) by a line diff (linediff.ts). The source
// of each side is the lake's stored text at that side's generation
// (/api/source with that asOf), so a change is shown as it was even when the
// page reads the lake as of another time. Used by /history and /diff.
import type { JSX } from 'preact';
import { api, type NodeRow, type SourceAnswer } from './api.ts';
import { useApi } from './common.tsx';
import { lineDiff, type DiffLine } from './linediff.ts';

/** Most lines of an item's source fetched for one side. */
const MAX_LINES = 400;

export interface Side {
  node: NodeRow | null;
  /** The generation to read the node's text at (null: the page's). */
  generation: number | null;
}

/** The lines of `node`'s source at `generation`, or why there are none. */
function useText(side: Side): { lines: string[] | null; note: string | null } {
  const n = side.node;
  const ok = n !== null && n.file !== null && n.line !== null;
  const from = n?.line ?? 1;
  const to = Math.min(n?.lineEnd ?? from, from + MAX_LINES - 1);
  const key = ok ? JSON.stringify([n.repo, n.krate, n.file, from, to, side.generation]) : null;
  const r = useApi<SourceAnswer>(key, (signal) => api('source', { repo: n!.repo, krate: n!.krate, file: n!.file!, from, to }, signal, side.generation === null ? {} : { asOf: String(side.generation) }));
  if (!ok) return { lines: n === null ? [] : null, note: n === null ? null : 'the lake records no place for it' };
  if (r.state === 'loading') return { lines: null, note: 'loading…' };
  if (r.state === 'failed') return { lines: null, note: `not shown: ${r.error.message}` };
  return { lines: r.value.lines.map((l) => l.text), note: null };
}

function Column(props: { title: string; lines: DiffLine[]; keep: ' ' | '-' | '+'; note: string | null; label: string }): JSX.Element {
  const shown = props.lines.filter((l) => l.op === ' ' || l.op === props.keep);
  return (
    <figure class="side">
      <figcaption>{props.title}</figcaption>
      {props.note !== null ? (
        <p class="muted">{props.note}</p>
      ) : shown.length === 0 ? (
        <p class="muted">(none)</p>
      ) : (
        <pre class="code diff" tabIndex={0} aria-label={props.label}>
          {shown.map((l, i) => (
            <div key={i} class={l.op === '-' ? 'del' : l.op === '+' ? 'ins' : undefined}>
              <span class="op" aria-hidden="true">
                {l.op}
              </span>
              {l.text}
            </div>
          ))}
        </pre>
      )}
    </figure>
  );
}

/** Signature and source before and after a change, side by side. */
export function BeforeAfter(props: { before: Side; after: Side; what: string }): JSX.Element {
  const b = useText(props.before);
  const a = useText(props.after);
  const sig = lineDiff(props.before.node?.signature ? [props.before.node.signature] : [], props.after.node?.signature ? [props.after.node.signature] : []);
  const body = b.lines !== null && a.lines !== null ? lineDiff(b.lines, a.lines) : [];
  const at = (s: Side, word: string): string => `${word}${s.generation !== null ? ` (generation ${s.generation})` : ''}${s.node?.path ? `: ${s.node.path}${s.node.line !== null ? `:${s.node.line}` : ''}` : ''}`;
  const sigChanged = sig.some((l) => l.op !== ' ');
  return (
    <div class="before-after">
      {sigChanged && (
        <div class="pair">
          <Column title="signature before" lines={sig} keep="-" note={null} label={`signature of ${props.what} before`} />
          <Column title="signature after" lines={sig} keep="+" note={null} label={`signature of ${props.what} after`} />
        </div>
      )}
      <div class="pair">
        <Column title={at(props.before, 'before')} lines={body} keep="-" note={b.note} label={`source of ${props.what} before`} />
        <Column title={at(props.after, 'after')} lines={body} keep="+" note={a.note} label={`source of ${props.what} after`} />
      </div>
    </div>
  );
}
