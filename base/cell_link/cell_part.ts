/**
 * A base's side of its cell entity: asking the cellappmgr for it (with a space to fall back to), learning where it
 * is, following it when it moves, is teleported or is destroyed, restoring it from its latest backup when its
 * cellapp dies, destroying it at logout, and the witness its client needs. The state the relay reads on every
 * message (cellState, witness, the route) stays on the base; this changes it.
 */
import { errorText } from "../../core/errors.ts";
import {
  decodePersistentState,
  encodeCellBackup,
  type EntityType,
  type PropertyContainer,
} from "../../core/def/mod.ts";
import { C2S, ErrorCode, type ErrorCodeValue, S2C, type ServerMessage, type Vec3Tuple } from "../../core/proto/mod.ts";
import {
  type CellBackup,
  type CellBackupRecord,
  type CellEntitySpec,
  CellMsg,
  type CellPlaceRequest,
  RemoteError,
  type RestoredAt,
  sameAddress,
} from "../../core/wire/mod.ts";
import { poseOf } from "../../core/geo/mod.ts";
import type { Placement } from "../../core/placement.ts";
import type { Logger } from "../../core/log.ts";
import type { CellRoute } from "./cell_route.ts";
import type { ClientFrameOrder, SpeedCheck } from "../client/mod.ts";
import type { CellBackupKeeper } from "./cell_backup.ts";
import type { CellEntityPlace } from "./cell_request.ts";
import { callsIn, type SentCall, UnconfirmedCalls } from "./unconfirmed_calls.ts";

/** Where the cell part is. */
export type CellState = "none" | "creating" | "live" | "destroying";

/** A base's client, as its cell part tells it what became of the cell entity. */
export interface CellNewsClient {
  sendMessage(m: ServerMessage): void;
  error(code: ErrorCodeValue, about: number, message: string): void;
}

/** What the cell part reads and changes of its base. */
export interface CellOwner {
  readonly id: number;
  readonly type: EntityType;
  /** The cell part's properties while it has no cell entity (initial values, persistent ones). */
  readonly cellProps: PropertyContainer;
  readonly speed: SpeedCheck;
  readonly client: CellNewsClient | null;
  /** The client is ready for AOI traffic: a live cell entity gives it a witness. */
  readonly entitiesEnabled: boolean;
  cellState: CellState;
  spaceId: number;
  witness: boolean;
  direction: Vec3Tuple;
  /** The client is told a position: its moves from before are corrected without counting as abuse. */
  awaitCorrection(): void;
}

/** What the cell part asks of its baseapp. */
export interface BaseCellHost {
  /** This baseapp's address, for messages from the cell back to the base. */
  readonly address: string;
  /**
   * Asks the cellappmgr for the cell entity (waiting while it is away), placed as a script's `place` says when
   * given; gives up waiting when `signal` aborts.
   */
  createCellEntity(
    spec: CellEntitySpec,
    signal: AbortSignal,
    place?: CellPlaceRequest | null,
  ): Promise<CellEntityPlace>;
  /** Asks the cellappmgr to re-create the cell entity from `backup` (its cellapp died). */
  restoreCellEntity(backup: CellBackup): Promise<RestoredAt>;
}

/** The cell entity of one base, as its base sees it. */
export class BaseCellPart {
  /** The cell entity request under way, and how to stop it waiting for the cellappmgr. */
  #creating: { done: Promise<void>; abort: AbortController } | null = null;
  /** The client calls sent to the cell entity that no backup held here covers yet: a restore replays them. */
  readonly calls: UnconfirmedCalls = new UnconfirmedCalls();

  constructor(
    private readonly owner: CellOwner,
    private readonly route: CellRoute,
    /** The client's traffic from the cellapps, in order across cell changes. */
    private readonly frames: ClientFrameOrder,
    /** The latest backup of the cell entity, to restore it from. */
    private readonly backup: CellBackupKeeper,
    private readonly host: BaseCellHost,
    private readonly log: Logger,
  ) {}

