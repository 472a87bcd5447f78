/**
 * What baseapps send a cellapp for their clients (witnesses on and off,
 * cache requests, calls, positions, logout), routed to the entity's real
 * wherever it is, and checked on the way: a baseapp acts only for the
 * entities whose base it holds, and a cellapp passes a message on only for
 * an entity it holds a ghost of. Refusals go back to the client through its
 * base, and are logged at most once a minute per client.
 */
import { encodePersistentState } from "../core/def/mod.ts";
import { C2S, type ErrorCodeValue } from "../core/proto/mod.ts";
import {
  BaseMsg,
  batchable,
  CellMsg,
  type Channel,
  checkMoves,
  eachMove,
  type Handlers,
  type MessageDef,
  sameAddress,
  writeFrame,
} from "../core/wire/mod.ts";
import { errorText } from "../core/errors.ts";
import { type Logger, Throttle } from "../core/log.ts";
import type { Cell } from "./cell.ts";
import type { Entity } from "./entity.ts";
import type { CellAddress } from "./borders/mod.ts";
import { witnessOf } from "./witness/mod.ts";
import { clientCall } from "./calls.ts";
import { isTeleporting } from "./teleport.ts";
import { moveTrace } from "../core/trace.ts";
import { copyPose, type Pose, poseDirection, poseOf, posePosition } from "../core/geo/mod.ts";
import { MoveQueue } from "./move_queue.ts";

/** An entity as this cellapp holds it. */
interface Located {
  real: Entity | undefined;
  /** A ghost of it, when its real is on another cellapp (only looked for when there is no real here). */
  ghost: Entity | undefined;
}

/** What client traffic needs of its cellapp. */
export interface ClientTrafficHost {
  readonly cells: ReadonlyMap<string, Cell>;
  readonly log: Logger;
  /** The open channel to the baseapp at `address`, if there is one and the baseapp is not known to be gone. */
  channelTo(address: string): Channel | undefined;
  /** Sends to another process (or this one) by address. */
  toPeer<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void;
  /** A request to another cellapp by address. */
  ask<A extends unknown[], R>(address: string, def: MessageDef<A, R>, ...args: A): Promise<R>;
  /** Whether `address` is this cellapp's. */
  isSelf(address: string): boolean;
  /** This cellapp's registration generation now (0 before it has one): its client frames carry it. */
  generation(): number;
  /** Whether the baseapp at `address` is known to be gone (its entities here wait to be adopted). */
  baseGone(address: string): boolean;
}

/** The client-traffic handlers of one cellapp. */
export class ClientTraffic {
  /** Lines about one client or one sender, at most once a minute each. */
  readonly #logged = new Throttle(60_000);

