/**
 * Packed volatile data (docs/protocol.md, "AoI messages"): positions relative to a reference point as small floats
 * (PackedXZ on the ground, PackedXYZ otherwise) and angles as int8. A packed axis is a sign, a 3-bit exponent and a
 * mantissa: the magnitude (divided by the scale) plus 2 is stored as a float in [2, 512), so precision is finest near
 * the reference point and a value that does not fit must be sent as a full position.
 */

const EXP_MAX = 8;
const f32 = new Float32Array(1);
// Signed: the bits of a float in [2, 512) are below 2^31, and int32 arithmetic on them stays in a register.
const i32 = new Int32Array(f32.buffer);
/** Mantissa bits of a PackedXZ axis (and of X and Z in PackedXYZ). */
export const XZ_MANTISSA_BITS = 8;
/** Mantissa bits of PackedXYZ's Y, which gets the rest of its 16 bits. */
export const Y_MANTISSA_BITS = 12;
/** Largest |value| / scale a PackedXZ axis holds (exclusive): 2^9 - 2 less half a step of the top octave. */
export const PACKED_XZ_LIMIT = 509.5;
/** Bytes of a PackedXZ (two 12-bit axes). */
export const PACKED_XZ_BYTES = 3;
/** Bytes of a PackedXYZ (X and Z 12 bits each, Y 16 bits). */
export const PACKED_XYZ_BYTES = 5;

/**
 * Packs one value as sign | exponent (3 bits) | mantissa (`bits`), rounding to nearest; -1 when it does not fit.
 * Why +2: it makes every magnitude's float exponent at least 1, so 0 is exact and the 3 bits cover [0, 510).
 */
export function packFloat(v: number, scale: number, bits: number): number {
  const s = v < 0 ? 1 : 0;
  const a = Math.abs(v) / scale + 2;
  if (!(a < 512)) return -1; // also rejects NaN
  // The float32 bits hold exponent and mantissa already; adding half a step rounds, carrying into the exponent.
  f32[0] = a;
  const b = (i32[0] + (1 << (22 - bits))) | 0;
  const e = (b >>> 23) - 127;
  if (e > EXP_MAX) return -1;
  return (s << (bits + 3)) | ((e - 1) << bits) | ((b >>> (23 - bits)) & ((1 << bits) - 1));
}

/** Reverses packFloat. */
export function unpackFloat(p: number, scale: number, bits: number): number {
  const e = ((p >>> bits) & 7) + 1;
  const m = p & ((1 << bits) - 1);
  const a = (1 << e) * (1 + m / (1 << bits)) - 2;
  return ((p >>> (bits + 3)) & 1 ? -a : a) * scale;
}

/** Packs a relative X/Z as a 24-bit PackedXZ (X high, Z low); -1 when either axis does not fit. */
export function packXZ(x: number, z: number, scale = 1): number {
  const px = packFloat(x, scale, XZ_MANTISSA_BITS);
  if (px < 0) return -1;
  const pz = packFloat(z, scale, XZ_MANTISSA_BITS);
  if (pz < 0) return -1;
  return (px << 12) | pz;
}

/** The X of a PackedXZ. */
export function unpackX(p: number, scale = 1): number {
  return unpackFloat((p >>> 12) & 0xfff, scale, XZ_MANTISSA_BITS);
}

/** The Z of a PackedXZ. */
export function unpackZ(p: number, scale = 1): number {
  return unpackFloat(p & 0xfff, scale, XZ_MANTISSA_BITS);
}

/** Unpacks a PackedXZ as [x, z]. */
export function unpackXZ(p: number, scale = 1): [number, number] {
  return [unpackX(p, scale), unpackZ(p, scale)];
}

/** Packs Y for PackedXYZ as 16 bits; -1 when it does not fit. */
export function packY(y: number, scale = 1): number {
  return packFloat(y, scale, Y_MANTISSA_BITS);
}

/** Reverses packY. */
export function unpackY(p: number, scale = 1): number {
  return unpackFloat(p, scale, Y_MANTISSA_BITS);
}

/**
 * Packs a relative position as PackedXYZ: [xz (24 bits), y (16 bits)] (two numbers, so no 40-bit arithmetic);
 * null when an axis does not fit.
 */
export function packXYZ(x: number, y: number, z: number, scale = 1): [number, number] | null {
  const xz = packXZ(x, z, scale);
  const py = packY(y, scale);
  return xz < 0 || py < 0 ? null : [xz, py];
}

/** Unpacks PackedXYZ's two parts as [x, y, z]. */
export function unpackXYZ(xz: number, y: number, scale = 1): [number, number, number] {
  return [unpackX(xz, scale), unpackY(y, scale), unpackZ(xz, scale)];
}

/** An angle in radians as int8 (-128..127 = [-pi, pi)), wrapping first: BigWorld's angleToInt<8>. */
export function packAngle(rad: number): number {
  const twoPi = 2 * Math.PI;
  const a = rad - twoPi * Math.floor((rad + Math.PI) / twoPi);
  const i = Math.floor((a * 128) / Math.PI + 0.5);
  return i >= 128 ? i - 256 : i;
}

/** An int8 angle back to radians in [-pi, pi). */
export function unpackAngle(i: number): number {
  return (i * Math.PI) / 128;
}