  /**
   * Restored from its backup, the base is that of the cell entity on the cellapp at `address` (which took it as
   * such and said where the entity is); `backup` is the one its old base held, renumbered to the real's new epoch 0.
   */
  rebased(
    address: string,
    spaceId: number,
    position: Vec3Tuple,
    direction: Vec3Tuple,
    backup: CellBackup | null,
  ): void {
    this.owner.speed.reset(position);
    this.owner.direction = [...direction];
    if (backup) this.backup.keep({ ...backup, epoch: 0 });
    this.located(spaceId, address);
  }

  /**
   * Asks the cellappmgr for the cell entity in `spaceId` (0 = a new space) at the base's position. When the
   * cellappmgr refuses it there (the space is gone, ...), `fallback` is where it goes instead.
   */
  create(spaceId: number, fallback: Placement | null): Promise<void> {
    const o = this.owner;
    if (!o.type.hasCell || o.cellState !== "none") return Promise.resolve();
    o.cellState = "creating";
    const abort = new AbortController();
    const done = this.#create(spaceId, fallback, abort.signal).finally(() => (this.#creating = null));
    this.#creating = { done, abort };
    return done;
  }

  async #create(spaceId: number, fallback: Placement | null, signal: AbortSignal): Promise<void> {
    const o = this.owner;
    try {
      let where;
      try {
        where = await this.host.createCellEntity(this.#spec(spaceId), signal);
      } catch (e) {
        if (!fallback || !(e instanceof RemoteError) || o.cellState !== "creating") throw e;
        this.log.warn(
          `no cell entity in space ${spaceId || "(new)"} (${e.message}); going to space ${fallback.spaceId}`,
        );
        o.speed.reset(fallback.position);
        where = await this.host.createCellEntity(this.#spec(fallback.spaceId), signal);
      }
      if (o.cellState === "creating") this.located(where.spaceId, where.cellappAddress);
    } catch (e) {
      if (o.cellState !== "creating") return;
      o.cellState = "none";
      if (signal.aborted) return; // Logging out: nothing to tell.
      const why = `could not create the cell entity in space ${spaceId || "(new)"}: ${errorText(e)}`;
      this.log.warn(why);
      o.client?.error(ErrorCode.noCell, 0, why);
    }
  }

  #spec(spaceId: number): CellEntitySpec {
    const o = this.owner;
    return {
      spaceId,
      entityId: o.id,
      type: o.type.name,
      position: [...o.speed.position],
      direction: [...o.direction],
      props: encodeCellBackup(o.cellProps),
      baseAddress: this.host.address,
      // A base-only entity with a cell part (an instance's keeper) never has a client.
      hasClient: o.type.proxy,
    };
  }

