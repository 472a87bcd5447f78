import type { Config } from "../core/config.ts";
import type { Logger } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";
import { EntityIdPool } from "../core/id_pool.ts";
import { BaseMsg, beginTick, CellMsg, endTick, type MessageDef, MgrMsg } from "../core/wire/mod.ts";
import { encodePersistentState, type EntityRegistry } from "../core/def/mod.ts";
import type { CellScriptClass } from "../core/script.ts";
import { Cell, type CellHost } from "./cell.ts";
import type { Entity } from "./entity.ts";
import { configureSpaceAoI, witnessOf, type WitnessOptions } from "./witness.ts";
import { GHOST_DEFAULTS } from "./ghosts.ts";
import { AOI_HYSTERESIS } from "../core/config.ts";

/** What a cellapp runs: the entity types and their cell scripts. */
export interface CellAppGame {
  registry: EntityRegistry;
  scripts: Readonly<Record<string, CellScriptClass>>;
}

/** Ticks per second unless configured. */
export const DEFAULT_TICK_HZ = 10;

/**
 * A cellapp process: hosts cells of spaces, ticks them at a fixed rate
 * against a tick budget, and reports its load to the cellappmgr each second.
 */
export class CellApp {
  readonly member: MemberProcess;
  readonly cells: Map<number, Cell> = new Map();
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

  constructor(cfg: Config, log: Logger, game: CellAppGame, tickHz = DEFAULT_TICK_HZ) {
    this.#log = log;
    this.#game = game;
    this.periodMs = 1000 / tickHz;
    this.ids = new EntityIdPool(() => this.member.link.channel, log);
    this.member = startMember("cellapp", cfg, log, () => this.#load, undefined, () => this.ids.highWater);
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
      cellGone: (spaceId) => {
        this.cells.get(spaceId)?.dispose();
        this.cells.delete(spaceId);
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
      if (ch && this.cells.size > 0) ch.send(MgrMsg.adoptSpaces, [...this.cells.values()].map((c) => c.geometry));
      this.ids.ensure().catch((e) => log.warn(`could not get entity ids: ${e.message}`));
    };
    this.#lastTickAt = this.#nextTickAt = performance.now();
    this.#scheduleTick();
    this.#reportTimer = setInterval(() => this.#report(), 1000);
  }

  #serve(): void {
    this.member.handlers
      .on(CellMsg.createCell, (_ch, g) => {
        const existing = this.cells.get(g.spaceId);
        if (existing) existing.updateGeometry(g);
        else {
          const id = this.member.link.id;
          if (id === null) throw new Error("this cellapp is not registered yet");
          const cell = new Cell(this.#host, g, id);
          configureSpaceAoI(cell, this.#aoi);
          this.cells.set(g.spaceId, cell);
          this.#log.info(`cell of space ${g.spaceId} created`);
        }
        return true;
      })
      .on(CellMsg.updateGeometry, (_ch, g) => this.cells.get(g.spaceId)?.updateGeometry(g))
      .on(CellMsg.shutDownSpace, (_ch, spaceId) => this.cells.get(spaceId)?.shutDown())
      .on(CellMsg.spawn, async (_ch, req) => {
        const cell = this.cells.get(req.spaceId);
        if (!cell) throw new Error(`this cellapp has no cell of space ${req.spaceId}`);
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
        const cell = this.cells.get(spec.spaceId);
        if (!cell) throw new Error(`this cellapp has no cell of space ${spec.spaceId}`);
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
      .on(CellMsg.entityCall, (_ch, spaceId, target, caller, method, args) => {
        const cell = this.cells.get(spaceId);
        if (!cell) throw new Error(`${method} on entity ${target}: this cellapp has no cell of space ${spaceId}`);
        return cell.runEntityCall(target, caller, method, args);
      })
      .on(CellMsg.createGhost, (_ch, state) => {
        const cell = this.cells.get(state.spaceId);
        if (!cell) throw new Error(`this cellapp has no cell of space ${state.spaceId}`);
        cell.createGhost(state);
        return true;
      })
      .on(CellMsg.ghostSync, (_ch, spaceId, id, seq, ops) => this.cells.get(spaceId)?.receiveGhostSync(id, seq, ops))
      .on(CellMsg.deleteGhost, (_ch, spaceId, id) => this.cells.get(spaceId)?.deleteGhost(id))
      .on(CellMsg.ghostResync, (_ch, spaceId, id, cellapp) => this.cells.get(spaceId)?.resyncGhost(id, cellapp))
      .on(CellMsg.offload, (_ch, state) => {
        const cell = this.cells.get(state.spaceId);
        if (!cell) throw new Error(`this cellapp has no cell of space ${state.spaceId}`);
        cell.receiveOffload(state);
        return true;
      })
      .on(CellMsg.teleportIn, (_ch, state) => {
        const cell = this.cells.get(state.spaceId);
        if (!cell) throw new Error(`this cellapp has no cell of space ${state.spaceId}`);
        cell.receiveTeleport(state);
        return true;
      })
      .on(
        CellMsg.realMoved,
        (_ch, spaceId, id, cellapp, address) => this.cells.get(spaceId)?.realMoved(id, cellapp, address),
      )
      .on(CellMsg.describeCell, (_ch, spaceId) => this.cells.get(spaceId)?.describe() ?? null)
      .on(CellMsg.findEntity, (_ch, id) => {
        for (const cell of this.cells.values()) {
          const e = cell.entities.get(id) ?? cell.ghosts.get(id);
          if (e) {
            const position: [number, number, number] = [e.x, e.y, e.z];
            const ghosts = e.ghosting ? [...e.ghosting.links.keys()] : [];
            const base = e.baseAddress;
            return { id, type: e.type.name, spaceId: cell.spaceId, position, real: e.isReal, ghosts, base };
          }
        }
        return null;
      });
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
    for (const cell of this.cells.values()) {
      const e = cell.entities.get(id);
      if (e?.offloading) {
        e.offloading.held.push((moved) => moved ? this.#toPeer(moved, def, ...args) : run(e));
        return;
      }
      if (e) return run(e);
      const ghost = cell.ghosts.get(id);
      if (ghost) return this.#toPeer(ghost.ghostInfo!.realAddress, def, ...args);
    }
    throw new Error(`${def.name}: no entity ${id} on this cellapp`);
  }

  /** Logout: the real's persistent cell properties, wherever the real is now. */
  async #destroyForBase(id: number): Promise<Uint8Array | null> {
    for (const cell of this.cells.values()) {
      const e = cell.entities.get(id);
      if (e?.offloading) {
        const moved = await new Promise<string | null>((r) => e.offloading!.held.push(r));
        if (moved) return await (await this.member.peers.get(moved)).request(CellMsg.destroyCellEntity, id);
      }
      if (e && !e.destroyed) {
        const state = encodePersistentState(e.container);
        cell.destroyEntity(e, "its base asked", false);
        return state;
      }
      const ghost = cell.ghosts.get(id);
      if (ghost) {
        return await (await this.member.peers.get(ghost.ghostInfo!.realAddress)).request(CellMsg.destroyCellEntity, id);
      }
    }
    return null;
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
          this.#log.error(`tick of space ${cell.spaceId} failed: ${(e as Error).stack ?? e}`);
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
