/**
 * The game's view of a cell entity: the BigWorld built-ins that a cell
 * script calls, and the callbacks the cell calls on it. Scripts live in
 * entities/ and see only this, so game code never depends on how cells work.
 *
 * A script's state is its entity's declared properties (`self.props`); plain
 * fields of a script object do not move with the entity to another cell.
 */

import type { BaseRef, ClientOf } from "./base_script.ts";
import type { Vec3 } from "./geo/vec3.ts";
import type { SpaceSettings, SpaceSettingsView } from "./space_settings.ts";

/** A cell entity's base part as its cell script calls it. */
export interface BasePart {
  /** Runs base method `method` with the declared arguments; resolves with what it returns. */
  call(method: string, ...args: unknown[]): Promise<unknown>;
}

export type { SpaceSettings, SpaceSettingsView } from "./space_settings.ts";

/**
 * A witness's settings a script may change (docs/game.md, "Witness settings"): its AoI radius, the bytes its client may
 * be sent per tick, and the priority weights (an entity's update comes every (distance * distanceWeighting + 1) *
 * weighting ticks' worth of priority; a tick goes no further than maxPriorityDelta past the first one queued).
 */
export interface WitnessSettings {
  /** How far the entity's client sees (m). */
  aoiRadius: number;
  /** The most bytes of entity updates its client is sent per tick. */
  bytesPerTick: number;
  /** How much farther entities' updates are spaced out by distance. */
  distanceWeighting: number;
  /** How much every entity's updates are spaced out. */
  weighting: number;
  /** How far past the first queued update one tick may send. */
  maxPriorityDelta: number;
}

export type { Vec3 } from "./geo/vec3.ts";

/** Yaw, pitch and roll in radians. */
export interface Direction {
  /** Turn about the vertical axis. */
  yaw: number;
  /** Tilt up or down. */
  pitch: number;
  /** Tilt sideways. */
  roll: number;
}

/** Another entity as a script sees it through entitiesInRange or a trigger. */
export interface EntityRef {
  /** The entity's id, unique in the cluster. */
  readonly id: number;
  /** The name of its entity type. */
  readonly typeName: string;
  /** Where it is. */
  readonly position: Readonly<Vec3>;
  /** False for a ghost: its real lives in another cell. */
  readonly isReal: boolean;
}

/** A rectangle on the ground (X and Z), in metres. */
export interface Area {
  /** West edge. */
  readonly minX: number;
  /** South edge. */
  readonly minZ: number;
  /** East edge. */
  readonly maxX: number;
  /** North edge. */
  readonly maxZ: number;
}

/** A cell of a space, as scripts see it. */
export interface CellInfo {
  /** The cell's id within its space. */
  readonly id: number;
  /** The id of the cellapp running it. */
  readonly cellapp: number;
  /** The part of the space it runs (empty for a cell leaving the space). */
  readonly rect: Area;
}

/**
 * An entity's space as its script sees it: a read-only snapshot of the
 * geometry its cell knows, taken when read (cells move with the load, so read
 * it again rather than keep it).
 */
export interface SpaceInfo {
  /** The space's id (1: the default space). */
  readonly id: number;
  /** The whole space's area. */
  readonly bounds: Area;
  /** The default space (it never shuts down). */
  readonly isDefault: boolean;
  /** The cell the entity is real in. */
  readonly cell: CellInfo;
  /** Every cell of the space, in the tree's order. */
  readonly cells: readonly CellInfo[];
  /** The other cells whose rects touch this cell's (along an edge or at a corner). */
  readonly neighbours: readonly CellInfo[];
  /** The cell holding the point (x, z). */
  cellAt(x: number, z: number): CellInfo;
}

/** Options of moveToPoint and moveToEntity. */
export interface MoveOptions {
  /** Turn to face the direction of movement (default true). */
  faceMovement?: boolean;
  /** Passed back to onMove. */
  userArg?: number;
}

