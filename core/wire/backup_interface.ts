/**
 * Cell entity backups (docs/faults.md, "Backups"): each real's cell
 * state goes to its base every backup period; reals without a base (NPCs) go
 * to the buddy cellapp the cellappmgr assigns.
 */
import { message } from "./catalog.ts";
import { address, bool, bytes, type Check, entityId, int, obj, optional, spaceId, tuple } from "./check.ts";
import { type EntitySnapshot, entitySnapshotCheck } from "./cell_state.ts";

/** One real's cell state as its last backup had it. */
export interface CellBackup {
  spaceId: number;
  /** Properties (encodeCellBackup), position, direction, controllers (timers, movement, range triggers). */
  entity: EntitySnapshot;
  /** How many times the real had moved cell (its client's frames carry the same count). */
  epoch: number;
}

/** Checks a CellBackup on the wire. */
export const cellBackup: Check = obj({ spaceId, entity: entitySnapshotCheck, epoch: int(0, 2 ** 53) });

/** Messages of the backup mechanism. */
export const BackupMsg = {
  /**
   * The latest backup of the cell entity of base `entityId`, from the cellapp holding its real. The baseapp keeps it
   * only when it comes from the cellapp its frames say holds the real of that epoch (base/client/client_order.ts).
   */
  cellBackup: message<[number, CellBackup]>(200, "cellBackup", tuple(entityId, cellBackup), ["cellapp"]),
  /** The latest backup of a real without a base, kept by the buddy cellapp of the cellapp holding it. */
  npcBackup: message<[CellBackup]>(201, "npcBackup", tuple(cellBackup), ["cellapp"]),
  /**
   * One tick's npcBackups from a cellapp to its buddy, as records (core/wire/npc_backup_records.ts), batched per tick
   * on the channel (Channel.record): each as npcBackup. The first argument is unused (0).
   */
  npcBackups: message<[number, Uint8Array]>(206, "npcBackups", tuple(int(0, 0), bytes(16 * 1024 * 1024)), [
    "cellapp",
  ]),
  /**
   * One tick's cellBackups from a cellapp to one baseapp, as records (core/wire/cell_backup_records.ts), batched per
   * tick on the channel (Channel.record): each as cellBackup, kept as its bytes. The first argument is unused (0).
   */
  cellBackups: message<[number, Uint8Array]>(207, "cellBackups", tuple(int(0, 0), bytes(16 * 1024 * 1024)), [
    "cellapp",
  ]),
  /** The cellappmgr names the cellapp this one backs its NPCs up to (null: none, it is alone). */
  setBuddy: message<[number | null, string | null]>(
    202,
    "setBuddy",
    tuple(optional(int(1, 2 ** 31)), optional(address)),
    ["cellappmgr"],
  ),
} as const;

/** Where a restored cell entity now is. */
export interface RestoredAt {
  spaceId: number;
  cellapp: number;
  cellappAddress: string;
}

/** Messages of restoring cell entities from their backups when their cellapp died. */
export const RestoreMsg = {
  /**
   * The cellapp `cellappId` at `address` died (the cellappmgr dropped it and gave its area to the others): bases whose
   * cell entity was there restore it; so does its buddy (`buddyId`, null for none) for its NPCs. Another cellapp
   * holding NPC backups of it (its buddy before a reassignment) drops them: they are stale.
   */
  cellAppDied: message<[number, string, number | null]>(
    203,
    "cellAppDied",
    tuple(int(1, 2 ** 31), address, optional(int(1, 2 ** 31))),
    ["cellappmgr"],
  ),
  /**
   * Restores a cell entity from `backup` in the cell now covering its position: for its base at `baseAddress` (a
   * baseapp asks for its own bases only), or without a base (a buddy cellapp asks).
   */
  restoreCellEntity: message<[CellBackup, string | null, boolean], RestoredAt>(
    204,
    "restoreCellEntity",
    tuple(cellBackup, optional(address), bool),
    ["baseapp", "cellapp"],
  ),
  /** Re-creates the entity of `backup` in this cellapp's cell covering its position (sent by the cellappmgr). */
  restoreEntity: message<[CellBackup, string | null, boolean], boolean>(
    205,
    "restoreEntity",
    tuple(cellBackup, optional(address), bool),
    ["cellappmgr"],
  ),
} as const;
