// Pieces every page uses: a hook that asks the API and re-asks when its
// question changes (cancelling the old request), an error view that says
// what to do, and the small formatters for places and crates.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { Link, href, itemHref } from './router.tsx';

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'failed'; error: ApiError };

/** The answer of `ask`, asked again whenever `key` changes (a request in flight for an older key is aborted). */
export function useApi<T>(key: string | null, ask: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    if (key === null) return undefined;
    const cancel = new AbortController();
    setLoaded({ state: 'loading' });
    ask(cancel.signal).then(
      (value) => {
        if (!cancel.signal.aborted) setLoaded({ state: 'done', value });
      },
      (e: unknown) => {
        if (!cancel.signal.aborted) setLoaded({ state: 'failed', error: e instanceof ApiError ? e : new ApiError(String((e as Error)?.message ?? e), 0) });
      },
    );
    return () => cancel.abort();
  }, [key]);
  return loaded;
}

/** What to do about an error, by its status. */
function advice(e: ApiError): string {
  switch (e.status) {
    case 0:
      return 'Start mimir serve again (or check the address), then reload this page.';
    case 400:
      return 'The question was malformed: check the search terms and the "as of" value.';
    case 404:
      return e.suggestions.length > 0 ? 'Pick one of the names below, or search for it.' : 'Search for the name instead: a part of it is enough.';
    case 503:
    case 504:
      return 'The server is busy or the question too wide: retry, or narrow it (a longer name, a kind, repo or crate).';
    default:
      return 'The server failed to read the lake; its log says more. Retrying may help.';
  }
}

/** An error as a page section: the server's message, what to do, and did-you-mean links when it has them. */
export function ErrorView(props: { error: ApiError; title?: string; suggest?: (s: string) => string; searchFor?: string }): JSX.Element {
  const { error } = props;
  const to = props.suggest ?? ((s: string) => itemHref(s));
  return (
    <section class="error" role="alert">
      <h2>{props.title ?? (error.status === 404 ? 'Not found' : error.status === 0 ? 'No answer from the server' : `Error ${error.status}`)}</h2>
      <p class="message">{error.message}</p>
      <p>{advice(error)}</p>
      {error.suggestions.length > 0 && (
        <div class="suggestions">
          <h3>Did you mean</h3>
          <ul>
            {error.suggestions.map((s) => (
              <li key={s}>
                <Link href={to(s)}>
                  <code>{s}</code>
                </Link>
              </li>
            ))}
          </ul>
        </div>
      )}
      <p>
        <Link href={props.searchFor ? href('/search', { q: props.searchFor }) : href('/')}>{props.searchFor ? `Search for “${props.searchFor}”` : 'Search the lake'}</Link> · <Link href={href('/lake')}>What the lake holds</Link>
      </p>
    </section>
  );
}

export function Loading(props: { what: string }): JSX.Element {
  return (
    <p class="loading" aria-live="polite">
      Loading {props.what}…
    </p>
  );
}

/** `path:line:col` of a hit. */
export function place(h: { path: string | null; line: number | null; col?: number | null }): string {
  if (h.path === null) return '(no file)';
  return `${h.path}${h.line !== null ? `:${h.line}` : ''}${h.line !== null && h.col != null ? `:${h.col}` : ''}`;
}

/** A crate as people read it: `tally@0.1.0`, with `(dependency)` for the universe's. */
export function Crate(props: { repo: string; krate: string }): JSX.Element {
  return (
    <span class="crate" title={props.repo === '@universe' ? 'a dependency crate (the universe, shared by every repo)' : `repo ${props.repo}`}>
      {props.krate}
      {props.repo === '@universe' ? <span class="muted"> (dep)</span> : <span class="muted"> in {props.repo}</span>}
    </span>
  );
}

export function Kind(props: { kind: string | null }): JSX.Element {
  return <span class={`kind kind-${props.kind ?? 'none'}`}>{props.kind ?? '?'}</span>;
}
