/**
 * The game's view of a cell entity: the built-ins of seed 004 that a cell
 * script calls, and the callbacks the cell calls on it. Scripts live in
 * entities/ and see only this, so game code never depends on how cells work.
 *
 * A script's state is its entity's declared properties (`self.props`); plain
 * fields of a script object do not move with the entity to another cell.
 */

import type { SpaceSettings, SpaceSettingsView } from "./space_settings.ts";

export type { SpaceSettings, SpaceSettingsView } from "./space_settings.ts";

/**
 * A witness's settings a script may change (seed 000): its AoI radius, the bytes its client may be sent per tick,
 * and the priority weights (an entity's update comes every (distance * distanceWeighting + 1) * weighting ticks'
 * worth of priority; a tick goes no further than maxPriorityDelta past the first one queued).
 */
export interface WitnessSettings {
  aoiRadius: number;
  bytesPerTick: number;
  distanceWeighting: number;
  weighting: number;
  maxPriorityDelta: number;
}

/** A position or direction as scripts read and write it. */
export interface Vec3 {
  x: number;
  y: number;
  z: number;
}

/** Yaw, pitch and roll in radians. */
export interface Direction {
  yaw: number;
  pitch: number;
  roll: number;
}

/** Another entity as a script sees it through entitiesInRange or a trigger. */
export interface EntityRef {
  readonly id: number;
  readonly typeName: string;
  readonly position: Readonly<Vec3>;
  /** False for a ghost: its real lives in another cell. */
  readonly isReal: boolean;
}

/** Options of moveToPoint and moveToEntity. */
export interface MoveOptions {
  /** Turn to face the direction of movement (default true). */
  faceMovement?: boolean;
  /** Passed back to onMove. */
  userArg?: number;
}

/** What a cell script can do with its entity (seed 004's built-ins). */
export interface CellEntityApi<P = Record<string, unknown>> extends EntityRef {
  readonly spaceID: number;
  /** The entity's declared properties; setting one is checked and recorded. */
  readonly props: P;
  position: Vec3;
  direction: Direction;
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
  /** Creates another entity in this entity's space, at `position`; returns its id. */
  createEntity(typeName: string, position: Vec3, props?: Record<string, unknown>): number;
  /** Calls a client method on this entity's own client (seed 004). */
  readonly ownClient: Readonly<Record<string, (...args: unknown[]) => void>>;
  /** Calls a client method on the clients that see this entity, within the method's DetailDistance. */
  readonly otherClients: Readonly<Record<string, (...args: unknown[]) => void>>;
  /** Both of the above. */
  readonly allClients: Readonly<Record<string, (...args: unknown[]) => void>>;
  /** Keeps entity `id` in this entity's AoI whatever the distance (seed 000's manual AoI). */
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
  /** setWitnessSettings({ aoiRadius }): seed 000's setAoIRadius. */
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
  constructor(readonly self: CellEntityApi<P>) {}
  /** The entity was created (not called again when it moves to another cell). */
  onCreated?(): void;
  /** The entity is moving to another cell (its real leaves this cellapp); seed 002's on_become_ghost. */
  onLeavingCell?(): void;
  /** The entity became real in this cell after moving here; seed 002's on_become_real. */
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
  onTimer?(controllerId: number, userArg: number): void;
  onMove?(controllerId: number, userArg: number): void;
  onEnteredRange?(controllerId: number, other: EntityRef, userArg: number): void;
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

/** A script class as the cellapp instantiates it. */
export type CellScriptClass = new (self: CellEntityApi) => CellScript;
