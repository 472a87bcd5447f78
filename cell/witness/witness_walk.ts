/**
 * One tick's walk of a witness's queue (docs/architecture.md, "The witness"; BigWorld's sendQueueElement loop):
 * the caches whose turn has come, by priority, each written by its state (leave, enter, create, update) while the
 * frame stays within the client's byte budget. A cache that does not fit is taken back untouched and keeps its
 * place; one sent goes back in at its next priority, which grows with its distance.
 */
import { NO_ALIAS } from "../../core/proto/mod.ts";
import { MAX_COORD } from "../../core/geo/mod.ts";
import { moveTrace } from "../../core/trace.ts";
import type { Entity } from "../entity.ts";
import type { CacheQueue } from "./cache_queue.ts";
import {
  ALIAS,
  CREATE_PENDING,
  CREATED,
  DEADLINE,
  ENTER_PENDING,
  F,
  FLAG_GONE,
  FLAG_QUEUED,
  FLAG_REPLACED,
  FLAGS,
  HSEQ,
  LAST_DELTA,
  LAST_EVENT,
  LOD_IN,
  LOD_OUT,
  PRIORITY,
  REQUEST_PENDING,
  STATE,
} from "./entity_cache.ts";
import { R_DESTROYED, R_SEQ, R_STATE, R_X, R_Y, R_Z, rows } from "./entity_rows.ts";
import type { OwedAnswers } from "./owed_answers.ts";
import type { WitnessOptions } from "./witness_options.ts";
import {
  hasVolatile,
  type SendContext,
  sendCreate,
  sendEnter,
  sendLeave,
  sendUpdate,
  sendVolatile,
  VOLATILE_MAX_BYTES,
  volatileDetail,
} from "./witness_send.ts";

/** Below this distance (m) two entities count as coincident: priority delta 1. */
const COINCIDENT = 1e-3;
/** The farthest two points of the world are apart (m); priorities are computed with no greater distance. */
const MAX_DISTANCE = 2 * Math.sqrt(3) * MAX_COORD;

/** What the walk needs of its witness beyond what the send functions do (the witness implements it). */
export interface WalkHost extends SendContext {
  readonly entity: Entity;
  readonly opts: Required<
    Pick<
      WitnessOptions,
      | "bytesPerTick"
      | "distanceWeighting"
      | "weighting"
      | "deltaGrowthThrottle"
      | "maxPriorityDelta"
      | "requestTimeoutMs"
    >
  >;
  readonly queue: CacheQueue;
  /** Slots whose enter went out and that wait for the client's request. */
  readonly pending: Set<number>;
  /** Aliases free to give an entering cache. */
  readonly freeAliases: number[];
  readonly owed: OwedAnswers;
  removeFromAoI(e: Entity, manual: boolean): void;
  /** Frees slot `s` (its leave was sent, or it never entered): its alias, and the answer owed for it if any. */
  dropCache(s: number): void;
}

