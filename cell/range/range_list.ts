/**
 * A cell's range list (docs/architecture.md, "The witness"): entity nodes and trigger bounds on two doubly linked lists
 * sorted on X and on Z, between head and tail terminators at -/+Infinity. Moving a node shuffles it along both lists;
 * crossing a bound that wants the entity's flags toggles one axis of the trigger's square, which fires enter/leave when
 * the other axis is inside. Events are queued while nodes move and delivered once the lists are consistent (the end of
 * each public mutating call, range_events.ts), so handlers may move, add and remove entities and triggers.
 */
import {
  ORDER_ENTITY,
  ORDER_LOWER,
  RANGE_FLAG_AOI,
  RANGE_FLAG_SCRIPT,
  RANGE_FLAGS_ENTITY,
  type RangeEntity,
  type RangeHandler,
  RangeNode,
  RangeTrigger,
  type RangeTriggerOptions,
  type TriggerList,
} from "./range_node.ts";
import { HEAD, place, RangeStore, TAIL } from "./range_store.ts";
import { moveOwner, shuffleX, shuffleZ, stepEntity } from "./range_shuffle.ts";
import { checkRangeList } from "./range_check.ts";
import { RangeEvents } from "./range_events.ts";

/** One anchor every this many nodes: where inserts and point queries start walking. */
const ANCHOR_STRIDE = 32;

/**
 * The range list of one cell. Costs: `move` is O(nodes crossed); `add`, `remove` are O(nodes within the largest
 * trigger's diameter on X) plus finding the place from an anchor; `addTrigger` is O(nodes in its X strip).
 */
export class RangeList implements TriggerList {
  readonly #s = new RangeStore();
  #entities = 0;
  #nodes = 0;
  readonly #triggers = new Set<RangeTrigger>();
  #maxRadius = 0;
  #maxRadiusStale = false;
  readonly #events = new RangeEvents();
  // Every ANCHOR_STRIDE-th slot of each list as of the last rebuild. Nodes move and slots are reused, so these are
  // only hints: a search starts from one and walks; the walking is charged and a rebuild (O(n)) follows n steps.
  #anchorsX: number[] = [];
  #anchorsZ: number[] = [];
  #walked = 0;

  /** Number of entities on the list. */
  get size(): number {
    return this.#entities;
  }

  /** The triggers on the list. */
  get triggers(): ReadonlySet<RangeTrigger> {
    return this.#triggers;
  }

  /** Events found but not yet delivered (non-zero only inside a delivery or after a handler threw). */
  get pendingEvents(): number {
    return this.#events.pending;
  }

