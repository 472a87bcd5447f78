/**
 * A synthetic world for the load balancer's tests: entities at fixed
 * positions, each with a load; each balance period every cell's load and
 * entity-bound levels are computed from the entities inside its rect, as a
 * cellapp would report them.
 */
import { seededRandom } from "../../core/random.ts";
import { type BspNode, cellIndexAt, cellRects, isCell } from "../../core/geo/mod.ts";
import type { Rect } from "../../core/geo/mod.ts";
import { BOUND_LEVELS, type EntityBounds } from "../../core/wire/mod.ts";
import type { CellLoad } from "../../mgr/balance/mod.ts";

/** An entity of the synthetic world. */
export interface Entity {
  x: number;
  z: number;
  load: number;
}

/** A seeded random number generator, so that every run sees the same world. */
export const rng: (seed: number) => () => number = seededRandom;

/** `count` entities spread evenly over `r`. */
export function uniform(random: () => number, r: Rect, count: number, load: number): Entity[] {
  return Array.from({ length: count }, () => ({
    x: r.minX + random() * (r.maxX - r.minX),
    z: r.minZ + random() * (r.maxZ - r.minZ),
    load,
  }));
}

/** `count` entities gathered around (x, z) with standard deviation `sd`, kept inside `r`. */
export function crowd(
  random: () => number,
  r: Rect,
  x: number,
  z: number,
  sd: number,
  count: number,
  load: number,
): Entity[] {
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi - 1e-3, Math.max(lo, v));
  return Array.from({ length: count }, () => ({
    x: clamp(x + gauss() * sd, r.minX, r.maxX),
    z: clamp(z + gauss() * sd, r.minZ, r.maxZ),
    load,
  }));
}

/** Every cell's load, reals and entity-bound levels, from the entities inside it. */
export function measure(tree: BspNode, entities: readonly Entity[], withBounds = true): Map<number, CellLoad> {
  const ids = cellIds(tree);
  const inside: Entity[][] = ids.map(() => []);
  for (const e of entities) inside[cellIndexAt(tree, e.x, e.z)].push(e);
  return new Map(ids.map((id, i) => {
    const es = inside[i];
    const load = es.reduce((s, e) => s + e.load, 0);
    const report: CellLoad = { load, reals: es.length };
    if (withBounds) report.bounds = boundLevels(es, load);
    return [id, report];
  }));
}

/** The entity-bound levels of a cell's entities, as core/wire's EntityBounds defines them. */
export function boundLevels(es: readonly Entity[], total: number): EntityBounds {
  if (es.length === 0 || total <= 0) return { minX: [], maxX: [], minZ: [], maxZ: [] };
  const levels = (coord: (e: Entity) => number, ascending: boolean): number[] => {
    const sorted = [...es].sort((a, b) => ascending ? coord(a) - coord(b) : coord(b) - coord(a));
    const out: number[] = [];
    let sum = 0;
    let i = 0;
    for (const level of BOUND_LEVELS) {
      while (i < sorted.length - 1 && sum + sorted[i].load < level * total) sum += sorted[i++].load;
      out.push(coord(sorted[i]));
    }
    return out;
  };
  return {
    minX: levels((e) => e.x, true),
    maxX: levels((e) => e.x, false),
    minZ: levels((e) => e.z, true),
    maxZ: levels((e) => e.z, false),
  };
}

/** The ids of the tree's cells, in cellRects order. */
export function cellIds(tree: BspNode): number[] {
  return isCell(tree) ? [tree.cell.id] : [...cellIds(tree.left), ...cellIds(tree.right)];
}

/** Every split's position, keyed by the ids on each side (so trees of the same shape compare). */
export function splitPositions(tree: BspNode): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (n: BspNode): void => {
    if (isCell(n)) return;
    out.set(`${n.axis}:${cellIds(n.left)}|${cellIds(n.right)}`, n.at);
    walk(n.left);
    walk(n.right);
  };
  walk(tree);
  return out;
}

/** Each cell's width on its narrower side. */
export function narrowest(tree: BspNode, bounds: Rect): Map<number, number> {
  return new Map(
    cellRects(tree, bounds).map((c) => [c.id, Math.min(c.rect.maxX - c.rect.minX, c.rect.maxZ - c.rect.minZ)]),
  );
}
