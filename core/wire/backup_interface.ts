/**
 * Cell entity backups (issue 12, seed 004's fault tolerance): each real's cell
 * state goes to its base every backup period; reals without a base (NPCs) go
 * to the buddy cellapp the cellappmgr assigns.
 */
import { message } from "./catalog.ts";
import { address, entityId, int, obj, optional, spaceId, tuple } from "./check.ts";
import { type EntitySnapshot, entitySnapshotCheck } from "./cell_interface.ts";

/** One real's cell state as its last backup had it. */
export interface CellBackup {
  spaceId: number;
  /** Properties (encodeCellBackup), position, direction, controllers (timers, movement, range triggers). */
  entity: EntitySnapshot;
  /** How many times the real had moved cell (its client's frames carry the same count). */
  epoch: number;
}

const cellBackup = obj({ spaceId, entity: entitySnapshotCheck, epoch: int(0, 2 ** 53) });

/** Messages of the backup mechanism. */
export const BackupMsg = {
  /**
   * The latest backup of the cell entity of base `entityId`, from the cellapp holding its real. The baseapp keeps it
   * only when it comes from the cellapp its frames say holds the real of that epoch (base/client_order.ts).
   */
  cellBackup: message<[number, CellBackup]>(200, "cellBackup", tuple(entityId, cellBackup), ["cellapp"]),
  /** The latest backup of a real without a base, kept by the buddy cellapp of the cellapp holding it. */
  npcBackup: message<[CellBackup]>(201, "npcBackup", tuple(cellBackup), ["cellapp"]),
  /** The cellappmgr names the cellapp this one backs its NPCs up to (null: none, it is alone). */
  setBuddy: message<[number | null, string | null]>(
    202,
    "setBuddy",
    tuple(optional(int(1, 2 ** 31)), optional(address)),
    ["cellappmgr"],
  ),
} as const;
