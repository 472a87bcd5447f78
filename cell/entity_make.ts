/**
 * The three ways a real entity comes to be in a cell, checked and built but not yet added: made by a script or a
 * spawn, the cell part of a base entity, or restored from its serialised state (a backup, a hand-over, a teleport).
 * The cell adds what these return (cell.ts).
 */
import { decodeCellBackup } from "../core/def/mod.ts";
import { MAX_COORD, withinWorld } from "../core/geo/mod.ts";
import type { Vec3 } from "../core/script.ts";
import type { CellEntitySpec } from "../core/wire/mod.ts";
import type { CellHost } from "./cell_host.ts";
import { Entity, type EntityHost, type EntityState } from "./entity.ts";

/** What making an entity needs of its cell. */
export interface MakingCell extends EntityHost {
  readonly spaceId: number;
  readonly host: EntityHost["host"] & Pick<CellHost, "registry" | "newEntityId">;
  readonly shuttingDown: boolean;
  readonly entities: ReadonlyMap<number, Entity>;
  readonly ghosts: ReadonlyMap<number, Entity>;
}

/** A new real of type `typeName` at `pos` (an id handed out when none is given); initial properties are checked. */
export function makeEntity(
  cell: MakingCell,
  typeName: string,
  pos: Vec3,
  props: Record<string, unknown>,
  dir?: [number, number, number],
  id?: number,
): Entity {
  if (cell.shuttingDown) throw new Error(`space ${cell.spaceId} is shutting down; cannot create ${typeName}`);
  const type = cell.host.registry.find(typeName);
  if (!type) throw new Error(`unknown entity type "${typeName}"`);
  if (!type.hasCell) throw new Error(`entity type ${typeName} has no cell part`);
  if (!withinWorld([pos.x, pos.y, pos.z])) {
    throw new Error(`${typeName}: position (${pos.x}, ${pos.y}, ${pos.z}) is not within ±${MAX_COORD} m`);
  }
  if (id !== undefined && (cell.entities.has(id) || cell.ghosts.has(id))) {
    throw new Error(`entity ${id} already exists in space ${cell.spaceId}`);
  }
  const e = new Entity(id ?? cell.host.newEntityId(), type, cell, pos);
  for (const [name, value] of Object.entries(props)) e.container.set(name, value);
  if (dir) [e.yaw, e.pitch, e.roll] = dir;
  return e;
}

/** The cell part of a base entity: the base's id, the initial cell properties it sent (defaults when none), its address. */
export function makeBaseEntity(cell: MakingCell, spec: CellEntitySpec): Entity {
  if (cell.shuttingDown) {
    throw new Error(`space ${cell.spaceId} is shutting down; cannot create ${spec.type} ${spec.entityId}`);
  }
  const type = cell.host.registry.find(spec.type);
  if (!type) throw new Error(`unknown entity type "${spec.type}" for entity ${spec.entityId}`);
  if (!type.hasCell) throw new Error(`entity type ${spec.type} has no cell part (entity ${spec.entityId})`);
  if (cell.entities.has(spec.entityId)) {
    throw new Error(`entity ${spec.entityId} already exists in space ${cell.spaceId}`);
  }
  const [x, y, z] = spec.position;
  const container = spec.props.length > 0 ? decodeCellBackup(type, spec.props, spec.entityId) : undefined;
  const e = new Entity(spec.entityId, type, cell, { x, y, z }, container);
  [e.yaw, e.pitch, e.roll] = spec.direction;
  e.baseAddress = spec.baseAddress;
  e.hasClient = spec.hasClient;
  return e;
}

/** An entity again from its serialised state: same id and properties (its controllers are the cell's to restore). */
export function makeRestoredEntity(cell: MakingCell, state: EntityState): Entity {
  const type = cell.host.registry.find(state.type);
  if (!type) throw new Error(`unknown entity type "${state.type}" in the state of entity ${state.id}`);
  if (cell.entities.has(state.id)) throw new Error(`entity ${state.id} already exists in space ${cell.spaceId}`);
  const pos = { x: state.position[0], y: state.position[1], z: state.position[2] };
  const e = new Entity(state.id, type, cell, pos, Entity.containerFrom(type, state));
  [e.yaw, e.pitch, e.roll] = state.direction;
  e.isOnGround = state.isOnGround;
  e.nextControllerId = state.nextControllerId;
  e.clientCallSeq = state.clientCallSeq ?? 0;
  return e;
}
