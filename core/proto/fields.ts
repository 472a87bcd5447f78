/**
 * Field codecs of the client protocol: what a declared message's fields are made of (declare.ts). Little-endian;
 * varints and strings as ByteWriter writes them.
 */
import { type ByteWriter, MAX_ENTITY_ID } from "../bytes/mod.ts";
import { type MutablePose, type Pose, withinWorld } from "../geo/mod.ts";
import type { Codec } from "./declare.ts";
import { ErrorCode, ProtocolError } from "./errors.ts";

/** [x, y, z] or [yaw, pitch, roll], as sent. */
export type Vec3Tuple = [number, number, number];

/** One byte, 0-255. */
export const u8: Codec<number> = {
  wire: "u8",
  write: (w, v) => w.u8(v),
  read: (r) => r.u8(),
};

/** An unsigned LEB128 integer. */
export const varint: Codec<number> = {
  wire: "varint",
  write: (w, v) => w.varint(v),
  read: (r) => r.varint(),
};

/** Length-prefixed UTF-8 text. */
export const string: Codec<string> = {
  wire: "string",
  write: (w, v) => w.string(v),
  read: (r) => r.string(),
};

/** Length-prefixed bytes. */
export const blob: Codec<Uint8Array> = {
  wire: "blob",
  write: (w, v) => w.blob(v),
  read: (r) => r.blob(),
};

/** Text of at most `max` UTF-16 units; a longer one is refused as badArguments. */
export function shortString(max: number): Codec<string> {
  return {
    wire: "string",
    write: (w, v) => w.string(v),
    read: (r) => r.string(),
    check: (v) => v.length > max ? [ErrorCode.badArguments, `${v.length} characters, at most ${max}`] : null,
  };
}

/** varint n, then n strings; more than `max` is malformed. */
export function stringList(max: number): Codec<readonly string[], string[]> {
  return {
    wire: "varint n, n × string",
    write: (w, v) => {
      w.varint(v.length);
      for (const s of v) w.string(s);
    },
    read: (r) => {
      const n = r.varint();
      if (n > max) throw new ProtocolError(ErrorCode.malformed, `${n} items, at most ${max}`);
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(r.string());
      return out;
    },
  };
}

/** An entity id (varint); one outside 1..MAX_ENTITY_ID is refused as badArguments. */
export const entityId: Codec<number> = {
  wire: "varint",
  write: (w, v) => w.varint(v),
  read: (r) => r.varint(),
  check: (v) => v < 1 || v > MAX_ENTITY_ID ? [ErrorCode.badArguments, `no entity ${v}`] : null,
};

/** A space id or none: varint 0 for none, else id + 1; an id beyond 2^32 - 1 is refused as badArguments. */
export const spaceOrNone: Codec<number | null> = {
  wire: "varint (0: none, else id + 1)",
  write: (w, v) => w.varint(v === null ? 0 : v + 1),
  read: (r) => {
    const v = r.varint();
    return v === 0 ? null : v - 1;
  },
  check: (v) => v !== null && v > 2 ** 32 - 1 ? [ErrorCode.badArguments, `no space ${v}`] : null,
};

function writeVec(w: ByteWriter, v: readonly number[]): void {
  w.f32(v[0]);
  w.f32(v[1]);
  w.f32(v[2]);
}

/** f32 x y z. */
export const vec3: Codec<readonly number[], Vec3Tuple> = {
  wire: "f32 x y z",
  write: writeVec,
  read: (r) => [r.f32(), r.f32(), r.f32()],
};

/** u8 0, or u8 1 then f32 x y z; a position outside the world is refused as badPosition. */
export const positionOrNone: Codec<readonly number[] | null, Vec3Tuple | null> = {
  wire: "u8 has, [f32 x y z]",
  write: (w, v) => {
    w.u8(v ? 1 : 0);
    if (v) writeVec(w, v);
  },
  read: (r) => r.u8() ? [r.f32(), r.f32(), r.f32()] : null,
  check: (v) => v && !withinWorld(v) ? [ErrorCode.badPosition, `${v} is not within the world`] : null,
};

/** f32 x y z, f32 yaw pitch roll. */
export const pose: Codec<Pose, MutablePose> = {
  wire: "f32 x y z, f32 yaw pitch roll",
  write: writePose,
  read: (r) => ({ x: r.f32(), y: r.f32(), z: r.f32(), yaw: r.f32(), pitch: r.f32(), roll: r.f32() }),
};

/** Writes a pose as the `pose` field does: straight from its six fields (an entity will do), nothing allocated. */
export function writePose(w: ByteWriter, p: Pose): void {
  w.f32(p.x);
  w.f32(p.y);
  w.f32(p.z);
  w.f32(p.yaw);
  w.f32(p.pitch);
  w.f32(p.roll);
}
