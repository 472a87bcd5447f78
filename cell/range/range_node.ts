/**
 * Nodes of a cell's range list (see range_list.ts) and the flags that decide which crossings matter.
 *
 * The terminators exist only as slots 0 and 1 of the store.
 */
import type { RangeList } from "./range_list.ts";
import type { RangeStore } from "./range_store.ts";
import type { RangeTrigger } from "./range_trigger.ts";

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
  store: RangeStore | null = null;
  /** The list the node is linked into, or null. */
  list: RangeList | null = null;
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
