/** A space as the cellappmgr knows it: its bounds, its BSP tree of cells and what its cellapps are sent. */
import { type BspNode, type CellRect, cellRects, type Rect, rectToArray } from "../core/geo/mod.ts";
import type { SpaceGeometry } from "../core/wire/mod.ts";
import type { SpaceSettings } from "../core/space_settings.ts";

/** The id of the default space, as BigWorld's useDefaultSpace. */
export const DEFAULT_SPACE_ID = 1;

/** A space as the cellappmgr knows it. */
export class Space {
  shuttingDown = false;
  hasHadEntities = false;
  /** Its only cellapp died: its tree still names that cell, which a new cell on a live cellapp replaces. */
  bare = false;
  /** A new cell is being made for it on a live cellapp. */
  placing = false;
  /** Whether its partitions follow the load (cells are added and retired); a drain goes on regardless. */
  balance = true;
  /**
   * Whether it shuts down once it has had entities and every cell is empty, whatever its cell count (an instance a
   * base script made); a single-cell space's cell asks for that on its own.
   */
  shutDownWhenEmpty = false;
  /** While every cell is empty: how many reports each of its cellapps (by id) sent since (spaces.ts). */
  readonly emptyReports: Map<number, number> = new Map();
  /** Balancing retires no idle cell below this many: the cells it was created with. */
  minCells = 1;
  /** Its own AoI and ghost radius; every cellapp of the space gets them with the geometry. */
  settings: SpaceSettings = {};
  /** The file its navigation mesh is made from (cell/nav/), fixed at creation; null: no navigation. */
  navGeometry: string | null = null;
  readonly createdAt: number = Date.now();

  constructor(
    readonly id: number,
    readonly bounds: Rect,
    public tree: BspNode,
    readonly isDefault: boolean,
    readonly preferredHost: string | null,
  ) {}

  #cellsOf: { tree: BspNode; cells: CellRect[] } | null = null;

  /** The cells with their rects (worked out once per tree: a tree is never changed, only replaced). */
  cells(): CellRect[] {
    if (this.#cellsOf?.tree !== this.tree) {
      this.#cellsOf = { tree: this.tree, cells: cellRects(this.tree, this.bounds) };
    }
    return this.#cellsOf.cells;
  }

  /** The distinct cellapps running cells of the space, in tree order. */
  cellapps(): number[] {
    return [...new Set(this.cells().map((c) => c.cellapp))];
  }

  /** What every cellapp of the space is sent; `address` names each cellapp's listening address (once per cellapp). */
  geometry(address: (cellapp: number) => string | undefined = () => undefined): SpaceGeometry {
    const cellapps: [number, string][] = [];
    for (const id of this.cellapps()) {
      const a = address(id);
      if (a) cellapps.push([id, a]);
    }
    const g: SpaceGeometry = {
      spaceId: this.id,
      bounds: rectToArray(this.bounds),
      tree: this.tree,
      isDefault: this.isDefault,
      cellapps,
    };
    if (this.settings.aoiRadius !== undefined) g.aoiRadius = this.settings.aoiRadius;
    if (this.settings.ghostRadius !== undefined) g.ghostRadius = this.settings.ghostRadius;
    if (this.navGeometry !== null) g.navGeometry = this.navGeometry;
    if (this.shutDownWhenEmpty) g.shutDownWhenEmpty = true;
    return g;
  }
}
