// `/graph/<qualified path>?depth=N`: the call graph of an item as a picture —
// its callers above it, its callees below, N levels each way (default 2,
// chosen in the page; kept in the URL with the asOf). Each box is an item:
// clicking the box (or Enter/Space on it) opens or closes its further callers
// (a caller's) or callees (a callee's), asked of the API on first opening;
// clicking its label opens the item's page. Laid out by the module
// `mimir graph --svg` uses (src/query/graph-layout.ts, dagre) and drawn as
// inline SVG; "Export SVG" downloads the same picture as a standalone file
// with its styles inside. This module (and dagre) is loaded only when the
// page opens (app.tsx imports it with import()), so other pages stay small.
import type { JSX } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { boxClass, edgePath, layoutGraph, pictureSvg, type LayoutEdge, type LayoutNode } from '../../src/query/graph-layout.ts';
import { api, ApiError, type CalleesAnswer, type DefAnswer, type RefsAnswer } from './api.ts';
import { ErrorView, Loading } from './common.tsx';
import { Link, href, navigate, pageHref, type Place } from './router.tsx';

/** Levels each way by default (`mimir graph` too), and the most the page offers. */
const DEFAULT_DEPTH = 2;
const MAX_DEPTH = 6;
/** The page stops opening levels by itself past this many items (the reader can still open boxes). */
const MAX_AUTO_NODES = 300;

type Side = 'callers' | 'callees';

interface Known {
  id: string;
  label: string;
  /** null: a callee the lake did not resolve (not openable, no page). */
  qpath: string | null;
}

/** What the page knows: items, the neighbours loaded per item and side, and which boxes are open. */
interface GraphState {
  root: string;
  known: Map<string, Known>;
  links: Map<string, Partial<Record<Side, string[]>>>;
  open: Set<string>;
}

/** The items reachable from the root through open boxes, each with its level, and the edges drawn. */
function visible(s: GraphState): { nodes: LayoutNode[]; edges: LayoutEdge[] } {
  const level = new Map<string, number>([[s.root, 0]]);
  const edges: LayoutEdge[] = [];
  const queue = [s.root];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (!s.open.has(id)) continue;
    const lvl = level.get(id)!;
    const sides: Side[] = lvl < 0 ? ['callers'] : lvl > 0 ? ['callees'] : ['callers', 'callees'];
    for (const side of sides) {
      for (const nb of s.links.get(id)?.[side] ?? []) {
        edges.push(side === 'callers' ? { from: nb, to: id } : { from: id, to: nb });
        if (!level.has(nb)) {
          level.set(nb, lvl + (side === 'callers' ? -1 : 1));
          queue.push(nb);
        }
      }
    }
  }
  return { nodes: [...level].map(([id, l]) => ({ id, label: s.known.get(id)?.label ?? id, level: l })), edges };
}

/** Ask the API for `node`'s callers or callees; records the items met and returns their ids. */
async function neighbours(s: GraphState, node: Known, side: Side, signal: AbortSignal): Promise<string[]> {
  const ids: string[] = [];
  const meet = (k: Known): void => {
    if (!s.known.has(k.id)) s.known.set(k.id, k);
    if (!ids.includes(k.id)) ids.push(k.id);
  };
  if (side === 'callers') {
    const r = await api<RefsAnswer>('callers', { path: node.qpath! }, signal);
    for (const ref of r.refs) if (ref.from) meet({ id: ref.from.id, label: ref.from.qpath ?? ref.from.name ?? ref.from.id, qpath: ref.from.qpath });
  } else {
    const r = await api<CalleesAnswer>('callees', { path: node.qpath! }, signal);
    for (const c of r.callees) meet(c.to ? { id: c.to.id, label: c.to.qpath ?? c.to.name ?? c.to.id, qpath: c.to.qpath } : { id: `unresolved:${c.dstPath ?? c.id}`, label: c.dstPath ?? '?', qpath: null });
  }
  return ids;
}

