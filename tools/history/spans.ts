/** Time spans as sorted, disjoint lists of [from, to) pairs: what the history checker intersects. */

/** A sorted list of disjoint [from, to) spans, in wall-clock ms. */
export type Spans = [number, number][];

/** The parts of `a` that are also in `b`. */
export function intersect(a: Spans, b: Spans): Spans {
  const out: Spans = [];
  let i = 0, j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i][0], b[j][0]);
    const to = Math.min(a[i][1], b[j][1]);
    if (from < to) out.push([from, to]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/** The parts of `a` not in `b`. */
export function subtract(a: Spans, b: Spans): Spans {
  const out: Spans = [];
  for (const [from0, to] of a) {
    let from = from0;
    for (const [bf, bt] of b) {
      if (bt <= from || bf >= to) continue;
      if (bf > from) out.push([from, bf]);
      from = Math.max(from, bt);
      if (from >= to) break;
    }
    if (from < to) out.push([from, to]);
  }
  return out;
}

/** The total length of `s`. */
export function length(s: Spans): number {
  return s.reduce((n, [from, to]) => n + (to - from), 0);
}
