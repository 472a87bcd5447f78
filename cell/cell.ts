/**
 * A cell: this cellapp's part of one space. It holds the real entities in its
 * rect, their range list, timers and movements, runs their scripts each tick,
 * and follows seed 003's shutdown flow.
 */
import { ByteWriter, decodeCellBackup, type EntityRegistry, writeChange } from "../core/def/mod.ts";
import type { Logger } from "../core/log.ts";
import { seededRandom } from "../core/random.ts";
import type { ErrorCodeValue } from "../core/def/client_protocol.ts";
import type { CellScriptClass, EntityRef, Vec3 } from "../core/script.ts";
import {
  type SpaceSettings,
  spaceSettingsError,
  spaceSettingsIn,
  type SpaceSettingsView,
} from "../core/space_settings.ts";
import { cellIndexAt, type CellRect, cellRects } from "../core/geo/bsp.ts";
import { MAX_COORD, type Rect, rectFromArray, rectGrow, withinWorld } from "../core/geo/rect.ts";
import {
  type CellEntitySpec,
  type CellReport,
  type EntitySummary,
  type GhostOp,
  type GhostState,
  MAX_LOAD,
  type MessageDef,
  type OffloadState,
  type SpaceGeometry,
  type TeleportState,
} from "../core/wire/mod.ts";
import {
  type CellAddress,
  CellBorders,
  dropGhost,
  freezeOrphanedGhosts,
  type GhostConfig,
  takeOverFrozenGhost,
} from "./borders/mod.ts";
import { type ControllerState, type Movement, type Timer, TimerHeap } from "./controllers.ts";
import { Entity, type EntityState } from "./entity.ts";
import { RANGE_FLAG_SCRIPT, RangeList } from "./range/mod.ts";
import { TickStats } from "./tick_stats.ts";
import { runEntityCall } from "./calls.ts";
import { receiveTeleport, teleport } from "./teleport.ts";
import {
  applySpaceSettings,
  spaceSettingsOf,
  updateWitnesses,
  Witness,
  witnessOf,
  type WitnessOptions,
} from "./witness/mod.ts";
import { CellLoadMeter } from "./load/cell_load.ts";
import type { BaseRef } from "../core/base_script.ts";
import { enterEntity, enterLoop, leaveEntity, switchEntity } from "./load/entity_load.ts";

/** What a cell needs from its cellapp. */
export interface CellHost {
  registry: EntityRegistry;
  scripts: Readonly<Record<string, CellScriptClass>>;
  log: Logger;
  /** A fresh, cluster-unique entity id. */
  newEntityId(): number;
  /** Ghosting between cellapps; a host without it (a lone cell in a test) keeps no ghosts. */
  ghosting?: GhostHost;
  /** Asks the cellappmgr to shut the space down. */
  requestShutDown(spaceId: number, why: string): void;
  /** Asks the cellappmgr to change the space's settings; a host without one (a test's lone cell) has none. */
  setSpaceSettings?(spaceId: number, change: SpaceSettings): Promise<SpaceSettingsView>;
  /** The cell `cellId` of the space has finished shutting down and can be dropped. */
  cellGone(spaceId: number, cellId: number): void;
  /** Tells the base of `e` that its cell entity is gone. */
  cellEntityDestroyed(e: Entity, reason: string): void;
  /**
   * Tells the base of `e` that its cell entity now lives on the cellapp at `address`, as epoch `e.epoch + 1`
   * (sent after this cellapp's last frame for its client).
   */
  cellEntityMoved?(e: Entity, address: string, spaceId?: number): void;
  /**
   * Tells the base of `e` that `e` was teleported to where it now is (in `spaceId`), after this cellapp's last frame
   * for its client from where it was: the client is told, the base's speed check starts there.
   */
  entityTeleported?(e: Entity, spaceId: number, position: Vec3): void;
  /** Where the cell of another space containing (x, z) is (for teleports). */
  findCell?(spaceId: number, x: number, z: number): Promise<CellAddress>;
  /** Where a witness restored here sends its client's frames (through the entity's base); none without a base. */
  clientSink?(e: Entity): ((frame: Uint8Array) => void) | undefined;
  /** The client of `e` asked for something the cell refused: tell it (an error reply about client message `about`). */
  clientError?(e: Entity, code: ErrorCodeValue, about: number, message: string): void;
  budgetMs: number;
  /** Base scripts (issue 15): calls a base method of the base of `e`, and creates base-only entities. */
  bases?: CellBases;
}