  /** Client moves read and checked, waiting: the cellapp applies them together shortly before its next tick. */
  readonly moves: MoveQueue = new MoveQueue(
    (ch, records) => eachMove(records, (id, pose) => (this.#move(ch, id, pose), ch.isOpen)),
    (e) => this.host.log.error(`applying client moves failed: ${errorText(e, { stack: true })}`),
  );

  constructor(private readonly host: ClientTrafficHost) {}

  /** Serves the client-traffic messages on `handlers`. */
  serve(handlers: Handlers): void {
    handlers
      .on(CellMsg.enableWitness, (ch, id) => {
        const at = this.#locate(id);
        if (!this.#fromBase(ch, at, id, "enableWitness")) return;
        this.#atReal(ch, at, id, CellMsg.enableWitness, [id], (e) => {
          if (e.baseAddress === null) throw new Error(`entity ${id} has no base to send its client's updates through`);
          e.cell.enableWitness(e, this.sink(e));
        });
      })
      .on(CellMsg.clientAoi, (ch, id, bytes) => {
        const at = this.#locate(id);
        if (!this.#fromBase(ch, at, id, "clientAoi")) return;
        this.#atReal(ch, at, id, CellMsg.clientAoi, [id, bytes], (e) => witnessOf(e)?.receive(bytes));
      })
      .on(CellMsg.disableWitness, (ch, id) => {
        const at = this.#locate(id);
        if (!this.#fromBase(ch, at, id, "disableWitness")) return;
        this.#atReal(ch, at, id, CellMsg.disableWitness, [id], (e) => e.cell.disableWitness(e));
      })
      .on(CellMsg.clientCall, (ch, callerId, targetId, typeId, index, args, origin, seq, replay) => {
        const caller = this.#locate(callerId);
        if (!this.#fromBase(ch, caller, callerId, "clientCall")) return;
        // Refusals go back to the base that sent the call, whatever a forwarded copy says.
        if (ch?.peer.role === "baseapp") origin = ch.peer.address;
        const fail = (code: ErrorCodeValue, message: string) =>
          this.refuse(origin, callerId, code, C2S.callCell, message);
        const call: [number, number, number, number, Uint8Array, string, number, boolean] = [
          callerId,
          targetId,
          typeId,
          index,
          args,
          origin,
          seq,
          replay,
        ];
        if (targetId === callerId) {
          // Its number is kept on the real as the call runs: the real's backups tell its base which calls they hold.
          this.#atReal(ch, caller, callerId, CellMsg.clientCall, call, (e) => {
            if (seq > 0) {
              if (replay && seq <= e.clientCallSeq) {
                this.host.log.debug(`replayed call ${seq} of ${e.type.name} ${e.id} had run already; skipped`);
                return;
              }
              e.clientCallSeq = seq;
            }
            clientCall(e.cell, callerId, e, typeId, index, args, fail);
          });
          return;
        }
        if (replay) return; // Only calls of the caller's own entity are replayed.
        // A call of another entity leaves from the caller's real: its base is not to replay it once a backup says so.
        const real = caller.real;
        if (seq > 0 && ch?.peer.role === "baseapp" && real && !real.offloading) real.clientCallSeq = seq;
        this.#atReal(
          ch,
          this.#locate(targetId),
          targetId,
          CellMsg.clientCall,
          call,
          (e) => clientCall(e.cell, callerId, e, typeId, index, args, fail),
        );
      })
      .on(CellMsg.clientPosition, (ch, id, pos, dir) => {
        if (moveTrace.sampled(id)) moveTrace.stamp("cellapp", id, pos[0]);
        this.#move(ch, id, poseOf(pos, dir));
      })
      .on(CellMsg.clientMoves, (ch, _unused, records) => {
        const bad = checkMoves(records);
        if (bad) return ch.drop(`bad clientMoves: ${bad}`);
        if (moveTrace.on) eachMove(records, stampArrival);
        this.moves.add(ch, records);
      })
      .on(
        CellMsg.destroyCellEntity,
        (ch, id) => this.#fromBase(ch, this.#locate(id), id, "destroyCellEntity") ? this.#destroyForBase(id, ch) : null,
      )
      .on(
        CellMsg.cellPersistentState,
        (ch, id) => this.#fromBase(ch, this.#locate(id), id, "cellPersistentState") ? this.#stateForBase(id, ch) : null,
      );
  }

  /**
   * Frames for the client of `e`, through its base, marked with the real's epoch as it is now and this cellapp's
   * generation: records of the channel's toClients batch, so that one tick's frames for a baseapp's clients go as one
   * message; a toClient of its own when no channel is open or the frame is large.
   */
  sink(e: Entity): (frame: Uint8Array) => void {
    const base = e.baseAddress!, id = e.id, epoch = e.epoch, host = this.host;
    return (frame) => {
      const generation = host.generation();
      const w = batchable(epoch, frame) ? host.channelTo(base)?.record(BaseMsg.toClients, generation) : null;
      if (w) writeFrame(w, id, epoch, frame);
      else host.toPeer(base, BaseMsg.toClient, id, epoch, frame, generation);
    };
  }

  /**
   * A client's move of entity `id` to `pose`, from its base (or passed on by the cellapp where it was). `pose` may be
   * a batch reader's, refilled after this returns: what runs later keeps a copy.
   */
  #move(ch: Channel | null, id: number, pose: Pose): void {
    const at = this.#locate(id);
    if (!this.#fromBase(ch, at, id, "clientPosition")) return;
    const e = at.real;
    // Reported from where it was: carried over, it would take the entity back (its base corrects the client).
    if (e && isTeleporting(e)) return;
    if (e && !e.offloading) {
      if (!this.#passedOn(ch, e, "clientPosition")) return;
      moveTo(e, pose);
      return;
    }
    const kept = copyPose(pose);
    this.#atReal(
      ch,
      at,
      id,
      CellMsg.clientPosition,
      [id, posePosition(kept), poseDirection(kept)],
      (e) => moveTo(e, kept),
    );
  }

  /** Tells the client of proxy `callerId` (through its baseapp at `base`) that the cell refused its request. */
  refuse(base: string, callerId: number, code: ErrorCodeValue, about: number, message: string): void {
    const held = this.#logged.take(callerId);
    if (held !== null) {
      this.host.log.info(`refused a request of the client of entity ${callerId}: ${message}${Throttle.note(held)}`);
    }
    this.host.toPeer(base, BaseMsg.clientError, callerId, code, about, message.slice(0, 500));
  }

  /**
   * Whether a message about entity `id` may be acted on: a baseapp acts only
   * for entities whose base it holds (a liar is dropped); a cellapp passing a
   * message on to the real is checked where the real is. Traffic for an
   * entity not here is late and dropped quietly.
   */
  #fromBase(ch: Channel | null, at: Located, id: number, what: string): boolean {
    if (ch === null || ch.peer.role !== "baseapp") return true;
    const e = at.real ?? at.ghost;
    if (!e) {
      this.host.log.debug(`dropped ${what}: no entity ${id} on this cellapp`);
      return false;
    }
    if (e.baseAddress !== null && sameAddress(e.baseAddress, ch.peer.address)) return true;
    if (e.baseAddress === null || !this.host.baseGone(e.baseAddress)) {
      ch.drop(`${what} for ${e.type.name} ${id}, whose base is ${e.baseAddress ? `at ${e.baseAddress}` : "none"}`);
      return false;
    }
    // Its base's baseapp died: a baseapp that restored the base may speak before this entity is told where its base
    // is now. The message goes, not the channel: that race must not cut the baseapp off from every other entity.
    const held = this.#logged.take(ch.peer.address);
    if (held !== null) {
      this.host.log.warn(
        `dropped ${what} for ${e.type.name} ${id} from the baseapp at ${ch.peer.address}: its base is ` +
          `${e.baseAddress ? `at ${e.baseAddress}` : "none"}` + Throttle.note(held),
      );
    }
    return false;
  }

