/**
 * The records of the batched NPC-backup message (BackupMsg.npcBackups, Channel.record): one tick's backups of reals
 * without a base for the buddy cellapp go as one message, each backup a msgpack value of its own in a record that
 * names its space and entity. The buddy keeps each backup's bytes as they came and decodes them only to restore
 * (decodeNpcBackup): almost every backup is replaced a period later unread, and a decode costs more than the copy.
 */
import { errorText } from "../errors.ts";
import { Decoder, Encoder } from "@msgpack/msgpack";
import { ByteReader, type ByteWriter, DEFAULT_MSGPACK_LIMITS, MAX_ENTITY_ID, scanMsgpack } from "../bytes/mod.ts";
import { wireCodec } from "./frame.ts";
import { type CellBackup, cellBackup } from "./backup_interface.ts";

const encoder = new Encoder({ extensionCodec: wireCodec });
const decoder = new Decoder({ extensionCodec: wireCodec });

/** Appends one record: the backup of entity `backup.entity.id` of space `backup.spaceId`. */
export function writeNpcBackup(w: ByteWriter, backup: CellBackup): void {
  w.varint(backup.spaceId);
  w.varint(backup.entity.id);
  w.blob(encoder.encodeSharedRef(backup));
}

/** One record as it came: its space, entity, and the backup's bytes (a copy, kept as they are). */
export interface NpcBackupRecord {
  spaceId: number;
  id: number;
  bytes: Uint8Array;
}

const isInt = (v: number, min: number, max: number): boolean => Number.isInteger(v) && v >= min && v <= max;

/**
 * Reads every record of `records` (space and entity checked, the backups' bytes not decoded), then calls `each` for
 * them in order; returns why the batch was refused (nothing acted on), or null.
 */
export function readNpcBackups(records: Uint8Array, each: (rec: NpcBackupRecord) => void): string | null {
  const r = new ByteReader(records);
  const out: NpcBackupRecord[] = [];
  try {
    while (r.remaining > 0) {
      const spaceId = r.varint(), id = r.varint();
      if (!isInt(spaceId, 1, 2 ** 32 - 1)) throw new RangeError(`space id ${spaceId} out of range`);
      if (!isInt(id, 1, MAX_ENTITY_ID)) throw new RangeError(`entity id ${id} out of range`);
      const bytes = r.blob();
      if (bytes.length === 0) throw new RangeError(`no backup for entity ${id}`);
      out.push({ spaceId, id, bytes });
    }
  } catch (e) {
    return `record ${out.length}: ${errorText(e)}`;
  }
  for (const rec of out) each(rec);
  return null;
}

/**
 * Decodes and checks the backup of a record; throws, saying why, when it is not a backup of the entity and space
 * the record named.
 */
export function decodeNpcBackup(rec: NpcBackupRecord): CellBackup {
  const refused = scanMsgpack(rec.bytes, DEFAULT_MSGPACK_LIMITS);
  if (refused !== null) throw new Error(`backup of entity ${rec.id} refused: ${refused}`);
  let v: unknown;
  try {
    v = decoder.decode(rec.bytes);
  } catch (e) {
    throw new Error(`backup of entity ${rec.id} is not valid msgpack: ${errorText(e)}`, { cause: e });
  }
  const bad = cellBackup(v);
  if (bad) throw new Error(`backup of entity ${rec.id} refused: ${bad}`);
  const b = v as CellBackup;
  if (b.spaceId !== rec.spaceId || b.entity.id !== rec.id) {
    throw new Error(
      `backup of entity ${rec.id} in space ${rec.spaceId} holds entity ${b.entity.id} of space ${b.spaceId}`,
    );
  }
  return b;
}
