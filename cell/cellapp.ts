import type { Config } from "../core/config.ts";
import type { Logger } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";
import { EntityIdPool } from "../core/id_pool.ts";
import {
  BaseMsg,
  beginTick,
  CellMsg,
  type Channel,
  endTick,
  type MessageDef,
  MgrMsg,
  type SpaceGeometry,
} from "../core/wire/mod.ts";
import { encodePersistentState, type EntityRegistry } from "../core/def/mod.ts";
import type { CellScriptClass } from "../core/script.ts";
import { Cell, type CellHost } from "./cell.ts";
import type { Entity } from "./entity.ts";
import { configureSpaceAoI, witnessOf, type WitnessOptions } from "./witness.ts";
import { type CellAddress, GHOST_DEFAULTS } from "./ghosts.ts";
import { AOI_HYSTERESIS } from "../core/config.ts";
import { cellRects } from "../core/geo/bsp.ts";
import { rectFromArray } from "../core/geo/rect.ts";
import { Loopback } from "./loopback.ts";
import { cellAt, cellKey, cellOf, cellsOfSpace } from "./cell_table.ts";

/** What a cellapp runs: the entity types and their cell scripts. */
export interface CellAppGame {
  registry: EntityRegistry;
  scripts: Readonly<Record<string, CellScriptClass>>;
}

/** Ticks per second unless configured. */
export const DEFAULT_TICK_HZ = 10;

/**
 * A cellapp process: hosts cells of spaces (several of one space, possibly),
 * ticks them at a fixed rate against a tick budget, and reports its load to
 * the cellappmgr each second. Messages between two of its cells go through a
 * loopback instead of the network.
 */
export class CellApp {
  readonly member: MemberProcess;
  /** The cells by `cellKey(spaceId, cellId)`. */
  readonly cells: Map<string, Cell> = new Map();
  readonly ids: EntityIdPool;
  readonly periodMs: number;
  #log: Logger;
  #game: CellAppGame;
  #host: CellHost;
  #load = 0;
  #aoi: WitnessOptions;
  #tickTimer: ReturnType<typeof setTimeout> | undefined;
  #reportTimer: ReturnType<typeof setInterval> | undefined;
  #nextTickAt = 0;
  #lastTickAt = 0;
  #stopped = false;
  #loopback: Loopback;
  /** The addresses the cellappmgr announces this cellapp under (its own, or the one its connection came from). */
  #selfAddresses = new Set<string>();

