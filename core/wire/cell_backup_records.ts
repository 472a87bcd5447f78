/**
 * The records of the batched cell-backup message (BackupMsg.cellBackups, Channel.record): one tick's backups of cell
 * entities with a base, for one baseapp, go as one message. A record names the base and carries what the baseapp acts
 * on when the backup comes (its epoch, to order it among the client's frames, and the last client call it holds,
 * which confirms the calls before it), then the backup as a msgpack value of its own. The baseapp keeps those bytes as
 * they came and decodes them only to restore or back the base up (backup_bytes.ts).
 */
import { type ByteWriter, MAX_ENTITY_ID } from "../bytes/mod.ts";
import { isIntIn, readRecords } from "./records.ts";
import type { CellBackup } from "./backup_interface.ts";
import { encodeBackupShared } from "./backup_bytes.ts";

/** Appends one record: the backup of the cell entity of base `id`. */
export function writeCellBackup(w: ByteWriter, id: number, backup: CellBackup): void {
  w.varint(id);
  w.varint(backup.spaceId);
  w.varint(backup.epoch);
  w.varint(backup.entity.clientCallSeq ?? 0);
  w.blob(encodeBackupShared(backup));
}

/** One record as it came: the base, what the baseapp acts on at once, and the backup's bytes (a copy). */
export interface CellBackupRecord {
  id: number;
  spaceId: number;
  epoch: number;
  /** The last client call the backup holds (EntitySnapshot.clientCallSeq). */
  clientCallSeq: number;
  bytes: Uint8Array;
}

/**
 * Reads every record of `records` (the numbers checked, the backups' bytes not decoded), then calls `each` for them
 * in order; returns why the batch was refused (nothing acted on), or null.
 */
export function readCellBackups(records: Uint8Array, each: (rec: CellBackupRecord) => void): string | null {
  return readRecords(records, (r) => {
    const id = r.varint(), spaceId = r.varint(), epoch = r.varint(), clientCallSeq = r.varint();
    if (!isIntIn(id, 1, MAX_ENTITY_ID)) throw new RangeError(`entity id ${id} out of range`);
    if (!isIntIn(spaceId, 1, 2 ** 32 - 1)) throw new RangeError(`space id ${spaceId} out of range`);
    if (!isIntIn(epoch, 0, 2 ** 53)) throw new RangeError(`epoch ${epoch} out of range`);
    if (!isIntIn(clientCallSeq, 0, 2 ** 53)) throw new RangeError(`client call ${clientCallSeq} out of range`);
    const bytes = r.blob();
    if (bytes.length === 0) throw new RangeError(`no backup for entity ${id}`);
    return { id, spaceId, epoch, clientCallSeq, bytes };
  }, each);
}
