/**
 * Where a cell stands in its space's tree: every cell of the space with its rect, its own leaf, and the others'
 * rects grown by the ghost radius. Worked out once per tree, not by the checks that run every tick or every second.
 */
import { cellIndexAt, type CellRect, cellRects } from "../core/geo/mod.ts";
import { type Rect, rectFromArray, rectGrow } from "../core/geo/mod.ts";
import type { SpaceGeometry } from "../core/wire/mod.ts";

/** Where a cell is: its id within the space, its cellapp and that cellapp's address. */
export interface CellAddress {
  cell: number;
  cellapp: number;
  address: string;
}

/** Another cell of the space with its rect grown by the ghost radius: where reals of a cell need a ghost there. */
export type GhostArea = CellAddress & { area: Rect };

/** Where one cell stands in its space's tree. */
export interface CellPlace {
  /** Every cell of the space with its rect, in the tree's order. */
  layout: CellRect[];
  /** The cell's own leaf; undefined when the tree no longer has it. */
  mine: CellRect | undefined;
  /** The other cells whose cellapp's address is known, with their ghost areas. */
  ghostAreas: GhostArea[];
}

/** The first leaf of cellapp `cellappId` in the tree of `g` (0 when it has none). */
export function firstCellOf(g: SpaceGeometry, cellappId: number): number {
  return cellRects(g.tree, rectFromArray(g.bounds)).find((c) => c.cellapp === cellappId)?.id ?? 0;
}

/** Where cell `cellId` of cellapp `cellappId` stands in the tree of `g`, its ghosts held `ghostRadius` deep. */
export function placeIn(g: SpaceGeometry, cellId: number, cellappId: number, ghostRadius: number): CellPlace {
  const bounds = rectFromArray(g.bounds);
  const layout = cellRects(g.tree, bounds);
  const mine = layout.find((c) => c.id === cellId && c.cellapp === cellappId);
  const addresses = new Map(g.cellapps ?? []);
  const ghostAreas: GhostArea[] = [];
  for (const c of layout) {
    const address = addresses.get(c.cellapp);
    if (c.id === cellId || !address) continue;
    ghostAreas.push({
      cell: c.id,
      cellapp: c.cellapp,
      address,
      area: rectGrow(openAtEdges(c.rect, bounds), ghostRadius),
    });
  }
  return { layout, mine, ghostAreas };
}

/**
 * `r` with every side on the space's edge moved out to infinity: the tree gives a point beyond the bounds to the
 * cell at that edge, so that cell must be ghosted to from there too. Otherwise a real that wandered out of the bounds
 * could never be handed over, and a retiring cell holding one could never leave.
 */
function openAtEdges(r: Rect, bounds: Rect): Rect {
  return {
    minX: r.minX <= bounds.minX ? -Infinity : r.minX,
    minZ: r.minZ <= bounds.minZ ? -Infinity : r.minZ,
    maxX: r.maxX >= bounds.maxX ? Infinity : r.maxX,
    maxZ: r.maxZ >= bounds.maxZ ? Infinity : r.maxZ,
  };
}

/** The cell of `layout` (the tree of `g`) containing (x, z), with its cellapp's address when known. */
export function cellAtPoint(
  g: SpaceGeometry,
  layout: readonly CellRect[],
  x: number,
  z: number,
): { cell: CellRect; address: string | undefined } {
  const cell = layout[cellIndexAt(g.tree, x, z)];
  return { cell, address: new Map(g.cellapps ?? []).get(cell.cellapp) };
}
