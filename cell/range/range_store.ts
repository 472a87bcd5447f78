/**
 * The range list's storage. Coordinates, tie orders, flags and the four links of every node live in typed arrays
 * indexed by slot (0 is the head, 1 the tail), so a shuffle (range_shuffle.ts) walks contiguous numbers instead of
 * chasing objects and boxed doubles. A node sorts by (coordinate, order).
 */
import {
  type NodeStore,
  ORDER_HEAD,
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
