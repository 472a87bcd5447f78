/**
 * The range list's storage and hot loops. Coordinates, tie orders, flags and the four links of every node live in
 * typed arrays indexed by slot (0 is the head, 1 the tail), so a shuffle walks contiguous numbers instead of
 * chasing objects and boxed doubles; one function per axis keeps every access monomorphic.
 *
 * A node sorts by (coordinate, order). A crossing flips exactly one of the four relations "after the lower bound"
 * and "before the upper bound" on X and on Z, so the square's inside state flips exactly when the other axis is
 * inside too, which is tested with the coordinates the nodes are sorted by on that axis.
 */
import { ORDER_HEAD, ORDER_LOWER, ORDER_TAIL, type RangeNode } from "./range_node.ts";

/** Slot of the head terminator (at -Infinity on both axes). */
export const HEAD = 0;
/** Slot of the tail terminator (at +Infinity on both axes). */
export const TAIL = 1;

/** Typed-array storage of a range list's nodes. */
export class RangeStore {
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
    this.nodes[i] = null;
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
function crossX(s: RangeStore, b: number, e: number, entityAfter: boolean): void {
  if (s.owner[b] === e) return;
  const kz = s.kz, z = kz[e], lower = s.ord[b] === ORDER_LOWER, c = s.sibling[b];
  if (lower ? z < kz[b] || z > kz[c] : z < kz[c] || z > kz[b]) return;
  const t = s.nodes[b]!.trigger!;
  if (lower === entityAfter) t.enter(s.nodes[e]!);
  else t.leave(s.nodes[e]!);
}

function crossZ(s: RangeStore, b: number, e: number, entityAfter: boolean): void {
  if (s.owner[b] === e) return;
  const kx = s.kx, x = kx[e], lower = s.ord[b] === ORDER_LOWER, c = s.sibling[b];
  if (lower ? x < kx[b] || x > kx[c] : x < kx[c] || x > kx[b]) return;
  const t = s.nodes[b]!.trigger!;
  if (lower === entityAfter) t.enter(s.nodes[e]!);
  else t.leave(s.nodes[e]!);
}

/** Moves slot `i` along the X list to where its key belongs, reporting crossings. */
export function shuffleX(s: RangeStore, i: number): void {
  const K = s.kx, P = s.px, N = s.nx, O = s.ord, FL = s.flags;
  const x = K[i], o = O[i], wi = FL[i] & 0xff, mi = FL[i] >> 8;
  let p = P[i], q = N[i];
  if (x < K[p] || (x === K[p] && o < O[p])) {
    do {
      const fp = FL[p];
      if ((fp & mi) !== 0) crossX(s, p, i, false);
      else if ((wi & (fp >> 8)) !== 0) crossX(s, i, p, true);
      const pp = P[p];
      N[p] = q;
      P[q] = p;
      q = p;
      p = pp;
    } while (x < K[p] || (x === K[p] && o < O[p]));
  } else if (x > K[q] || (x === K[q] && o > O[q])) {
    do {
      const fq = FL[q];
      if ((fq & mi) !== 0) crossX(s, q, i, true);
      else if ((wi & (fq >> 8)) !== 0) crossX(s, i, q, false);
      const qq = N[q];
      P[q] = p;
      N[p] = q;
      p = q;
      q = qq;
    } while (x > K[q] || (x === K[q] && o > O[q]));
  } else {
    return;
  }
  P[i] = p;
  N[p] = i;
  N[i] = q;
  P[q] = i;
}

/** Moves slot `i` along the Z list to where its key belongs, reporting crossings. */
export function shuffleZ(s: RangeStore, i: number): void {
  const K = s.kz, P = s.pz, N = s.nz, O = s.ord, FL = s.flags;
  const z = K[i], o = O[i], wi = FL[i] & 0xff, mi = FL[i] >> 8;
  let p = P[i], q = N[i];
  if (z < K[p] || (z === K[p] && o < O[p])) {
    do {
      const fp = FL[p];
      if ((fp & mi) !== 0) crossZ(s, p, i, false);
      else if ((wi & (fp >> 8)) !== 0) crossZ(s, i, p, true);
      const pp = P[p];
      N[p] = q;
      P[q] = p;
      q = p;
      p = pp;
    } while (z < K[p] || (z === K[p] && o < O[p]));
  } else if (z > K[q] || (z === K[q] && o > O[q])) {
    do {
      const fq = FL[q];
      if ((fq & mi) !== 0) crossZ(s, q, i, true);
      else if ((wi & (fq >> 8)) !== 0) crossZ(s, i, q, false);
      const qq = N[q];
      P[q] = p;
      N[p] = q;
      p = q;
      q = qq;
    } while (z > K[q] || (z === K[q] && o > O[q]));
  } else {
    return;
  }
  P[i] = p;
  N[p] = i;
  N[i] = q;
  P[q] = i;
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
