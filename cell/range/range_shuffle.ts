/**
 * The range list's hot loops: moving nodes along the sorted lists of a RangeStore and reporting crossings.
 *
 * A node sorts by (coordinate, order). A crossing flips exactly one of the four relations "after the lower bound"
 * and "before the upper bound" on X and on Z, so the square's inside state flips exactly when the other axis is
 * inside too, which is tested with the coordinates the nodes are sorted by on that axis. A mover therefore updates
 * an axis's coordinate only right before it shuffles on that axis.
 */
import { ORDER_LOWER, type RangeTrigger } from "./range_node.ts";
import type { RangeStore } from "./range_store.ts";

// Only typed arrays until the crossing turns out to change the inside state: object loads are cache misses.
// Bound `b` and entity `e` crossed on one axis; `other` holds the keys of the other axis, where the square is tested.
function cross(s: RangeStore, other: Float64Array, b: number, e: number, entityAfter: boolean): void {
  if (s.owner[b] === e) return;
  const v = other[e], lower = s.ord[b] === ORDER_LOWER, c = s.sibling[b];
  if (lower ? v < other[b] || v > other[c] : v < other[c] || v > other[b]) return;
  const t = s.triggers[b]!;
  if (lower === entityAfter) t.enter(s.nodes[e]!, s.entities[e]!);
  else t.leave(s.nodes[e]!, s.entities[e]!);
}

// Moves slot `i` along the axis of keys `K` and links `P`/`N` to where its key belongs, reporting crossings;
// `other` is the other axis's keys.
export function shuffleOn(
  s: RangeStore,
  K: Float64Array,
  P: Int32Array,
  N: Int32Array,
  other: Float64Array,
  i: number,
): void {
  const O = s.ord, FL = s.flags;
  const k = K[i], o = O[i], wi = FL[i] & 0xff, mi = FL[i] >> 8;
  const p0 = P[i], q0 = N[i];
  let p = p0, q = q0;
  // Walk without relinking what is passed (its order does not change), then move i once. An entity (wants
  // nothing) crosses only bounds that want what it makes, a bound only entities that make what it wants: one
  // test per node passed.
  if (k < K[p] || (k === K[p] && o < O[p])) {
    if (wi === 0) {
      do {
        if ((FL[p] & mi) !== 0) cross(s, other, p, i, false);
        q = p;
        p = P[p];
      } while (k < K[p] || (k === K[p] && o < O[p]));
    } else {
      do {
        if ((wi & (FL[p] >> 8)) !== 0) cross(s, other, i, p, true);
        q = p;
        p = P[p];
      } while (k < K[p] || (k === K[p] && o < O[p]));
    }
  } else if (k > K[q] || (k === K[q] && o > O[q])) {
    if (wi === 0) {
      do {
        if ((FL[q] & mi) !== 0) cross(s, other, q, i, true);
        p = q;
        q = N[q];
      } while (k > K[q] || (k === K[q] && o > O[q]));
    } else {
      do {
        if ((wi & (FL[q] >> 8)) !== 0) cross(s, other, i, q, false);
        p = q;
        q = N[q];
      } while (k > K[q] || (k === K[q] && o > O[q]));
    }
  } else {
    return;
  }
  N[p0] = q0;
  P[q0] = p0;
  P[i] = p;
  N[p] = i;
  N[i] = q;
  P[q] = i;
}

/**
 * Moves entity slot `i` to (x, z), on X then on Z, reporting crossings; returns whether it passed any node. Both
 * axes are tested before either moves: shuffling on X relinks only the X list, so the Z test stays true.
 */
export function stepEntity(s: RangeStore, i: number, x: number, z: number): boolean {
  const kx = s.kx, kz = s.kz;
  const inX = x > kx[s.px[i]] && x < kx[s.nx[i]], inZ = z > kz[s.pz[i]] && z < kz[s.nz[i]];
  kx[i] = x;
  if (inX) {
    kz[i] = z;
    if (inZ) return false;
  } else {
    shuffleOn(s, kx, s.px, s.nx, kz, i);
    kz[i] = z;
    if (inZ) return true;
  }
  shuffleOn(s, kz, s.pz, s.nz, kx, i);
  return true;
}

/** Moves slot `i` along the X list to where its key belongs, reporting crossings. */
export function shuffleX(s: RangeStore, i: number): void {
  // Most moves pass no node: when the neighbours still bracket the key strictly, nothing changes. Small enough to
  // be inlined where it is called, so such a move costs no call of shuffleOn.
  const K = s.kx, k = K[i];
  if (k > K[s.px[i]] && k < K[s.nx[i]]) return;
  shuffleOn(s, K, s.px, s.nx, s.kz, i);
}

/** Moves slot `i` along the Z list to where its key belongs, reporting crossings. */
export function shuffleZ(s: RangeStore, i: number): void {
  const K = s.kz, k = K[i];
  if (k > K[s.pz[i]] && k < K[s.nz[i]]) return;
  shuffleOn(s, K, s.pz, s.nz, s.kx, i);
}

// Sets slot `b`'s key on one axis to `k` and shuffles it there unless its neighbours still bracket `k` strictly.
function moveKey(
  s: RangeStore,
  K: Float64Array,
  P: Int32Array,
  N: Int32Array,
  other: Float64Array,
  b: number,
  k: number,
): void {
  K[b] = k;
  if (!(k > K[P[b]] && k < K[N[b]])) shuffleOn(s, K, P, N, other, b);
}

/**
 * Moves entity slot `i` and the bounds of the triggers it owns to (x, z): on each axis the bounds ahead of the move
 * first (in trigger order), then the entity, then the bounds behind (in reverse order), so that every trigger keeps
 * lower <= upper and its owner inside. Each trigger's X bound moves before its Z bound.
 */
export function moveOwner(s: RangeStore, i: number, owned: readonly RangeTrigger[], x: number, z: number): void {
  const kx = s.kx, kz = s.kz, px = s.px, nx = s.nx, pz = s.pz, nz = s.nz, m = owned.length;
  const ox = kx[i], oz = kz[i], mx = x !== ox, mz = z !== oz, ux = x > ox, uz = z > oz;
  for (let j = 0; j < m; j++) {
    const t = owned[j], r = t.rawRadius;
    if (mx) moveKey(s, kx, px, nx, kz, ux ? t.upperSlot : t.lowerSlot, ux ? x + r : x - r);
    if (mz) moveKey(s, kz, pz, nz, kx, uz ? t.upperSlot : t.lowerSlot, uz ? z + r : z - r);
  }
  if (mx) moveKey(s, kx, px, nx, kz, i, x);
  if (mz) moveKey(s, kz, pz, nz, kx, i, z);
  for (let j = m - 1; j >= 0; j--) {
    const t = owned[j], r = t.rawRadius;
    if (mx) moveKey(s, kx, px, nx, kz, ux ? t.lowerSlot : t.upperSlot, ux ? x - r : x + r);
    if (mz) moveKey(s, kz, pz, nz, kx, uz ? t.lowerSlot : t.upperSlot, uz ? z - r : z + r);
  }
}
