/** The messages a client sends for its player: calls of exposed methods, and its movement. */
import type { EntityType } from "../core/def/mod.ts";
import { C2S, type ClientMessage, encodeArgs } from "../core/proto/mod.ts";
import type { EntityView, Vec3 } from "./events.ts";

/** The player, as the calls it makes need it. */
export interface Caller {
  readonly id: number;
  readonly type: EntityType;
}

/** The message calling exposed base method `name` of the player. */
export function baseCall(player: Caller, name: string, args: unknown[]): ClientMessage {
  const m = player.type.method("base", name);
  return { id: C2S.callBase, method: m.index, args: encodeArgs(m, args) };
}

/**
 * The message calling exposed cell method `name` of the player (target null) or of an entity of `entities` (the
 * AOI); throws when the entity is not in it.
 */
export function cellCall(
  player: Caller,
  entities: ReadonlyMap<number, EntityView>,
  target: number | null,
  name: string,
  args: unknown[],
): ClientMessage {
  const id = target ?? player.id;
  const type = id === player.id ? player.type : entities.get(id)?.type;
  if (!type) throw new Error(`entity ${id} is not in this client's AOI`);
  const m = type.method("cell", name);
  return { id: C2S.callCell, target: id, typeId: type.id, method: m.index, args: encodeArgs(m, args) };
}

/** The message reporting the player's position and direction (yaw, pitch, roll in radians). */
export function positionMessage(pos: Vec3, dir: [number, number, number]): ClientMessage {
  return { id: C2S.position, pose: { x: pos.x, y: pos.y, z: pos.z, yaw: dir[0], pitch: dir[1], roll: dir[2] } };
}
