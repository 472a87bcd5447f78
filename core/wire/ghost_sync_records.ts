/**
 * The records of the batched ghost-sync message (CellMsg.ghostSyncs, Channel.record): one tick's batches of every
 * real of a cellapp for its ghosts in the cells of one peer cellapp go as one message of records, so a ghost update
 * costs a few byte writes and reads instead of a msgpack message of its own (encoded, framed, scanned, decoded and
 * checked). A record is what a ghostSync message carries: space, the ghost's cell, entity, batch number, and the
 * batch's ops. A reader checks the whole batch before anything in it is acted on: one that is not exactly whole
 * records of valid values is refused as one.
 */
import { type ByteReader, type ByteWriter, MAX_ENTITY_ID } from "../bytes/mod.ts";
import { isIntIn, readRecords } from "./records.ts";
import type { GhostOp } from "./cell_state.ts";

/** Op kinds of a ghost batch (cell/borders/ghosts.ts): pose, ghosted property change, history event. */
const POSE = 0, CHANGE = 1, EVENT = 2;

/** Most ops one record may carry (as the ghostSync message allows). */
export const MAX_RECORD_OPS = 100_000;

/**
 * Encodes the ops of one batch, once for all its ghosts (`writeGhostSync` copies them into each record); throws
 * on an op it does not know, which the real made.
 */
export function encodeGhostOps(w: ByteWriter, ops: readonly GhostOp[]): void {
  w.varint(ops.length);
  for (const op of ops) {
    switch (op[0]) {
      case POSE:
        w.u8(POSE);
        for (let i = 1; i <= 6; i++) w.f64(op[i] as number);
        w.u8(op[7] ? 1 : 0);
        break;
      case CHANGE:
        w.u8(CHANGE);
        w.blob(op[1] as Uint8Array);
        break;
      case EVENT:
        w.u8(EVENT);
        for (let i = 1; i <= 4; i++) w.f64(op[i] as number);
        w.blob(op[5] as Uint8Array);
        break;
      default:
        throw new Error(`ghost op of unknown kind ${String(op[0])}`);
    }
  }
}

/** Appends one record: the batch `seq` of entity `id` for its ghost in cell `cellId` of space `spaceId`. */
export function writeGhostSync(
  w: ByteWriter,
  spaceId: number,
  cellId: number,
  id: number,
  seq: number,
  ops: Uint8Array,
): void {
  w.varint(spaceId);
  w.varint(cellId);
  w.varint(id);
  w.varint(seq);
  w.raw(ops);
}

/** One decoded record. */
export interface GhostSyncRecord {
  spaceId: number;
  cellId: number;
  id: number;
  seq: number;
  ops: GhostOp[];
}

function readOps(r: ByteReader): GhostOp[] {
  const n = r.varint();
  if (n > MAX_RECORD_OPS) throw new RangeError(`${n} ops (at most ${MAX_RECORD_OPS})`);
  const ops: GhostOp[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const kind = r.u8();
    switch (kind) {
      case POSE: {
        const x = r.f64(), y = r.f64(), z = r.f64(), yaw = r.f64(), pitch = r.f64(), roll = r.f64();
        const ground = r.u8();
        if (ground > 1) throw new RangeError(`op ${i}: on-ground flag ${ground}`);
        ops[i] = [POSE, x, y, z, yaw, pitch, roll, ground === 1];
        break;
      }
      case CHANGE:
        ops[i] = [CHANGE, r.blob()];
        break;
      case EVENT: {
        const seq = r.f64(), prop = r.f64(), level = r.f64(), distance = r.f64();
        ops[i] = [EVENT, seq, prop, level, distance, r.blob()];
        break;
      }
      default:
        throw new RangeError(`op ${i} of unknown kind ${kind}`);
    }
  }
  return ops;
}

/**
 * Decodes and checks every record of `records`, then calls `each` for them in order; returns why the batch was
 * refused (nothing acted on), or null.
 */
export function readGhostSyncs(records: Uint8Array, each: (rec: GhostSyncRecord) => void): string | null {
  return readRecords(records, (r) => {
    const spaceId = r.varint(), cellId = r.varint(), id = r.varint(), seq = r.varint();
    if (!isIntIn(spaceId, 1, 2 ** 32 - 1)) throw new RangeError(`space id ${spaceId} out of range`);
    if (!isIntIn(cellId, 1, 2 ** 31)) throw new RangeError(`cell id ${cellId} out of range`);
    if (!isIntIn(id, 1, MAX_ENTITY_ID)) throw new RangeError(`entity id ${id} out of range`);
    if (!isIntIn(seq, 0, 2 ** 53)) throw new RangeError(`batch number ${seq} out of range`);
    return { spaceId, cellId, id, seq, ops: readOps(r) };
  }, each);
}
