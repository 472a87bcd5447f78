/**
 * A proxy: a base entity with a client (BigWorld's Proxy). It holds the base properties and its client (taken over
 * by a second login, awaited for a grace period when gone), relays the client's moves and calls to its cell entity
 * and the cell's frames to the client, and logs out. Its cell entity's life is in cell_part.ts, writing its state
 * in base_saves.ts.
 */
import { errorText } from "../../core/errors.ts";
import {
  AUD,
  type ChangeSink,
  type EntityType,
  PropertyContainer,
  type PropertyDef,
  writeChange,
} from "../../core/def/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import {
  encodeArgs,
  ErrorCode,
  type ErrorCodeValue,
  S2C,
  type ServerMessage,
  type Vec3Tuple,
} from "../../core/proto/mod.ts";
import {
  type BaseBackup,
  type CellBackup,
  type CellBackupRecord,
  CellMsg,
  type MessageDef,
} from "../../core/wire/mod.ts";
import type { Placement } from "../../core/placement.ts";
import type { Logger } from "../../core/log.ts";
import {
  makePose,
  type MutablePose,
  pointWithinWorld,
  type Pose,
  poseOf,
  setPose,
  wrapAngle,
} from "../../core/geo/mod.ts";
import {
  type BaseCellHost,
  BaseCellPart,
  CellBackupKeeper,
  type CellOwner,
  type CellRoute,
  type CellState,
} from "../cell_link/mod.ts";
import { ClientFrameOrder, SpeedCheck } from "../client/mod.ts";
import type { BaseScript } from "../../core/base_script.ts";
import type { BaseScriptRuntime } from "./scripts.ts";
import { moveTrace } from "../../core/trace.ts";
import { BaseSaves, type SavedBase, type StoredEntity } from "../persist/mod.ts";

/** The client connection as a proxy uses it. */
export interface ClientLink {
  readonly remote: string;
  /** Bytes already in the client protocol (several messages may follow each other). */
  send(bytes: Uint8Array): void;
  sendMessage(m: ServerMessage): void;
  /** An error reply; `about` is the id of the message it answers (0 for none). */
  error(code: ErrorCodeValue, about: number, message: string): void;
  /** A request of the client that the server refused elsewhere (at the cell): an error reply, counted as abuse. */
  refused(code: ErrorCodeValue, about: number, message: string): void;
  close(reason: string, code?: number): void;
}

/** What a proxy needs from its baseapp. */
export interface ProxyHost extends BaseCellHost {
  readonly log: Logger;
  readonly maxSpeed: number;
  /** Moves per second a client is expected to send; beyond twice that they are dropped. */
  readonly moveRate: number;
  /** Milliseconds a proxy stays after its client went away, before it logs out. */
  readonly disconnectGraceMs: number;
  /** The base scripts: each proxy's script object, its methods and the calls it makes. */
  readonly scripts: BaseScriptRuntime;
  save(id: number, e: StoredEntity): Promise<void>;
  /** The proxy logged out and is gone. */
  removed(p: Proxy): void;
}

/** Makes a proxy of a baseapp (not yet held there): `cellProps` are its cell part's initial properties. */
export type MakeProxy = (
  id: number,
  type: EntityType,
  account: string,
  cellProps: PropertyContainer,
  position: Vec3Tuple,
  direction: Vec3Tuple,
) => Proxy;

/**
 * A base entity: with a client (a proxy proper), or base-only (a guild, a matchmaker), which never waits for a
 * client and has no account.
 */
export class Proxy implements ChangeSink, CellOwner, SavedBase {
  readonly base: PropertyContainer;
  readonly speed: SpeedCheck;
  /** The client's traffic from the cellapps, in order across cell changes. */
  readonly frames: ClientFrameOrder;
  /** The latest backup of the cell entity, to restore it from. */
  readonly cellBackup: CellBackupKeeper;
  client: ClientLink | null = null;
  /** Its base script, or null when its type has none. */
  readonly script: BaseScript | null;
  cellState: CellState = "none";
  spaceId = 0;
  direction: Vec3Tuple;
  entitiesEnabled = false;
  witness = false;
  /** The nonce of the last resume token its client was given: its backup carries it (base_backup.ts). */
  tokenNonce: string | null = null;
  #awaitingCorrection = false;
  /** The pose of the move being forwarded (`move`): filled in place for each, as the route copies it at once. */
  readonly #sent: MutablePose = makePose();
  /** Moves the client may still send now: refilled at twice the expected rate, up to a second's worth. */
  #moveTokens: number;
  #movesAt = performance.now();
  #grace: ReturnType<typeof setTimeout> | undefined;
  /** When its disconnect grace period ends (Date.now() ms); null while it has a client or none runs. */
  graceEndsAt: number | null = null;
  #loggingOut: Promise<void> | null = null;
  readonly #cell: BaseCellPart;
  readonly #saves: BaseSaves;
  #log: Logger;

