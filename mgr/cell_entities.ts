/**
 * Where a base's cell entity is made: the cellapp that holds its real already, else the cell covering its position;
 * and a base script's placement of it (near an entity, in a space, or in a new space it makes).
 */
import { type CellEntitySpec, CellMsg, type CellPlaced, type CellPlaceRequest } from "../core/wire/mod.ts";
import { errorText } from "../core/errors.ts";
import { newSpaceBounds, newSpaceError } from "../core/new_space.ts";
import { RequestError } from "../core/views.ts";
import { cellIndexAt, type Rect } from "../core/geo/mod.ts";
import type { Logger } from "../core/log.ts";
import type { SpaceEntities } from "../core/game.ts";
import type { Registry } from "./registry.ts";
import type { Spaces } from "./spaces.ts";
import { DEFAULT_SPACE_ID } from "./space.ts";
import { holderOf } from "./restore.ts";

/** Where a cell entity was made. */
export interface CellEntityPlace {
  spaceId: number;
  cellapp: number;
  cellappAddress: string;
}

/** What making a cell entity needs of the cellappmgr. */
export interface CellEntityHost {
  readonly registry: Registry;
  readonly spaces: Spaces;
  /** Resolves once the rejoin window is closed (rejoin.ts). */
  readonly rejoin: { wait(): Promise<void> };
  readonly log: Logger;
  /** Resolves once the default space exists (or could not be made). */
  ensureDefaultSpace(): Promise<void>;
  /** What the game puts in a new space (spawn_guard.ts gameEntities). */
  gameEntities(bounds: Rect, isDefault: boolean, npcs: number): SpaceEntities[];
}

/**
 * Makes a base's cell entity: in its space (or a new one, BigWorld's
 * createEntityInNewSpace), on the cellapp whose cell contains its position.
 */
export async function createCellEntity(host: CellEntityHost, spec: CellEntitySpec): Promise<CellEntityPlace> {
  await host.rejoin.wait();
  // Its real may live on (its baseapp died and came back, or lost the answer): that cellapp adopts it, wherever it
  // walked since the base last knew, rather than a second real being made where the base thinks it is.
  const holder = await holderOf(host.registry, spec.entityId, host.log);
  if (holder) {
    await holder.channel.request(CellMsg.createCellEntity, { ...spec, spaceId: holder.spaceId });
    return { spaceId: holder.spaceId, cellapp: holder.id, cellappAddress: holder.address };
  }
  if (spec.spaceId === DEFAULT_SPACE_ID) await host.ensureDefaultSpace();
  const [x, , z] = spec.position;
  const around = { minX: x - 1000, minZ: z - 1000, maxX: x + 1000, maxZ: z + 1000 };
  const space = spec.spaceId === 0
    ? await host.spaces.create({ bounds: around, cells: 1, entities: host.gameEntities(around, false, 0) })
    : host.spaces.all.get(spec.spaceId);
  if (!space) {
    throw new Error(
      `no space ${spec.spaceId}${
        spec.spaceId === DEFAULT_SPACE_ID ? " (the default space is made once a cellapp has registered)" : ""
      }`,
    );
  }
  if (space.shuttingDown) throw new Error(`space ${space.id} is shutting down`);
  await host.spaces.placed(space);
  const cell = space.cells()[cellIndexAt(space.tree, x, z)];
  const m = host.registry.members.get(cell.cellapp);
  if (!m) throw new Error(`the cellapp ${cell.cellapp} of space ${space.id} is gone`);
  await m.channel.request(CellMsg.createCellEntity, { ...spec, spaceId: space.id });
  space.hasHadEntities = true;
  return { spaceId: space.id, cellapp: m.id, cellappAddress: m.address };
}

/**
 * A base script places its cell entity (BigWorld's createCellEntity and createInNewSpace): in the space of entity
 * `req.near` (at its position unless the script gave one), in a new space of `req.newSpace`'s size and cells (on the
 * least loaded cellapps, those of its preferred host first; shut down once empty), or in `spec.spaceId`.
 */
export async function placeCellEntity(
  host: CellEntityHost,
  spec: CellEntitySpec,
  req: CellPlaceRequest,
): Promise<CellPlaced> {
  await host.rejoin.wait();
  const who = `${spec.type} ${spec.entityId}`;
  // A repeated request (the answer was lost): the real it made is the answer, and no second space is made.
  if (await holderOf(host.registry, spec.entityId, host.log)) {
    return { ...(await createCellEntity(host, spec)), position: spec.position };
  }
  let position = spec.position;
  const nearId = req.near ?? null, newSpace = req.newSpace ?? null;
  if (nearId !== null && newSpace !== null) {
    throw new Error(`placing the cell entity of ${who}: near an entity or in a new space, not both`);
  }
  if (nearId !== null) {
    const near = await holderOf(host.registry, nearId, host.log);
    if (!near) {
      throw new Error(
        `createCellEntity of ${who} near entity ${nearId}: it has no cell entity on any cellapp ` +
          `(unknown, destroyed, or it has no cell part)`,
      );
    }
    if (!req.positionGiven) position = near.position;
    return { ...(await createCellEntity(host, { ...spec, spaceId: near.spaceId, position })), position };
  }
  if (newSpace === null) {
    if (spec.spaceId === 0) throw new Error(`createCellEntity of ${who}: no space named`);
    return { ...(await createCellEntity(host, spec)), position };
  }
  const why = newSpaceError({
    ...newSpace,
    preferredHost: newSpace.preferredHost ?? null,
    geometry: newSpace.geometry ?? null,
  });
  if (why) throw new RequestError("bad_request", `createInNewSpace of ${who}: ${why}`);
  const bounds = newSpaceBounds(newSpace);
  if (!req.positionGiven) position = [0, position[1], 0];
  const [x, , z] = position;
  if (x < bounds.minX || x > bounds.maxX || z < bounds.minZ || z > bounds.maxZ) {
    throw new RequestError(
      "bad_request",
      `createInNewSpace of ${who}: position (${x}, ${z}) is outside the new space ` +
        `[${bounds.minX}, ${bounds.minZ}]-[${bounds.maxX}, ${bounds.maxZ}]`,
    );
  }
  const space = await host.spaces.create({
    bounds,
    cells: newSpace.cells,
    preferredHost: newSpace.preferredHost ?? null,
    entities: host.gameEntities(bounds, false, 0),
    shutDownWhenEmpty: true,
    ...(newSpace.geometry ? { geometry: newSpace.geometry } : {}),
  });
  try {
    return { ...(await createCellEntity(host, { ...spec, spaceId: space.id, position })), position };
  } catch (e) {
    if (host.spaces.all.has(space.id)) {
      host.spaces.shutDown(space.id, `the cell entity of ${who} could not be made in it`);
    }
    throw new Error(`createInNewSpace of ${who}: space ${space.id} was made, but not the entity: ${errorText(e)}`, {
      cause: e,
    });
  }
}
