/**
 * A cell backup kept as bytes (docs/faults.md, "Backups"): whoever keeps the latest backup of an entity (a buddy
 * cellapp for an NPC, a baseapp for its base's cell entity) keeps its msgpack bytes and decodes them only to restore.
 * Almost every backup is replaced a period later unread; kept decoded, each would be a tree of objects that outlives
 * a young-generation collection and is copied, then promoted, then left for a full collection to find.
 */
import { errorText } from "../errors.ts";
import { Decoder, Encoder } from "@msgpack/msgpack";
import { DEFAULT_MSGPACK_LIMITS, scanMsgpack } from "../bytes/mod.ts";
import { wireCodec } from "./frame.ts";
import { type CellBackup, cellBackup } from "./backup_interface.ts";

const encoder = new Encoder({ extensionCodec: wireCodec });
const decoder = new Decoder({ extensionCodec: wireCodec });

/** `backup` as the bytes of its msgpack value, in a buffer of their own (a copy: kept as long as the backup is). */
export function encodeBackup(backup: CellBackup): Uint8Array {
  return encoder.encode(backup);
}

/** `backup` as msgpack bytes in the encoder's shared buffer, valid until the next encode: to copy at once. */
export function encodeBackupShared(backup: CellBackup): Uint8Array {
  return encoder.encodeSharedRef(backup);
}

/**
 * Decodes and checks a backup's bytes; throws, saying why, when they are not a backup of entity `id` (and of space
 * `spaceId`, when given).
 */
export function decodeBackup(bytes: Uint8Array, id: number, spaceId: number | null = null): CellBackup {
  const refused = scanMsgpack(bytes, DEFAULT_MSGPACK_LIMITS);
  if (refused !== null) throw new Error(`backup of entity ${id} refused: ${refused}`);
  let v: unknown;
  try {
    v = decoder.decode(bytes);
  } catch (e) {
    throw new Error(`backup of entity ${id} is not valid msgpack: ${errorText(e)}`, { cause: e });
  }
  const bad = cellBackup(v);
  if (bad) throw new Error(`backup of entity ${id} refused: ${bad}`);
  const b = v as CellBackup;
  if (b.entity.id !== id || (spaceId !== null && b.spaceId !== spaceId)) {
    throw new Error(
      `backup of entity ${id}${
        spaceId === null ? "" : ` in space ${spaceId}`
      } holds entity ${b.entity.id} of space ${b.spaceId}`,
    );
  }
  return b;
}