  constructor(
    readonly id: number,
    readonly type: EntityType,
    readonly accountName: string,
    /** The cell part's properties while it has no cell entity (initial values, persistent ones). */
    readonly cellProps: PropertyContainer,
    private readonly route: CellRoute,
    private readonly host: ProxyHost,
    position: Vec3Tuple,
    direction: Vec3Tuple,
  ) {
    this.base = new PropertyContainer(type, "base", { entityId: id, sink: this });
    this.speed = new SpeedCheck(host.maxSpeed, position);
    this.#moveTokens = 2 * host.moveRate;
    this.direction = [...direction];
    this.#log = host.log.child(`[${type.name} ${id}]`, { entity: id });
    this.cellBackup = new CellBackupKeeper(id);
    this.frames = new ClientFrameOrder(
      (bytes) => this.client?.send(bytes),
      (spaceId, address) => this.#cell.located(spaceId, address),
      this.#log,
    );
    this.#cell = new BaseCellPart(this, route, this.frames, this.cellBackup, host, this.#log);
    this.#saves = new BaseSaves(this, route, host, this.#log);
    this.script = host.scripts.make(this);
  }

  get typeName(): string {
    return this.type.name;
  }

  get props(): Record<string, unknown> {
    return this.base.view;
  }

  get hasClient(): boolean {
    return this.client !== null;
  }

  /**
   * Whether it keeps a record in the database: a proxy (its account's), or a base-only entity with persistent
   * properties. One with nothing persistent (an instance's keeper) is never autosaved and leaves nothing behind.
   */
  get persisted(): boolean {
    return this.type.proxy || this.type.properties.some((p) => p.persistent);
  }

  /** True once logout started. */
  get loggingOut(): boolean {
    return this.#loggingOut !== null;
  }

  /** ChangeSink: base property changes the own client sees go to it. */
  onChange(prop: PropertyDef, path: readonly number[], value: unknown, start: number, end: number): void {
    if (!this.client || (prop.mask & AUD.ownClient) === 0) return;
    const w = new ByteWriter(32);
    writeChange(w, prop, path, value, start, end);
    this.client.sendMessage({ id: S2C.baseProperty, change: w.toBytes() });
  }

