/**
 * Repeated passes of a noisy benchmark: each figure as its median and range over the passes kept, and the rule,
 * fixed before the run, by which a pass that other work on the machine disturbed is flagged and dropped.
 */

/** A figure over several passes: its median, lowest and highest, and how many passes had it. */
export interface Spread {
  median: number | null;
  min: number | null;
  max: number | null;
  n: number;
}

/** The median and range of the finite values among `values` (null, undefined and NaN are left out). */
export function spread(values: readonly (number | null | undefined)[]): Spread {
  const v = values.filter((x): x is number => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return { median: null, min: null, max: null, n: 0 };
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1], n: v.length };
}

/** The position in `values` of the one nearest their median (the first of equals); -1 for none. */
export function nearestMedian(values: readonly number[]): number {
  const m = spread(values).median;
  if (m === null) return -1;
  let best = -1;
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) continue;
    if (best < 0 || Math.abs(values[i] - m) < Math.abs(values[best] - m)) best = i;
  }
  return best;
}

/** The ratio of two medians, or null when either is missing or the divisor is zero. */
export function medianRatio(a: Spread, b: Spread): number | null {
  return a.median === null || b.median === null || b.median === 0 ? null : a.median / b.median;
}

/** The drop rule: what counts as a disturbed pass, and how many clean passes must remain for it to be dropped. */
export interface DisturbanceRule {
  /** A pass during which the rest of the machine used more than this share of one core is disturbed. */
  otherAbove: number;
  /** Disturbed passes are dropped only when at least this many undisturbed ones remain; else all are kept. */
  keepAtLeast: number;
}

/** The rule `bench peer --passes` states before its first pass. */
export const PEER_RULE: DisturbanceRule = { otherAbove: 0.15, keepAtLeast: 3 };

/** The rule in words, printed before the run and written beside its figures. */
export function describeRule(rule: DisturbanceRule): string {
  return `A pass is disturbed when the rest of the machine used more than ${
    Math.round(rule.otherAbove * 100)
  } % of one core during it. Disturbed passes are flagged; they are left out of the medians only when at least ${rule.keepAtLeast} undisturbed passes of the same server and scene remain, and otherwise kept (and the figures marked).`;
}

/** One pass of one server: its figures and the share of a core the rest of the machine used meanwhile. */
export interface Pass<T> {
  /** 1-based, in the order run. */
  index: number;
  figures: T;
  /** Share of one core the machine's other work used during the pass; null when unknown. */
  other: number | null;
}

/** Which passes the rule keeps for the medians. */
export interface Kept<T> {
  kept: Pass<T>[];
  /** Passes over the threshold (whether dropped or not). */
  disturbed: Pass<T>[];
  /** True when disturbed passes had to be kept, too few clean ones remaining. */
  marked: boolean;
}

/** Applies `rule` to one server's passes of one scene. */
export function applyRule<T>(passes: readonly Pass<T>[], rule: DisturbanceRule): Kept<T> {
  const disturbed = passes.filter((p) => p.other !== null && p.other > rule.otherAbove);
  const clean = passes.filter((p) => !disturbed.includes(p));
  if (disturbed.length === 0) return { kept: [...passes], disturbed, marked: false };
  if (clean.length >= rule.keepAtLeast) return { kept: clean, disturbed, marked: false };
  return { kept: [...passes], disturbed, marked: true };
}
