// `/` and `/search?q=…&kind=…&repo=…&krate=…`: search as you type (the
// server's fuzzy find, best match first), with filters for kind, repo and
// crate. The URL follows the box (history.replaceState: typing makes no
// history entries), so a search is a link. Keyboard: arrows move through
// the results, Enter opens the selected one (the first by default);
// `/` anywhere focuses the box (app.tsx).
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type FindAnswer, type LakeAnswer } from './api.ts';
import { Crate, ErrorView, Kind, Loading, place, useApi } from './common.tsx';
import { Link, href, itemHref, navigate, type Place } from './router.tsx';

/** The kinds find takes (query/scope.ts NODE_KINDS). */
const KINDS = ['module', 'fn', 'method', 'struct', 'enum', 'variant', 'union', 'trait', 'trait_item', 'impl', 'const', 'static', 'type', 'macro'];
const LIMIT = 50;
/** Typing pause before a question is asked. */
const DEBOUNCE_MS = 120;

export function SearchPage(props: { place: Place }): JSX.Element {
  const p = props.place.params;
  const [text, setText] = useState(p.get('q') ?? '');
  const [query, setQuery] = useState(text);
  const [active, setActive] = useState(0);
  const box = useRef<HTMLInputElement>(null);
  const filters = { kind: p.get('kind') ?? '', repo: p.get('repo') ?? '', krate: p.get('krate') ?? '' };

  // the box follows the URL when it changes from outside (back/forward, a did-you-mean link)
  useEffect(() => {
    const q = p.get('q') ?? '';
    if (q !== query) {
      setText(q);
      setQuery(q);
    }
  }, [p.get('q')]);
  useEffect(() => box.current?.focus(), []);

  const setParams = (next: Record<string, string>): void => {
    const all = { q: query, ...filters, ...next };
    navigate(href(all.q === '' && !all.kind && !all.repo && !all.krate ? '/' : '/search', all), { replace: true });
  };

  useEffect(() => {
    if (text === query) return undefined;
    const t = setTimeout(() => {
      setQuery(text);
      setActive(0);
      setParams({ q: text });
    }, DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [text]);

  const key = query.trim() === '' ? null : JSON.stringify([query, filters, p.get('asOf')]);
  const found = useApi<FindAnswer>(key, (signal) => api('find', { name: query.trim(), kind: filters.kind, repo: filters.repo, krate: filters.krate, limit: LIMIT }, signal));
  const lake = useApi<LakeAnswer>(JSON.stringify(['lake', p.get('asOf')]), (signal) => api('lake', { generations: 0, runs: 0 }, signal));
  const crates = lake.state === 'done' ? lake.value.crates : [];
  // while a new answer is on its way the last one stays (no flicker as you type)
  const shown = useRef<FindAnswer | null>(null);
  if (found.state === 'done') shown.current = found.value;
  else if (found.state === 'failed' || key === null) shown.current = null;
  const answer = key === null ? null : shown.current;
  const hits = answer?.hits ?? [];

  const openWhenReady = useRef(false);
  useEffect(() => {
    if (!openWhenReady.current || found.state === 'loading') return;
    openWhenReady.current = false;
    const h = found.state === 'done' ? found.value.hits[0] : undefined;
    if (h?.qpath) navigate(itemHref(h.qpath));
  }, [found.state]);
  const onKey = (e: KeyboardEvent): void => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (hits.length > 0) setActive((a) => (e.key === 'ArrowDown' ? Math.min(hits.length - 1, a + 1) : Math.max(0, a - 1)));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (text !== query || found.state === 'loading') {
        // the answer to what was typed is not here yet: ask now, open when it comes
        openWhenReady.current = true;
        if (text !== query) {
          setQuery(text);
          setActive(0);
          setParams({ q: text });
        }
        return;
      }
      const h = hits[Math.min(active, hits.length - 1)];
      if (h?.qpath) navigate(itemHref(h.qpath));
    } else if (e.key === 'Escape') {
      setText('');
    }
  };
  useEffect(() => {
    document.getElementById(`hit-${active}`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);
  useEffect(() => {
    document.title = query ? `${query} — Mimir search` : 'Mimir';
  }, [query]);

  return (
    <main>
      <form class="search" role="search" onSubmit={(e) => e.preventDefault()}>
        <label for="q" class="visually-hidden">
          Search items by name
        </label>
        <input
          id="q"
          ref={box}
          type="search"
          autoComplete="off"
          spellcheck={false}
          placeholder="Search items by name (press / to come back here)"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
          onKeyDown={onKey}
          role="combobox"
          list={undefined}
          aria-expanded={hits.length > 0}
          aria-controls="hits"
          aria-activedescendant={hits.length > 0 ? `hit-${active}` : undefined}
        />
        <div class="filters">
          <label>
            Kind{' '}
            <select value={filters.kind} onChange={(e) => setParams({ kind: (e.target as HTMLSelectElement).value })}>
              <option value="">any</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
          <label>
            Repo{' '}
            <select value={filters.repo} onChange={(e) => setParams({ repo: (e.target as HTMLSelectElement).value })}>
              <option value="">any</option>
              {[...new Set(crates.map((c) => c.repo))].map((r) => (
                <option key={r} value={r}>
                  {r === '@universe' ? '@universe (dependencies)' : r}
                </option>
              ))}
            </select>
          </label>
          <label>
            Crate{' '}
            <select value={filters.krate} onChange={(e) => setParams({ krate: (e.target as HTMLSelectElement).value })}>
              <option value="">any</option>
              {[...new Set(crates.filter((c) => !filters.repo || c.repo === filters.repo).map((c) => c.krate))].map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </label>
        </div>
      </form>
      {key === null ? (
        <section class="hint">
          <p>Type a name, or a part of one: letters in order are enough (<code>hstr</code> finds <code>hash_str</code>). A path with <code>::</code> or a glob (<code>*</code>) matches paths.</p>
          <p>
            Keys: <kbd>/</kbd> search, <kbd>↑</kbd> <kbd>↓</kbd> move, <kbd>Enter</kbd> open. <Link href={href('/lake')}>What the lake holds</Link>.
          </p>
        </section>
      ) : found.state === 'failed' ? (
        <ErrorView error={found.error} title={found.error.status === 404 ? `Nothing matches “${query}”` : undefined} suggest={(s) => href('/search', { q: s })} />
      ) : answer === null ? (
        <Loading what="results" />
      ) : (
        <section aria-label="results" aria-busy={found.state === 'loading'}>
          <p class="muted" aria-live="polite">
            {answer.total === 0 ? 'No item matches in this scope.' : `${answer.total} item${answer.total === 1 ? '' : 's'}${answer.total > hits.length ? `, the best ${hits.length} shown` : ''}`} · generation {answer.generation}
            {found.state === 'loading' && ' · updating…'}
          </p>
          <ul id="hits" class="hits" role="listbox" aria-label="items found">
            {hits.map((h, i) => (
              <li key={h.id} id={`hit-${i}`} role="option" aria-selected={i === active} class={i === active ? 'active' : undefined} onMouseEnter={() => setActive(i)}>
                <Kind kind={h.kind} />
                <span class="qpath">{h.qpath ? <Link href={itemHref(h.qpath)}>{h.qpath}</Link> : h.name}</span>
                <Crate repo={h.repo} krate={h.krate} />
                <span class="place">{place(h)}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  );
}
