/**
 * A cell: this cellapp's part of one space. It holds the real entities in its rect and the ghosts of its neighbours'
 * on one range list, wires the mechanisms that act on them (controllers, borders, witnesses, shutdown and retirement,
 * each in its own module) and runs them in its tick.
 */
import { seededRandom } from "../core/random.ts";
import type { EntityRef, SpaceInfo, Vec3, WitnessSettings } from "../core/script.ts";
import type { SpaceSettings, SpaceSettingsView } from "../core/space_settings.ts";
import type { CellRect } from "../core/geo/mod.ts";
import { MAX_COORD, pointWithinWorld, type Rect } from "../core/geo/mod.ts";
import type { CellEntitySpec, CellReport, EntitySummary, SpaceGeometry, TeleportState } from "../core/wire/mod.ts";
import { CellBorders, dropGhost, freezeOrphanedGhosts, takeOverFrozenGhost } from "./borders/mod.ts";
import type { CellHost } from "./cell_host.ts";
import { CellControllers } from "./cell_controllers.ts";
import { cellAtPoint, firstCellOf, type GhostArea, placeIn } from "./cell_layout.ts";
import { cellReport, describeEntities } from "./cell_report.ts";
import type { ControllerState, Movement } from "./controllers.ts";
import type { Entity, EntityHost, EntityState, EntityWitness } from "./entity.ts";
import { makeBaseEntity, makeEntity, makeRestoredEntity } from "./entity_make.ts";
import { RangeList } from "./range/mod.ts";
import { TickStats } from "./tick_stats.ts";
import { runEntityCall } from "./calls.ts";
import { receiveTeleport, teleport } from "./teleport.ts";
import { Retirement } from "./retirement.ts";
import { attachScript, callForClient, callScript } from "./script_calls.ts";
import { SpaceShutdown } from "./shutdown.ts";
import { changeSpaceSettings } from "./space_settings_change.ts";
import {
  applySpaceSettings,
  enableWitness,
  setWitnessSettings,
  spaceSettingsOf,
  updateWitnesses,
  type Witness,
  witnessOf,
  type WitnessOptions,
  witnessSettingsOf,
} from "./witness/mod.ts";
import { createEntityAt } from "./create_entity.ts";
import { spaceInfoOf, type SpaceView } from "./space_view.ts";
import { CellLoadMeter } from "./load/cell_load.ts";
import type { BaseRef } from "../core/base_script.ts";
import { history } from "../core/history.ts";
import { errorText } from "../core/errors.ts";
import type { SpaceNavMesh } from "./nav/mod.ts";

/** A cell of a space on this cellapp. */
export class Cell implements EntityHost {
  readonly entities: Map<number, Entity> = new Map();
  /** Ghosts it keeps elsewhere and holds here, and offloading: the cellapp hands it its ghost and offload messages. */
  readonly borders: CellBorders = new CellBorders(this);
  /** Ghosts of reals in neighbouring cells, by id. */
  readonly ghosts: Map<number, Entity> = new Map();
  /** The witnesses of its reals (cell/witness/): each adds itself, and takes itself out when it ends. */
  readonly witnesses: Set<EntityWitness> = new Set();
  /** The space's AoI defaults for witnesses created here (configureSpaceAoI, applySpaceSettings). */
  aoiOptions: WitnessOptions = {};
  /** Its space as scripts see it, and the geometry and rect it was made from (space_view.ts). */
  spaceView: SpaceView | null = null;
  /** Cell time of the last periodic ghost check. */
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
  ghostAreas: GhostArea[] = [];
  /** The space's ghost radius in force (its own, else the cellapp's); Infinity on a cellapp that keeps no ghosts. */
  ghostRadius = Infinity;
  hasHadEntities = false;
  /** Whether the space's tree has this cell; one that left it hands its reals over, then goes (retirement.ts). */
  inTree = true;
  /** The reals' CPU and where it lies, for the load report (cell/load/). */
  readonly loadMeter: CellLoadMeter;
  /** Reals that moved here from another cell, and away, so far. */
  offloadsIn = 0;
  offloadsOut = 0;
  /** Resyncs its ghosts asked their reals for, so far (each a lost ghost update). */
  ghostResyncs = 0;
  /** Script exceptions caught (and logged) so far. */
  scriptErrors = 0;
  readonly #controllers: CellControllers = new CellControllers(this);
  readonly #shutdown: SpaceShutdown = new SpaceShutdown(this);
  readonly #retirement: Retirement = new Retirement();
  #rng: () => number;

  /** The cell's id within its space (a leaf of the tree). */
  readonly cellId: number;