/** What a cell script can do with its entity (BigWorld's built-ins). */
export interface CellEntityApi<P = Record<string, unknown>> extends EntityRef {
  /** The id of the space it is in. */
  readonly spaceID: number;
  /** The entity's space: its bounds, this entity's cell and the cells around it. */
  readonly space: SpaceInfo;
  /** The entity's declared properties; setting one is checked and recorded. */
  readonly props: P;
  /** Where it is; setting it moves the entity (no movement controller). */
  position: Vec3;
  /** Where it faces; setting it turns the entity. */
  direction: Direction;
  /** Whether it stands on the ground (BigWorld's isOnGround). */
  isOnGround: boolean;
  /** Destroys the entity at the end of the current callback. */
  destroy(): void;
  /** Asks for the entity's space to shut down; not allowed in the default space. */
  destroySpace(): void;
  /** Calls onTimer(id, userArg) after `initial` seconds, then every `repeat` seconds if > 0. */
  addTimer(initial: number, repeat?: number, userArg?: number): number;
  /** Moves in a straight line at `speed` m/s; calls onMove(id, userArg) on arrival. */
  moveToPoint(dest: Vec3, speed: number, opts?: MoveOptions): number;
  /**
   * Follows another entity until within `range` metres; calls onMove(id, userArg) on arrival. A target in a
   * neighbouring cell is followed through its ghost; the movement ends (without onMove) once the target is gone from
   * view (destroyed, or beyond the ghost area).
   */
  moveToEntity(targetId: number, speed: number, range?: number, opts?: MoveOptions): number;
  /**
   * Walks to `dest` along its space's navigation mesh, around walls, at `speed` m/s (docs/game.md, "Navigation"); calls
   * onMove(id, userArg) on arrival, or onMoveFailed(id, reason, userArg) at the next tick when no path leads there.
   * The walk goes on across cell borders. Throws when the space has no navigation mesh.
   */
  navigate(dest: Vec3, speed: number, opts?: MoveOptions): number;
  /** The corners of the walkable path from `from` to `to` on the navigation mesh, or null when there is none. */
  findPath(from: Vec3, to: Vec3): Vec3[] | null;
  /** Whether a walkable path leads from this entity's position to `to`. */
  canNavigateTo(to: Vec3): boolean;
  /**
   * Walks the navigation mesh in a straight line from `from` towards `to`: the point where a wall or a drop stops it,
   * or null when nothing does. Throws when `from` is not on the mesh.
   */
  raycast(from: Vec3, to: Vec3): Vec3 | null;
  /** Cancels a timer, a movement or a range trigger. */
  cancel(controllerId: number): void;
  /** Entities within `radius` metres (a circle on X/Z), optionally of one type, never this one. */
  entitiesInRange(radius: number, typeName?: string): EntityRef[];
  /** Calls onEnteredRange/onLeftRange(id, other) as entities come within or leave `radius` metres. */
  addRangeTrigger(radius: number, userArg?: number): number;
  /**
   * Calls cell method `method` of entity `targetId`, wherever its real is: on
   * a ghost the call goes on to the real's cell. Resolves with what the
   * method returns (it may be async), rejects when the target is gone, the
   * method does not exist or throws, or no answer comes within the timeout.
   * While a call is pending this entity does not move to another cell.
   */
  call(targetId: number, method: string, ...args: unknown[]): Promise<unknown>;
  /**
   * Jumps to `position` in this space, or in space `spaceId`. Within this
   * cell it is a move; otherwise the entity is created in the destination
   * cell and leaves this one, and its client's view is rebuilt there.
   */
  teleport(position: Vec3, spaceId?: number): Promise<void>;
  /**
   * Its base part (BigWorld's self.base), or null for an entity without one. `base.call` runs a base method of it
   * (the declared arguments, no hidden caller) and resolves with what it returns; it rejects when the base is gone,
   * the method unknown, the arguments wrong, it throws, or no answer comes within the call timeout.
   */
  readonly base: BasePart | null;
  /** Creates a base-only entity (a guild, a matchmaker) on the least loaded baseapp; resolves with where it is. */
  createBaseAnywhere(typeName: string, props?: Record<string, unknown>): Promise<BaseRef>;
  /**
   * Creates an entity at `position` in this entity's space, or in space `spaceId`, and returns its id. A point in this
   * cell makes it at once (a bad type, position or property throws); a point in another cell, or another space, is
   * sent to the cell holding it, which makes it a moment later (its type and properties are checked here first; a
   * failure there is logged with the id).
   */
  createEntity(typeName: string, position: Vec3, props?: Record<string, unknown>, spaceId?: number): number;
  /**
   * The client of player `id` (BigWorld's entity.ownClient of another entity): its own entity's client methods,
   * sent through its base, which holds the client connection. The player must be real or a ghost in this cell (in
   * range); `call` rejects when it is not, has no base or client, or the method or arguments are wrong.
   */
  clientOf(id: number): ClientOf;
  /** Calls a client method on this entity's own client. */
  readonly ownClient: Readonly<Record<string, (...args: unknown[]) => void>>;
  /** Calls a client method on the clients that see this entity, within the method's DetailDistance. */
  readonly otherClients: Readonly<Record<string, (...args: unknown[]) => void>>;
  /** Both of the above. */
  readonly allClients: Readonly<Record<string, (...args: unknown[]) => void>>;
  /** Keeps entity `id` in this entity's AoI whatever the distance (BigWorld's manual AoI). */
  addToAoI(id: number): void;
  /** Undoes addToAoI. */
  removeFromAoI(id: number): void;
  /** Its witness's settings in force; null while no client is attached (before onGetWitness). */
  readonly witnessSettings: Readonly<WitnessSettings> | null;
  /**
   * Changes its witness's settings (from onGetWitness on): each is checked, the AoI radius against the space's ghost
   * radius (AoI radius + hysteresis + offload hysteresis <= ghost radius). Throws a RangeError naming the value and
   * the rule, or an Error without a witness. They move with the entity to other cells of the space.
   */
  setWitnessSettings(change: Partial<WitnessSettings>): void;
  /** setWitnessSettings({ aoiRadius }): BigWorld's setAoIRadius. */
  setAoIRadius(radius: number): void;
  /** Its space's AoI and ghost radius in force, as this cell has them. */
  readonly spaceSettings: Readonly<SpaceSettingsView>;
  /**
   * Changes its space's settings on every cell of the space (through the cellappmgr, which checks the ghost rule).
   * Resolves with the settings in force, or rejects saying which value breaks the rule.
   */
  setSpaceSettings(change: SpaceSettings): Promise<SpaceSettingsView>;
  /** Milliseconds of game time since the cell started, for scripts that need a clock. */
  readonly time: number;
  /** A random number in [0, 1) from the cell's generator. */
  random(): number;
}

