/**
 * Moving a space's partitions toward its load (docs/architecture.md, "Balancing").
 * Each balance period the tree is walked from the root; at each split the two
 * sides' average load per cell is compared and the partition moves into the
 * more loaded side by the distance that side's entity-bound levels say hands
 * over the difference, scaled by the partition's aggression and clamped so
 * that no cell gets too narrow or leaves the space. A partition next to a
 * retiring cell instead closes that cell, whatever the load.
 */
import {
  type BspNode,
  type BspSplit,
  type CellRect,
  cellRects,
  isCell,
  type Rect,
  splitRect,
} from "../../core/geo/mod.ts";
import type { EntityBounds } from "../../core/wire/mod.ts";
import { AggressionTable, partitionKey, type PartitionState } from "./aggression.ts";
import { type EdgeCell, shiftDepth } from "./levels.ts";
import type { BalanceOptions, CellLoad } from "./types.ts";

/** Positions closer than this (m) are the same: a cell this narrow has no width. */
export const WIDTH_EPSILON = 1e-6;

const NO_CELLS: ReadonlySet<number> = new Set();

/** The extent [lo, hi] of `r` on `axis`. */
export function extent(r: Rect, axis: "x" | "z"): [number, number] {
  return axis === "x" ? [r.minX, r.maxX] : [r.minZ, r.maxZ];
}

/**
 * One space's balancer: it keeps each partition's aggression from one period
 * to the next, and is otherwise a pure function of the tree and the loads.
 */
export class SpaceBalancer {
  readonly #options: BalanceOptions;
  readonly #aggression: AggressionTable;

  constructor(options: BalanceOptions) {
    this.#options = options;
    this.#aggression = new AggressionTable(options);
  }

  /**
   * One balance period: the tree with its partitions moved toward the load
   * (a new object when any moved, `tree` itself when none did; `tree` is
   * never changed). Cells missing from `loads` count as unloaded. Cells in
   * `retiring` shrink to zero width, at most maxStep per period.
   */
  balance(
    tree: BspNode,
    bounds: Rect,
    loads: ReadonlyMap<number, CellLoad>,
    retiring: ReadonlySet<number> = NO_CELLS,
  ): BspNode {
    const seen = new Set<string>();
    const walk = (n: BspNode, r: Rect): BspNode => {
      if (isCell(n)) return n;
      const at = this.#move(n, r, loads, retiring, seen);
      const [lr, rr] = splitRect(r, n.axis, at);
      const left = walk(n.left, lr);
      const right = walk(n.right, rr);
      return at === n.at && left === n.left && right === n.right ? n : { axis: n.axis, at, left, right };
    };
    const out = walk(tree, bounds);
    this.#aggression.keepOnly(seen);
    return out;
  }

  /** What the balancer remembers of each partition that has moved (for the admin API and tests). */
  partitions(): PartitionState[] {
    return this.#aggression.states();
  }

  /** The state of the partition with `leftIds` below it and `rightIds` above it on `axis`, if it has moved. */
  partition(axis: "x" | "z", leftIds: readonly number[], rightIds: readonly number[]): PartitionState | undefined {
    return this.#aggression.get(partitionKey(axis, leftIds, rightIds));
  }

