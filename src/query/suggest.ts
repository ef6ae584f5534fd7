// Names for people: "did you mean" over the names a lake knows, and the
// fuzzy ranking of `find` (an editor's symbol search: a query matches a name
// when its characters appear in order; runs, word starts and camel humps
// score higher). Pure functions over strings; nothing here reads the lake.

/**
 * Optimal-string-alignment distance (insert, delete, substitute, swap two
 * neighbours), or `max + 1` as soon as it must exceed `max`.
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n]!;
}

/**
 * The known names closest to `wanted` (case-insensitive), best first: at most
 * `limit`, within a distance that grows with the length of the name's last
 * `::` segment (1 for short names, a third of the length for long ones), so a
 * long path does not make far names look close. Ties break by name.
 */
export function didYouMean(wanted: string, known: Iterable<string>, limit = 3): string[] {
  const w = wanted.toLowerCase();
  const last = w.slice(w.lastIndexOf('::') + 1);
  const max = Math.max(1, Math.floor(last.replace(/^:/, '').length / 3));
  const scored: { name: string; d: number }[] = [];
  const seen = new Set<string>();
  for (const name of known) {
    if (seen.has(name)) continue;
    seen.add(name);
    const d = editDistance(w, name.toLowerCase(), max);
    if (d <= max) scored.push({ name, d });
  }
  scored.sort((x, y) => x.d - y.d || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.name);
}

/** "did you mean a, b?" or "" when there is nothing close. */
export function didYouMeanText(wanted: string, known: Iterable<string>): string {
  const close = didYouMean(wanted, known);
  return close.length === 0 ? '' : `did you mean ${close.join(', ')}?`;
}

const isUpper = (c: string): boolean => c >= 'A' && c <= 'Z';
const isLower = (c: string): boolean => c >= 'a' && c <= 'z';

/** Is position `i` of `name` a word start (first char, after `_`/`:`, a camel hump, a digit run start)? */
function wordStart(name: string, i: number): boolean {
  if (i === 0) return true;
  const p = name[i - 1]!;
  const c = name[i]!;
  if (p === '_' || p === ':' || p === '-' || p === '.') return true;
  if (isUpper(c) && isLower(p)) return true;
  const digit = (x: string): boolean => x >= '0' && x <= '9';
  return digit(c) && !digit(p);
}

/**
 * How well `query` matches `name` as an editor's symbol search does, or null
 * when its characters do not all appear in order (case-insensitive). Higher is
 * better: exact > prefix > consecutive runs and word starts > scattered; a
 * shorter name wins a tie. Greedy, left to right, preferring word starts.
 */
export function fuzzyScore(query: string, name: string): number | null {
  if (query === '') return 0;
  const q = query.toLowerCase();
  const n = name.toLowerCase();
  if (n === q) return 1_000_000 - name.length;
  if (n.startsWith(q)) return 500_000 - name.length;
  let score = 0;
  let at = 0;
  let prevMatch = -2;
  for (let k = 0; k < q.length; k++) {
    const ch = q[k]!;
    // prefer the next word start holding ch, else the next ch at all
    let pick = -1;
    for (let i = at; i < n.length; i++) {
      if (n[i] !== ch) continue;
      if (i === prevMatch + 1 || wordStart(name, i)) {
        pick = i;
        break;
      }
      if (pick < 0) pick = i;
    }
    if (pick < 0) return null;
    score += 10;
    if (pick === prevMatch + 1) score += 15;
    if (wordStart(name, pick)) score += 20;
    if (query[k] === name[pick]) score += 1; // same case
    prevMatch = pick;
    at = pick + 1;
  }
  return score * 100 - name.length;
}

/** `names` that fuzzily match `query`, best first (ties by name), at most `limit`. */
export function fuzzyRank<T>(query: string, items: Iterable<T>, nameOf: (t: T) => string, limit = Infinity): T[] {
  const scored: { t: T; s: number; name: string }[] = [];
  for (const t of items) {
    const name = nameOf(t);
    const s = fuzzyScore(query, name);
    if (s !== null) scored.push({ t, s, name });
  }
  scored.sort((a, b) => b.s - a.s || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, limit).map((x) => x.t);
}
