/**
 * A cell entity: position and direction, its cell properties, its script and
 * its controllers. It is also the `self` its script sees (CellEntityApi).
 */
import { MAX_COORD, withinWorld } from "../core/geo/mod.ts";
import { decodeCellBackup, encodeCellBackup, type EntityType, PropertyContainer } from "../core/def/mod.ts";
import type { ErrorCodeValue } from "../core/proto/mod.ts";
import type { Logger } from "../core/log.ts";
import type {
  BasePart,
  CellEntityApi,
  CellScript,
  Direction,
  EntityRef,
  MoveOptions,
  SpaceInfo,
  Vec3,
  WitnessSettings,
} from "../core/script.ts";
import type { BaseRef, ClientOf } from "../core/base_script.ts";
import type { ControllerState, Movement, Navigation, Timer } from "./controllers.ts";
import type { GhostArea } from "./cell_layout.ts";
import type { CellLoadMeter } from "./load/cell_load.ts";
import type { RangeList, RangeNode } from "./range/mod.ts";
import type { GhostInfo, RealGhosting } from "./borders/ghost_records.ts";
import type { Offloading } from "./borders/handover_fence.ts";
import { type ClientCaller, type ClientCallers, clientsOf } from "./witness/witness_clients.ts";
import type { EventHistory } from "./witness/event_history.ts";
import { EntityPose } from "./entity_pose.ts";
import type { WitnessOptions } from "./witness/witness_options.ts";
import type { SpaceSettings, SpaceSettingsView } from "../core/space_settings.ts";
import type { EntitySnapshot } from "../core/wire/mod.ts";
import type { SpaceNavMesh } from "./nav/mod.ts";

/**
 * The cell an entity is in, as far as the entity and those who hold one (the mechanisms, by `e.cell`) use it. The
 * cell implements it and wires each call to its mechanism, so the entity imports none of them.
 */
export interface EntityHost {
  // What the entity itself uses, mostly for its script (CellEntityApi).
  readonly spaceId: number;
  /** The cell's clock (ms), advanced by ticks. */
  readonly time: number;
  /** Reals of the cell. */
  readonly entities: ReadonlyMap<number, Entity>;
  random(): number;
  moveEntity(e: Entity, x: number, y: number, z: number): void;
  destroyEntity(e: Entity, reason?: string, tellBase?: boolean): void;
  requestShutDown(why: string): void;
  addTimer(e: Entity, initialMs: number, repeatMs: number, userArg: number): number;
  startMovement(e: Entity, m: Movement): number;
  /** The space's navigation mesh; throws naming `call` when the space has none, or it is not made yet. */
  navMesh(call: string): SpaceNavMesh;
  cancelController(e: Entity, id: number): void;
  entitiesInRange(e: Entity, radius: number, typeName?: string): EntityRef[];
  addScriptTrigger(e: Entity, id: number, radius: number, userArg: number): number;
  /** The game adds entity `id` to (removes it from) the AoI of `e`'s witness, if it has one. */
  addToAoI(e: Entity, id: number): void;
  removeFromAoI(e: Entity, id: number): void;
  /** The settings of `e`'s witness in force (null without one); setWitnessSettings checks and changes them. */
  witnessSettings(e: Entity): WitnessSettings | null;
  setWitnessSettings(e: Entity, change: Partial<WitnessSettings>, call: string): void;
  /** The settings of the space in force; setSpaceSettings asks for a change (`who` is the entity asking). */
  readonly spaceSettings: SpaceSettingsView;
  setSpaceSettings(change: SpaceSettings, who: string): Promise<SpaceSettingsView>;
  /** The space as scripts see it. */
  readonly spaceInfo: SpaceInfo;
  /** Creates a `typeName` at `pos` in space `spaceId` (this one by default) for a script; returns its id. */
  createEntityAt(typeName: string, pos: Vec3, props: Record<string, unknown>, spaceId?: number): number;
  teleport(e: Entity, pos: Vec3, spaceId?: number): Promise<void>;
  /** A script's call of a cell method of another entity; runEntityCall is the same call with no caller to count. */
  callEntity(caller: Entity, targetId: number, method: string, args: unknown[]): Promise<unknown>;
  callBase(e: Entity, method: string, args: unknown[]): Promise<unknown>;
  createBaseAnywhere(typeName: string, props: Record<string, unknown>): Promise<BaseRef>;
  /** A direct message to the client of player `id`, real or ghost here (CellEntityApi.clientOf). */
  clientMessage(id: number, method: string, args: unknown[]): Promise<void>;

