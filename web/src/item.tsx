// `/item/<qualified path>[?at=LINE]`: one item — its signature, visibility,
// kind, crate and place (path:line:col), the source around it (from the
// lake's stored text, highlighted; `at` marks and scrolls to a line of it,
// e.g. the call site a caller link came from), its callers and callees as
// trees that expand on demand (each row links to that item's page, at the
// call line), every reference into it grouped by edge kind, and links to
// its call-graph picture (/graph/) and its history (/history/). An unknown
// path is an error page with the server's did-you-mean links.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type CalleesAnswer, type DefAnswer, type Item, type RefsAnswer, type SourceAnswer } from './api.ts';
import { Crate, ErrorView, Kind, Loading, place, useApi } from './common.tsx';
import { highlightLines } from './highlight.tsx';
import { Link, itemHref, pageHref, type Place } from './router.tsx';

/** Lines of source shown before the item (and after its end or the marked line). */
const AROUND = 4;
/** Most lines of an item's source shown at once. */
const MAX_LINES = 400;
/** Deepest a caller or callee tree opens. */
const MAX_DEPTH = 8;

export function ItemPage(props: { place: Place; path: string }): JSX.Element {
  const at = Number(props.place.params.get('at') ?? NaN);
  const asOf = props.place.params.get('asOf');
  const def = useApi<DefAnswer>(JSON.stringify(['def', props.path, asOf]), (signal) => api('def', { path: props.path }, signal));
  useEffect(() => {
    document.title = `${props.path} — Mimir`;
  }, [props.path]);
  if (def.state === 'loading') return <main><Loading what={props.path} /></main>;
  if (def.state === 'failed') {
    return (
      <main>
        <h1 class="qpath-title">
          <code>{props.path}</code>
        </h1>
        <ErrorView error={def.error} title={def.error.status === 404 ? 'No item has this path' : undefined} searchFor={props.path.slice(props.path.lastIndexOf(':') + 1)} />
      </main>
    );
  }
  const hits = def.value.hits;
  return (
    <main>
      <h1 class="qpath-title">
        <code>{props.path}</code>
      </h1>
      <p class="item-links">
        <Link href={pageHref('graph', props.path)}>Call graph</Link> · <Link href={pageHref('history', props.path)}>History</Link>
      </p>
      {hits.length === 0 && <p>No live item has this path at generation {def.value.generation} (it was removed; its history is not shown in this version of the UI).</p>}
      {hits.map((h) => (
        <Definition key={h.id} item={h} at={Number.isFinite(at) ? at : null} generation={def.value.generation} />
      ))}
      {hits.length > 0 && (
        <>
          <section aria-labelledby="callers-h">
            <h2 id="callers-h">Callers</h2>
            <CallerTree path={props.path} depth={0} asOf={asOf} />
          </section>
          <section aria-labelledby="callees-h">
            <h2 id="callees-h">Callees</h2>
            <CalleeTree path={props.path} depth={0} asOf={asOf} />
          </section>
          <section aria-labelledby="refs-h">
            <h2 id="refs-h">References</h2>
            <Refs path={props.path} asOf={asOf} />
          </section>
        </>
      )}
    </main>
  );
}

function Definition(props: { item: Item; at: number | null; generation: number }): JSX.Element {
  const h = props.item;
  return (
    <section class="definition" aria-label={`definition in ${h.krate}`}>
      <dl class="facts">
        <dt>Kind</dt>
        <dd>
          <Kind kind={h.kind} />
        </dd>
        <dt>Visibility</dt>
        <dd>{h.visibility || '—'}</dd>
        <dt>Crate</dt>
        <dd>
          <Crate repo={h.repo} krate={h.krate} />
        </dd>
        <dt>Place</dt>
        <dd class="place">{place(h)}</dd>
        <dt>Generation</dt>
        <dd>{props.generation}</dd>
      </dl>
      {h.signature && <pre class="signature code">{highlightLines([h.signature]).map((l, i) => <div key={i}>{l}</div>)}</pre>}
      <Source item={h} at={props.at} />
    </section>
  );
}

function Source(props: { item: Item; at: number | null }): JSX.Element {
  const h = props.item;
  const start = h.line ?? 1;
  const end = Math.max(h.lineEnd ?? start, props.at ?? start);
  const from = Math.max(1, Math.min(start, props.at ?? start) - AROUND);
  const to = Math.min(end + AROUND, from + MAX_LINES - 1);
  const key = h.file === null ? null : JSON.stringify([h.repo, h.krate, h.file, from, to, new URLSearchParams(location.search).get('asOf')]);
  const src = useApi<SourceAnswer>(key, (signal) => api('source', { repo: h.repo, krate: h.krate, file: h.file ?? '', from, to }, signal));
  useEffect(() => {
    if (src.state === 'done' && props.at !== null) document.getElementById(`L${props.at}`)?.scrollIntoView({ block: 'center' });
  }, [src.state, props.at]);
  if (key === null) return <p class="muted">The lake records no file for this item.</p>;
  if (src.state === 'loading') return <Loading what="source" />;
  if (src.state === 'failed') return <p class="muted">Source not shown: {src.error.message}</p>;
  const lines = src.value.lines;
  const rows = highlightLines(lines.map((l) => l.text));
  return (
    <figure class="source">
      <figcaption>
        {h.path} lines {lines[0]?.line ?? from}–{lines[lines.length - 1]?.line ?? to} of {src.value.lineCount}
      </figcaption>
      <pre class="code" tabIndex={0} aria-label={`source of ${h.qpath ?? h.name ?? 'the item'}`}>
        {lines.map((l, i) => {
          const inItem = l.line >= start && l.line <= (h.lineEnd ?? start);
          const cls = [l.line === props.at ? 'at' : '', inItem ? 'in-item' : ''].filter(Boolean).join(' ');
          return (
            <div key={l.line} id={`L${l.line}`} class={cls || undefined}>
              <span class="ln" aria-hidden="true">
                {l.line}
              </span>
              {rows[i]}
            </div>
          );
        })}
      </pre>
    </figure>
  );
}

