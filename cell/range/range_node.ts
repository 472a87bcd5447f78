/**
 * Nodes of a cell's range list (see range_list.ts), the flags that decide which crossings matter, and range
 * triggers: an owner entity's square (or circle) on the list, held by two bound nodes and told when entities enter
 * and leave. Nodes and triggers refer to each other, so they live together.
 *
 * The terminators exist only as slots 0 and 1 of the store.
 */

/** Tie order of the head terminator; nodes sort by coordinate, then by this order. */
export const ORDER_HEAD = 0;
/** Tie order of a lower bound: before an entity at the same coordinate, so a point on the bound is inside. */
export const ORDER_LOWER = 1;
/** Tie order of an entity node. */
export const ORDER_ENTITY = 2;
/** Tie order of an upper bound: after an entity at the same coordinate, so a point on the bound is inside. */
export const ORDER_UPPER = 3;
/** Tie order of the tail terminator. */
export const ORDER_TAIL = 4;

/** Flag made by entities that script (circle) range triggers see; what those triggers want by default. */
export const RANGE_FLAG_SCRIPT = 0x01;
/** Flag made by entities that AoI (square) triggers see; what those triggers want by default. */
export const RANGE_FLAG_AOI = 0x02;
/** What an entity makes unless told otherwise: it is seen by both kinds of trigger. */
export const RANGE_FLAGS_ENTITY = RANGE_FLAG_SCRIPT | RANGE_FLAG_AOI;

/**
 * What a range list needs of an entity. The list keeps `x`/`z` equal to the node's position and stores the
 * entity's node in `rangeNode` (null while the entity is on no list), which gives O(1) access from entity to node.
 */
export interface RangeEntity {
  readonly id: number;
  x: number;
  z: number;
  rangeNode: RangeNode | null;
}

/** What nodes need of the store holding their coordinates (a RangeStore, see range_store.ts). */
export interface NodeStore {
  readonly kx: Float64Array;
  readonly kz: Float64Array;
}

/** What nodes and triggers need of the range list they are on (a RangeList, see range_list.ts). */
export interface TriggerList {
  removeTrigger(t: RangeTrigger): void;
  setTriggerRadius(t: RangeTrigger, radius: number): void;
  queueEvent(t: RangeTrigger, e: RangeEntity, enter: boolean): number;
  cancelEnter(i: number, t: RangeTrigger, e: RangeEntity): boolean;
  cancelLatestEnter(t: RangeTrigger, e: RangeEntity): boolean;
  squareHas(t: RangeTrigger, n: RangeNode): boolean;
  squareNodes(t: RangeTrigger): RangeNode[];
}

/**
 * A node on both sorted lists of a range list: an entity, a trigger's lower or upper bound. Its coordinates and
 * links live in the list's typed arrays at `idx` (see range_store.ts), which keeps the shuffle loops on contiguous
 * numbers; the object is the handle entities and triggers hold. Coordinates are the ones the node is currently
 * sorted by: a mover updates an axis's coordinate only right before it shuffles on that axis, which is what lets a
 * crossing on one axis test the other axis by comparing numbers.
 */
export class RangeNode {
  /** Slot in the store's arrays while linked; -1 otherwise. */
  idx = -1;
  /** The store holding the node's coordinates and links, or null. */
  store: NodeStore | null = null;
  /** The list the node is linked into, or null. */
  list: TriggerList | null = null;
  /** Triggers owned by this entity node (null until it owns one). */
  owned: RangeTrigger[] | null = null;
  /** Circle triggers whose square holds this entity node, so that a move re-checks only those circles. */
  circles: RangeTrigger[] | null = null;

  constructor(
    /** One of the ORDER_* constants: the node's kind and its tie order. */
    readonly order: number,
    /** Crossings this node cares about: it is told of a crossing node whose `makes` shares a bit. */
    readonly wants: number,
    /** Flags this node shows to the nodes it crosses. */
    readonly makes: number,
    /** The entity, for an entity node. */
    readonly entity: RangeEntity | null,
    /** The trigger, for a bound node. */
    readonly trigger: RangeTrigger | null,
  ) {}

