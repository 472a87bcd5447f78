/**
 * Reading the entity-bound levels cells report: how far a partition must move
 * into its loaded side to hand a given load to the other side. Distances are
 * depths, counted from the partition into the loaded side.
 */
import { BOUND_LEVELS } from "../../core/wire/mod.ts";

/** A cell of the loaded side that touches the partition. */
export interface EdgeCell {
  /** The cell's load. */
  load: number;
  /** Depth of its far edge (its width across the partition); may be Infinity. */
  depth: number;
  /**
   * Depths within which BOUND_LEVELS[i] of its entity load lies (from its
   * edge on the partition); empty when it has no reals, absent when it has
   * not reported them (its load is then taken as spread evenly).
   */
  levels?: readonly number[];
}

/**
 * The share of `c`'s load that lies within `depth` of the partition: linear
 * between the reported levels, and from the last level to the whole load at
 * the far edge.
 */
export function loadWithin(c: EdgeCell, depth: number): number {
  if (depth <= 0 || c.load <= 0) return 0;
  if (!c.levels) return Number.isFinite(c.depth) && c.depth > 0 ? c.load * Math.min(1, depth / c.depth) : 0;
  if (c.levels.length === 0) return 0;
  let d0 = 0;
  let f0 = 0;
  const n = Math.min(c.levels.length, BOUND_LEVELS.length);
  for (let i = 0; i <= n; i++) {
    // Levels are read from sorted positions, but a report may be rounded: keep them in order.
    const last = i === n;
    let d1 = last ? c.depth : Math.max(d0, c.levels[i]);
    const f1 = last ? 1 : BOUND_LEVELS[i];
    // An unbounded cell: the rest of its load lies as far again as the last level.
    if (last && !Number.isFinite(d1)) d1 = Math.max(2 * d0, d0 + 1);
    if (depth <= d1) return c.load * (d1 > d0 ? f0 + (f1 - f0) * (depth - d0) / (d1 - d0) : f1);
    d0 = d1;
    f0 = f1;
  }
  return c.load;
}

/**
 * How deep into the loaded side the partition must move so that the cells
 * touching it hand over `share` of load (all they have when they have less).
 * Found by bisection: loadWithin only grows with depth.
 */
export function shiftDepth(cells: readonly EdgeCell[], share: number): number {
  const total = (d: number) => cells.reduce((s, c) => s + loadWithin(c, d), 0);
  let hi = 0;
  for (const c of cells) {
    const far = Number.isFinite(c.depth) ? c.depth : Math.max(1, 2 * Math.max(0, ...(c.levels ?? [0])));
    hi = Math.max(hi, far);
  }
  const target = Math.min(share, total(hi));
  if (!(target > 0)) return 0;
  let lo = 0;
  for (let i = 0; i < 50 && hi - lo > 1e-6; i++) {
    const mid = (lo + hi) / 2;
    if (total(mid) >= target) hi = mid;
    else lo = mid;
  }
  return hi;
}
