/**
 * A cellapp's cells, keyed by space and cell id (a cellapp may run several
 * cells of one space), and the lookups its message handlers make.
 */
import { cellIndexAt, cellRects } from "../core/geo/mod.ts";
import { rectFromArray } from "../core/geo/mod.ts";
import type { Cell } from "./cell.ts";

/** The key of a cell in a cellapp's table: its space and its id within the space. */
export function cellKey(spaceId: number, cellId: number): string {
  return `${spaceId}/${cellId}`;
}

/** The cells of `cells` in a space. */
export function cellsOfSpace(cells: ReadonlyMap<string, Cell>, spaceId: number): Cell[] {
  return [...cells.values()].filter((c) => c.spaceId === spaceId);
}

/** Cell `cellId` of a space, which must be in `cells`; `what` names the request in the error. */
export function cellOf(cells: ReadonlyMap<string, Cell>, spaceId: number, cellId: number, what = "this message"): Cell {
  const cell = cells.get(cellKey(spaceId, cellId));
  if (!cell) throw new Error(`${what}: this cellapp has no cell ${cellId} of space ${spaceId}`);
  return cell;
}

/**
 * The cell of a space containing (x, z) among `cells`; when that cell is elsewhere or no point is given, the first
 * one still in the space's tree (a cell that left it only hands its reals over), else the first.
 */
export function cellAt(cells: ReadonlyMap<string, Cell>, spaceId: number, x?: number, z?: number): Cell {
  const all = cellsOfSpace(cells, spaceId);
  if (all.length === 0) throw new Error(`this cellapp has no cell of space ${spaceId}`);
  const mine = all.filter((c) => c.inTree);
  const first = mine[0] ?? all[0];
  if (x === undefined || z === undefined) return first;
  const g = first.geometry;
  const leaf = cellRects(g.tree, rectFromArray(g.bounds))[cellIndexAt(g.tree, x, z)];
  return mine.find((c) => c.cellId === leaf?.id) ?? first;
}