  /** The X the node is sorted by. */
  get x(): number {
    return this.store!.kx[this.idx];
  }

  /** The Z the node is sorted by. */
  get z(): number {
    return this.store!.kz[this.idx];
  }
}

/**
 * Receives a trigger's events; they are delivered only once the range list is consistent again. The trigger is
 * passed too, because the initial onEnter calls happen before `addTrigger` returns it.
 */
export interface RangeHandler {
  onEnter(entity: RangeEntity, trigger: RangeTrigger): void;
  onLeave(entity: RangeEntity, trigger: RangeTrigger): void;
}

/** Options of `RangeList.addTrigger`. */
export interface RangeTriggerOptions {
  /**
   * "square" (the default; the AoI trigger): events when entering or leaving the axis-aligned square of half-side r.
   * "circle" (script range triggers): the square is the broad phase, only entities within distance r count.
   */
  shape?: "square" | "circle";
  /** Entity flags this trigger sees (RANGE_FLAG_*); defaults to RANGE_FLAG_AOI for squares, SCRIPT for circles. */
  wants?: number;
  /** Keeps only entities it accepts; called once per entry into the square, so its answer must not change. */
  filter?: (entity: RangeEntity) => boolean;
}

/**
 * A trigger on a range list: two bound nodes at the owner's position minus and plus the radius on both axes.
 * Created by `RangeList.addTrigger`; moves with its owner.
 */
export class RangeTrigger {
  /** The list it is on; null once removed. */
  list: TriggerList | null;
  /**
   * Entity nodes inside the square (after flags and filter), each with the queue index of its enter event so that
   * an enter still undelivered when the node leaves again is cancelled instead; for a circle trigger the candidates.
   * Empty for an implicit trigger.
   */
  readonly members: Map<RangeNode, number> = new Map();
  /**
   * A square without a filter (an AoI trigger) keeps no member table: crossings are exact, so it holds what lies
   * between its bounds on both lists, and its events need no table lookups.
   */
  readonly implicit: boolean;
  /** @internal Its enter events still queued: only while some are does a leave look for one to cancel. */
  pendingEnters = 0;
  /** For a circle trigger, the members also within the circle (with their enter's queue index); null for a square. */
  readonly inCircle: Map<RangeNode, number> | null;
  /** The lower bound node, at the owner's position minus the radius on both axes. */
  readonly lower: RangeNode;
  /** The upper bound node, at the owner's position plus the radius on both axes. */
  readonly upper: RangeNode;
  /**
   * @internal The radius and the bounds' store slots (fixed while linked) as plain fields, which the owner's
   * every move reads: one object load instead of three.
   */
  rawRadius: number;
  /** @internal See `rawRadius`; set by the list once the bounds have slots. */
  lowerSlot = -1;
  /** @internal See `rawRadius`. */
  upperSlot = -1;

  constructor(
    list: TriggerList,
    /** The owner's entity node. */
    readonly owner: RangeNode,
    radius: number,
    readonly handler: RangeHandler,
    readonly circle: boolean,
    wants: number,
    readonly filter: ((entity: RangeEntity) => boolean) | null,
  ) {
    this.list = list;
    this.rawRadius = radius;
    this.inCircle = circle ? new Map() : null;
    this.implicit = !circle && filter === null;
    // Bounds make nothing, so they never fire on each other or on other triggers' bounds.
    this.lower = new RangeNode(ORDER_LOWER, wants, 0, null, this);
    this.upper = new RangeNode(ORDER_UPPER, wants, 0, null, this);
  }

  /** The half-side of the square, and the circle's radius. */
  get radius(): number {
    return this.rawRadius;
  }

  /** The entity that owns the trigger. */
  get ownerEntity(): RangeEntity {
    return this.owner.entity!;
  }

  /** Number of entities inside, as the handler has been or is about to be told. */
  get size(): number {
    if (this.implicit) return this.list === null ? 0 : this.list.squareNodes(this).length;
    return (this.inCircle ?? this.members).size;
  }