/** What cell scripts reach of the baseapps through their cellapp. */
export interface CellBases {
  call(e: Entity, method: string, args: unknown[]): Promise<unknown>;
  createBaseAnywhere(typeName: string, props: Record<string, unknown>): Promise<BaseRef>;
}

/** What a cell needs to keep ghosts on other cellapps. */
export interface GhostHost {
  config: GhostConfig;
  /** This cellapp's listening address. */
  address: string;
  /** Sends a one-way message to another cellapp by address. */
  send<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void;
  /** Sends a request to another cellapp by address. */
  ask<A extends unknown[], R>(address: string, timeoutMs: number, def: MessageDef<A, R>, ...args: A): Promise<R>;
}

/** Seed 003: a shutdown request is acted on after this delay, so in-flight work settles. */
const SHUTDOWN_DELAY_MS = 1000;

/**
 * A cell that left the tree stays this long (cell time) after its last real went, so that messages sent to its
 * reals before their senders knew are still sent on to where they went.
 */
const RETIRED_LINGER_MS = 1000;

/** A cell of a space on this cellapp. */
export class Cell {
  readonly entities: Map<number, Entity> = new Map();
  /** Ghosts this cell keeps elsewhere and holds here, and offloading. */
  readonly borders: CellBorders = new CellBorders(this);
  /** Ghosts of reals in neighbouring cells, by id. */
  readonly ghosts: Map<number, Entity> = new Map();
  /** Reals that have at least one ghost. */
  #lastGhostCheck = -Infinity;
  readonly rangeList: RangeList = new RangeList();
  readonly stats: TickStats;
  /** Game time in ms: the sum of tick steps since the cell was created. */
  time = 0;
  geometry: SpaceGeometry;
  rect!: Rect;
  /** Every cell of the space with its rect, in the tree's order. */
  layout: CellRect[] = [];
  /** The other cells of the space, each with its rect grown by the ghost radius: where reals here need a ghost. */
  ghostAreas: (CellAddress & { area: Rect })[] = [];
  /** The space's ghost radius in force (its own, else the cellapp's); Infinity on a cellapp that keeps no ghosts. */
  ghostRadius = Infinity;
  hasHadEntities = false;
  shuttingDown = false;
  /** Whether the space's tree has this cell; one that left it hands its reals over, then goes (#checkRetired). */
  inTree = true;
  /** Cell time since when a cell that left the tree has held no real (NaN while it holds some, or is in the tree). */
  #emptySince = NaN;
  /** Set once a cell that left the tree has removed itself. */
  #removed = false;
  /** The reals' CPU and where it lies, for the load report (cell/load/). */
  readonly loadMeter: CellLoadMeter;
  /** Reals that moved here from another cell, and away, so far. */
  offloadsIn = 0;
  offloadsOut = 0;
  /** Resyncs its ghosts asked their reals for, so far (each a lost ghost update). */
  ghostResyncs = 0;
  /** Script exceptions caught (and logged) so far. */
  scriptErrors = 0;
  #timers = new TimerHeap();
  #movers = new Set<Entity>();
  #tickers = new Set<Entity>();
  #rng: () => number;
  #shutdownTimer: ReturnType<typeof setTimeout> | undefined;

  /** The cell's id within its space (a leaf of the tree). */
  readonly cellId: number;

  /**
   * A cell of `geometry`'s space on cellapp `cellappId`: the leaf `cellId`,
   * or the first leaf of that cellapp when no id is given.
   */
  constructor(readonly host: CellHost, geometry: SpaceGeometry, readonly cellappId: number, cellId?: number) {
    this.geometry = geometry;
    this.cellId = cellId ??
      cellRects(geometry.tree, rectFromArray(geometry.bounds)).find((c) => c.cellapp === cellappId)?.id ?? 0;
    this.updateGeometry(geometry);
    this.stats = new TickStats(host.budgetMs);
    this.loadMeter = new CellLoadMeter(this.entities, this.rangeList);
    this.#rng = seededRandom(geometry.spaceId * 2654435761 + (this.cellId - 1) * 40503);
  }

  get spaceId(): number {
    return this.geometry.spaceId;
  }

  get isDefault(): boolean {
    return this.geometry.isDefault;
  }

