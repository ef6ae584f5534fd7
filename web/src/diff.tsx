// `/diff?from=REV&to=REV[&public=1]`: the semantic diff between two states of
// the lake (the answer of /api/diff, the same as `mimir diff`): items added,
// removed, renamed, or changed in signature, body or visibility, grouped by
// crate, each with its source before and after side by side (changes.tsx;
// the first ones open, the others on demand). A REV is a lake generation
// (digits) or a commit id, prefix, tag or branch of a repo ingested with
// --git. "Public only" keeps the public API's changes (`mimir diff
// --public`). The ends are in the URL, so a diff is a link; the page's asOf
// is kept in links but a diff names its own two ends.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type DiffAnswer, type ItemChange } from './api.ts';
import { BeforeAfter } from './changes.tsx';
import { Crate, ErrorView, Kind, Loading, useApi } from './common.tsx';
import { href, itemHref, Link, navigate, pageHref, type Place } from './router.tsx';

/** Changes listed at most (the page says how many there were). */
const LIMIT = 500;
/** Changes whose source is shown at once; the others open on demand. */
const OPEN = 20;

const end = (rev: string, gen: string, text: string): Record<string, string> => (/^\d+$/.test(text) ? { [gen]: text } : { [rev]: text });

export function DiffPage(props: { place: Place }): JSX.Element {
  const p = props.place.params;
  const from = p.get('from') ?? '';
  const to = p.get('to') ?? '';
  const pub = p.get('public') === '1';
  useEffect(() => {
    document.title = from && to ? `Diff ${from}..${to} — Mimir` : 'Diff — Mimir';
  }, [from, to]);
  return (
    <main>
      <h1>Changes between two states</h1>
      <DiffForm from={from} to={to} pub={pub} />
      {from !== '' && to !== '' ? <DiffResult from={from} to={to} pub={pub} /> : <p class="muted">Give the two ends: lake generations (numbers, see <Link href={href('/lake')}>the lake</Link>) or commits of a repo ingested with <code>mimir ingest --git</code> (an id, a prefix, a tag or a branch).</p>}
    </main>
  );
}

function DiffForm(props: { from: string; to: string; pub: boolean }): JSX.Element {
  const [from, setFrom] = useState(props.from);
  const [to, setTo] = useState(props.to);
  useEffect(() => {
    setFrom(props.from);
    setTo(props.to);
  }, [props.from, props.to]);
  const go = (f: string, t: string, pub: boolean): void => navigate(href('/diff', { from: f.trim(), to: t.trim(), public: pub ? 1 : null }));
  return (
    <form
      class="diff-form"
      onSubmit={(e) => {
        e.preventDefault();
        go(from, to, props.pub);
      }}
    >
      <label for="diff-from">From</label>
      <input id="diff-from" value={from} placeholder="generation or commit" spellcheck={false} autoComplete="off" onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
      <label for="diff-to">To</label>
      <input id="diff-to" value={to} placeholder="generation or commit" spellcheck={false} autoComplete="off" onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
      <label class="check">
        <input type="checkbox" checked={props.pub} onChange={(e) => go(from, to, (e.target as HTMLInputElement).checked)} /> Public only
      </label>
      <button type="submit">Compare</button>
    </form>
  );
}

const crateOf = (c: ItemChange): { repo: string; krate: string } => (c.after ?? c.before)!;

function DiffResult(props: { from: string; to: string; pub: boolean }): JSX.Element {
  const d = useApi<DiffAnswer>(JSON.stringify(['diff', props.from, props.to, props.pub]), (signal) =>
    api('diff', { ...end('fromRev', 'from', props.from), ...end('toRev', 'to', props.to), public: props.pub ? 'true' : undefined, limit: LIMIT }, signal, { asOf: null }),
  );
  if (d.state === 'loading') return <Loading what="the diff" />;
  if (d.state === 'failed') return <ErrorView error={d.error} title={d.error.status === 400 || d.error.status === 404 ? 'These ends name no two states of the lake' : undefined} />;
  const v = d.value;
  const groups = new Map<string, ItemChange[]>();
  for (const c of v.changes) {
    const k = `${crateOf(c).repo}\u0000${crateOf(c).krate}`;
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  let n = 0;
  const stat = Object.entries(v.stat).filter(([, x]) => x > 0);
  return (
    <>
      <p role="status">
        From generation {v.from}
        {v.fromRev ? ` (${v.fromRev})` : ''} to {v.to}
        {v.toRev ? ` (${v.toRev})` : ''}: {v.total} change{v.total === 1 ? '' : 's'}
        {props.pub ? ' of public items' : ''}
        {stat.length > 0 ? ` — ${stat.map(([k, x]) => `${x} ${k}`).join(', ')}` : ''}
        {v.hiddenMoves > 0 ? ` (${v.hiddenMoves} moves not listed)` : ''}.
      </p>
      {v.total > v.changes.length && <p class="muted">Showing the first {v.changes.length}; narrow it with "Public only".</p>}
      {v.changes.length === 0 && <p>No item changed between these two states{props.pub ? ' in the public API' : ''}.</p>}
      {[...groups].map(([k, changes]) => {
        const c0 = crateOf(changes[0]!);
        return (
          <section key={k} class="crate-changes" aria-label={`changes in ${c0.krate}`}>
            <h2>
              <Crate repo={c0.repo} krate={c0.krate} /> <span class="muted">({changes.length})</span>
            </h2>
            <ul class="changes">
              {changes.map((c) => (
                <Change key={`${c.before?.id ?? ''}-${c.after?.id ?? ''}`} change={c} from={v.from} to={v.to} open={n++ < OPEN} />
              ))}
            </ul>
          </section>
        );
      })}
    </>
  );
}

function Change(props: { change: ItemChange; from: number; to: number; open: boolean }): JSX.Element {
  const c = props.change;
  const [open, setOpen] = useState(props.open);
  const name = c.after?.qpath ?? c.before?.qpath ?? '?';
  const what = c.change === 'changed' ? c.aspects.join(', ') : c.change === 'renamed' && c.aspects.length > 0 ? `renamed, ${c.aspects.join(', ')}` : c.change;
  return (
    <li class="change">
      <details open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>
          <span class={`op op-${c.change}`}>{what}</span> <Kind kind={(c.after ?? c.before)?.kind ?? null} />{' '}
          {c.change === 'renamed' ? (
            <span class="qpath">
              {c.before?.qpath} → {c.after?.qpath}
            </span>
          ) : (
            <span class="qpath">{name}</span>
          )}
          {c.semver !== null && <span class={`semver semver-${c.semver}`}> {c.semver}</span>}
        </summary>
        {c.after?.qpath && (
          <p class="links">
            <Link href={itemHref(c.after.qpath)}>item page</Link> · <Link href={pageHref('history', c.after.qpath)}>history</Link>
          </p>
        )}
        {open && <BeforeAfter what={name} before={{ node: c.before, generation: props.from }} after={{ node: c.after, generation: props.to }} />}
      </details>
    </li>
  );
}
