/**
 * A space's BSP tree (docs/architecture.md, "Spaces and cells"): inner nodes split the plane at
 * a position on X or Z (horizontal and vertical lines only, so a kd-tree);
 * leaves are cells, each with an id unique within its space and run by one
 * cellapp (a cellapp may run several cells of a space). The cellappmgr builds
 * it, every cellapp of the space holds a copy.
 */
import { type Rect, rectArea, rectsTouch } from "./rect.ts";

/** A leaf: one cell, by its id within the space and the cellapp running it. */
export interface BspCell {
  cell: { id: number; cellapp: number };
}

/** An inner node: `left` holds coordinates below `at` on `axis`, `right` the rest. */
export interface BspSplit {
  axis: "x" | "z";
  at: number;
  left: BspNode;
  right: BspNode;
}

/** A node of the tree, in the JSON form the wire and the admin API use. */
export type BspNode = BspCell | BspSplit;

/** A cell with the rect it covers. */
export interface CellRect {
  /** The cell's id, unique within its space. */
  id: number;
  cellapp: number;
  rect: Rect;
}

/** Whether `n` is a leaf. */
export function isCell(n: BspNode): n is BspCell {
  return "cell" in n;
}

/**
 * Builds a tree of `cellapps.length` cells over `bounds` (cell i on
 * `cellapps[i]`, with id `ids[i]`: 1, 2, ... unless given), splitting the
 * longer side in proportion to the number of cells on each part, so the cells
 * get equal areas (until load balancing moves the partitions).
 */
export function buildBsp(
  bounds: Rect,
  cellapps: readonly number[],
  ids: readonly number[] = cellapps.map((_, i) => i + 1),
): BspNode {
  if (cellapps.length === 0) throw new Error("a space needs at least one cell");
  if (ids.length !== cellapps.length || new Set(ids).size !== ids.length) {
    throw new Error("every cell of a space needs its own id");
  }
  if (cellapps.length === 1) return { cell: { id: ids[0], cellapp: cellapps[0] } };
  const leftCount = Math.floor(cellapps.length / 2);
  const share = leftCount / cellapps.length;
  const w = bounds.maxX - bounds.minX;
  const h = bounds.maxZ - bounds.minZ;
  const axis = w >= h ? "x" : "z";
  const at = axis === "x" ? bounds.minX + w * share : bounds.minZ + h * share;
  const [lb, rb] = splitRect(bounds, axis, at);
  return {
    axis,
    at,
    left: buildBsp(lb, cellapps.slice(0, leftCount), ids.slice(0, leftCount)),
    right: buildBsp(rb, cellapps.slice(leftCount), ids.slice(leftCount)),
  };
}

/**
 * The tree without cell `cellId`, as BigWorld removes a cell: the split above
 * it is replaced by its sibling subtree, which takes the split's whole area.
 * Only the cells of that subtree that touch the removed partition grow; every
 * other cell keeps its rect exactly. Null when `cellId` was the only cell (a
 * space keeps at least one: the caller makes a new one). The tree given is
 * not changed. Throws when the tree has no cell `cellId`.
 */
export function removeCell(tree: BspNode, cellId: number): BspNode | null {
  if (isCell(tree)) {
    if (tree.cell.id === cellId) return null;
    throw new Error(`the tree has no cell ${cellId}`);
  }
  const rebuild = (n: BspSplit): BspNode => {
    if (isCell(n.left) && n.left.cell.id === cellId) return n.right;
    if (isCell(n.right) && n.right.cell.id === cellId) return n.left;
    if (!isCell(n.left) && hasCell(n.left, cellId)) return { ...n, left: rebuild(n.left) };
    if (!isCell(n.right) && hasCell(n.right, cellId)) return { ...n, right: rebuild(n.right) };
    throw new Error(`the tree has no cell ${cellId}`);
  };
  return rebuild(tree);
}

/** Whether cell `cellId` is a leaf under `n`. */
export function hasCell(n: BspNode, cellId: number): boolean {
  return isCell(n) ? n.cell.id === cellId : hasCell(n.left, cellId) || hasCell(n.right, cellId);
}

/** The two halves of `r` on either side of `at` on `axis`. */
export function splitRect(r: Rect, axis: "x" | "z", at: number): [Rect, Rect] {
  return axis === "x" ? [{ ...r, maxX: at }, { ...r, minX: at }] : [{ ...r, maxZ: at }, { ...r, minZ: at }];
}

/** Every cell of the tree with its rect, left to right. */
export function cellRects(tree: BspNode, bounds: Rect): CellRect[] {
  const out: CellRect[] = [];
  const walk = (n: BspNode, r: Rect): void => {
    if (isCell(n)) {
      out.push({ id: n.cell.id, cellapp: n.cell.cellapp, rect: r });
      return;
    }
    const [lr, rr] = splitRect(r, n.axis, n.at);
    walk(n.left, lr);
    walk(n.right, rr);
  };
  walk(tree, bounds);
  return out;
}

/**
 * The index (in `cellRects` order) of the cell containing (x, z). Points
 * outside the bounds belong to the nearest cell on the same side of each split.
 */
export function cellIndexAt(tree: BspNode, x: number, z: number): number {
  let index = 0;
  let n = tree;
  while (!isCell(n)) {
    const v = n.axis === "x" ? x : z;
    if (v < n.at) n = n.left;
    else {
      index += countCells(n.left);
      n = n.right;
    }
  }
  return index;
}

/** Number of leaves under `n`. */
export function countCells(n: BspNode): number {
  return isCell(n) ? 1 : countCells(n.left) + countCells(n.right);
}

/** For each cell, the indices of the cells whose rects touch it (its neighbours). */
export function neighbours(cells: readonly CellRect[]): number[][] {
  return cells.map((c, i) => cells.flatMap((o, j) => (j !== i && rectsTouch(c.rect, o.rect) ? [j] : [])));
}

/**
 * Checks a tree received from the wire: well-formed nodes, and every cell with
 * a cellapp and an id of its own. Returns why it is malformed, or null.
 */
export function checkBsp(n: unknown): string | null {
  return checkNode(n, 0, new Set());
}

function checkNode(n: unknown, depth: number, ids: Set<number>): string | null {
  if (depth > 64) return "tree deeper than 64 levels";
  if (typeof n !== "object" || n === null) return "node is not an object";
  const o = n as Record<string, unknown>;
  if ("cell" in o) {
    const c = o.cell as Record<string, unknown> | null;
    if (typeof c !== "object" || c === null || !Number.isInteger(c.cellapp)) return "cell without a cellapp id";
    if (!Number.isInteger(c.id) || (c.id as number) < 1 || (c.id as number) > 2 ** 31) {
      return "cell without an id (an integer from 1)";
    }
    if (ids.has(c.id as number)) return `cell id ${c.id} is used twice`;
    ids.add(c.id as number);
    return null;
  }
  if (o.axis !== "x" && o.axis !== "z") return `split axis ${String(o.axis)} is not x or z`;
  if (typeof o.at !== "number" || !Number.isFinite(o.at)) return "split position is not a number";
  return checkNode(o.left, depth + 1, ids) ?? checkNode(o.right, depth + 1, ids);
}

/** The total area of the cells (equals the bounds' area for a well-formed tree). */
export function totalArea(cells: readonly CellRect[]): number {
  return cells.reduce((s, c) => s + rectArea(c.rect), 0);
}
