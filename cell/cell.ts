/**
 * A cell: this cellapp's part of one space. It holds the real entities in its
 * rect, their range list, timers and movements, runs their scripts each tick,
 * and follows seed 003's shutdown flow.
 */
import {
  ByteReader,
  ByteWriter,
  decodeCellBackup,
  type EntityRegistry,
  PropertyContainer,
  writeChange,
} from "../core/def/mod.ts";
import type { Logger } from "../core/log.ts";
import type { CellScriptClass, EntityRef, Vec3 } from "../core/script.ts";
import { cellIndexAt, cellRects } from "../core/geo/bsp.ts";
import { type Rect, rectDistanceOutside, rectFromArray } from "../core/geo/rect.ts";
import { becomeGhost, becomeReal, offloadStateOf } from "./offload.ts";
import {
  type CellEntitySpec,
  CellMsg,
  type CellReport,
  type EntitySummary,
  type GhostOp,
  type GhostState,
  type MessageDef,
  type OffloadState,
  type SpaceGeometry,
  type WitnessState,
} from "../core/wire/mod.ts";
import {
  type GhostConfig,
  GhostInfo,
  ghostingOf,
  type GhostLink,
  ghostStateOf,
  loadGhostState,
  receiveBatch,
  takeBatch,
  wantedGhosts,
} from "./ghosts.ts";
import { type ControllerState, type Movement, type Timer, TimerHeap } from "./controllers.ts";
import { Entity, type EntityState } from "./entity.ts";
import { RangeList } from "./range_list.ts";
import { RANGE_FLAG_SCRIPT } from "./range_node.ts";
import { TickStats } from "./tick_stats.ts";
import { updateWitnesses, Witness, witnessOf, type WitnessOptions } from "./witness.ts";

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
  /** The cell has finished shutting down and can be dropped. */
  cellGone(spaceId: number): void;
  /** Tells the base of `e` that its cell entity is gone. */
  cellEntityDestroyed(e: Entity, reason: string): void;
  /**
   * Tells the base of `e` that its cell entity now lives on the cellapp at `address`, as epoch `e.epoch + 1`
   * (sent after this cellapp's last frame for its client).
   */
  cellEntityMoved?(e: Entity, address: string): void;
  /** Where a witness restored here sends its client's frames (through the entity's base); none without a base. */
  clientSink?(e: Entity): ((frame: Uint8Array) => void) | undefined;
  budgetMs: number;
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

