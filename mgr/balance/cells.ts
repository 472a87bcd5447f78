/**
 * Adding and retiring a space's cells (docs/architecture.md, "Balancing"): where a new cell
 * goes, when to add one and on which cellapp, when to retire one, and when a
 * retiring cell may leave the tree. Pure decisions; the cellappmgr's balancer
 * acts on them.
 */
import { type BspNode, cellRects, hasCell, isCell, type Rect, splitRect } from "../../core/geo/mod.ts";
import { WIDTH_EPSILON } from "./partition.ts";
import type { CellLoad } from "./types.ts";

/** A cellapp's load as the cellappmgr last heard it (a share of one core). */
export interface CellappLoad {
  id: number;
  load: number;
}

/** When a space gains or loses a cell. */
export interface CellPlanOptions {
  /** Add a cell when the mean load of the cellapps the space uses is above this. */
  addAbove: number;
  /** Only a cellapp loaded below this has room for a new cell. */
  spareBelow: number;
  /**
   * Retire a cell when the mean load of the space's cells is below this, and
   * the cells left would carry less than the midpoint of retireBelow and
   * addAbove each (the gap between the two keeps a space from adding and
   * retiring by turns).
   */
  retireBelow: number;
}

/** Defaults: add above 0.8 of a core onto a cellapp below 0.5, retire below 0.2. */
export const DEFAULT_CELL_PLAN: CellPlanOptions = { addAbove: 0.8, spareBelow: 0.5, retireBelow: 0.2 };

/** A cell to split and the cellapp the new cell goes to. */
export interface AddPlan {
  /** The cell to split (the space's most loaded). */
  split: number;
  cellapp: number;
}

const NO_CELLS: ReadonlySet<number> = new Set();

/**
 * The tree with cell `cellId` split in two as BigWorld's addCell does: the
 * new cell takes the max edge of the cell's longer side with zero width, so
 * nothing moves until balancing grows it. The tree given is not changed.
 * Throws when the tree has no cell `cellId`, already has `newCell.id`, or
 * the cell has no bounded max edge to start from.
 */
export function addCell(
  tree: BspNode,
  bounds: Rect,
  cellId: number,
  newCell: { id: number; cellapp: number },
): BspNode {
  if (hasCell(tree, newCell.id)) throw new Error(`the space already has a cell ${newCell.id}`);
  if (!hasCell(tree, cellId)) throw new Error(`the tree has no cell ${cellId} to split`);
  const walk = (n: BspNode, r: Rect): BspNode => {
    if (isCell(n)) {
      if (n.cell.id !== cellId) return n;
      const w = r.maxX - r.minX;
      const h = r.maxZ - r.minZ;
      const xOk = Number.isFinite(r.maxX);
      const zOk = Number.isFinite(r.maxZ);
      if (!xOk && !zOk) throw new Error(`cell ${cellId} is unbounded above on both axes: no edge to add a cell at`);
      const axis = xOk && (!zOk || w >= h) ? "x" : "z";
      const at = axis === "x" ? r.maxX : r.maxZ;
      return { axis, at, left: n, right: { cell: { id: newCell.id, cellapp: newCell.cellapp } } };
    }
    const [lr, rr] = splitRect(r, n.axis, n.at);
    return hasCell(n.left, cellId) ? { ...n, left: walk(n.left, lr) } : { ...n, right: walk(n.right, rr) };
  };
  return walk(tree, bounds);
}

/**
 * Whether the space needs another cell, and where: when the mean load of the
 * cellapps its cells run on is above addAbove and a cellapp that runs no cell
 * of this space is loaded below spareBelow (a space has at most one cell per
 * cellapp while balancing), the most loaded cell is split onto the least
 * loaded such cellapp. Null while a cell is retiring, has not reported, or
 * has no width yet (a new cell still growing); the caller should also leave
 * a new cell a few periods to take load before asking again.
 */
export function planAdd(
  tree: BspNode,
  bounds: Rect,
  loads: ReadonlyMap<number, CellLoad>,
  cellapps: readonly CellappLoad[],
  retiring: ReadonlySet<number> = NO_CELLS,
  options: CellPlanOptions = DEFAULT_CELL_PLAN,
): AddPlan | null {
  const cells = cellRects(tree, bounds);
  if (cells.some((c) => retiring.has(c.id) || !loads.has(c.id) || hasNoWidth(c.rect))) return null;
  const used = new Set(cells.map((c) => c.cellapp));
  const byId = new Map(cellapps.map((a) => [a.id, a.load]));
  let sum = 0;
  for (const id of used) {
    const load = byId.get(id);
    if (load === undefined) return null;
    sum += load;
  }
  if (!(sum / used.size > options.addAbove)) return null;
  const spare = cellapps
    .filter((a) => !used.has(a.id) && a.load < options.spareBelow)
    .sort((a, b) => a.load - b.load || a.id - b.id)[0];
  if (!spare) return null;
  const busiest = [...cells].sort((a, b) => load(loads, b.id) - load(loads, a.id) || a.id - b.id)[0];
  return { split: busiest.id, cellapp: spare.id };
}

/**
 * Which cell the space can do without, or null: when it has more than one
 * cell, none already retiring and all reported, the mean cell load is below
 * retireBelow and the cells left would stay below the midpoint of
 * retireBelow and addAbove, the least loaded cell (the newest of equals).
 */
export function planRetire(
  tree: BspNode,
  loads: ReadonlyMap<number, CellLoad>,
  retiring: ReadonlySet<number> = NO_CELLS,
  options: CellPlanOptions = DEFAULT_CELL_PLAN,
): number | null {
  const ids = cellIds(tree);
  if (ids.length < 2 || ids.some((id) => retiring.has(id) || !loads.has(id))) return null;
  const sum = ids.reduce((s, id) => s + load(loads, id), 0);
  if (!(sum / ids.length < options.retireBelow)) return null;
  if (!(sum / (ids.length - 1) < (options.retireBelow + options.addAbove) / 2)) return null;
  return [...ids].sort((a, b) => load(loads, a) - load(loads, b) || b - a)[0];
}

/**
 * The retiring cells that may now leave the tree (the caller removes each
 * with removeCell): they have shrunk to no width and report no reals. A cell
 * that has not reported is not ready: its reals are unknown.
 */
export function readyToLeave(
  tree: BspNode,
  bounds: Rect,
  retiring: ReadonlySet<number>,
  loads: ReadonlyMap<number, CellLoad>,
): number[] {
  return cellRects(tree, bounds)
    .filter((c) => retiring.has(c.id) && hasNoWidth(c.rect) && loads.get(c.id)?.reals === 0)
    .map((c) => c.id);
}

function hasNoWidth(r: Rect): boolean {
  return r.maxX - r.minX <= WIDTH_EPSILON || r.maxZ - r.minZ <= WIDTH_EPSILON;
}

function load(loads: ReadonlyMap<number, CellLoad>, id: number): number {
  return loads.get(id)?.load ?? 0;
}

function cellIds(n: BspNode): number[] {
  return isCell(n) ? [n.cell.id] : [...cellIds(n.left), ...cellIds(n.right)];
}