/** Open `id`: load the neighbours on its side(s) that are not loaded yet. */
async function openBox(s: GraphState, id: string, level: number, signal: AbortSignal): Promise<void> {
  const node = s.known.get(id);
  if (!node || node.qpath === null) return;
  const sides: Side[] = level < 0 ? ['callers'] : level > 0 ? ['callees'] : ['callers', 'callees'];
  const links = s.links.get(id) ?? {};
  for (const side of sides) if (links[side] === undefined) links[side] = await neighbours(s, node, side, signal);
  s.links.set(id, links);
  s.open.add(id);
}

export function GraphPage(props: { place: Place; path: string }): JSX.Element {
  const depthParam = Number(props.place.params.get('depth') ?? DEFAULT_DEPTH);
  const depth = Number.isInteger(depthParam) && depthParam >= 1 && depthParam <= MAX_DEPTH ? depthParam : DEFAULT_DEPTH;
  const asOf = props.place.params.get('asOf');
  const [state, setState] = useState<{ graph: GraphState; version: number } | { error: ApiError } | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = `Call graph of ${props.path} — Mimir`;
  }, [props.path]);
  // load: the item, then every box above `depth` levels opened, level by level
  useEffect(() => {
    const cancel = new AbortController();
    setState(null);
    (async () => {
      const def = await api<DefAnswer>('def', { path: props.path }, cancel.signal);
      const hit = def.hits[0];
      if (!hit) throw new ApiError(`no live item has the path ${props.path} at generation ${def.generation} (its history may say when it went)`, 404);
      const g: GraphState = { root: hit.id, known: new Map([[hit.id, { id: hit.id, label: hit.qpath ?? props.path, qpath: hit.qpath ?? props.path }]]), links: new Map(), open: new Set() };
      for (let lvl = 0; lvl < depth; lvl++) {
        const { nodes } = visible(g);
        if (nodes.length > MAX_AUTO_NODES) break;
        for (const n of nodes) if (Math.abs(n.level) === lvl && !g.open.has(n.id)) await openBox(g, n.id, n.level, cancel.signal);
      }
      if (!cancel.signal.aborted) setState({ graph: g, version: 0 });
    })().catch((e: unknown) => {
      if (!cancel.signal.aborted) setState({ error: e instanceof ApiError ? e : new ApiError(String((e as Error)?.message ?? e), 0) });
    });
    return () => cancel.abort();
  }, [props.path, depth, asOf]);

  const title = (
    <h1 class="qpath-title">
      Call graph of <code>{props.path}</code>
    </h1>
  );
  const controls = (
    <form class="graph-controls" onSubmit={(e) => e.preventDefault()}>
      <label for="depth">Levels each way</label>
      <select id="depth" value={String(depth)} onChange={(e) => navigate(pageHref('graph', props.path, { depth: Number((e.target as HTMLSelectElement).value) }), { replace: true })}>
        {Array.from({ length: MAX_DEPTH }, (_, i) => i + 1).map((d) => (
          <option key={d} value={String(d)}>
            {d}
          </option>
        ))}
      </select>
      <Link href={pageHref('item', props.path)}>Item page</Link>
      <Link href={pageHref('history', props.path)}>History</Link>
    </form>
  );
  if (state === null) return <main>{title}{controls}<Loading what={`the call graph of ${props.path}`} /></main>;
  if ('error' in state) {
    return (
      <main>
        {title}
        <ErrorView error={state.error} title={state.error.status === 404 ? 'No item has this path' : undefined} suggest={(s) => pageHref('graph', s, { depth })} searchFor={props.path.slice(props.path.lastIndexOf(':') + 1)} />
      </main>
    );
  }
  const g = state.graph;
  const toggle = (id: string, level: number): void => {
    if (g.open.has(id)) {
      g.open.delete(id);
      setState({ graph: g, version: state.version + 1 });
      return;
    }
    setBusy(true);
    openBox(g, id, level, new AbortController().signal)
      .then(() => setState({ graph: g, version: state.version + 1 }))
      .catch((e: unknown) => setState({ error: e instanceof ApiError ? e : new ApiError(String((e as Error)?.message ?? e), 0) }))
      .finally(() => setBusy(false));
  };
  return (
    <main class="graph-page">
      {title}
      {controls}
      <Picture graph={g} version={state.version} path={props.path} depth={depth} toggle={toggle} busy={busy} />
    </main>
  );
}

