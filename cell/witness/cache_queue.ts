/**
 * A witness's queue of entity caches by priority (docs/architecture.md, "The witness"; BigWorld's entity queue): the
 * heap of slots, the caches sent in this tick's walk, which go back in once it is done, and how priorities move on.
 * The walk itself, which decides what each cache sends, is the witness's.
 */
import { type CacheTable, F, FLAG_QUEUED, FLAGS, HSEQ, PRIORITY } from "./entity_cache.ts";
import { R_STATE, rows } from "./entity_rows.ts";
import { SlotHeap } from "./priority_queue.ts";
import { scratch, type WarmthScratch } from "../../core/scratch.ts";

/** Where warm leaves the sum of what it read, so that its reads are not optimised away (core/scratch.ts). */
const warmth: WarmthScratch = scratch.warmth;

/** The caches of one witness waiting for their turn, smallest priority first. */
export class CacheQueue {
  /** Slots by priority; the walk pops from it. */
  readonly heap: SlotHeap = new SlotHeap();
  /** A record's numbers before a send, to take it back when it overflows the budget. */
  readonly undo: Float64Array = new Float64Array(F);
  #sent = new Int32Array(64);
  #nsent = 0;

  /** Queues slot `s` of `t` where a cache joining now starts: at the earliest priority queued (0 when empty). */
  add(t: CacheTable, s: number): void {
    const p = this.heap.size === 0 ? 0 : this.heap.minPriority;
    t.f[s * F + PRIORITY] = p;
    this.requeue(t, s, p);
  }

  /** Puts slot `s`, popped this tick, back untouched at priority `p`. */
  requeue(t: CacheTable, s: number, p: number): void {
    t.set(s, FLAG_QUEUED, true);
    this.heap.push(s, p);
  }

  /**
   * Slot `s`, popped this tick, was sent: it goes back in at the priority its record now holds when the walk ends
   * (`finish`), not before, so that the walk does not reach it twice.
   */
  markSent(t: CacheTable, s: number): void {
    const i = s * F + FLAGS;
    t.f[i] = t.f[i] | FLAG_QUEUED;
    if (this.#nsent === this.#sent.length) {
      const next = new Int32Array(this.#nsent * 2);
      next.set(this.#sent);
      this.#sent = next;
    }
    this.#sent[this.#nsent++] = s;
  }

  /**
   * Ends the tick's walk: the caches sent go back in. When everything was sent, priorities restart at 0; otherwise
   * nothing sent may fall behind the earliest unsent priority, so entities due several times a tick do not lag
   * behind virtual time.
   */
  finish(t: CacheTable): void {
    const heap = this.heap, allSent = heap.size === 0;
    const earliest = allSent ? 0 : heap.minPriority;
    const sent = this.#sent, f = t.f, n = this.#nsent;
    for (let i = 0; i < n; i++) {
      const s = sent[i], o = s * F;
      let p = f[o + PRIORITY];
      if (allSent || p < earliest) f[o + PRIORITY] = p = earliest;
      heap.push(s, p);
    }
    this.#nsent = 0;
  }

  /**
   * Brings the records and the entities' rows into the CPU's cache before the queue is walked. The walk visits
   * slots in priority order, so each first touch of a record or a row would be a cache miss waiting for the previous
   * one; these loops have no such chain, so the processor fetches many lines at once.
   */
  warm(t: CacheTable): void {
    const f = t.f, R = rows.a, n = t.entity.length * F;
    let acc = 0;
    for (let k = 0; k < n; k += 8) acc += f[k];
    for (let k = HSEQ; k < n; k += F) acc += R[f[k] + R_STATE];
    warmth.sum = acc;
  }

  /** Empties the queue. */
  clear(): void {
    this.heap.clear();
    this.#nsent = 0;
  }
}