  /** A cell of `geometry`'s space on cellapp `cellappId`: the leaf `cellId`, or that cellapp's first leaf. */
  constructor(readonly host: CellHost, geometry: SpaceGeometry, readonly cellappId: number, cellId?: number) {
    this.geometry = geometry;
    this.cellId = cellId ?? firstCellOf(geometry, cellappId);
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

  /** Whether the cellappmgr has shut the space down (see shutdown.ts). */
  get shuttingDown(): boolean {
    return this.#shutdown.started;
  }

  /**
   * Takes a new tree; this cell's rect is its leaf's (empty when the tree no longer has it). What follows from the
   * tree is worked out here, once, not by the checks that run every tick or every second.
   */
  updateGeometry(g: SpaceGeometry): void {
    const radius = g.ghostRadius ?? this.host.ghosting.config.ghostRadius;
    const { layout, mine, ghostAreas } = placeIn(g, this.cellId, this.cellappId, radius);
    this.geometry = g;
    this.layout = layout;
    this.ghostAreas = ghostAreas;
    this.ghostRadius = radius;
    this.rect = mine ? mine.rect : { minX: 0, minZ: 0, maxX: 0, maxZ: 0 };
    if (this.inTree && !mine) {
      this.host.log.info(
        `space ${g.spaceId} cell ${this.cellId} left the space's tree: handing its ${this.entities.size} real(s) ` +
          `over, then it goes`,
      );
    }
    this.inTree = mine !== undefined;
    // Not reset while it stays out: the balancer sends a new tree every period, which must not keep it lingering.
    if (mine) this.#retirement.inTree();
    freezeOrphanedGhosts(this);
    applySpaceSettings(this, g.aoiRadius ?? undefined);
  }

  /** The cell of this space containing (x, z), with its cellapp's address when known. */
  cellAt(x: number, z: number): { cell: CellRect; address: string | undefined } {
    return cellAtPoint(this.geometry, this.layout, x, z);
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
    const e = makeEntity(this, typeName, pos, props, dir, id);
    this.#add(e);
    callScript(this, e, "onCreated");
    return e;
  }

  /** Creates the cell part of a base entity: its id, initial cell properties (defaults when none) and address. */
  createBaseEntity(spec: CellEntitySpec): Entity {
    const e = makeBaseEntity(this, spec);
    this.#add(e);
    callScript(this, e, "onCreated");
    return e;
  }

  /** Re-creates an entity from its serialised state: same id, properties and controllers; no onCreated. */
  restoreEntity(state: EntityState): Entity {
    const e = makeRestoredEntity(this, state);
    this.#add(e);
    this.restoreControllers(e, state.controllers);
    return e;
  }

  /** Re-creates `e`'s timers, movement and triggers from their serialised form. */
  restoreControllers(e: Entity, controllers: readonly ControllerState[]): void {
    this.#controllers.restore(e, controllers);
  }

  #add(e: Entity): void {
    // A restored real replaces the frozen ghost of it here (see frozen_ghosts.ts).
    if (this.ghosts.has(e.id)) takeOverFrozenGhost(this, e);
    this.entities.set(e.id, e);
    history.real(e.id, this.spaceId, this.cellId, e.epoch);
    this.hasHadEntities = true;
    this.rangeList.add(e);
    this.loadMeter.clear(e);
    this.attachScript(e);
  }

  /** Gives `e` an instance of its type's cell script, if it has one, and its onTick a place in the tick. */
  attachScript(e: Entity): void {
    attachScript(this, e);
    this.#controllers.tickScript(e);
  }

  /**
   * After a game reload (game_swap.ts): the script of real `e` takes its type's new class, keeping the instance and
   * the state on it; a type that gained a script gets one, one that lost it has none.
   */
  rebindScript(e: Entity): void {
    const cls = this.host.scripts[e.type.name];
    if (!cls) e.script = null;
    else if (e.script) Object.setPrototypeOf(e.script, cls.prototype);
    else attachScript(this, e);
    if (!e.offloading && !e.teleporting) this.#controllers.tickScript(e);
  }

  /**
   * Destroys a real entity: its script hears onDestroy, its controllers go
   * with it, and its base (if any) is told why unless the base asked.
   */
  destroyEntity(e: Entity, reason = "destroyed by its script", tellBase = true): void {
    if (e.destroyed) return;
    // Being handed over: the new real is destroyed instead, or this one if it stays (handover_fence.ts).
    if (e.offloading) return e.offloading.fence.destroyed(reason, tellBase);
    callScript(this, e, "onDestroy");
    e.destroyed = true;
    this.#controllers.cancelTimers(e);
    e.movement = null;
    this.#controllers.pause(e);
    this.disableWitness(e);
    this.#controllers.removeTriggers(e);
    this.borders.dropGhosts(e);
    this.rangeList.remove(e);
    this.entities.delete(e.id);
    history.unreal(e.id, "destroyed");
    if (tellBase && e.baseAddress !== null) this.host.cellEntityDestroyed(e, reason);
    this.#shutdown.realLeft();
  }