  /**
   * Takes a new tree; this cell's rect is its leaf's (empty when the tree no
   * longer has it). What follows from the tree is worked out here, once, not
   * by the checks that run every tick or every second.
   */
  updateGeometry(g: SpaceGeometry): void {
    this.geometry = g;
    this.layout = cellRects(g.tree, rectFromArray(g.bounds));
    const mine = this.layout.find((c) => c.id === this.cellId && c.cellapp === this.cellappId);
    this.rect = mine ? mine.rect : { minX: 0, minZ: 0, maxX: 0, maxZ: 0 };
    if (this.inTree && !mine) {
      this.host.log.info(
        `space ${g.spaceId} cell ${this.cellId} left the space's tree: handing its ${this.entities.size} real(s) ` +
          `over, then it goes`,
      );
    }
    this.inTree = mine !== undefined;
    // Not reset while it stays out: the balancer sends a new tree every period, which must not keep it lingering.
    if (mine) this.#emptySince = NaN;
    const addresses = new Map(g.cellapps ?? []);
    const radius = g.ghostRadius ?? this.host.ghosting?.config.ghostRadius ?? 0;
    this.ghostRadius = this.host.ghosting ? radius : Infinity;
    this.ghostAreas = [];
    for (const c of this.layout) {
      const address = addresses.get(c.cellapp);
      if (c.id === this.cellId || !address) continue;
      this.ghostAreas.push({ cell: c.id, cellapp: c.cellapp, address, area: rectGrow(c.rect, radius) });
    }
    freezeOrphanedGhosts(this);
    applySpaceSettings(this, g.aoiRadius ?? undefined);
  }

  /** The cell of this space containing (x, z), with its cellapp's address when known. */
  cellAt(x: number, z: number): { cell: CellRect; address: string | undefined } {
    const cell = this.layout[cellIndexAt(this.geometry.tree, x, z)];
    return { cell, address: new Map(this.geometry.cellapps ?? []).get(cell.cellapp) };
  }

  random(): number {
    return this.#rng();
  }

  /** Creates a real entity; initial properties are checked as they are set. */
  createEntity(
    typeName: string,
    pos: Vec3,
    props: Record<string, unknown> = {},
    dir?: [number, number, number],
    id?: number,
  ): Entity {
    if (this.shuttingDown) throw new Error(`space ${this.spaceId} is shutting down; cannot create ${typeName}`);
    const type = this.host.registry.find(typeName);
    if (!type) throw new Error(`unknown entity type "${typeName}"`);
    if (!type.hasCell) throw new Error(`entity type ${typeName} has no cell part`);
    if (!withinWorld([pos.x, pos.y, pos.z])) {
      throw new Error(`${typeName}: position (${pos.x}, ${pos.y}, ${pos.z}) is not within ±${MAX_COORD} m`);
    }
    if (id !== undefined && (this.entities.has(id) || this.ghosts.has(id))) {
      throw new Error(`entity ${id} already exists in space ${this.spaceId}`);
    }
    const e = new Entity(id ?? this.host.newEntityId(), type, this, pos);
    for (const [name, value] of Object.entries(props)) e.container.set(name, value);
    if (dir) [e.yaw, e.pitch, e.roll] = dir;
    this.#add(e);
    this.#callScript(e, "onCreated");
    return e;
  }

  /**
   * Creates the cell part of a base entity: the base's id, the initial cell
   * properties it sent (all defaults when it sent none), and its address.
   */
  createBaseEntity(spec: CellEntitySpec): Entity {
    if (this.shuttingDown) {
      throw new Error(`space ${this.spaceId} is shutting down; cannot create ${spec.type} ${spec.entityId}`);
    }
    const type = this.host.registry.find(spec.type);
    if (!type) throw new Error(`unknown entity type "${spec.type}" for entity ${spec.entityId}`);
    if (!type.hasCell) throw new Error(`entity type ${spec.type} has no cell part (entity ${spec.entityId})`);
    if (this.entities.has(spec.entityId)) {
      throw new Error(`entity ${spec.entityId} already exists in space ${this.spaceId}`);
    }
    const [x, y, z] = spec.position;
    const container = spec.props.length > 0 ? decodeCellBackup(type, spec.props, spec.entityId) : undefined;
    const e = new Entity(spec.entityId, type, this, { x, y, z }, container);
    [e.yaw, e.pitch, e.roll] = spec.direction;
    e.baseAddress = spec.baseAddress;
    e.hasClient = spec.hasClient;
    this.#add(e);
    this.#callScript(e, "onCreated");
    return e;
  }