  // What the mechanisms that hold an entity (witness, ghosts, load, client traffic, orphans) reach by `e.cell`.
  /** The cell's id within its space. */
  readonly cellId: number;
  /** Ghosts of its neighbours' reals that the cell holds. */
  readonly ghosts: ReadonlyMap<number, Entity>;
  /** The range list the cell's reals and ghosts are on. */
  readonly rangeList: RangeList;
  /** The reals' CPU (cell/load/). */
  readonly loadMeter: CellLoadMeter;
  /** The witnesses of the cell's reals (a Witness adds itself, and takes itself out when it ends). */
  readonly witnesses: Set<EntityWitness>;
  /** The space's AoI defaults for witnesses created here (configureSpaceAoI). */
  aoiOptions: WitnessOptions;
  /** The other cells of the space, each with its rect grown by the ghost radius. */
  readonly ghostAreas: readonly GhostArea[];
  /** The space's ghost radius in force. */
  readonly ghostRadius: number;
  /** What the entity's witness reaches of the cellapp. */
  readonly host: EntityCellapp;
  /** Calls a script callback of `e`, containing (and logging) anything it throws. */
  callScript(e: Entity, name: string, ...args: unknown[]): void;
  /** Runs script method `name` of `e` for a client; what it throws goes to `failed`. */
  callForClient(e: Entity, name: string, args: unknown[], failed: (err: unknown) => void): void;
  /** `e` gets a witness writing its client's updates to `sink`; `disableWitness` takes it away. */
  enableWitness(e: Entity, sink: (frame: Uint8Array) => void): void;
  disableWitness(e: Entity): void;
  /** Drops the ghosts of real `e`; the next ghost check makes them again. */
  dropGhosts(e: Entity): void;
  runEntityCall(targetId: number, callerId: number, method: string, args: unknown[]): Promise<unknown>;
}

/**
 * An entity's witness as the entity and its cell hold it: cell/witness/witness.ts's Witness, which witnessOf returns
 * with its own type. Declared here so that the entity imports nothing of the witness.
 */
export interface EntityWitness {
  /** The entity whose client it serves: its update is charged to it (cell/load/). */
  readonly entity: Entity;
  update(): void;
}

/** What an entity's witness reaches of the cellapp through the cell: its log, and the client's error channel. */
export interface EntityCellapp {
  readonly log: Logger;
  /** The client of `e` asked for something the cell refused: tell it. */
  clientError(e: Entity, code: ErrorCodeValue, about: number, message: string): void;
}

/** An entity's whole cell state in one serialised form, its controllers typed. */
export interface EntityState extends EntitySnapshot {
  controllers: ControllerState[];
}

/** A range trigger a script added with addRangeTrigger. */
export interface ScriptTrigger {
  id: number;
  radius: number;
  userArg: number;
  /** Removes it from the range list. */
  remove(): void;
}

/** A real entity in a cell. */
export class Entity extends EntityPose implements CellEntityApi {
  /** False for a ghost: a read-only copy of a real entity in a neighbouring cell. */
  isReal = true;
  /** A real's ghosts and what it will send them; null until it has had one. */
  ghosting: RealGhosting | null = null;
  /** A ghost's real and sync state; null on a real. */
  ghostInfo: GhostInfo | null = null;
  /** While a real is being handed to another cell: where, and the calls held meanwhile. */
  offloading: Offloading | null = null;
  /** While a real is being handed to another cell by a teleport (teleport.ts). */
  teleporting = false;
  /**
   * The cellapp this real left by its last teleport: messages for it that reached that cellapp late are passed on
   * from there, and are taken (it holds no ghost of the real, as a cellapp it moved away from by offload does).
   */
  teleportedFrom: string | null = null;
  /** Cell time before which a failed offload is not tried again. */
  offloadRetryAt = 0;
  /** How many times this real moved cell (its client's frames carry it, so the base orders them). */
  epoch = 0;
  /** The backup sender's mark: its epoch when this cellapp last backed it up (-1: never). */
  backedUpEpoch = -1;
  /** Calls this entity made that are still awaiting their answer; it does not offload meanwhile. */
  pendingCalls = 0;
  /** The cell properties (a real's) or the ghosted ones, read-only (a ghost's). */
  container: PropertyContainer;
  script: CellScript | null = null;
  readonly timers: Map<number, Timer> = new Map();
  movement: Movement | null = null;
  readonly triggers: Map<number, ScriptTrigger> = new Map();
  nextControllerId = 1;
  /**
   * The sequence number of the last client call from its base that ran on it (0: none): it travels with the entity
   * and its backups, and its base replays the later calls into it once it is restored from a backup.
   */
  clientCallSeq = 0;
  /** This entity's node on its cell's range list. */
  rangeNode: RangeNode | null = null;
  /** The baseapp holding this entity's base part, for entities created by a base. */
  baseAddress: string | null = null;
  /** Whether a client is attached through the base (a proxy's cell entity). */
  hasClient = false;
  /** Its client's view of the world, while a client is attached (cell/witness/). */
  witness: EntityWitness | null = null;
  /** Its event history, made the first time something needs it (cell/witness/event_history.ts historyOf). */
  history: EventHistory | null = null;
  /** Its script's ownClient, otherClients and allClients, made on first use (cell/witness/witness_clients.ts). */
  clientCallers: ClientCallers | null = null;
  /** Its smoothed CPU, a share of one core (cell/load/). */
  cpuLoad = 0;
  /** How many times its cell folded its CPU into cpuLoad, up to 2: the first two set it rather than smooth it. */
  cpuFolds = 0;