/**
 * A cell script: one object per cell entity, constructed with its entity.
 * Every callback is optional; an exception in one is logged with the entity
 * id and type and does not stop the tick.
 */
export abstract class CellScript<P = Record<string, unknown>> {
  /** The cell makes one per entity; a subclass's constructor takes the same argument. */
  constructor(
    /** Its entity: BigWorld's built-ins, its properties and its space. */
    readonly self: CellEntityApi<P>,
  ) {}
  /** The entity was created (not called again when it moves to another cell). */
  onCreated?(): void;
  /** The entity is moving to another cell (its real leaves this cellapp). */
  onLeavingCell?(): void;
  /** The entity became real in this cell after moving here. */
  onEnteredCell?(): void;
  /** A move to another cell failed; the entity stays real here. */
  onStayedInCell?(): void;
  /**
   * The entity was re-created from its latest backup after its cellapp died (instead of onCreated): what changed
   * since that backup is lost, timers and movements go on from the backup.
   */
  onRestore?(): void;
  /** The entity is about to be destroyed. */
  onDestroy?(): void;
  /** A timer of addTimer fired. */
  onTimer?(controllerId: number, userArg: number): void;
  /** A movement (moveToPoint, moveToEntity, navigate) arrived. */
  onMove?(controllerId: number, userArg: number): void;
  /** A navigate found no path (the target is off the mesh or not connected to this entity's place): `reason` says. */
  onMoveFailed?(controllerId: number, reason: string, userArg: number): void;
  /** An entity came within a range trigger's radius (addRangeTrigger). */
  onEnteredRange?(controllerId: number, other: EntityRef, userArg: number): void;
  /** An entity left a range trigger's radius. */
  onLeftRange?(controllerId: number, other: EntityRef, userArg: number): void;
  /** The space is shutting down; the entity is destroyed afterwards unless it already was. */
  onSpaceGone?(): void;
  /** Another entity came into this entity's AoI (it has a witness). */
  onEnteredAoI?(other: EntityRef): void;
  /** An entity left this entity's AoI. */
  onLeftAoI?(other: EntityRef): void;
  /** A client is attached: the entity now has a witness. */
  onGetWitness?(): void;
  /** The client went away: the witness is gone. */
  onLoseWitness?(): void;
  /** Once per tick, after controllers ran; dt in seconds. */
  onTick?(dt: number): void;
}

/**
 * A script class as the cellapp instantiates it. Any property shape: a game's
 * `class X extends CellScript<XProps>` fits without a cast.
 */
// deno-lint-ignore no-explicit-any
export type CellScriptClass = new (self: CellEntityApi<any>) => CellScript<any>;