  /** Moves (or teleports) an entity; the range list fires what the move crossed. */
  moveEntity(e: Entity, x: number, y: number, z: number): void {
    if (e.destroyed) throw new Error(`entity ${e.id} is destroyed`);
    if (!pointWithinWorld(x, y, z)) {
      throw new Error(`entity ${e.type.name} ${e.id}: position (${x}, ${y}, ${z}) is not within ±${MAX_COORD} m`);
    }
    e.y = y;
    this.rangeList.move(e, x, z);
  }

  /** A timer of `e` (see CellControllers.addTimer). */
  addTimer(e: Entity, initialMs: number, repeatMs: number, userArg: number): number {
    return this.#controllers.addTimer(e, initialMs, repeatMs, userArg);
  }

  /** Starts a movement, replacing the one running (an entity moves one way at a time). */
  startMovement(e: Entity, m: Movement): number {
    return this.#controllers.startMovement(e, m);
  }

  navMesh(call: string): SpaceNavMesh {
    const geometry = this.geometry.navGeometry;
    if (!geometry) throw new Error(`${call}: space ${this.spaceId} has no navigation geometry`);
    let mesh: SpaceNavMesh | undefined;
    try {
      mesh = this.host.navMeshes.get(geometry);
    } catch (e) {
      throw new Error(`${call}: the navigation mesh of space ${this.spaceId} failed: ${errorText(e)}`, { cause: e });
    }
    if (!mesh) throw new Error(`${call}: the navigation mesh of space ${this.spaceId} (${geometry}) is not made yet`);
    return mesh;
  }

  /** Cancels a timer, movement or range trigger of `e`. */
  cancelController(e: Entity, id: number): void {
    this.#controllers.cancel(e, id);
  }

  /** The client of `e` enabled entities: `e` gets a witness, which writes that client's updates to `sink` each tick. */
  enableWitness(e: Entity, sink: (frame: Uint8Array) => void, opts: WitnessOptions = {}): Witness {
    return enableWitness(e, sink, opts);
  }

  /** The client of `e` went away: the witness goes. */
  disableWitness(e: Entity): void {
    witnessOf(e)?.destroy();
  }

  /** The game adds entity `id` to the AoI of `e`'s witness, if it has one. */
  addToAoI(e: Entity, id: number): void {
    const o = this.entities.get(id);
    if (o) witnessOf(e)?.addToAoI(o);
  }

  /** The game takes entity `id` out of the AoI of `e`'s witness, if it has one. */
  removeFromAoI(e: Entity, id: number): void {
    const o = this.entities.get(id);
    if (o) witnessOf(e)?.removeFromAoI(o);
  }

  /** The settings of `e`'s witness in force; null without a witness. */
  witnessSettings(e: Entity): WitnessSettings | null {
    const w = witnessOf(e);
    return w ? witnessSettingsOf(w) : null;
  }

  /** A script changes the settings of its entity's witness (`call` names the API it used, for the error). */
  setWitnessSettings(e: Entity, change: Partial<WitnessSettings>, call: string): void {
    const w = witnessOf(e);
    if (!w) {
      throw new Error(`${call}: ${e.type.name} ${e.id} has no witness (no client attached); call it from onGetWitness`);
    }
    setWitnessSettings(w, change, call);
  }

  /** Drops the ghosts of real `e`; the next ghost check makes them again (naming its base as it is then). */
  dropGhosts(e: Entity): void {
    this.borders.dropGhosts(e);
  }

  /** A script's awaitable call of a cell method of another entity; see calls.ts. */
  callEntity(caller: Entity, targetId: number, method: string, args: unknown[]): Promise<unknown> {
    caller.pendingCalls++;
    return runEntityCall(this, targetId, caller.id, method, args).finally(() => caller.pendingCalls--);
  }

  /** A script's awaitable call of a base method of the base of `e`. */
  callBase(e: Entity, method: string, args: unknown[]): Promise<unknown> {
    return this.host.bases.call(e, method, args);
  }

  /** A script asks for a base-only entity; see CellEntityApi.createBaseAnywhere. */
  createBaseAnywhere(typeName: string, props: Record<string, unknown>): Promise<BaseRef> {
    return this.host.bases.createBaseAnywhere(typeName, props);
  }

