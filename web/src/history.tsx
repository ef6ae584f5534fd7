// `/history/<qualified path>`: the timeline of an item — every event of every
// node id that ever had the path, and of the edges going out of them (the
// answer of /api/history, the same as `mimir history`), oldest first, one
// entry per commit of the lake: its generation and time, and the git commit
// (id and subject) when the repo was ingested with --git, else the run. A
// change of the item shows its signature and source before and after, side
// by side (changes.tsx); edge events are counted and listed on demand.
import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, type HistoryAnswer, type HistoryEvent, type NodeRow } from './api.ts';
import { BeforeAfter } from './changes.tsx';
import { Crate, ErrorView, Kind, Loading, useApi } from './common.tsx';
import { Link, itemHref, pageHref, type Place } from './router.tsx';

interface Entry {
  key: string;
  generation: number | null;
  committedMs: number | null;
  rev: string | null;
  subject: string | null;
  run: string | null;
  nodes: { ev: HistoryEvent; before: { node: NodeRow; generation: number | null } | null }[];
  edges: HistoryEvent[];
}

/** Events grouped by the commit of the lake that wrote them, each node event with the same id's previous one. */
function entries(events: HistoryEvent[]): Entry[] {
  const out: Entry[] = [];
  const last = new Map<string, { node: NodeRow; generation: number | null }>();
  for (const ev of events) {
    const key = `${ev.generation ?? '?'}|${ev.run ?? '?'}`;
    let e = out[out.length - 1];
    if (!e || e.key !== key) {
      e = { key, generation: ev.generation, committedMs: ev.committedMs, rev: ev.rev, subject: ev.subject, run: ev.run, nodes: [], edges: [] };
      out.push(e);
    }
    if (ev.kind === 'node') {
      e.nodes.push({ ev, before: last.get(ev.id) ?? null });
      if (ev.node) last.set(ev.id, { node: ev.node, generation: ev.generation });
    } else e.edges.push(ev);
  }
  return out;
}

const time = (ms: number | null): string => (ms === null ? 'time unknown' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));

export function HistoryPage(props: { place: Place; path: string }): JSX.Element {
  const asOf = props.place.params.get('asOf');
  const h = useApi<HistoryAnswer>(JSON.stringify(['history', props.path, asOf]), (signal) => api('history', { path: props.path }, signal));
  useEffect(() => {
    document.title = `History of ${props.path} — Mimir`;
  }, [props.path]);
  const title = (
    <h1 class="qpath-title">
      History of <code>{props.path}</code>
    </h1>
  );
  if (h.state === 'loading') return <main>{title}<Loading what={`the history of ${props.path}`} /></main>;
  if (h.state === 'failed') {
    return (
      <main>
        {title}
        <ErrorView error={h.error} title={h.error.status === 404 ? 'No item ever had this path' : undefined} suggest={(s) => pageHref('history', s)} searchFor={props.path.slice(props.path.lastIndexOf(':') + 1)} />
      </main>
    );
  }
  const list = entries(h.value.events);
  return (
    <main>
      {title}
      <p>
        {h.value.total} event{h.value.total === 1 ? '' : 's'} of {h.value.ids.length} item id{h.value.ids.length === 1 ? '' : 's'}, read at generation {h.value.generation}, oldest first. <Link href={itemHref(props.path)}>The item now</Link> · <Link href={pageHref('graph', props.path)}>its call graph</Link>
      </p>
      {h.value.total > h.value.events.length && <p class="muted">Showing the first {h.value.events.length}.</p>}
      <ol class="timeline" aria-label={`events of ${props.path}`}>
        {list.map((e) => (
          <li key={e.key} class="entry">
            <h2 class="when">
              <span class="gen">generation {e.generation ?? '?'}</span> <span class="muted" title="when this generation was committed to the lake">{time(e.committedMs)}</span>
            </h2>
            <p class="commit">
              {e.rev !== null ? (
                <>
                  commit <code class="rev" title={e.rev}>{e.rev.slice(0, 12)}</code>
                  {e.subject !== null && <span class="subject"> {e.subject}</span>}
                </>
              ) : (
                <span class="muted">no commit recorded</span>
              )}
              {e.run !== null && <span class="muted"> · run {e.run}</span>}
            </p>
            {e.nodes.map(({ ev, before }) => (
              <div key={`${ev.id}-${ev.op}`} class="event">
                <p>
                  <span class={`op op-${ev.op}`}>{ev.op}</span> {ev.node && <Kind kind={ev.node.kind} />} <code>{ev.node?.qpath ?? ev.id}</code> <Crate repo={ev.repo} krate={ev.krate} />
                  {ev.node?.visibility ? <span class="muted"> · {ev.node.visibility}</span> : null}
                </p>
                {ev.op === 'change' && ev.node ? (
                  <BeforeAfter what={ev.node.qpath ?? ev.id} before={before ?? { node: null, generation: null }} after={{ node: ev.node, generation: ev.generation }} />
                ) : ev.node?.signature ? (
                  <pre class="code signature">{ev.node.signature}</pre>
                ) : null}
              </div>
            ))}
            {e.edges.length > 0 && (
              <details class="edges">
                <summary>
                  {e.edges.length} edge event{e.edges.length === 1 ? '' : 's'} ({['add', 'change', 'remove'].map((op) => `${e.edges.filter((x) => x.op === op).length} ${op}`).join(', ')})
                </summary>
                <ul>
                  {e.edges.map((x) => (
                    <li key={`${x.id}-${x.op}`}>
                      <span class={`op op-${x.op}`}>{x.op}</span> {x.edge?.edgeKind ?? 'edge'} → <code>{x.edge?.dstPath ?? x.edge?.dst ?? '?'}</code> <span class="muted">{x.edge?.line != null ? `line ${x.edge.line}` : ''}</span>
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        ))}
      </ol>
    </main>
  );
}