  /**
   * Whether a client's message that reached the real `e` may act on it: from
   * its base (checked on arrival) or this cellapp, or passed on by a cellapp
   * that holds a ghost of it (the real moved from there, or the caller saw
   * it there). From any other cellapp the message is dropped: it cannot act
   * for what it does not hold. (Not the channel: a ghost dropped a moment
   * before the message came is a race, not a lie.)
   */
  #passedOn(from: Channel | null, e: Entity, what: string): boolean {
    if (from === null || from.peer.role !== "cellapp") return true;
    const address = from.peer.address;
    for (const link of e.ghosting?.links.values() ?? []) if (sameAddress(link.address, address)) return true;
    if (e.teleportedFrom !== null && sameAddress(e.teleportedFrom, address)) return true;
    const held = this.#logged.take(address);
    if (held !== null) {
      this.host.log.warn(
        `dropped ${what} for ${e.type.name} ${e.id} from ${address}, which holds no ghost of it` +
          Throttle.note(held),
      );
    }
    return false;
  }

  /** Entity `id` here, in one pass over the cells: its real, and a ghost of it whose real is on another cellapp. */
  #locate(id: number): Located {
    let ghost: Entity | undefined;
    for (const cell of this.host.cells.values()) {
      const real = cell.entities.get(id);
      if (real) return { real, ghost: undefined };
      const g = cell.ghosts.get(id);
      if (g && !ghost && g.ghostInfo && !this.host.isSelf(g.ghostInfo.realAddress)) ghost = g;
    }
    return { real: undefined, ghost };
  }

  /**
   * Runs `run` on the real entity `id` here; a message for a ghost goes on
   * to its real, and one for a real being handed over waits until the
   * hand-over settles (then runs here, or goes on to the new real).
   */
  #atReal<A extends unknown[]>(
    from: Channel | null,
    at: Located,
    id: number,
    def: MessageDef<A, unknown>,
    args: A,
    run: (e: Entity) => void,
  ): void {
    const e = at.real;
    if (e?.offloading) {
      e.offloading.held.push((moved) =>
        moved ? this.host.toPeer(moved.address, def, ...args) : this.#passedOn(from, e, def.name) && run(e)
      );
      return;
    }
    if (e) {
      if (this.#passedOn(from, e, def.name)) run(e);
      return;
    }
    const address = at.ghost?.ghostInfo?.realAddress;
    if (address) return this.host.toPeer(address, def, ...args);
    // Late traffic for an entity destroyed (a logout) or gone elsewhere: nothing to act on, nothing harmed.
    this.host.log.debug(`dropped ${def.name}: no entity ${id} on this cellapp`);
  }

  /** Logout: the real's persistent cell properties, wherever the real is now. */
  async #destroyForBase(id: number, from: Channel | null = null): Promise<Uint8Array | null> {
    const at = this.#locate(id);
    const e = at.real;
    if (e?.offloading) {
      const moved = await new Promise<CellAddress | null>((r) => e.offloading!.held.push(r));
      if (moved) return await this.#destroyAt(moved.address, id);
    }
    if (e && !e.destroyed) {
      if (!this.#passedOn(from, e, "destroyCellEntity")) return null;
      const state = encodePersistentState(e.container);
      e.cell.destroyEntity(e, "its base asked", false);
      return state;
    }
    const address = at.ghost?.ghostInfo?.realAddress;
    return address ? await this.#destroyAt(address, id) : null;
  }

  /** Autosave: the real's persistent cell properties, wherever the real is now; the entity stays. */
  async #stateForBase(id: number, from: Channel | null = null): Promise<Uint8Array | null> {
    const e = this.#locate(id).real;
    if (e?.offloading) {
      const moved = await new Promise<CellAddress | null>((r) => e.offloading!.held.push(r));
      if (moved) return await this.#stateAt(moved.address, id);
    }
    if (e && !e.destroyed) {
      return this.#passedOn(from, e, "cellPersistentState") ? encodePersistentState(e.container) : null;
    }
    const address = this.#locate(id).ghost?.ghostInfo?.realAddress;
    return address ? await this.#stateAt(address, id) : null;
  }

  /** cellPersistentState on the cellapp at `address`, which may be this one. */
  async #stateAt(address: string, id: number): Promise<Uint8Array | null> {
    if (this.host.isSelf(address)) return await this.#stateForBase(id);
    return await this.host.ask(address, CellMsg.cellPersistentState, id);
  }

  /** destroyCellEntity on the cellapp at `address`, which may be this one (the real moved to another cell here). */
  async #destroyAt(address: string, id: number): Promise<Uint8Array | null> {
    if (this.host.isSelf(address)) return await this.#destroyForBase(id);
    return await this.host.ask(address, CellMsg.destroyCellEntity, id);
  }
}

/** Notes the arrival of a sampled move (core/trace.ts): it waits here for the tick like any other. */
function stampArrival(id: number, pose: Pose): boolean {
  if (moveTrace.sampled(id)) moveTrace.stamp("cellapp", id, pose.x);
  return true;
}

/** Turns `e` to the pose's direction and moves it to its position. */
function moveTo(e: Entity, p: Pose): void {
  e.yaw = p.yaw, e.pitch = p.pitch, e.roll = p.roll;
  e.cell.moveEntity(e, p.x, p.y, p.z);
}