  constructor(
    readonly id: number,
    readonly type: EntityType,
    readonly cell: EntityHost,
    pos: Vec3,
    container?: PropertyContainer,
  ) {
    super();
    this.x = pos.x;
    this.y = pos.y;
    this.z = pos.z;
    this.isOnGround = true;
    this.container = container ?? new PropertyContainer(type, "cell", { entityId: id });
  }

  get typeName(): string {
    return this.type.name;
  }

  get spaceID(): number {
    return this.cell.spaceId;
  }

  get props(): Record<string, unknown> {
    return this.container.view as Record<string, unknown>;
  }

  get position(): Vec3 {
    return { x: this.x, y: this.y, z: this.z };
  }

  set position(p: Vec3) {
    this.cell.moveEntity(this, p.x, p.y, p.z);
  }

  get direction(): Direction {
    return { yaw: this.yaw, pitch: this.pitch, roll: this.roll };
  }

  set direction(d: Direction) {
    this.yaw = d.yaw;
    this.pitch = d.pitch;
    this.roll = d.roll;
  }

  get time(): number {
    return this.cell.time;
  }

  random(): number {
    return this.cell.random();
  }

  destroy(): void {
    this.cell.destroyEntity(this);
  }

  destroySpace(): void {
    this.cell.requestShutDown(`destroySpace called by ${this.type.name} ${this.id}`);
  }

  addTimer(initial: number, repeat = 0, userArg = 0): number {
    return this.cell.addTimer(this, initial * 1000, repeat * 1000, userArg);
  }

  moveToPoint(dest: Vec3, speed: number, opts: MoveOptions = {}): number {
    if (!withinWorld([dest.x, dest.y, dest.z])) {
      throw new Error(`moveToPoint: (${dest.x}, ${dest.y}, ${dest.z}) is not within ±${MAX_COORD} m`);
    }
    return this.cell.startMovement(this, {
      kind: "moveToPoint",
      id: this.nextControllerId++,
      dest: { x: dest.x, y: dest.y, z: dest.z },
      speed,
      faceMovement: opts.faceMovement ?? true,
      userArg: opts.userArg ?? 0,
    });
  }

  navigate(dest: Vec3, speed: number, opts: MoveOptions = {}): number {
    const call = `navigate by ${this.type.name} ${this.id}`;
    if (!withinWorld([dest.x, dest.y, dest.z])) {
      throw new Error(`${call}: (${dest.x}, ${dest.y}, ${dest.z}) is not within ±${MAX_COORD} m`);
    }
    const found = this.cell.navMesh(call).findPath(this, dest);
    const m: Navigation = {
      kind: "navigate",
      id: this.nextControllerId++,
      dest: { x: dest.x, y: dest.y, z: dest.z },
      path: "path" in found ? found.path : [],
      speed,
      faceMovement: opts.faceMovement ?? true,
      userArg: opts.userArg ?? 0,
    };
    if ("why" in found) m.failed = `${call}: ${found.why}`;
    return this.cell.startMovement(this, m);
  }

  findPath(from: Vec3, to: Vec3): Vec3[] | null {
    const found = this.cell.navMesh(`findPath by ${this.type.name} ${this.id}`).findPath(from, to);
    return "path" in found ? found.path : null;
  }

  canNavigateTo(to: Vec3): boolean {
    return "path" in this.cell.navMesh(`canNavigateTo by ${this.type.name} ${this.id}`).findPath(this, to);
  }

  raycast(from: Vec3, to: Vec3): Vec3 | null {
    return this.cell.navMesh(`raycast by ${this.type.name} ${this.id}`).raycast(from, to);
  }

