/**
 * A cell entity: position and direction, its cell properties, its script and
 * its controllers. It is also the `self` its script sees (CellEntityApi).
 */
import { MAX_COORD, withinWorld } from "../core/geo/rect.ts";
import { decodeCellBackup, encodeCellBackup, type EntityType, PropertyContainer } from "../core/def/mod.ts";
import type {
  BasePart,
  CellEntityApi,
  CellScript,
  Direction,
  EntityRef,
  MoveOptions,
  SpaceInfo,
  Vec3,
} from "../core/script.ts";
import type { BaseRef } from "../core/base_script.ts";
import type { ControllerState, Movement, Timer } from "./controllers.ts";
import type { Cell } from "./cell.ts";
import type { RangeNode } from "./range/mod.ts";
import type { GhostInfo, Offloading, RealGhosting } from "./borders/mod.ts";
import { type ClientCaller, clientsOf, witnessOf } from "./witness/mod.ts";
import { setWitnessSettings, spaceSettingsOf, type WitnessSettings, witnessSettingsOf } from "./witness/mod.ts";
import type { SpaceSettings, SpaceSettingsView } from "../core/space_settings.ts";
import type { EntitySnapshot } from "../core/wire/mod.ts";
import { createEntityAt } from "./create_entity.ts";
import { spaceInfoOf } from "./space_view.ts";

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
export class Entity implements CellEntityApi {
  x: number;
  y: number;
  z: number;
  yaw = 0;
  pitch = 0;
  roll = 0;
  isOnGround = true;
  destroyed = false;
  /** False for a ghost: a read-only copy of a real entity in a neighbouring cell. */
  isReal = true;
  /** A real's ghosts and what it will send them; null until it has had one. */
  ghosting: RealGhosting | null = null;
  /** A ghost's real and sync state; null on a real. */
  ghostInfo: GhostInfo | null = null;
  /** While a real is being handed to another cell: where, and the calls held meanwhile. */
  offloading: Offloading | null = null;
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
  /** This entity's node on its cell's range list. */
  rangeNode: RangeNode | null = null;
  /** The baseapp holding this entity's base part, for entities created by a base. */
  baseAddress: string | null = null;
  /** Whether a client is attached through the base (a proxy's cell entity). */
  hasClient = false;
  /** Its smoothed CPU, a share of one core (cell/load/). */
  cpuLoad = 0;
  /** How many times its cell folded its CPU into cpuLoad, up to 2: the first two set it rather than smooth it. */
  cpuFolds = 0;

  constructor(
    readonly id: number,
    readonly type: EntityType,
    readonly cell: Cell,
    pos: Vec3,
    container?: PropertyContainer,
  ) {
    this.x = pos.x;
    this.y = pos.y;
    this.z = pos.z;
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
    const o = this.cell.entities.get(id);
    if (o) witnessOf(this)?.addToAoI(o);
  }

  removeFromAoI(id: number): void {
    const o = this.cell.entities.get(id);
    if (o) witnessOf(this)?.removeFromAoI(o);
  }

  get witnessSettings(): WitnessSettings | null {
    const w = witnessOf(this);
    return w ? witnessSettingsOf(w) : null;
  }

  setWitnessSettings(change: Partial<WitnessSettings>, call = "setWitnessSettings"): void {
    const w = witnessOf(this);
    if (!w) {
      throw new Error(
        `${call}: ${this.type.name} ${this.id} has no witness (no client attached); call it from onGetWitness`,
      );
    }
    setWitnessSettings(w, change, call);
  }

  setAoIRadius(radius: number): void {
    this.setWitnessSettings({ aoiRadius: radius }, "setAoIRadius");
  }

  get spaceSettings(): SpaceSettingsView {
    return spaceSettingsOf(this.cell);
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

  createEntity(typeName: string, position: Vec3, props?: Record<string, unknown>, spaceId?: number): number {
    return createEntityAt(this.cell, typeName, position, props ?? {}, spaceId);
  }

  get space(): SpaceInfo {
    return spaceInfoOf(this.cell);
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
      controllers.push(m.kind === "moveToPoint" ? { ...m, dest: { x: m.dest.x, y: m.dest.y, z: m.dest.z } } : { ...m });
    }
    for (const t of this.triggers.values()) {
      controllers.push({ kind: "rangeTrigger", id: t.id, radius: t.radius, userArg: t.userArg });
    }
    return {
      id: this.id,
      type: this.type.name,
      position: [this.x, this.y, this.z],
      direction: [this.yaw, this.pitch, this.roll],
      isOnGround: this.isOnGround,
      props: encodeCellBackup(this.container),
      controllers,
      nextControllerId: this.nextControllerId,
    };
  }

  /** The property container an EntityState carries. */
  static containerFrom(type: EntityType, state: EntityState): PropertyContainer {
    return decodeCellBackup(type, state.props, state.id);
  }
}