  /** A script's direct message to the client of player `id`, which must be real or a ghost here. */
  clientMessage(id: number, method: string, args: unknown[]): Promise<void> {
    const player = this.entities.get(id) ?? this.ghosts.get(id);
    if (!player || player.destroyed) {
      return Promise.reject(
        new Error(`clientOf(${id}).${method}: no entity ${id} in cell ${this.cellId} of space ${this.spaceId}`),
      );
    }
    return this.host.bases.clientMessage(player, method, args);
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
    return this.#controllers.addScriptTrigger(e, id, radius, userArg);
  }

  /**
   * One tick: timers that are due, movements, then scripts' onTick; the ghost check when due, offloads, a departed
   * cell's going, ghost batches, then the witnesses.
   */
  tick(dtMs: number): void {
    this.time += dtMs;
    this.#controllers.run(this.time, dtMs);
    if (this.time - this.#lastGhostCheck >= this.host.ghosting.config.checkMs) {
      this.#lastGhostCheck = this.time;
      this.borders.checkGhosts();
    }
    this.borders.checkOffloads();
    if (!this.inTree && this.#retirement.due(this.entities.size, this.time)) this.#retire();
    this.borders.sendBatches();
    updateWitnesses(this);
  }

  /** A cell that left the tree and held no real for long enough drops the ghosts it holds and goes from its cellapp. */
  #retire(): void {
    const ghosts = this.ghosts.size;
    for (const ghost of [...this.ghosts.values()]) dropGhost(this, ghost);
    this.host.log.info(
      `space ${this.spaceId} cell ${this.cellId} left the tree and holds no real any more: removed from this ` +
        `cellapp (${ghosts} ghost(s) dropped)`,
    );
    this.host.cellGone(this.spaceId, this.cellId);
  }

  /** Calls a script callback of `e`, containing (and logging) anything it throws. */
  callScript(e: Entity, name: string, ...args: unknown[]): void {
    callScript(this, e, name, ...args);
  }

  /**
   * Runs script method `name` of `e` for a client: what it throws, now or
   * later, goes to `failed` instead of the log, since it answers the client.
   */
  callForClient(e: Entity, name: string, args: unknown[], failed: (err: unknown) => void): void {
    callForClient(this, e, name, args, failed);
  }

  /** The settings of the space in force, as this cell has them. */
  get spaceSettings(): SpaceSettingsView {
    return spaceSettingsOf(this);
  }

  /** The space as scripts see it (see space_view.ts). */
  get spaceInfo(): SpaceInfo {
    return spaceInfoOf(this);
  }

  /** A script creates an entity at a point, here or in another cell or space; see create_entity.ts. */
  createEntityAt(typeName: string, pos: Vec3, props: Record<string, unknown>, spaceId?: number): number {
    return createEntityAt(this, typeName, pos, props, spaceId);
  }

  /** A script asks for its space's settings to change (`who` is its entity): the cellappmgr checks and spreads it. */
  setSpaceSettings(change: SpaceSettings, who: string): Promise<SpaceSettingsView> {
    return changeSpaceSettings(this, change, who);
  }

  /** Asks for this space to shut down (destroySpace, or an emptied single-cell space). */
  requestShutDown(why: string): void {
    this.#shutdown.request(why);
  }

  /** Asks again for the shutdown of an emptied space, after a report (see SpaceShutdown.recheck). */
  recheckShutDown(): void {
    this.#shutdown.recheck();
  }

  /** The cellappmgr shuts the space down: every real hears onSpaceGone and is destroyed, the cell goes. */
  shutDown(): void {
    this.#shutdown.start();
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
    this.#controllers.cancelTimers(e);
    this.#controllers.pause(e);
    this.#controllers.removeTriggers(e);
    this.rangeList.remove(e);
    this.entities.delete(e.id);
    history.unreal(e.id, "teleported");
    e.destroyed = true;
    this.#shutdown.realLeft();
  }

  /** Adds a real that teleported here, with its controllers. */
  addTeleported(e: Entity, controllers: readonly ControllerState[]): void {
    this.#add(e);
    this.restoreControllers(e, controllers);
    callScript(this, e, "onEnteredCell");
  }

  /** Takes `e` out of the tick while it is handed to another cell. */
  pause(e: Entity): void {
    history.unreal(e.id, "handing over");
    this.#controllers.pause(e);
  }

  /** Puts `e` back into the tick after a hand-over failed. */
  resume(e: Entity): void {
    history.real(e.id, this.spaceId, this.cellId, e.epoch);
    this.#controllers.resume(e);
  }

  /** Stops timers of its own (when the cellapp stops). */
  dispose(): void {
    this.#shutdown.dispose();
  }

  /** The entities as the admin API lists them. */
  describe(): EntitySummary[] {
    return describeEntities(this);
  }

  /** This cell's figures for the load report (sent once a second: it folds the reals' CPU, see cell/load/). */
  report(now = performance.now()): CellReport {
    return cellReport(this, now);
  }
}
