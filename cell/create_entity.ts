/**
 * Entities a script creates at a point: in its own cell at once, otherwise in
 * the cell holding the point, of this space (its address is in the geometry)
 * or of another one (the cellappmgr says where, MgrMsg.findCell), through the
 * message the cellappmgr spawns with (CellMsg.spawn) and an id this cellapp
 * hands out.
 */
import { errorText } from "../core/errors.ts";
import { PropertyContainer } from "../core/def/mod.ts";
import { MAX_COORD, withinWorld } from "../core/geo/mod.ts";
import type { Vec3 } from "../core/script.ts";
import { CellMsg, type SpawnRequest } from "../core/wire/mod.ts";
import type { CellRect } from "../core/geo/mod.ts";
import type { Rect } from "../core/geo/mod.ts";
import type { CellHost } from "./cell_host.ts";
import type { CellAddress } from "./cell_layout.ts";
import type { Entity } from "./entity.ts";

/** What creating entities needs of the cell a script (or a spawn request) makes them from. */
export interface CreatingCell {
  readonly spaceId: number;
  readonly cellId: number;
  readonly rect: Rect;
  readonly host: Pick<CellHost, "registry" | "log" | "newEntityId" | "ghosting" | "findCell">;
  random(): number;
  /** The cell of this space containing (x, z), with its cellapp's address when known. */
  cellAt(x: number, z: number): { cell: CellRect; address: string | undefined };
  createEntity(
    typeName: string,
    pos: Vec3,
    props?: Record<string, unknown>,
    dir?: [number, number, number],
    id?: number,
  ): Entity;
}

/** Creates a `typeName` at `pos` in space `spaceId` for a script of `cell`; returns its id (see CellEntityApi). */
export function createEntityAt(
  cell: CreatingCell,
  typeName: string,
  pos: Vec3,
  props: Record<string, unknown>,
  spaceId: number = cell.spaceId,
): number {
  let target: CellAddress | Promise<CellAddress>;
  if (spaceId === cell.spaceId) {
    const { cell: dest, address } = cell.cellAt(pos.x, pos.z);
    if (dest.id === cell.cellId) return cell.createEntity(typeName, pos, props).id;
    check(cell, typeName, pos, props);
    if (!address) {
      throw new Error(
        `createEntity: the cellapp of cell ${dest.id} of space ${spaceId} is unknown; ${typeName} not made`,
      );
    }
    target = { cell: dest.id, cellapp: dest.cellapp, address };
  } else {
    if (!(Number.isInteger(spaceId) && spaceId >= 1 && spaceId < 2 ** 32)) {
      throw new Error(`createEntity: ${spaceId} is not a space id; ${typeName} not made`);
    }
    check(cell, typeName, pos, props);
    target = cell.host.findCell(spaceId, pos.x, pos.z);
  }
  const gh = cell.host.ghosting;
  const id = cell.host.newEntityId();
  const req: SpawnRequest = {
    spaceId,
    cellId: 0,
    type: typeName,
    count: 1,
    props,
    position: [pos.x, pos.y, pos.z],
    ids: [id, id],
  };
  const where = `at (${pos.x}, ${pos.y}, ${pos.z}) in space ${spaceId}`;
  const failed = (e: unknown) =>
    cell.host.log.warn(
      `createEntity from space ${cell.spaceId} cell ${cell.cellId}: ${typeName} ${id} ${where} was not made: ` +
        errorText(e),
      { entity: id, space: spaceId },
    );
  const send = (t: CellAddress) =>
    gh.ask(t.address, gh.config.offloadTimeoutMs, CellMsg.spawn, { ...req, cellId: t.cell });
  // Within the space it is sent now, in order with what this cell sends next (a call to it, say).
  if (target instanceof Promise) target.then(send).catch(failed);
  else send(target).catch(failed);
  return id;
}

/** Makes what a spawn request asks for in `cell` (its ids, at its point or spread over the cell); returns how many. */
export function spawnInCell(cell: CreatingCell, req: SpawnRequest): number {
  const [first, last] = req.ids;
  if (last - first + 1 !== req.count) {
    throw new Error(`spawn of ${req.count} ${req.type} came with ${last - first + 1} ids`);
  }
  const p = req.position;
  const r = cell.rect;
  for (let i = 0; i < req.count; i++) {
    const pos = p
      ? { x: p[0], y: p[1], z: p[2] }
      : { x: r.minX + cell.random() * (r.maxX - r.minX), y: 0, z: r.minZ + cell.random() * (r.maxZ - r.minZ) };
    cell.createEntity(req.type, pos, req.props ?? {}, [cell.random() * 2 * Math.PI - Math.PI, 0, 0], first + i);
  }
  return req.count;
}

/** What the cell making it would refuse, refused here, where the script that asked hears it. */
function check(cell: CreatingCell, typeName: string, pos: Vec3, props: Record<string, unknown>): void {
  const type = cell.host.registry.find(typeName);
  if (!type) throw new Error(`createEntity: unknown entity type "${typeName}"`);
  if (!type.hasCell) throw new Error(`createEntity: entity type ${typeName} has no cell part`);
  if (!withinWorld([pos.x, pos.y, pos.z])) {
    throw new Error(`createEntity: ${typeName} at (${pos.x}, ${pos.y}, ${pos.z}) is not within ±${MAX_COORD} m`);
  }
  const scratch = new PropertyContainer(type, "cell");
  for (const [name, value] of Object.entries(props)) scratch.set(name, value);
}