/** A cell of a space on this cellapp. */
export class Cell {
  readonly entities: Map<number, Entity> = new Map();
  /** Ghosts of reals in neighbouring cells, by id. */
  readonly ghosts: Map<number, Entity> = new Map();
  /** Reals that have at least one ghost. */
  readonly #ghosted = new Set<Entity>();
  #lastGhostCheck = -Infinity;
  readonly rangeList: RangeList = new RangeList();
  readonly stats: TickStats;
  /** Game time in ms: the sum of tick steps since the cell was created. */
  time = 0;
  geometry: SpaceGeometry;
  rect!: Rect;
  hasHadEntities = false;
  shuttingDown = false;
  /** Reals that moved here from another cell, and away, so far. */
  offloadsIn = 0;
  offloadsOut = 0;
  /** Script exceptions caught (and logged) so far. */
  scriptErrors = 0;
  #timers = new TimerHeap();
  #movers = new Set<Entity>();
  #tickers = new Set<Entity>();
  #rng: () => number;
  #shutdownTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly host: CellHost, geometry: SpaceGeometry, readonly cellappId: number) {
    this.geometry = geometry;
    this.updateGeometry(geometry);
    this.stats = new TickStats(host.budgetMs);
    this.#rng = mulberry32(geometry.spaceId * 2654435761);
  }

  get spaceId(): number {
    return this.geometry.spaceId;
  }

  get isDefault(): boolean {
    return this.geometry.isDefault;
  }

  /** Takes a new tree; this cell's rect is the leaf of this cellapp. */
  updateGeometry(g: SpaceGeometry): void {
    this.geometry = g;
    const bounds = rectFromArray(g.bounds);
    const mine = cellRects(g.tree, bounds).find((c) => c.cellapp === this.cellappId);
    this.rect = mine ? mine.rect : { minX: 0, minZ: 0, maxX: 0, maxZ: 0 };
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
  ): Entity {
    if (this.shuttingDown) throw new Error(`space ${this.spaceId} is shutting down; cannot create ${typeName}`);
    const type = this.host.registry.find(typeName);
    if (!type) throw new Error(`unknown entity type "${typeName}"`);
    if (!type.hasCell) throw new Error(`entity type ${typeName} has no cell part`);
    const e = new Entity(this.host.newEntityId(), type, this, pos);
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
    this.#restoreControllers(e, state.controllers);
    return e;
  }

  #restoreControllers(e: Entity, controllers: readonly ControllerState[]): void {
    for (const c of controllers) {
      if (c.kind === "timer") this.#pushTimer(e, c.id, this.time + c.dueInMs, c.repeatMs, c.userArg);
      else if (c.kind === "rangeTrigger") this.addScriptTrigger(e, c.id, c.radius, c.userArg);
      else this.startMovement(e, { ...c });
    }
  }

  #add(e: Entity): void {
    this.entities.set(e.id, e);
    this.hasHadEntities = true;
    this.rangeList.add(e);
    this.#attachScript(e);
  }

  #attachScript(e: Entity): void {
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
    this.#dropGhosts(e);
    this.rangeList.remove(e);
    this.entities.delete(e.id);
    if (tellBase && e.baseAddress !== null) this.host.cellEntityDestroyed(e, reason);
    this.#checkForShutDown();
  }

  /** Moves (or teleports) an entity; the range list fires what the move crossed. */
  moveEntity(e: Entity, x: number, y: number, z: number): void {
    if (e.destroyed) throw new Error(`entity ${e.id} is destroyed`);
    if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
      throw new Error(`entity ${e.type.name} ${e.id}: position (${x}, ${y}, ${z}) is not finite`);
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
    const existing = witnessOf(e);
    if (existing) return existing;
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

  /**
   * A client's call of an exposed cell method of `target`, made through the
   * proxy of `callerId`: checked against the definition, arguments decoded by
   * their declared types, and the caller's id passed first (BigWorld's hidden
   * argument). A bad call throws, naming the entity and the method.
   */
  clientCall(callerId: number, target: Entity, index: number, args: Uint8Array): void {
    const m = target.type.methods("cell")[index];
    const who = `${target.type.name} ${target.id}`;
    if (!m) throw new Error(`${who} has no cell method with index ${index}`);
    if (!m.exposed) throw new Error(`${who}.${m.name} is not exposed to clients`);
    const r = new ByteReader(args);
    const values: unknown[] = [];
    try {
      for (const a of m.args) values.push(a.type.read(r));
    } catch (e) {
      throw new Error(
        `${who}.${m.name}: arguments do not match (${m.args.map((a) => a.type.name).join(", ")}): ${
          (e as Error).message
        }`,
      );
    }
    if (r.remaining > 0) throw new Error(`${who}.${m.name}: ${r.remaining} bytes left after the declared arguments`);
    this.#callScript(target, m.name, callerId, ...values);
  }

  /**
   * A script's call of a cell method of entity `targetId` (seed 002's
   * forwarding, made awaitable): run here when the real is here, sent on to
   * the real's cell when only its ghost is.
   */
  callEntity(caller: Entity, targetId: number, method: string, args: unknown[]): Promise<unknown> {
    caller.pendingCalls++;
    const done = () => caller.pendingCalls--;
    return this.runEntityCall(targetId, caller.id, method, args).finally(done);
  }

  /** Runs (or forwards) a cell method call on `targetId`; see callEntity. */
  async runEntityCall(targetId: number, callerId: number, method: string, args: unknown[]): Promise<unknown> {
    const target = this.entities.get(targetId);
    if (target?.offloading) {
      const moved = await new Promise<string | null>((r) => target.offloading!.held.push(r));
      if (moved) return await this.#forwardCall(moved, targetId, callerId, method, args);
    }
    if (target && !target.destroyed) return await this.#invoke(target, callerId, method, args);
    const ghost = this.ghosts.get(targetId);
    if (ghost) return await this.#forwardCall(ghost.ghostInfo!.realAddress, targetId, callerId, method, args);
    throw new Error(`${method} on entity ${targetId}: no such entity in space ${this.spaceId} (destroyed or gone)`);
  }

  #forwardCall(address: string, targetId: number, callerId: number, method: string, args: unknown[]): Promise<unknown> {
    const gh = this.host.ghosting;
    if (!gh) {
      throw new Error(`${method} on entity ${targetId}: its real is on another cellapp, which this cell cannot reach`);
    }
    return gh.ask(address, gh.config.callTimeoutMs, CellMsg.entityCall, this.spaceId, targetId, callerId, method, args);
  }

  async #invoke(target: Entity, callerId: number, method: string, args: unknown[]): Promise<unknown> {
    const m = target.type.findMethod("cell", method);
    const who = `${target.type.name} ${target.id}`;
    if (!m) throw new Error(`${who} has no cell method '${method}'`);
    if (args.length !== m.args.length) {
      throw new Error(`${who}.${method} takes ${m.args.length} arguments, got ${args.length}`);
    }
    const values = args.map((v, i) => {
      try {
        return m.args[i].type.coerce(v);
      } catch (e) {
        throw new Error(`${who}.${method} argument ${i}: ${(e as Error).message}`);
      }
    });
    const fn = (target.script as unknown as Record<string, unknown> | null)?.[method];
    if (typeof fn !== "function") throw new Error(`${who} has no script for its cell method '${method}'`);
    return await (fn as (...a: unknown[]) => unknown).call(target.script, callerId, ...values);
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
      this.#callScript(e, "onTimer", t.id, t.userArg);
    }
    for (const t of frozen) heap.push(t);
    const dt = dtMs / 1000;
    for (const e of this.#movers) if (!e.offloading) this.#advance(e, dt);
    for (const e of this.#tickers) this.#callScript(e, "onTick", dt);
    if (this.host.ghosting && this.time - this.#lastGhostCheck >= this.host.ghosting.config.checkMs) {
      this.#lastGhostCheck = this.time;
      this.checkGhosts();
    }
    this.#checkOffloads();
    this.#sendGhostBatches();
    updateWitnesses(this);
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
      const target = this.entities.get(m.targetId);
      if (!target) {
        // The target is gone from this cell: the movement ends without arriving.
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

  /** Calls a script callback of `e`, containing (and logging) anything it throws. */
  callScript(e: Entity, name: string, ...args: unknown[]): void {
    this.#callScript(e, name, ...args);
  }

  #callScript(e: Entity, name: string, ...args: unknown[]): void {
    const s = e.script as unknown as Record<string, ((...a: unknown[]) => void) | undefined> | null;
    const fn = s?.[name];
    if (!fn || e.destroyed) return;
    try {
      fn.apply(s, args);
    } catch (err) {
      this.#scriptFailed(e, name, err);
    }
  }

  #scriptFailed(e: Entity, where: string, err: unknown): void {
    this.scriptErrors++;
    const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
    this.host.log.error(`script error in ${e.type.name} ${e.id} (space ${this.spaceId}) ${where}: ${msg}`);
  }

  /** Asks for this space to shut down (destroySpace, or an emptied single-cell space). */
  requestShutDown(why: string): void {
    if (this.isDefault) throw new Error(`space ${this.spaceId} is the default space, which never shuts down`);
    this.host.requestShutDown(this.spaceId, why);
  }

  #checkForShutDown(): void {
    if (this.entities.size > 0 || this.shuttingDown || this.isDefault || !this.hasHadEntities) return;
    if (cellRects(this.geometry.tree, rectFromArray(this.geometry.bounds)).length !== 1) return;
    this.host.log.info(`space ${this.spaceId} is now empty; asking for its shutdown`);
    this.host.requestShutDown(this.spaceId, "the space is empty");
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
    this.host.cellGone(this.spaceId);
  }

  /**
   * The periodic ghost check (seed 002's check_ghost_create_destroy): each
   * real gets a ghost in every neighbour cell whose rect grown by the ghost
   * radius contains it, and loses ghosts outside that area once they lived
   * the minimum time; creations per pass are capped, unanswered ones retried.
   */
  checkGhosts(): void {
    const gh = this.host.ghosting;
    if (!gh) return;
    const cfg = gh.config;
    const now = this.time;
    let created = 0;
    for (const e of this.entities.values()) {
      const wanted = wantedGhosts(e, cfg.ghostRadius);
      const g = e.ghosting;
      if (g) {
        for (const [cellapp, link] of g.links) {
          const stale = link.state === "creating" && now - link.since > cfg.createTimeoutMs;
          const unwanted = !wanted.has(cellapp) && link.state === "live" && now - link.since >= cfg.minLifetimeMs;
          if (stale || unwanted || (link.address !== wanted.get(cellapp) && wanted.has(cellapp))) {
            g.links.delete(cellapp);
            this.host.ghosting!.send(link.address, CellMsg.deleteGhost, this.spaceId, e.id);
          }
        }
        if (g.links.size === 0) this.#ghosted.delete(e);
      }
      for (const [cellapp, address] of wanted) {
        if (e.ghosting?.links.has(cellapp) || created >= cfg.maxCreatesPerPass) continue;
        created++;
        this.#createGhostAt(e, cellapp, address);
      }
    }
  }

  #createGhostAt(e: Entity, cellapp: number, address: string): void {
    const g = ghostingOf(e);
    // Batches still queued this tick were not in the state: send them first, numbered, to the existing ghosts.
    this.#sendBatch(e);
    const link: GhostLink = { cellapp, address, state: "creating", since: this.time };
    g.links.set(cellapp, link);
    this.#ghosted.add(e);
    const state = ghostStateOf(e, this.cellappId, this.host.ghosting!.address);
    this.host.ghosting!.ask(address, this.host.ghosting!.config.createTimeoutMs, CellMsg.createGhost, state).then(
      () => {
        if (g.links.get(cellapp) === link) {
          link.state = "live";
          link.since = this.time;
        }
      },
      (err) => {
        if (g.links.get(cellapp) === link) g.links.delete(cellapp);
        this.host.log.warn(
          `ghost of ${e.type.name} ${e.id} on cellapp ${cellapp} not created: ${(err as Error).message}`,
        );
      },
    );
  }

  /** A ghost elsewhere lost updates: create it again. */
  resyncGhost(id: number, cellapp: number): void {
    const e = this.entities.get(id);
    const link = e?.ghosting?.links.get(cellapp);
    if (!e || !link) return;
    e.ghosting!.links.delete(cellapp);
    this.#createGhostAt(e, cellapp, link.address);
  }

  #sendGhostBatches(): void {
    for (const e of this.#ghosted) this.#sendBatch(e);
  }

  #sendBatch(e: Entity): void {
    const ops = takeBatch(e);
    if (!ops) return;
    const seq = e.ghosting!.seq;
    for (const link of e.ghosting!.links.values()) {
      this.host.ghosting!.send(link.address, CellMsg.ghostSync, this.spaceId, e.id, seq, ops);
    }
  }

  #dropGhosts(e: Entity): void {
    const g = e.ghosting;
    if (!g) return;
    for (const link of g.links.values()) {
      this.host.ghosting!.send(link.address, CellMsg.deleteGhost, this.spaceId, e.id);
    }
    g.links.clear();
    this.#ghosted.delete(e);
  }

  /**
   * Seed 004's offload check, every tick: a real more than the hysteresis
   * outside this cell's rect moves to the cell containing it, provided that
   * cell already holds its ghost (the ghost check sees to that).
   */
  #checkOffloads(): void {
    const gh = this.host.ghosting;
    if (!gh) return;
    const cells = cellRects(this.geometry.tree, rectFromArray(this.geometry.bounds));
    for (const e of this.entities.values()) {
      // A JavaScript continuation cannot move between processes: an entity awaiting answers stays until they settle.
      if (e.offloading || e.destroyed || e.offloadRetryAt > this.time || e.pendingCalls > 0) continue;
      if (rectDistanceOutside(this.rect, e.x, e.z) <= gh.config.offloadHysteresis) continue;
      const target = cells[cellIndexAt(this.geometry.tree, e.x, e.z)];
      const link = target && e.ghosting?.links.get(target.cellapp);
      if (link?.state === "live") this.#offload(e, link);
    }
  }

  #offload(e: Entity, link: GhostLink): void {
    const gh = this.host.ghosting!;
    this.#sendBatch(e); // everything before the hand-over reaches every ghost first
    // Its client gets this tick's frame from here; the witness's state travels from that point on.
    witnessOf(e)?.update();
    e.offloading = { cellapp: link.cellapp, address: link.address, held: [] };
    this.#callScript(e, "onLeavingCell");
    const state = offloadStateOf(e, this.cellappId, gh.address, this.time);
    gh.ask(link.address, gh.config.offloadTimeoutMs, CellMsg.offload, state).then(
      () => this.#offloaded(e, link),
      (err) => this.#offloadFailed(e, link, err as Error),
    );
  }

  #offloaded(e: Entity, link: GhostLink): void {
    const held = e.offloading!.held;
    e.offloading = null;
    this.offloadsOut++;
    const gh = this.host.ghosting!;
    const others = [...e.ghosting!.links.values()].filter((l) => l.cellapp !== link.cellapp);
    const seq = e.ghosting!.seq;
    this.entities.delete(e.id);
    this.#ghosted.delete(e);
    this.#movers.delete(e);
    this.#tickers.delete(e);
    // Its witness went along (the new cell restored it): it ends here without a word to the client.
    witnessOf(e)?.handOver();
    becomeGhost(e, link.cellapp, link.address, seq);
    this.ghosts.set(e.id, e);
    for (const l of others) gh.send(l.address, CellMsg.realMoved, this.spaceId, e.id, link.cellapp, link.address);
    if (e.baseAddress !== null) this.host.cellEntityMoved?.(e, link.address);
    for (const run of held) run(link.address);
  }

  #offloadFailed(e: Entity, link: GhostLink, err: Error): void {
    const held = e.offloading!.held;
    e.offloading = null;
    this.host.log.warn(
      `${e.type.name} ${e.id} stays real in space ${this.spaceId}: offload to cellapp ${link.cellapp} failed: ${err.message}`,
    );
    // A ghost that cannot take over is recreated by the next ghost check, if its cellapp is still there.
    e.ghosting?.links.delete(link.cellapp);
    e.offloadRetryAt = this.time + this.host.ghosting!.config.checkMs;
    if (e.movement) this.#movers.add(e);
    if (e.script?.onTick) this.#tickers.add(e);
    this.#callScript(e, "onStayedInCell");
    for (const run of held) run(null);
  }

  /** Makes the ghost here of an offloading real the real (seed 002's migrate_in). */
  receiveOffload(state: OffloadState): void {
    const id = state.entity.id;
    const ghost = this.ghosts.get(id);
    if (!ghost) throw new Error(`space ${this.spaceId} holds no ghost of entity ${id} here to make real`);
    this.ghosts.delete(id);
    becomeReal(ghost, state, this.cellappId);
    const [x, y, z] = state.entity.position;
    [ghost.yaw, ghost.pitch, ghost.roll] = state.entity.direction;
    ghost.isOnGround = state.entity.isOnGround;
    ghost.y = y;
    this.rangeList.move(ghost, x, z);
    this.entities.set(id, ghost);
    this.hasHadEntities = true;
    this.#ghosted.add(ghost);
    this.#attachScript(ghost);
    this.#restoreControllers(ghost, state.entity.controllers as ControllerState[]);
    if (state.witness) this.#restoreWitness(ghost, state.witness);
    this.offloadsIn++;
    this.#callScript(ghost, "onEnteredCell");
  }

  #restoreWitness(e: Entity, state: WitnessState): void {
    const sink = this.host.clientSink?.(e);
    if (sink) Witness.restore(e, state, sink);
    else this.host.log.warn(`${e.type.name} ${e.id} came with a witness, but this cell cannot reach its client`);
  }

  /** A ghost's real moved to another cellapp. */
  realMoved(id: number, cellapp: number, address: string): void {
    const info = this.ghosts.get(id)?.ghostInfo;
    if (!info) return;
    info.realCellapp = cellapp;
    info.realAddress = address;
  }

  /** Creates (or refreshes) the ghost of a real of a neighbouring cell. */
  createGhost(state: GhostState): Entity {
    if (this.entities.has(state.id)) throw new Error(`entity ${state.id} is real in space ${this.spaceId} here`);
    const type = this.host.registry.find(state.type);
    if (!type) throw new Error(`unknown entity type "${state.type}" for ghost ${state.id}`);
    const [x, y, z] = state.position;
    let ghost = this.ghosts.get(state.id);
    if (!ghost) {
      const container = new PropertyContainer(type, "ghost", { entityId: state.id, readOnly: true });
      ghost = new Entity(state.id, type, this, { x, y, z }, container);
      ghost.isReal = false;
      this.ghosts.set(state.id, ghost);
      ghost.ghostInfo = new GhostInfo(state.realCellapp, state.realAddress, state.syncSeq);
      loadGhostState(ghost, state);
      this.rangeList.add(ghost);
    } else {
      ghost.ghostInfo = new GhostInfo(state.realCellapp, state.realAddress, state.syncSeq);
      loadGhostState(ghost, state);
      ghost.y = y;
      this.rangeList.move(ghost, x, z);
    }
    [ghost.yaw, ghost.pitch, ghost.roll] = state.direction;
    ghost.isOnGround = state.isOnGround;
    return ghost;
  }

  /** Applies a real's batch to its ghost here; asks for a resync when updates went missing. */
  receiveGhostSync(id: number, seq: number, ops: GhostOp[]): void {
    const ghost = this.ghosts.get(id);
    if (!ghost) return;
    if (receiveBatch(ghost, seq, ops, this.time, this.host.ghosting!.config)) {
      const info = ghost.ghostInfo!;
      this.host.log.warn(
        `ghost ${ghost.type.name} ${id} is missing updates after ${info.seq}; asking its real for a resync`,
      );
      this.host.ghosting!.send(info.realAddress, CellMsg.ghostResync, this.spaceId, id, this.cellappId);
    }
  }

  /** The real no longer needs its ghost here. */
  deleteGhost(id: number): void {
    const ghost = this.ghosts.get(id);
    if (!ghost) return;
    this.ghosts.delete(id);
    ghost.destroyed = true;
    this.disableWitness(ghost);
    this.rangeList.remove(ghost);
  }

  /** Stops timers of its own (when the cellapp stops). */
  dispose(): void {
    clearTimeout(this.#shutdownTimer);
  }

  /** The entities as the admin API lists them. */
  describe(): EntitySummary[] {
    const out: EntitySummary[] = [];
    for (const e of this.entities.values()) {
      out.push({ id: e.id, type: e.type.name, position: [e.x, e.y, e.z], real: true });
    }
    for (const e of this.ghosts.values()) {
      out.push({ id: e.id, type: e.type.name, position: [e.x, e.y, e.z], real: false });
    }
    return out;
  }

  /** This cell's figures for the load report. */
  report(now = performance.now()): CellReport {
    return {
      spaceId: this.spaceId,
      reals: this.entities.size,
      ghosts: this.ghosts.size,
      tickRate: round(this.stats.rate(now)),
      tickMsP50: round(this.stats.percentile(0.5)),
      tickMsP99: round(this.stats.percentile(0.99)),
      load: round(this.stats.load),
      offloadsIn: this.offloadsIn,
      offloadsOut: this.offloadsOut,
    };
  }
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/** A small seeded generator, so a cell's randomness can be replayed in tests. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
