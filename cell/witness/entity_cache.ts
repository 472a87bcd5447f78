/**
 * A witness's records of the entities in its AoI (BigWorld's EntityCache), one slot each: where the client is in the
 * entity's life cycle (state), its place in the priority queue, the events and detail level it has seen, the
 * per-level event stamps (lodEventNumbers), its id alias and the volatile data last sent.
 *
 * Stored as a structure of arrays: every number of a slot lives in one Float64Array record (F numbers, contiguous
 * per witness), because as object fields they would be boxed doubles scattered over the heap, and the witness reads
 * about a dozen of them for every entity of every AoI every tick. Only the entity, its history and its stamp list
 * are object references.
 */
import { NO_ALIAS } from "../../core/proto/mod.ts";
import type { Entity } from "../entity.ts";
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

// Offsets in a slot's record. Volatile data as last sent (so that an unchanged entity costs nothing), first.
export const VX = 0, VY = 1, VZ = 2, VYAW = 3, VPITCH = 4, VROLL = 5;
/** Priority (while out of the heap) and the last priority delta. */
export const PRIORITY = 6, LAST_DELTA = 7;
/**
 * The detail level changes only at or within LOD_IN (the next nearer level's distance) or beyond LOD_OUT (this
 * level's distance plus its hysteresis): a quick test per send.
 */
export const LOD_IN = 8, LOD_OUT = 9;
/** The type's volatile LoD as distances (Infinity: always; -1: never), looked up once rather than per send. */
export const POS_DIST = 10, YAW_DIST = 11, PITCH_DIST = 12, ROLL_DIST = 13;
/** The state (ENTER_PENDING...), and the newest event of the history this client has been sent (or skipped). */
export const STATE = 14, LAST_EVENT = 15;
/** Current detail level (0 = nearest; lodLevels.length = outermost; change it with setDetailLevel), and alias. */
export const LEVEL = 16, ALIAS = 17;
/** FLAG_* bits. */
export const FLAGS = 18;
/** Game time (ms) by which the client's request must arrive. */
export const DEADLINE = 19;
/** The history's row in entity_rows.ts. */
export const HSEQ = 20;
/** The life (epoch) of the entity's event numbering that the slot's numbers and the client's enter belong to. */
export const LIFE = 21;
/** Numbers per slot. */
export const F = 22;

/** Left the AoI; the leave is queued (BigWorld's GONE flag: the state says what the client was told). */
export const FLAG_GONE = 1;
/** In the AoI because the trigger saw it, because the game added it (addToAoI), or both. */
export const FLAG_TRIGGER = 2, FLAG_MANUAL = 4;
/** In the witness's heap (or popped this tick and about to go back). */
export const FLAG_QUEUED = 8;
/**
 * The slot now follows another life of the entity (made again with the same id) while the client still holds the
 * one it was told of: that one leaves first, with the stamps of its life, then the new one enters.
 */
export const FLAG_REPLACED = 16;

function lodDistance(lod: true | number | undefined): number {
  return lod === true ? Infinity : typeof lod === "number" ? lod : -1;
}

/** The slots of one witness. */
export class CacheTable {
  // Room for 8 slots at first, doubled as the AoI fills: at 500 clients in a sparse scene most witnesses see a few
  // entities, and 64 slots each cost ~5 MB of the cellapp for nothing (docs/benchmarks.md#memory).
  f: Float64Array = new Float64Array(8 * F);
  /** By slot: the entity (null when free), its event history and its per-level stamps. */
  readonly entity: (Entity | null)[] = [];
  readonly history: (EventHistory | null)[] = [];
  /** Per detail level, the event up to which the client knows that level's properties (below LEVEL). */
  readonly stamps: number[][] = [];
  readonly #free: number[] = [];

  /** A new slot for `e`, ENTER_PENDING at its outermost level with nothing sent. */
  alloc(e: Entity, h: EventHistory): number {
    let s = this.#free.pop();
    if (s === undefined) {
      s = this.entity.length;
      if ((s + 1) * F > this.f.length) {
        const next = new Float64Array(this.f.length * 2);
        next.set(this.f);
        this.f = next;
      }
      this.entity.push(null);
      this.history.push(null);
      this.stamps.push([]);
    }
    this.init(s, e, h);
    return s;
  }