  /** Whether an entity is inside (square, or circle for a circle trigger). */
  has(entity: RangeEntity): boolean {
    const n = entity.rangeNode;
    if (this.implicit) return n !== null && this.list !== null && this.list.squareHas(this, n);
    return n !== null && (this.inCircle ?? this.members).has(n);
  }

  /** The entities inside, in no particular order. */
  *entities(): IterableIterator<RangeEntity> {
    const nodes = this.implicit ? (this.list === null ? [] : this.list.squareNodes(this)) : this.members.keys();
    for (const n of this.inCircle === null ? nodes : this.inCircle.keys()) yield n.entity!;
  }

  /** Grows or shrinks the trigger, firing enter/leave for what it gains or loses. */
  setRadius(radius: number): void {
    if (this.list === null) throw new Error("range trigger was removed");
    this.list.setTriggerRadius(this, radius);
  }

  /** Takes the trigger off its list; no leave events are sent for what it held, and pending events are dropped. */
  remove(): void {
    this.list?.removeTrigger(this);
  }

  /** @internal Sets the radius field; only the list calls this, along with moving the bounds. */
  storeRadius(radius: number): void {
    this.rawRadius = radius;
  }

  /** @internal An entity node came inside the square; `e` is its entity, which the caller has at hand. */
  enter(n: RangeNode, e: RangeEntity): void {
    if (this.implicit) {
      this.list!.queueEvent(this, e, true);
      return;
    }
    if (this.filter !== null && !this.filter(e)) return;
    if (this.inCircle === null) {
      this.members.set(n, this.list!.queueEvent(this, e, true));
    } else {
      this.members.set(n, -1);
      if (n.circles === null) n.circles = [this];
      else n.circles.push(this);
    }
  }

  /** @internal An entity node went outside the square (or off the list); `e` is its entity. */
  leave(n: RangeNode, e: RangeEntity): void {
    if (this.implicit) {
      // An enter and a leave of the same node in one batch cancel out, as in #left.
      if (this.pendingEnters === 0 || !this.list!.cancelLatestEnter(this, e)) {
        this.list!.queueEvent(this, e, false);
      }
      return;
    }
    const i = this.members.get(n);
    if (i === undefined) return;
    this.members.delete(n);
    if (this.inCircle === null) {
      this.#left(n, i);
      return;
    }
    dropCircle(n, this);
    const j = this.inCircle.get(n);
    if (j === undefined) return;
    this.inCircle.delete(n);
    this.#left(n, j);
  }

  /** @internal Compares a member with the circle and queues an event if its side changed. */
  recheck(n: RangeNode): void {
    const o = this.owner;
    const dx = n.x - o.x;
    const dz = n.z - o.z;
    const r = this.rawRadius;
    const inCircle = this.inCircle!;
    const i = inCircle.get(n);
    if (dx * dx + dz * dz <= r * r) {
      if (i === undefined) inCircle.set(n, this.list!.queueEvent(this, n.entity!, true));
    } else if (i !== undefined) {
      inCircle.delete(n);
      this.#left(n, i);
    }
  }

  // An enter and a leave of the same node in one batch cancel out: the handler sees neither.
  #left(n: RangeNode, enterIndex: number): void {
    if (!this.list!.cancelEnter(enterIndex, this, n.entity!)) this.list!.queueEvent(this, n.entity!, false);
  }

  /** @internal Re-checks every member against the circle (the owner moved or the radius changed). */
  recheckAll(): void {
    for (const n of this.members.keys()) this.recheck(n);
  }

  /** @internal Forgets every member without events, when the trigger is removed. */
  clear(): void {
    if (this.inCircle !== null) {
      for (const n of this.members.keys()) dropCircle(n, this);
      this.inCircle.clear();
    }
    this.members.clear();
  }
}

function dropCircle(n: RangeNode, t: RangeTrigger): void {
  const a = n.circles!;
  const i = a.indexOf(t);
  a[i] = a[a.length - 1];
  a.pop();
}
