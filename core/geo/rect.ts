/** Axis-aligned rectangles on the ground plane (X and Z). */

/** A rectangle [minX, maxX) x [minZ, maxZ); Infinity marks an unbounded side. */
export interface Rect {
  /** West edge (m). */
  minX: number;
  /** South edge (m). */
  minZ: number;
  /** East edge (m). */
  maxX: number;
  /** North edge (m). */
  maxZ: number;
}

/** A rect from the admin API's `[minX, minZ, maxX, maxZ]`. */
export function rectFromArray(a: readonly [number, number, number, number]): Rect {
  return { minX: a[0], minZ: a[1], maxX: a[2], maxZ: a[3] };
}

/** The admin API's `[minX, minZ, maxX, maxZ]` of a rect. */
export function rectToArray(r: Rect): [number, number, number, number] {
  return [r.minX, r.minZ, r.maxX, r.maxZ];
}

/** Whether (x, z) lies in `r`; min edges belong to the rect, max edges to the next one. */
export function rectContains(r: Rect, x: number, z: number): boolean {
  return x >= r.minX && x < r.maxX && z >= r.minZ && z < r.maxZ;
}

/** `r` grown by `d` on every side. */
export function rectGrow(r: Rect, d: number): Rect {
  return { minX: r.minX - d, minZ: r.minZ - d, maxX: r.maxX + d, maxZ: r.maxZ + d };
}

/** How far (x, z) lies outside `r` (0 inside), as the larger of the two axis distances. */
export function rectDistanceOutside(r: Rect, x: number, z: number): number {
  const dx = x < r.minX ? r.minX - x : x >= r.maxX ? x - r.maxX : 0;
  const dz = z < r.minZ ? r.minZ - z : z >= r.maxZ ? z - r.maxZ : 0;
  return Math.max(dx, dz);
}

/** Area of `r` (Infinity when unbounded). */
export function rectArea(r: Rect): number {
  return (r.maxX - r.minX) * (r.maxZ - r.minZ);
}

/** Whether two rects overlap or touch. */
export function rectsTouch(a: Rect, b: Rect): boolean {
  return a.minX <= b.maxX && b.minX <= a.maxX && a.minZ <= b.maxZ && b.minZ <= a.maxZ;
}

/**
 * Largest coordinate of a position anywhere in the cluster, in metres: far
 * beyond any world, small enough that positions stay exact where they travel.
 */
export const MAX_COORD = 1e9;

/** Whether `n` is a finite number within ±MAX_COORD (false for NaN). */
function coordWithinWorld(n: number): boolean {
  return n >= -MAX_COORD && n <= MAX_COORD;
}

/** Whether every coordinate of `v` is a finite number within ±MAX_COORD. */
export function withinWorld(v: readonly number[]): boolean {
  for (const n of v) if (!coordWithinWorld(n)) return false;
  return true;
}

/** `withinWorld` of the point (x, y, z), with no array to build (a client's every move is checked). */
export function pointWithinWorld(x: number, y: number, z: number): boolean {
  return coordWithinWorld(x) && coordWithinWorld(y) && coordWithinWorld(z);
}

/** `a` in radians wrapped into [-π, π]; NaN for a value that is not finite. */
export function wrapAngle(a: number): number {
  if (!Number.isFinite(a)) return NaN;
  if (a >= -Math.PI && a <= Math.PI) return a;
  const t = (a + Math.PI) % (2 * Math.PI);
  return (t < 0 ? t + 2 * Math.PI : t) - Math.PI;
}
