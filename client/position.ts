/**
 * How far a position the client holds may be from the server's: entities' positions come packed relative to the
 * reference position (PackedXZ / PackedXYZ, docs/protocol.md), with a precision that is finest near the reference and
 * coarser by octaves away from it. Positions sent in full (far from the reference) are float32.
 */
import { PACKED_XZ_LIMIT, XZ_MANTISSA_BITS, Y_MANTISSA_BITS } from "../core/geo/mod.ts";

/** The most a packed axis value `offset` (metres from the reference) may be off, at packed-position `scale`. */
export function packedAxisError(offset: number, scale: number, bits: number = XZ_MANTISSA_BITS): number {
  const a = Math.abs(offset) / scale + 2;
  if (!(a < 512)) return float32Error(offset);
  // The stored float's octave is [2^e, 2^(e+1)) with 2^bits steps; rounding is to the nearest step.
  return scale * 2 ** (Math.floor(Math.log2(a)) - bits - 1);
}

/** Half a float32 step at `v`: how far a full position may be off. */
function float32Error(v: number): number {
  const a = Math.abs(v);
  return a === 0 ? 0 : 2 ** (Math.floor(Math.log2(a)) - 24);
}

/**
 * The error bound of a position on each axis, given the reference position and scale: for `at` (where the client
 * holds the entity), or the worst case anywhere a packed position reaches when `at` is absent.
 */
export function positionErrorBound(
  reference: { x: number; y: number; z: number },
  scale: number,
  at?: { x: number; y: number; z: number },
): { x: number; y: number; z: number } {
  if (!at) {
    const far = (PACKED_XZ_LIMIT - 0.5) * scale;
    return {
      x: packedAxisError(far, scale),
      y: packedAxisError(far, scale, Y_MANTISSA_BITS),
      z: packedAxisError(far, scale),
    };
  }
  return {
    x: packedAxisError(at.x - reference.x, scale),
    y: packedAxisError(at.y - reference.y, scale, Y_MANTISSA_BITS),
    z: packedAxisError(at.z - reference.z, scale),
  };
}
