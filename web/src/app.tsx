// The Mimir web UI: a header (search, the lake, the "as of" of time travel)
// and the page the URL names. Served by `mimir serve` as one JS and one CSS
// file (scripts/build-web.ts); it reads the lake only through the server's
// JSON API (api.ts), at the generation the URL's `asOf` names, or the
// lake's current one. Pages: / and /search (search.tsx), /item/<path>
// (item.tsx), /graph/<path> (graph.tsx, loaded on demand with its layout
// code: the first load of / stays small), /history/<path> (history.tsx),
// /diff (diff.tsx), /lake (lake.tsx); anything else is a page saying so.
import { render, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { ErrorView, Loading } from './common.tsx';
import { DiffPage } from './diff.tsx';
import { HistoryPage } from './history.tsx';
import { ItemPage } from './item.tsx';
import { LakePage } from './lake.tsx';
import { Link, href, navigate, usePlace, type Place } from './router.tsx';
import { SearchPage } from './search.tsx';

function App(): JSX.Element {
  const place = usePlace();
  // `/` anywhere outside a text field: to the search box
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
      e.preventDefault();
      const box = document.getElementById('q') as HTMLInputElement | null;
      if (box) {
        box.focus();
        box.select();
      } else navigate(href('/'));
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  return (
    <>
      <a class="skip" href="#content">
        Skip to the content
      </a>
      <Header place={place} />
      <div id="content">
        <Page place={place} />
      </div>
    </>
  );
}

/** The qualified path after `/<page>/` in the URL. */
function pathAfter(pathname: string, prefix: string): string | null {
  if (!pathname.startsWith(prefix) || pathname.length <= prefix.length) return null;
  try {
    return decodeURIComponent(pathname.slice(prefix.length));
  } catch {
    return pathname.slice(prefix.length);
  }
}

function Page(props: { place: Place }): JSX.Element {
  const { pathname } = props.place;
  if (pathname === '/' || pathname === '/search') return <SearchPage place={props.place} />;
  if (pathname === '/lake') return <LakePage place={props.place} />;
  if (pathname === '/diff') return <DiffPage place={props.place} />;
  const item = pathAfter(pathname, '/item/');
  if (item !== null) return <ItemPage key={item} place={props.place} path={item} />;
  const graph = pathAfter(pathname, '/graph/');
  if (graph !== null) return <LazyGraph key={graph} place={props.place} path={graph} />;
  const hist = pathAfter(pathname, '/history/');
  if (hist !== null) return <HistoryPage key={hist} place={props.place} path={hist} />;
  return (
    <main>
      <h1>No such page</h1>
      <p>
        This UI has no page <code>{pathname}</code>. Its pages: <Link href={href('/')}>search</Link>, <code>/item/&lt;path&gt;</code>, <code>/graph/&lt;path&gt;</code> and <code>/history/&lt;path&gt;</code> for an item, <Link href={href('/diff')}>the diff</Link> of two states, and <Link href={href('/lake')}>the lake</Link>.
      </p>
    </main>
  );
}

type GraphModule = typeof import('./graph.tsx');

/** The call-graph page, its code (and dagre) fetched on first use. */
function LazyGraph(props: { place: Place; path: string }): JSX.Element {
  const [mod, setMod] = useState<{ m: GraphModule } | { error: ApiError } | null>(null);
  useEffect(() => {
    import('./graph.tsx').then(
      (m) => setMod({ m }),
      (e: unknown) => setMod({ error: new ApiError(`the picture's code did not load (${(e as Error).message}); the server may have been rebuilt: reload the page`, 0) }),
    );
  }, []);
  if (mod === null) return <main><Loading what="the call-graph picture" /></main>;
  if ('error' in mod) return <main><ErrorView error={mod.error} title="The picture could not load" /></main>;
  return <mod.m.GraphPage place={props.place} path={props.path} />;
}

function Header(props: { place: Place }): JSX.Element {
  const asOf = props.place.params.get('asOf') ?? '';
  const [text, setText] = useState(asOf);
  useEffect(() => setText(asOf), [asOf]);
  const go = (value: string): void => {
    const p = new URLSearchParams(location.search);
    if (value.trim() === '') p.delete('asOf');
    else p.set('asOf', value.trim());
    const s = p.toString();
    navigate(s === '' ? location.pathname : `${location.pathname}?${s}`);
  };
  const at = props.place.pathname;
  return (
    <header>
      <nav aria-label="main">
        <Link href={href('/')} class="brand">
          Mimir
        </Link>
        <Link href={href('/')} aria-current={at === '/' || at === '/search' ? 'page' : undefined}>
          Search
        </Link>
        <Link href={href('/diff')} aria-current={at === '/diff' ? 'page' : undefined}>
          Diff
        </Link>
        <Link href={href('/lake')} aria-current={at === '/lake' ? 'page' : undefined}>
          Lake
        </Link>
      </nav>
      <form
        class="asof"
        onSubmit={(e) => {
          e.preventDefault();
          go(text);
        }}
      >
        <label for="asof">As of</label>
        <input id="asof" value={text} placeholder="generation, time or commit" onInput={(e) => setText((e.target as HTMLInputElement).value)} spellcheck={false} autoComplete="off" />
        <button type="submit">Read</button>
        {asOf !== '' && (
          <button type="button" onClick={() => go('')}>
            Now
          </button>
        )}
      </form>
      {asOf !== '' && (
        <p class="banner" role="status">
          Reading the lake as of <strong>{asOf}</strong>: every answer on these pages is of that time.
        </p>
      )}
    </header>
  );
}

render(<App />, document.getElementById('app')!);