  /**
   * A base script places the cell entity (createCellEntity, createInNewSpace) at `position` in space `spaceId`, as
   * `place` says; resolves where it went. Rejects when the type has no cell, there is a cell entity already (or one
   * is being made), or the cellappmgr refuses (unknown space or entity, a new space beyond the limits).
   */
  place(
    spaceId: number,
    position: Vec3Tuple,
    direction: Vec3Tuple | null,
    place: CellPlaceRequest,
  ): Promise<{ spaceId: number; position: Vec3Tuple }> {
    const o = this.owner, who = `${o.type.name} ${o.id}`;
    if (!o.type.hasCell) return Promise.reject(new Error(`${who} has no cell part (its type has no cell)`));
    if (o.cellState !== "none") {
      return Promise.reject(new Error(`${who} has a cell entity already (${o.cellState}); destroy it first`));
    }
    o.cellState = "creating";
    o.speed.reset(position);
    if (direction) o.direction = [...direction];
    const abort = new AbortController();
    const placed = (async () => {
      try {
        const where = await this.host.createCellEntity(this.#spec(spaceId), abort.signal, place);
        if (o.cellState !== "creating") {
          throw new Error(`${who} was destroyed while its cell entity was made in space ${where.spaceId}`);
        }
        const at: Vec3Tuple = where.position ? [...where.position] : [...position];
        o.speed.reset(at);
        this.located(where.spaceId, where.cellappAddress);
        return { spaceId: where.spaceId, position: at };
      } catch (e) {
        if (o.cellState === "creating") o.cellState = "none";
        throw e;
      }
    })();
    const done = placed.then(() => {}, () => {}).finally(() => (this.#creating = null));
    this.#creating = { done, abort };
    return placed;
  }

  /**
   * A base script destroys the cell entity (BigWorld's destroyCellEntity): its persistent cell properties come back
   * to the base, its client hears cellGone. Rejects when there is none.
   */
  async destroyByScript(): Promise<void> {
    const o = this.owner, who = `${o.type.name} ${o.id}`;
    if (!o.type.hasCell) throw new Error(`${who} has no cell part (its type has no cell)`);
    if (o.cellState !== "live") throw new Error(`${who} has no cell entity to destroy (${o.cellState})`);
    o.cellState = "destroying";
    try {
      const state = await this.route.request(CellMsg.destroyCellEntity, o.id);
      if (state) decodePersistentState(state, o.cellProps);
    } finally {
      o.cellState = "none";
      o.witness = false;
      this.frames.reset();
      this.backup.clear();
      this.calls.clear();
      this.route.setAddress(null);
      o.client?.sendMessage({ id: S2C.cellGone, reason: "its base destroyed the cell entity" });
    }
  }

  /** The cell entity is (now) on the cellapp at `address`. */
  located(spaceId: number, address: string): void {
    const o = this.owner;
    if (o.cellState === "destroying") return;
    const first = o.cellState !== "live";
    o.cellState = "live";
    o.spaceId = spaceId;
    this.route.setAddress(address);
    if (!first) return;
    this.frames.start(address);
    this.log.debug(`cell entity in space ${spaceId} on ${address}`);
    this.#greet();
  }

  /** The cell entity is live (again): its client hears where, and gets a witness once it is ready for AOI traffic. */
  #greet(): void {
    const o = this.owner;
    if (o.client) this.tellReady();
    if (o.entitiesEnabled && !o.witness) this.setWitness(true);
  }

  /**
   * A backup of the cell entity from the cellapp at `from`: kept in order with its epoch's frames, if `from` holds
   * the real of that epoch; refused (counted and logged by the frame order) otherwise.
   */
  backedUp(backup: CellBackup, from: string): void {
    this.#backedUp(backup.epoch, from, () => this.backup.keep(backup) ? callsIn(backup) : -1);
  }

  /** `backedUp`, for a backup that came as a record of a batch (cell_backup_records.ts): kept as its bytes. */
  backedUpRecord(rec: CellBackupRecord, from: string): void {
    this.#backedUp(rec.epoch, from, () => this.backup.keepRecord(rec) ? rec.clientCallSeq : -1);
  }

  /** `keep` runs in order with the frames of `epoch`: it keeps the backup and says the last call it holds, or -1. */
  #backedUp(epoch: number, from: string, keep: () => number): void {
    const refusedBefore = this.frames.stats.foreign;
    this.frames.notice(epoch, from, () => {
      if (this.owner.cellState !== "live") return;
      const first = !this.backup.has;
      const calls = keep();
      if (calls < 0) return;
      this.calls.confirm(calls);
      // Until then its cellapp's death has the base make the cell entity anew (docs/faults.md, "Cell entities").
      if (first) this.log.debug(`first backup of the cell entity kept (epoch ${epoch}, from ${from})`);
    });
    this.backup.stats.refused += this.frames.stats.foreign - refusedBefore;
  }

  /**
   * The cellapp at `address` died. If it held the cell entity, the entity is restored from its latest backup where
   * the cellappmgr says; the client stays connected, hears cellReady again, and its witness is rebuilt there.
   */
  cellAppDied(address: string): Promise<void> {
    const o = this.owner, at = this.route.address;
    if (o.cellState !== "live" || at === null || !sameAddress(at, address)) return Promise.resolve();
    this.route.setAddress(null);
    o.cellState = "creating";
    o.witness = false;
    // Like a cell entity being created: a logout meanwhile waits for it, then destroys what it made.
    const abort = new AbortController();
    const done = this.#restore(abort.signal).finally(() => (this.#creating = null));
    this.#creating = { done, abort };
    return done;
  }

  async #restore(signal: AbortSignal): Promise<void> {
    const o = this.owner;
    try {
      // Decoded here, inside the try: bytes that are not its backup lose the entity (backup_bytes.ts).
      const backup = this.backup.latest;
      if (!backup) return await this.#remake(signal);
      const where = await this.host.restoreCellEntity(backup);
      if (o.cellState !== "creating") return;
      this.#revive(
        backup.epoch + 1,
        where,
        callsIn(backup),
        "sent since the backup replayed into the restored cell entity",
      );
      o.speed.reset(backup.entity.position);
      o.direction = [...backup.entity.direction];
      this.log.info(`cell entity restored from its backup in space ${where.spaceId} on ${where.cellappAddress}`, {
        space: where.spaceId,
      });
      this.#greet();
    } catch (e) {
      if (o.cellState !== "creating") return;
      o.cellState = "none";
      this.frames.reset();
      this.backup.clear();
      if (signal.aborted) return; // Logging out: nothing to tell.
      const why = `the cell entity was lost with its cellapp and not restored: ${errorText(e)}`;
      this.log.error(why);
      this.#answerLost(this.calls.lose(), "not carried out: the cell entity was lost with its cellapp");
      o.client?.sendMessage({ id: S2C.cellGone, reason: why });
    }
  }

  /**
   * The real of `epoch` was teleported (as the cellapp at `from`, which held it, says): in order with its frames, the
   * speed check starts at the new position, and the client is told where it is now (BigWorld's forced position).
   */
  teleported(epoch: number, spaceId: number, position: Vec3Tuple, direction: Vec3Tuple, from: string): void {
    const o = this.owner;
    this.frames.notice(epoch, from, () => {
      if (o.cellState !== "live") return;
      o.speed.reset(position);
      o.direction = [...direction];
      o.spaceId = spaceId;
      o.awaitCorrection();
      o.client?.sendMessage({ id: S2C.forcedPosition, pose: poseOf(position, direction) });
    });
  }

  /** The cell entity is gone (its space shut down, or a script destroyed it), as the cellapp at `from` says. */
  destroyed(reason: string, from: string): void {
    const o = this.owner;
    if (o.cellState === "destroying" || o.cellState === "none") return;
    const at = this.route.address;
    if (at === null || !sameAddress(from, at)) {
      this.log.warn(`the cellapp at ${from} says the cell entity is gone, but it is on ${at}; ignored`);
      return;
    }
    o.cellState = "none";
    o.witness = false;
    this.frames.reset();
    this.backup.clear();
    this.calls.clear();
    this.route.setAddress(null);
    o.client?.sendMessage({ id: S2C.cellGone, reason });
  }

  /**
   * Sends the client's call of cell method `method` of `target` (of type `typeId`, as the client says) to the cell,
   * numbered and kept until a backup holds it; returns what was wrong instead (the caller replies).
   */
  call(
    target: number,
    typeId: number,
    method: number,
    args: Uint8Array,
  ): { code: ErrorCodeValue; message: string } | null {
    if (this.owner.cellState !== "live") return { code: ErrorCode.noCell, message: "no cell entity yet" };
    const c = this.calls.add(target, typeId, method, args);
    if (!c) {
      return {
        code: ErrorCode.rateLimited,
        message: `${this.calls.limit} calls wait for the cell entity's backup; this one was dropped, try again`,
      };
    }
    this.route.send(CellMsg.clientCall, this.owner.id, target, typeId, method, args, this.host.address, c.seq, false);
    return null;
  }

  /**
   * Its cellapp died before any backup of the cell entity reached the base: the entity is made anew, as at login, from
   * the base's cell properties where its client last was, and every call its client sent it is replayed into it (no
   * backup confirmed any, so the base holds them all). Its script sees a creation: there was nothing to restore.
   */
  async #remake(signal: AbortSignal): Promise<void> {
    const o = this.owner;
    const where = await this.host.createCellEntity(this.#spec(o.spaceId), signal);
    if (o.cellState !== "creating") return;
    this.#revive(0, where, 0, "replayed into the cell entity made anew");
    this.log.info(
      `cell entity made anew in space ${where.spaceId} on ${where.cellappAddress}: its cellapp died before its first ` +
        "backup",
      { space: where.spaceId },
    );
    this.#greet();
  }

  /**
   * The cell entity lives again as the real of `epoch` where `where` says, holding the client calls up to `held`: the
   * later ones are replayed into it before its client hears of it, so that it sees nothing until they are in it again.
   */
  #revive(epoch: number, where: { spaceId: number; cellappAddress: string }, held: number, what: string): void {
    const o = this.owner;
    this.frames.restart(epoch, where.cellappAddress);
    o.cellState = "live";
    o.spaceId = where.spaceId;
    this.route.setAddress(where.cellappAddress);
    this.#replay(held, what);
  }

  /**
   * Replays into the cell entity, which holds the client calls up to `held`, the later ones; answers the others. `what`
   * ends the log line that counts them.
   */
  #replay(held: number, what: string): void {
    const { replay, unknown } = this.calls.restored(this.owner.id, held);
    for (const c of replay) {
      this.route.send(
        CellMsg.clientCall,
        this.owner.id,
        c.target,
        c.typeId,
        c.method,
        c.args,
        this.host.address,
        c.seq,
        true,
      );
    }
    this.#answerLost(unknown, "its cellapp died before a backup confirmed it: it may or may not have run");
    if (replay.length + unknown.length > 0) {
      this.log.info(
        `${replay.length} client calls ${what}` +
          (unknown.length ? `; ${unknown.length} calls of other entities answered with callLost` : ""),
      );
    }
  }

  /** Tells the client that each of `calls` went to a cellapp that died, and `what` became of it. */
  #answerLost(calls: SentCall[], what: string): void {
    for (const c of calls) {
      this.owner.client?.error(
        ErrorCode.callLost,
        C2S.callCell,
        `call of method ${c.method} on entity ${c.target} ${what}`,
      );
    }
  }

  /**
   * Stops a cell entity request under way waiting for the cellappmgr, with `why`; returns it (null when there is
   * none), so that a logout lets an answer under way arrive and destroys what it made rather than leave it behind.
   */
  stopAsking(why: Error): Promise<void> | null {
    this.#creating?.abort.abort(why);
    return this.#creating?.done ?? null;
  }

  /** Destroys the cell entity; resolves with its persistent state, or null (logged) when the cell did not send it. */
  destroy(): Promise<Uint8Array | null> {
    return this.route.request(CellMsg.destroyCellEntity, this.owner.id).catch((e) => {
      this.log.warn(`destroying the cell entity failed (${errorText(e)}); saving its last known state`);
      return null;
    });
  }

  /** Tells the client the cell entity is ready, and where. */
  tellReady(): void {
    const o = this.owner;
    o.client?.sendMessage({ id: S2C.cellReady, spaceId: o.spaceId, position: [...o.speed.position] });
  }

  /** Asks the cell entity for its witness (AOI traffic for the client), or to drop it. */
  setWitness(on: boolean): void {
    this.owner.witness = on;
    this.route.send(on ? CellMsg.enableWitness : CellMsg.disableWitness, this.owner.id);
  }
}
