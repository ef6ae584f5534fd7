// Client-side routing: every page is a stable deep link (the server answers
// the same HTML shell for /, /search, /lake, /diff and /item/, /graph/,
// /history/<path>), moved between
// with history.pushState. The page's `asOf` is kept in every link and every
// navigation, so time travel survives clicks, reloads and shared URLs.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentAsOf } from './api.ts';

const NAVIGATED = 'mimir:navigated';

export interface Place {
  pathname: string;
  params: URLSearchParams;
}

const here = (): Place => ({ pathname: location.pathname, params: new URLSearchParams(location.search) });

/** The current location, re-rendering on every navigation (links, back and forward). */
export function usePlace(): Place {
  const [place, setPlace] = useState(here);
  useEffect(() => {
    const update = (): void => setPlace(here());
    addEventListener('popstate', update);
    addEventListener(NAVIGATED, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(NAVIGATED, update);
    };
  }, []);
  return place;
}

/** A URL of this UI with the page's asOf kept (unless `params` sets its own; null removes it). */
export function href(pathname: string, params: Record<string, string | number | null | undefined> = {}): string {
  const q = new URLSearchParams();
  const asOf = currentAsOf();
  if (asOf !== null && !('asOf' in params)) q.set('asOf', asOf);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? pathname : `${pathname}?${s}`;
}

/** The page of an item: /item/<qualified path> (`::` kept readable). */
export function itemHref(qpath: string, params: Record<string, string | number | null | undefined> = {}): string {
  return pageHref('item', qpath, params);
}

/** A page about an item: /item/, /graph/ (its call graph) or /history/ (its events), then its qualified path. */
export function pageHref(page: 'item' | 'graph' | 'history', qpath: string, params: Record<string, string | number | null | undefined> = {}): string {
  return href(`/${page}/${encodeURIComponent(qpath).replace(/%3A/gi, ':')}`, params);
}

export function navigate(url: string, opts: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  dispatchEvent(new Event(NAVIGATED));
  if (!opts.replace) scrollTo(0, 0);
}

/** A link that navigates in the page (a modified or middle click opens a tab as usual). */
export function Link(props: { href: string; children: ComponentChildren; class?: string; title?: string; tabIndex?: number; 'aria-current'?: 'page' | undefined }): JSX.Element {
  const onClick = (e: MouseEvent): void => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} onClick={onClick} class={props.class} title={props.title} tabIndex={props.tabIndex} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}
