/**
 * The range list's storage and hot loops. Coordinates, tie orders, flags and the four links of every node live in
 * typed arrays indexed by slot (0 is the head, 1 the tail), so a shuffle walks contiguous numbers instead of
 * chasing objects and boxed doubles; one function per axis keeps every access monomorphic.
 *
 * A node sorts by (coordinate, order). A crossing flips exactly one of the four relations "after the lower bound"
 * and "before the upper bound" on X and on Z, so the square's inside state flips exactly when the other axis is
 * inside too, which is tested with the coordinates the nodes are sorted by on that axis.
 */
import {
  type NodeStore,
  ORDER_HEAD,
  ORDER_LOWER,
  ORDER_TAIL,
  type RangeEntity,
  type RangeNode,
  type RangeTrigger,
} from "./range_node.ts";

/** Slot of the head terminator (at -Infinity on both axes). */
export const HEAD = 0;
/** Slot of the tail terminator (at +Infinity on both axes). */
export const TAIL = 1;

/** Typed-array storage of a range list's nodes. */
export class RangeStore implements NodeStore {
  capacity = 0;
  kx = new Float64Array(0);
  kz = new Float64Array(0);
  px = new Int32Array(0);
  nx = new Int32Array(0);
  pz = new Int32Array(0);
  nz = new Int32Array(0);
  ord = new Uint8Array(0);
  /**
   * The RANGE_FLAG_* a node wants (low 8 bits) and makes (next 8): one load per node crossed instead of two, and a
   * crossing of two entities (which want nothing) is rejected on it.
   */
  flags = new Int32Array(0);
  /** For a bound: the owner entity's slot; -1 otherwise. Crossing tests read only these arrays. */
  owner = new Int32Array(0);
  /** For a bound: the slot of the trigger's other bound; -1 otherwise. */
  sibling = new Int32Array(0);
  /** The node object of each slot (null for the terminators and free slots). */
  readonly nodes: (RangeNode | null)[] = [null, null];
  /**
   * Each slot's trigger (for a bound) and entity (for an entity node), so that an event reaches them without
   * loading the node objects: each object on the way is a cache miss.
   */
  readonly triggers: (RangeTrigger | null)[] = [null, null];
  /** See `triggers`. */
  readonly entities: (RangeEntity | null)[] = [null, null];
  readonly #free: number[] = [];
  #used = 2;

  constructor() {
    this.#grow(64);
    this.kx[HEAD] = this.kz[HEAD] = -Infinity;
    this.kx[TAIL] = this.kz[TAIL] = Infinity;
    this.ord[HEAD] = ORDER_HEAD;
    this.ord[TAIL] = ORDER_TAIL;
    this.nx[HEAD] = this.nz[HEAD] = TAIL;
    this.px[TAIL] = this.pz[TAIL] = HEAD;
    this.px[HEAD] =
      this.pz[HEAD] =
      this.nx[TAIL] =
      this.nz[TAIL] =
        -1;
  }

  /** Gives a node a slot at (x, z); it still has to be linked with placeX/placeZ. */
  alloc(n: RangeNode, x: number, z: number): number {
    let i = this.#free.pop();
    if (i === undefined) {
      if (this.#used === this.capacity) this.#grow(this.capacity * 2);
      i = this.#used++;
    }
    this.kx[i] = x;
    this.kz[i] = z;
    this.ord[i] = n.order;
    this.flags[i] = n.wants | (n.makes << 8);
    this.owner[i] = this.sibling[i] = -1;
    this.nodes[i] = n;
    this.triggers[i] = n.trigger;
    this.entities[i] = n.entity;
    n.idx = i;
    n.store = this;
    return i;
  }

  /** Unlinks a node from both lists and frees its slot. */
  release(n: RangeNode): void {
    const i = n.idx;
    const { px, nx, pz, nz } = this;
    nx[px[i]] = nx[i];
    px[nx[i]] = px[i];
    nz[pz[i]] = nz[i];
    pz[nz[i]] = pz[i];
    this.nodes[i] = this.triggers[i] = this.entities[i] = null;
    this.#free.push(i);
    n.idx = -1;
    n.store = null;
  }

  #grow(capacity: number): void {
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(capacity);
      b.set(a);
      return b;
    };
    this.kx = grow(this.kx, (n) => new Float64Array(n));
    this.kz = grow(this.kz, (n) => new Float64Array(n));
    this.px = grow(this.px, (n) => new Int32Array(n));
    this.nx = grow(this.nx, (n) => new Int32Array(n));
    this.pz = grow(this.pz, (n) => new Int32Array(n));
    this.nz = grow(this.nz, (n) => new Int32Array(n));
    this.ord = grow(this.ord, (n) => new Uint8Array(n));
    this.flags = grow(this.flags, (n) => new Int32Array(n));
    this.owner = grow(this.owner, (n) => new Int32Array(n));
    this.sibling = grow(this.sibling, (n) => new Int32Array(n));
    this.capacity = capacity;
  }
}

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
function shuffleOn(s: RangeStore, K: Float64Array, P: Int32Array, N: Int32Array, other: Float64Array, i: number): void {
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
 * Sets slot `i` to (x, z) and returns true if that passes no node on either list (both keys stay strictly between
 * the neighbours'); otherwise changes nothing and returns false, and the move must shuffle.
 */
export function stepWithin(s: RangeStore, i: number, x: number, z: number): boolean {
  const kx = s.kx, kz = s.kz;
  if (x > kx[s.px[i]] && x < kx[s.nx[i]] && z > kz[s.pz[i]] && z < kz[s.nz[i]]) {
    kx[i] = x;
    kz[i] = z;
    return true;
  }
  return false;
}

/** Moves entity slot `i` to (x, z) on X, then on Z, reporting crossings: the rest of a step `stepWithin` refused. */
export function stepAcross(s: RangeStore, i: number, x: number, z: number): void {
  const kx = s.kx, kz = s.kz;
  kx[i] = x;
  if (!(x > kx[s.px[i]] && x < kx[s.nx[i]])) shuffleOn(s, kx, s.px, s.nx, kz, i);
  kz[i] = z;
  if (!(z > kz[s.pz[i]] && z < kz[s.nz[i]])) shuffleOn(s, kz, s.pz, s.nz, kx, i);
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

/** Links slot `i` into one axis (X when `onX`) where it belongs, searching from linked slot `start`; no crossings. */
export function place(s: RangeStore, i: number, start: number, onX: boolean): number {
  const K = onX ? s.kx : s.kz, P = onX ? s.px : s.pz, N = onX ? s.nx : s.nz, O = s.ord;
  const k = K[i], o = O[i];
  let p = start === TAIL ? P[TAIL] : start;
  let steps = 0;
  while (k < K[p] || (k === K[p] && o < O[p])) {
    p = P[p];
    steps++;
  }
  let q = N[p];
  while (K[q] < k || (K[q] === k && O[q] < o)) {
    p = q;
    q = N[q];
    steps++;
  }
  P[i] = p;
  N[i] = q;
  N[p] = i;
  P[q] = i;
  return steps;
}
