/**
 * A new space a base script asks for (BigWorld's createInNewSpace): its size, its cell count and the host its cells
 * should prefer, with the limits that keep an absurd request from reaching the cellappmgr. Checked on the baseapp,
 * where the script hears why, and again on the cellappmgr, which trusts no member.
 */
import type { Rect } from "./geo/rect.ts";
import { navGeometryError } from "./space_settings.ts";

/** Smallest side of a new space (m): room for one cell of the smallest balanced width. */
export const MIN_NEW_SPACE_SIDE = 10;
/** Largest side of a new space (m). An instance is a room, a dungeon, an arena: not a second world. */
export const MAX_NEW_SPACE_SIDE = 100_000;
/** Most cells a new space starts with. */
export const MAX_NEW_SPACE_CELLS = 64;

/** A new space as it travels to the cellappmgr: its side along X and Z (centred on the origin) and its cells. */
export interface NewSpaceRequest {
  width: number;
  depth: number;
  cells: number;
  /** Prefer cellapps on this host (an IP or name, as in their addresses); null: the least loaded anywhere. */
  preferredHost: string | null;
  /** The file its navigation mesh is made from (docs/game.md, "Navigation"); null: the game's spaceGeometry hook says. */
  geometry: string | null;
}

/** Why `r` cannot be made, naming the value and the limit; null when it can. */
export function newSpaceError(r: NewSpaceRequest): string | null {
  for (const [name, v] of [["width", r.width], ["depth", r.depth]] as const) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < MIN_NEW_SPACE_SIDE || v > MAX_NEW_SPACE_SIDE) {
      return `size: the ${name} of a new space must be ${MIN_NEW_SPACE_SIDE}-${MAX_NEW_SPACE_SIDE} m ` +
        `(MAX_NEW_SPACE_SIDE), not ${v}`;
    }
  }
  if (!Number.isInteger(r.cells) || r.cells < 1 || r.cells > MAX_NEW_SPACE_CELLS) {
    return `cells: a new space has 1-${MAX_NEW_SPACE_CELLS} cells (MAX_NEW_SPACE_CELLS), not ${r.cells}`;
  }
  if (r.preferredHost !== null && (typeof r.preferredHost !== "string" || r.preferredHost.length > 255)) {
    return `preferredHost: a host name or address of at most 255 characters, not ${String(r.preferredHost)}`;
  }
  const badGeometry = r.geometry === null ? null : navGeometryError(r.geometry);
  if (badGeometry) return badGeometry;
  return null;
}

/** The bounds of a new space of `r`'s size, centred on the origin. */
export function newSpaceBounds(r: Pick<NewSpaceRequest, "width" | "depth">): Rect {
  return { minX: -r.width / 2, minZ: -r.depth / 2, maxX: r.width / 2, maxZ: r.depth / 2 };
}