/** The callers of `path`; each row opens its own callers on demand. */
function CallerTree(props: { path: string; depth: number; asOf: string | null }): JSX.Element {
  const r = useApi<RefsAnswer>(JSON.stringify(['callers', props.path, props.asOf]), (signal) => api('callers', { path: props.path }, signal));
  if (r.state === 'loading') return <Loading what="callers" />;
  if (r.state === 'failed') return <p class="muted">Callers not shown: {r.error.message}</p>;
  if (r.value.refs.length === 0) {
    return <p class="muted">No callers{r.value.unresolved ? ` (${r.value.unresolved} unresolved call${r.value.unresolved === 1 ? '' : 's'} carry its name)` : ''}.</p>;
  }
  return (
    <ul class="tree" aria-label={`callers of ${props.path}`}>
      {r.value.refs.map((ref) => (
        <TreeRow key={ref.id} item={ref.from} fallback={null} line={ref.from && ref.file === ref.from.file && ref.krate === ref.from.krate ? ref.line : null} site={place(ref)} depth={props.depth} asOf={props.asOf} open={(p) => <CallerTree path={p} depth={props.depth + 1} asOf={props.asOf} />} what="callers" />
      ))}
    </ul>
  );
}

/** The calls `path` makes; each resolved callee opens its own callees on demand. */
function CalleeTree(props: { path: string; depth: number; asOf: string | null }): JSX.Element {
  const r = useApi<CalleesAnswer>(JSON.stringify(['callees', props.path, props.asOf]), (signal) => api('callees', { path: props.path }, signal));
  if (r.state === 'loading') return <Loading what="callees" />;
  if (r.state === 'failed') return <p class="muted">Callees not shown: {r.error.message}</p>;
  if (r.value.callees.length === 0) return <p class="muted">It calls nothing the lake recorded.</p>;
  return (
    <ul class="tree" aria-label={`callees of ${props.path}`}>
      {r.value.callees.map((c) => (
        <TreeRow key={c.id} item={c.to} fallback={c.dstPath} line={null} site={place(c)} depth={props.depth} asOf={props.asOf} open={(p) => <CalleeTree path={p} depth={props.depth + 1} asOf={props.asOf} />} what="callees" />
      ))}
    </ul>
  );
}

function TreeRow(props: {
  item: Item | null;
  /** The name shown for a target the lake does not have (an unresolved callee). */
  fallback: string | null;
  /** The call line, when it is in the item's own file (a caller's). */
  line: number | null;
  site: string;
  depth: number;
  asOf: string | null;
  open: (path: string) => JSX.Element;
  what: string;
}): JSX.Element {
  const [expanded, setExpanded] = useState(false);
  const q = props.item?.qpath ?? null;
  const canOpen = q !== null && props.depth + 1 < MAX_DEPTH;
  return (
    <li>
      <div class="row">
        {canOpen ? (
          <button type="button" class="toggle" aria-expanded={expanded} aria-label={`${expanded ? 'hide' : 'show'} the ${props.what} of ${q}`} onClick={() => setExpanded(!expanded)}>
            {expanded ? '▾' : '▸'}
          </button>
        ) : (
          <span class="toggle" aria-hidden="true" />
        )}
        {props.item && <Kind kind={props.item.kind} />}
        <span class="qpath">{q !== null ? <Link href={itemHref(q, { at: props.line })}>{q}</Link> : <span title="not in the lake (unresolved, or a crate not ingested)">{props.fallback ?? '?'}</span>}</span>
        <span class="place" title="the call site">
          {props.site}
        </span>
      </div>
      {expanded && q !== null && props.open(q)}
    </li>
  );
}

/** Every reference into the item, grouped by edge kind. */
function Refs(props: { path: string; asOf: string | null }): JSX.Element {
  const r = useApi<RefsAnswer>(JSON.stringify(['refs', props.path, props.asOf]), (signal) => api('refs', { path: props.path }, signal));
  if (r.state === 'loading') return <Loading what="references" />;
  if (r.state === 'failed') return <p class="muted">References not shown: {r.error.message}</p>;
  const groups = new Map<string, RefsAnswer['refs']>();
  for (const ref of r.value.refs) {
    const k = ref.edgeKind ?? 'other';
    groups.set(k, [...(groups.get(k) ?? []), ref]);
  }
  if (groups.size === 0) return <p class="muted">Nothing refers to it.</p>;
  return (
    <div class="refs">
      {[...groups].map(([kind, refs]) => (
        <details key={kind} open>
          <summary>
            {kind} <span class="muted">({refs.length})</span>
          </summary>
          <ul class="tree">
            {refs.map((ref) => (
              <li key={ref.id}>
                <div class="row">
                  {ref.from && <Kind kind={ref.from.kind} />}
                  <span class="qpath">{ref.from?.qpath ? <Link href={itemHref(ref.from.qpath, { at: ref.file === ref.from.file ? ref.line : null })}>{ref.from.qpath}</Link> : '(unknown)'}</span>
                  <span class="place">{place(ref)}</span>
                </div>
              </li>
            ))}
          </ul>
        </details>
      ))}
    </div>
  );
}