  /** Inserts an entity at its `x`/`z`; triggers already containing it get onEnter. `makes`: RANGE_FLAG_* it shows. */
  add(entity: RangeEntity, makes: number = RANGE_FLAGS_ENTITY): void {
    if (entity.rangeNode !== null) throw new Error(`entity ${entity.id} is already on a range list`);
    checkPosition(entity.x, entity.z);
    const n = new RangeNode(ORDER_ENTITY, 0, makes, entity, null);
    const s = this.#s, i = s.alloc(n, entity.x, entity.z);
    this.#maybeRebuildAnchors();
    this.#walked += place(s, i, this.#anchor(entity.x, true, i), true) +
      place(s, i, this.#anchor(entity.z, false, i), false);
    n.list = this;
    this.#nodes++;
    this.#entities++;
    entity.rangeNode = n;
    this.#visitContaining(n, true);
    const circles = n.circles;
    if (circles !== null) { for (let i = 0; i < circles.length; i++) circles[i].recheck(n); }
    this.#deliver();
  }

  /** Removes an entity and the triggers it owns; triggers that contained it get onLeave. */
  remove(entity: RangeEntity): void {
    const n = this.#nodeOf(entity);
    const owned = n.owned;
    if (owned !== null) { while (owned.length > 0) this.#unlinkTrigger(owned[owned.length - 1]); }
    this.#visitContaining(n, false);
    this.#s.release(n);
    n.list = null;
    entity.rangeNode = null;
    this.#nodes--;
    this.#entities--;
    this.#deliver();
  }

  /**
   * Moves an entity to (x, z): its triggers' leading bounds first, then the entity, then the trailing bounds, so
   * that every trigger keeps lower <= upper and its owner inside. A teleport is a long move, O(nodes crossed).
   */
  move(entity: RangeEntity, x: number, z: number): void {
    const n = entity.rangeNode;
    if (n === null || n.list !== this) throw new Error(`entity ${entity.id} is not on this range list`);
    if (!Number.isFinite(x) || !Number.isFinite(z)) checkPosition(x, z);
    entity.x = x;
    entity.z = z;
    // Most moves are small steps of an entity that owns no trigger and is in no circle, passing no node: kept
    // small so that it is inlined into the caller's loop.
    if (n.owned === null && n.circles === null) {
      if (!stepEntity(this.#s, n.idx, x, z)) return;
      // The step may have entered a circle's square.
      this.#recheckCircles(n);
      if (this.#events.pending !== 0) this.#deliver();
      return;
    }
    this.#moveFar(n, x, z);
  }

  /** The rest of `move`: the entity's triggers' bounds, the shuffles with their crossings, circles and events. */
  #moveFar(n: RangeNode, x: number, z: number): void {
    const s = this.#s, i = n.idx;
    if (x === s.kx[i] && z === s.kz[i]) return;
    const owned = n.owned;
    if (owned !== null) {
      moveOwner(s, i, owned, x, z);
      for (let k = 0; k < owned.length; k++) if (owned[k].inCircle !== null) owned[k].recheckAll();
    } else stepEntity(s, i, x, z);
    this.#recheckCircles(n);
    if (this.#events.pending !== 0) this.#deliver();
  }

  /** Re-checks the circles whose square holds entity node `n`, which moved. */
  #recheckCircles(n: RangeNode): void {
    const circles = n.circles;
    if (circles !== null) { for (let k = 0; k < circles.length; k++) circles[k].recheck(n); }
  }

  /**
   * Adds a trigger of half-side (and circle radius) `radius` around `owner`; it gets onEnter for everything already
   * inside. The owner is never reported to its own trigger.
   */
  addTrigger(owner: RangeEntity, radius: number, handler: RangeHandler, opts: RangeTriggerOptions = {}): RangeTrigger {
    const on = this.#nodeOf(owner);
    checkRadius(radius);
    const circle = opts.shape === "circle";
    const wants = opts.wants ?? (circle ? RANGE_FLAG_SCRIPT : RANGE_FLAG_AOI);
    const t = new RangeTrigger(this, on, radius, handler, circle, wants, opts.filter ?? null);
    const s = this.#s, ox = on.x, oz = on.z;
    for (const [b, sign] of [[t.lower, -1], [t.upper, 1]] as const) {
      const i = s.alloc(b, ox + sign * radius, oz + sign * radius);
      place(s, i, on.idx, true);
      place(s, i, on.idx, false);
      b.list = this;
      this.#nodes++;
    }
    t.lowerSlot = t.lower.idx;
    t.upperSlot = t.upper.idx;
    s.owner[t.lower.idx] = s.owner[t.upper.idx] = on.idx;
    s.sibling[t.lower.idx] = t.upper.idx;
    s.sibling[t.upper.idx] = t.lower.idx;
    if (on.owned === null) on.owned = [t];
    else on.owned.push(t);
    this.#triggers.add(t);
    if (radius > this.#maxRadius) this.#maxRadius = radius;
    const kz = s.kz, lz = kz[t.lower.idx], uz = kz[t.upper.idx], up = t.upper.idx, ord = s.ord, nx = s.nx;
    for (let p = nx[t.lower.idx]; p !== up; p = nx[p]) {
      if (ord[p] === ORDER_ENTITY && (wants & (s.flags[p] >> 8)) !== 0 && p !== on.idx && kz[p] >= lz && kz[p] <= uz) {
        t.enter(s.nodes[p]!, s.entities[p]!);
      }
    }
    if (circle) t.recheckAll();
    this.#deliver();
    return t;
  }

  /** Takes a trigger off the list without leave events; its undelivered events are dropped. */
  removeTrigger(t: RangeTrigger): void {
    if (t.list !== this) return;
    this.#unlinkTrigger(t);
    this.#deliver();
  }

  /** Grows or shrinks a trigger (use `trigger.setRadius`), firing enter/leave for what it gains or loses. */
  setTriggerRadius(t: RangeTrigger, radius: number): void {
    if (t.list !== this) throw new Error("range trigger is not on this list");
    checkRadius(radius);
    const old = t.radius;
    if (radius === old) return;
    t.storeRadius(radius);
    const s = this.#s, o = t.owner, ox = o.x, oz = o.z;
    // Grow by moving the upper bound first, shrink by moving the lower bound first: lower <= upper throughout.
    const sign = radius > old ? 1 : -1;
    const first = (radius > old ? t.upper : t.lower).idx, second = (radius > old ? t.lower : t.upper).idx;
    s.kx[first] = ox + sign * radius;
    shuffleX(s, first);
    s.kz[first] = oz + sign * radius;
    shuffleZ(s, first);
    s.kx[second] = ox - sign * radius;
    shuffleX(s, second);
    s.kz[second] = oz - sign * radius;
    shuffleZ(s, second);
    if (radius > this.#maxRadius) this.#maxRadius = radius;
    else if (old === this.#maxRadius) this.#maxRadiusStale = true;
    if (t.inCircle !== null) t.recheckAll();
    this.#deliver();
  }

  /**
   * Entities within distance `radius` of (x, z) (a point on the circle counts), optionally filtered.
   * O(nodes whose X is within `radius` of x), walking the X list both ways from a nearby anchor.
   */
  entitiesInRange(x: number, z: number, radius: number, filter?: (e: RangeEntity) => boolean): RangeEntity[] {
    checkPosition(x, z);
    checkRadius(radius);
    this.#maybeRebuildAnchors();
    return this.#collect(this.#anchor(x, true, -1), x, z, radius, filter, -1);
  }

  /** Entities other than `entity` within distance `radius` of it; O(nodes whose X is within `radius`). */
  entitiesAround(entity: RangeEntity, radius: number, filter?: (e: RangeEntity) => boolean): RangeEntity[] {
    const n = this.#nodeOf(entity);
    checkRadius(radius);
    return this.#collect(n.idx, n.x, n.z, radius, filter, n.idx);
  }

  /**
   * Visits the entities in their order on X (`onX`) or Z, from the low end (`ascending`) or the high end, with the
   * coordinate they are sorted by, until `visit` returns true. O(nodes passed, trigger bounds included). `visit`
   * must not change the list.
   */
  walkEntities(onX: boolean, ascending: boolean, visit: (e: RangeEntity, key: number) => boolean): void {
    const s = this.#s, ord = s.ord, key = onX ? s.kx : s.kz;
    const step = onX ? (ascending ? s.nx : s.px) : (ascending ? s.nz : s.pz);
    const end = ascending ? TAIL : HEAD;
    for (let p = step[ascending ? HEAD : TAIL]; p !== end; p = step[p]) {
      if (ord[p] === ORDER_ENTITY && visit(s.nodes[p]!.entity!, key[p])) return;
    }
  }

  /** Delivers events left queued by a handler that threw; mutating calls do this themselves. */
  deliver(): void {
    this.#deliver();
  }

  /** Debug check of both lists, links, bounds and every trigger's contents against brute force; throws if wrong. */
  check(): void {
    checkRangeList(this.#s, this, this.#nodes, this.#entities, this.#triggers);
  }

  /** @internal Queues an event found while nodes move; returns its index for `cancelEnter`. */
  queueEvent(t: RangeTrigger, e: RangeEntity, enter: boolean): number {
    return this.#events.queue(t, e, enter);
  }

  /** @internal Cancels the enter queued at `i` if it is still undelivered; false if it was delivered already. */
  cancelEnter(i: number, t: RangeTrigger, e: RangeEntity): boolean {
    return this.#events.cancelEnter(i, t, e);
  }

  /** @internal Cancels the newest undelivered event of `t` about `e` if it is an enter (see RangeEvents). */
  cancelLatestEnter(t: RangeTrigger, e: RangeEntity): boolean {
    return this.#events.cancelLatestEnter(t, e);
  }

  /** @internal Whether node `n` lies in the square of `t` as the lists have it (for an implicit trigger). */
  squareHas(t: RangeTrigger, n: RangeNode): boolean {
    if (n.list !== this || n === t.owner || (t.lower.wants & n.makes) === 0 || n.entity === null) return false;
    const s = this.#s, kx = s.kx, kz = s.kz, i = n.idx, lo = t.lower.idx, up = t.upper.idx;
    return kx[lo] <= kx[i] && kx[i] <= kx[up] && kz[lo] <= kz[i] && kz[i] <= kz[up];
  }

  /** @internal The entity nodes in the square of `t` (an implicit trigger); O(nodes in its X strip). */
  squareNodes(t: RangeTrigger): RangeNode[] {
    const out: RangeNode[] = [];
    const s = this.#s, up = t.upper.idx, nx = s.nx;
    for (let p = nx[t.lower.idx]; p !== up; p = nx[p]) {
      const n = s.nodes[p];
      if (n !== null && this.squareHas(t, n)) out.push(n);
    }
    return out;
  }

  #deliver(): void {
    this.#events.deliver(this);
  }

  #nodeOf(entity: RangeEntity): RangeNode {
    const n = entity.rangeNode;
    if (n === null || n.list !== this) throw new Error(`entity ${entity.id} is not on this range list`);
    return n;
  }

  #unlinkTrigger(t: RangeTrigger): void {
    this.#s.release(t.lower);
    this.#s.release(t.upper);
    t.lower.list = t.upper.list = null;
    t.lowerSlot = t.upperSlot = -1;
    this.#nodes -= 2;
    const owned = t.owner.owned!;
    owned.splice(owned.indexOf(t), 1);
    this.#triggers.delete(t);
    if (t.radius === this.#maxRadius) this.#maxRadiusStale = true;
    t.clear();
    t.list = null;
  }

  /** Tells every trigger whose square holds `n` that it entered (on add) or left (on remove). */
  #visitContaining(n: RangeNode, entering: boolean): void {
    if (this.#triggers.size === 0) return;
    if (this.#maxRadiusStale) {
      let m = 0;
      for (const t of this.#triggers) if (t.radius > m) m = t.radius;
      this.#maxRadius = m;
      this.#maxRadiusStale = false;
    }
    // A containing trigger's lower bound is before n and at most its width (2r, give or take rounding) to the left.
    const r = this.#maxRadius;
    const s = this.#s, kx = s.kx, kz = s.kz, px = s.px, ord = s.ord, flags = s.flags;
    const x = kx[n.idx], z = kz[n.idx];
    const limit = x - (2 * r + 1e-9 * (Math.abs(x) + 3 * r + 1));
    for (let p = px[n.idx]; kx[p] >= limit; p = px[p]) {
      if (ord[p] !== ORDER_LOWER || (flags[p] & n.makes) === 0) continue;
      const t = s.nodes[p]!.trigger!;
      if (t.owner === n || x > kx[t.upper.idx] || z < kz[t.lower.idx] || z > kz[t.upper.idx]) continue;
      if (entering) t.enter(n, n.entity!);
      else t.leave(n, n.entity!);
    }
  }

  #collect(
    start: number,
    x: number,
    z: number,
    radius: number,
    filter: ((e: RangeEntity) => boolean) | undefined,
    skip: number,
  ): RangeEntity[] {
    const out: RangeEntity[] = [];
    const s = this.#s, kx = s.kx, kz = s.kz, ord = s.ord;
    const r2 = radius * radius, lo = x - radius, hi = x + radius;
    const consider = (p: number): void => {
      if (ord[p] !== ORDER_ENTITY || p === skip) return;
      const dx = kx[p] - x, dz = kz[p] - z;
      const e = s.nodes[p]!.entity!;
      if (dx * dx + dz * dz <= r2 && (filter === undefined || filter(e))) out.push(e);
    };
    for (let p = start; kx[p] >= lo; p = s.px[p]) consider(p);
    let strayed = 0;
    for (let p = s.nx[start]; kx[p] <= hi; p = s.nx[p]) {
      if (kx[p] < lo) strayed++;
      else consider(p);
    }
    this.#walked += strayed;
    return out;
  }

  #maybeRebuildAnchors(): void {
    if (this.#walked <= this.#nodes + 256) return;
    this.#walked = 0;
    const s = this.#s;
    for (const onX of [true, false]) {
      const next = onX ? s.nx : s.nz, a: number[] = [];
      let i = 0;
      for (let p = next[HEAD]; p !== TAIL; p = next[p]) if (i++ % ANCHOR_STRIDE === 0) a.push(p);
      if (onX) this.#anchorsX = a;
      else this.#anchorsZ = a;
    }
  }

  /** A linked slot whose key is probably just below `k` on the axis: where a search for `k` should start. */
  #anchor(k: number, onX: boolean, unlinked: number): number {
    const a = onX ? this.#anchorsX : this.#anchorsZ, key = onX ? this.#s.kx : this.#s.kz, nodes = this.#s.nodes;
    let lo = 0, hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (key[a[mid]] < k) lo = mid + 1;
      else hi = mid;
    }
    // A freed slot is not linked; a reused one is, somewhere else, which only costs walking.
    const c = lo > 0 ? a[lo - 1] : HEAD;
    return c === unlinked || nodes[c] === null ? HEAD : c;
  }
}

function checkPosition(x: number, z: number): void {
  if (!Number.isFinite(x) || !Number.isFinite(z)) throw new RangeError(`position (${x}, ${z}) is not finite`);
}

function checkRadius(r: number): void {
  if (!(r >= 0) || !Number.isFinite(r)) throw new RangeError(`radius ${r} must be finite and >= 0`);
}