  /** Gives the proxy a client: a second login takes it over from the first one. */
  attach(client: ClientLink, loginOk: ServerMessage): void {
    clearTimeout(this.#grace);
    this.graceEndsAt = null;
    const old = this.client;
    if (old && old !== client) {
      this.client = null;
      old.error(ErrorCode.loggedInElsewhere, 0, "this account logged in from another connection");
      old.close("logged in elsewhere", 4002);
    }
    if (this.witness) this.#cell.setWitness(false);
    this.entitiesEnabled = false;
    this.#awaitingCorrection = false;
    this.client = client;
    client.sendMessage(loginOk);
    if (this.cellState === "live") this.#cell.tellReady();
    this.host.scripts.fire(this, "onClientConnected");
  }

  /** The client went away: the witness goes; after the grace period the proxy logs out. */
  detach(client: ClientLink): void {
    if (this.client !== client) return;
    this.client = null;
    this.entitiesEnabled = false;
    if (this.witness) this.#cell.setWitness(false);
    this.host.scripts.fire(this, "onClientDisconnected");
    if (this.#loggingOut) return;
    this.awaitClient();
  }

  /** Without a client (gone, or not back yet after a restore) it logs out unless one comes within the grace period. */
  awaitClient(): void {
    if (this.client || this.#loggingOut || !this.type.proxy) return;
    clearTimeout(this.#grace);
    this.graceEndsAt = Date.now() + this.host.disconnectGraceMs;
    this.#grace = setTimeout(() => {
      if (!this.client) this.logout().catch((e) => this.#log.error(`logout failed: ${errorText(e)}`));
    }, this.host.disconnectGraceMs);
  }

  /** Its state for its backup baseapp, or null when it is logging out (BaseSaves.backupState). */
  backupState(): BaseBackup | null {
    return this.#saves.backupState();
  }

  /** Restored from its backup, it is the base of the cell entity at `address` (BaseCellPart.rebased). */
  rebased(...args: Parameters<BaseCellPart["rebased"]>): void {
    this.#cell.rebased(...args);
  }

  /** Asks for the cell entity in `spaceId` (0 = a new space), else in `fallback` (BaseCellPart.create). */
  createCell(spaceId: number, fallback: Placement | null = null): Promise<void> {
    return this.#cell.create(spaceId, fallback);
  }

  /** A script places the cell entity (BaseCellPart.place). */
  placeCell(...args: Parameters<BaseCellPart["place"]>): ReturnType<BaseCellPart["place"]> {
    return this.#cell.place(...args);
  }

  /** A script destroys the cell entity (BaseCellPart.destroyByScript). */
  destroyCellByScript(): Promise<void> {
    return this.#cell.destroyByScript();
  }

  /** Bytes for the client from the real of `epoch` (see client_order.ts), which came from `from`. */
  fromCell(epoch: number, bytes: Uint8Array, from: string): void {
    this.frames.frame(epoch, bytes, from);
  }

  /** A backup of the cell entity from the cellapp at `from` (BaseCellPart.backedUp). */
  onCellBackup(backup: CellBackup, from: string): void {
    this.#cell.backedUp(backup, from);
  }

  /** A backup of the cell entity from the cellapp at `from`, as a record of a batch (BaseCellPart.backedUpRecord). */
  onCellBackupRecord(rec: CellBackupRecord, from: string): void {
    this.#cell.backedUpRecord(rec, from);
  }

  /** The cellapp at `address` died: the cell entity is restored if it was there (BaseCellPart.cellAppDied). */
  onCellAppDied(address: string): Promise<void> {
    return this.#cell.cellAppDied(address);
  }

  /** The real of `fromEpoch` moved to the cellapp at `address`; told by its old cellapp after its last frame. */
  onCellMoved(fromEpoch: number, spaceId: number, address: string, from: string): void {
    this.frames.moved(fromEpoch, spaceId, address, from);
  }

  /** The real of `epoch` was teleported, as the cellapp at `from` says (BaseCellPart.teleported). */
  onTeleported(epoch: number, spaceId: number, position: Vec3Tuple, direction: Vec3Tuple, from: string): void {
    this.#cell.teleported(epoch, spaceId, position, direction, from);
  }

  /** The cell entity is gone, as the cellapp at `from` says (BaseCellPart.destroyed). */
  onCellDestroyed(reason: string, from: string): void {
    this.#cell.destroyed(reason, from);
  }

  /** CellOwner: the client is told a position; its moves from before it are corrected without counting as abuse. */
  awaitCorrection(): void {
    this.#awaitingCorrection = true;
  }

  /** The cell refused a request of this proxy's client. */
  cellRefused(code: number, about: number, message: string): void {
    this.client?.refused(code as ErrorCodeValue, about, message);
  }

  /** The client is ready for AOI traffic. */
  enableEntities(): void {
    this.entitiesEnabled = true;
    if (this.cellState === "live" && !this.witness) this.#cell.setWitness(true);
  }

  /**
   * A position the client reports. Returns what was wrong (the caller replies
   * and counts abuse), or null when it went to the cell.
   */
  move(p: Pose): { code: ErrorCodeValue; message: string; abuse: boolean } | null {
    if (moveTrace.sampled(this.id)) moveTrace.stamp("baseapp", this.id, p.x);
    const now = performance.now(), limit = 2 * this.host.moveRate;
    this.#moveTokens = Math.min(limit, this.#moveTokens + (now - this.#movesAt) / 1000 * limit);
    this.#movesAt = now;
    if (this.#moveTokens < 1) {
      return {
        code: ErrorCode.rateLimited,
        message: `more than ${limit} moves per second; this one was dropped`,
        abuse: true,
      };
    }
    this.#moveTokens--;
    // Every client's every move passes here: checked as numbers, with nothing allocated that would outlive the call.
    const { x, y, z } = p, yaw = wrapAngle(p.yaw), pitch = wrapAngle(p.pitch), roll = wrapAngle(p.roll);
    if (!pointWithinWorld(x, y, z) || !Number.isFinite(yaw) || !Number.isFinite(pitch) || !Number.isFinite(roll)) {
      return {
        code: ErrorCode.badPosition,
        message: "the position must be within the world and the direction finite numbers",
        abuse: true,
      };
    }
    if (this.cellState !== "live") {
      return { code: ErrorCode.noCell, message: "no cell entity yet: wait for cellReady", abuse: false };
    }
    if (this.speed.check(x, y, z, now) === "tooFast") {
      const first = !this.#awaitingCorrection;
      this.#awaitingCorrection = true;
      this.client?.sendMessage({ id: S2C.forcedPosition, pose: poseOf(this.speed.position, this.direction) });
      return {
        code: ErrorCode.tooFast,
        message: `moved faster than ${this.host.maxSpeed} m/s; corrected to the last accepted position`,
        abuse: first,
      };
    }
    this.#awaitingCorrection = false;
    // A new array only when the direction changed: others keep a reference to it (a save in progress).
    const d = this.direction;
    if (d[0] !== yaw || d[1] !== pitch || d[2] !== roll) this.direction = [yaw, pitch, roll];
    this.route.sendMove(this.id, setPose(this.#sent, x, y, z, yaw, pitch, roll));
    return null;
  }

  /**
   * Forwards a checked call of an exposed cell method of `target` (kept until a cell backup holds it), which the
   * client says is of type `typeId` (the cell checks that, and adds the caller
   * as first argument).
   */
  callCell(
    target: number,
    typeId: number,
    method: number,
    args: Uint8Array,
  ): { code: ErrorCodeValue; message: string } | null {
    return this.#cell.call(target, typeId, method, args);
  }

  /** Client-to-server AOI messages (requestUpdate) for the witness, as the client framed them. */
  forwardAoi(bytes: Uint8Array): void {
    if (!this.witness) return; // No witness: nothing asked for them; the client's request is stale.
    this.route.send(CellMsg.clientAoi, this.id, bytes);
  }

  /** Runs an exposed base method whose arguments were checked (the client's call; what it returns is dropped). */
  async callBase(name: string, args: unknown[]): Promise<void> {
    await this.host.scripts.invoke(this, name, args);
  }

  /** A request to the cellapp of its cell entity, in order with what went there before. */
  routeRequest<A extends unknown[], R>(def: MessageDef<A, R>, ...args: A): Promise<R> {
    return this.route.request(def, ...args);
  }

  /** BaseEntityApi: a client method on the own client. */
  callClient(method: string, ...args: unknown[]): void {
    const m = this.type.method("client", method);
    this.client?.sendMessage({ id: S2C.baseClientCall, method: m.index, args: encodeArgs(m, args) });
  }

  /** Autosave: writes the persistent state in one commit without ending anything (BaseSaves.autosave). */
  autosave(): Promise<void> {
    return this.#saves.autosave();
  }

  /**
   * Its baseapp was fenced (base/cluster/base_fence.ts): it stops without a write or a word to its cell, whose base is the copy
   * restored elsewhere now; as if logged out, it backs up and saves nothing more.
   */
  fence(): void {
    clearTimeout(this.#grace);
    this.#loggingOut ??= Promise.resolve();
    this.#cell.stopAsking(new Error(`${this.type.name} ${this.id}: its baseapp was fenced`));
    this.route.setAddress(null);
    this.client = null;
  }

  /** writeToDB: the persistent state in one commit, after a save under way (BaseSaves.writeToDB). */
  writeToDB(): Promise<void> {
    return this.#saves.writeToDB();
  }

  /**
   * Destroys the cell part (collecting its persistent properties), writes everything in one commit, drops the client,
   * closing it with `reason` (an operator's kick, a baseapp's shutdown).
   */
  logout(reason = "logged out"): Promise<void> {
    this.#loggingOut ??= this.#logout(reason);
    return this.#loggingOut;
  }

  async #logout(reason: string): Promise<void> {
    clearTimeout(this.#grace);
    this.host.scripts.fire(this, "onDestroy");
    const asked = this.#cell.stopAsking(new Error(`${this.type.name} ${this.id} is logging out`));
    if (asked) await asked;
    const hadCell = this.cellState === "live";
    this.cellState = "destroying";
    await this.#saves.settled();
    const cellState = hadCell ? await this.#cell.destroy() : null;
    this.route.setAddress(null);
    try {
      const saved = this.persisted;
      if (saved) await this.host.save(this.id, this.#saves.snapshot(cellState));
      this.#log.info(
        `${this.accountName ? `${this.accountName} logged out` : "destroyed"}${saved ? " and saved" : ""}` +
          (reason === "logged out" ? "" : `: ${reason}`),
        this.spaceId ? { space: this.spaceId } : undefined,
      );
      this.client?.sendMessage({ id: S2C.loggedOut });
      this.client?.close(reason, 1000);
    } catch (e) {
      this.client?.error(ErrorCode.serverError, 0, `logout could not be saved: ${errorText(e)}`);
      this.client?.close("logout failed", 1011);
      throw e;
    } finally {
      this.client = null;
      this.host.removed(this);
    }
  }

  /** What would be stored now (BaseSaves.snapshot). */
  snapshot(cellState: Uint8Array | null = null): StoredEntity {
    return this.#saves.snapshot(cellState);
  }
}