/** Writes the caches whose turn has come into `h.w`, within the budget. */
export function walkQueue(h: WalkHost): void {
  const queue = h.queue, heap = queue.heap, w = h.w, me = h.entity, t = h.t, undo = queue.undo;
  const { bytesPerTick: budget, distanceWeighting, weighting, deltaGrowthThrottle: throttle } = h.opts;
  if (heap.size === 0) return;
  const maxPriority = heap.minPriority + h.opts.maxPriorityDelta;
  const mx = me.x, my = me.y, mz = me.z;
  queue.warm(t);
  let first = true;
  while (heap.size > 0 && (w.pos < budget || first)) {
    const p0 = heap.minPriority;
    if (!(p0 < maxPriority)) break;
    const s = heap.pop(), o = s * F;
    const mark = w.pos, r = t.f[o + HSEQ];
    // The entity as its row has it (entity_rows.ts). Still marked queued, so that taking it out here does not
    // queue it a second time.
    if ((rows.a[r + R_STATE] & R_DESTROYED) !== 0 && !t.has(s, FLAG_GONE)) h.removeFromAoI(t.entity[s]!, true);
    let f = t.f; // (a script callback may have grown the table)
    f[o + PRIORITY] = p0;
    f[o + FLAGS] = f[o + FLAGS] & ~FLAG_QUEUED;
    const state = f[o + STATE];
    if ((f[o + FLAGS] & FLAG_GONE) !== 0) {
      if (state !== ENTER_PENDING) {
        sendLeave(h, s);
        if (w.pos > budget && !first) {
          w.pos = mark;
          queue.requeue(t, s, p0);
          break;
        }
      }
      h.dropCache(s);
    } else if ((f[o + FLAGS] & FLAG_REPLACED) !== 0) {
      // The client holds another life of this entity: that one leaves, then this one enters in turn.
      sendLeave(h, s);
      if (w.pos > budget && !first) {
        w.pos = mark;
        queue.requeue(t, s, p0);
        break;
      }
      if (h.pending.delete(s)) h.owed.owe(t.entity[s]!.id, f[o + DEADLINE]);
      const alias = t.restart(s);
      if (alias !== NO_ALIAS) h.freeAliases.push(alias);
      queue.requeue(t, s, p0);
    } else if (state === ENTER_PENDING) {
      const alias = hasVolatile(t, s) && h.freeAliases.length > 0 ? h.freeAliases.pop()! : NO_ALIAS;
      f[o + ALIAS] = alias;
      f[o + STATE] = REQUEST_PENDING;
      f[o + DEADLINE] = me.cell.time + h.opts.requestTimeoutMs;
      h.pending.add(s);
      sendEnter(h, s);
      if (w.pos > budget && !first) {
        w.pos = mark;
        if (alias !== NO_ALIAS) h.freeAliases.push(alias);
        f[o + ALIAS] = NO_ALIAS;
        h.pending.delete(s);
        f[o + STATE] = ENTER_PENDING;
        queue.requeue(t, s, p0);
        break;
      }
    } else if (state !== REQUEST_PENDING) {
      const R = rows.a, dx = R[r + R_X] - mx, dy = R[r + R_Y] - my, dz = R[r + R_Z] - mz;
      let dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
      // Out of the world (a height no check stopped, whose square overflows): as far as the world allows. An
      // infinite distance makes an infinite priority, which never comes due and, as the earliest unsent one,
      // would drag every other priority to infinity with it: the queue would stop for good.
      if (!(dist <= MAX_DISTANCE)) dist = MAX_DISTANCE;
      if (
        state === CREATED && R[r + R_SEQ] <= f[o + LAST_EVENT] && dist > f[o + LOD_IN] && dist <= f[o + LOD_OUT] &&
        (first || w.pos + VOLATILE_MAX_BYTES <= budget)
      ) {
        // No events and no detail change: sendUpdate would write only volatile data, which fits.
        sendVolatile(h, s, volatileDetail(f, o, dist));
      } else {
        // Snapshot the record, to take it back if it overflows the budget. The LoD stamps need none: only those
        // at or beyond the detail level are written here, and those are implied by the last event number.
        for (let k = 0; k < F; k++) undo[k] = f[o + k];
        if (state === CREATE_PENDING) sendCreate(h, s, dist);
        else sendUpdate(h, s, dist);
        if (w.pos > budget && !first) {
          // It does not fit: take it back untouched and stop here; it keeps its place for the next tick.
          w.pos = mark;
          for (let k = 0; k < F; k++) t.f[o + k] = undo[k];
          queue.requeue(t, s, p0);
          break;
        }
      }
      h.stats.sends++;
      if (moveTrace.on) {
        const id = t.entity[s]!.id;
        if (moveTrace.sampled(id)) moveTrace.written(id, rows.a[r + R_X]);
      }
      f = t.f;
      let delta = dist < COINCIDENT ? 1 : (dist * distanceWeighting + 1) * weighting;
      const cap = throttle * f[o + LAST_DELTA];
      if (delta > cap) delta = cap;
      f[o + LAST_DELTA] = delta;
      f[o + PRIORITY] = p0 + delta;
      queue.markSent(t, s);
    }
    if (w.pos > mark) first = false;
  }
  queue.finish(t);
}
