/** One tick of a walk along a navigation path (cell/controllers.ts Navigation): no allocation, as it runs per walker. */
import type { Vec3 } from "../../core/script.ts";

/** Where a walk's tick ends, and the direction of its last leg (for facing). */
export interface WalkStep {
  x: number;
  y: number;
  z: number;
  dx: number;
  dz: number;
}

/**
 * Walks `distance` metres from `from` along `path`, dropping the corners passed from its front; the end is written to
 * `out`. Returns true once the last corner is reached.
 */
export function walkPath(from: Readonly<Vec3>, path: Vec3[], distance: number, out: WalkStep): boolean {
  let { x, y, z } = from;
  let budget = distance;
  out.dx = 0;
  out.dz = 0;
  while (path.length > 0) {
    const p = path[0];
    const dx = p.x - x, dy = p.y - y, dz = p.z - z;
    const d = Math.sqrt(dx * dx + dz * dz);
    if (d > 1e-9) {
      out.dx = dx;
      out.dz = dz;
    }
    if (d <= budget) {
      x = p.x;
      y = p.y;
      z = p.z;
      budget -= d;
      path.shift();
      continue;
    }
    const f = budget / d;
    x += dx * f;
    y += dy * f;
    z += dz * f;
    break;
  }
  out.x = x;
  out.y = y;
  out.z = z;
  return path.length === 0;
}
