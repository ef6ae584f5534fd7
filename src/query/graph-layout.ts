// A call graph as a picture: items as boxes placed in layers by dagre
// (@dagrejs/dagre: callers above, the item asked about, callees below; every
// edge points down, from the caller to the callee) and the standalone SVG
// text of it. One module for both pictures: `mimir graph --svg` (cli) and the
// web UI's /graph page, which draws the same boxes and edges inline and
// exports this SVG text. Pure: no I/O, no DOM, no other module of src/ (the
// web bundle imports it; scripts/check-layers.ts holds it to that).
//
// Invariants: a box is as wide as its label in a monospace face of FONT_PX
// (CHAR_PX a character, plus padding), so the picture needs no text
// measuring; the same graph gives the same picture (dagre is deterministic,
// nodes and edges are added in the order given). The SVG carries its own
// styles (light, and dark through prefers-color-scheme) and escapes every
// label. Crash story: nothing written.
import dagre from '@dagrejs/dagre';

/** An item of the picture. `level`: 0 the item asked about, negative its callers (-1 direct), positive its callees. */
export interface LayoutNode {
  id: string;
  label: string;
  level: number;
}

/** A call, from the caller to the callee (ids of LayoutNodes). */
export interface LayoutEdge {
  from: string;
  to: string;
}

export interface PlacedBox extends LayoutNode {
  /** Top-left corner and size, in SVG user units (px). */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge extends LayoutEdge {
  /** The polyline dagre routed, from the caller's box to the callee's. */
  points: { x: number; y: number }[];
}

export interface GraphPicture {
  width: number;
  height: number;
  boxes: PlacedBox[];
  edges: PlacedEdge[];
}

/** Font size of a label, and the width of one of its characters (monospace, a little generous). */
export const FONT_PX = 12;
export const CHAR_PX = 7.4;
const BOX_H = 28;
const PAD_X = 12;
const MARGIN = 16;

/** Place `nodes` (and the `edges` between them; an edge naming a missing node is left out) top to bottom. */
export function layoutGraph(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): GraphPicture {
  const g = new dagre.graphlib.Graph({ multigraph: false });
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 48, marginx: MARGIN, marginy: MARGIN });
  g.setDefaultEdgeLabel(() => ({}));
  const byId = new Map<string, LayoutNode>();
  for (const n of nodes) {
    if (byId.has(n.id)) continue;
    byId.set(n.id, n);
    g.setNode(n.id, { width: Math.ceil(n.label.length * CHAR_PX) + 2 * PAD_X, height: BOX_H });
  }
  const kept: LayoutEdge[] = [];
  for (const e of edges) {
    if (!byId.has(e.from) || !byId.has(e.to) || e.from === e.to || g.hasEdge(e.from, e.to)) continue;
    g.setEdge(e.from, e.to);
    kept.push(e);
  }
  dagre.layout(g);
  const boxes = [...byId.values()].map((n): PlacedBox => {
    const p = g.node(n.id);
    return { ...n, x: p.x - p.width / 2, y: p.y - p.height / 2, width: p.width, height: p.height };
  });
  const placed = kept.map((e): PlacedEdge => ({ ...e, points: ((g.edge(e.from, e.to).points ?? []) as { x: number; y: number }[]).map((p) => ({ x: p.x, y: p.y })) }));
  const label = g.graph();
  return { width: Math.ceil(label.width ?? 0), height: Math.ceil(label.height ?? 0), boxes, edges: placed };
}

/** The SVG path (`d`) of an edge's polyline. */
export function edgePath(e: PlacedEdge): string {
  return e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${round(p.x)},${round(p.y)}`).join(' ');
}

/** The class of a box by its level: `root`, `caller` or `callee`. */
export function boxClass(level: number): 'root' | 'caller' | 'callee' {
  return level === 0 ? 'root' : level < 0 ? 'caller' : 'callee';
}

const round = (v: number): number => Math.round(v * 10) / 10;
const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The styles the SVG carries (the web page's inline picture uses the same class names). */
export const SVG_STYLE = [
  'svg{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}',
  '.box rect{fill:#f6f8fa;stroke:#57606a;stroke-width:1}',
  '.box.root rect{fill:#ddf4ff;stroke:#0969da;stroke-width:2}',
  '.box.caller rect{fill:#fff8c5}',
  '.box text{fill:#1f2328}',
  '.edge{fill:none;stroke:#57606a;stroke-width:1.2}',
  '.arrow{fill:#57606a}',
  '@media (prefers-color-scheme:dark){.bg{fill:#0d1117}.box rect{fill:#161b22;stroke:#8b949e}.box.root rect{fill:#0c2d6b;stroke:#58a6ff}.box.caller rect{fill:#3b2e00}.box text{fill:#e6edf3}.edge{stroke:#8b949e}.arrow{fill:#8b949e}}',
].join('\n');

/** A standalone SVG document of the picture: its styles inside, every label escaped, `title` as its <title>. */
export function pictureSvg(p: GraphPicture, title: string): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${p.width}" height="${p.height}" viewBox="0 0 ${p.width} ${p.height}">`,
    `<title>${esc(title)}</title>`,
    `<style>\n${SVG_STYLE}\n</style>`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path class="arrow" d="M0,0 L10,5 L0,10 z"/></marker></defs>',
    `<rect class="bg" width="${p.width}" height="${p.height}" fill="none"/>`,
  ];
  for (const e of p.edges) out.push(`<path class="edge" d="${edgePath(e)}" marker-end="url(#arrow)"/>`);
  for (const b of p.boxes) {
    out.push(
      `<g class="box ${boxClass(b.level)}" data-id="${esc(b.id)}"><rect x="${round(b.x)}" y="${round(b.y)}" width="${round(b.width)}" height="${round(b.height)}" rx="4"/><text x="${round(b.x + b.width / 2)}" y="${round(b.y + b.height / 2)}" text-anchor="middle" dominant-baseline="central">${esc(b.label)}</text></g>`,
    );
  }
  out.push('</svg>', '');
  return out.join('\n');
}
