// A line diff for people: the lines of `before` and `after` as kept, removed
// or added, by a longest common subsequence of whole lines. Pure. Bounded:
// texts whose table would exceed MAX_CELLS are shown as all removed, then all
// added (still right, only less precise).

export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** Cells of the LCS table above which the diff is not searched (an item of a few thousand lines). */
const MAX_CELLS = 4_000_000;

export function lineDiff(before: readonly string[], after: readonly string[]): DiffLine[] {
  const n = before.length;
  const m = after.length;
  if (n * m > MAX_CELLS) return [...before.map((text): DiffLine => ({ op: '-', text })), ...after.map((text): DiffLine => ({ op: '+', text }))];
  // lcs[i][j]: the longest common subsequence of before[i..] and after[j..]
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i]![j] = before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      out.push({ op: ' ', text: before[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: '-', text: before[i++]! });
    else out.push({ op: '+', text: after[j++]! });
  }
  while (i < n) out.push({ op: '-', text: before[i++]! });
  while (j < m) out.push({ op: '+', text: after[j++]! });
  return out;
}