  /** The new position of split `n` over rect `r`. */
  #move(
    n: BspSplit,
    r: Rect,
    loads: ReadonlyMap<number, CellLoad>,
    retiring: ReadonlySet<number>,
    seen: Set<string>,
  ): number {
    const { maxStep, deadband, tolerance } = this.#options;
    const [lo, hi] = extent(r, n.axis);
    if (isCell(n.left) && retiring.has(n.left.cell.id)) return Math.max(lo, n.at - maxStep);
    if (isCell(n.right) && retiring.has(n.right.cell.id)) return Math.min(hi, n.at + maxStep);

    const [lr, rr] = splitRect(r, n.axis, n.at);
    const left = cellRects(n.left, lr);
    const right = cellRects(n.right, rr);
    const key = partitionKey(n.axis, left.map((c) => c.id), right.map((c) => c.id));
    seen.add(key);
    const side = (cells: CellRect[]) => {
      const staying = cells.filter((c) => !retiring.has(c.id)).length;
      const load = cells.reduce((s, c) => s + (loads.get(c.id)?.load ?? 0), 0);
      return { staying, load };
    };
    const l = side(left);
    const rt = side(right);
    // A side that is all retiring cells is closed by the partitions inside it.
    if (l.staying === 0 || rt.staying === 0) return n.at;
    const diff = l.load / l.staying - rt.load / rt.staying;
    const mean = (l.load + rt.load) / (l.staying + rt.staying);
    if (!(Math.abs(diff) >= Math.max(deadband, tolerance * mean)) || diff === 0) return n.at;

    const direction = diff > 0 ? -1 : 1;
    // The load to hand over so both sides carry the same load per cell
    // (half the difference when each side has one cell).
    const share = Math.abs(l.load * rt.staying - rt.load * l.staying) / (l.staying + rt.staying);
    const loaded = direction < 0 ? left : right;
    const wanted = this.#wantedDepth(n, loaded, direction < 0 ? lo : hi, share, loads);
    const aggression = this.#aggression.peek(key, direction);
    const room = this.#room(n, loaded, retiring, direction);
    const depth = Math.min(wanted * aggression, maxStep, room);
    if (!(depth > WIDTH_EPSILON)) return n.at;
    this.#aggression.commit(key, direction, aggression);
    return n.at + direction * depth;
  }

  /**
   * How deep into the loaded side the partition must go to hand over
   * `share`: from the entity-bound levels of the cells touching it; when none
   * has reported them, the side's width times the share of its load.
   */
  #wantedDepth(
    n: BspSplit,
    loaded: CellRect[],
    farEdge: number,
    share: number,
    loads: ReadonlyMap<number, CellLoad>,
  ): number {
    const toward = n.at > farEdge ? -1 : 1;
    const edge: EdgeCell[] = [];
    for (const c of loaded) {
      const [clo, chi] = extent(c.rect, n.axis);
      const near = toward < 0 ? chi : clo;
      if (Math.abs(near - n.at) > WIDTH_EPSILON) continue;
      const report = loads.get(c.id);
      edge.push({
        load: report?.load ?? 0,
        depth: chi - clo,
        levels: report?.bounds && levelDepths(report.bounds, n.axis, toward, n.at),
      });
    }
    if (edge.some((c) => c.levels)) return shiftDepth(edge, share);
    const sideLoad = loaded.reduce((s, c) => s + (loads.get(c.id)?.load ?? 0), 0);
    const width = Math.abs(n.at - farEdge);
    return sideLoad > 0 && share > 0 ? width * Math.min(1, share / sideLoad) : 0;
  }

  /**
   * How far the partition may go into the loaded side: no cell there becomes
   * narrower than minWidth (one already narrower, such as a new cell growing
   * from zero, does not shrink at all; a retiring one may shrink to nothing),
   * and no cell is turned inside out.
   */
  #room(n: BspSplit, loaded: CellRect[], retiring: ReadonlySet<number>, direction: -1 | 1): number {
    let room = Infinity;
    for (const c of loaded) {
      const [clo, chi] = extent(c.rect, n.axis);
      const width = chi - clo;
      const keep = retiring.has(c.id) ? 0 : Math.min(this.#options.minWidth, width);
      // The partition may come no closer than this to the cell's far edge.
      const limit = direction < 0 ? Math.min(chi, clo + keep) : Math.max(clo, chi - keep);
      room = Math.min(room, Math.max(0, (n.at - limit) * -direction));
    }
    return room;
  }
}

/** The depths from the partition at `at` of a cell's levels on the edge facing it. */
function levelDepths(b: EntityBounds, axis: "x" | "z", toward: -1 | 1, at: number): number[] {
  // Moving toward lower coordinates eats the cell's max edge, whose levels are maxX/maxZ.
  const levels = toward < 0 ? (axis === "x" ? b.maxX : b.maxZ) : (axis === "x" ? b.minX : b.minZ);
  return levels.map((p) => Math.max(0, toward < 0 ? at - p : p - at));
}