  constructor(cfg: Config, log: Logger, game: CellAppGame, tickHz = DEFAULT_TICK_HZ) {
    this.#log = log;
    this.#game = game;
    this.periodMs = 1000 / tickHz;
    this.ids = new EntityIdPool(() => this.member.link.channel, log);
    this.member = startMember("cellapp", cfg, log, () => this.#load, undefined, () => this.ids.highWater);
    this.#loopback = new Loopback((def, args) => {
      const handler = this.member.handlers.get(def.kind);
      if (!handler) throw new Error(`${def.name} is not served here`);
      // Cell-to-cell handlers do not look at the channel.
      return handler(null as unknown as Channel, ...args);
    }, (e) => log.warn(`a message between cells of this cellapp failed: ${e.message}`));
    this.#host = {
      registry: game.registry,
      scripts: game.scripts,
      log,
      budgetMs: this.periodMs,
      newEntityId: () => this.ids.take(),
      requestShutDown: (spaceId, why) => {
        const ch = this.member.link.channel;
        if (ch) ch.send(MgrMsg.requestShutDownSpace, spaceId, why);
        else log.warn(`cannot ask for space ${spaceId} to shut down (${why}): the cellappmgr is not reachable`);
      },
      cellGone: (spaceId, cellId) => {
        this.cells.get(cellKey(spaceId, cellId))?.dispose();
        this.cells.delete(cellKey(spaceId, cellId));
      },
      cellEntityDestroyed: (e, reason) => this.#toBase(e.baseAddress!, BaseMsg.cellEntityDestroyed, e.id, reason),
      cellEntityMoved: (e, address, spaceId = e.cell.spaceId) =>
        this.#toBase(e.baseAddress!, BaseMsg.cellEntityMoved, e.id, spaceId, address, e.epoch),
      findCell: (spaceId, x, z) => {
        const ch = this.member.link.channel;
        if (!ch) return Promise.reject(new Error("the cellappmgr is not reachable"));
        return ch.request(MgrMsg.findCell, spaceId, x, z);
      },
      clientSink: (e) => e.baseAddress === null ? undefined : this.#clientSink(e),
      ghosting: {
        config: { ...GHOST_DEFAULTS, ghostRadius: cfg.ghostRadius },
        address: this.member.server.address,
        send: (address, def, ...args) => this.#toPeer(address, def, ...args),
        // Synchronous when a channel is open, so a request keeps its place among messages sent after it.
        ask: (address, timeoutMs, def, ...args) => {
          if (this.#isSelf(address)) return this.#loopback.ask(def, args);
          const ch = this.member.peers.peek(address);
          if (ch) return ch.requestWithin(timeoutMs, def, ...args);
          return this.member.peers.get(address).then((c) => c.requestWithin(timeoutMs, def, ...args));
        },
      },
    };
    this.#aoi = { aoiRadius: cfg.aoiRadius, hysteresis: AOI_HYSTERESIS };
    this.#serve();
    this.member.link.onRegistered = () => {
      const ch = this.member.link.channel;
      const spaces = new Map([...this.cells.values()].map((c) => [c.spaceId, c.geometry]));
      if (ch && spaces.size > 0) ch.send(MgrMsg.adoptSpaces, [...spaces.values()]);
      this.ids.ensure().catch((e) => log.warn(`could not get entity ids: ${e.message}`));
    };
    this.#lastTickAt = this.#nextTickAt = performance.now();
    this.#scheduleTick();
    this.#reportTimer = setInterval(() => this.#report(), 1000);
  }

  #serve(): void {
    this.member.handlers
      .on(CellMsg.createCell, (_ch, g) => {
        this.#applyGeometry(g, true);
        return true;
      })
      .on(CellMsg.updateGeometry, (_ch, g) => this.#applyGeometry(g, false))
      .on(CellMsg.shutDownSpace, (_ch, spaceId) => {
        for (const cell of cellsOfSpace(this.cells, spaceId)) cell.shutDown();
      })
      .on(CellMsg.spawn, async (_ch, req) => {
        const p = req.position;
        const cell = req.cellId
          ? cellOf(this.cells, req.spaceId, req.cellId)
          : cellAt(this.cells, req.spaceId, p?.[0], p?.[2]);
        await this.ids.ensure(req.count);
        const ids: number[] = [];
        const r = cell.rect;
        for (let i = 0; i < req.count; i++) {
          const pos = req.position
            ? { x: req.position[0], y: req.position[1], z: req.position[2] }
            : { x: r.minX + cell.random() * (r.maxX - r.minX), y: 0, z: r.minZ + cell.random() * (r.maxZ - r.minZ) };
          ids.push(cell.createEntity(req.type, pos, req.props ?? {}, [cell.random() * 2 * Math.PI - Math.PI, 0, 0]).id);
        }
        return ids;
      })
      .on(CellMsg.createCellEntity, (_ch, spec) => {
        const cell = cellAt(this.cells, spec.spaceId, spec.position[0], spec.position[2]);
        cell.createBaseEntity(spec);
        return { spaceId: spec.spaceId, cellapp: this.member.link.id ?? 0 };
      })
      .on(CellMsg.enableWitness, (_ch, id) =>
        this.#atReal(id, CellMsg.enableWitness, [id], (e) => {
          if (e.baseAddress === null) throw new Error(`entity ${id} has no base to send its client's updates through`);
          e.cell.enableWitness(e, this.#clientSink(e));
        }))
      .on(
        CellMsg.clientAoi,
        (_ch, id, bytes) => this.#atReal(id, CellMsg.clientAoi, [id, bytes], (e) => witnessOf(e)?.receive(bytes)),
      )
      .on(
        CellMsg.disableWitness,
        (_ch, id) => this.#atReal(id, CellMsg.disableWitness, [id], (e) => e.cell.disableWitness(e)),
      )
      .on(CellMsg.clientCall, (_ch, callerId, targetId, index, args) =>
        this.#atReal(
          targetId,
          CellMsg.clientCall,
          [callerId, targetId, index, args],
          (e) => e.cell.clientCall(callerId, e, index, args),
        ))
      .on(
        CellMsg.clientPosition,
        (_ch, id, pos, dir) =>
          this.#atReal(id, CellMsg.clientPosition, [id, pos, dir], (e) => {
            [e.yaw, e.pitch, e.roll] = dir;
            e.cell.moveEntity(e, pos[0], pos[1], pos[2]);
          }),
      )
      .on(CellMsg.destroyCellEntity, (_ch, id) => this.#destroyForBase(id))
      .on(
        CellMsg.entityCall,
        (_ch, spaceId, cellId, target, caller, method, args) =>
          cellOf(this.cells, spaceId, cellId, `${method} on entity ${target}`).runEntityCall(
            target,
            caller,
            method,
            args,
          ),
      )
      .on(CellMsg.createGhost, (_ch, state) => {
        cellOf(this.cells, state.spaceId, state.cellId).createGhost(state);
        return true;
      })
      .on(
        CellMsg.ghostSync,
        (_ch, spaceId, cellId, id, seq, ops) =>
          this.cells.get(cellKey(spaceId, cellId))?.receiveGhostSync(id, seq, ops),
      )
      .on(CellMsg.deleteGhost, (_ch, spaceId, cellId, id) => this.cells.get(cellKey(spaceId, cellId))?.deleteGhost(id))
      .on(
        CellMsg.ghostResync,
        (_ch, spaceId, cellId, id, ghostCell) => this.cells.get(cellKey(spaceId, cellId))?.resyncGhost(id, ghostCell),
      )
      .on(CellMsg.offload, (_ch, state) => {
        cellOf(this.cells, state.spaceId, state.cellId).receiveOffload(state);
        return true;
      })
      .on(CellMsg.teleportIn, (_ch, state) => {
        cellOf(this.cells, state.spaceId, state.cellId).receiveTeleport(state);
        return true;
      })
      .on(
        CellMsg.realMoved,
        (_ch, spaceId, cellId, id, cellapp, address, cell) =>
          this.cells.get(cellKey(spaceId, cellId))?.realMoved(id, { cell, cellapp, address }),
      )
      .on(CellMsg.describeCell, (_ch, spaceId) => {
        const cells = cellsOfSpace(this.cells, spaceId);
        return cells.length === 0 ? null : cells.flatMap((c) => c.describe());
      })
      .on(CellMsg.findEntity, (_ch, id) => {
        let found: Entity | undefined;
        for (const cell of this.cells.values()) {
          const e = cell.entities.get(id) ?? cell.ghosts.get(id);
          if (e && (!found || e.isReal)) found = e;
          if (found?.isReal) break;
        }
        if (!found) return null;
        const e = found;
        const position: [number, number, number] = [e.x, e.y, e.z];
        const ghosts = e.ghosting ? [...new Set([...e.ghosting.links.values()].map((l) => l.cellapp))] : [];
        return {
          id,
          type: e.type.name,
          spaceId: e.cell.spaceId,
          position,
          real: e.isReal,
          ghosts,
          base: e.baseAddress,
        };
      });
  }

  /** Creates the cells of `g` this cellapp runs that it does not have yet (when `create`), updates the others. */
  #applyGeometry(g: SpaceGeometry, create: boolean): void {
    const self = this.member.link.id;
    for (const [id, address] of g.cellapps ?? []) if (id === self) this.#selfAddresses.add(address);
    for (const cell of cellsOfSpace(this.cells, g.spaceId)) cell.updateGeometry(g);
    if (self === null) {
      if (create) throw new Error("this cellapp is not registered yet");
      return;
    }
    for (const c of cellRects(g.tree, rectFromArray(g.bounds))) {
      if (c.cellapp !== self || this.cells.has(cellKey(g.spaceId, c.id))) continue;
      const cell = new Cell(this.#host, g, self, c.id);
      configureSpaceAoI(cell, this.#aoi);
      this.cells.set(cellKey(g.spaceId, c.id), cell);
      this.#log.info(`cell ${c.id} of space ${g.spaceId} created`);
    }
  }

  /** Frames for the client of `e`, through its base, marked with the real's epoch as it is now. */
  #clientSink(e: Entity): (frame: Uint8Array) => void {
    const base = e.baseAddress!, id = e.id, epoch = e.epoch;
    return (frame) => this.#toBase(base, BaseMsg.toClient, id, epoch, frame);
  }

  /** The real entity `id` on this cellapp, if any. */
  #find(id: number): Entity | undefined {
    for (const cell of this.cells.values()) {
      const e = cell.entities.get(id);
      if (e) return e;
    }
    return undefined;
  }

  /**
   * Runs `run` on the real entity `id` here; a message for a ghost goes on
   * to its real, and one for a real being handed over waits until the
   * hand-over settles (then runs here, or goes on to the new real).
   */
  #atReal<A extends unknown[]>(id: number, def: MessageDef<A, unknown>, args: A, run: (e: Entity) => void): void {
    const e = this.#find(id);
    if (e?.offloading) {
      e.offloading.held.push((moved) => moved ? this.#toPeer(moved.address, def, ...args) : run(e));
      return;
    }
    if (e) return run(e);
    const address = this.#realAddressOf(id);
    if (address) return this.#toPeer(address, def, ...args);
    // Late traffic for an entity destroyed (a logout) or gone elsewhere: nothing to act on, nothing harmed.
    this.#log.debug(`dropped ${def.name}: no entity ${id} on this cellapp`);
  }

  /** Where the real of a ghost here is, when it is on another cellapp (a real here is found first). */
  #realAddressOf(id: number): string | undefined {
    for (const cell of this.cells.values()) {
      const address = cell.ghosts.get(id)?.ghostInfo?.realAddress;
      if (address && !this.#isSelf(address)) return address;
    }
    return undefined;
  }

  /** Logout: the real's persistent cell properties, wherever the real is now. */
  async #destroyForBase(id: number): Promise<Uint8Array | null> {
    const e = this.#find(id);
    if (e?.offloading) {
      const moved = await new Promise<CellAddress | null>((r) => e.offloading!.held.push(r));
      if (moved) return await this.#destroyAt(moved.address, id);
    }
    if (e && !e.destroyed) {
      const state = encodePersistentState(e.container);
      e.cell.destroyEntity(e, "its base asked", false);
      return state;
    }
    const address = this.#realAddressOf(id);
    return address ? await this.#destroyAt(address, id) : null;
  }

  /** destroyCellEntity on the cellapp at `address`, which may be this one (the real moved to another cell here). */
  async #destroyAt(address: string, id: number): Promise<Uint8Array | null> {
    if (this.#isSelf(address)) return await this.#destroyForBase(id);
    return await (await this.member.peers.get(address)).request(CellMsg.destroyCellEntity, id);
  }

  /** Sends to a baseapp (see #toPeer). */
  #toBase<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void {
    this.#toPeer(address, def, ...args);
  }

  /**
   * Sends to another process by address, dialling it when no channel is open.
   * Arguments are encoded at once when a channel is open; otherwise they are
   * copied, since callers may reuse their buffers.
   */
  #toPeer<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void {
    if (this.#isSelf(address)) {
      this.#loopback.send(def, args);
      return;
    }
    const ch = this.member.peers.peek(address);
    if (ch) {
      ch.send(def, ...args);
      return;
    }
    args = structuredClone(args);
    this.member.peers.get(address).then(
      (c) => c.send(def, ...args),
      (e) => this.#log.warn(`${def.name} to ${address} lost: ${(e as Error).message}`),
    );
  }

  /** Whether `address` is this cellapp's: messages to it go through the loopback. */
  #isSelf(address: string): boolean {
    return address === this.address || this.#selfAddresses.has(address);
  }

  /** The address other processes reach this cellapp on. */
  get address(): string {
    return this.member.server.address;
  }

  #scheduleTick(): void {
    if (this.#stopped) return;
    this.#nextTickAt += this.periodMs;
    const now = performance.now();
    // After a stall, start counting again from now rather than ticking in a burst.
    if (this.#nextTickAt < now - this.periodMs) this.#nextTickAt = now;
    this.#tickTimer = setTimeout(() => this.#tick(), Math.max(0, this.#nextTickAt - now));
  }

  #tick(): void {
    const start = performance.now();
    const dt = Math.min(start - this.#lastTickAt, 4 * this.periodMs);
    this.#lastTickAt = start;
    let spent = 0;
    beginTick();
    try {
      for (const cell of this.cells.values()) {
        const t0 = performance.now();
        try {
          cell.tick(dt);
        } catch (e) {
          this.#log.error(`tick of cell ${cell.cellId} of space ${cell.spaceId} failed: ${(e as Error).stack ?? e}`);
        }
        const ms = performance.now() - t0;
        cell.stats.record(t0, ms);
        spent += ms;
      }
    } finally {
      endTick();
    }
    this.#load += (spent / this.periodMs - this.#load) * 0.1;
    this.#scheduleTick();
  }

  #report(): void {
    const ch = this.member.link.channel;
    if (!ch) return;
    const now = performance.now();
    ch.send(MgrMsg.loadReport, {
      load: Math.round(this.#load * 1000) / 1000,
      peerBytesOut: this.member.peers.bytesOut,
      cells: [...this.cells.values()].map((c) => c.report(now)),
    });
  }

  /** Stops ticking and serving; resolves once the cellappmgr has been told. */
  async close(reason: string): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#tickTimer);
    clearInterval(this.#reportTimer);
    for (const c of this.cells.values()) c.dispose();
    await this.member.close(reason);
  }
}