  /** Re-creates an entity from its serialised state: same id, properties and controllers; no onCreated. */
  restoreEntity(state: EntityState): Entity {
    const type = this.host.registry.find(state.type);
    if (!type) throw new Error(`unknown entity type "${state.type}" in the state of entity ${state.id}`);
    if (this.entities.has(state.id)) throw new Error(`entity ${state.id} already exists in space ${this.spaceId}`);
    const pos = { x: state.position[0], y: state.position[1], z: state.position[2] };
    const e = new Entity(state.id, type, this, pos, Entity.containerFrom(type, state));
    [e.yaw, e.pitch, e.roll] = state.direction;
    e.isOnGround = state.isOnGround;
    e.nextControllerId = state.nextControllerId;
    this.#add(e);
    this.restoreControllers(e, state.controllers);
    return e;
  }

  /** Re-creates `e`'s timers, movement and triggers from their serialised form. */
  restoreControllers(e: Entity, controllers: readonly ControllerState[]): void {
    for (const c of controllers) {
      if (c.kind === "timer") this.#pushTimer(e, c.id, this.time + c.dueInMs, c.repeatMs, c.userArg);
      else if (c.kind === "rangeTrigger") this.addScriptTrigger(e, c.id, c.radius, c.userArg);
      else this.startMovement(e, { ...c });
    }
  }

