/**
 * What a script sees of its space (core/script.ts SpaceInfo): the bounds, its
 * cell, every cell and the ones touching its own, from the geometry the cell
 * has now. Made once per geometry and shared by the cell's entities.
 */
import type { Area, CellInfo, SpaceInfo } from "../core/script.ts";
import { rectFromArray } from "../core/geo/mod.ts";
import { cellIndexAt } from "../core/geo/mod.ts";
import type { SpaceGeometry } from "../core/wire/mod.ts";
import type { CellRect } from "../core/geo/mod.ts";

/** What a space's view needs of the cell it is made for. */
export interface SpaceViewCell {
  readonly spaceId: number;
  readonly cellId: number;
  readonly cellappId: number;
  readonly isDefault: boolean;
  readonly geometry: SpaceGeometry;
  readonly rect: Area;
  readonly layout: readonly CellRect[];
  /** The view made last, kept by the cell until its geometry or rect changes. */
  spaceView: SpaceView | null;
}

/** A space's view, and the geometry and rect of the cell it was made from. */
export interface SpaceView {
  readonly geometry: SpaceGeometry;
  readonly rect: Area;
  readonly info: SpaceInfo;
}

/** The space of `cell` as its scripts see it. */
export function spaceInfoOf(cell: SpaceViewCell): SpaceInfo {
  const had = cell.spaceView;
  if (had && had.geometry === cell.geometry && had.rect === cell.rect) return had.info;
  const info = build(cell);
  cell.spaceView = { geometry: cell.geometry, rect: cell.rect, info };
  return info;
}

function build(cell: SpaceViewCell): SpaceInfo {
  const cells = cell.layout.map((c) => Object.freeze({ id: c.id, cellapp: c.cellapp, rect: area(c.rect) }));
  const own = cells.find((c) => c.id === cell.cellId) ??
    Object.freeze({ id: cell.cellId, cellapp: cell.cellappId, rect: area(cell.rect) });
  const neighbours = cells.filter((c) => c.id !== own.id && touches(c.rect, own.rect));
  const tree = cell.geometry.tree;
  return Object.freeze({
    id: cell.spaceId,
    bounds: area(rectFromArray(cell.geometry.bounds)),
    isDefault: cell.isDefault,
    cell: own,
    cells: Object.freeze(cells),
    neighbours: Object.freeze(neighbours),
    cellAt: (x: number, z: number): CellInfo => cells[cellIndexAt(tree, x, z)],
  });
}

function area(r: Area): Area {
  return Object.freeze({ minX: r.minX, minZ: r.minZ, maxX: r.maxX, maxZ: r.maxZ });
}

function isEmpty(r: Area): boolean {
  return !(r.maxX > r.minX && r.maxZ > r.minZ);
}

/** Whether two rects share an edge or a corner (an empty rect touches nothing). */
function touches(a: Area, b: Area): boolean {
  if (isEmpty(a) || isEmpty(b)) return false;
  return a.minX <= b.maxX && b.minX <= a.maxX && a.minZ <= b.maxZ && b.minZ <= a.maxZ;
}
