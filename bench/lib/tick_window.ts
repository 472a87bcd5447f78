/**
 * A space's cell tick times over a benchmark's window, from the tick
 * histogram every cellapp keeps of every tick (seamless_cell_tick_seconds in
 * the admin API's /metrics): read before and after, the difference is the
 * window's ticks, how many went over the budget, and percentiles to the
 * histogram's bucket bounds.
 */

/** Cumulative tick counts of one space's cells by bucket upper bound (seconds; Infinity for +Inf). */
export type TickBuckets = Map<number, number>;

/** The window's ticks as the histogram tells them. */
export interface TickWindow {
  ticks: number;
  /** Ticks that took longer than the budget. */
  overBudget: number;
  /** Upper bounds (ms) of the buckets the 50th and 99th percentile and the longest tick fall in; null without ticks. */
  p50LeMs: number | null;
  p99LeMs: number | null;
  maxLeMs: number | null;
}

const SAMPLE = /^seamless_cell_tick_seconds_bucket\{([^}]*)\}\s+(\S+)/;

/** The tick histogram of space `spaceId` (summed over its cells) in Prometheus text from /metrics. */
export function parseTickBuckets(text: string, spaceId: number): TickBuckets {
  const out: TickBuckets = new Map();
  for (const line of text.split("\n")) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const labels = new Map([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.get("space") !== String(spaceId)) continue;
    const le = labels.get("le") === "+Inf" ? Infinity : Number(labels.get("le"));
    out.set(le, (out.get(le) ?? 0) + Number(m[2]));
  }
  return out;
}

/** Reads space `spaceId`'s tick histogram from the admin API at `admin`. */
export async function readTickBuckets(admin: string, spaceId: number): Promise<TickBuckets> {
  const res = await fetch(`${admin}/metrics`);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${admin}/metrics: ${res.status} ${text.slice(0, 200)}`);
  const buckets = parseTickBuckets(text, spaceId);
  if (buckets.size === 0) throw new Error(`GET ${admin}/metrics has no seamless_cell_tick_seconds of space ${spaceId}`);
  return buckets;
}

/**
 * The ticks between two readings. `budgetMs` must be a bucket bound (100 ms is) for `overBudget` to be exact;
 * otherwise it counts the ticks above the first bound past the budget.
 */
export function tickWindow(before: TickBuckets, after: TickBuckets, budgetMs: number): TickWindow {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const cum = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const ticks = cum.at(-1) ?? 0;
  const within = bounds.findIndex((le) => le * 1000 >= budgetMs - 1e-9);
  const overBudget = within < 0 ? 0 : ticks - cum[within];
  const at = (q: number): number | null => {
    if (ticks === 0) return null;
    const i = cum.findIndex((n) => n >= q * ticks);
    return bounds[i] * 1000;
  };
  return { ticks, overBudget, p50LeMs: at(0.5), p99LeMs: at(0.99), maxLeMs: at(1) };
}