  moveToEntity(targetId: number, speed: number, range = 0, opts: MoveOptions = {}): number {
    return this.cell.startMovement(this, {
      kind: "moveToEntity",
      id: this.nextControllerId++,
      targetId,
      speed,
      range,
      faceMovement: opts.faceMovement ?? true,
      userArg: opts.userArg ?? 0,
    });
  }

  cancel(controllerId: number): void {
    this.cell.cancelController(this, controllerId);
  }

  entitiesInRange(radius: number, typeName?: string): EntityRef[] {
    return this.cell.entitiesInRange(this, radius, typeName);
  }

  addRangeTrigger(radius: number, userArg = 0): number {
    return this.cell.addScriptTrigger(this, this.nextControllerId++, radius, userArg);
  }

  get ownClient(): ClientCaller {
    return clientsOf(this).ownClient;
  }

  get otherClients(): ClientCaller {
    return clientsOf(this).otherClients;
  }

  get allClients(): ClientCaller {
    return clientsOf(this).allClients;
  }

  addToAoI(id: number): void {
    this.cell.addToAoI(this, id);
  }

  removeFromAoI(id: number): void {
    this.cell.removeFromAoI(this, id);
  }

  get witnessSettings(): WitnessSettings | null {
    return this.cell.witnessSettings(this);
  }

  setWitnessSettings(change: Partial<WitnessSettings>, call = "setWitnessSettings"): void {
    this.cell.setWitnessSettings(this, change, call);
  }

  setAoIRadius(radius: number): void {
    this.setWitnessSettings({ aoiRadius: radius }, "setAoIRadius");
  }

  get spaceSettings(): SpaceSettingsView {
    return this.cell.spaceSettings;
  }

  setSpaceSettings(change: SpaceSettings): Promise<SpaceSettingsView> {
    return this.cell.setSpaceSettings(change, `${this.type.name} ${this.id}`);
  }

  teleport(position: Vec3, spaceId?: number): Promise<void> {
    return this.cell.teleport(this, position, spaceId);
  }

  call(targetId: number, method: string, ...args: unknown[]): Promise<unknown> {
    return this.cell.callEntity(this, targetId, method, args);
  }

  get base(): BasePart | null {
    if (this.baseAddress === null || !this.isReal) return null;
    return { call: (method, ...args) => this.cell.callBase(this, method, args) };
  }

  createBaseAnywhere(typeName: string, props: Record<string, unknown> = {}): Promise<BaseRef> {
    return this.cell.createBaseAnywhere(typeName, props);
  }

  clientOf(id: number): ClientOf {
    return { call: (method, ...args) => this.cell.clientMessage(id, method, args) };
  }

  createEntity(typeName: string, position: Vec3, props?: Record<string, unknown>, spaceId?: number): number {
    return this.cell.createEntityAt(typeName, position, props ?? {}, spaceId);
  }

  get space(): SpaceInfo {
    return this.cell.spaceInfo;
  }

  /** The entity's whole cell state: properties, position, direction, controllers. */
  serialise(now: number): EntityState {
    const controllers: ControllerState[] = [];
    for (const t of this.timers.values()) {
      controllers.push({
        kind: "timer",
        id: t.id,
        dueInMs: Math.max(0, t.due - now),
        repeatMs: t.repeatMs,
        userArg: t.userArg,
      });
    }
    // A plain copy: structuredClone cost three quarters of a backup (they run for every real each period).
    const m = this.movement;
    if (m) {
      if (m.kind === "moveToEntity") controllers.push({ ...m });
      else if (m.kind === "moveToPoint") controllers.push({ ...m, dest: { x: m.dest.x, y: m.dest.y, z: m.dest.z } });
      else controllers.push({ ...m, dest: { ...m.dest }, path: m.path.map((p) => ({ x: p.x, y: p.y, z: p.z })) });
    }
    for (const t of this.triggers.values()) {
      controllers.push({ kind: "rangeTrigger", id: t.id, radius: t.radius, userArg: t.userArg });
    }
    const state: EntityState = {
      id: this.id,
      type: this.type.name,
      position: [this.x, this.y, this.z],
      direction: [this.yaw, this.pitch, this.roll],
      isOnGround: this.isOnGround,
      props: encodeCellBackup(this.container),
      controllers,
      nextControllerId: this.nextControllerId,
    };
    // Only an entity its client called carries it: NPC backups, sent by the thousand, stay as small as they were.
    if (this.clientCallSeq > 0) state.clientCallSeq = this.clientCallSeq;
    return state;
  }

  /** The property container an EntityState carries. */
  static containerFrom(type: EntityType, state: EntityState): PropertyContainer {
    return decodeCellBackup(type, state.props, state.id);
  }
}
