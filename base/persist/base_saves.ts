/**
 * One base's persistent state, and writing it: what the database stores (the cell part's state as the cell last
 * sent it), an autosave at a time, writeToDB after a save under way, and what its backup baseapp keeps. Logout writes
 * the last state itself, after whatever save is under way, so that an older state never lands after it.
 */
import { errorText } from "../../core/errors.ts";
import { encodePersistentState as encodePersistent, type PropertyContainer } from "../../core/def/mod.ts";
import type { Vec3Tuple } from "../../core/proto/mod.ts";
import { type BaseBackup, CellMsg } from "../../core/wire/mod.ts";
import type { Logger } from "../../core/log.ts";
import type { CellBackupKeeper, CellRoute, CellState } from "../cell_link/mod.ts";
import type { StoredEntity } from "./storage.ts";

/** What saving reads of its base. */
export interface SavedBase {
  readonly id: number;
  readonly type: { readonly name: string };
  readonly accountName: string;
  readonly base: PropertyContainer;
  /** The cell part's properties while it has no cell entity. */
  readonly cellProps: PropertyContainer;
  readonly speed: { readonly position: Readonly<Vec3Tuple> };
  readonly direction: Vec3Tuple;
  readonly spaceId: number;
  readonly cellState: CellState;
  /** The latest backup of the cell entity. */
  readonly cellBackup: Pick<CellBackupKeeper, "bytes">;
  /** The nonce of the last resume token its client was given. */
  readonly tokenNonce: string | null;
  /** True once logout started: it writes the last state, nothing is saved after. */
  readonly loggingOut: boolean;
}

/** The saves of one base. */
export class BaseSaves {
  /** The autosave under way: logout waits for it, so that an older state never lands after the logout's. */
  #saving: Promise<void> | null = null;
  /** The cell's persistent state as it last sent it: what is saved when the cell cannot be asked. */
  #lastCellState: Uint8Array | null = null;

  constructor(
    private readonly owner: SavedBase,
    /** The way to the cell entity: its cellapp, and to ask it for its persistent state. */
    private readonly cell: Pick<CellRoute, "address" | "request">,
    private readonly store: { save(id: number, e: StoredEntity): Promise<void> },
    private readonly log: Logger,
  ) {}

  /**
   * Autosave: writes the persistent state (the cell part's as the cell sends it now) in one commit, as logout does,
   * without ending anything. Does nothing once logout started; a save under way is not started twice.
   */
  autosave(): Promise<void> {
    if (this.owner.loggingOut) return Promise.resolve();
    if (this.#saving) return this.#saving;
    const saving = this.#autosave().finally(() => {
      if (this.#saving === saving) this.#saving = null;
    });
    this.#saving = saving;
    return saving;
  }

  async #autosave(): Promise<void> {
    const o = this.owner;
    let cellState: Uint8Array | null = null;
    if (o.cellState === "live") {
      try {
        cellState = await this.cell.request(CellMsg.cellPersistentState, o.id);
      } catch (e) {
        this.log.warn(`autosave: the cell did not send its persistent properties (${errorText(e)})`);
      }
    }
    // Logout saves a newer state once this one is done: this one must not be written after it.
    if (o.loggingOut) return;
    await this.store.save(o.id, this.snapshot(cellState));
  }

  /**
   * writeToDB: the persistent state (the cell part's as the cell sends it now) in one commit, after a save under way;
   * resolves once it is committed. Rejects once logout started (which writes it anyway).
   */
  async writeToDB(): Promise<void> {
    const o = this.owner;
    if (o.loggingOut) throw new Error(`${o.type.name} ${o.id} is being destroyed: it is written then`);
    await this.settled();
    await this.autosave();
  }

  /** Resolves once the save under way (if any) is done; its failure was logged by whoever started it. */
  settled(): Promise<void> | undefined {
    return this.#saving?.catch(() => {});
  }

  /**
   * What would be stored now; `cellState` is the cell's persistent state when it just sent it (else the last it
   * sent, else what the base holds for it).
   */
  snapshot(cellState: Uint8Array | null = null): StoredEntity {
    const o = this.owner;
    if (cellState) this.#lastCellState = cellState;
    return {
      type: o.type.name,
      base: encodePersistent(o.base),
      cell: this.#lastCellState ?? encodePersistent(o.cellProps),
      position: [...o.speed.position],
      direction: [...o.direction],
      spaceId: o.spaceId,
    };
  }

  /** Its state for its backup baseapp, or null when it is logging out (base_backup.ts). */
  backupState(): BaseBackup | null {
    const o = this.owner;
    if (o.loggingOut) return null;
    const cellapp = o.cellState === "live" ? this.cell.address : null;
    return {
      entityId: o.id,
      type: o.type.name,
      account: o.accountName,
      base: encodePersistent(o.base),
      cell: cellapp === null ? null : o.cellBackup.bytes,
      spaceId: o.spaceId,
      cellapp,
      position: [...o.speed.position],
      direction: [...o.direction],
      tokenNonce: o.tokenNonce,
    };
  }
}
