/**
 * The witness's writers of the AoI messages (aoi.ts declares them): the same bytes as the declaration, from positional
 * values straight out of its entities and rows, allocating nothing. tests/proto checks each against the declaration.
 */
import type { ByteWriter } from "../bytes/mod.ts";
import type { PropertyDef } from "../def/mod.ts";
import { packAngle, PACKED_XYZ_BYTES, packXZ, packY, type Pose } from "../geo/mod.ts";
import { writePose } from "./fields.ts";
import {
  AOI_MSG,
  DIR_NONE,
  DIR_Y,
  DIR_YP,
  DIR_YPR,
  NO_ALIAS,
  POS_FULL,
  POS_XYZ,
  POS_XZ,
  VOLATILE,
  writeStamps,
} from "./aoi.ts";

function writeRef(w: ByteWriter, alias: number, id: number): void {
  w.u8(alias);
  if (alias === NO_ALIAS) w.varint(id);
}

/** Writes the varint count and (client index, value) pairs of the first `n` of `props` (a `props` field). */
export function writeProps(w: ByteWriter, values: readonly unknown[], props: readonly PropertyDef[], n: number): void {
  w.varint(n);
  for (let i = 0; i < n; i++) {
    const p = props[i];
    w.varint(p.clientIndex);
    p.type.write(w, values[p.index]);
  }
}

/** S→C enter. */
export function writeEnter(w: ByteWriter, id: number, alias: number, life: number): void {
  w.u8(AOI_MSG.enter);
  w.varint(id);
  w.u8(alias);
  w.varint(life);
}

/** S→C create, its pose straight from `pose` (the entity itself will do) and the first `n` of `props`. */
export function writeCreate(
  w: ByteWriter,
  id: number,
  typeId: number,
  pose: Pose,
  detailLevel: number,
  values: readonly unknown[],
  props: readonly PropertyDef[],
  n: number,
): void {
  w.u8(AOI_MSG.create);
  w.varint(id);
  w.varint(typeId);
  writePose(w, pose);
  w.u8(detailLevel);
  writeProps(w, values, props, n);
}

/** S→C leave, with the first `n` of `stamps`. */
export function writeLeave(w: ByteWriter, id: number, stamps: ArrayLike<number>, n: number): void {
  w.u8(AOI_MSG.leave);
  w.varint(id);
  writeStamps(w, stamps, n);
}

/** S→C property: a change already encoded by writeChange in the client index space. */
export function writeProperty(w: ByteWriter, alias: number, id: number, change: Uint8Array): void {
  w.u8(AOI_MSG.property);
  writeRef(w, alias, id);
  w.raw(change);
}

/** S→C detailLevel, with the first `n` of `props`. */
export function writeDetailLevel(
  w: ByteWriter,
  alias: number,
  id: number,
  level: number,
  values: readonly unknown[],
  props: readonly PropertyDef[],
  n: number,
): void {
  w.u8(AOI_MSG.detailLevel);
  writeRef(w, alias, id);
  w.u8(level);
  writeProps(w, values, props, n);
}

/** S→C reference. */
export function writeReference(w: ByteWriter, x: number, y: number, z: number, scale: number): void {
  w.u8(AOI_MSG.reference);
  w.f32(x);
  w.f32(y);
  w.f32(z);
  w.f32(scale);
}

/** S→C method: `call` holds the `method` and `args` fields as writeMethodCall wrote them. */
export function writeMethod(w: ByteWriter, alias: number, id: number, call: Uint8Array): void {
  w.u8(AOI_MSG.method);
  writeRef(w, alias, id);
  w.raw(call);
}

/** S→C ownProperty (bytes from writeChange, client index space). */
export function writeOwnProperty(w: ByteWriter, change: Uint8Array): void {
  w.u8(AOI_MSG.ownProperty);
  w.raw(change);
}

/** S→C ownMethod (bytes from writeMethodCall). */
export function writeOwnMethod(w: ByteWriter, call: Uint8Array): void {
  w.u8(AOI_MSG.ownMethod);
  w.raw(call);
}

/** C→S requestUpdate. */
export function writeRequestUpdate(w: ByteWriter, id: number, life: number, stamps: ArrayLike<number>): void {
  w.u8(AOI_MSG.requestUpdate);
  w.varint(id);
  w.varint(life);
  writeStamps(w, stamps, stamps.length);
}