  #add(e: Entity): void {
    // A restored real replaces the frozen ghost of it here (see frozen_ghosts.ts).
    if (this.ghosts.has(e.id)) takeOverFrozenGhost(this, e);
    this.entities.set(e.id, e);
    this.hasHadEntities = true;
    this.rangeList.add(e);
    this.loadMeter.clear(e);
    this.attachScript(e);
  }

  /** Gives `e` an instance of its type's cell script, if it has one. */
  attachScript(e: Entity): void {
    const cls = this.host.scripts[e.type.name];
    if (cls) {
      try {
        e.script = new cls(e);
      } catch (err) {
        this.#scriptFailed(e, "constructor", err);
      }
      if (e.script?.onTick) this.#tickers.add(e);
    }
  }

  /**
   * Destroys a real entity: its script hears onDestroy, its controllers go
   * with it, and its base (if any) is told why unless the base asked.
   */
  destroyEntity(e: Entity, reason = "destroyed by its script", tellBase = true): void {
    if (e.destroyed) return;
    // Being handed over: the new real is destroyed instead, or this one if it stays (handover_fence.ts).
    if (e.offloading) return e.offloading.fence.destroyed(reason, tellBase);
    this.#callScript(e, "onDestroy");
    e.destroyed = true;
    for (const t of e.timers.values()) t.cancelled = true;
    e.timers.clear();
    e.movement = null;
    this.#movers.delete(e);
    this.#tickers.delete(e);
    this.disableWitness(e);
    for (const t of e.triggers.values()) t.remove();
    e.triggers.clear();
    this.borders.dropGhosts(e);
    this.rangeList.remove(e);
    this.entities.delete(e.id);
    if (tellBase && e.baseAddress !== null) this.host.cellEntityDestroyed(e, reason);
    this.#checkForShutDown();
  }

  /** Moves (or teleports) an entity; the range list fires what the move crossed. */
  moveEntity(e: Entity, x: number, y: number, z: number): void {
    if (e.destroyed) throw new Error(`entity ${e.id} is destroyed`);
    if (!withinWorld([x, y, z])) {
      throw new Error(`entity ${e.type.name} ${e.id}: position (${x}, ${y}, ${z}) is not within ±${MAX_COORD} m`);
    }
    e.y = y;
    this.rangeList.move(e, x, z);
  }

  addTimer(e: Entity, initialMs: number, repeatMs: number, userArg: number): number {
    if (!(initialMs >= 0) || !(repeatMs >= 0)) throw new Error(`addTimer: times must be >= 0 (entity ${e.id})`);
    const id = e.nextControllerId++;
    this.#pushTimer(e, id, this.time + initialMs, repeatMs, userArg);
    return id;
  }

  #pushTimer(e: Entity, id: number, due: number, repeatMs: number, userArg: number): void {
    const t: Timer = { ownerId: e.id, id, due, repeatMs, userArg, cancelled: false };
    e.timers.set(id, t);
    this.#timers.push(t);
  }

  /** Starts a movement, replacing the one running (an entity moves one way at a time). */
  startMovement(e: Entity, m: Movement): number {
    if (!(m.speed > 0) || !Number.isFinite(m.speed)) throw new Error(`${m.kind}: speed must be > 0 (entity ${e.id})`);
    e.movement = m;
    this.#movers.add(e);
    return m.id;
  }

  cancelController(e: Entity, id: number): void {
    const t = e.timers.get(id);
    if (t) {
      t.cancelled = true;
      e.timers.delete(id);
      return;
    }
    if (e.movement?.id === id) {
      e.movement = null;
      this.#movers.delete(e);
      return;
    }
    const trig = e.triggers.get(id);
    if (trig) {
      trig.remove();
      e.triggers.delete(id);
    }
  }

  /**
   * The client of `e` enabled entities: `e` gets a witness (seed 000), which
   * writes that client's updates to `sink` each tick.
   */
  enableWitness(e: Entity, sink: (frame: Uint8Array) => void, opts: WitnessOptions = {}): Witness {
    // The base asks for a witness only for a client that has none here: one still here served a client that is
    // gone without a word (its baseapp died), and the client now attached knows nothing of what that one saw.
    witnessOf(e)?.destroy();
    const w = new Witness(e, opts, sink);
    // The client knows only what its base sent at login: give it its own cell properties first.
    const bw = new ByteWriter(64);
    for (const p of e.type.propertiesFor("ownClient")) {
      if (!e.container.holds(p)) continue;
      writeChange(bw.reset(), p, [], e.container.values[p.index], -1, -1, "client");
      w.ownChange(bw.toBytes());
    }
    return w;
  }

  /** The client of `e` went away: the witness goes. */
  disableWitness(e: Entity): void {
    witnessOf(e)?.destroy();
  }

  /** A script's awaitable call of a cell method of another entity; see calls.ts. */
  callEntity(caller: Entity, targetId: number, method: string, args: unknown[]): Promise<unknown> {
    caller.pendingCalls++;
    return runEntityCall(this, targetId, caller.id, method, args).finally(() => caller.pendingCalls--);
  }

  /** A script's awaitable call of a base method of the base of `e`. */
  callBase(e: Entity, method: string, args: unknown[]): Promise<unknown> {
    const bases = this.host.bases;
    if (!bases) return Promise.reject(new Error(`${e.type.name} ${e.id}.base.${method}: this cell reaches no baseapp`));
    return bases.call(e, method, args);
  }

  /** A script asks for a base-only entity; see CellEntityApi.createBaseAnywhere. */
  createBaseAnywhere(typeName: string, props: Record<string, unknown>): Promise<BaseRef> {
    const bases = this.host.bases;
    if (!bases) return Promise.reject(new Error(`createBaseAnywhere ${typeName}: this cell reaches no baseapp`));
    return bases.createBaseAnywhere(typeName, props);
  }

  /** Runs (or forwards) a cell method call on `targetId`; see calls.ts. */
  runEntityCall(targetId: number, callerId: number, method: string, args: unknown[]): Promise<unknown> {
    return runEntityCall(this, targetId, callerId, method, args);
  }

  /** Entities within `radius` of `e` on X/Z, optionally of one type. */
  entitiesInRange(e: Entity, radius: number, typeName?: string): EntityRef[] {
    const filter = typeName ? (o: unknown) => (o as Entity).type.name === typeName : undefined;
    return this.rangeList.entitiesAround(e, radius, filter) as Entity[];
  }

  /** A script range trigger: onEnteredRange/onLeftRange as entities cross the circle of `radius`. */
  addScriptTrigger(e: Entity, id: number, radius: number, userArg: number): number {
    const trigger = this.rangeList.addTrigger(e, radius, {
      onEnter: (other: unknown) => this.#callScript(e, "onEnteredRange", id, other, userArg),
      onLeave: (other: unknown) => this.#callScript(e, "onLeftRange", id, other, userArg),
    }, { shape: "circle", wants: RANGE_FLAG_SCRIPT });
    e.triggers.set(id, { id, radius, userArg, remove: () => trigger.remove() });
    return id;
  }

  /** One tick: timers that are due, movements, then scripts' onTick. */
  tick(dtMs: number): void {
    this.time += dtMs;
    const now = this.time;
    const heap = this.#timers;
    const frozen: Timer[] = [];
    // Each real is charged the CPU of its timers, movement and onTick (cell/load/).
    enterLoop();
    try {
      this.#runControllers(now, dtMs, heap, frozen);
    } finally {
      leaveEntity();
    }
    for (const t of frozen) heap.push(t);
    if (this.host.ghosting && this.time - this.#lastGhostCheck >= this.host.ghosting.config.checkMs) {
      this.#lastGhostCheck = this.time;
      this.borders.checkGhosts();
    }
    this.borders.checkOffloads();
    if (!this.inTree && !this.#removed) this.#checkRetired();
    this.borders.sendBatches();
    updateWitnesses(this);
  }

  /** The due timers, the movements and onTick, each charged to its entity. */
  #runControllers(now: number, dtMs: number, heap: TimerHeap, frozen: Timer[]): void {
    for (let t = heap.peek(); t !== undefined && t.due <= now; t = heap.peek()) {
      heap.pop();
      if (t.cancelled) continue;
      const e = this.entities.get(t.ownerId);
      if (!e) continue;
      if (e.offloading) {
        // Its state went with the transfer; it fires here only if the transfer fails.
        frozen.push(t);
        continue;
      }
      if (t.repeatMs > 0) {
        // One firing per tick at most; a timer that fell behind does not fire in a burst.
        t.due = Math.max(t.due + t.repeatMs, now + 1e-6);
        heap.push(t);
      } else {
        e.timers.delete(t.id);
      }
      switchEntity(e);
      this.#callScript(e, "onTimer", t.id, t.userArg);
    }
    const dt = dtMs / 1000;
    for (const e of this.#movers) {
      if (e.offloading) continue;
      switchEntity(e);
      this.#advance(e, dt);
    }
    for (const e of this.#tickers) {
      switchEntity(e);
      this.#callScript(e, "onTick", dt);
    }
  }

  /** Moves `e` one tick along its movement; no allocation, as it runs per mover per tick. */
  #advance(e: Entity, dt: number): void {
    const m = e.movement;
    if (!m || e.destroyed) {
      this.#movers.delete(e);
      return;
    }
    let tx: number, ty: number, tz: number;
    let range = 0;
    if (m.kind === "moveToPoint") {
      tx = m.dest.x;
      ty = m.dest.y;
      tz = m.dest.z;
    } else {
      // A target in a neighbouring cell is followed through its ghost here.
      const target = this.entities.get(m.targetId) ?? this.ghosts.get(m.targetId);
      if (!target) {
        // The target is gone from this cell's view (destroyed, or beyond the ghost area): the movement ends.
        e.movement = null;
        this.#movers.delete(e);
        return;
      }
      tx = target.x;
      ty = target.y;
      tz = target.z;
      range = m.range;
    }
    const dx = tx - e.x;
    const dz = tz - e.z;
    const dist = Math.sqrt(dx * dx + dz * dz);
    let arrived = dist <= range;
    if (!arrived) {
      // Aim at the point `range` short of the target, on the line towards it.
      const goal = dist - range;
      const step = m.speed * dt;
      arrived = step >= goal;
      const f = arrived ? goal / dist : step / dist;
      if (m.faceMovement) e.yaw = Math.atan2(dx, dz);
      const ny = range === 0 && arrived ? ty : e.y + (ty - e.y) * Math.min(1, f);
      this.moveEntity(e, arrived && range === 0 ? tx : e.x + dx * f, ny, arrived && range === 0 ? tz : e.z + dz * f);
    }
    if (arrived && e.movement === m) {
      e.movement = null;
      this.#movers.delete(e);
      this.#callScript(e, "onMove", m.id, m.userArg);
    }
  }

  /**
   * A cell that left the tree: once it has held no real for RETIRED_LINGER_MS (its offload check hands them all
   * over), it drops the ghosts it holds and goes from its cellapp.
   */
  #checkRetired(): void {
    if (this.entities.size > 0) {
      this.#emptySince = NaN;
      return;
    }
    if (Number.isNaN(this.#emptySince)) this.#emptySince = this.time;
    if (this.time - this.#emptySince < RETIRED_LINGER_MS) return;
    const ghosts = this.ghosts.size;
    for (const ghost of [...this.ghosts.values()]) dropGhost(this, ghost);
    this.host.log.info(
      `space ${this.spaceId} cell ${this.cellId} left the tree and holds no real any more: removed from this ` +
        `cellapp (${ghosts} ghost(s) dropped)`,
    );
    this.#removed = true;
    this.host.cellGone(this.spaceId, this.cellId);
  }

  /** Calls a script callback of `e`, containing (and logging) anything it throws. */
  callScript(e: Entity, name: string, ...args: unknown[]): void {
    this.#callScript(e, name, ...args);
  }

  #callScript(e: Entity, name: string, ...args: unknown[]): void {
    const s = e.script as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined> | null;
    const fn = s?.[name];
    if (!fn || e.destroyed) return;
    // Its state went with its hand-over: the new real has callbacks of its own; this copy hears them if it stays.
    if (e.offloading) return void e.offloading.held.push((moved) => moved || this.#callScript(e, name, ...args));
    const charged = enterEntity(e);
    try {
      const r = fn.apply(s, args);
      // An async callback that fails later is contained too: an unhandled rejection would stop the process.
      if (r instanceof Promise) r.catch((err) => this.#scriptFailed(e, name, err));
    } catch (err) {
      this.#scriptFailed(e, name, err);
    } finally {
      if (charged) leaveEntity();
    }
  }

  /**
   * Runs script method `name` of `e` for a client: what it throws, now or
   * later, goes to `failed` instead of the log, since it answers the client.
   */
  callForClient(e: Entity, name: string, args: unknown[], failed: (err: unknown) => void): void {
    const s = e.script as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined> | null;
    const fn = s?.[name];
    if (!fn || e.destroyed) return;
    const fault = (err: unknown) => {
      this.scriptErrors++;
      failed(err);
    };
    const charged = enterEntity(e);
    try {
      const r = fn.apply(s, args);
      if (r instanceof Promise) r.catch(fault);
    } catch (err) {
      fault(err);
    } finally {
      if (charged) leaveEntity();
    }
  }

  #scriptFailed(e: Entity, where: string, err: unknown): void {
    this.scriptErrors++;
    const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
    this.host.log.error(`script error in ${e.type.name} ${e.id} (space ${this.spaceId}) ${where}: ${msg}`);
  }

  /** A script asks for its space's settings to change (`who` is its entity): the cellappmgr checks and spreads it. */
  async setSpaceSettings(change: SpaceSettings, who: string): Promise<SpaceSettingsView> {
    if (!this.host.setSpaceSettings) throw new Error(`setSpaceSettings by ${who}: this cell has no cellappmgr`);
    // Checked here first, so that nothing the wire check would refuse (and drop the channel for) is sent.
    const unknown = Object.keys(change).filter((k) => k !== "aoiRadius" && k !== "ghostRadius");
    if (unknown.length > 0) throw new Error(`setSpaceSettings by ${who}: no space setting ${unknown.join(", ")}`);
    const own: SpaceSettings = {};
    if (change.aoiRadius !== undefined) own.aoiRadius = change.aoiRadius;
    if (change.ghostRadius !== undefined) own.ghostRadius = change.ghostRadius;
    const bad = spaceSettingsError(`space ${this.spaceId}`, own, spaceSettingsIn(own, spaceSettingsOf(this)));
    if (bad) throw new RangeError(`setSpaceSettings by ${who}: ${bad}`);
    try {
      return await this.host.setSpaceSettings(this.spaceId, own);
    } catch (e) {
      throw new Error(`setSpaceSettings by ${who}: ${(e as Error).message}`);
    }
  }

  /** Asks for this space to shut down (destroySpace, or an emptied single-cell space). */
  requestShutDown(why: string): void {
    if (this.isDefault) throw new Error(`space ${this.spaceId} is the default space, which never shuts down`);
    this.host.requestShutDown(this.spaceId, why);
  }

  /**
   * Asks again for the shutdown of an emptied space, after a report: the cellappmgr refuses while it has not yet
   * heard that the space ever had entities.
   */
  recheckShutDown(): void {
    if (this.#mayShutDown()) this.host.requestShutDown(this.spaceId, "the space is empty");
  }

  #checkForShutDown(): void {
    if (!this.#mayShutDown()) return;
    this.host.log.info(`space ${this.spaceId} is now empty; asking for its shutdown`);
    this.host.requestShutDown(this.spaceId, "the space is empty");
  }

  /** Seed 003's condition: an emptied space with one cell that is not the default space. */
  #mayShutDown(): boolean {
    return this.entities.size === 0 && !this.shuttingDown && !this.isDefault && this.hasHadEntities &&
      this.inTree && this.layout.length === 1;
  }

  /**
   * The cellappmgr shuts the space down (seed 003): acted on after a delay,
   * repeated requests ignored; then every real hears onSpaceGone and is
   * destroyed, and the cell goes.
   */
  shutDown(): void {
    if (this.#shutdownTimer !== undefined) {
      this.host.log.info(`space ${this.spaceId} is already shutting down`);
      return;
    }
    this.shuttingDown = true;
    this.#shutdownTimer = setTimeout(() => this.#onSpaceGone(), SHUTDOWN_DELAY_MS);
  }

  #onSpaceGone(): void {
    for (const e of [...this.entities.values()]) {
      if (e.destroyed) continue;
      this.#callScript(e, "onSpaceGone");
      if (!e.destroyed && e.cell === this) this.destroyEntity(e, `space ${this.spaceId} shut down`);
    }
    this.host.log.info(`space ${this.spaceId}: cell destroyed`);
    this.host.cellGone(this.spaceId, this.cellId);
  }

  /** The periodic ghost check; see CellBorders. */
  checkGhosts(): void {
    this.borders.checkGhosts();
  }

  /** A ghost in cell `cell` lost updates: create it again. */
  resyncGhost(id: number, cell: number): void {
    this.borders.resyncGhost(id, cell);
  }

  /** Makes the ghost here of an offloading real the real. */
  receiveOffload(state: OffloadState): void {
    this.borders.receiveOffload(state);
  }

  /** A ghost's real moved to another cell (as of its `epoch`). */
  realMoved(id: number, to: CellAddress, epoch: number): void {
    this.borders.realMoved(id, to, epoch);
  }

  /** Creates (or refreshes) the ghost of a real of a neighbouring cell. */
  createGhost(state: GhostState): Entity {
    return this.borders.createGhost(state);
  }

  /** Applies a real's batch to its ghost here. */
  receiveGhostSync(id: number, seq: number, ops: GhostOp[]): void {
    this.borders.receiveGhostSync(id, seq, ops);
  }

  /** The real (as of `epoch`; any when not given) no longer needs its ghost here. */
  deleteGhost(id: number, epoch?: number): void {
    this.borders.deleteGhost(id, epoch);
  }

  /** Teleports `e` (see teleport.ts); resolves once it is there. */
  teleport(e: Entity, pos: Vec3, spaceId?: number): Promise<void> {
    return teleport(this, e, pos, spaceId);
  }

  /** A real teleporting here (see teleport.ts). */
  receiveTeleport(state: TeleportState): Entity {
    return receiveTeleport(this, state);
  }

  /** Takes a real that teleported away out of this cell: no onDestroy, no notice to its base. */
  removeTeleported(e: Entity): void {
    this.borders.dropGhosts(e);
    for (const t of e.timers.values()) t.cancelled = true;
    e.timers.clear();
    this.pause(e);
    for (const t of e.triggers.values()) t.remove();
    e.triggers.clear();
    this.rangeList.remove(e);
    this.entities.delete(e.id);
    e.destroyed = true;
    this.#checkForShutDown();
  }

  /** Adds a real that teleported here, with its controllers. */
  addTeleported(e: Entity, controllers: readonly ControllerState[]): void {
    this.#add(e);
    this.restoreControllers(e, controllers);
    this.#callScript(e, "onEnteredCell");
  }

  /** Takes `e` out of the tick while it is handed to another cell. */
  pause(e: Entity): void {
    this.#movers.delete(e);
    this.#tickers.delete(e);
  }

  /** Puts `e` back into the tick after a hand-over failed. */
  resume(e: Entity): void {
    if (e.movement) this.#movers.add(e);
    if (e.script?.onTick) this.#tickers.add(e);
  }

  /** Stops timers of its own (when the cellapp stops). */
  dispose(): void {
    clearTimeout(this.#shutdownTimer);
  }

  /** The entities as the admin API lists them. */
  describe(): EntitySummary[] {
    const out: EntitySummary[] = [];
    for (const e of this.entities.values()) {
      out.push({ id: e.id, type: e.type.name, position: [e.x, e.y, e.z], real: true, cell: this.cellId });
    }
    for (const e of this.ghosts.values()) {
      out.push({ id: e.id, type: e.type.name, position: [e.x, e.y, e.z], real: false, cell: this.cellId });
    }
    return out;
  }

  /** This cell's figures for the load report (sent once a second: it folds the reals' CPU, see cell/load/). */
  report(now = performance.now()): CellReport {
    const { entityLoad, entityBounds } = this.loadMeter.sample(now);
    return {
      spaceId: this.spaceId,
      cellId: this.cellId,
      reals: this.entities.size,
      ghosts: this.ghosts.size,
      tickRate: round(this.stats.rate(now)),
      tickMsP50: round(this.stats.percentile(0.5)),
      tickMsP99: round(this.stats.percentile(0.99)),
      load: Math.min(round(this.stats.load), MAX_LOAD),
      offloadsIn: this.offloadsIn,
      offloadsOut: this.offloadsOut,
      hadEntities: this.hasHadEntities,
      entityLoad,
      entityBounds,
    };
  }
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
