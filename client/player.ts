/**
 * The player's own entity, and what a login's answer sets up around it: the world model of its AOI and the client
 * events that model raises.
 */
import { type EntityType, PropertyContainer } from "../core/def/mod.ts";
import type { ClientEvents, Emitter, EntityView, Vec3 } from "./events.ts";
import { ClientWorld } from "./world.ts";
import type { ConnectOptions } from "./login.ts";

/** The player's own entity. */
export class PlayerEntity implements EntityView {
  /** Where the player is (metres): set by the client's moves and by the server (cellReady, forcedPosition). */
  position: Vec3 = { x: 0, y: 0, z: 0 };
  /** Heading, radians about the vertical axis. */
  yaw = 0;
  /** Pitch, radians. */
  pitch = 0;
  /** Roll, radians. */
  roll = 0;
  /** Always 0: a client sees its own player at the nearest level. */
  detailLevel = 0;
  /** The space its cell entity is in; 0 until the first cellReady. */
  spaceId = 0;

  /**
   * Made by the client from the server's answer to a login (not by a game).
   *
   * @param id The player entity's id.
   * @param type Its entity type.
   * @param container Its own-client properties (base and cell parts), as the server sent them.
   */
  constructor(readonly id: number, readonly type: EntityType, readonly container: PropertyContainer) {}

  /** The player's own-client property values by name (read them; the server changes them). */
  get props(): Record<string, unknown> {
    return this.container.view;
  }
}

/** The options that shape what a player is set up with. */
export type PlayOptions = Pick<ConnectOptions, "registry" | "decodeAoi" | "aoiEvents" | "aoiMoves">;

/** Where a player set up sends AOI replies and raises its events. */
export interface PlayLink {
  /** Sends raw client-protocol bytes (the world model's replies). */
  send(bytes: Uint8Array): void;
  readonly events: Pick<Emitter<ClientEvents>, "emit">;
  /** Takes the world model set up. */
  useWorld(world: ClientWorld): void;
}

/**
 * Sets up the player entity `entityId` of type `typeId` (the answer to a login), with a world model unless
 * `decodeAoi` is false; its state is still to be read into its container.
 */
export function startPlayer(entityId: number, typeId: number, opts: PlayOptions, link: PlayLink): PlayerEntity {
  const type = opts.registry.byId(typeId);
  let container: PropertyContainer;
  if (opts.decodeAoi !== false) {
    const world = new ClientWorld(opts.registry, { send: (b) => link.send(b), moves: opts.aoiMoves !== false });
    world.setPlayer(entityId, type);
    container = world.player!.container;
    forwardWorldEvents(world, link.events, opts.aoiEvents !== false);
    link.useWorld(world);
  } else container = new PropertyContainer(type, "ownClient", { entityId });
  return new PlayerEntity(entityId, type, container);
}

/** Raises the world model's events as the client's (those of the AOI's entities only when `aoiEvents`). */
function forwardWorldEvents(w: ClientWorld, events: Pick<Emitter<ClientEvents>, "emit">, aoiEvents: boolean): void {
  w.on("ownProperty", (ev) => events.emit("playerProperty", ev.name, ev.value));
  w.on("ownMethod", (ev) => events.emit("playerMethod", ev.name, ev.args));
  if (!aoiEvents) return;
  w.on("enter", (ev) => events.emit("enter", ev.entity));
  w.on("leave", (ev) => events.emit("leave", ev.entity.id, ev.entity));
  w.on("property", (ev) => {
    const c = ev.change;
    const update = { path: ev.path, indices: c.path, kind: c.kind, start: c.start, end: c.end, byAlias: ev.byAlias };
    events.emit("property", ev.entity, ev.name, ev.value, update);
  });
  w.on("detailLevel", (ev) => events.emit("detailLevel", ev.entity, ev.level, ev.names));
  w.on("method", (ev) => events.emit("clientMethod", ev.entity, ev.name, ev.args, { byAlias: ev.byAlias }));
  w.on("move", (ev) => events.emit("move", ev.entity, { full: ev.full, byAlias: ev.byAlias }));
}
