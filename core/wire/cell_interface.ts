/** Messages a cellapp handles, and the data they carry. */
import { message } from "./catalog.ts";
import { any, bool, int, obj, optional, str, tuple } from "./check.ts";
import { type BspNode, checkBsp } from "../geo/bsp.ts";

/** A space's geometry as every cellapp hosting one of its cells gets it. */
export interface SpaceGeometry {
  spaceId: number;
  /** [minX, minZ, maxX, maxZ]. */
  bounds: [number, number, number, number];
  tree: BspNode;
  /** The default space (id 1) never shuts down. */
  isDefault: boolean;
}

/** Entities to create in a space: `count` of `type`, at random points of the cell unless `position` is given. */
export interface SpawnRequest {
  spaceId: number;
  type: string;
  count: number;
  /** Initial property values by name. */
  props?: Record<string, unknown> | null;
  position?: [number, number, number] | null;
}

/** One entity as a cell lists it. */
export interface EntitySummary {
  id: number;
  type: string;
  position: [number, number, number];
  real: boolean;
}

/** Where an entity is, as the cellapp holding it knows it. */
export interface EntityLocation {
  id: number;
  type: string;
  spaceId: number;
  position: [number, number, number];
  real: boolean;
  /** Cellapp ids holding ghosts of it (known by its real). */
  ghosts: number[];
}

const bounds = (v: unknown) =>
  Array.isArray(v) && v.length === 4 && v.every((n) => typeof n === "number" && Number.isFinite(n))
    ? null
    : "bounds must be 4 finite numbers";
const spaceId = int(1, 2 ** 32 - 1);
/** Checks a SpaceGeometry from the wire. */
export const spaceGeometry = obj({ spaceId, bounds, tree: checkBsp, isDefault: bool });
const geometry = spaceGeometry;
const vec3 = (v: unknown) =>
  Array.isArray(v) && v.length === 3 && v.every((n) => typeof n === "number" && Number.isFinite(n))
    ? null
    : "position must be 3 finite numbers";

/** Messages a cellapp handles. */
export const CellMsg = {
  /** Create this cellapp's cell of a space. */
  createCell: message<[SpaceGeometry], boolean>(80, "createCell", tuple(geometry)),
  /** A space's tree changed; sent to every cellapp hosting one of its cells. */
  updateGeometry: message<[SpaceGeometry]>(81, "updateGeometry", tuple(geometry)),
  /** The space is shutting down: destroy the reals of this cell, then the cell. */
  shutDownSpace: message<[number]>(82, "shutDownSpace", tuple(spaceId)),
  /** Create entities in this cellapp's cell of a space; replies with their ids. */
  spawn: message<[SpawnRequest], number[]>(
    83,
    "spawn",
    tuple(obj({
      spaceId,
      type: str(100),
      count: int(1, 100_000),
      props: optional(any),
      position: optional(vec3),
    })),
  ),
  /** Lists one cell's entities (null when this cellapp has no cell of the space). */
  describeCell: message<[number], EntitySummary[] | null>(84, "describeCell", tuple(spaceId)),
  /** Where an entity is, if this cellapp holds it. */
  findEntity: message<[number], EntityLocation | null>(85, "findEntity", tuple(int(1, 2 ** 53))),
} as const;
