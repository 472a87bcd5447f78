/**
 * The records of the two batched client-traffic messages (Channel.record): client moves from a baseapp to a cellapp
 * (CellMsg.clientMoves) and client frames from a cellapp to a baseapp (BaseMsg.toClients). A batch is one message of
 * many fixed-layout records, so a move or a frame costs a few DataView writes and reads instead of a msgpack message
 * of its own. Readers check a whole batch before anything in it is acted on: a batch that is not exactly whole
 * records of valid values is refused as one.
 */
import { type ByteWriter, MAX_ENTITY_ID } from "../bytes/mod.ts";
import { MAX_COORD, type MutablePose, type Pose } from "../geo/mod.ts";

/** Bytes of one move record: entity id, then its pose x, y, z, yaw, pitch, roll, each a little-endian float64. */
export const MOVE_RECORD = 56;

/** Bytes before a frame record's frame: entity id and epoch (float64), frame length (uint32). */
export const FRAME_RECORD_HEAD = 20;

/** Largest frame that goes in a batch; a bigger one travels in a toClient message of its own. */
export const MAX_BATCHED_FRAME = 64 * 1024;

/** Largest epoch a frame record carries (the toClient message carries any). */
export const MAX_RECORD_EPOCH = 2 ** 53 - 1;

const isId = (v: number): boolean => Number.isInteger(v) && v >= 1 && v <= MAX_ENTITY_ID;
const isCoord = (v: number): boolean => v >= -MAX_COORD && v <= MAX_COORD;

/** Why a move may not be sent (an id or coordinate out of range, or not finite), or null when it may. */
export function checkMove(id: number, p: Pose): string | null {
  if (!isId(id)) return `entity id ${id} out of range`;
  if (
    !isCoord(p.x) || !isCoord(p.y) || !isCoord(p.z) || !isCoord(p.yaw) || !isCoord(p.pitch) || !isCoord(p.roll)
  ) return `position or direction of entity ${id} beyond ±${MAX_COORD}`;
  return null;
}

/** Appends one move record (checked with `checkMove` first: a cellapp drops a baseapp that sends a bad one). */
export function writeMove(w: ByteWriter, id: number, p: Pose): void {
  w.ensure(MOVE_RECORD);
  const v = w.view;
  let at = w.pos;
  v.setFloat64(at, id, true);
  v.setFloat64(at += 8, p.x, true);
  v.setFloat64(at += 8, p.y, true);
  v.setFloat64(at += 8, p.z, true);
  v.setFloat64(at += 8, p.yaw, true);
  v.setFloat64(at += 8, p.pitch, true);
  v.setFloat64(at += 8, p.roll, true);
  w.pos = at + 8;
}

/**
 * Called with each move of a batch; returning false stops the batch. `pose` is one object the reader refills for
 * every record: a visitor that keeps it past its call copies it (copyPose).
 */
export type MoveVisitor = (id: number, pose: Pose) => boolean;

/** Why `records` is not a batch of whole, valid move records (nothing in it may be acted on), or null when it is. */
export function checkMoves(records: Uint8Array): string | null {
  if (records.length % MOVE_RECORD !== 0) {
    return `${records.length} bytes are not whole move records of ${MOVE_RECORD} bytes`;
  }
  const v = new DataView(records.buffer, records.byteOffset, records.byteLength);
  for (let at = 0; at < records.length; at += MOVE_RECORD) {
    if (!isId(v.getFloat64(at, true))) return `move record ${at / MOVE_RECORD}: entity id out of range`;
    for (let k = 8; k < MOVE_RECORD; k += 8) {
      if (!isCoord(v.getFloat64(at + k, true))) {
        return `move record ${at / MOVE_RECORD}: a coordinate beyond ±${MAX_COORD}`;
      }
    }
  }
  return null;
}

/** Calls `each` for the move records of a batch `checkMoves` passed, in order, until it returns false. */
export function eachMove(records: Uint8Array, each: MoveVisitor): void {
  const v = new DataView(records.buffer, records.byteOffset, records.byteLength);
  const pose: MutablePose = { x: 0, y: 0, z: 0, yaw: 0, pitch: 0, roll: 0 };
  for (let at = 0; at + MOVE_RECORD <= records.length; at += MOVE_RECORD) {
    pose.x = v.getFloat64(at + 8, true);
    pose.y = v.getFloat64(at + 16, true);
    pose.z = v.getFloat64(at + 24, true);
    pose.yaw = v.getFloat64(at + 32, true);
    pose.pitch = v.getFloat64(at + 40, true);
    pose.roll = v.getFloat64(at + 48, true);
    if (!each(v.getFloat64(at, true), pose)) break;
  }
}

/**
 * Checks every move record of `records`, then calls `each` for them in order; returns why the batch was refused
 * (nothing acted on), or null.
 */
export function readMoves(records: Uint8Array, each: MoveVisitor): string | null {
  const bad = checkMoves(records);
  if (bad === null) eachMove(records, each);
  return bad;
}

/** Whether a frame may go in a batch: small enough, with an epoch a record carries. */
export function batchable(epoch: number, frame: Uint8Array): boolean {
  return frame.length <= MAX_BATCHED_FRAME && epoch <= MAX_RECORD_EPOCH;
}

/** Appends one frame record: the client of entity `id` gets `frame`, from the real of `epoch`. */
export function writeFrame(w: ByteWriter, id: number, epoch: number, frame: Uint8Array): void {
  w.ensure(FRAME_RECORD_HEAD + frame.length);
  const v = w.view;
  v.setFloat64(w.pos, id, true);
  v.setFloat64(w.pos + 8, epoch, true);
  v.setUint32(w.pos + 16, frame.length, true);
  w.buf.set(frame, w.pos + FRAME_RECORD_HEAD);
  w.pos += FRAME_RECORD_HEAD + frame.length;
}

/**
 * Checks every frame record of `records`, then calls `each` with each one's entity id, epoch and frame (a view into
 * `records`), in order; returns why the batch was refused (nothing acted on), or null.
 */
export function readFrames(
  records: Uint8Array,
  each: (id: number, epoch: number, frame: Uint8Array) => void,
): string | null {
  const v = new DataView(records.buffer, records.byteOffset, records.byteLength);
  let n = 0;
  for (let at = 0; at < records.length; n++) {
    if (records.length - at < FRAME_RECORD_HEAD) return `frame record ${n} is cut short`;
    const epoch = v.getFloat64(at + 8, true), len = v.getUint32(at + 16, true);
    if (!isId(v.getFloat64(at, true))) return `frame record ${n}: entity id out of range`;
    if (!(Number.isInteger(epoch) && epoch >= 0 && epoch <= MAX_RECORD_EPOCH)) return `frame record ${n}: bad epoch`;
    at += FRAME_RECORD_HEAD + len;
    if (at > records.length) return `frame record ${n} is cut short`;
  }
  for (let at = 0; at < records.length;) {
    const len = v.getUint32(at + 16, true), from = at + FRAME_RECORD_HEAD;
    each(v.getFloat64(at, true), v.getFloat64(at + 8, true), records.subarray(from, from + len));
    at = from + len;
  }
  return null;
}
