/**
 * A witness's record of one entity in its AoI (seed 000's EntityCache): where the client is in the entity's
 * life cycle (state), its place in the priority queue, the events and detail level it has seen, the per-level
 * event stamps (lodEventNumbers), its id alias and the volatile data last sent.
 */
import { NO_ALIAS } from "../core/def/aoi_protocol.ts";
import type { Entity } from "./entity.ts";
import type { EventHistory } from "./event_history.ts";

/** Not yet announced: the enter message is queued. */
export const ENTER_PENDING = 0;
/** Announced; waiting for the client's request (with its cache stamps). */
export const REQUEST_PENDING = 1;
/** Requested; the create message is queued. */
export const CREATE_PENDING = 2;
/** Created on the client: updates flow. */
export const CREATED = 3;

/** Names of the states, for messages. */
export const CACHE_STATES = ["ENTER_PENDING", "REQUEST_PENDING", "CREATE_PENDING", "CREATED"] as const;

function lodDistance(lod: true | number | undefined): number {
  return lod === true ? Infinity : typeof lod === "number" ? lod : -1;
}

/** One entity in a witness's AoI. */
export class EntityCache {
  state = ENTER_PENDING;
  /** Left the AoI; the leave is queued (seed 000's GONE flag: the state says what the client was told). */
  gone = false;
  /** In the AoI because the trigger saw it, because the game added it (addToAoI), or both. */
  byTrigger = false;
  manual = false;
  /** In the witness's heap (or popped this tick and about to go back). */
  inQueue = false;
  priority = 0;
  lastDelta = Infinity;
  /** The newest event of the entity's history this client has been sent (or skipped by LoD). */
  lastEventNumber = 0;
  /** Current detail level: 0 = nearest; lodLevels.length = outermost. Change it with setDetailLevel. */
  detailLevel: number;
  /** The level changes only below lodIn or beyond lodOut (hysteresis included): a quick test per send. */
  lodIn = -Infinity;
  lodOut = Infinity;
  /** Per detail level, the event up to which the client knows that level's properties (below detailLevel). */
  readonly lodStamps: number[];
  alias = NO_ALIAS;
  /** Game time (ms) by which the client's request must arrive. */
  deadline = 0;
  // Volatile data as last sent, so that an unchanged entity costs nothing.
  vx = NaN;
  vy = NaN;
  vz = NaN;
  vyaw = NaN;
  vpitch = NaN;
  vroll = NaN;

  /** The type's volatile LoD as distances (Infinity: always; -1: never), looked up once rather than per send. */
  readonly posDist: number;
  readonly yawDist: number;
  readonly pitchDist: number;
  readonly rollDist: number;

  constructor(readonly entity: Entity, readonly history: EventHistory) {
    this.detailLevel = entity.type.lodLevels.length;
    this.lodStamps = new Array(this.detailLevel + 1).fill(0);
    this.setDetailLevel(this.detailLevel);
    const v = entity.type.volatile;
    this.posDist = lodDistance(v.position);
    this.rollDist = lodDistance(v.roll);
    // A finer direction type carries the coarser angles too.
    this.pitchDist = Math.max(lodDistance(v.pitch), this.rollDist);
    this.yawDist = Math.max(lodDistance(v.yaw), this.pitchDist);
  }

  /** Number of detail levels, the outermost ("anywhere") included: the length of a stamp list. */
  get levels(): number {
    return this.lodStamps.length;
  }

  /** Sets the detail level and the distances that would change it. */
  setDetailLevel(level: number): void {
    const levels = this.entity.type.lodLevels;
    this.detailLevel = level;
    this.lodIn = level > 0 ? levels[level - 1].distance - levels[level - 1].hysteresis : -Infinity;
    this.lodOut = level < levels.length ? levels[level].distance + levels[level].hysteresis : Infinity;
  }

  /** Forgets the volatile data sent, so the next update sends it all. */
  resetVolatile(): void {
    this.vx =
      this.vy =
      this.vz =
      this.vyaw =
      this.vpitch =
      this.vroll =
        NaN;
  }
}
