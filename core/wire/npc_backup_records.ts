/**
 * The records of the batched NPC-backup message (BackupMsg.npcBackups, Channel.record): one tick's backups of reals
 * without a base for the buddy cellapp go as one message, each backup a msgpack value of its own in a record that
 * names its space and entity. The buddy keeps each backup's bytes as they came and decodes them only to restore
 * (decodeNpcBackup): almost every backup is replaced a period later unread, and a decode costs more than the copy.
 */
import { type ByteWriter, MAX_ENTITY_ID } from "../bytes/mod.ts";
import { isIntIn, readRecords } from "./records.ts";
import type { CellBackup } from "./backup_interface.ts";
import { decodeBackup, encodeBackupShared } from "./backup_bytes.ts";

/** Appends one record: the backup of entity `backup.entity.id` of space `backup.spaceId`. */
export function writeNpcBackup(w: ByteWriter, backup: CellBackup): void {
  w.varint(backup.spaceId);
  w.varint(backup.entity.id);
  w.blob(encodeBackupShared(backup));
}

/** One record as it came: its space, entity, and the backup's bytes (a copy, kept as they are). */
export interface NpcBackupRecord {
  spaceId: number;
  id: number;
  bytes: Uint8Array;
}

/**
 * Reads every record of `records` (space and entity checked, the backups' bytes not decoded), then calls `each` for
 * them in order; returns why the batch was refused (nothing acted on), or null.
 */
export function readNpcBackups(records: Uint8Array, each: (rec: NpcBackupRecord) => void): string | null {
  return readRecords(records, (r) => {
    const spaceId = r.varint(), id = r.varint();
    if (!isIntIn(spaceId, 1, 2 ** 32 - 1)) throw new RangeError(`space id ${spaceId} out of range`);
    if (!isIntIn(id, 1, MAX_ENTITY_ID)) throw new RangeError(`entity id ${id} out of range`);
    const bytes = r.blob();
    if (bytes.length === 0) throw new RangeError(`no backup for entity ${id}`);
    return { spaceId, id, bytes };
  }, each);
}

/**
 * Decodes and checks the backup of a record; throws, saying why, when it is not a backup of the entity and space
 * the record named.
 */
export function decodeNpcBackup(rec: NpcBackupRecord): CellBackup {
  return decodeBackup(rec.bytes, rec.id, rec.spaceId);
}