function Picture(props: { graph: GraphState; version: number; path: string; depth: number; toggle: (id: string, level: number) => void; busy: boolean }): JSX.Element {
  const g = props.graph;
  const { nodes, edges } = useMemo(() => visible(g), [g, props.version]);
  const pic = useMemo(() => layoutGraph(nodes, edges), [nodes, edges]);
  // a picture wider than its box (a narrow window) opens scrolled to the item asked about
  const box = useRef<HTMLDivElement>(null);
  const root = pic.boxes.find((b) => b.level === 0);
  useEffect(() => {
    const el = box.current;
    if (el && root && el.scrollWidth > el.clientWidth) el.scrollLeft = Math.max(0, root.x + root.width / 2 - el.clientWidth / 2);
  }, [props.path, props.depth]);
  const callers = nodes.filter((n) => n.level < 0).length;
  const callees = nodes.filter((n) => n.level > 0).length;
  const exportSvg = (): void => {
    const text = pictureSvg(pic, `call graph of ${props.path} (${props.depth} levels each way)`);
    const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${props.path.replace(/::/g, '.').replace(/[^\w.-]/g, '_')}.graph.svg`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return (
    <>
      <p role="status">
        {callers} caller{callers === 1 ? '' : 's'} above, {callees} callee{callees === 1 ? '' : 's'} below. Click a box to open or close its further callers (callees); click a name to open its page.{props.busy ? ' Loading…' : ''}{' '}
        <button type="button" onClick={exportSvg}>
          Export SVG
        </button>
      </p>
      <div class="graph" ref={box} tabIndex={-1}>
        <svg xmlns="http://www.w3.org/2000/svg" width={pic.width} height={pic.height} viewBox={`0 0 ${pic.width} ${pic.height}`} role="img" aria-label={`call graph of ${props.path}`}>
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
              <path class="arrow" d="M0,0 L10,5 L0,10 z" />
            </marker>
          </defs>
          {pic.edges.map((e) => (
            <path key={`${e.from}>${e.to}`} class="edge" d={edgePath(e)} marker-end="url(#arrow)" />
          ))}
          {pic.boxes.map((b) => {
            const k = g.known.get(b.id);
            const openable = k?.qpath != null && b.level !== 0;
            const isOpen = g.open.has(b.id);
            const side = b.level < 0 ? 'callers' : 'callees';
            return (
              <g
                key={b.id}
                class={`box ${boxClass(b.level)}${openable ? (isOpen ? ' open' : ' closed') : ''}`}
                data-label={b.label}
                data-level={b.level}
                tabindex={openable ? 0 : undefined}
                role={openable ? 'button' : undefined}
                aria-expanded={openable ? isOpen : undefined}
                aria-label={openable ? `${isOpen ? 'close' : 'open'} the ${side} of ${b.label}` : undefined}
                onClick={openable ? () => props.toggle(b.id, b.level) : undefined}
                onKeyDown={
                  openable
                    ? (e: KeyboardEvent) => {
                        if (e.target !== e.currentTarget || (e.key !== 'Enter' && e.key !== ' ')) return;
                        e.preventDefault();
                        props.toggle(b.id, b.level);
                      }
                    : undefined
                }
              >
                <title>{openable ? `${b.label}: click to ${isOpen ? 'close' : 'open'} its ${side}` : b.label}</title>
                <rect x={b.x} y={b.y} width={b.width} height={b.height} rx={4} />
                {k?.qpath ? (
                  <a
                    href={pageHref('item', k.qpath)}
                    onClick={(e: MouseEvent) => {
                      e.stopPropagation();
                      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                      e.preventDefault();
                      navigate(pageHref('item', k.qpath!));
                    }}
                  >
                    <text x={b.x + b.width / 2} y={b.y + b.height / 2} text-anchor="middle" dominant-baseline="central">
                      {b.label}
                    </text>
                  </a>
                ) : (
                  <text x={b.x + b.width / 2} y={b.y + b.height / 2} text-anchor="middle" dominant-baseline="central">
                    {b.label}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
      </div>
      <p class="muted">
        The same picture from the command line: <code>mimir graph {props.path} --depth {props.depth} --svg out.svg</code>. <Link href={href('/search', { q: props.path.slice(props.path.lastIndexOf(':') + 1) })}>Search for similar names</Link>
      </p>
    </>
  );
}