  /** Starts slot `s` afresh for `e`: ENTER_PENDING at its outermost level with nothing sent, no flags, no alias. */
  init(s: number, e: Entity, h: EventHistory): void {
    this.entity[s] = e;
    this.history[s] = h;
    const outer = e.type.lodLevels.length;
    const st = this.stamps[s];
    st.length = outer + 1;
    st.fill(0);
    const f = this.f, o = s * F, v = e.type.volatile;
    f[o + VX] =
      f[o + VY] =
      f[o + VZ] =
      f[o + VYAW] =
      f[o + VPITCH] =
      f[o + VROLL] =
        NaN;
    f[o + PRIORITY] = 0;
    f[o + LAST_DELTA] = Infinity;
    f[o + STATE] = ENTER_PENDING;
    f[o + LAST_EVENT] = 0;
    f[o + ALIAS] = NO_ALIAS;
    f[o + FLAGS] = 0;
    f[o + DEADLINE] = 0;
    f[o + HSEQ] = h.row;
    f[o + LIFE] = h.life;
    f[o + POS_DIST] = lodDistance(v.position);
    f[o + ROLL_DIST] = lodDistance(v.roll);
    // A finer direction type carries the coarser angles too.
    f[o + PITCH_DIST] = Math.max(lodDistance(v.pitch), f[o + ROLL_DIST]);
    f[o + YAW_DIST] = Math.max(lodDistance(v.yaw), f[o + PITCH_DIST]);
    this.setDetailLevel(s, outer);
  }

  /** Points slot `s` at `e` (another copy of the entity it follows) and its history, keeping every number. */
  rebind(s: number, e: Entity, h: EventHistory): void {
    this.entity[s] = e;
    this.history[s] = h;
    this.f[s * F + HSEQ] = h.row;
  }

  /**
   * Makes slot `s` follow `e`, another copy of the entity id it holds. Of the same life (its numbering went on: a
   * teleport), every number stays good and the client sees no leave. Of another life, a slot the client was not told
   * of yet starts afresh; otherwise it is marked FLAG_REPLACED (the client's copy leaves first, then `restart`), and
   * true is returned. Flags and queue place are kept.
   */
  follow(s: number, e: Entity, h: EventHistory): boolean {
    const f = this.f, o = s * F;
    if (h.life === f[o + LIFE] && this.entity[s]!.type === e.type) {
      this.rebind(s, e, h);
      this.set(s, FLAG_REPLACED, false);
      return false;
    }
    if (f[o + STATE] === ENTER_PENDING) {
      const flags = f[o + FLAGS], priority = f[o + PRIORITY];
      this.init(s, e, h);
      f[o + FLAGS] = flags & ~FLAG_REPLACED;
      f[o + PRIORITY] = priority;
      return false;
    }
    this.rebind(s, e, h);
    this.set(s, FLAG_REPLACED, true);
    return true;
  }

  /**
   * Starts a FLAG_REPLACED slot afresh for the entity it follows, once the leave of the client's copy is written:
   * ENTER_PENDING, its trigger and manual flags kept. Returns the alias it held (NO_ALIAS for none), to be freed.
   */
  restart(s: number): number {
    const f = this.f, o = s * F, alias = f[o + ALIAS];
    const keep = f[o + FLAGS] & (FLAG_TRIGGER | FLAG_MANUAL);
    this.init(s, this.entity[s]!, this.history[s]!);
    f[o + FLAGS] = keep;
    return alias;
  }

  /** Frees a slot. */
  free(s: number): void {
    this.entity[s] = null;
    this.history[s] = null;
    this.#free.push(s);
  }

  /** Frees every slot. */
  clear(): void {
    this.entity.length =
      this.history.length =
      this.stamps.length =
      this.#free.length =
        0;
  }

  /** Sets the detail level and the distances that would change it. */
  setDetailLevel(s: number, level: number): void {
    const levels = this.entity[s]!.type.lodLevels, f = this.f, o = s * F;
    f[o + LEVEL] = level;
    f[o + LOD_IN] = level > 0 ? levels[level - 1].distance : -Infinity;
    f[o + LOD_OUT] = level < levels.length ? levels[level].distance + levels[level].hysteresis : Infinity;
  }

  /** Whether a flag is set. */
  has(s: number, flag: number): boolean {
    return (this.f[s * F + FLAGS] & flag) !== 0;
  }

  /** Sets or clears a flag. */
  set(s: number, flag: number, on: boolean): void {
    const i = s * F + FLAGS;
    this.f[i] = on ? this.f[i] | flag : this.f[i] & ~flag;
  }
}
