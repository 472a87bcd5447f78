/**
 * A proxy: a base entity with a client (BigWorld's Proxy). It owns the base
 * properties and persistence, creates its cell entity, asks it for a witness
 * once the client enabled entities (also when enableEntities came first, as
 * in seed 000), and routes the client's calls and movement to the cell.
 */
import {
  AUD,
  type ChangeSink,
  encodeCellBackup,
  encodePersistentState as encodePersistent,
  type EntityType,
  PropertyContainer,
  type PropertyDef,
  writeChange,
} from "../core/def/mod.ts";
import { ByteWriter } from "../core/def/bytes.ts";
import {
  encodeArgs,
  ErrorCode,
  type ErrorCodeValue,
  S2C,
  type ServerMessage,
  type Vec3Tuple,
} from "../core/def/client_protocol.ts";
import {
  type BaseBackup,
  type CellBackup,
  type CellEntitySpec,
  CellMsg,
  type MessageDef,
  RemoteError,
  type RestoredAt,
  sameAddress,
} from "../core/wire/mod.ts";
import type { Placement } from "../core/placement.ts";
import type { Logger } from "../core/log.ts";
import { withinWorld, wrapAngle } from "../core/geo/rect.ts";
import type { CellRoute } from "./cell_route.ts";
import { ClientFrameOrder } from "./client_order.ts";
import { CellBackupKeeper } from "./cell_backup.ts";
import type { BaseScript } from "../core/base_script.ts";
import type { BaseScriptRuntime } from "./scripts.ts";
import { SpeedCheck } from "./speed_check.ts";
import { moveTrace } from "../core/trace.ts";
import type { StoredEntity } from "./storage.ts";

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
export interface ProxyHost {
  /** This baseapp's address, for messages from the cell back to the base. */
  readonly address: string;
  readonly log: Logger;
  readonly maxSpeed: number;
  /** Moves per second a client is expected to send; beyond twice that they are dropped. */
  readonly moveRate: number;
  /** Milliseconds a proxy stays after its client went away, before it logs out. */
  readonly disconnectGraceMs: number;
  /** The base scripts: each proxy's script object, its methods and the calls it makes. */
  readonly scripts: BaseScriptRuntime;
  /** Asks the cellappmgr for the cell entity (waiting while it is away); gives up waiting when `signal` aborts. */
  createCellEntity(spec: CellEntitySpec, signal: AbortSignal): Promise<{ spaceId: number; cellappAddress: string }>;
  save(id: number, e: StoredEntity): Promise<void>;
  /** Asks the cellappmgr to re-create the cell entity from `backup` (its cellapp died). */
  restoreCellEntity(backup: CellBackup): Promise<RestoredAt>;
  /** The proxy logged out and is gone. */
  removed(p: Proxy): void;
}

/** Where the cell part is. */
export type CellState = "none" | "creating" | "live" | "destroying";

/**
 * A base entity: with a client (a proxy proper), or base-only (a guild, a matchmaker), which never waits for a
 * client and has no account.
 */