/**
 * S→C volatile update: code 64 + 16·hasAlias + 4·posType + dirType, then the alias (u8) or the full id (varint),
 * the position by its type (0 PackedXYZ, 1 PackedXZ, both relative to the reference position; 2 none; 3 f32 x y z)
 * and the direction by its type (0 yaw pitch roll, 1 yaw pitch, 2 yaw, int8 each; 3 none). For POS_XZ/POS_XYZ,
 * x/y/z are relative to the reference position and must fit the packed form at `scale`; returns false, writing
 * nothing, when they do not (the caller falls back to POS_FULL with absolute values). Scalars rather than a Pose:
 * the witness reads them from its entity rows and subtracts the reference, once per entity per tick.
 */
export function writeVolatile(
  w: ByteWriter,
  alias: number,
  id: number,
  posType: number,
  x: number,
  y: number,
  z: number,
  dirType: number,
  yaw: number,
  pitch: number,
  roll: number,
  scale: number,
): boolean {
  let xz = 0, py = 0;
  if (posType === POS_XZ || posType === POS_XYZ) {
    xz = packXZ(x, z, scale);
    if (xz < 0) return false;
    if (posType === POS_XYZ) {
      py = packY(y, scale);
      if (py < 0) return false;
    }
  } else if (posType === POS_FULL) {
    writeVolatileFull(w, alias, id, x, y, z, dirType, yaw, pitch, roll);
    return true;
  }
  const yi = dirType !== DIR_NONE ? packAngle(yaw) : 0;
  const pi = dirType === DIR_YP || dirType === DIR_YPR ? packAngle(pitch) : 0;
  writeVolatilePacked(w, alias, id, posType, xz, py, dirType, yi, pi, dirType === DIR_YPR ? packAngle(roll) : 0);
  return true;
}

/**
 * writeVolatile for a position already packed (`xz` from packXZ, `py` from packY for POS_XYZ) or none, and angles
 * already packed by packAngle (those the direction type leaves out are ignored). Only integers: a caller that is not
 * inlined with it boxes no numbers to call it.
 */
export function writeVolatilePacked(
  w: ByteWriter,
  alias: number,
  id: number,
  posType: number,
  xz: number,
  py: number,
  dirType: number,
  yaw: number,
  pitch: number,
  roll: number,
): void {
  const hasAlias = alias !== NO_ALIAS;
  // One ensure, then straight into the buffer: this runs for most entities of every AoI every tick.
  w.ensure(2 + PACKED_XYZ_BYTES + 12 + 8);
  const b = w.buf;
  let at = w.pos;
  b[at++] = VOLATILE + (hasAlias ? 16 : 0) + posType * 4 + dirType;
  if (hasAlias) b[at++] = alias;
  else {
    w.pos = at;
    w.varint(id);
    at = w.pos;
  }
  if (posType === POS_XZ || posType === POS_XYZ) {
    b[at++] = xz & 0xff;
    b[at++] = (xz >>> 8) & 0xff;
    b[at++] = xz >>> 16;
    if (posType === POS_XYZ) {
      b[at++] = py & 0xff;
      b[at++] = py >>> 8;
    }
  }
  w.pos = putDirection(b, at, dirType, yaw, pitch, roll);
}

/** Writes at `at` the packed angles `dirType` keeps (yaw, pitch, roll from packAngle); returns the end. */
function putDirection(b: Uint8Array, at: number, dirType: number, yaw: number, pitch: number, roll: number): number {
  if (dirType !== DIR_NONE) {
    b[at++] = yaw & 0xff;
    if (dirType !== DIR_Y) {
      b[at++] = pitch & 0xff;
      if (dirType === DIR_YPR) b[at++] = roll & 0xff;
    }
  }
  return at;
}

/** writeVolatile for POS_FULL: absolute f32 x y z. */
function writeVolatileFull(
  w: ByteWriter,
  alias: number,
  id: number,
  x: number,
  y: number,
  z: number,
  dirType: number,
  yaw: number,
  pitch: number,
  roll: number,
): void {
  const hasAlias = alias !== NO_ALIAS;
  w.u8(VOLATILE + (hasAlias ? 16 : 0) + POS_FULL * 4 + dirType);
  if (hasAlias) w.u8(alias);
  else w.varint(id);
  w.f32(x);
  w.f32(y);
  w.f32(z);
  w.ensure(3);
  w.pos = putDirection(w.buf, w.pos, dirType, packAngle(yaw), packAngle(pitch), packAngle(roll));
}