export class Proxy implements ChangeSink {
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
  /** Moves the client may still send now: refilled at twice the expected rate, up to a second's worth. */
  #moveTokens: number;
  #movesAt = performance.now();
  #grace: ReturnType<typeof setTimeout> | undefined;
  /** When its disconnect grace period ends (Date.now() ms); null while it has a client or none runs. */
  graceEndsAt: number | null = null;
  #loggingOut: Promise<void> | null = null;
  /** The autosave under way: logout waits for it, so that an older state never lands after the logout's. */
  #saving: Promise<void> | null = null;
  /** The cell's persistent state as it last sent it: what is saved when the cell cannot be asked. */
  #lastCellState: Uint8Array | null = null;
  /** The cell entity request under way, and how to stop it waiting for the cellappmgr. */
  #creating: { done: Promise<void>; abort: AbortController } | null = null;
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
      (spaceId, address) => this.onCellLocated(spaceId, address),
      this.#log,
    );
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
    if (this.witness) this.#setWitness(false);
    this.entitiesEnabled = false;
    this.#awaitingCorrection = false;
    this.client = client;
    client.sendMessage(loginOk);
    if (this.cellState === "live") this.#sendCellReady();
    this.host.scripts.fire(this, "onClientConnected");
  }

  /** The client went away: the witness goes; after the grace period the proxy logs out. */
  detach(client: ClientLink): void {
    if (this.client !== client) return;
    this.client = null;
    this.entitiesEnabled = false;
    if (this.witness) this.#setWitness(false);
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
      if (!this.client) this.logout().catch((e) => this.#log.error(`logout failed: ${(e as Error).message}`));
    }, this.host.disconnectGraceMs);
  }

  /** Its state for its backup baseapp, or null when it is logging out (base_backup.ts). */
  backupState(): BaseBackup | null {
    if (this.#loggingOut) return null;
    const cellapp = this.cellState === "live" ? this.route.address : null;
    return {
      entityId: this.id,
      type: this.type.name,
      account: this.accountName,
      base: encodePersistent(this.base),
      cell: cellapp === null ? null : this.cellBackup.latest,
      spaceId: this.spaceId,
      cellapp,
      position: [...this.speed.position],
      direction: [...this.direction],
      tokenNonce: this.tokenNonce,
    };
  }

  /**
   * Restored from its backup, it is the base of the cell entity on the cellapp at `address` (which took it as such
   * and said where the entity is); `cellBackup` is the backup its old base held, renumbered to the real's new epoch 0.
   */
  rebased(
    address: string,
    spaceId: number,
    position: Vec3Tuple,
    direction: Vec3Tuple,
    cellBackup: CellBackup | null,
  ): void {
    this.speed.reset(position);
    this.direction = [...direction];
    if (cellBackup) this.cellBackup.keep({ ...cellBackup, epoch: 0 });
    this.onCellLocated(spaceId, address);
  }

  /**
   * Asks the cellappmgr for the cell entity in `spaceId` (0 = a new space)
   * at the proxy's position. When the cellappmgr refuses it there (the space
   * is gone, ...), `fallback` is where it goes instead.
   */
  createCell(spaceId: number, fallback: Placement | null = null): Promise<void> {
    if (!this.type.hasCell || this.cellState !== "none") return Promise.resolve();
    this.cellState = "creating";
    const abort = new AbortController();
    const done = this.#createCell(spaceId, fallback, abort.signal).finally(() => (this.#creating = null));
    this.#creating = { done, abort };
    return done;
  }

  async #createCell(spaceId: number, fallback: Placement | null, signal: AbortSignal): Promise<void> {
    try {
      let where;
      try {
        where = await this.host.createCellEntity(this.#cellSpec(spaceId), signal);
      } catch (e) {
        if (!fallback || !(e instanceof RemoteError) || this.cellState !== "creating") throw e;
        this.#log.warn(
          `no cell entity in space ${spaceId || "(new)"} (${e.message}); going to space ${fallback.spaceId}`,
        );
        this.speed.reset(fallback.position);
        where = await this.host.createCellEntity(this.#cellSpec(fallback.spaceId), signal);
      }
      if (this.cellState === "creating") this.onCellLocated(where.spaceId, where.cellappAddress);
    } catch (e) {
      if (this.cellState !== "creating") return;
      this.cellState = "none";
      if (signal.aborted) return; // Logging out: nothing to tell.
      const why = `could not create the cell entity in space ${spaceId || "(new)"}: ${(e as Error).message}`;
      this.#log.warn(why);
      this.client?.error(ErrorCode.noCell, 0, why);
    }
  }

  #cellSpec(spaceId: number): CellEntitySpec {
    return {
      spaceId,
      entityId: this.id,
      type: this.type.name,
      position: [...this.speed.position],
      direction: [...this.direction],
      props: encodeCellBackup(this.cellProps),
      baseAddress: this.host.address,
      hasClient: true,
    };
  }

  /** The cell entity is (now) on the cellapp at `address`. */
  onCellLocated(spaceId: number, address: string): void {
    if (this.cellState === "destroying") return;
    const first = this.cellState !== "live";
    this.cellState = "live";
    this.spaceId = spaceId;
    this.route.setAddress(address);
    if (!first) return;
    this.frames.start(address);
    this.#log.debug(`cell entity in space ${spaceId} on ${address}`);
    if (this.client) this.#sendCellReady();
    if (this.entitiesEnabled && !this.witness) this.#setWitness(true);
  }

  /** Bytes for the client from the real of `epoch` (see client_order.ts), which came from `from`. */
  fromCell(epoch: number, bytes: Uint8Array, from: string): void {
    this.frames.frame(epoch, bytes, from);
  }

  /**
   * A backup of the cell entity from the cellapp at `from`: kept in order with its epoch's frames, if `from` holds
   * the real of that epoch; refused (counted and logged by the frame order) otherwise.
   */
  onCellBackup(backup: CellBackup, from: string): void {
    const refusedBefore = this.frames.stats.foreign;
    this.frames.notice(backup.epoch, from, () => {
      if (this.cellState === "live") this.cellBackup.keep(backup);
    });
    this.cellBackup.stats.refused += this.frames.stats.foreign - refusedBefore;
  }

  /**
   * The cellapp at `address` died. If it held the cell entity, the entity is restored from its latest backup where
   * the cellappmgr says; the client stays connected, hears cellReady again, and its witness is rebuilt there.
   */
  onCellAppDied(address: string): Promise<void> {
    const at = this.route.address;
    if (this.cellState !== "live" || at === null || !sameAddress(at, address)) return Promise.resolve();
    this.route.setAddress(null);
    this.cellState = "creating";
    this.witness = false;
    // Like a cell entity being created: a logout meanwhile waits for it, then destroys what it made.
    const done = this.#restoreCell(this.cellBackup.latest).finally(() => (this.#creating = null));
    this.#creating = { done, abort: new AbortController() };
    return done;
  }

  async #restoreCell(backup: CellBackup | null): Promise<void> {
    try {
      if (!backup) throw new Error("its cellapp died before its first backup");
      const where = await this.host.restoreCellEntity(backup);
      if (this.cellState !== "creating") return;
      this.frames.restart(backup.epoch + 1, where.cellappAddress);
      this.cellState = "live";
      this.spaceId = where.spaceId;
      this.route.setAddress(where.cellappAddress);
      this.speed.reset(backup.entity.position);
      this.direction = [...backup.entity.direction];
      this.#log.info(`cell entity restored from its backup in space ${where.spaceId} on ${where.cellappAddress}`, {
        space: where.spaceId,
      });
      if (this.client) this.#sendCellReady();
      if (this.entitiesEnabled) this.#setWitness(true);
    } catch (e) {
      if (this.cellState !== "creating") return;
      this.cellState = "none";
      this.frames.reset();
      this.cellBackup.clear();
      const why = `the cell entity was lost with its cellapp and not restored: ${(e as Error).message}`;
      this.#log.error(why);
      this.client?.sendMessage({ id: S2C.cellGone, reason: why });
    }
  }

  /** The real of `fromEpoch` moved to the cellapp at `address`; told by its old cellapp after its last frame. */
  onCellMoved(fromEpoch: number, spaceId: number, address: string, from: string): void {
    this.frames.moved(fromEpoch, spaceId, address, from);
  }

  /**
   * The real of `epoch` was teleported (as the cellapp at `from`, which held it, says): in order with its frames, the
   * speed check starts at the new position, and the client is told where it is now (BigWorld's forced position).
   * Moves the client sent from where it was are corrected to there without counting as abuse.
   */
  onTeleported(epoch: number, spaceId: number, position: Vec3Tuple, direction: Vec3Tuple, from: string): void {
    this.frames.notice(epoch, from, () => {
      if (this.cellState !== "live") return;
      this.speed.reset(position);
      this.direction = [...direction];
      this.spaceId = spaceId;
      this.#awaitingCorrection = true;
      this.client?.sendMessage({ id: S2C.forcedPosition, position: [...position], direction: [...direction] });
    });
  }

  /** The cell entity is gone (its space shut down, or a script destroyed it), as the cellapp at `from` says. */
  onCellDestroyed(reason: string, from: string): void {
    if (this.cellState === "destroying" || this.cellState === "none") return;
    const at = this.route.address;
    if (at === null || !sameAddress(from, at)) {
      this.#log.warn(`the cellapp at ${from} says the cell entity is gone, but it is on ${at}; ignored`);
      return;
    }
    this.cellState = "none";
    this.witness = false;
    this.frames.reset();
    this.cellBackup.clear();
    this.route.setAddress(null);
    this.client?.sendMessage({ id: S2C.cellGone, reason });
  }

  /** The cell refused a request of this proxy's client. */
  cellRefused(code: number, about: number, message: string): void {
    this.client?.refused(code as ErrorCodeValue, about, message);
  }

  /** The client is ready for AOI traffic. */
  enableEntities(): void {
    this.entitiesEnabled = true;
    if (this.cellState === "live" && !this.witness) this.#setWitness(true);
  }

  /**
   * A position the client reports. Returns what was wrong (the caller replies
   * and counts abuse), or null when it went to the cell.
   */
  move(pos: Vec3Tuple, dir: Vec3Tuple): { code: ErrorCodeValue; message: string; abuse: boolean } | null {
    if (moveTrace.sampled(this.id)) moveTrace.stamp("baseapp", this.id, pos[0]);
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
    const d: Vec3Tuple = [wrapAngle(dir[0]), wrapAngle(dir[1]), wrapAngle(dir[2])];
    if (!withinWorld(pos) || !d.every(Number.isFinite)) {
      return {
        code: ErrorCode.badPosition,
        message: "the position must be within the world and the direction finite numbers",
        abuse: true,
      };
    }
    if (this.cellState !== "live") {
      return { code: ErrorCode.noCell, message: "no cell entity yet: wait for cellReady", abuse: false };
    }
    if (this.speed.check(pos, now) === "tooFast") {
      const first = !this.#awaitingCorrection;
      this.#awaitingCorrection = true;
      this.client?.sendMessage({
        id: S2C.forcedPosition,
        position: [...this.speed.position],
        direction: this.direction,
      });
      return {
        code: ErrorCode.tooFast,
        message: `moved faster than ${this.host.maxSpeed} m/s; corrected to the last accepted position`,
        abuse: first,
      };
    }
    this.#awaitingCorrection = false;
    this.direction = d;
    this.route.sendMove(this.id, pos, this.direction);
    return null;
  }

  /**
   * Forwards a checked call of an exposed cell method of `target`, which the
   * client says is of type `typeId` (the cell checks that, and adds the caller
   * as first argument).
   */
  callCell(
    target: number,
    typeId: number,
    method: number,
    args: Uint8Array,
  ): { code: ErrorCodeValue; message: string } | null {
    if (this.cellState !== "live") return { code: ErrorCode.noCell, message: "no cell entity yet" };
    this.route.send(CellMsg.clientCall, this.id, target, typeId, method, args, this.host.address);
    return null;
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

  /**
   * Autosave: writes the persistent state (the cell part's as the cell sends it now) in one commit, as logout does,
   * without ending anything. Does nothing once logout started; a save under way is not started twice.
   */
  autosave(): Promise<void> {
    if (this.#loggingOut) return Promise.resolve();
    if (this.#saving) return this.#saving;
    const saving = this.#autosave().finally(() => {
      if (this.#saving === saving) this.#saving = null;
    });
    this.#saving = saving;
    return saving;
  }

  async #autosave(): Promise<void> {
    let cellState: Uint8Array | null = null;
    if (this.cellState === "live") {
      try {
        cellState = await this.route.request(CellMsg.cellPersistentState, this.id);
      } catch (e) {
        this.#log.warn(`autosave: the cell did not send its persistent properties (${(e as Error).message})`);
      }
    }
    // Logout saves a newer state once this one is done: this one must not be written after it.
    if (this.#loggingOut) return;
    await this.host.save(this.id, this.snapshot(cellState));
  }

  /**
   * Its baseapp was fenced (base/fence.ts): it stops without a write or a word to its cell, whose base is the copy
   * restored elsewhere now; as if logged out, it backs up and saves nothing more.
   */
  fence(): void {
    clearTimeout(this.#grace);
    this.#loggingOut ??= Promise.resolve();
    this.#creating?.abort.abort(new Error(`${this.type.name} ${this.id}: its baseapp was fenced`));
    this.route.setAddress(null);
    this.client = null;
  }

  /**
   * writeToDB: the persistent state (the cell part's as the cell sends it now) in one commit, after a save under way;
   * resolves once it is committed. Rejects once logout started (which writes it anyway).
   */
  async writeToDB(): Promise<void> {
    if (this.#loggingOut) throw new Error(`${this.type.name} ${this.id} is being destroyed: it is written then`);
    await this.#saving?.catch(() => {});
    await this.autosave();
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
    // A cell entity still asked for: stop waiting for the cellappmgr, and let an answer under way arrive so that
    // what it made is destroyed below rather than left behind.
    if (this.#creating) {
      this.#creating.abort.abort(new Error(`${this.type.name} ${this.id} is logging out`));
      await this.#creating.done;
    }
    const hadCell = this.cellState === "live";
    this.cellState = "destroying";
    await this.#saving?.catch(() => {}); // Its failure was logged by whoever started it.
    let cellState: Uint8Array | null = null;
    if (hadCell) {
      try {
        cellState = await this.route.request(CellMsg.destroyCellEntity, this.id);
      } catch (e) {
        this.#log.warn(`destroying the cell entity failed (${(e as Error).message}); saving its last known state`);
      }
    }
    this.route.setAddress(null);
    try {
      await this.host.save(this.id, this.snapshot(cellState));
      this.#log.info(
        `${this.accountName ? `${this.accountName} logged out` : "destroyed"} and saved` +
          (reason === "logged out" ? "" : `: ${reason}`),
        this.spaceId ? { space: this.spaceId } : undefined,
      );
      this.client?.sendMessage({ id: S2C.loggedOut });
      this.client?.close(reason, 1000);
    } catch (e) {
      this.client?.error(ErrorCode.serverError, 0, `logout could not be saved: ${(e as Error).message}`);
      this.client?.close("logout failed", 1011);
      throw e;
    } finally {
      this.client = null;
      this.host.removed(this);
    }
  }

  /**
   * What would be stored now; `cellState` is the cell's persistent state when it just sent it (else the last it
   * sent, else what the base holds for it).
   */
  snapshot(cellState: Uint8Array | null = null): StoredEntity {
    if (cellState) this.#lastCellState = cellState;
    return {
      type: this.type.name,
      base: encodePersistent(this.base),
      cell: this.#lastCellState ?? encodePersistent(this.cellProps),
      position: [...this.speed.position],
      direction: [...this.direction],
      spaceId: this.spaceId,
    };
  }

  #sendCellReady(): void {
    this.client?.sendMessage({ id: S2C.cellReady, spaceId: this.spaceId, position: [...this.speed.position] });
  }

  #setWitness(on: boolean): void {
    this.witness = on;
    this.route.send(on ? CellMsg.enableWitness : CellMsg.disableWitness, this.id);
  }
}
